//! One module per subcommand.

pub mod run;
pub mod schema;
pub mod validate;
