//! The engine core on graphs: plans from approved configurations only, variant-pack checks
//! that refuse before writing, and the CPU engine's results on a strided bf16 backward graph
//! against the naive reference.

mod support;

use rime_analyzer::{analyze, heuristics, EngineKind, HeuristicsOptions, Target};
use rime_engines::{
    CpuEngine, Engine, EngineError, HostBuffer, Plan, TensorKey, VariantPack, Workspace,
};
use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, Tensor, TensorId};
use support::{naive, worst, Case, Data, Layout};

const B: usize = 2;
const H: usize = 2;
const S: usize = 9;
const SKV: usize = 11;
const D: usize = 8;

struct Built {
    graph: Graph,
    ids: Vec<(&'static str, TensorId)>,
}

/// A bf16 backward graph: BSHD Q/K/V/dQ/dK/dV, per-head broadcast bias with dBias, padding,
/// top-left sliding window (bottom-right with bias is rejected by the analyzer), scale by value; uids on every tensor.
fn backward_graph() -> Built {
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let mut ids = Vec::new();
    let mut add = |g: &mut Graph, name: &'static str, t: Tensor| {
        let id = g.tensor(t.with_uid(ids.len() as i64 + 1));
        ids.push((name, id));
        id
    };
    let bshd = |name: &'static str, s: usize, d: usize| {
        Tensor::bshd(name, [B as i64, H as i64, s as i64, d as i64])
    };
    let q = add(&mut g, "Q", bshd("Q", S, D));
    let k = add(&mut g, "K", bshd("K", SKV, D));
    let v = add(&mut g, "V", bshd("V", SKV, D));
    let o = add(&mut g, "O", bshd("O", S, D));
    let d_o = add(&mut g, "dO", bshd("dO", S, D));
    let stats = add(
        &mut g,
        "Stats",
        Tensor::packed("Stats", &[B as i64, H as i64, S as i64, 1]).with_data_type(DataType::F32),
    );
    let bias = add(
        &mut g,
        "Bias",
        Tensor::packed("Bias", &[1, H as i64, S as i64, SKV as i64]),
    );
    let lq = add(
        &mut g,
        "SEQ_LEN_Q",
        Tensor::packed("SEQ_LEN_Q", &[B as i64, 1, 1, 1]).with_data_type(DataType::I32),
    );
    let lkv = add(
        &mut g,
        "SEQ_LEN_KV",
        Tensor::packed("SEQ_LEN_KV", &[B as i64, 1, 1, 1]).with_data_type(DataType::I32),
    );
    let attrs = SdpaBackwardAttrs::new()
        .name("bwd")
        .attn_scale(0.3)
        .bias(bias)
        .dbias()
        .padding(lq, lkv)
        .right_bound(1)
        .left_bound(4)
        .diagonal_alignment(rime_graph::DiagonalAlignment::TopLeft);
    let grads = g.sdpa_backward(q, k, v, o, d_o, stats, attrs).unwrap();
    for (name, id) in [
        ("dQ", grads.dq),
        ("dK", grads.dk),
        ("dV", grads.dv),
        ("dBias", grads.dbias.unwrap()),
    ] {
        let uid = ids.len() as i64 + 1;
        let t = g.get_mut(id).unwrap();
        t.uid = Some(uid);
        if name != "dBias" {
            // dQ/dK/dV in BSHD like their twins.
            let dims: [i64; 4] = t.dims.clone().try_into().unwrap();
            t.strides = Tensor::bshd("", dims).strides;
        }
        ids.push((name, id));
    }
    g.validate().unwrap();
    Built { graph: g, ids }
}

fn cpu_plan(graph: &Graph) -> Box<dyn Plan> {
    let report = analyze(graph, &Target::by_name("cpu").unwrap());
    let ranked = heuristics(&report, &HeuristicsOptions::default());
    let cpu = ranked
        .iter()
        .find(|c| c.config.engine == EngineKind::CpuReference)
        .expect("CPU supports it");
    CpuEngine.build_plan(&report.approve(cpu).unwrap()).unwrap()
}

/// The matching case of the test support, with the graph's options.
fn case() -> Case {
    let mut c = Case::new("graph", B, H, S, SKV, D)
        .layout(Layout::BshdPadded(0))
        .bias(false, true)
        .padding(&[7, 9], &[11, 6])
        .band(Some(4), Some(1), false);
    c.problem.scale = f64::from(0.3f32);
    c
}

fn bf16_rounded(h: &support::Host) -> support::Host {
    let mut h = h.clone();
    h.data
        .iter_mut()
        .for_each(|x| *x = half::bf16::from_f64(*x).to_f64());
    h
}

/// Inputs of the case, rounded to bf16, plus O and Stats from the naive forward.
fn inputs() -> (Data, support::Naive) {
    let case = case();
    let mut data = Data::random(&case, 5);
    for h in [&mut data.q, &mut data.k, &mut data.v, &mut data.w] {
        *h = bf16_rounded(h);
    }
    data.bias = data.bias.as_ref().map(bf16_rounded);
    let want = naive(&case, &data);
    (data, want)
}

fn pack_for(built: &Built, data: &Data, want: &support::Naive) -> VariantPack {
    let buf = |dt, v: &[f64]| Box::new(HostBuffer::from_f64(dt, v).unwrap());
    let mut pack = VariantPack::new();
    let uid = |name: &str| {
        TensorKey::Uid(built.ids.iter().position(|(n, _)| *n == name).unwrap() as i64 + 1)
    };
    // O in BSHD: place the naive (packed BHSD) O at BSHD offsets.
    let mut o = vec![0.0; B * S * H * D];
    for b in 0..B {
        for h in 0..H {
            for s in 0..S {
                for d in 0..D {
                    o[((b * S + s) * H + h) * D + d] = want.o[((b * H + h) * S + s) * D + d];
                }
            }
        }
    }
    pack.insert(uid("Q"), buf(DataType::Bf16, &data.q.data))
        .insert(uid("K"), buf(DataType::Bf16, &data.k.data))
        .insert(uid("V"), buf(DataType::Bf16, &data.v.data))
        .insert(uid("O"), buf(DataType::Bf16, &o))
        .insert(uid("dO"), buf(DataType::Bf16, &data.w.data))
        .insert(uid("Stats"), buf(DataType::F32, &want.stats))
        .insert(
            uid("Bias"),
            buf(DataType::Bf16, &data.bias.as_ref().unwrap().data),
        )
        .insert(uid("SEQ_LEN_Q"), buf(DataType::I32, &[7.0, 9.0]))
        .insert(uid("SEQ_LEN_KV"), buf(DataType::I32, &[11.0, 6.0]))
        .insert(
            uid("dQ"),
            buf(DataType::Bf16, &vec![f64::NAN; B * S * H * D]),
        )
        .insert(
            uid("dK"),
            buf(DataType::Bf16, &vec![f64::NAN; B * SKV * H * D]),
        )
        .insert(
            uid("dV"),
            buf(DataType::Bf16, &vec![f64::NAN; B * SKV * H * D]),
        )
        .insert(
            uid("dBias"),
            buf(DataType::Bf16, &vec![f64::NAN; H * S * SKV]),
        );
    pack
}

fn output(pack: &VariantPack, built: &Built, name: &str) -> Vec<f64> {
    let id = built.ids.iter().find(|(n, _)| *n == name).unwrap().1;
    let key = TensorKey::Uid(built.graph.get(id).unwrap().uid.unwrap());
    pack.get(&key)
        .unwrap()
        .as_any()
        .downcast_ref::<HostBuffer>()
        .unwrap()
        .to_f64()
}

#[test]
fn cpu_backward_on_a_graph_matches_the_naive_reference_in_bf16() {
    let built = backward_graph();
    let plan = cpu_plan(&built.graph);
    assert_eq!(plan.workspace_size(), 0);
    let (data, want) = inputs();
    let mut pack = pack_for(&built, &data, &want);
    plan.execute(&mut pack, &mut Workspace::host(0)).unwrap();
    // Outputs are bf16: compare at bf16 resolution. dQ/dK/dV are BSHD like the inputs.
    let logical = |name: &str, h: &support::Host| {
        let mut h = h.clone();
        h.data = output(&pack, &built, name);
        h.logical()
    };
    for (name, like, expected) in [
        ("dQ", &data.q, &want.dq),
        ("dK", &data.k, &want.dk),
        ("dV", &data.v, &want.dv),
    ] {
        let w = worst(&logical(name, like), expected, 1e-2, 1e-2);
        assert!(w <= 1.0, "{name} score {w}");
    }
    let w = worst(&output(&pack, &built, "dBias"), &want.dbias, 1e-2, 1e-2);
    assert!(w <= 1.0, "dBias score {w}");
}

fn refused(mutate: impl FnOnce(&mut VariantPack), expect: impl Fn(&EngineError) -> bool) {
    let built = backward_graph();
    let plan = cpu_plan(&built.graph);
    let (data, want) = inputs();
    let mut pack = pack_for(&built, &data, &want);
    mutate(&mut pack);
    let err = plan
        .execute(&mut pack, &mut Workspace::host(0))
        .unwrap_err();
    assert!(expect(&err), "unexpected error: {err}");
    // Nothing was written: dQ is still all NaN.
    assert!(output(&pack, &built, "dQ").iter().all(|x| x.is_nan()));
}

#[test]
fn bad_variant_packs_are_refused_before_anything_is_written() {
    refused(
        |p| drop(p.take(&TensorKey::Uid(2))),
        |e| matches!(e, EngineError::MissingBuffer { tensor } if tensor == "K"),
    );
    refused(
        |p| {
            p.insert(TensorKey::Uid(99), Box::new(HostBuffer::F32(vec![0.0])));
        },
        |e| matches!(e, EngineError::ExtraBuffer { key } if key == "uid 99"),
    );
    refused(
        |p| {
            p.insert("K", Box::new(HostBuffer::F32(vec![0.0; 4])));
        },
        |e| matches!(e, EngineError::DuplicateBuffer { tensor } if tensor == "K"),
    );
    refused(
        |p| {
            p.insert(
                TensorKey::Uid(1),
                Box::new(HostBuffer::F32(vec![0.0; B * S * H * D])),
            );
        },
        |e| matches!(e, EngineError::DataTypeMismatch { tensor, expected: DataType::Bf16, actual: DataType::F32 } if tensor == "Q"),
    );
    refused(
        |p| {
            p.insert(
                TensorKey::Uid(3),
                Box::new(HostBuffer::zeros(DataType::Bf16, B * SKV * H * D - 1).unwrap()),
            );
        },
        |e| matches!(e, EngineError::BufferTooSmall { tensor, needed, len } if tensor == "V" && *needed == B * SKV * H * D && *len == needed - 1),
    );
    refused(
        |p| {
            p.insert(TensorKey::Uid(8), Box::new(HostBuffer::I32(vec![10, 9])));
        },
        |e| matches!(e, EngineError::SeqLenOutOfRange { tensor, batch: 0, value: 10, max: 9 } if tensor == "SEQ_LEN_Q"),
    );
}

#[test]
fn only_the_named_engine_builds_an_approved_plan() {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/backward_gqa_causal.json"
    );
    let graph = rime_graph::json::load_file(example).unwrap();
    let report = analyze(&graph, &Target::by_name("rtx-5090").unwrap());
    let ranked = heuristics(&report, &HeuristicsOptions::default());
    let gpu = ranked
        .iter()
        .find(|c| c.config.engine == EngineKind::Sm120)
        .expect("sm120 supports the example on an RTX 5090");
    let err = CpuEngine
        .build_plan(&report.approve(gpu).unwrap())
        .unwrap_err();
    assert_eq!(
        err,
        EngineError::WrongEngine {
            engine: "cpu_reference",
            wanted: "sm120"
        }
    );
    let cpu = ranked
        .iter()
        .find(|c| c.config.engine == EngineKind::CpuReference)
        .expect("the CPU engine is always a candidate for this graph");
    let approved = report.approve(cpu).unwrap();
    let plan = CpuEngine.build_plan(&approved).unwrap();
    assert_eq!(
        plan.workspace_size() as u64,
        approved.workspace().total_bytes()
    );
    assert_eq!(plan.tensors().inputs.len(), 6);
    assert_eq!(plan.tensors().outputs.len(), 3);
}
