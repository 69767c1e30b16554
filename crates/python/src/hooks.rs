//! Calls into `rime/_hooks.py`: PyTorch's current CUDA stream, workspace and temporaries from
//! the framework's allocator, and making a pip-installed NVRTC loadable. The functions are
//! looked up once.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::array::{Framework, TensorArg, WorkspaceArg};
use crate::dtype;
use rime_graph::DataType;

fn hooks(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("rime._hooks")?.unbind()))
        .map(|m| m.bind(py))
}

/// Makes a pip-installed NVRTC loadable (once, before the first device is opened).
pub fn prepare_cuda(py: Python<'_>) -> PyResult<()> {
    static DONE: PyOnceLock<()> = PyOnceLock::new();
    DONE.get_or_try_init(py, || {
        hooks(py)?.call_method0("prepare_cuda")?;
        Ok::<_, PyErr>(())
    })?;
    Ok(())
}

/// PyTorch's current stream on `cuda:ordinal`, as a raw handle.
pub fn cuda_stream(py: Python<'_>, ordinal: usize) -> PyResult<usize> {
    static GETTER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let getter = GETTER.get_or_try_init(py, || {
        Ok::<_, PyErr>(hooks(py)?.call_method0("cuda_stream_getter")?.unbind())
    })?;
    getter.bind(py).call1((ordinal,))?.extract()
}

/// `bytes` bytes from PyTorch's caching allocator on `cuda:ordinal`.
pub fn cuda_workspace(py: Python<'_>, bytes: usize, ordinal: usize) -> PyResult<WorkspaceArg> {
    let t = hooks(py)?.call_method1("cuda_workspace", (bytes, ordinal))?;
    WorkspaceArg::extract(py, &t)
}

/// A new tensor or array named `name` of `like`'s framework and device, with these dims,
/// element strides and type (a temporary for a graph's intermediate tensor).
pub fn empty_strided(
    py: Python<'_>,
    like: &TensorArg,
    name: &str,
    dims: &[i64],
    strides: &[i64],
    data_type: DataType,
) -> PyResult<TensorArg> {
    let dtype = match like.framework {
        Framework::Torch => dtype::to_torch(py, data_type)?,
        Framework::Numpy => match dtype::to_numpy(data_type) {
            Some(s) => s.into_pyobject(py)?.into_any(),
            None => {
                return Err(crate::errors::tensor_error(
                    py,
                    name,
                    format!("is {data_type}, which numpy does not have; use torch tensors"),
                ))
            }
        },
    };
    let t = hooks(py)?.call_method1(
        "empty_strided",
        (like.object.bind(py), dims.to_vec(), strides.to_vec(), dtype),
    )?;
    TensorArg::extract(py, name, &t)
}
