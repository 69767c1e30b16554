//! Format detection over the whole corpus: every rime file of the fixtures is told apart from
//! every cuDNN frontend dump by its top-level keys, and reading with the format detected gives
//! what the format's own reader gives.

mod support;

use std::path::PathBuf;

use rime::graph::json::{self, Format, ReadAs};

fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok()
}

/// The rime files of the corpus: every valid, unsupported and native-twin fixture, and the
/// invalid ones that are JSON with the `format` key (the others are not JSON, or lack exactly
/// that key).
fn rime_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for kind in ["valid", "unsupported", "cudnn/native", "invalid"] {
        files.extend(support::fixtures(kind).into_iter().filter(|p| {
            std::fs::read_to_string(p)
                .is_ok_and(|t| kind != "invalid" || (is_json(&t) && t.contains("\"format\"")))
        }));
    }
    files
}

/// Text that is not JSON gets a syntax error at the same place whether the format is detected
/// or not (detection parses first; the parser's wording may differ, as it expected something
/// else there).
#[test]
fn text_that_is_not_json_gets_the_readers_syntax_error() {
    let broken: Vec<PathBuf> = support::fixtures("invalid")
        .into_iter()
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| !is_json(&t)))
        .collect();
    assert!(broken.len() >= 3, "{broken:?}");
    for path in &broken {
        let name = support::relative(path);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let detected = json::from_str_any(&text, &name, None).unwrap_err();
        let own = json::from_str(&text, &name).unwrap_err();
        assert!(
            matches!(detected, json::LoadError::Syntax { .. }),
            "{name}: {detected}"
        );
        assert_eq!(
            detected.location(),
            own.location(),
            "{name}: {detected} vs {own}"
        );
        assert!(detected.location().is_some(), "{name}: {detected}");
        assert!(detected.to_string().starts_with(&name), "{detected}");
    }
}

/// Every cuDNN frontend dump of the corpus (real, source-derived, and the 1.0 fixture).
fn dumps() -> Vec<PathBuf> {
    let mut files = support::fixtures("cudnn/real");
    files.extend(support::fixtures("cudnn/derived"));
    files.push(support::root().join("tests/fixtures/cudnn/sdpa_bwd_frontend_dropout_bias.json"));
    files
}

#[test]
fn every_file_of_the_corpus_is_detected_as_its_format() {
    let (rime, cudnn) = (rime_files(), dumps());
    assert!(
        rime.len() > 150 && cudnn.len() > 36,
        "{} {}",
        rime.len(),
        cudnn.len()
    );
    for (files, want) in [(&rime, Format::Rime), (&cudnn, Format::Cudnn)] {
        for path in files {
            let name = support::relative(path);
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got = json::detect(&text, &name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{name}");
        }
    }
}

#[test]
fn reading_with_the_format_detected_is_reading_with_its_reader() {
    for path in rime_files().iter().chain(&dumps()) {
        let name = support::relative(path);
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let any = json::from_str_any(&text, &name, None);
        let own = match json::detect(&text, &name).unwrap_or_else(|e| panic!("{e}")) {
            Format::Rime => json::from_str(&text, &name),
            Format::Cudnn => json::cudnn::from_str(&text, &name),
        };
        match (any, own) {
            (Ok(a), Ok(o)) => {
                assert_eq!(a.graph, o, "{name}");
                let version = text.contains("\"json_version\": \"2.0\"");
                let want = match a.read_as {
                    ReadAs::Rime => "rime graph JSON v1",
                    ReadAs::Cudnn(_) if version => "cuDNN frontend graph JSON 2.0",
                    ReadAs::Cudnn(_) => "cuDNN frontend graph JSON 1.0",
                };
                assert_eq!(a.read_as.to_string(), want, "{name}");
            }
            (Err(a), Err(o)) => assert_eq!(a.to_string(), o.to_string(), "{name}"),
            (a, o) => panic!("{name}: detected {a:?}, own reader {o:?}"),
        }
    }
}

/// The file read through the path-based reader is the same as through the text one, and the
/// size cap holds for dumps too.
#[test]
fn load_file_any_reads_within_the_limit() {
    let path = support::root().join("tests/fixtures/cudnn/real/bwd_basic.build_plans.json");
    let loaded = json::load_file_any(&path, json::DEFAULT_MAX_FILE_BYTES, None).expect("loads");
    assert!(matches!(loaded.read_as, ReadAs::Cudnn(_)));
    let small = json::load_file_any(&path, 100, None).unwrap_err();
    assert!(
        matches!(small, json::LoadError::TooLarge { limit: 100, .. }),
        "{small}"
    );
}
