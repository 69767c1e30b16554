//! A tensor or array handed to rime from Python — a PyTorch tensor (CPU or CUDA) or a numpy
//! array — read once: where its elements are, their type, dims and strides (in elements,
//! checked), and the object itself, kept so that its memory stays alive while rime uses it.

use std::fmt;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use rime_engines::{MemoryLocation, MemorySpan};
use rime_graph::DataType;

use crate::dtype;
use crate::errors::tensor_error;

/// Which library the object comes from (outputs and temporaries are allocated with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// A `torch.Tensor`.
    Torch,
    /// A `numpy.ndarray`.
    Numpy,
}

/// Where a tensor's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// Host memory: the CPU engine.
    Host,
    /// Memory of CUDA device `n` (PyTorch's `cuda:n`): the sm120 engine.
    Cuda(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Host => f.write_str("cpu"),
            Place::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

/// A checked view of a Python tensor or array.
#[derive(Debug)]
pub struct TensorArg {
    /// The argument (or graph tensor) it was given as: errors name it.
    pub name: String,
    /// The library it comes from.
    pub framework: Framework,
    /// Element type.
    pub data_type: DataType,
    /// Logical dims (each >= 1).
    pub dims: Vec<i64>,
    /// Strides in elements (>= 0); a dim of size 1 has the canonical stride (inner dim times
    /// its stride), since no element's address depends on it.
    pub strides: Vec<i64>,
    /// Where the memory is.
    pub place: Place,
    /// Address of the first element.
    pub ptr: u64,
    /// Elements from the first to the last (1 + sum((dim - 1) * stride)).
    pub span: usize,
    /// False for a read-only numpy array.
    pub writable: bool,
    /// The object, held while rime uses its memory.
    pub object: Py<PyAny>,
}

/// The framework of `obj`, if it is a tensor or an array: only libraries already imported
/// are looked at, so numpy users never import torch.
fn framework_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Framework>> {
    static TORCH_TENSOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static NDARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    // The classes once found are looked at first: `sys.modules` only while one is missing
    // (this runs for every tensor of every call).
    let class = |cell: &'static PyOnceLock<Py<PyAny>>, module: &str, name: &str| {
        if let Some(class) = cell.get(py) {
            return Ok::<_, PyErr>(Some(class.bind(py).clone()));
        }
        let modules = py
            .import(intern!(py, "sys"))?
            .getattr(intern!(py, "modules"))?;
        if !modules.contains(module)? {
            return Ok(None);
        }
        let found = cell.get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import(module)?.getattr(name)?.unbind())
        })?;
        Ok(Some(found.bind(py).clone()))
    };
    if let Some(tensor) = class(&TORCH_TENSOR, "torch", "Tensor")? {
        if obj.is_instance(&tensor)? {
            return Ok(Some(Framework::Torch));
        }
    }
    if let Some(ndarray) = class(&NDARRAY, "numpy", "ndarray")? {
        if obj.is_instance(&ndarray)? {
            return Ok(Some(Framework::Numpy));
        }
    }
    Ok(None)
}

/// What a torch tensor says about itself.
struct Raw {
    data_type: DataType,
    dims: Vec<i64>,
    strides: Vec<i64>,
    place: Place,
    ptr: u64,
    writable: bool,
}

fn torch_raw(py: Python<'_>, name: &str, t: &Bound<'_, PyAny>) -> PyResult<Raw> {
    static STRIDED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let strided = STRIDED.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("torch")?.getattr("strided")?.unbind())
    })?;
    if !t.getattr(intern!(py, "layout"))?.is(strided.bind(py)) {
        return Err(tensor_error(
            py,
            name,
            "is not a strided (dense) tensor; rime takes dense tensors with strides",
        ));
    }
    let place =
        if t.getattr(intern!(py, "is_cuda"))?.is_truthy()? {
            let index: i64 = t.call_method0(intern!(py, "get_device"))?.extract()?;
            Place::Cuda(usize::try_from(index).map_err(|_| {
                tensor_error(py, name, format!("reports CUDA device index {index}"))
            })?)
        } else if t.getattr(intern!(py, "is_cpu"))?.is_truthy()? {
            Place::Host
        } else {
            let device = t.getattr(intern!(py, "device"))?.str()?.to_string();
            return Err(tensor_error(
                py,
                name,
                format!("is on device {device}; rime takes CPU and CUDA tensors"),
            ));
        };
    let dtype = t.getattr(intern!(py, "dtype"))?;
    let data_type = dtype::from_torch(py, &dtype)?.ok_or_else(|| {
        tensor_error(
            py,
            name,
            format!(
                "has dtype {}, which rime does not take",
                dtype
                    .str()
                    .map_or_else(|_| "?".to_owned(), |s| s.to_string())
            ),
        )
    })?;
    Ok(Raw {
        data_type,
        dims: t.getattr(intern!(py, "shape"))?.extract()?,
        strides: t.call_method0(intern!(py, "stride"))?.extract()?,
        place,
        ptr: t.call_method0(intern!(py, "data_ptr"))?.extract()?,
        writable: true,
    })
}

fn numpy_raw(py: Python<'_>, name: &str, a: &Bound<'_, PyAny>) -> PyResult<Raw> {
    let interface = a.getattr(intern!(py, "__array_interface__"))?;
    let interface = interface.cast::<PyDict>()?;
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        interface
            .get_item(key)?
            .ok_or_else(|| tensor_error(py, name, format!("has no '{key}' in __array_interface__")))
    };
    let typestr: String = get("typestr")?.extract()?;
    let data_type = dtype::from_numpy(&typestr).ok_or_else(|| {
        tensor_error(
            py,
            name,
            format!("has numpy type {typestr:?}, which rime does not take"),
        )
    })?;
    let (ptr, readonly): (u64, bool) = get("data")?.cast::<PyTuple>()?.extract()?;
    let dims: Vec<i64> = get("shape")?.extract()?;
    let size = i64::try_from(data_type.size_bytes()).unwrap_or(1);
    let strides = match get("strides")?.extract::<Option<Vec<i64>>>()? {
        None => rime_graph::packed_strides(&dims),
        Some(bytes) => bytes
            .iter()
            .map(|&b| {
                if b % size == 0 {
                    Ok(b / size)
                } else {
                    Err(tensor_error(
                        py,
                        name,
                        format!(
                            "has a stride of {b} bytes, not a multiple of its {size}-byte elements"
                        ),
                    ))
                }
            })
            .collect::<PyResult<_>>()?,
    };
    Ok(Raw {
        data_type,
        dims,
        strides,
        place: Place::Host,
        ptr,
        writable: !readonly,
    })
}

/// Strides with every dim of size 1 given the canonical stride, innermost first: the inner
/// dim's size times its stride (1 for the last dim). No element's address changes.
fn canonical_strides(dims: &[i64], strides: &[i64]) -> Vec<i64> {
    let mut out = strides.to_vec();
    for i in (0..dims.len()).rev() {
        if dims[i] == 1 {
            out[i] = match (dims.get(i + 1), out.get(i + 1)) {
                (Some(&d), Some(&s)) => d.saturating_mul(s),
                _ => 1,
            };
        }
    }
    out
}

impl TensorArg {
    /// Reads and checks `obj`, given as argument `name`.
    ///
    /// # Errors
    /// `TensorError` naming `name`: not a tensor or array, a type rime does not take, a device
    /// other than the CPU or CUDA, no elements, negative strides, a last dim that is not
    /// contiguous, or an extent that overflows.
    pub fn extract(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let framework = framework_of(py, obj)?.ok_or_else(|| {
            tensor_error(
                py,
                name,
                format!(
                    "is a {}, not a torch.Tensor or numpy.ndarray",
                    obj.get_type()
                        .name()
                        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
                ),
            )
        })?;
        let raw = match framework {
            Framework::Torch => torch_raw(py, name, obj)?,
            Framework::Numpy => numpy_raw(py, name, obj)?,
        };
        let bad = |why: String| tensor_error(py, name, why);
        if raw.dims.is_empty() {
            return Err(bad(
                "is a scalar (no dims); rime takes rank-4 tensors".to_owned()
            ));
        }
        if raw.dims.len() != raw.strides.len() {
            return Err(bad(format!(
                "has {} dims but {} strides",
                raw.dims.len(),
                raw.strides.len()
            )));
        }
        if raw.dims.iter().any(|&d| d <= 0) {
            return Err(bad(format!("has no elements (dims {:?})", raw.dims)));
        }
        if raw.strides.iter().any(|&s| s < 0) {
            return Err(bad(format!(
                "has negative strides {:?}; rime takes strides >= 0",
                raw.strides
            )));
        }
        let strides = canonical_strides(&raw.dims, &raw.strides);
        let (last_dim, last_stride) = (raw.dims[raw.dims.len() - 1], strides[strides.len() - 1]);
        if last_stride != 1 {
            return Err(bad(format!(
                "its last dim (size {last_dim}) has stride {last_stride}; rime needs the last \
                 (head) dim contiguous, stride 1 (pass a .contiguous() copy)"
            )));
        }
        let extent = rime_graph::Tensor::new(name, &raw.dims, &strides).span_elements();
        let span = extent
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| {
                s.checked_mul(raw.data_type.size_bytes())
                    .and_then(|b| u64::try_from(b).ok())
                    .and_then(|b| raw.ptr.checked_add(b))
                    .is_some()
            })
            .ok_or_else(|| {
                bad(format!(
                    "has an extent (dims {:?}, strides {:?}) past the address space",
                    raw.dims, strides
                ))
            })?;
        if raw.ptr == 0 {
            return Err(bad("has no memory (null data pointer)".to_owned()));
        }
        Ok(TensorArg {
            name: name.to_owned(),
            framework,
            data_type: raw.data_type,
            dims: raw.dims,
            strides,
            place: raw.place,
            ptr: raw.ptr,
            span,
            writable: raw.writable,
            object: obj.clone().unbind(),
        })
    }

    /// Bytes from the first element to the end of the last (checked at extraction).
    pub fn bytes(&self) -> usize {
        self.span * self.data_type.size_bytes()
    }

    /// The address range of the elements, for overlap checks.
    pub fn memory_span(&self) -> MemorySpan {
        MemorySpan {
            location: match self.place {
                Place::Host => MemoryLocation::Host,
                Place::Cuda(n) => MemoryLocation::Device(n),
            },
            start: self.ptr,
            end: self.ptr + self.bytes() as u64,
        }
    }
}

/// Scratch memory handed to rime: a contiguous tensor of any type, used as bytes.
#[derive(Debug)]
pub struct WorkspaceArg {
    /// Where it is.
    pub place: Place,
    /// First byte.
    pub ptr: u64,
    /// Size in bytes.
    pub bytes: usize,
    /// The tensor, held while rime uses it.
    pub object: Py<PyAny>,
}

impl WorkspaceArg {
    /// Reads a contiguous torch tensor given as the workspace.
    ///
    /// # Errors
    /// `TensorError` naming "workspace": not a torch tensor, not contiguous, not on the CPU or
    /// a CUDA device.
    pub fn extract(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        const NAME: &str = "workspace";
        if framework_of(py, obj)? != Some(Framework::Torch) {
            return Err(tensor_error(py, NAME, "must be a torch.Tensor"));
        }
        if !obj
            .call_method0(intern!(py, "is_contiguous"))?
            .is_truthy()?
        {
            return Err(tensor_error(py, NAME, "must be contiguous"));
        }
        let place = if obj.getattr(intern!(py, "is_cuda"))?.is_truthy()? {
            let index: i64 = obj.call_method0(intern!(py, "get_device"))?.extract()?;
            Place::Cuda(usize::try_from(index).map_err(|_| {
                tensor_error(py, NAME, format!("reports CUDA device index {index}"))
            })?)
        } else {
            Place::Host
        };
        let ptr: u64 = obj.call_method0(intern!(py, "data_ptr"))?.extract()?;
        let bytes: usize = obj.getattr(intern!(py, "nbytes"))?.extract()?;
        if ptr == 0 && bytes > 0 {
            return Err(tensor_error(py, NAME, "has no memory (null data pointer)"));
        }
        Ok(WorkspaceArg {
            place,
            ptr,
            bytes,
            object: obj.clone().unbind(),
        })
    }
}
