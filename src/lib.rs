//! rime: cuDNN-frontend-style SDPA backward graphs, support checks, heuristics and engines.
//!
//! This facade re-exports the workspace crates: [`graph`] (build and load graphs),
//! [`analyzer`] (support decisions and heuristics) and [`engines`] (plans and execution).

#![doc = include_str!("../README.md")]

pub use rime_analyzer as analyzer;
pub use rime_engines as engines;
pub use rime_graph as graph;
