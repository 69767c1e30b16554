//! The CUDA side of the engines: probing, contexts, NVRTC compilation with a module cache, the
//! sm120 kernel table, kernel launches and the sm120 plan, plus the GPU conformance sweep.
//!
//! Nothing here needs CUDA at build time: the driver and NVRTC are loaded at run time, and a
//! machine without them gets [`probe::Unavailable`] (a reason), never a panic.

pub mod alloc;
pub mod buffer;
pub mod compile;
pub mod context;
pub mod cpu_reference;
pub mod determinism;
pub mod edge_check;
pub mod engine;
pub mod engine_check;
pub mod error;
pub mod guard;
mod launch;
pub mod nvrtc_probe;
pub mod params;
pub mod plan;
pub mod probe;
pub mod problem;
pub mod resource_check;
pub mod selftest;
pub mod table;
pub mod workload;

pub use buffer::{DeviceBuffer, DeviceWorkspace};
pub use context::{auto_target, CudaDevice};
pub use engine::{Sm120Engine, Sm120EnginePlan};
pub use error::CudaError;
pub use probe::{probe, CudaStatus, Unavailable};
