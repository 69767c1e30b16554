//! The CUDA side of the engines: probing, the device (context, stream, loaded kernels), device
//! memory, and the sm120 engine, which builds exactly the kernels an approved configuration
//! names (NVRTC, cached) and executes them.
//!
//! Nothing here needs CUDA at build time: the driver and NVRTC are loaded at run time, and a
//! machine without them gets [`Unavailable`] (a reason), never a panic. The kernel ABI,
//! compilation, launches and the plan's internals are private to the crate: an
//! [`ApprovedPlan`](rime_analyzer::ApprovedPlan) is the only way in.

mod abi;
mod alloc;
#[cfg(test)]
mod band_ranges;
mod buffer;
mod compile;
mod context;
mod engine;
mod error;
#[cfg(test)]
mod fitness;
#[cfg(test)]
mod kernel_identity;
mod launch;
mod nvrtc_probe;
mod plan;
mod probe;
mod ragged;
mod tma;

pub use buffer::{DeviceBuffer, DeviceMemory, DeviceWorkspace};
pub use compile::PtxCache;
pub use context::{auto_target, CudaDevice, DeviceProperties};
/// A raw CUDA stream handle (the driver's `CUstream`), as [`CudaDevice::on_raw_stream`] takes it.
pub use cudarc::driver::sys::CUstream;
pub use engine::{Sm120Engine, Sm120EnginePlan};
pub use error::CudaError;
pub use nvrtc_probe::NVRTC_MAJOR_NEEDED;
pub use probe::{nvrtc_present, probe, CudaStatus, Unavailable};
