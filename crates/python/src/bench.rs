//! The engine's own per-call cost as the host-overhead benchmark compares against: one call's
//! plan and buffers staged once, then the engine's execute (sm120: check the pack and enqueue
//! the kernels on PyTorch's current stream; CPU: check and compute) timed call by call, the
//! stream drained every `drain_every` calls outside the timed region (as
//! `benches/host_costs.rs` times `Sm120EnginePlan::enqueue`).

use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::functional::Call;

/// Seconds of each of `iters` executions of the staged call (not a public API:
/// `benches/host_overhead.py` uses it).
#[pyfunction]
#[pyo3(signature = (iters, backward, inputs, outputs, drain_every=64, **options))]
pub fn time_engine_calls(
    py: Python<'_>,
    iters: usize,
    backward: bool,
    inputs: Vec<(String, Bound<'_, PyAny>)>,
    outputs: Vec<(String, Bound<'_, PyAny>)>,
    drain_every: usize,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<f64>> {
    let call = Call::new(py, backward, &inputs, &outputs, options)?;
    let bound = call.bound();
    let runnable = call.runnable();
    let mut staged = runnable.stage(py, call.graph(), &bound, None)?;
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters {
        if drain_every > 0 && i % drain_every == 0 {
            staged.synchronize(py)?;
        }
        let start = Instant::now();
        runnable.launch(py, &mut staged)?;
        times.push(start.elapsed().as_secs_f64());
    }
    staged.synchronize(py)?;
    runnable.finish(py, &staged, &bound)?;
    Ok(times)
}

/// Seconds of each phase of `iters` whole native calls, as (read, stage, launch, finish): read
/// the tensors, check them and find the cached plan; wrap them in a variant pack with the
/// workspace and the current stream; the engine's execute; write back (CPU only). The stream
/// is drained every `drain_every` calls outside the timed region. Not a public API:
/// `benches/host_overhead.py` reports where the host overhead goes with it.
#[pyfunction]
#[pyo3(signature = (iters, backward, inputs, outputs, drain_every=64, **options))]
pub fn time_call_phases(
    py: Python<'_>,
    iters: usize,
    backward: bool,
    inputs: Vec<(String, Bound<'_, PyAny>)>,
    outputs: Vec<(String, Bound<'_, PyAny>)>,
    drain_every: usize,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<(f64, f64, f64, f64)>> {
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters {
        let start = Instant::now();
        let call = Call::new(py, backward, &inputs, &outputs, options)?;
        let bound = call.bound();
        let runnable = call.runnable();
        let read = Instant::now();
        let mut staged = runnable.stage(py, call.graph(), &bound, None)?;
        let stage = Instant::now();
        runnable.launch(py, &mut staged)?;
        let launch = Instant::now();
        runnable.finish(py, &staged, &bound)?;
        let finish = Instant::now();
        if drain_every > 0 && (i + 1) % drain_every == 0 {
            staged.synchronize(py)?;
        }
        // Releasing the call's handles is part of a call: counted in finish.
        let release = Instant::now();
        drop(staged);
        drop(bound);
        drop(call);
        let released = release.elapsed();
        times.push((
            (read - start).as_secs_f64(),
            (stage - read).as_secs_f64(),
            (launch - stage).as_secs_f64(),
            (finish - launch + released).as_secs_f64(),
        ));
    }
    Ok(times)
}
