//! rime-conformance: the harness that checks and measures rime's engines — the GPU conformance
//! sweep against the CPU engine's f64 reference, determinism, edge numerics, out-of-memory
//! behaviour, guard zones, and the benchmark workloads — driving the engines only through their
//! public API (graphs, the analyzer, approved plans, variant packs), the path a user takes.
//! `rime selftest` and `rime bench` are its front end; it is not published.
//!
//! Every case is a [`CaseSpec`] whose graphs come from [`spec`]; its inputs come from [`fill`];
//! [`exec`] runs a node on the sm120 engine (optionally between guard zones) or the CPU engine
//! (f32, or the f64 reference plan); [`compare`] judges outputs.

pub mod compare;
pub mod cpu_perf;
pub mod determinism;
pub mod edge;
mod error;
pub mod exec;
pub mod fill;
pub mod guard;
pub mod ragged_hostile;
pub mod resources;
pub mod spec;
pub mod sweep;
pub mod workload;

pub use error::HarnessError;
pub use spec::{BiasSpec, CaseGraph, CaseSpec, Layout, CAUSAL, CAUSAL_BOTTOM_RIGHT};
