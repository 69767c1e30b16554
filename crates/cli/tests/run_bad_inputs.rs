//! `rime run` refuses bad input files with a message naming the file, the tensor and what is
//! wrong (name, shape, data type, truncation), exits non-zero, and writes no output file.

use std::path::{Path, PathBuf};
use std::process::Command;

use safetensors::tensor::TensorView;
use safetensors::Dtype;

/// The example graph: bf16 Q/O/dO (2, 8, 256, 64), K/V (2, 2, 256, 64), f32 Stats (2, 8, 256, 1).
fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/backward_gqa_causal.json")
}

const Q: [usize; 4] = [2, 8, 256, 64];
const KV: [usize; 4] = [2, 2, 256, 64];

/// A safetensors file of zero-filled tensors: (name, dtype, shape).
fn file(tensors: &[(&str, Dtype, Vec<usize>)]) -> Vec<u8> {
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, dt, shape)| vec![0u8; shape.iter().product::<usize>() * dt.bitsize() / 8])
        .collect();
    let views: Vec<(&str, TensorView<'_>)> = tensors
        .iter()
        .zip(&data)
        .map(|((name, dt, shape), bytes)| {
            (
                *name,
                TensorView::new(*dt, shape.clone(), bytes).expect("view"),
            )
        })
        .collect();
    safetensors::serialize(views, None).expect("serialize")
}

fn raw_header(header: &str, data: usize) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, data));
    bytes
}

/// A case: its name, the file's content (`None`: no file at that path), substrings of stderr.
type Case = (&'static str, Option<Vec<u8>>, Vec<&'static str>);

fn cases() -> Vec<Case> {
    let bf16 = |name, shape: [usize; 4]| (name, Dtype::BF16, shape.to_vec());
    vec![
        (
            "not_safetensors",
            Some(b"hello, world".to_vec()),
            vec!["not a safetensors file"],
        ),
        (
            "empty",
            Some(Vec::new()),
            vec!["shorter than its 8-byte header length"],
        ),
        (
            "header_longer_than_file",
            Some(1_000_000u64.to_le_bytes().to_vec()),
            vec!["truncated: the header needs 1000008 bytes, the file has 8"],
        ),
        (
            "header_not_json",
            Some(raw_header("{not json", 0)),
            vec!["bad header"],
        ),
        (
            "data_truncated",
            Some(raw_header(
                r#"{"Q":{"dtype":"BF16","shape":[2,8,256,64],"data_offsets":[0,524288]}}"#,
                100,
            )),
            vec!["truncated: the header declares"],
        ),
        (
            "wrong_name_lower_case",
            Some(file(&[bf16("q", Q)])),
            vec!["'q' is not a tensor of the graph", "Q, K, V"],
        ),
        (
            "wrong_name_trailing_space",
            Some(file(&[bf16("K ", KV)])),
            vec!["'K ' is not a tensor of the graph"],
        ),
        (
            "wrong_name_among_good",
            Some(file(&[bf16("Q", Q), bf16("Vee", KV)])),
            vec!["'Vee' is not a tensor of the graph"],
        ),
        (
            "q_f32",
            Some(file(&[("Q", Dtype::F32, Q.to_vec())])),
            vec!["input 'Q' is F32 in the file, the graph says bf16"],
        ),
        (
            "k_f16",
            Some(file(&[("K", Dtype::F16, KV.to_vec())])),
            vec!["input 'K' is F16 in the file, the graph says bf16"],
        ),
        (
            "do_i32",
            Some(file(&[("dO", Dtype::I32, Q.to_vec())])),
            vec!["input 'dO' is I32", "bf16"],
        ),
        (
            "stats_bf16",
            Some(file(&[("Stats", Dtype::BF16, vec![2, 8, 256, 1])])),
            vec!["input 'Stats' is BF16 in the file, the graph says f32"],
        ),
        (
            "q_rank_3",
            Some(file(&[("Q", Dtype::BF16, vec![16, 256, 64])])),
            vec!["input 'Q' has shape [16, 256, 64] in the file, the graph says [2, 8, 256, 64]"],
        ),
        (
            "v_heads_transposed",
            Some(file(&[("V", Dtype::BF16, vec![2, 256, 2, 64])])),
            vec!["input 'V' has shape [2, 256, 2, 64]", "[2, 2, 256, 64]"],
        ),
        (
            "stats_missing_last_dim",
            Some(file(&[("Stats", Dtype::F32, vec![2, 8, 256])])),
            vec!["input 'Stats' has shape [2, 8, 256]"],
        ),
        ("path_missing", None, vec!["cannot read"]),
    ]
}

fn rime(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rime"))
        .args(args)
        .output()
        .expect("rime runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn arg(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn bad_input_files_are_refused_by_name_and_no_output_is_written() {
    let dir = std::env::temp_dir().join(format!("rime-run-bad-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let example = example();
    let mut failures = Vec::new();
    let cases = cases();
    for (case, content, expect) in &cases {
        let inputs = dir.join(format!("{case}.safetensors"));
        if let Some(bytes) = content {
            std::fs::write(&inputs, bytes).expect("write inputs");
        }
        let outputs = dir.join(format!("{case}.out.safetensors"));
        let (code, stderr) = rime(&[
            "run",
            arg(&example),
            "--target",
            "cpu",
            "--inputs",
            arg(&inputs),
            "--outputs",
            arg(&outputs),
        ]);
        let mut expect: Vec<&str> = expect.clone();
        expect.push(arg(&inputs));
        let missing: Vec<&&str> = expect.iter().filter(|e| !stderr.contains(**e)).collect();
        if code == 0 || !missing.is_empty() {
            failures.push(format!(
                "{case}: exit {code}, missing {missing:?} in:\n{stderr}"
            ));
        }
        if outputs.exists() {
            failures.push(format!("{case}: wrote {}", outputs.display()));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(cases.len(), 16);
}
