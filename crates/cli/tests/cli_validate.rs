//! `rime validate` accepts every valid fixture and rejects every invalid one (exit 1, naming
//! the file); `rime schema` prints the committed schema.

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;
use common::{fixtures, repo};

fn rime(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .args(files)
        .current_dir(repo())
        .output()
        .expect("rime runs")
}

#[test]
fn validate_accepts_every_valid_fixture() {
    let files = fixtures("valid");
    let out = rime(&["validate"], &files);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok  ")).count(),
        files.len()
    );
}

#[test]
fn validate_rejects_every_invalid_fixture() {
    for file in fixtures("invalid") {
        let out = rime(&["validate"], std::slice::from_ref(&file));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{}: {stdout}", file.display());
        assert!(stdout.starts_with("FAIL "), "{stdout}");
        let problems: Vec<&str> = stdout.lines().skip(1).collect();
        assert!(!problems.is_empty());
        for p in problems {
            assert!(p.trim_start().starts_with(&*file.to_string_lossy()), "{p}");
        }
    }
}

#[test]
fn validate_mixed_batch_exits_1_and_reports_each() {
    let files = [fixtures("valid")[0].clone(), fixtures("invalid")[0].clone()];
    let out = rime(&["validate"], &files);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("ok  ") && stdout.contains("FAIL "),
        "{stdout}"
    );
}

#[test]
fn missing_file_and_usage_errors() {
    let out = rime(&["validate", "no/such/file.json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no/such/file.json: cannot read"));
    let out = rime(&["validate"], &[]);
    assert_eq!(out.status.code(), Some(2), "no FILE is a usage error");
}

#[test]
fn schema_prints_the_committed_schema() {
    let out = rime(&["schema"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let committed = std::fs::read_to_string(repo().join("schemas/graph.v1.schema.json"))
        .expect("committed schema");
    assert_eq!(String::from_utf8_lossy(&out.stdout), committed);
}
