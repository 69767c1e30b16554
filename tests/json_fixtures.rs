//! The JSON fixture corpus: valid graphs round-trip canonically, invalid ones are rejected with
//! a message that names the file and place (or tensor) at fault, and nothing panics.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rime::graph::json;
use support::{fixtures, load_and_validate, relative};

#[test]
fn corpus_is_large_enough() {
    assert!(
        fixtures("valid").len() >= 25,
        "need at least 25 valid fixtures"
    );
    assert!(
        fixtures("invalid").len() >= 25,
        "need at least 25 invalid fixtures"
    );
}

#[test]
fn valid_fixtures_round_trip_canonically() {
    insta::glob!("fixtures/valid/*.json", |path| {
        let graph = load_and_validate(path).unwrap_or_else(|e| panic!("{e}"));
        let saved = json::to_string(&graph);
        let again = json::from_str(&saved, "saved.json")
            .unwrap_or_else(|e| panic!("{}: saved text does not load: {e}", relative(path)));
        assert_eq!(again, graph, "{}: load(save(g)) != g", relative(path));
        assert_eq!(
            json::to_string(&again),
            saved,
            "{}: save is not stable",
            relative(path)
        );
        assert!(saved.ends_with("}\n"));
        insta::assert_snapshot!(saved);
    });
}

#[test]
fn invalid_fixtures_are_rejected_with_located_messages() {
    insta::glob!("fixtures/invalid/*.json", |path| {
        let message = match load_and_validate(path) {
            Ok(_) => panic!("{} was accepted", relative(path)),
            Err(message) => message,
        };
        for line in message.lines() {
            assert!(
                line.starts_with(&relative(path)),
                "every problem names the file: {line}"
            );
        }
        insta::assert_snapshot!(message);
    });
}

#[test]
fn loading_never_panics() {
    let mut inputs: Vec<String> = fixtures("invalid")
        .iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned())
        .collect();
    // Every truncation and a few byte edits of one valid fixture.
    let base = std::fs::read_to_string(&fixtures("valid")[0]).unwrap_or_default();
    for cut in (0..base.len()).filter(|&c| base.is_char_boundary(c)) {
        inputs.push(base[..cut].to_owned());
    }
    for (i, c) in base.char_indices().step_by(7) {
        for repl in ["", "}", "[", "\"", "-", "9", "null"] {
            inputs.push(format!("{}{repl}{}", &base[..i], &base[i + c.len_utf8()..]));
        }
    }
    // A format error early, then nesting far deeper than serde_json's limit.
    inputs.push(format!("{{\"format\": 1, \"x\": {}", "[".repeat(100_000)));
    inputs.push(format!("{{\"nodes\": {}{}", "{\"a\":".repeat(50_000), "1"));
    for text in &inputs {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if let Ok(g) = json::from_str(text, "fuzz.json") {
                let _ = g.validate();
                let _ = json::to_string(&g);
            }
        }));
        assert!(outcome.is_ok(), "panicked on:\n{text}");
    }
    for path in fixtures("invalid") {
        let outcome = catch_unwind(|| json::load_file(&path).map(|g| g.validate()));
        match outcome {
            Err(_) => panic!("{} panicked", relative(&path)),
            Ok(Ok(Ok(()))) => panic!("{} was accepted", relative(&path)),
            Ok(_) => {}
        }
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let err = json::load_file("tests/fixtures/no_such_file.json").unwrap_err();
    assert!(matches!(err, json::LoadError::Io { .. }), "{err}");
    assert!(err
        .to_string()
        .starts_with("tests/fixtures/no_such_file.json: cannot read"));
}

#[test]
fn docs_example_loads_validates_and_is_canonical_apart_from_layout() {
    let doc = std::fs::read_to_string(support::root().join("docs/json-format.md")).expect("doc");
    let start = doc.find("```json\n").expect("an example") + "```json\n".len();
    let end = start + doc[start..].find("```").expect("closed");
    let graph =
        json::from_str(&doc[start..end], "docs/json-format.md").unwrap_or_else(|e| panic!("{e}"));
    graph.validate().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        json::from_str(&json::to_string(&graph), "saved").ok(),
        Some(graph)
    );
}

#[test]
fn canonical_keys_are_sorted_except_tensor_order() {
    fn check(v: &serde_json::Value, path: &str) {
        match v {
            serde_json::Value::Object(map) => {
                let keys: Vec<&String> = map.keys().collect();
                if path != "tensors" {
                    let mut sorted = keys.clone();
                    sorted.sort();
                    assert_eq!(keys, sorted, "keys of `{path}` are not sorted");
                }
                for (k, x) in map {
                    check(x, if path.is_empty() { k } else { "nested" });
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|x| check(x, "item")),
            _ => {}
        }
    }
    for path in fixtures("valid") {
        let graph = json::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
        // serde_json is built with preserve_order here, so the Value keeps the text's order.
        let value: serde_json::Value =
            serde_json::from_str(&json::to_string(&graph)).expect("canonical text parses");
        check(&value, "");
    }
}
