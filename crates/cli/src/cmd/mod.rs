//! One module per subcommand.

pub mod check;
pub mod explain;
pub mod heuristics;
pub mod run;
pub mod schema;
pub mod target_args;
pub mod validate;
