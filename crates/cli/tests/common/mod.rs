//! What the command-line tests share: the repository root (the tests run `rime` there, so
//! fixture paths are the ones the docs show) and a run of the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `rime ARGS` run from the repository root, its output captured.
pub fn rime(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("rime runs")
}
