//! Ragged (THD) graphs through the CPU engine's plans: the offsets come from the variant pack,
//! every output element outside the real tokens keeps its guard value, the f32 plan agrees
//! with the f64 reference plan, and offsets or lengths an adversary picks are refused at
//! execution, naming the tensor and the limit, before anything is written.

use std::collections::BTreeMap;

use rime_analyzer::{analyze, EngineKind, Target};
use rime_engines::cpu::{logical_elements, packed_offsets, CpuPlan, Precision, View4};
use rime_engines::{EngineError, HostBuffer, Plan, TensorKey, VariantPack, Workspace};
use rime_graph::{DataType, Graph, Port, Sequence, Tensor, TensorId};

/// What every output element holds before the plan runs.
const GUARD: f64 = -4096.0;

fn fixture(name: &str) -> Graph {
    let path = format!(
        "{}/../../tests/fixtures/valid/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    rime_graph::json::load_file(path).expect("fixture loads")
}

fn plan(graph: &Graph, precision: Precision) -> CpuPlan {
    let report = analyze(graph, &Target::by_name("cpu").expect("cpu target"));
    let node = report.nodes[0].node;
    let approved = report
        .approve_config(node, EngineKind::CpuReference, None)
        .expect("the CPU engine takes THD graphs");
    CpuPlan::new(&approved, precision).expect("plan")
}

/// Sequence lengths of one run, and the offsets tensors' values.
struct Lengths {
    q: Vec<usize>,
    kv: Vec<usize>,
}

impl Lengths {
    fn of(&self, sequence: Sequence) -> &[usize] {
        match sequence {
            Sequence::Q => &self.q,
            Sequence::Kv => &self.kv,
        }
    }
}

fn view(t: &Tensor) -> View4 {
    View4::new(&t.name, &t.dims, &t.strides).expect("view")
}

/// The sequence of a tensor's port, for the ragged ones.
fn sequence_of(graph: &Graph, id: TensorId) -> Option<Sequence> {
    let node = &graph.nodes()[0];
    let port = node
        .inputs
        .iter()
        .chain(&node.outputs)
        .find(|(_, &t)| t == id)
        .map(|(&p, _)| p)?;
    port.token_sequence()
}

/// The type of tensor `id`'s buffer: its own, or f64 for a float tensor when `wide` (the
/// reference plan).
fn buffer_type(graph: &Graph, id: TensorId, wide: bool) -> DataType {
    match graph.data_type(id).expect("type") {
        dt if wide && dt.is_float() => DataType::F64,
        dt => dt,
    }
}

/// The buffers of one run: packed offsets for `lengths`, random inputs, guard-filled outputs.
fn pack(graph: &Graph, plan: &dyn Plan, lengths: &Lengths, wide: bool) -> VariantPack {
    let mut pack = VariantPack::new();
    let mut seed = 1u64;
    for &id in &plan.tensors().inputs {
        let t = graph.get(id).expect("tensor");
        let values: Vec<f64> = if let Some(sequence) = seq_len_of(graph, id) {
            as_values(lengths.of(sequence))
        } else if let Some((user, sequence)) = ragged_user(graph, id) {
            as_values(&packed_offsets(&view(user), lengths.of(sequence)).expect("offsets"))
        } else {
            let len = usize::try_from(t.buffer_elements().expect("span")).expect("len");
            (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
                })
                .collect()
        };
        let dt = buffer_type(graph, id, wide);
        pack.insert(
            id,
            Box::new(HostBuffer::from_f64(dt, &values).expect("buffer")),
        );
    }
    for &id in &plan.tensors().outputs {
        let t = graph.get(id).expect("tensor");
        let len = usize::try_from(t.buffer_elements().expect("span")).expect("len");
        let dt = buffer_type(graph, id, wide);
        let guard = HostBuffer::from_f64(dt, &vec![GUARD; len]).expect("buffer");
        pack.insert(id, Box::new(guard));
    }
    pack
}

/// The sequence whose lengths tensor `id` is.
fn seq_len_of(graph: &Graph, id: TensorId) -> Option<Sequence> {
    let node = &graph.nodes()[0];
    if node.input(Port::SeqLenQ) == Some(id) {
        Some(Sequence::Q)
    } else if node.input(Port::SeqLenKv) == Some(id) {
        Some(Sequence::Kv)
    } else {
        None
    }
}

/// The first tensor whose ragged offsets tensor `id` is, with its sequence.
fn ragged_user(graph: &Graph, id: TensorId) -> Option<(&Tensor, Sequence)> {
    let (_, port, user) = graph.ragged_users(id).into_iter().next()?;
    Some((graph.get(user)?, port.token_sequence()?))
}

fn values(pack: &VariantPack, id: TensorId) -> Vec<f64> {
    let buffer = pack.get(&TensorKey::Id(id)).expect("buffer");
    let host = buffer.as_any().downcast_ref::<HostBuffer>().expect("host");
    host.to_f64()
}

/// The values of an integer buffer, as counts.
fn integers(pack: &VariantPack, id: TensorId) -> Vec<usize> {
    let buffer = pack.get(&TensorKey::Id(id)).expect("buffer");
    let count = |v: i64| usize::try_from(v).expect("a count");
    match buffer.as_any().downcast_ref::<HostBuffer>().expect("host") {
        HostBuffer::I32(v) => v.iter().map(|&x| count(i64::from(x))).collect(),
        HostBuffer::I64(v) => v.iter().map(|&x| count(x)).collect(),
        other => panic!("offsets in {other:?}"),
    }
}

/// Counts as f64 buffer values (exact: they are far below 2^53).
fn as_values(counts: &[usize]) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| f64::from(u32::try_from(c).expect("small")))
        .collect()
}

/// For every ragged output: (name, its real elements, whether all others kept the guard).
fn ragged_outputs(
    graph: &Graph,
    plan: &dyn Plan,
    pack: &VariantPack,
    lengths: &Lengths,
) -> BTreeMap<String, (Vec<f64>, bool)> {
    let mut out = BTreeMap::new();
    for &id in &plan.tensors().outputs {
        let t = graph.get(id).expect("tensor");
        let Some(offsets_id) = t.ragged_offset else {
            continue;
        };
        let sequence = sequence_of(graph, id).expect("a token port");
        let tokens = lengths.of(sequence);
        let offsets = integers(pack, offsets_id);
        let data = values(pack, id);
        let v = view(t);
        let mut real = vec![false; data.len()];
        let inside: Vec<f64> = logical_elements(&v, &offsets, tokens)
            .flatten()
            .map(|at| {
                real[at] = true;
                data[at]
            })
            .collect();
        let guarded = data.iter().zip(&real).all(|(&x, &r)| r || x == GUARD);
        out.insert(t.name.clone(), (inside, guarded));
    }
    out
}

fn run(plan: &dyn Plan, pack: &mut VariantPack) -> Result<(), EngineError> {
    plan.execute(pack, &mut Workspace::host(plan.workspace_size()))
}

#[test]
fn plans_write_only_real_tokens_and_agree_with_the_f64_reference() {
    for (name, lengths) in [
        (
            "bwd_thd_varlen_gqa_causal_bottom_right.json",
            Lengths {
                q: vec![0, 41],
                kv: vec![17, 80],
            },
        ),
        (
            "bwd_thd_varlen_bias_dbias_causal.json",
            Lengths {
                q: vec![40, 3],
                kv: vec![25, 0],
            },
        ),
        (
            "fwd_thd_varlen_stats.json",
            Lengths {
                q: vec![64, 9],
                kv: vec![1, 50],
            },
        ),
    ] {
        let graph = fixture(name);
        let f32_plan = plan(&graph, Precision::F32);
        let reference = plan(&graph, Precision::F64);
        let mut a = pack(&graph, &f32_plan, &lengths, false);
        run(&f32_plan, &mut a).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The reference reads the same bf16 values, widened.
        let mut b = VariantPack::new();
        for &id in &f32_plan.tensors().inputs {
            let dt = buffer_type(&graph, id, true);
            let widened = HostBuffer::from_f64(dt, &values(&a, id)).expect("buffer");
            b.insert(id, Box::new(widened));
        }
        for &id in &f32_plan.tensors().outputs {
            let len = values(&a, id).len();
            let guard = HostBuffer::from_f64(DataType::F64, &vec![GUARD; len]).expect("buffer");
            b.insert(id, Box::new(guard));
        }
        run(&reference, &mut b).unwrap_or_else(|e| panic!("{name}: reference: {e}"));
        let got = ragged_outputs(&graph, &f32_plan, &a, &lengths);
        let want = ragged_outputs(&graph, &reference, &b, &lengths);
        assert!(!got.is_empty(), "{name}: no ragged outputs");
        for (tensor, (inside, guarded)) in &got {
            assert!(guarded, "{name}: {tensor} was written outside its tokens");
            assert!(
                want[tensor].1,
                "{name}: reference {tensor} outside its tokens"
            );
            assert!(
                inside.iter().all(|&x| x != GUARD && x.is_finite()),
                "{name}: {tensor} has real tokens left unwritten"
            );
            for (x, r) in inside.iter().zip(&want[tensor].0) {
                assert!(
                    (x - r).abs() <= 2e-2 + 1e-2 * r.abs(),
                    "{name}: {tensor}: {x} vs the f64 reference {r}"
                );
            }
        }
    }
}

/// A backward THD fixture with its own offsets tensor for dQ (`dq_offsets`), to set an
/// output's offsets apart from its input twin's.
fn with_dq_offsets() -> Graph {
    let mut graph = fixture("bwd_thd_varlen_bias_dbias_causal.json");
    let offsets = graph
        .get(graph.find("q_offsets").expect("q offsets"))
        .expect("tensor")
        .clone();
    let dq_offsets = graph.tensor(Tensor {
        name: "dq_offsets".into(),
        ..offsets
    });
    let dq = graph.find("dQ").expect("dQ");
    graph.get_mut(dq).expect("dQ").ragged_offset = Some(dq_offsets);
    graph
}

/// Runs `graph` with lengths (q, kv) after `edit` changed the pack; asserts that a refused
/// run wrote no output, and returns its result.
fn refused(
    graph: &Graph,
    lengths: Lengths,
    edit: impl FnOnce(&Graph, &mut VariantPack),
) -> Result<(), EngineError> {
    let plan = plan(graph, Precision::F32);
    let mut pack = pack(graph, &plan, &lengths, false);
    edit(graph, &mut pack);
    let result = run(&plan, &mut pack);
    if result.is_err() {
        for &id in &plan.tensors().outputs {
            assert!(
                values(&pack, id).iter().all(|&x| x == GUARD),
                "a refused run wrote {}",
                graph.get(id).expect("tensor").name
            );
        }
    }
    result
}

fn set_i64(graph: &Graph, pack: &mut VariantPack, name: &str, values: &[i64]) {
    let id = graph.find(name).expect("tensor");
    let dt = graph.data_type(id).expect("type");
    let buffer = match dt {
        DataType::I64 => HostBuffer::I64(values.to_vec()),
        _ => HostBuffer::I32(
            values
                .iter()
                .map(|&v| i32::try_from(v).expect("fits"))
                .collect(),
        ),
    };
    pack.insert(id, Box::new(buffer));
}

#[test]
fn offsets_and_lengths_an_adversary_picks_are_refused_before_anything_is_written() {
    let graph = with_dq_offsets();
    // B = 2, H = 2, S = 40, D = 32: a token of Q, K, V, dQ, dK, dV is 64 elements.
    let lengths = || Lengths {
        q: vec![10, 20],
        kv: vec![30, 40],
    };
    // The good run first: every refusal below differs from it in one value.
    assert_eq!(refused(&graph, lengths(), |_, _| {}), Ok(()));
    let token = 2 * 32;
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "q_offsets", &[0, -token, 30 * token])
    })
    .unwrap_err();
    assert!(
        matches!(&err, EngineError::RaggedOffsetNegative { offsets, index: 1, value, .. }
            if offsets == "q_offsets" && *value == -token),
        "{err}"
    );
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "q_offsets", &[20 * token, 10 * token, 30 * token])
    })
    .unwrap_err();
    assert!(
        matches!(&err, EngineError::RaggedOffsetsNotMonotone { tensor, batch: 0, .. } if tensor == "Q"),
        "{err}"
    );
    // Past the end of Q's buffer (2 x 40 tokens).
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "q_offsets", &[0, 10 * token, 81 * token])
    })
    .unwrap_err();
    assert!(
        matches!(&err, EngineError::RaggedPastBufferEnd { tensor, len, .. }
            if tensor == "Q" && *len == usize::try_from(80 * token).unwrap()),
        "{err}"
    );
    // Overlapping sequences on an output: dQ's sequence 0 (10 tokens) would run 4 tokens
    // into sequence 1.
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "dq_offsets", &[0, 6 * token, 26 * token])
    })
    .unwrap_err();
    assert_eq!(
        err,
        EngineError::RaggedSequenceOverflow {
            tensor: "dQ".into(),
            offsets: "dq_offsets".into(),
            batch: 0,
            tokens: 10,
            needed: usize::try_from(10 * token).unwrap(),
            room: usize::try_from(6 * token).unwrap(),
        }
    );
    // A length longer than the ragged span its offsets give (K's sequence 1 has room for 40
    // tokens, the lengths say 40, the offsets leave 35).
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "k_offsets", &[0, 30 * token, 65 * token])
    })
    .unwrap_err();
    assert!(
        matches!(&err, EngineError::RaggedSequenceOverflow { tensor, batch: 1, tokens: 40, .. } if tensor == "K"),
        "{err}"
    );
    // A length longer than S.
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "seq_len_q", &[41, 20])
    })
    .unwrap_err();
    assert!(
        matches!(
            &err,
            EngineError::SeqLenOutOfRange {
                value: 41,
                max: 40,
                ..
            }
        ),
        "{err}"
    );
    // Offsets of a float type are refused by the variant pack.
    let err = refused(&graph, lengths(), |g, p| {
        let id = g.find("v_offsets").expect("v offsets");
        p.insert(id, Box::new(HostBuffer::F32(vec![0.0; 3])));
    })
    .unwrap_err();
    assert!(matches!(err, EngineError::DataTypeMismatch { .. }), "{err}");
}

#[test]
fn offsets_past_max_total_seq_len_are_refused() {
    // max_total_seq_len_q = 96 tokens of 8 x 64 elements (Stats: 8).
    let graph = fixture("bwd_thd_varlen_gqa_causal_bottom_right.json");
    let lengths = || Lengths {
        q: vec![48, 48],
        kv: vec![80, 80],
    };
    assert_eq!(refused(&graph, lengths(), |_, _| {}), Ok(()));
    let token = 8 * 64;
    let err = refused(&graph, lengths(), |g, p| {
        set_i64(g, p, "q_offsets", &[0, 48 * token, 97 * token])
    })
    .unwrap_err();
    assert_eq!(
        err,
        EngineError::RaggedPastMaxTotal {
            tensor: "Q".into(),
            offsets: "q_offsets".into(),
            option: "max_total_seq_len_q",
            total: 96,
            stride: 512,
            limit: 96 * 512,
            last: 97 * 512,
        }
    );
}
