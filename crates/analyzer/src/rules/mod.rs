//! Graph-level rules that hold for every engine (docs/sdpa-backward.md, section 3), one file per
//! rule family, and the per-node view they share with the engine surfaces.

mod bias;
mod context;
mod dropout;
mod heads;
mod layout;
mod masks;
mod padding;
mod scale;
mod sink;
pub mod structure;

use rime_graph::{Graph, Node, OpKind, Port, SdpaOptions, SdpaShape, Tensor};

use crate::{Rejection, Subject, Target};

/// One node seen by the rules: the graph, the node, its shape and the target.
pub(crate) struct NodeCtx<'a> {
    pub graph: &'a Graph,
    pub node: &'a Node,
    pub shape: SdpaShape,
    pub target: &'a Target,
}

/// How a bias broadcasts against the scores (B, Hq, Sq, Skv).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BiasBroadcast {
    /// Batch dim 1 while B > 1.
    pub batch: bool,
    /// Head dim 1 while Hq > 1.
    pub head: bool,
    /// Sq or Skv dim 1 while the scores' is larger.
    pub seq: bool,
}

impl BiasBroadcast {
    /// How a bias of `dims` broadcasts against scores of dims `scores` (B, Hq, Sq, Skv).
    pub fn of(dims: &[i64], scores: &[i64]) -> BiasBroadcast {
        let broadcast = |axis: usize| matches!((dims.get(axis), scores.get(axis)), (Some(1), Some(&full)) if full > 1);
        BiasBroadcast {
            batch: broadcast(0),
            head: broadcast(1),
            seq: broadcast(2) || broadcast(3),
        }
    }

    /// True when dBias sums over batches or heads.
    pub fn reduces(self) -> bool {
        self.batch || self.head
    }
}

impl<'a> NodeCtx<'a> {
    pub fn options(&self) -> &'a SdpaOptions {
        &self.node.options
    }

    pub fn is_backward(&self) -> bool {
        self.node.op == OpKind::SdpaBackward
    }

    /// The tensor bound to `port` (input or output).
    pub fn tensor(&self, port: Port) -> Option<&'a Tensor> {
        self.graph.get(self.node.port(port)?)
    }

    pub fn has(&self, port: Port) -> bool {
        self.node.port(port).is_some()
    }

    /// The subject for `port` of this node.
    pub fn port(&self, port: Port) -> Subject {
        Subject::Port {
            node: self.node.name.clone(),
            port,
            tensor: self.tensor(port).map(|t| t.name.clone()),
        }
    }

    /// The subject for the node itself (its options).
    pub fn subject(&self) -> Subject {
        Subject::Node {
            node: self.node.name.clone(),
        }
    }

    /// Dropout in any form: a probability, a mask, or a dump of the Philox mask.
    pub fn has_dropout(&self) -> bool {
        self.options().dropout_probability.is_some()
            || self.has(Port::DropoutMask)
            || self.has(Port::RngDump)
    }

    /// The bound ports whose tensors have a ragged (THD) offset, in port order.
    pub fn ragged_ports(&self) -> impl Iterator<Item = Port> + '_ {
        Port::ALL
            .into_iter()
            .filter(|&p| self.tensor(p).is_some_and(|t| t.ragged_offset.is_some()))
    }

    /// The first token port (Q, K, V, O, dO, Stats, dQ, dK, dV) whose tensor is ragged.
    pub fn ragged_port(&self) -> Option<Port> {
        self.ragged_ports().find(|p| p.token_sequence().is_some())
    }

    /// How the bias broadcasts, when there is one.
    pub fn bias_broadcast(&self) -> Option<BiasBroadcast> {
        let dims = &self.tensor(Port::Bias)?.dims;
        Some(BiasBroadcast::of(dims, &self.shape.scores_dims()))
    }
}

/// Runs every graph-level rule on one node.
pub(crate) fn check_node(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    context::check(ctx, out);
    heads::check(ctx, out);
    scale::check(ctx, out);
    masks::check(ctx, out);
    padding::check(ctx, out);
    bias::check(ctx, out);
    dropout::check(ctx, out);
    sink::check(ctx, out);
    layout::check(ctx, out);
}
