//! Property tests (proptest) over random SDPA graphs (`support/graph_spec.rs`):
//! - well-formed graphs validate and round-trip through JSON unchanged (load(save(g)) == g,
//!   and save is a fixed point);
//! - `analyze` never panics, on well-formed graphs and on graphs whose tensors were then
//!   mutated to arbitrary dims, strides, types and flags, and every rejection carries a code
//!   documented in `docs/reasons.md` (`support/exercise.rs` holds the invariants it checks);
//! - whatever the analyzer approves for `cpu_reference`, the CPU engine executes.
//!
//! Case counts are sized for CI (debug build, 2 cores); `PROPTEST_CASES=N` overrides them.

use proptest::prelude::*;
use rime_graph::{json, DataType, Graph, TensorId};

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
