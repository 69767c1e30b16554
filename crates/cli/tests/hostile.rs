//! The hostile-input corpus: `tests/hostile/cases.json` at the repository root, one entry per
//! case, each a `rime` command line run in a fresh directory holding the case's files, with
//! its expected outcome: the exit code, text the output must (and must not) contain, reason
//! codes, files that must come out byte-for-byte untouched and files that must be written.
//!
//! A case:
//!
//! ```text
//! { "case": "name", "class": "outputs",
//!   "files": { "g.json": FILE, ... },         written into the case directory first
//!   "args": ["run", "g.json", ...],           run there ({repo} is the repository root)
//!   "exit": 1,
//!   "output": ["..."], "absent": ["..."],     fragments of stdout + stderr
//!   "codes": ["STR018"],                      reason codes the output names
//!   "written": ["out.safetensors"],           files the command must create (safetensors
//!                                             ones must parse); every other file given must
//!                                             be untouched, and no temporary file remain
//!   "max_output": 100000 }                    bytes of stdout + stderr at most
//! ```
//!
//! FILE is one of `{"fixture": "valid/x.json"}` (under tests/), `{"json": VALUE}`,
//! `{"text": "..."}`, `{"edit": {"base": "valid/x.json", "edits": [...], "replace": [[from,
//! text, times]]}}` (JSON-pointer edits as in tests/bad_input.rs, then text replacement),
//! `{"many_nodes": N}`, `{"invalid_tensors": N}`, `{"safetensors": [[name, dtype, shape,
//! value]], "header": "...", "extra": N}` (a value of "nan", "inf" or "-inf" is one such
//! element followed by ones, `{"nan_at": [i, ...]}` ones with NaN at those row-major
//! elements), `{"zeros": N}`, `{"symlink": "name"}`, `{"hardlink": "name"}`,
//! `{"dir": true}`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../tests/support/edits.rs"]
mod edits;
#[path = "../../../tests/support/many_nodes.rs"]
mod many_nodes;

/// A command still running after this long is a hang (a finding), not slowness.
const HANG: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(rel: &str) -> String {
    let path = repo().join("tests").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bytes of a safetensors file from `[name, dtype, shape, value]` entries.
fn safetensors(spec: &Value) -> Vec<u8> {
    let size = |dt: &str| match dt {
        "BF16" | "F16" => 2,
        "F32" | "I32" => 4,
        "F64" | "I64" => 8,
        other => panic!("dtype {other}"),
    };
    let one = |dt: &str, x: f64| -> Vec<u8> {
        match dt {
            "BF16" => half::bf16::from_f64(x).to_le_bytes().to_vec(),
            "F16" => half::f16::from_f64(x).to_le_bytes().to_vec(),
            "F32" => (x as f32).to_le_bytes().to_vec(),
            "F64" => x.to_le_bytes().to_vec(),
            "I32" => (x as i32).to_le_bytes().to_vec(),
            "I64" => (x as i64).to_le_bytes().to_vec(),
            other => panic!("dtype {other}"),
        }
    };
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for t in spec["safetensors"].as_array().expect("tensors") {
        let (name, dt) = (t[0].as_str().expect("name"), t[1].as_str().expect("dtype"));
        let shape: Vec<u64> = t[2]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .collect();
        let n = usize::try_from(shape.iter().product::<u64>()).expect("small");
        let start = data.len();
        let nan_at: Vec<u64> = t[3]["nan_at"]
            .as_array()
            .map(|a| a.iter().map(|i| i.as_u64().expect("index")).collect())
            .unwrap_or_default();
        for i in 0..n {
            let x = match (&t[3], i) {
                (Value::String(s), 0) if s == "nan" => f64::NAN,
                (Value::String(s), 0) if s == "inf" => f64::INFINITY,
                (Value::String(s), 0) if s == "-inf" => f64::NEG_INFINITY,
                (Value::Number(v), _) => v.as_f64().expect("number"),
                _ if nan_at.contains(&(i as u64)) => f64::NAN,
                _ => 1.0,
            };
            data.extend(one(dt, x));
        }
        assert_eq!(data.len() - start, n * size(dt));
        header.insert(
            name.to_owned(),
            serde_json::json!({"dtype": dt, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut text = match spec.get("header").and_then(Value::as_str) {
        Some(raw) => raw.to_owned(),
        None => Value::Object(header).to_string(),
    };
    while text.len() % 8 != 0 {
        text.push(' ');
    }
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend(text.as_bytes());
    bytes.extend(data);
    bytes.extend(std::iter::repeat_n(
        0u8,
        spec["extra"].as_u64().unwrap_or(0) as usize,
    ));
    bytes
}

/// Creates file `name` of the case directory from its spec.
fn materialize(dir: &Path, name: &str, spec: &Value) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("case subdirectory");
    }
    let text = |t: String| std::fs::write(&path, t).expect("write case file");
    if let Some(rel) = spec.get("fixture").and_then(Value::as_str) {
        text(fixture(rel));
    } else if let Some(v) = spec.get("json") {
        text(serde_json::to_string_pretty(v).expect("json"));
    } else if let Some(t) = spec.get("text").and_then(Value::as_str) {
        text(t.to_owned());
    } else if let Some(e) = spec.get("edit") {
        let base = e["base"]
            .as_str()
            .unwrap_or("fixtures/valid/bwd_bhsd_basic.json");
        let mut doc: Value = serde_json::from_str(&fixture(base)).expect("base");
        for edit in e["edits"].as_array().into_iter().flatten() {
            edits::apply(&mut doc, edit);
        }
        let mut out = serde_json::to_string_pretty(&doc).expect("edited");
        for r in e["replace"].as_array().into_iter().flatten() {
            let with = r[1]
                .as_str()
                .expect("text")
                .repeat(r[2].as_u64().unwrap_or(1) as usize);
            out = out.replace(r[0].as_str().expect("from"), &with);
        }
        text(out);
    } else if let Some(n) = spec.get("many_nodes").and_then(Value::as_u64) {
        text(many_nodes::text(n as usize));
    } else if let Some(n) = spec.get("invalid_tensors").and_then(Value::as_u64) {
        text(many_nodes::invalid_text(n as usize));
    } else if spec.get("safetensors").is_some() {
        std::fs::write(&path, safetensors(spec)).expect("write safetensors");
    } else if let Some(n) = spec.get("zeros").and_then(Value::as_u64) {
        std::fs::write(&path, vec![0u8; n as usize]).expect("write zeros");
    } else if let Some(to) = spec.get("symlink").and_then(Value::as_str) {
        std::os::unix::fs::symlink(to, &path).expect("symlink");
    } else if let Some(to) = spec.get("hardlink").and_then(Value::as_str) {
        std::fs::hard_link(dir.join(to), &path).expect("hard link");
    } else if spec.get("dir").is_some() {
        std::fs::create_dir_all(&path).expect("dir");
    } else {
        panic!("{name}: unknown file spec {spec}");
    }
}

/// Bytes of every regular file under `dir` (through symlinks), by relative path.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("case dir").flatten() {
            let p = entry.path();
            let rel = p
                .strip_prefix(dir)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&p).expect("metadata");
            if meta.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.insert(rel, bytes);
            } else {
                out.insert(rel, Vec::new()); // a dangling symlink
            }
        }
    }
    out
}

/// Runs `args` in `dir`; (exit code, stdout + stderr).
fn rime(dir: &Path, args: &[String]) -> Result<(i32, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut text);
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {HANG:?}: a hang"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = reader.join().unwrap_or_default();
    text.extend(err_reader.join().unwrap_or_default());
    Ok((
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&text).into_owned(),
    ))
}

fn strings(case: &Value, key: &str) -> Vec<String> {
    case[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Runs one case; the reasons it failed, if any.
fn check(case: &Value, dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, spec) in case["files"].as_object().into_iter().flatten() {
        materialize(dir, name, spec);
    }
    let before = snapshot(dir);
    let repo = repo().canonicalize().expect("repo");
    let args: Vec<String> = strings(case, "args")
        .iter()
        .map(|a| a.replace("{repo}", &repo.to_string_lossy()))
        .collect();
    let (code, output) = match rime(dir, &args) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let shown: String = output.chars().take(2000).collect();
    if Some(i64::from(code)) != case["exit"].as_i64() {
        problems.push(format!("exit {code}, expected {}", case["exit"]));
    }
    for want in strings(case, "output")
        .iter()
        .chain(&strings(case, "codes"))
    {
        if !output.contains(want.as_str()) {
            problems.push(format!("output lacks {want:?}"));
        }
    }
    for bad in strings(case, "absent") {
        if output.contains(bad.as_str()) {
            problems.push(format!("output holds {bad:?}"));
        }
    }
    if let Some(max) = case["max_output"].as_u64() {
        if output.len() as u64 > max {
            problems.push(format!("{} bytes of output, at most {max}", output.len()));
        }
    }
    let written = strings(case, "written");
    let after = snapshot(dir);
    for (name, bytes) in &before {
        if !written.contains(name) && after.get(name) != Some(bytes) {
            problems.push(format!("{name} was changed or removed"));
        }
    }
    for name in after.keys() {
        if !before.contains_key(name) && !written.contains(name) {
            problems.push(format!("{name} was left behind"));
        }
    }
    for name in &written {
        match after.get(name) {
            None => problems.push(format!("{name} was not written")),
            Some(bytes) if name.ends_with(".safetensors") => {
                if let Err(e) = safetensors::SafeTensors::deserialize(bytes) {
                    problems.push(format!("{name} is not safetensors: {e}"));
                }
            }
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        problems.push(format!("output was:\n{shown}"));
    }
    problems
}

#[test]
fn hostile_inputs_get_their_expected_outcomes() {
    let path = repo().join("tests/hostile/cases.json");
    let text = std::fs::read_to_string(&path).expect("case table");
    let cases: Vec<Value> = serde_json::from_str(&text).expect("cases parse");
    let root = std::env::temp_dir().join(format!("rime-hostile-{}", std::process::id()));
    let only = std::env::var("RIME_HOSTILE_CASE").ok();
    let mut failures = Vec::new();
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    let mut names = std::collections::BTreeSet::new();
    for case in &cases {
        let name = case["case"].as_str().expect("case name");
        assert!(names.insert(name), "case {name} twice");
        *classes
            .entry(case["class"].as_str().expect("class").to_owned())
            .or_default() += 1;
        assert!(
            case["exit"].is_i64(),
            "{name}: every case says its exit code"
        );
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("case dir");
        let problems = check(case, &dir);
        if !problems.is_empty() {
            failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&root);
    println!("{} cases: {classes:?}", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(cases.len() >= 150, "{} cases", cases.len());
    assert_eq!(classes.len(), 7, "cases of every class: {classes:?}");
}
