//! Everything the analyzer offers, run over one graph, with the invariants that must hold for
//! any graph at all: shared by the property tests and the fuzz targets (`fuzz/`), so a fuzz
//! finding and a property failure mean the same thing.
//!
//! Invariants checked (a violation panics, which is what both harnesses report):
//! - `analyze` returns (never panics) on every target and does not change the graph;
//! - every rejection carries a documented code (`ReasonCode::doc`, found again by its string);
//! - a structurally invalid graph has graph-level rejections and no supported configuration;
//! - heuristics in every mode, with deselection and pins, rank only supported configurations,
//!   and every candidate is approvable with the workspace it was ranked with;
//! - the text and JSON renderings of reports and rankings never panic.

#![allow(dead_code)] // each includer uses its own subset

use rime_analyzer::{
    analyze, heuristics, render_candidates, render_report, report_json, EngineKind, HeuristicsMode,
    HeuristicsOptions, ReasonCode, Route, Selector, SupportReport, Target, Verdict,
};
use rime_graph::Graph;

/// The targets every graph is analyzed on: both SM120 profiles, an sm_90 and an sm_80 GPU,
/// the CPU, and an SM120 with almost no free memory (workspace and route fallbacks).
pub fn targets() -> Vec<Target> {
    let mut out: Vec<Target> = ["rtx-5090", "rtx-pro-6000", "h200", "a100", "cpu"]
        .into_iter()
        .filter_map(Target::by_name)
        .collect();
    if let Some(t) = Target::by_name("rtx-5090") {
        out.push(t.with_free_memory(1 << 20));
    }
    out
}

/// Analyzes `graph` on every target of [`targets`], ranks and approves, renders, and checks
/// the invariants of the module doc. Returns the reports (target order).
pub fn exercise(graph: &Graph) -> Vec<SupportReport> {
    let valid = graph.validate().is_ok();
    targets()
        .iter()
        .map(|target| {
            let report = analyze(graph, target);
            check_report(graph, valid, &report);
            report
        })
        .collect()
}

fn check_report(graph: &Graph, valid: bool, report: &SupportReport) {
    // Compared through the canonical text: a graph built in code may hold a NaN option,
    // which is never == itself.
    assert_eq!(
        rime_graph::json::to_string(report.graph()),
        rime_graph::json::to_string(graph),
        "analyze must not change the graph"
    );
    for r in report.all_rejections() {
        assert!(!r.code.doc().trim().is_empty(), "{} has no doc", r.code);
        assert_eq!(ReasonCode::from_code(r.code.code()), Some(r.code));
        assert!(!r.message.is_empty(), "{} without a message", r.code);
    }
    if !valid {
        assert!(
            !report.graph_rejections.is_empty(),
            "an invalid graph must have graph-level rejections"
        );
        assert!(report.supported_engines().is_empty());
    }
    assert_eq!(report.nodes.len(), graph.nodes().len());
    let _ = render_report(report);
    let _ = serde_json::to_string(&report_json::report_doc(report));

    let options = HeuristicsMode::ALL.into_iter().flat_map(|mode| {
        [
            HeuristicsOptions {
                mode,
                ..HeuristicsOptions::default()
            },
            HeuristicsOptions {
                mode,
                deselect: vec![
                    Selector::route(Route::Atomic),
                    Selector::engine(EngineKind::CpuReference),
                ],
                pin: None,
            },
            HeuristicsOptions {
                mode,
                deselect: Vec::new(),
                pin: Some(Selector::route(Route::Relay)),
            },
        ]
    });
    for options in options {
        let ranked = heuristics(report, &options);
        for c in &ranked {
            let node = report.node(c.node).expect("candidate of a reported node");
            let config = node
                .config(c.config.engine, c.config.route)
                .expect("candidate of a reported configuration");
            assert_eq!(config.verdict, Verdict::Supported, "{}", c.config.label());
            assert!(c.rank >= 1);
            let plan = report.approve(c).expect("every candidate is approvable");
            assert_eq!(plan.workspace(), &c.config.workspace);
            if c.config.engine == EngineKind::CpuReference {
                assert_eq!(plan.workspace().total_bytes(), 0);
            }
        }
        let _ = render_candidates(report, &ranked);
        let _ = serde_json::to_string(&report_json::ranking_doc(report, options.mode, &ranked));
        let _ = report.approve_best(&options);
    }
}
