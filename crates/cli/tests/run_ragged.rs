//! `rime run` on the THD example (ragged Q, K, V, O, dO, dQ, dK, dV and Stats): given the
//! same (B, H, S, D) inputs and sequence lengths, it writes exactly the gradients of the same
//! graph in a padded layout, a zero-length sequence included, and its random inputs keep their
//! lengths within `max_total_seq_len_q/kv`.

use std::path::{Path, PathBuf};

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

mod common;

fn example() -> PathBuf {
    common::repo().join("examples/backward_thd_varlen.json")
}

/// `rime ARGS`: exit code, stdout, stderr.
fn rime(args: &[&str]) -> (i32, String, String) {
    let out = common::rime(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The example without its ragged offsets (same dims, the THD strides with their batch stride
/// S x H x D make it a padded BSHD graph) and without the totals that only size packed layouts.
fn padded_twin(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(example()).expect("example");
    let mut graph: serde_json::Value = serde_json::from_str(&text).expect("json");
    let tensors = graph["tensors"].as_object_mut().expect("tensors");
    tensors.retain(|name, _| !name.ends_with("_offsets"));
    for t in tensors.values_mut() {
        t.as_object_mut().expect("tensor").remove("ragged_offset");
    }
    let node = graph["nodes"][0].as_object_mut().expect("node");
    node.remove("max_total_seq_len_q");
    node.remove("max_total_seq_len_kv");
    let path = dir.join("padded.json");
    std::fs::write(&path, serde_json::to_string_pretty(&graph).unwrap()).unwrap();
    path
}

/// bf16 little-endian bytes of `n` values seeded by `k`.
fn bf16_bytes(n: usize, k: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| {
            let x = ((i.wrapping_mul(2_654_435_761) ^ k) % 997) as f32 / 498.0 - 1.0;
            ((x.to_bits() >> 16) as u16).to_le_bytes()
        })
        .collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn run(graph: &Path, inputs: &Path, out: &Path) -> String {
    let (code, stdout, stderr) = rime(&[
        "run",
        graph.to_str().unwrap(),
        "--target",
        "cpu",
        "--inputs",
        inputs.to_str().unwrap(),
        "--outputs",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{}\n{stdout}\n{stderr}", graph.display());
    stdout
}

#[test]
fn the_thd_example_computes_what_its_padded_twin_computes() {
    let dir = std::env::temp_dir().join(format!("rime-run-ragged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // B = 4, Hq = 8, Hk = Hv = 2, S = 256, D = 64; the totals are 1024 tokens.
    let q = [4usize, 8, 256, 64];
    let kv = [4usize, 2, 256, 64];
    let (len_q, len_kv) = ([256, 0, 100, 1], [200, 17, 256, 3]);
    let mut named: Vec<(&str, Vec<usize>, Dtype, Vec<u8>)> =
        [("Q", q, 1), ("K", kv, 2), ("V", kv, 3), ("dO", q, 4)]
            .into_iter()
            .map(|(name, dims, k)| {
                (
                    name,
                    dims.to_vec(),
                    Dtype::BF16,
                    bf16_bytes(dims.iter().product(), k),
                )
            })
            .collect();
    named.push(("seq_len_q", vec![4, 1, 1, 1], Dtype::I32, i32_bytes(&len_q)));
    named.push((
        "seq_len_kv",
        vec![4, 1, 1, 1],
        Dtype::I32,
        i32_bytes(&len_kv),
    ));
    let views: Vec<(&str, TensorView<'_>)> = named
        .iter()
        .map(|(name, dims, dt, bytes)| (*name, TensorView::new(*dt, dims.clone(), bytes).unwrap()))
        .collect();
    let inputs = dir.join("inputs.safetensors");
    std::fs::write(&inputs, safetensors::serialize(views, None).unwrap()).unwrap();

    let (ragged_out, padded_out) = (
        dir.join("ragged.safetensors"),
        dir.join("padded.safetensors"),
    );
    let said = run(&example(), &inputs, &ragged_out);
    assert!(
        said.contains("making O and Stats with a forward run"),
        "{said}"
    );
    run(&padded_twin(&dir), &inputs, &padded_out);
    let (ragged, padded) = (
        std::fs::read(&ragged_out).unwrap(),
        std::fs::read(&padded_out).unwrap(),
    );
    let (a, b) = (
        SafeTensors::deserialize(&ragged).unwrap(),
        SafeTensors::deserialize(&padded).unwrap(),
    );
    for name in ["dQ", "dK", "dV"] {
        let (x, y) = (a.tensor(name).unwrap(), b.tensor(name).unwrap());
        assert_eq!(x.shape(), y.shape(), "{name}");
        assert_eq!(
            x.data(),
            y.data(),
            "{name}: the ragged run differs from the padded one"
        );
    }
    // The padded layout writes zeros in padded rows; so does the unpacked ragged output, and
    // the real rows hold gradients.
    let dq = a.tensor("dQ").unwrap();
    let row = 64 * 2;
    let rows = |b: usize, h: usize, from: usize, to: usize| {
        let at = ((b * 8 + h) * 256) * row;
        &dq.data()[at + from * row..at + to * row]
    };
    assert!(
        rows(1, 0, 0, 256).iter().all(|&x| x == 0),
        "sequence 1 is empty"
    );
    assert!(
        rows(2, 3, 100, 256).iter().all(|&x| x == 0),
        "past seq_len_q"
    );
    assert!(rows(2, 3, 0, 100).iter().any(|&x| x != 0), "real rows");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn random_lengths_fit_max_total_seq_len() {
    // B = 2, S = 64, totals 100 tokens: random lengths of 32 to 64 would often sum past 100
    // (the engine refuses that: RaggedPastMaxTotal) were they not capped at 100 / B.
    let graph = common::repo().join("tests/fixtures/valid/bwd_ragged_thd_offsets.json");
    for seed in 1..=8 {
        let seed = seed.to_string();
        let (code, stdout, stderr) = rime(&[
            "run",
            graph.to_str().unwrap(),
            "--target",
            "cpu",
            "--seed",
            &seed,
        ]);
        assert_eq!(code, 0, "seed {seed}:\n{stdout}\n{stderr}");
    }
}
