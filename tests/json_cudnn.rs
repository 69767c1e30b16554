//! Graphs serialized by the cuDNN frontend (`Graph::serialize`, `repr()` of a Python graph)
//! load into the same graph rime's own format describes; a rime graph written in the
//! frontend's format reads back unchanged.
//!
//! The corpus is data:
//! - `tests/fixtures/cudnn/real/*.json`: dumps written by the real frontend
//!   (`tests/fixtures/cudnn/generate_dumps.py` on a GPU machine; `real/cases/<case>.json` says
//!   how each was made). Every file dropped there is loaded and snapshotted, no code needed.
//! - `tests/fixtures/cudnn/derived/*.json`: SOURCE-DERIVED graph JSON 2.0 dumps, written from
//!   what the frontend 1.32 headers say its serializer emits (and, where a real dump shows it,
//!   in the form the real ones have), not by the frontend: only those that show what no real
//!   dump does (`derived/README.md` says what each covers).
//! - `tests/fixtures/cudnn/sdpa_bwd_frontend_dropout_bias.json`: a graph JSON 1.0 dump in the
//!   frontend 1.23 style (hand-made from that version's source).
//! - `tests/fixtures/cudnn/rejections.json`: edits of those files that must be refused.
//!
//! Files `<case>.<stage>.json` of one case (the same graph dumped after `validate`, after
//! `build_operation_graph`, ...) must read as the same graph: the frontend's lowering rewrites
//! K and V and adds tensors, the reader undoes it, and the math must not change.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rime::analyzer::{analyze, render_report, Target};
use rime::graph::{json, DataType, Graph, Port, Scalar, SdpaShape};
use support::cudnn::{case_of, read};
use support::math::math_of;

const TARGETS: [&str; 2] = ["rtx-5090", "h200"];
const V1_FIXTURE: &str = "tests/fixtures/cudnn/sdpa_bwd_frontend_dropout_bias.json";

/// Where a dump comes from and, for a real one, how it was made (its `cases/<case>.json`).
fn provenance(path: &Path) -> String {
    let dir = path
        .parent()
        .map(|d| d.file_name().unwrap_or_default().to_string_lossy());
    match dir.as_deref() {
        Some("derived") => "SOURCE-DERIVED: written from the cuDNN frontend 1.32 headers, not by \
                            the frontend; kept until a real dump shows what it does\n"
            .to_owned(),
        _ => {
            let case = path
                .with_file_name("cases")
                .join(format!("{}.json", case_of(path)));
            match std::fs::read_to_string(&case) {
                Ok(text) => {
                    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                    format!(
                        "real dump; case {}\nversions {}\n",
                        doc["case"], doc["versions"]
                    )
                }
                Err(_) => "real dump (no case record)\n".to_owned(),
            }
        }
    }
}

/// What `rime check` says about a dump: the graph rime reads, its validation, and the support
/// reports on the snapshot targets.
fn check(path: &Path) -> String {
    let mut out = provenance(path);
    let (_, graph) = read(path);
    let graph = match graph {
        Ok(g) => g,
        Err(e) => return format!("{out}load error: {e}\n"),
    };
    match graph.validate() {
        Ok(()) => out.push_str("validate: ok\n"),
        Err(errors) => {
            for e in &errors.0 {
                let _ = writeln!(out, "validate: {e}");
            }
        }
    }
    out.push_str("===== as a rime graph\n");
    out.push_str(&json::to_string(&graph));
    for name in TARGETS {
        let target = Target::by_name(name).unwrap_or_else(|| panic!("unknown target {name}"));
        let _ = writeln!(out, "===== rime check --target {name}");
        out.push_str(&render_report(&analyze(&graph, &target)));
    }
    out
}

#[test]
fn real_dumps_load_and_check() {
    let mut settings = insta::Settings::clone_current();
    settings.set_allow_empty_glob(true);
    settings.bind(|| {
        insta::glob!("fixtures/cudnn/real/*.json", |path| {
            insta::assert_snapshot!(check(path));
        });
    });
}

#[test]
fn source_derived_dumps_load_and_check() {
    insta::glob!("fixtures/cudnn/derived/*.json", |path| {
        insta::assert_snapshot!(check(path));
    });
}

/// Every dump of the corpus loads: each graph the generator builds uses only what rime models,
/// so a refusal is a reader to fix (or a case to drop), never a snapshot to accept.
#[test]
fn every_dump_loads() {
    let mut files = support::fixtures("cudnn/derived");
    files.extend(support::fixtures("cudnn/real"));
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| read(p).1.err().map(|e| e.to_string()))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Dumps of one case taken at different stages read as the same graph.
#[test]
fn stages_of_one_case_read_as_the_same_graph() {
    let mut compared = 0;
    for dir in ["derived", "real"] {
        let mut cases: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for path in support::fixtures(&format!("cudnn/{dir}")) {
            cases.entry(case_of(&path)).or_default().push(path);
        }
        for files in cases.values().filter(|f| f.len() > 1) {
            let graphs: Vec<(String, Graph)> = files
                .iter()
                .map(|p| {
                    (
                        support::relative(p),
                        read(p).1.unwrap_or_else(|e| panic!("{e}")),
                    )
                })
                .collect();
            for pair in graphs.windows(2) {
                let ((a, ga), (b, gb)) = (&pair[0], &pair[1]);
                assert_eq!(math_of(ga), math_of(gb), "{a} and {b} differ");
                compared += 1;
            }
        }
    }
    assert!(compared >= 2, "only {compared} stage pairs compared");
}

/// A dump read, written in the frontend's format and read again gives the same graph: exactly
/// for 2.0 dumps (uids on every tensor, listed in uid order), the same math for the 1.0 one
/// (whose tensors without uid get one). Writing that again gives the same text.
#[test]
fn converting_a_dump_and_back_is_a_fixed_point() {
    let mut files = support::fixtures("cudnn/derived");
    files.extend(support::fixtures("cudnn/real"));
    files.push(support::root().join(V1_FIXTURE));
    for path in &files {
        let name = support::relative(path);
        let (text, graph) = read(path);
        let graph = graph.unwrap_or_else(|e| panic!("{e}"));
        let written = json::cudnn::to_string(&graph);
        let again = json::cudnn::from_str(&written, "written.json")
            .unwrap_or_else(|e| panic!("{name}: the written dump does not load: {e}\n{written}"));
        if text.contains("\"json_version\": \"2.0\"") {
            assert_eq!(again, graph, "{name}: read(write(g)) != g\n{written}");
        } else {
            assert_eq!(math_of(&again), math_of(&graph), "{name}");
        }
        assert_eq!(
            json::cudnn::to_string(&again),
            written,
            "{name}: write is not stable"
        );
    }
}

/// What the writer produces, for review: every dump of the corpus written back (real and
/// source-derived dumps have distinct file names, so their snapshots do not collide).
#[test]
fn written_dumps() {
    for pattern in [
        "fixtures/cudnn/real/*.json",
        "fixtures/cudnn/derived/*.json",
    ] {
        insta::glob!(pattern, |path| {
            let (_, graph) = read(path);
            let graph = graph.unwrap_or_else(|e| panic!("{e}"));
            insta::assert_snapshot!(json::cudnn::to_string(&graph));
        });
    }
}

#[test]
fn cudnn_frontend_sdpa_bwd_graph_loads() {
    let path = support::root().join(V1_FIXTURE);
    let (_, g) = read(&path);
    let g = g.unwrap_or_else(|e| panic!("{e}"));
    g.validate().unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(g.context.io_data_type, Some(DataType::F16));
    assert_eq!(g.tensors().len(), 13);
    let node = &g.nodes()[0];
    assert_eq!(node.name, "flash_attention_backward");
    assert_eq!(node.options.dropout_probability, Some(0.1));
    assert_eq!(node.options.right_bound, Some(0));
    assert_eq!(node.options.attn_scale, None);
    // null ports are absent, uid refs resolve to the uid, name refs to the name
    assert!(node.input(Port::Sink).is_none() && node.output(Port::DBias).is_none());
    let name = |p: Port| {
        g.get(node.port(p).expect("bound"))
            .expect("exists")
            .name
            .clone()
    };
    assert_eq!(name(Port::Stats), "stats");
    assert_eq!(name(Port::DQ), "flash_attention_backward::dQ");
    let scale = g
        .get(node.input(Port::AttnScale).expect("bound"))
        .expect("exists");
    assert_eq!(scale.pass_by_value, Some(Scalar::F32(0.125)));
    let dq = g.get(node.output(Port::DQ).expect("dQ bound"));
    assert_eq!(dq.and_then(|t| t.uid), Some(102));

    // And it re-saves as a rime file that loads to the same graph.
    let saved = json::to_string(&g);
    assert_eq!(json::from_str(&saved, "saved.json").expect("reloads"), g);
    insta::assert_snapshot!(saved);
}

#[test]
fn cudnn_reader_refuses_what_it_cannot_model() {
    let dir = support::root().join("tests/fixtures/cudnn");
    let table = std::fs::read_to_string(dir.join("rejections.json")).expect("rejections.json");
    // Each entry: what the edit makes the file say, the fixture edited (relative to
    // tests/fixtures/cudnn), the text replaced (its first occurrence) and what replaces it.
    let cases: serde_json::Value = serde_json::from_str(&table).expect("rejections.json parses");
    let field = |case: &serde_json::Value, key: &str| -> String {
        case[key]
            .as_str()
            .unwrap_or_else(|| panic!("rejections.json: `{key}` missing in {case}"))
            .to_owned()
    };
    let mut out = String::new();
    for entry in cases.as_array().expect("rejections.json is a list") {
        let case = Rejection {
            what: field(entry, "what"),
            base: field(entry, "base"),
            replace: field(entry, "replace"),
            with: field(entry, "with"),
        };
        let base = std::fs::read_to_string(dir.join(&case.base))
            .unwrap_or_else(|e| panic!("{}: {e}", case.base));
        assert!(
            base.contains(&case.replace),
            "{}: `{}` is not in {}",
            case.what,
            case.replace,
            case.base
        );
        let text = base.replacen(&case.replace, &case.with, 1);
        let file = format!("{} (edited)", case.base);
        let err = match json::cudnn::from_str(&text, &file) {
            Ok(_) => panic!("{}: loaded", case.what),
            Err(e) => e,
        };
        let message = err.to_string();
        assert!(message.starts_with(&file), "{}: {message}", case.what);
        assert!(
            err.location().is_some(),
            "{}: no line:column: {message}",
            case.what
        );
        let _ = writeln!(out, "{}\n    {message}", case.what);
    }
    insta::assert_snapshot!(out);
}

/// One edit of a fixture that the reader must refuse.
struct Rejection {
    what: String,
    base: String,
    replace: String,
    with: String,
}

/// Every valid rime fixture written in the frontend's format reads back as the same math:
/// uids are added and tensors listed in uid order, and rime's default scale (1/sqrt(Dqk)) is
/// written out, since cuDNN's default is no scaling.
#[test]
fn rime_graphs_written_for_cudnn_read_back_the_same() {
    let files = support::fixtures("valid");
    assert!(!files.is_empty());
    for path in &files {
        let name = support::relative(path);
        let graph = support::load_and_validate(path).unwrap_or_else(|e| panic!("{e}"));
        let written = json::cudnn::to_string(&graph);
        let back = json::cudnn::from_str(&written, "written.json")
            .unwrap_or_else(|e| panic!("{name}: the written dump does not load: {e}\n{written}"));
        back.validate()
            .unwrap_or_else(|e| panic!("{name}: the written dump does not validate: {e}"));
        let mut explicit = Graph::new(graph.context.clone());
        for t in graph.tensors() {
            explicit.tensor(t.clone());
        }
        for n in graph.nodes() {
            let mut n = n.clone();
            if n.options.attn_scale.is_none() && n.input(Port::AttnScale).is_none() {
                n.options.attn_scale =
                    SdpaShape::of(&graph, &n).and_then(|s| s.default_attn_scale());
            }
            explicit.add_node(n);
        }
        assert_eq!(math_of(&back), math_of(&explicit), "{name}\n{written}");
    }
}

/// Every truncation and many byte edits of a dump load or fail with a located error; none
/// panics.
#[test]
fn reading_damaged_dumps_never_panics() {
    let path = support::root().join("tests/fixtures/cudnn/real/bwd_dropout.build_plans.json");
    let base = std::fs::read_to_string(&path).expect("fixture");
    let mut inputs: Vec<String> = (0..base.len())
        .filter(|&c| base.is_char_boundary(c))
        .step_by(3)
        .map(|c| base[..c].to_owned())
        .collect();
    for (i, c) in base.char_indices().step_by(11) {
        for repl in ["", "}", "]", "\"", "-", "7", "null", "[]", "{}"] {
            inputs.push(format!("{}{repl}{}", &base[..i], &base[i + c.len_utf8()..]));
        }
    }
    for text in &inputs {
        let outcome = std::panic::catch_unwind(|| match json::cudnn::from_str(text, "d.json") {
            Ok(g) => {
                let _ = json::cudnn::to_string(&g);
                None
            }
            Err(e) => Some(e),
        });
        match outcome {
            Err(_) => panic!("panicked on:\n{text}"),
            Ok(Some(e)) => assert!(
                e.to_string().starts_with("d.json") && e.location().is_some(),
                "{e}"
            ),
            Ok(None) => {}
        }
    }
}
