//! Bad graphs at every stage — malformed JSON, overflowing, zero and negative dims, strides
//! that make outputs overlap, wrong shapes, types, ports and options — are rejected with a
//! message that names the place (file, line and column, JSON path, tensor, port or option)
//! and the value or limit at fault.
//!
//! The cases are data: `tests/fixtures/bad_input/graphs.json`, one entry per case, either raw
//! `text` or JSON-pointer `edits` of a valid fixture (`base`, default
//! `valid/bwd_bhsd_basic.json`), with the substrings the message must contain (`expect`).
//! A case passes when the first stage that refuses it (load, validate, or analyze for the CPU
//! reference engine) gives a message containing every expected substring; load and validate
//! messages must also name the source.

mod support;

use rime::analyzer::{analyze, EngineKind, Target};
use rime::graph::json;
use serde_json::Value;

fn fixture_text(rel: &str) -> String {
    let path = support::root().join("tests/fixtures").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The stage that refused the text and its message, or `None` when every stage accepts it.
pub fn refusal(text: &str, source: &str) -> Option<(&'static str, String)> {
    let graph = match json::from_str(text, source) {
        Ok(g) => g,
        Err(e) => return Some(("load", e.to_string())),
    };
    if let Err(errors) = graph.validate() {
        let describer = json::Describer::new(text, source, &graph);
        let lines: Vec<String> = errors.0.iter().map(|e| describer.describe(e)).collect();
        return Some(("validate", lines.join("\n")));
    }
    let report = analyze(&graph, &Target::by_name("cpu").expect("cpu target"));
    if report.supports(EngineKind::CpuReference) {
        return None;
    }
    let lines: Vec<String> = report.all_rejections().map(|r| r.to_string()).collect();
    Some(("analyze", lines.join("\n")))
}

#[test]
fn every_bad_graph_is_refused_with_a_message_naming_the_place_and_the_limit() {
    let cases: Vec<Value> =
        serde_json::from_str(&fixture_text("bad_input/graphs.json")).expect("case table");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["case"].as_str().expect("case name");
        let source = format!("bad_input/{name}.json");
        let text = match case["text"].as_str() {
            Some(text) => text.to_owned(),
            None => {
                let base = case["base"].as_str().unwrap_or("valid/bwd_bhsd_basic.json");
                let mut doc: Value = serde_json::from_str(&fixture_text(base)).expect("base");
                for edit in case["edits"].as_array().into_iter().flatten() {
                    support::edits::apply(&mut doc, edit);
                }
                serde_json::to_string_pretty(&doc).expect("edited text")
            }
        };
        let Some((stage, message)) = refusal(&text, &source) else {
            failures.push(format!("{name}: accepted"));
            continue;
        };
        let mut expect: Vec<&str> = case["expect"]
            .as_array()
            .expect("expect")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if stage != "analyze" {
            expect.push(&source);
        }
        let missing: Vec<&&str> = expect.iter().filter(|e| !message.contains(**e)).collect();
        if !missing.is_empty() {
            failures.push(format!(
                "{name} ({stage}): missing {missing:?} in:\n{message}"
            ));
        }
        if std::env::var_os("RIME_SHOW_CASES").is_some() {
            let first = message.lines().next().unwrap_or_default();
            println!("{name:40} {stage:8} {first}");
        }
    }
    assert!(cases.len() >= 100, "{} cases", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
