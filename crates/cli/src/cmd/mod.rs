//! One module per subcommand.

pub mod schema;
pub mod validate;
pub mod selftest;
