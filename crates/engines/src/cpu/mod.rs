//! The CPU reference engine's math: SDPA forward and backward on strided host tensors.
//!
//! Written against a plain [`Problem`] (sizes, scale, mask options, sequence lengths) and
//! strided views ([`TensorRef`], [`TensorMut`]) so it can be read and tested without the graph or
//! the analyzer. Arithmetic runs in a [`Real`] type: f32 in the engine (f16 / bf16 / f32 inputs,
//! f32 accumulation), f64 for gradient checks. Parallel over (batch, query head) with rayon;
//! each task holds one (query block x key block) score tile at a time; tile products go
//! through the `gemm` crate; reductions run in a fixed order, so results are bitwise
//! reproducible. [`memory`] says how much host memory a problem needs before it runs.

mod backward;
mod dropout;
mod element;
mod engine;
mod exp;
mod forward;
mod gemm;
mod layout;
mod mask;
pub mod memory;
mod philox;
mod problem;
pub(crate) mod ragged;
mod reduce;
mod tile;

pub use backward::backward;
pub use dropout::{rng_dump, PhiloxDropout};
pub use element::{Element, Real};
pub use engine::{CpuEngine, CpuPlan, Precision};
pub use forward::forward;
pub use layout::{HostSlice, HostSliceMut, TensorMut, TensorRef, View4};
pub use problem::{
    AttentionInputs, BackwardInputs, BackwardOutputs, Band, Dropout, ForwardOutputs, Problem,
    ProblemShape, SeqLens,
};
pub use ragged::{logical_elements, packed_offsets, sequence_extent, Ragged};

/// Query rows per tile.
pub const BLOCK_Q: usize = 64;

/// Keys per tile: one task holds BLOCK_Q x BLOCK_KV scores (and as many dP/dS) at a time,
/// whatever Skv is.
pub const BLOCK_KV: usize = 512;

/// (batch, head) tasks run at once: two per thread, which keeps the threads busy while
/// bounding the per-head memory held at any time (see [`memory`]).
pub fn heads_in_flight() -> usize {
    2 * rayon::current_num_threads().max(1)
}
