//! The command line on the cuDNN frontend's dumps (`tests/fixtures/cudnn/real/`): every command
//! reads them with the format detected, `rime convert` to rime's format and back is a fixed
//! point, and `rime run` computes each dump bit for bit as its native twin
//! (`tests/fixtures/cudnn/native/`, the same graph written in rime's format; see
//! `tests/cudnn_native_twins.rs`).

use std::path::{Path, PathBuf};

use rime_analyzer::{analyze, render_report, Target};
use rime_graph::json;

mod common;
use common::{repo, rime};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every real dump, relative to the repository root, sorted.
fn real_dumps() -> Vec<String> {
    let dir = repo().join("tests/fixtures/cudnn/real");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("real dumps")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .map(|n| format!("tests/fixtures/cudnn/real/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 36, "{} real dumps", files.len());
    files
}

/// The native twin of a dump: `native/<case>.json`, the case being the file name up to its
/// first dot.
fn twin_of(dump: &str) -> String {
    let name = dump.rsplit('/').next().unwrap_or_default();
    let case = name.split('.').next().unwrap_or_default();
    format!("tests/fixtures/cudnn/native/{case}.json")
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rime-cli-cudnn-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn check_reads_a_dump_with_the_format_detected() {
    let dump = "tests/fixtures/cudnn/real/bwd_bias_per_batch_dbias.build_plans.json";
    let out = rime(&["check", dump, "--target", "rtx-5090"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("note: read {dump} as cuDNN frontend graph JSON 2.0"),
        "one short line on stderr"
    );
    let dump_text = std::fs::read_to_string(repo().join(dump)).expect("dump");
    let graph = json::cudnn::from_str(&dump_text, dump).expect("the dump loads");
    let target = Target::by_name("rtx-5090").expect("target");
    assert_eq!(text(&out.stdout), render_report(&analyze(&graph, &target)));
    // Forcing the right format says the same; rime's own files stay silent.
    let forced = rime(&["check", dump, "--target", "rtx-5090", "--format", "cudnn"]);
    assert_eq!(forced.stdout, out.stdout);
    let own = rime(&["check", "tests/hostile/small_bwd.json", "--target", "cpu"]);
    assert_eq!(own.status.code(), Some(0));
    assert_eq!(text(&own.stderr), "");
}

/// `rime convert` of every real dump: to rime's format and back to the frontend's is a fixed
/// point (the dump written directly and through rime's format are the same text, and so are
/// the two rime files), and each file is what the library writes.
#[test]
fn converting_every_real_dump_to_rime_and_back_is_a_fixed_point() {
    let dir = scratch("convert");
    for dump in real_dumps() {
        let [rime_a, cudnn_b, rime_c, cudnn_d] =
            ["a.rime.json", "b.cudnn.json", "c.rime.json", "d.cudnn.json"].map(|n| dir.join(n));
        for (from, to, format) in [
            (dump.as_str(), &rime_a, "rime"),
            (path(&rime_a), &cudnn_b, "cudnn"),
            (path(&cudnn_b), &rime_c, "rime"),
            (dump.as_str(), &cudnn_d, "cudnn"),
        ] {
            let out = rime(&["convert", from, "-o", path(to), "--to", format]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "convert {from} --to {format}: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        let read = |p: &Path| std::fs::read_to_string(p).expect("written");
        assert_eq!(
            read(&rime_c),
            read(&rime_a),
            "{dump}: dump -> rime -> dump -> rime"
        );
        assert_eq!(
            read(&cudnn_b),
            read(&cudnn_d),
            "{dump}: dump -> rime -> dump"
        );
        let source = std::fs::read_to_string(repo().join(&dump)).expect("dump");
        let graph = json::cudnn::from_str(&source, &dump).expect("loads");
        assert_eq!(read(&rime_a), json::to_string(&graph), "{dump}");
        assert_eq!(read(&cudnn_d), json::cudnn::to_string(&graph), "{dump}");
        let back = json::cudnn::from_str(&read(&cudnn_d), "d.cudnn.json").expect("reads back");
        assert_eq!(back, graph, "{dump}: the written dump reads as the dump");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The real dumps the CPU engine does not take, and why: none since it runs Philox dropout
/// (`bwd_dropout`, `fwd_padding_dropout` were refused with CPU001 before).
const CPU_REFUSED: [(&str, &str); 0] = [];

/// The real dumps with padded query rows (sequence lengths below Sq), whose Stats hold +inf
/// there.
const PADDED_ROWS: [&str; 1] = ["fwd_padding_dropout.build_plans.json"];

/// The FNV-1a (64 bits) of `bytes`, as `rime run --json` defines its checksum.
fn fnv1a64(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}")
}

/// `rime run` on every real dump the CPU engine takes, and on its native twin, with the same
/// seed: the safetensors outputs are the same bytes (same tensor names, same values), and the
/// checksums of `--json` are those of the bytes written. The dumps are small (at most
/// B=2, H=4, S=128, D=192): the whole corpus runs in seconds on a debug build.
#[test]
fn running_every_real_dump_computes_what_its_native_twin_does() {
    let dir = scratch("run");
    let (mut ran, mut refused) = (0, 0);
    for dump in real_dumps() {
        let twin = twin_of(&dump);
        let name = dump.rsplit('/').next().unwrap_or_default();
        let (a, b) = (dir.join("dump.safetensors"), dir.join("twin.safetensors"));
        let args = |file: &str, out: &Path| {
            vec![
                "run".to_owned(),
                file.to_owned(),
                "--target".to_owned(),
                "cpu".to_owned(),
                "--seed".to_owned(),
                "11".to_owned(),
                "--outputs".to_owned(),
                path(out).to_owned(),
            ]
        };
        let mut dump_args = args(&dump, &a);
        dump_args.push("--json".to_owned());
        let on_dump = rime(&dump_args.iter().map(String::as_str).collect::<Vec<_>>());
        let twin_args = args(&twin, &b);
        let on_twin = rime(&twin_args.iter().map(String::as_str).collect::<Vec<_>>());
        let doc: serde_json::Value = serde_json::from_slice(&on_dump.stdout)
            .unwrap_or_else(|e| panic!("{dump}: stdout is not the JSON document: {e}"));
        if let Some((_, code)) = CPU_REFUSED.iter().find(|(n, _)| *n == name) {
            assert_eq!(on_dump.status.code(), Some(1), "{dump}");
            assert_eq!(doc["status"], "unsupported", "{dump}");
            assert!(doc.to_string().contains(code), "{dump}: {doc}");
            assert_eq!(on_twin.status.code(), Some(1), "{twin}");
            assert!(text(&on_twin.stdout).contains(code), "{twin}");
            refused += 1;
            continue;
        }
        assert_eq!(
            on_dump.status.code(),
            Some(0),
            "{dump}: {}",
            text(&on_dump.stderr)
        );
        assert_eq!(
            on_twin.status.code(),
            Some(0),
            "{twin}: {}{}",
            text(&on_twin.stdout),
            text(&on_twin.stderr)
        );
        assert_eq!(doc["status"], "ran");
        assert_eq!(doc["read_as"]["format"], "cudnn");
        let (from_dump, from_twin) = (std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
        assert!(
            from_dump == from_twin,
            "{dump} and {twin}: the outputs differ"
        );
        let file = safetensors::SafeTensors::deserialize(&from_dump).expect("safetensors");
        let outputs = doc["outputs"].as_array().expect("outputs");
        assert!(!outputs.is_empty() && outputs.len() == file.len(), "{dump}");
        for o in outputs {
            let tensor_name = o["name"].as_str().expect("name");
            let tensor = file.tensor(tensor_name).expect("written");
            assert_eq!(
                o["checksum"]["fnv1a64"].as_str(),
                Some(fnv1a64(tensor.data()).as_str()),
                "{dump}: {tensor_name}"
            );
            // Padded query rows get Stats = +inf (docs/cpu-engine.md, Conventions).
            if !(PADDED_ROWS.contains(&name) && tensor_name.ends_with("Stats")) {
                assert_eq!(o["non_finite"], 0, "{dump}: {tensor_name}");
            }
        }
        ran += 1;
    }
    assert_eq!(
        (ran, refused),
        (37, 0),
        "dumps run and refused on the CPU engine"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
