//! Element types: PyTorch dtypes, numpy type strings and rime's names to `DataType`, and back
//! (what the allocation hooks are given).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use rime_graph::DataType;

/// The PyTorch dtype attribute (`torch.<name>`) of each type rime's buffers can hold.
const TORCH: [(&str, DataType); 7] = [
    ("float16", DataType::F16),
    ("bfloat16", DataType::Bf16),
    ("float32", DataType::F32),
    ("float64", DataType::F64),
    ("int32", DataType::I32),
    ("int64", DataType::I64),
    ("bool", DataType::Bool),
];

/// numpy's `__array_interface__` type string of each type numpy has (no bfloat16).
const NUMPY: [(&str, DataType); 6] = [
    ("<f2", DataType::F16),
    ("<f4", DataType::F32),
    ("<f8", DataType::F64),
    ("<i4", DataType::I32),
    ("<i8", DataType::I64),
    ("|b1", DataType::Bool),
];

/// The torch dtype objects, imported once (only called when torch is in use).
fn torch_table(py: Python<'_>) -> PyResult<&'static [(Py<PyAny>, DataType)]> {
    static TABLE: PyOnceLock<Vec<(Py<PyAny>, DataType)>> = PyOnceLock::new();
    TABLE
        .get_or_try_init(py, || -> PyResult<_> {
            let torch = py.import("torch")?;
            TORCH
                .iter()
                .map(|(name, t)| Ok((torch.getattr(*name)?.unbind(), *t)))
                .collect()
        })
        .map(Vec::as_slice)
}

/// The rime type of a PyTorch dtype object; `Ok(None)` for one rime has no type for.
pub fn from_torch(py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<Option<DataType>> {
    Ok(torch_table(py)?
        .iter()
        .find(|(obj, _)| obj.bind(py).is(dtype))
        .map(|(_, t)| *t))
}

/// The PyTorch dtype object of `t`.
pub fn to_torch<'py>(py: Python<'py>, t: DataType) -> PyResult<Bound<'py, PyAny>> {
    torch_table(py)?
        .iter()
        .find(|(_, d)| *d == t)
        .map(|(obj, _)| obj.bind(py).clone())
        .ok_or_else(|| PyTypeError::new_err(format!("torch has no dtype for {t}")))
}

/// The rime type of a numpy type string ("<f2", "|b1", ...); "=" (native order) counts as
/// little-endian on a little-endian host. `None` for types rime has none for, and for
/// big-endian data.
pub fn from_numpy(typestr: &str) -> Option<DataType> {
    let mut chars = typestr.chars();
    let order = chars.next()?;
    let kind = chars.as_str();
    let little = matches!(order, '<' | '|') || (order == '=' && cfg!(target_endian = "little"));
    if !little {
        return None;
    }
    NUMPY
        .iter()
        .find(|(s, _)| s.get(1..) == Some(kind))
        .map(|(_, t)| *t)
}

/// numpy's type string of `t` (`None` for bfloat16, which numpy lacks).
pub fn to_numpy(t: DataType) -> Option<&'static str> {
    NUMPY.iter().find(|(_, d)| *d == t).map(|(s, _)| *s)
}

/// The numpy type string of a numpy dtype, or of anything `numpy.dtype()` takes (`np.float32`)
/// when numpy is in use; `None` otherwise.
fn numpy_typestr(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if let Ok(s) = value.getattr("str").and_then(|s| s.extract::<String>()) {
        return Ok(Some(s));
    }
    if !py.import("sys")?.getattr("modules")?.contains("numpy")? {
        return Ok(None);
    }
    Ok(py
        .import("numpy")?
        .getattr("dtype")?
        .call1((value,))
        .and_then(|d| d.getattr("str"))
        .and_then(|s| s.extract::<String>())
        .ok())
}

/// A data type given from Python: a rime name ("bf16", "f32", ...), a torch dtype, or a numpy
/// dtype (or anything with a numpy type string in `.str`).
///
/// # Errors
/// TypeError naming `argument` for anything else.
pub fn data_type_arg(
    py: Python<'_>,
    argument: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<DataType> {
    let found = if let Ok(name) = value.cast::<PyString>() {
        DataType::from_name(&name.to_cow()?)
    } else if py.import("sys")?.getattr("modules")?.contains("torch")?
        && value.get_type().name()?.to_cow()? == "dtype"
        && value.get_type().module()?.to_cow()? == "torch"
    {
        from_torch(py, value)?
    } else {
        numpy_typestr(py, value)?.as_deref().and_then(from_numpy)
    };
    found.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{argument}: {} is not a data type rime knows (use 'f16', 'bf16', 'f32', 'f64', \
             'i32', 'i64', 'bool', a torch dtype or a numpy dtype)",
            value
                .repr()
                .map_or_else(|_| "?".to_owned(), |r| r.to_string())
        ))
    })
}
