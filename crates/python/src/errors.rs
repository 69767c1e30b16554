//! Rust errors as rime's Python exceptions (the classes of `rime/_errors.py`): an engine's
//! refusal that names a tensor becomes a `TensorError` naming it, everything else an
//! `EngineError`; unsupported graphs carry their reasons.

use std::fmt::Display;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use rime_engines::cuda::CudaError;
use rime_engines::EngineError;

use crate::reason::Reason;

/// The instance of exception class `name` built from `args`, as a `PyErr` (or the error of
/// building it).
fn raise<'py, A>(py: Python<'py>, name: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let built = MODULE
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("rime._errors")?.unbind()))
        .and_then(|m| m.bind(py).getattr(name))
        .and_then(|class| class.call1(args));
    match built {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// `TensorError(argument, message)`.
pub fn tensor_error(py: Python<'_>, argument: &str, message: impl Display) -> PyErr {
    raise(py, "TensorError", (argument, message.to_string()))
}

/// `UnsupportedGraph(message, reasons)`.
pub fn unsupported(py: Python<'_>, message: String, reasons: Vec<Reason>) -> PyErr {
    let reasons: PyResult<Vec<Py<Reason>>> = reasons.into_iter().map(|r| Py::new(py, r)).collect();
    match reasons {
        Ok(reasons) => raise(py, "UnsupportedGraph", (message, reasons)),
        Err(e) => e,
    }
}

/// `GraphError(message, errors)`.
pub fn graph_error(py: Python<'_>, message: String, errors: Vec<String>) -> PyErr {
    raise(py, "GraphError", (message, errors))
}

/// `EngineError(message)`: an engine failure that is not about one tensor.
pub fn engine_failure(py: Python<'_>, message: impl Display) -> PyErr {
    raise(py, "EngineError", (message.to_string(),))
}

/// The Python exception for an engine's error: a `TensorError` naming the tensor when the
/// error is about one (misaligned, overlapping, wrong type, size or memory), else an
/// `EngineError`.
pub fn engine_error(py: Python<'_>, e: &EngineError) -> PyErr {
    let tensor = match e {
        EngineError::Misaligned { tensor, .. }
        | EngineError::MissingBuffer { tensor }
        | EngineError::DuplicateBuffer { tensor }
        | EngineError::DataTypeMismatch { tensor, .. }
        | EngineError::BufferTooSmall { tensor, .. }
        | EngineError::BadLayout { tensor, .. }
        | EngineError::DimsMismatch { tensor, .. }
        | EngineError::SeqLenOutOfRange { tensor, .. }
        | EngineError::WrongMemory { tensor, .. }
        | EngineError::Cuda(CudaError::NotOnDevice { tensor, .. }) => Some(tensor.as_str()),
        EngineError::AliasedBuffers { output, .. } => Some(output.as_str()),
        EngineError::ExtraBuffer { key } => Some(key.as_str()),
        EngineError::WorkspaceTooSmall { .. } => Some("workspace"),
        _ => None,
    };
    match tensor {
        Some(t) => tensor_error(py, t, e),
        None => engine_failure(py, e),
    }
}
