//! `ApprovedPlan`: what engines accept — a node, a supported configuration (engine, route, the
//! kernels to run) with its exact workspace, and the checked [`SdpaProblem`], which only the
//! analyzer can construct. Engines build exactly what it names.

use std::sync::Arc;

use rime_graph::{Graph, Node, NodeId, Port, SdpaShape, Tensor, TensorId};

use crate::problem::SdpaProblem;

use crate::heuristics::Candidate;
use crate::{
    EngineConfig, EngineKind, KernelConfig, Route, SupportReport, Target, WorkspaceLayout,
};

/// The attention scale an engine must apply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttnScale {
    /// Known at plan time: the `attn_scale` option, a by-value Attn_scale tensor, or the
    /// default 1/sqrt(Dqk).
    Value(f32),
    /// Read at execution from this (1,1,1,1) f32 tensor of the variant pack.
    Tensor(TensorId),
}

/// Why a configuration could not be approved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApproveError {
    /// The node is not in the report.
    #[error("node #{index} is not in the report")]
    UnknownNode {
        /// Node index.
        index: usize,
    },
    /// No candidate is left for the node (unsupported, deselected or not pinned).
    #[error("node `{node}`: no supported configuration left to approve")]
    NoCandidate {
        /// Node name.
        node: String,
    },
    /// The configuration is not supported (or was not considered) for this node.
    #[error("node `{node}`: {config} is not a supported configuration")]
    NotSupported {
        /// Node name.
        node: String,
        /// `engine` or `engine/route`.
        config: String,
    },
}

/// A supported (node, engine configuration) pair, approved by the analyzer. Engines build plans
/// from it; its fields can only be read.
#[derive(Debug, Clone)]
pub struct ApprovedPlan {
    graph: Arc<Graph>,
    target: Target,
    node: NodeId,
    node_data: Node,
    config: EngineConfig,
    problem: SdpaProblem,
}

impl ApprovedPlan {
    /// The graph (the analyzer's snapshot of it).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The graph, shared.
    pub fn graph_arc(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// The target it was approved for.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The node's id.
    pub fn node_id(&self) -> NodeId {
        self.node
    }

    /// The node (its ports and options).
    pub fn node(&self) -> &Node {
        &self.node_data
    }

    /// The tensor bound to `port` of the node (input or output), if any.
    pub fn tensor(&self, port: Port) -> Option<&Tensor> {
        self.graph.get(self.node_data.port(port)?)
    }

    /// The engine configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The checked problem: sizes, normalised band, bias broadcast, every port's tensor.
    pub fn problem(&self) -> &SdpaProblem {
        &self.problem
    }

    /// The attention scale to apply.
    pub fn attn_scale(&self) -> AttnScale {
        self.problem.scale
    }

    /// The exact workspace the engine must use and never exceed.
    pub fn workspace(&self) -> &WorkspaceLayout {
        &self.config.workspace
    }

    /// The same plan with its main kernel swapped for `kernel`, a configuration of the same role,
    /// envelope and Q tile (so the approved workspace still fits it exactly), built for the
    /// plan's route, e.g. an [`H200_TUNED`](crate::sm120::kernels::H200_TUNED) entry for a
    /// benchmark that compares tile configurations. The analyzer itself never selects such a
    /// kernel; `None` when `kernel` does not match, is not built for the route or does not fit
    /// the plan's target.
    pub fn with_main_kernel(&self, kernel: &'static KernelConfig) -> Option<Self> {
        let fits = u64::from(kernel.smem_bytes) <= self.target.smem_per_block;
        let serves = self.config.route.is_none_or(|r| kernel.serves(r));
        (fits && serves && self.config.kernel?.interchangeable(kernel)).then(|| {
            let mut plan = self.clone();
            plan.config.kernel = Some(kernel);
            plan
        })
    }
}

impl SupportReport {
    /// Approves a supported configuration of a node, by engine and route.
    ///
    /// # Errors
    /// [`ApproveError`] when the node is unknown or the configuration is not supported.
    pub fn approve_config(
        &self,
        node: NodeId,
        engine: EngineKind,
        route: Option<Route>,
    ) -> Result<ApprovedPlan, ApproveError> {
        let report = self.node(node).ok_or(ApproveError::UnknownNode {
            index: node.index(),
        })?;
        let not_supported = || ApproveError::NotSupported {
            node: report.name.clone(),
            config: crate::engine::label(engine, route),
        };
        let config = report
            .config(engine, route)
            .and_then(|c| c.config())
            .ok_or_else(not_supported)?;
        let shape = report.shape.ok_or_else(not_supported)?;
        let graph_node = self.graph.node(node).ok_or_else(not_supported)?;
        let problem = SdpaProblem::of(&self.graph, graph_node, &shape).ok_or_else(not_supported)?;
        Ok(ApprovedPlan {
            graph: Arc::clone(&self.graph),
            target: self.target.clone(),
            node,
            node_data: graph_node.clone(),
            config,
            problem,
        })
    }

    /// Approves a candidate returned by [`heuristics`](crate::heuristics()).
    ///
    /// # Errors
    /// [`ApproveError`] when the candidate does not come from this report's supported set.
    pub fn approve(&self, candidate: &Candidate) -> Result<ApprovedPlan, ApproveError> {
        self.approve_config(
            candidate.node,
            candidate.config.engine,
            candidate.config.route,
        )
    }
}

impl SupportReport {
    /// Approves the best candidate of every node (rank 1 under `options`), in node order: the
    /// plans a graph executes.
    ///
    /// # Errors
    /// [`ApproveError::NoCandidate`] naming the first node with no candidate left.
    pub fn approve_best(
        &self,
        options: &crate::HeuristicsOptions,
    ) -> Result<Vec<ApprovedPlan>, ApproveError> {
        let ranked = crate::heuristics(self, options);
        self.nodes
            .iter()
            .map(|n| {
                let best = ranked.iter().find(|c| c.node == n.node && c.rank == 1);
                let best = best.ok_or_else(|| ApproveError::NoCandidate {
                    node: n.name.clone(),
                })?;
                self.approve(best)
            })
            .collect()
    }
}

/// The option, else a by-value Attn_scale tensor, else the tensor at run time, else 1/sqrt(Dqk).
pub(crate) fn effective_scale(graph: &Graph, node: &Node, shape: &SdpaShape) -> AttnScale {
    if let Some(v) = node.options.attn_scale {
        return AttnScale::Value(v);
    }
    if let Some(id) = node.input(Port::AttnScale) {
        return match graph.get(id).and_then(|t| t.pass_by_value) {
            Some(v) => AttnScale::Value(v.as_f64() as f32),
            None => AttnScale::Tensor(id),
        };
    }
    AttnScale::Value(1.0 / (shape.dqk.max(1) as f32).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_and_reports_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ApprovedPlan>();
        send_sync::<SupportReport>();
    }
}
