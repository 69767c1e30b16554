//! `analyze`: every rule and engine surface over every node, collected, never failing.

use std::sync::Arc;

use rime_graph::{Graph, OpKind, SdpaShape};

use crate::report::{ConfigReport, NodeReport, SupportReport, Verdict};
use crate::rules::{self, NodeCtx};
use crate::{cpu_reference, sm120, EngineKind, Route, Target};

/// Which engine configurations can run `graph` on `target`, with how much workspace, and if
/// not, exactly why. Never returns an error and never panics: every problem is a rejection in
/// the report. The graph is copied into the report (the caller's is not touched).
pub fn analyze(graph: &Graph, target: &Target) -> SupportReport {
    let graph = Arc::new(graph.clone());
    let graph_rejections = rules::structure::check(&graph);
    let valid = graph_rejections.is_empty();
    let nodes = graph
        .node_ids()
        .filter_map(|id| {
            let node = graph.node(id)?;
            let shape = SdpaShape::of(&graph, node);
            let mut report = NodeReport {
                node: id,
                name: node.name.clone(),
                op: node.op,
                shape,
                rejections: Vec::new(),
                configs: Vec::new(),
            };
            // Rules read shapes and types, which only a structurally valid graph guarantees.
            if let (true, Some(shape)) = (valid, shape) {
                let ctx = NodeCtx {
                    graph: &graph,
                    node,
                    shape,
                    target,
                };
                rules::check_node(&ctx, &mut report.rejections);
                report.configs.push(cpu_reference::check(&ctx));
                report.configs.extend(sm120::check(&ctx));
            } else {
                report.configs = unexamined(node.op);
            }
            let blocked = !(valid && report.rejections.is_empty() && shape.is_some());
            for c in report.configs.iter_mut() {
                if blocked && c.verdict == Verdict::Supported {
                    c.verdict = Verdict::Blocked;
                }
            }
            Some(report)
        })
        .collect();
    SupportReport {
        graph,
        target: target.clone(),
        graph_rejections,
        nodes,
    }
}

/// The configurations of an op that could not be examined (the graph is structurally
/// invalid): listed, so that every node reports every configuration, all blocked.
fn unexamined(op: OpKind) -> Vec<ConfigReport> {
    let routes: &[Option<Route>] = match op {
        OpKind::SdpaForward => &[None],
        OpKind::SdpaBackward => &[
            Some(Route::Atomic),
            Some(Route::Relay),
            Some(Route::TwoKernel),
        ],
    };
    let sm120 = routes.iter().map(|&route| (EngineKind::Sm120, route));
    std::iter::once((EngineKind::CpuReference, None))
        .chain(sm120)
        .map(|(engine, route)| ConfigReport {
            engine,
            route,
            kernel: None,
            dq_kernel: None,
            workspace: None,
            rejections: Vec::new(),
            verdict: Verdict::Blocked,
        })
        .collect()
}
