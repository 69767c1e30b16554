//! What the command-line tests share: the repository root (the tests run `rime` there, so
//! fixture paths are the ones the docs show), the fixture lists and a run of the built binary.
#![allow(dead_code)] // each test binary uses the part it needs

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The JSON fixtures of `tests/fixtures/KIND` (`valid`, `invalid`, ...), sorted.
pub fn fixtures(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/fixtures").join(kind))
        .expect("fixture directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// `rime ARGS` run from the repository root, its output captured.
pub fn rime(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("rime runs")
}
