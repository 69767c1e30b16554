//! `rime check`, `rime heuristics` and `rime explain`: output, JSON and exit codes.

use std::process::Output;

use rime_analyzer::{analyze, render_report, ReasonCode, Target};

mod common;
use common::{fixtures, repo, rime};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const BROADCAST_DET: &str = "tests/fixtures/valid/bwd_bias_broadcast_dbias_deterministic.json";
/// A graph only the CPU reference takes (sm120: K and V head counts differ, SMX009).
const SM120_REJECTS: &str = "tests/fixtures/unsupported/smx009_gqa_hk8_ne_hv4.json";

#[test]
fn check_prints_the_analyzers_report() {
    let out = rime(&["check", BROADCAST_DET, "--target", "rtx-5090"]);
    assert_eq!(out.status.code(), Some(0), "the CPU reference supports it");
    let graph = rime_graph::json::load_file(repo().join(BROADCAST_DET)).expect("loads");
    let expected = render_report(&analyze(&graph, &Target::by_name("rtx-5090").unwrap()));
    assert_eq!(stdout(&out), expected);
    assert!(expected.contains("BIA003"));
}

#[test]
fn check_json_is_a_report_document() {
    let out = rime(&["check", SM120_REJECTS, "--target", "rtx-pro-6000", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(doc["format"], "rime.report");
    assert_eq!(
        doc["supported_engines"],
        serde_json::json!(["cpu_reference"])
    );
    let configs = doc["nodes"][0]["configs"].as_array().expect("configs");
    assert!(configs
        .iter()
        .filter(|c| c["engine"] == "sm120")
        .all(|c| c["verdict"] == "rejected"));
    // Deterministic broadcast dBias: BIA003 on the atomic-dBias routes, ordered_dbias takes it.
    let out = rime(&["check", BROADCAST_DET, "--target", "rtx-pro-6000", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let configs = doc["nodes"][0]["configs"].as_array().expect("configs");
    let verdict = |route: &str| {
        configs
            .iter()
            .find(|c| c["engine"] == "sm120" && c["route"] == route)
            .map(|c| c["verdict"].clone())
    };
    assert_eq!(verdict("relay"), Some("rejected".into()));
    assert_eq!(verdict("ordered_dbias"), Some("supported".into()));
}

#[test]
fn check_exit_codes() {
    let unsupported = "tests/fixtures/unsupported/lay004_ragged_q_bhsd_strides.json";
    assert_eq!(rime(&["check", unsupported]).status.code(), Some(1));
    assert_eq!(
        rime(&["check", BROADCAST_DET, "--target", "rtx-4090"])
            .status
            .code(),
        Some(2)
    );
    let small = rime(&[
        "check",
        BROADCAST_DET,
        "-t",
        "rtx-5090",
        "--free-memory",
        "1000",
    ]);
    assert!(stdout(&small).contains("WSP002"));
}

#[test]
fn heuristics_ranks_and_pins() {
    let file = "tests/fixtures/valid/bwd_deterministic.json";
    let out = rime(&["heuristics", file, "--target", "rtx-pro-6000"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("1. sm120/"), "{text}");
    assert!(!text.contains("sm120/atomic"), "deterministic: {text}");
    let pinned = rime(&["heuristics", file, "--pin", "sm120/atomic"]);
    assert_eq!(pinned.status.code(), Some(1), "nothing left");
    // The graph is supported; the pin (atomic is not deterministic) left nothing: said so.
    assert!(
        stdout(&pinned).contains("no configuration left: the pin or deselection removed every"),
        "{}",
        stdout(&pinned)
    );
    let json = rime(&["heuristics", file, "--json", "--mode", "b"]);
    let docs: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    assert_eq!(docs["format"], "rime.ranking");
    assert_eq!(docs["mode"], "b");
    assert_eq!(docs["candidates"][0]["rank"], 1);
}

#[test]
fn explain_prints_a_code_or_lists_them_all() {
    let out = rime(&["explain", "bia003"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("BIA003 (Bias)") && text.contains("Why: ") && text.contains("Fix: "));
    assert_eq!(rime(&["explain", "XYZ999"]).status.code(), Some(2));
    let all = stdout(&rime(&["explain"]));
    assert_eq!(all.lines().count(), ReasonCode::ALL.len());
}

#[test]
fn check_auto_is_the_device_or_the_cpu_with_a_note() {
    let out = rime(&["check", BROADCAST_DET, "--target", "auto"]);
    assert_eq!(out.status.code(), Some(0), "the CPU reference supports it");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("note: target `auto`") {
        assert!(stderr.contains("CUDA unavailable"), "says why: {stderr}");
        assert!(stdout(&out).starts_with("target: cpu "), "{}", stdout(&out));
    } else {
        assert!(
            stdout(&out).starts_with("target: auto:"),
            "{}",
            stdout(&out)
        );
    }
}

/// Several files: one report each, under its name, in order; the exit code is the worst.
#[test]
fn check_several_files_reports_each_and_exits_with_the_worst() {
    let supported = "tests/fixtures/valid/bwd_causal_top_left.json";
    let unsupported = "tests/fixtures/unsupported/lay004_ragged_q_bhsd_strides.json";
    let dump = "tests/fixtures/cudnn/real/bwd_gqa_4_2.build_plans.json";
    let target = Target::by_name("rtx-5090").unwrap();
    let report = |file: &str| {
        let text = std::fs::read_to_string(repo().join(file)).expect("fixture");
        let loaded = rime_graph::json::from_str_any(&text, file, None).expect("loads");
        render_report(&analyze(&loaded.graph, &target))
    };
    let both = rime(&["check", supported, dump, "--target", "rtx-5090"]);
    assert_eq!(both.status.code(), Some(0));
    assert_eq!(
        stdout(&both),
        format!(
            "== {supported}\n{}== {dump}\n{}",
            report(supported),
            report(dump)
        )
    );
    let worst = rime(&["check", unsupported, supported, "--target", "rtx-5090"]);
    assert_eq!(
        worst.status.code(),
        Some(1),
        "one file is supported by nothing"
    );
    assert!(stdout(&worst).ends_with(&report(supported)));
}

/// `--require-engine`: exit 1 when that engine does not support the graph, naming the
/// reasons, even where another engine does.
#[test]
fn check_require_engine_names_the_reasons() {
    let out = rime(&[
        "check",
        SM120_REJECTS,
        "--target",
        "rtx-5090",
        "--require-engine",
        "sm120",
    ]);
    assert_eq!(out.status.code(), Some(1), "sm120 rejects it (SMX009)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {SM120_REJECTS}: engine sm120 does not support the graph on target rtx-5090:\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("node `") && stderr.contains("SMX009"),
        "{stderr}"
    );
    assert!(!stderr.contains("CPU0"), "only sm120's reasons: {stderr}");
    let cpu = rime(&[
        "check",
        SM120_REJECTS,
        "--target",
        "rtx-5090",
        "--require-engine",
        "cpu_reference",
    ]);
    assert_eq!(cpu.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&cpu.stderr), "");
    let json = rime(&[
        "check",
        SM120_REJECTS,
        "--json",
        "--require-engine",
        "sm120",
    ]);
    assert_eq!(json.status.code(), Some(1));
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&json)).expect("stdout is the report");
    assert_eq!(doc["format"], "rime.report");
}

/// `rime check *.json | head -1`: the reader goes away; rime stops quietly with the status of
/// a SIGPIPE death (141), no panic, no backtrace.
#[test]
fn a_closed_stdout_ends_check_quietly() {
    use std::process::{Command, Stdio};
    let files = fixtures("valid");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(["check", "--target", "h200"])
        .args(&files)
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rime runs");
    // Close the read end before rime writes anything (it first reads and analyses 60 files).
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("rime ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
