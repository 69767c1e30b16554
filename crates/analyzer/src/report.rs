//! The support report: per node, per engine configuration, supported (with the exact
//! workspace) or rejected (with every reason).

use std::sync::Arc;

use rime_graph::{Graph, NodeId, OpKind, SdpaShape};

use crate::engine::label;
use crate::sm120::KernelConfig;
use crate::{EngineConfig, EngineKind, Rejection, Route, Target, WorkspaceLayout};

/// The analyzer's answer for one graph on one target.
#[derive(Debug, Clone)]
pub struct SupportReport {
    pub(crate) graph: Arc<Graph>,
    pub(crate) target: Target,
    /// Structural problems of the whole graph (from `Graph::validate`): they block every node.
    pub graph_rejections: Vec<Rejection>,
    /// One report per node, in node order.
    pub nodes: Vec<NodeReport>,
}

/// Support of one node.
#[derive(Debug, Clone)]
pub struct NodeReport {
    /// The node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Its op.
    pub op: OpKind,
    /// Its shape, when Q, K and V are rank 4.
    pub shape: Option<SdpaShape>,
    /// Rejections by rules that hold for every engine: they block every configuration.
    pub rejections: Vec<Rejection>,
    /// Every engine configuration considered, in report order.
    pub configs: Vec<ConfigReport>,
}

/// The verdict on one engine configuration of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// It can run, with the workspace given.
    Supported,
    /// The engine (or route) rejects it: see the configuration's rejections.
    Rejected,
    /// The engine would take it, but a graph- or node-level rule rejects the graph.
    Blocked,
}

impl Verdict {
    /// Stable name.
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Rejected => "rejected",
            Verdict::Blocked => "blocked",
        }
    }
}

/// One engine configuration of one node and what the engine says about it.
#[derive(Debug, Clone)]
pub struct ConfigReport {
    /// The engine.
    pub engine: EngineKind,
    /// The dQ route (SM120 backward).
    pub route: Option<Route>,
    /// The main kernel selected (SM120), when the head dims fit one.
    pub kernel: Option<&'static KernelConfig>,
    /// The dQ GEMM (two_kernel route).
    pub dq_kernel: Option<&'static KernelConfig>,
    /// The exact workspace, when it could be sized.
    pub workspace: Option<WorkspaceLayout>,
    /// The engine's own rejections.
    pub rejections: Vec<Rejection>,
    /// The verdict (accounts for graph- and node-level rejections too).
    pub verdict: Verdict,
}

impl ConfigReport {
    /// `engine` or `engine/route`.
    pub fn label(&self) -> String {
        label(self.engine, self.route)
    }

    /// The engine configuration, when supported.
    pub fn config(&self) -> Option<EngineConfig> {
        if self.verdict != Verdict::Supported {
            return None;
        }
        Some(EngineConfig {
            engine: self.engine,
            route: self.route,
            kernel: self.kernel,
            dq_kernel: self.dq_kernel,
            workspace: self.workspace.clone()?,
        })
    }
}

impl NodeReport {
    /// The supported configurations.
    pub fn supported(&self) -> impl Iterator<Item = &ConfigReport> {
        self.configs
            .iter()
            .filter(|c| c.verdict == Verdict::Supported)
    }

    /// The configuration with this engine and route.
    pub fn config(&self, engine: EngineKind, route: Option<Route>) -> Option<&ConfigReport> {
        self.configs
            .iter()
            .find(|c| c.engine == engine && c.route == route)
    }
}

impl SupportReport {
    /// The graph analysed (an owned snapshot; the caller's graph is never touched).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The target analysed for.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The report of one node.
    pub fn node(&self, node: NodeId) -> Option<&NodeReport> {
        self.nodes.iter().find(|n| n.node == node)
    }

    /// True when `engine` supports every node (with some route each).
    pub fn supports(&self, engine: EngineKind) -> bool {
        !self.nodes.is_empty()
            && self
                .nodes
                .iter()
                .all(|n| n.supported().any(|c| c.engine == engine))
    }

    /// The engines that support every node.
    pub fn supported_engines(&self) -> Vec<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .filter(|&e| self.supports(e))
            .collect()
    }

    /// Every rejection in the report (graph, node and configuration level), in report order.
    pub fn all_rejections(&self) -> impl Iterator<Item = &Rejection> {
        self.graph_rejections
            .iter()
            .chain(self.nodes.iter().flat_map(|n| {
                n.rejections
                    .iter()
                    .chain(n.configs.iter().flat_map(|c| &c.rejections))
            }))
    }
}
