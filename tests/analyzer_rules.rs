//! Behaviour of the analyzer that the issue names, asserted directly (the snapshots show it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rime::analyzer::{
    analyze, heuristics, EngineKind, HeuristicsMode, HeuristicsOptions, ReasonCode, Route,
    Selector, SupportReport, Target, Verdict,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn report(name: &str, target: &str) -> SupportReport {
    let graph = rime::graph::json::load_file(fixture(name)).expect("fixture loads");
    analyze(&graph, &Target::by_name(target).expect("target"))
}

fn verdict(r: &SupportReport, route: Route) -> Verdict {
    r.nodes[0]
        .config(EngineKind::Sm120, Some(route))
        .expect("config")
        .verdict
}

fn codes(r: &SupportReport, route: Route) -> Vec<ReasonCode> {
    let c = r.nodes[0]
        .config(EngineKind::Sm120, Some(route))
        .expect("config");
    c.rejections.iter().map(|x| x.code).collect()
}

#[test]
fn deterministic_broadcast_dbias_is_rejected_by_the_atomic_dbias_routes_only() {
    for name in [
        "unsupported/bia003_deterministic_batch_broadcast_dbias.json",
        "unsupported/bia003_deterministic_head_broadcast_dbias.json",
    ] {
        let r = report(name, "rtx-pro-6000");
        for route in [Route::Atomic, Route::Relay] {
            assert_eq!(verdict(&r, route), Verdict::Rejected, "{name} {route}");
            assert!(codes(&r, route).contains(&ReasonCode::DeterministicBroadcastDbias));
        }
        // two_kernel sums its dS workspace in a fixed order, ordered_dbias its partials.
        for route in [Route::TwoKernel, Route::OrderedDbias] {
            assert_eq!(verdict(&r, route), Verdict::Supported, "{name} {route}");
        }
        // The CPU reference is deterministic by construction and takes it.
        assert!(r.supports(EngineKind::CpuReference));
    }
}

#[test]
fn deterministic_graphs_never_get_the_atomic_route() {
    let r = report(
        "unsupported/rte001_deterministic_never_atomic.json",
        "rtx-5090",
    );
    assert_eq!(
        codes(&r, Route::Atomic),
        vec![ReasonCode::AtomicNotDeterministic]
    );
    assert_eq!(verdict(&r, Route::Relay), Verdict::Supported);
    assert_eq!(verdict(&r, Route::TwoKernel), Verdict::Supported);
    for mode in HeuristicsMode::ALL {
        let opts = HeuristicsOptions {
            mode,
            ..Default::default()
        };
        assert!(heuristics(&r, &opts)
            .iter()
            .all(|c| c.config.route != Some(Route::Atomic)));
    }
}

#[test]
fn two_kernel_workspace_over_the_free_fraction_falls_back_to_relay() {
    let name = "unsupported/rte006_two_kernel_ds_over_free_fraction_b8_h32_s4096.json";
    let small = report(name, "rtx-5090");
    assert_eq!(
        codes(&small, Route::TwoKernel),
        vec![ReasonCode::TwoKernelWorkspace]
    );
    assert_eq!(verdict(&small, Route::Relay), Verdict::Supported);
    let ranked = heuristics(&small, &HeuristicsOptions::default());
    assert_eq!(ranked[0].config.route, Some(Route::Relay));
    // The 96 GB part holds it.
    let big = report(name, "rtx-pro-6000");
    assert_eq!(verdict(&big, Route::TwoKernel), Verdict::Supported);
}

#[test]
fn padded_head_dims_run_on_two_kernel() {
    // RTE002 (retired) refused two_kernel here; its dQ GEMM handles padded columns as the main
    // kernel does, so this deterministic (96, 96) graph in the d128 envelope runs on both
    // deterministic routes.
    let name = "valid/bwd_two_kernel_head_dim_96_padded.json";
    let r = report(name, "rtx-pro-6000");
    for route in [Route::Relay, Route::TwoKernel] {
        assert_eq!(verdict(&r, route), Verdict::Supported, "{route}");
    }
}

#[test]
fn rejections_carry_limits_where_a_limit_is_involved() {
    let r = report(
        "unsupported/smx002_head_dim_264_over_envelope.json",
        "rtx-5090",
    );
    let rej = &r.nodes[0]
        .config(EngineKind::Sm120, Some(Route::Relay))
        .unwrap()
        .rejections;
    let env = rej
        .iter()
        .find(|x| x.code == ReasonCode::Sm120HeadDimEnvelope)
        .unwrap();
    let limit = env.limit.as_ref().expect("limit");
    assert_eq!(limit.requested, "(264, 264)");
    assert_eq!(
        limit.allowed,
        "(32, 32), (64, 64), (128, 128), (192, 128), (192, 192), (256, 256)"
    );
    assert!(!env.hint.is_empty());
}

/// Codes that no fixture can reach, each with the reason and where it is tested instead.
const NOT_REACHABLE_FROM_FILES: &[(ReasonCode, &str)] = &[
    (
        ReasonCode::DanglingReference,
        "the loader resolves names; API-only (crates/graph tests)",
    ),
    (
        ReasonCode::ScaleNotFinite,
        "JSON has no NaN/inf and the loader range-checks f32",
    ),
    (
        ReasonCode::TargetArchTooOld,
        "no built-in profile is below sm_80; Target::from_device",
    ),
    (
        ReasonCode::Sm120SharedMemory,
        "every built-in GPU allows >= 101,376 B per block",
    ),
    (
        ReasonCode::TwoKernelTileMismatch,
        "kernel-table rule: snapshot two_kernel_pair_rules",
    ),
    (
        ReasonCode::TwoKernelSharedMemory,
        "kernel-table rule: snapshot two_kernel_pair_rules",
    ),
    (
        ReasonCode::CpuRagged,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
    (
        ReasonCode::Sm120DeterministicDsink,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
    (
        ReasonCode::Sm120Ragged,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
    (
        ReasonCode::Sm120Sink,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
    (
        ReasonCode::TwoKernelPaddedHeadDim,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
    (
        ReasonCode::TwoKernelLayout,
        "retired: no rule reports it (ReasonCode::RETIRED)",
    ),
];

#[test]
fn every_reason_code_is_produced_by_a_fixture() {
    let mut seen = BTreeSet::new();
    let dir = fixture("unsupported");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for path in files {
        let graph = rime::graph::json::load_file(&path)
            .unwrap_or_else(|e| panic!("unsupported fixtures must load: {e}"));
        let mut rejected_somewhere = false;
        for target in ["rtx-5090", "rtx-pro-6000", "h200", "cpu"] {
            let r = analyze(&graph, &Target::by_name(target).expect("target"));
            rejected_somewhere |= r.all_rejections().next().is_some();
            seen.extend(r.all_rejections().map(|x| x.code));
        }
        assert!(rejected_somewhere, "{} is rejected nowhere", path.display());
    }
    let exempt: BTreeSet<_> = NOT_REACHABLE_FROM_FILES.iter().map(|(c, _)| *c).collect();
    for &code in ReasonCode::RETIRED {
        assert!(
            exempt.contains(&code),
            "{code} is retired: list it as unreachable"
        );
    }
    for &code in ReasonCode::ALL {
        assert!(
            seen.contains(&code) ^ exempt.contains(&code),
            "{code}: covered by a fixture = {}, exempt = {}",
            seen.contains(&code),
            exempt.contains(&code)
        );
    }
}

#[test]
fn approved_plans_come_only_from_supported_configurations() {
    let r = report(
        "unsupported/rte001_deterministic_never_atomic.json",
        "rtx-pro-6000",
    );
    let node = r.nodes[0].node;
    assert!(r
        .approve_config(node, EngineKind::Sm120, Some(Route::Atomic))
        .is_err());
    let plan = r
        .approve_config(node, EngineKind::Sm120, Some(Route::Relay))
        .expect("relay");
    assert_eq!(plan.config().route, Some(Route::Relay));
    assert_eq!(plan.problem().shape.dqk, 64);
    assert_eq!(plan.node().name, "bwd");
    let dq = plan.tensor(rime::graph::Port::DQ).expect("dQ bound");
    assert_eq!(dq.dims, vec![2, 4, 128, 64]);
    assert_eq!(
        plan.workspace(),
        &r.nodes[0]
            .config(EngineKind::Sm120, Some(Route::Relay))
            .unwrap()
            .workspace
            .clone()
            .unwrap()
    );
    let cpu = r
        .approve_config(node, EngineKind::CpuReference, None)
        .expect("cpu");
    assert_eq!(cpu.workspace().total_bytes(), 0);
}

#[test]
fn deterministic_per_batch_dbias_is_accepted() {
    let r = report(
        "valid/bwd_bias_per_batch_dbias_deterministic.json",
        "rtx-pro-6000",
    );
    assert_eq!(
        codes(&r, Route::Atomic),
        vec![ReasonCode::AtomicNotDeterministic]
    );
    assert_eq!(verdict(&r, Route::Relay), Verdict::Supported);
    assert_eq!(verdict(&r, Route::TwoKernel), Verdict::Supported);
    // Stored directly: no dBias accumulator.
    let relay = r.nodes[0]
        .config(EngineKind::Sm120, Some(Route::Relay))
        .unwrap();
    let ws = relay.workspace.as_ref().unwrap();
    assert!(ws.region(rime::analyzer::RegionKind::DbiasAccum).is_none());
    // Non-deterministic broadcast dBias is fine too, with an f32 accumulator.
    let r = report("valid/bwd_bias_broadcast_dbias.json", "rtx-pro-6000");
    let atomic = r.nodes[0]
        .config(EngineKind::Sm120, Some(Route::Atomic))
        .unwrap();
    assert_eq!(atomic.verdict, Verdict::Supported);
    let ws = atomic.workspace.as_ref().unwrap();
    assert!(ws.region(rime::analyzer::RegionKind::DbiasAccum).is_some());
}

#[test]
fn on_gpu_targets_the_cpu_reference_ranks_last() {
    let r = report("valid/bwd_odd_len_17.json", "rtx-pro-6000");
    for mode in HeuristicsMode::ALL {
        let ranked = heuristics(
            &r,
            &HeuristicsOptions {
                mode,
                ..Default::default()
            },
        );
        assert_eq!(
            ranked.last().unwrap().config.engine,
            EngineKind::CpuReference,
            "{mode}"
        );
    }
    let r = report("valid/bwd_odd_len_17.json", "cpu");
    let ranked = heuristics(&r, &HeuristicsOptions::default());
    assert_eq!(ranked.len(), 1);
    assert_eq!(ranked[0].config.engine, EngineKind::CpuReference);
}

#[test]
fn deselection_and_pinning_filter_without_reordering() {
    let r = report("valid/bwd_bhsd_basic.json", "rtx-5090");
    let all = heuristics(&r, &HeuristicsOptions::default());
    let deselected = heuristics(
        &r,
        &HeuristicsOptions {
            deselect: vec![Selector::route(Route::Atomic)],
            ..Default::default()
        },
    );
    assert_eq!(deselected.len() + 1, all.len());
    assert!(deselected
        .iter()
        .all(|c| c.config.route != Some(Route::Atomic)));
    let pinned = heuristics(
        &r,
        &HeuristicsOptions {
            pin: Some(Selector::engine(EngineKind::Sm120)),
            ..Default::default()
        },
    );
    assert!(pinned.iter().all(|c| c.config.engine == EngineKind::Sm120));
    assert_eq!(
        pinned.iter().map(|c| c.rank).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let none = heuristics(
        &r,
        &HeuristicsOptions {
            deselect: Selector::all(),
            ..Default::default()
        },
    );
    assert!(none.is_empty());
    // A name that selects nothing cannot become a pin or a deselection at all.
    let typo = "sm90".parse::<Selector>().unwrap_err();
    assert!(typo
        .to_string()
        .starts_with("no engine configuration is called `sm90`; known:"));
}

/// The analyzer never panics: every fixture, with every tensor's dims and strides pushed to
/// extremes one at a time (structurally invalid), and with every option pushed to extremes
/// (structurally valid, so the rules and surfaces run), is analysed, ranked, rendered and
/// serialised.
#[test]
fn the_analyzer_never_panics_on_mutated_graphs() {
    let extremes: [i64; 6] = [0, -1, 1, 7, i64::MAX, i64::MIN];
    let targets = [
        Target::by_name("rtx-5090").unwrap(),
        Target::by_name("cpu").unwrap(),
    ];
    let run = |g: &rime::graph::Graph| {
        for target in &targets {
            let r = analyze(g, target);
            let ranked = heuristics(&r, &HeuristicsOptions::default());
            let _ = rime::analyzer::render_report(&r);
            let _ = rime::analyzer::render_candidates(&r, &ranked);
            let _ = rime::analyzer::report_json::report_doc(&r);
        }
    };
    for dir in ["valid", "unsupported"] {
        let mut files: Vec<_> = std::fs::read_dir(fixture(dir))
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for path in files {
            let graph = rime::graph::json::load_file(&path).expect("loads");
            for value in extremes {
                let mut nodes: Vec<_> = graph.nodes().to_vec();
                for n in nodes.iter_mut() {
                    let o = &mut n.options;
                    o.left_bound = Some(value);
                    o.right_bound = Some(value);
                    o.attn_scale = Some(if value == 0 { f32::NAN } else { value as f32 });
                    o.dropout_probability = Some(if value == 1 {
                        f32::INFINITY
                    } else {
                        value as f32
                    });
                    o.max_total_seq_len_q = Some(value);
                    o.alibi_mask = value % 2 == 0;
                    o.padding_mask = value % 2 != 0;
                    o.deterministic = value > 0;
                }
                run(&rebuild(&graph, nodes));
            }
            for id in graph.tensor_ids() {
                for (axis, value) in (0..4).flat_map(|a| extremes.map(|v| (a, v))) {
                    let mut g = graph.clone();
                    let t = g.get_mut(id).expect("tensor");
                    if let Some(d) = t.dims.get_mut(axis) {
                        *d = value;
                    }
                    if let Some(s) = t.strides.get_mut(3 - axis) {
                        *s = value;
                    }
                    run(&g);
                }
            }
        }
    }
}

/// The same graph with its nodes replaced (the graph API adds nodes; it does not edit them).
fn rebuild(g: &rime::graph::Graph, nodes: Vec<rime::graph::Node>) -> rime::graph::Graph {
    let mut out = rime::graph::Graph::new(g.context.clone());
    for t in g.tensors() {
        out.tensor(t.clone());
    }
    for n in nodes {
        out.add_node(n);
    }
    out
}

#[test]
fn json_reports_match_their_schema() {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/report.v1.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema")).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    for name in [
        "valid/fwd_bwd_two_nodes.json",
        "unsupported/bia003_deterministic_batch_broadcast_dbias.json",
        "unsupported/str017_fwd_bwd_cycle.json",
    ] {
        for target in ["rtx-5090", "cpu"] {
            let doc = rime::analyzer::report_json::report_doc(&report(name, target));
            let value = serde_json::to_value(&doc).expect("serialises");
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{name} on {target}: {errors:?}");
            assert_eq!(value["format"], "rime.report");
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/ranking.v1.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let r = report("valid/fwd_bwd_two_nodes.json", "h200");
    let ranked = heuristics(&r, &HeuristicsOptions::default());
    let doc = rime::analyzer::report_json::ranking_doc(&r, HeuristicsMode::A, &ranked);
    let value = serde_json::to_value(&doc).expect("serialises");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        value["candidates"].as_array().map(Vec::len),
        Some(ranked.len())
    );
}

#[test]
fn a_route_pin_keeps_forward_nodes_on_the_pinned_engine() {
    let r = report("valid/fwd_bwd_two_nodes.json", "rtx-5090");
    let pin = HeuristicsOptions {
        pin: Some(Selector::route(Route::Relay)),
        ..Default::default()
    };
    let ranked = heuristics(&r, &pin);
    let labels: Vec<String> = ranked
        .iter()
        .map(|c| format!("{}:{}", c.node_name, c.config.label()))
        .collect();
    assert_eq!(labels, vec!["fwd:sm120", "bwd:sm120/relay"]);
}

#[test]
fn approve_best_gives_one_plan_per_node() {
    let r = report("valid/fwd_bwd_two_nodes.json", "rtx-pro-6000");
    let plans = r
        .approve_best(&HeuristicsOptions::default())
        .expect("plans");
    assert_eq!(plans.len(), 2);
    assert_eq!(plans[0].config().route, None);
    assert!(plans[1].config().route.is_some());
    assert!(
        matches!(plans[1].attn_scale(), rime::analyzer::AttnScale::Value(v) if (v - 0.125).abs() < 1e-7)
    );
    let none = r.approve_best(&HeuristicsOptions {
        deselect: vec![Selector::engine(EngineKind::Sm120)],
        pin: Some(Selector::engine(EngineKind::Sm120)),
        ..Default::default()
    });
    assert!(matches!(
        none,
        Err(rime::analyzer::ApproveError::NoCandidate { .. })
    ));
}
