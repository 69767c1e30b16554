//! Heuristics: a ranked list of supported engine configurations per node.
//!
//! Modes, in the spirit of cuDNN's heuristics modes:
//! - [`HeuristicsMode::A`]: fastest first by the cost model ([`crate::cost`]).
//! - [`HeuristicsMode::B`]: smallest workspace first, then fastest (memory-lean).
//! - [`HeuristicsMode::Fallback`]: a fixed, shape-independent order (no cost model): relay,
//!   atomic, two_kernel, SM120 forward, then the CPU reference.
//!
//! On a GPU target the CPU reference engine ranks after every GPU configuration in every mode.
//!
//! Users deselect configurations or pin one by [`Selector`] (`sm120`, `sm120/atomic`, ...);
//! deselected and unpinned ones are dropped, never reordered.

use std::cmp::Ordering;
use std::fmt;

use rime_graph::NodeId;

use crate::cost::{estimate, padding_note, CostEstimate};
use crate::workspace::human_bytes;
use crate::{EngineConfig, EngineKind, Route, Selector, SupportReport};

/// How candidates are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum HeuristicsMode {
    /// Fastest first (cost model).
    #[default]
    A,
    /// Smallest workspace first, then fastest.
    B,
    /// Fixed order, no cost model.
    Fallback,
}

impl HeuristicsMode {
    /// Every mode.
    pub const ALL: [HeuristicsMode; 3] = [
        HeuristicsMode::A,
        HeuristicsMode::B,
        HeuristicsMode::Fallback,
    ];

    /// Stable name (`a`, `b`, `fallback`).
    pub const fn name(self) -> &'static str {
        match self {
            HeuristicsMode::A => "a",
            HeuristicsMode::B => "b",
            HeuristicsMode::Fallback => "fallback",
        }
    }

    /// Parses a stable name (case-insensitive).
    pub fn from_name(name: &str) -> Option<HeuristicsMode> {
        HeuristicsMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for HeuristicsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Options of [`heuristics`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeuristicsOptions {
    /// Ordering mode.
    pub mode: HeuristicsMode,
    /// Configurations to drop.
    pub deselect: Vec<Selector>,
    /// When set, keep only configurations matching this selector (a route pin keeps the
    /// route-less forward configurations of its engine).
    pub pin: Option<Selector>,
}

/// One ranked, supported configuration of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The node.
    pub node: NodeId,
    /// Its name.
    pub node_name: String,
    /// 1-based rank within the node.
    pub rank: usize,
    /// The configuration (with its exact workspace).
    pub config: EngineConfig,
    /// The cost estimate.
    pub estimate: CostEstimate,
    /// One line: why it ranks where it does.
    pub explanation: String,
}

/// The supported configurations of every node, ranked by `options`, nodes in report order.
pub fn heuristics(report: &SupportReport, options: &HeuristicsOptions) -> Vec<Candidate> {
    let mut out = Vec::new();
    for node in &report.nodes {
        let (Some(shape), Some(graph_node)) = (node.shape, report.graph().node(node.node)) else {
            continue;
        };
        let mut ranked: Vec<(EngineConfig, CostEstimate)> = node
            .supported()
            .filter_map(|c| c.config())
            .filter(|c| !options.deselect.iter().any(|s| s.matches(c)))
            .filter(|c| options.pin.is_none_or(|p| p.keeps_under_pin(c)))
            .map(|c| {
                let e = estimate(report.graph(), graph_node, &shape, &c, report.target());
                (c, e)
            })
            .collect();
        let gpu = report.target().is_gpu();
        ranked.sort_by(|a, b| {
            // On a GPU target the CPU reference is the last resort in every mode.
            let last = |c: &EngineConfig| gpu && c.engine == EngineKind::CpuReference;
            last(&a.0)
                .cmp(&last(&b.0))
                .then_with(|| order(options.mode, a, b))
        });
        for (i, (config, estimate)) in ranked.into_iter().enumerate() {
            let explanation = explain(&config, &estimate, &shape, graph_node.options.deterministic);
            out.push(Candidate {
                node: node.node,
                node_name: node.name.clone(),
                rank: i + 1,
                config,
                estimate,
                explanation,
            });
        }
    }
    out
}

fn fallback_position(c: &EngineConfig) -> usize {
    match (c.engine, c.route) {
        (EngineKind::Sm120, Some(Route::Relay)) => 0,
        (EngineKind::Sm120, Some(Route::Atomic)) => 1,
        (EngineKind::Sm120, Some(Route::TwoKernel)) => 2,
        (EngineKind::Sm120, Some(Route::OrderedDbias)) => 3,
        (EngineKind::Sm120, None) => 4,
        (EngineKind::CpuReference, _) => 5,
    }
}

fn order(
    mode: HeuristicsMode,
    (a, ea): &(EngineConfig, CostEstimate),
    (b, eb): &(EngineConfig, CostEstimate),
) -> Ordering {
    let time = ea.seconds.total_cmp(&eb.seconds);
    let ws = a.workspace.total_bytes().cmp(&b.workspace.total_bytes());
    let primary = match mode {
        HeuristicsMode::A => time,
        HeuristicsMode::B => ws.then(time),
        HeuristicsMode::Fallback => fallback_position(a).cmp(&fallback_position(b)),
    };
    primary.then_with(|| a.label().cmp(&b.label()))
}

/// An estimate in milliseconds: three decimals, in scientific notation from 10^6 ms (a graph
/// of Sq = 2^40 is estimated at ~1.934e18 ms, not a 19-digit number).
fn milliseconds(seconds: f64) -> String {
    let ms = seconds * 1e3;
    if ms.abs() >= 1e6 {
        format!("{ms:.3e}")
    } else {
        format!("{ms:.3}")
    }
}

fn explain(c: &EngineConfig, e: &CostEstimate, shape: &rime_graph::SdpaShape, det: bool) -> String {
    let mut parts = vec![format!(
        "~{} ms, {}-bound ({:.2} GFLOP at {:.3} TFLOP/s, {} at {:.0} GB/s)",
        milliseconds(e.seconds),
        e.bound.name(),
        e.flops / 1e9,
        e.rate / 1e12,
        human_bytes(e.bytes as u64),
        e.bandwidth / 1e9
    )];
    if e.atomic_seconds > 0.0 {
        let mut atomics = vec![];
        if e.reduction_bytes > 0.0 {
            atomics.push(format!(
                "{} of dQ reductions",
                human_bytes(e.reduction_bytes as u64)
            ));
        }
        if e.dbias_atomic_bytes > 0.0 {
            atomics.push(format!(
                "{} of dBias atomics",
                human_bytes(e.dbias_atomic_bytes as u64)
            ));
        }
        parts.push(format!(
            "{} (+{:.1} us, not hidden under compute)",
            atomics.join(" and "),
            e.atomic_seconds * 1e6
        ));
    }
    if e.blocks > 0 {
        parts.push(format!(
            "{} blocks, {:.0}% wave utilisation",
            e.blocks,
            e.utilization * 100.0
        ));
    }
    parts.push(format!(
        "workspace {}",
        human_bytes(c.workspace.total_bytes())
    ));
    match c.route {
        Some(Route::Atomic) => parts.push("fp32 atomics, not deterministic".into()),
        Some(Route::Relay) => parts.push(format!(
            "ordered dQ relay (+{:.0}%){}",
            e.relay_penalty * 100.0,
            if det { ", deterministic" } else { "" }
        )),
        Some(Route::TwoKernel) => parts.push("dS round trip + dQ GEMM, deterministic".into()),
        Some(Route::OrderedDbias) => parts.push(format!(
            "ordered dQ relay (+{:.0}%) and dBias partials summed in order, deterministic",
            e.relay_penalty * 100.0
        )),
        None => {}
    }
    if c.engine == EngineKind::CpuReference {
        parts.push("host reference".into());
    }
    if let Some(p) = padding_note(c.kernel, shape) {
        parts.push(p);
    }
    parts.join("; ")
}
