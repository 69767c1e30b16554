//! One module per subcommand.

pub mod selftest;
