//! The CUDA devices rime has opened in this process, one per ordinal, shared by every plan
//! (their primary contexts are PyTorch's), and the analyzer target of a place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use rime_analyzer::{EngineKind, Target};
use rime_engines::cuda::CudaDevice;

use crate::array::Place;
use crate::errors::engine_failure;
use crate::hooks;

/// Device `ordinal`, opened on first use (kernel cache: `$RIME_KERNEL_CACHE`, else
/// `~/.cache/rime/kernels`).
///
/// # Errors
/// `EngineError` when CUDA cannot be used (the probe's reason) or the device does not open.
pub fn cuda(py: Python<'_>, ordinal: usize) -> PyResult<Arc<CudaDevice>> {
    static OPEN: OnceLock<Mutex<HashMap<usize, Arc<CudaDevice>>>> = OnceLock::new();
    let open = OPEN.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(dev) = open.lock().unwrap_or_else(|e| e.into_inner()).get(&ordinal) {
        return Ok(Arc::clone(dev));
    }
    hooks::prepare_cuda(py)?;
    let dev = py
        .detach(|| CudaDevice::open_default(ordinal))
        .map(Arc::new)
        .map_err(|e| engine_failure(py, format!("cuda:{ordinal}: {e}")))?;
    let mut map = open.lock().unwrap_or_else(|e| e.into_inner());
    Ok(Arc::clone(map.entry(ordinal).or_insert(dev)))
}

/// The engine that runs plans on `place`.
pub fn engine_of(place: Place) -> EngineKind {
    match place {
        Place::Host => EngineKind::CpuReference,
        Place::Cuda(_) => EngineKind::Sm120,
    }
}

/// The analyzer target of `place`: the CPU, or the live device with its free memory now.
///
/// # Errors
/// As [`cuda`]; a driver error reading the free memory.
pub fn target_of(py: Python<'_>, place: Place) -> PyResult<Target> {
    match place {
        Place::Host => Target::by_name("cpu")
            .ok_or_else(|| engine_failure(py, "the analyzer has no 'cpu' target")),
        Place::Cuda(n) => cuda(py, n)?
            .target()
            .map_err(|e| engine_failure(py, format!("cuda:{n}: {e}"))),
    }
}
