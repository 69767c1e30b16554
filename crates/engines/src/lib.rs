//! rime-engines: plans, variant packs and engines that execute analyzer-approved graphs.

pub mod cpu;
mod error;

pub use error::EngineError;
