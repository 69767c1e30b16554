//! The JSON outputs (`--json` of validate, run, selftest): the committed schemas under
//! `schemas/` are what `rime schema NAME` prints (a stale file fails here), every document
//! follows its schema, whatever the outcome, and stdout then holds the document alone.

use std::process::Output;

use serde_json::Value;

mod common;
use common::{repo, rime};

/// Every schema `rime schema` prints, each committed as `schemas/NAME.v1.schema.json`.
const SCHEMAS: [&str; 6] = [
    "graph",
    "report",
    "ranking",
    "validation",
    "run",
    "selftest",
];

#[test]
fn committed_schemas_are_what_rime_schema_prints() {
    for name in SCHEMAS {
        let out = rime(&["schema", name]);
        assert_eq!(out.status.code(), Some(0), "rime schema {name}");
        let file = format!("schemas/{name}.v1.schema.json");
        let path = repo().join(&file);
        if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
            std::fs::write(&path, &out.stdout).unwrap_or_else(|e| panic!("{file}: {e}"));
            continue;
        }
        let have = std::fs::read(&path).unwrap_or_default();
        assert!(
            have == out.stdout,
            "{file} is stale (its types changed). Regenerate it with\n    \
             cargo run -p rime-cli -- schema {name} > {file}\nor\n    \
             UPDATE_SCHEMA=1 cargo test -p rime-cli --test cli_json"
        );
    }
    assert_eq!(
        rime(&["schema"]).stdout,
        rime(&["schema", "graph"]).stdout,
        "the graph format's is the default"
    );
}

/// The document on stdout (all of stdout), checked against `schemas/NAME.v1.schema.json`.
fn document(name: &str, out: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let path = repo().join(format!("schemas/{name}.v1.schema.json"));
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("schema")).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    assert_eq!(doc["format"], format!("rime.{name}"));
    assert_eq!(doc["version"], 1);
    doc
}

#[test]
fn validate_json_has_one_entry_per_file() {
    let files = [
        "tests/fixtures/valid/bwd_gqa_32_8.json",
        "tests/fixtures/invalid/stats_not_f32.json",
        "tests/fixtures/cudnn/real/fwd_bwd_chain.validate.json",
        "tests/fixtures/invalid/syntax_truncated.json",
        "no/such/file.json",
    ];
    let mut args = vec!["validate", "--json"];
    args.extend(files);
    let out = rime(&args);
    assert_eq!(out.status.code(), Some(1));
    let doc = document("validation", &out);
    assert_eq!(doc["ok"], false);
    let entries = doc["files"].as_array().expect("files");
    let ok: Vec<bool> = entries.iter().map(|f| f["ok"] == true).collect();
    assert_eq!(ok, [true, false, true, false, false]);
    for (entry, file) in entries.iter().zip(files) {
        assert_eq!(entry["file"], file);
    }
    assert_eq!(entries[0]["read_as"]["format"], "rime");
    assert_eq!(
        entries[2]["read_as"]["description"],
        "cuDNN frontend graph JSON 2.0"
    );
    assert_eq!(entries[2]["nodes"], 2);
    let stats = entries[1]["errors"][0].as_str().expect("an error");
    assert!(stats.contains("stats_not_f32.json:") && stats.contains("tensors.Stats.data_type"));
    assert!(entries[3]["read_as"].is_null() && entries[3]["nodes"].is_null());
    assert!(entries[4]["errors"][0]
        .as_str()
        .is_some_and(|e| e.contains("cannot read")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("note: read tests/fixtures/cudnn/real/fwd_bwd_chain.validate.json as cuDNN frontend graph JSON 2.0"), "{stderr}");
}

#[test]
fn run_json_says_what_ran_and_checksums_the_outputs() {
    let out = rime(&[
        "run",
        "examples/backward_gqa_causal.json",
        "--target",
        "cpu",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc = document("run", &out);
    assert_eq!(doc["status"], "ran");
    assert_eq!(doc["target"], "cpu");
    let nodes = doc["nodes"].as_array().expect("nodes");
    // The example's backward gets O and Stats from a forward twin first.
    assert_eq!(nodes.len(), 2, "{doc:#}");
    assert_eq!(nodes[0]["forward_twin"], true);
    assert_eq!(nodes[0]["op"], "SDPA_FWD");
    assert_eq!(nodes[1]["forward_twin"], false);
    assert!(nodes
        .iter()
        .all(|n| n["engine"] == "cpu_reference" && n["milliseconds"].as_f64() >= Some(0.0)));
    let outputs = doc["outputs"].as_array().expect("outputs");
    let names: Vec<&str> = outputs.iter().filter_map(|o| o["name"].as_str()).collect();
    assert_eq!(names, ["dQ", "dK", "dV"]);
    for o in outputs {
        assert_eq!(o["checksum"]["fnv1a64"].as_str().map(str::len), Some(16));
        assert!(o["checksum"]["sum_of_squares"].as_f64() > Some(0.0));
    }
    // The lines for people went to stderr.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("node:   "), "{stderr}");
    // Another seed, other values: the checksum sees it.
    let other = document(
        "run",
        &rime(&[
            "run",
            "examples/backward_gqa_causal.json",
            "--target",
            "cpu",
            "--json",
            "--seed",
            "1",
        ]),
    );
    assert_ne!(
        other["outputs"][0]["checksum"]["fnv1a64"],
        outputs[0]["checksum"]["fnv1a64"]
    );
}

#[test]
fn run_json_is_a_document_whatever_the_outcome() {
    for (args, status) in [
        (
            vec!["run", "tests/fixtures/invalid/stats_not_f32.json"],
            "invalid",
        ),
        (
            vec!["run", "tests/fixtures/invalid/syntax_truncated.json"],
            "invalid",
        ),
        (
            vec![
                "run",
                "tests/fixtures/unsupported/cpu001_dropout_mask_i32.json",
            ],
            "unsupported",
        ),
        (
            vec![
                "run",
                "tests/hostile/small_bwd.json",
                "--inputs",
                "tests/hostile/small_fwd.json",
            ],
            "error",
        ),
    ] {
        let mut args = args;
        args.extend(["--target", "cpu", "--json"]);
        let out = rime(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let doc = document("run", &out);
        assert_eq!(doc["status"], status, "{args:?}: {doc:#}");
        assert!(!doc["errors"].as_array().expect("errors").is_empty());
        assert!(doc["outputs"].as_array().is_some_and(Vec::is_empty));
    }
}

/// Without a usable GPU the sweep is skipped, and says so in its document; with one it runs.
/// Either way the document follows the schema (the unit tests of `json_doc::selftest` check
/// a document of a sweep that ran, with every case status, on any machine).
#[test]
fn selftest_json_follows_its_schema() {
    let out = rime(&["selftest", "--json", "--small", "--filter", "d64v64-basic"]);
    let doc = document("selftest", &out);
    match doc["status"].as_str() {
        Some("skipped") => {
            assert_eq!(out.status.code(), Some(0));
            assert!(doc["reason"].is_string());
            assert!(doc["cases"].as_array().is_some_and(Vec::is_empty));
        }
        Some("ran") => assert!(doc["device"].is_string()),
        other => panic!("status {other:?}"),
    }
}
