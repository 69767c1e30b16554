//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod convert;
pub mod determinism;
pub mod explain;
pub mod heuristics;
pub mod refusals;
pub mod run;
pub mod schema;
pub mod selftest;
pub mod selftest_edge;
pub mod target_args;
pub mod validate;
