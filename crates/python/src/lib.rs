//! `rime._native`: the Rust half of the `rime` Python package (crates/python/python/rime is
//! the Python half). See docs/python.md.
//!
//! Tensors are read once (`array.rs`), checked, and handed to the engines where they are: the
//! CPU engine works on copies of host arrays (`host_copy.rs`); the sm120 engine on CUDA tensors
//! in place, on PyTorch's current stream (`runnable.rs`). The functional API builds a one-node
//! graph per distinct call and caches its plan (`functional.rs`, `cache.rs`); the Graph API
//! mirrors the cuDNN frontend's (`graph.rs`). Errors are rime's Python exceptions
//! (`errors.rs`), reasons are Python objects (`reason.rs`).

mod array;
mod attrs;
mod bench;
mod cache;
mod device;
mod dtype;
mod errors;
mod functional;
mod graph;
mod hooks;
mod host_copy;
mod reason;
mod report;
mod runnable;
mod select;
mod status;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<reason::Reason>()?;
    m.add_function(wrap_pyfunction!(reason::explain, m)?)?;
    m.add_function(wrap_pyfunction!(functional::sdpa_call, m)?)?;
    m.add_function(wrap_pyfunction!(functional::plan_cache_info, m)?)?;
    m.add_function(wrap_pyfunction!(functional::plan_cache_clear, m)?)?;
    m.add_function(wrap_pyfunction!(functional::set_plan_cache_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(bench::time_engine_calls, m)?)?;
    m.add_function(wrap_pyfunction!(bench::time_call_phases, m)?)?;
    m.add_function(wrap_pyfunction!(status::cuda_status, m)?)?;
    m.add_function(wrap_pyfunction!(status::nvrtc_present, m)?)?;
    graph::register(m)?;
    Ok(())
}
