//! Property tests (proptest) over random SDPA graphs (`support/graph_spec.rs`):
//! - well-formed graphs validate and round-trip through JSON unchanged (load(save(g)) == g,
//!   and save is a fixed point);
//! - `analyze` never panics, on well-formed graphs and on graphs whose tensors were then
//!   mutated to arbitrary dims, strides, types and flags, and every rejection carries a code
//!   documented in `docs/reasons.md` (`support/exercise.rs` holds the invariants it checks);
//! - whatever the analyzer approves for `cpu_reference`, the CPU engine executes (with finite
//!   gradients when O and Stats come from the graph's own forward node).
//!
//! Case counts are sized for CI (debug build, 2 cores); `PROPTEST_CASES=N` overrides them.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rime_analyzer::{analyze, EngineKind, Target};
use rime_engines::{CpuEngine, Engine, HostBuffer, TensorKey, VariantPack, Workspace};
use rime_graph::{json, DataType, Graph, Port, TensorId};

#[path = "support/exercise.rs"]
mod exercise;
#[path = "support/graph_spec.rs"]
mod graph_spec;

use graph_spec::{BiasSpec, GraphSpec, MaskSpec, ScaleSpec};

/// Cases per property unless `PROPTEST_CASES` says otherwise.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

fn mask() -> impl Strategy<Value = MaskSpec> {
    prop_oneof![
        Just(MaskSpec::None),
        any::<bool>().prop_map(|bottom_right| MaskSpec::Causal { bottom_right }),
        (proptest::option::of(1i64..5), 0i64..4, any::<bool>()).prop_map(
            |(left, right, bottom_right)| MaskSpec::Band {
                left,
                right,
                bottom_right
            }
        ),
    ]
}

fn scale() -> impl Strategy<Value = ScaleSpec> {
    prop_oneof![
        Just(ScaleSpec::Default),
        (0.01f32..2.0).prop_map(ScaleSpec::Value),
        (0.01f32..2.0).prop_map(ScaleSpec::Tensor),
    ]
}

fn bias() -> impl Strategy<Value = Option<BiasSpec>> {
    proptest::option::of((any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(per_batch, per_head, dbias)| BiasSpec {
            per_batch,
            per_head,
            dbias,
        },
    ))
}

/// Small, well-formed graphs: every option of the graph model, sizes a debug-build CPU
/// engine runs in milliseconds.
fn spec() -> impl Strategy<Value = GraphSpec> {
    let sizes = (
        prop_oneof![Just(DataType::F16), Just(DataType::Bf16)],
        1i64..3,
        1i64..3,
        1i64..3,
        1i64..10,
        1i64..10,
        prop_oneof![Just(8i64), Just(16)],
        prop_oneof![Just(8i64), Just(16)],
        any::<bool>(),
    );
    let options = (
        mask(),
        bias(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(any::<bool>()),
        scale(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    (sizes, options).prop_map(
        |(
            (io, batch, heads_kv, group, seq_q, seq_kv, d_qk, d_v, bshd),
            (mask, bias, padding, alibi, sink, scale, deterministic, forward_twin, uids),
        )| GraphSpec {
            io,
            batch,
            heads_kv,
            group,
            seq_q,
            seq_kv,
            d_qk,
            d_v,
            bshd,
            mask,
            bias,
            padding,
            alibi,
            sink,
            scale,
            deterministic,
            forward_twin,
            uids,
        },
    )
}

/// One change to one tensor, through the graph API (the fuzz target edits JSON instead).
#[derive(Debug, Clone)]
enum Mutation {
    Dim(usize, i64),
    Stride(usize, i64),
    Rank(usize),
    DataType(DataType),
    Virtual(bool),
    Uid(i64),
}

fn mutation() -> impl Strategy<Value = (usize, Mutation)> {
    let value = prop_oneof![
        -2i64..300,
        Just(i64::MAX),
        Just(i64::MIN),
        Just(1i64 << 32),
        Just(1i64 << 62),
        any::<i64>(),
    ];
    let m = prop_oneof![
        (0usize..4, value.clone()).prop_map(|(i, v)| Mutation::Dim(i, v)),
        (0usize..4, value).prop_map(|(i, v)| Mutation::Stride(i, v)),
        (0usize..6).prop_map(Mutation::Rank),
        proptest::sample::select(DataType::ALL.to_vec()).prop_map(Mutation::DataType),
        any::<bool>().prop_map(Mutation::Virtual),
        (0i64..4).prop_map(Mutation::Uid),
    ];
    (0usize..16, m)
}

fn mutate(graph: &mut Graph, (which, m): &(usize, Mutation)) {
    let ids: Vec<TensorId> = graph.tensor_ids().collect();
    let Some(t) = graph.get_mut(ids[which % ids.len()]) else {
        return;
    };
    match *m {
        Mutation::Dim(i, v) => {
            if let Some(d) = t.dims.get_mut(i) {
                *d = v;
            }
        }
        Mutation::Stride(i, v) => {
            if let Some(s) = t.strides.get_mut(i) {
                *s = v;
            }
        }
        Mutation::Rank(r) => {
            t.dims.resize(r, 1);
            t.strides.resize(r, 1);
        }
        Mutation::DataType(d) => t.data_type = Some(d),
        Mutation::Virtual(v) => t.is_virtual = v,
        Mutation::Uid(u) => t.uid = Some(u),
    }
}

fn reasons_doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reasons.md");
    std::fs::read_to_string(path).expect("docs/reasons.md")
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn well_formed_graphs_round_trip_through_json(spec in spec()) {
        let graph = spec.build();
        prop_assert!(graph.validate().is_ok(), "{:?}", graph.validate());
        let text = json::to_string(&graph);
        let loaded = json::from_str(&text, "spec.json").expect("canonical text loads");
        prop_assert_eq!(&loaded, &graph);
        prop_assert_eq!(json::to_string(&loaded), text);
    }
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn analyze_never_panics_and_every_rejection_is_documented(
        spec in spec(),
        mutations in proptest::collection::vec(mutation(), 0..4),
    ) {
        let mut graph = spec.build();
        for m in &mutations {
            mutate(&mut graph, m);
        }
        let doc = reasons_doc();
        for report in exercise::exercise(&graph) {
            for r in report.all_rejections() {
                let heading = format!("### {}", r.code);
                prop_assert!(doc.contains(&heading), "{} missing from docs/reasons.md", r.code);
            }
        }
    }
}

/// xorshift numbers for buffer contents (the proptest seed picks the stream).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// An input buffer: sequence lengths in 0..=S (zero included), everything else in [-1, 1).
fn input_buffer(graph: &Graph, id: TensorId, numbers: &mut Numbers) -> HostBuffer {
    let t = graph.get(id).expect("tensor");
    let span = usize::try_from(t.span_elements().expect("span")).expect("span");
    let dt = graph.data_type(id).expect("type");
    let seq = graph.nodes().iter().find_map(|n| {
        let shape = rime_graph::SdpaShape::of(graph, n)?;
        if n.input(Port::SeqLenQ) == Some(id) {
            Some(shape.sq)
        } else if n.input(Port::SeqLenKv) == Some(id) {
            Some(shape.skv)
        } else {
            None
        }
    });
    let values: Vec<f64> = (0..span)
        .map(|_| match seq {
            Some(s) => (numbers.next() * (s + 1) as f64).floor(),
            None => 2.0 * numbers.next() - 1.0,
        })
        .collect();
    HostBuffer::from_f64(dt, &values).expect("buffer")
}

/// Executes every node of a graph the analyzer approved for the CPU reference, in dependency
/// order, forward outputs feeding the backward; returns the gradients (backward outputs).
fn execute_on_cpu(graph: &Graph, seed: u64) -> Result<Vec<(String, Vec<f64>)>, String> {
    let report = analyze(graph, &Target::by_name("cpu").expect("cpu"));
    let mut numbers = Numbers(seed | 1);
    let mut data: BTreeMap<TensorId, HostBuffer> = BTreeMap::new();
    let mut gradients = Vec::new();
    for node in graph.topological_order().map_err(|e| e.to_string())? {
        let approved = report
            .approve_config(node, EngineKind::CpuReference, None)
            .map_err(|e| e.to_string())?;
        let plan = CpuEngine.build_plan(&approved).map_err(|e| e.to_string())?;
        let mut pack = VariantPack::new();
        for &id in &plan.tensors().inputs {
            let buffer = match data.get(&id) {
                Some(b) => b.clone(),
                None => input_buffer(graph, id, &mut numbers),
            };
            data.insert(id, buffer.clone());
            pack.insert(id, Box::new(buffer));
        }
        for &id in &plan.tensors().outputs {
            let t = graph.get(id).expect("output");
            let span = usize::try_from(t.span_elements().expect("span")).expect("span");
            let dt = graph.data_type(id).expect("type");
            pack.insert(id, Box::new(HostBuffer::zeros(dt, span).expect("zeros")));
        }
        plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))
            .map_err(|e| format!("node {}: {e}", approved.node().name))?;
        for &id in &plan.tensors().outputs {
            let out = pack
                .get(&TensorKey::Id(id))
                .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
                .expect("host output")
                .clone();
            if approved.node().op == rime_graph::OpKind::SdpaBackward {
                let name = graph.get(id).map(|t| t.name.clone()).unwrap_or_default();
                gradients.push((name, out.to_f64()));
            }
            data.insert(id, out);
        }
    }
    Ok(gradients)
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn what_the_analyzer_approves_for_the_cpu_reference_executes(
        spec in spec(),
        seed in any::<u64>(),
    ) {
        let graph = spec.build();
        let report = analyze(&graph, &Target::by_name("cpu").expect("cpu"));
        prop_assume!(report.supports(EngineKind::CpuReference));
        let gradients = execute_on_cpu(&graph, seed);
        prop_assert!(gradients.is_ok(), "{:?}", gradients);
        // With O and Stats from the forward, P <= 1 and every gradient is finite. Random Stats
        // (no forward twin) may make P = exp(S - Stats) overflow f16 legitimately.
        if spec.forward_twin {
            for (name, values) in gradients.unwrap_or_default() {
                prop_assert!(values.iter().all(|x| x.is_finite()), "{name} is not finite");
            }
        }
    }
}
