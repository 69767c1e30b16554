//! Whether CUDA can be used here, and why not.

use pyo3::prelude::*;
use rime_engines::cuda::{probe, CudaStatus};

use crate::hooks;

/// `rime.cuda_status()`: `(True, devices)` when rime can run on CUDA here, else `(False,
/// reason)` (no driver, no device, no CUDA 13 NVRTC, ...). Never raises for a missing CUDA.
#[pyfunction]
pub fn cuda_status(py: Python<'_>) -> PyResult<(bool, String)> {
    hooks::prepare_cuda(py)?;
    Ok(match py.detach(probe) {
        CudaStatus::Available { devices } => (true, format!("{devices} CUDA device(s)")),
        CudaStatus::Unavailable(why) => (false, why.to_string()),
    })
}

/// `rime._native.nvrtc_present()`: True when the CUDA 13 NVRTC rime compiles with can be
/// loaded (no GPU needed).
#[pyfunction]
pub fn nvrtc_present(py: Python<'_>) -> PyResult<bool> {
    hooks::prepare_cuda(py)?;
    Ok(py.detach(rime_engines::cuda::nvrtc_present))
}
