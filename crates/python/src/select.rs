//! From a graph and a place to approved plans: analyze for the place's target, rank only the
//! configurations of the place's engine, approve the best of every node — or raise
//! `UnsupportedGraph` with every reason that engine (and the graph) gives.

use pyo3::prelude::*;
use rime_analyzer::{
    analyze, ApprovedPlan, EngineKind, HeuristicsOptions, Selector, SupportReport,
};
use rime_graph::Graph;

use crate::array::Place;
use crate::device::{engine_of, target_of};
use crate::errors::unsupported;
use crate::reason::Reason;

/// Every rejection in `report`: the graph's and the nodes' (no configuration), then each
/// configuration's of `engine` (all engines when `None`), labelled with the configuration.
pub fn reasons(report: &SupportReport, engine: Option<EngineKind>) -> Vec<Reason> {
    let mut out: Vec<Reason> = report
        .graph_rejections
        .iter()
        .map(|r| Reason::of(r, None))
        .collect();
    for node in &report.nodes {
        out.extend(node.rejections.iter().map(|r| Reason::of(r, None)));
        for config in node
            .configs
            .iter()
            .filter(|c| engine.is_none_or(|e| c.engine == e))
        {
            out.extend(
                config
                    .rejections
                    .iter()
                    .map(|r| Reason::of(r, Some(config.label()))),
            );
        }
    }
    out
}

/// The heuristics options that keep only `engine`'s configurations.
pub fn pinned(engine: EngineKind) -> HeuristicsOptions {
    HeuristicsOptions {
        pin: Some(Selector::engine(engine)),
        ..HeuristicsOptions::default()
    }
}

/// The best approved plan of every node of `graph` on `place`'s engine.
///
/// # Errors
/// `UnsupportedGraph` with the reasons when a node has no supported configuration there;
/// the target's errors.
pub fn approve(py: Python<'_>, graph: &Graph, place: Place) -> PyResult<Vec<ApprovedPlan>> {
    let target = target_of(py, place)?;
    let engine = engine_of(place);
    let report = analyze(graph, &target);
    report.approve_best(&pinned(engine)).map_err(|e| {
        let reasons = reasons(&report, Some(engine));
        let lines: Vec<String> = reasons.iter().map(Reason::line).collect();
        unsupported(
            py,
            format!(
                "{e} on {place} (engine {engine}, target {}):\n  {}",
                target.name,
                lines.join("\n  ")
            ),
            reasons,
        )
    })
}
