//! The `rime` command line.

fn main() {}
