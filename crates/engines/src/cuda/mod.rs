//! The CUDA side of the engines: probing, contexts, NVRTC compilation with a module cache, the
//! sm120 kernel table, kernel launches and the sm120 plan, plus the GPU conformance sweep.
//!
//! Nothing here needs CUDA at build time: the driver and NVRTC are loaded at run time, and a
//! machine without them gets [`probe::Unavailable`] (a reason), never a panic.

pub mod compile;
pub mod context;
pub mod error;
mod launch;
pub mod params;
pub mod plan;
pub mod probe;
pub mod problem;
pub mod reference;
pub mod selftest;
pub mod table;

pub use error::CudaError;
