//! Nodes: an operation, its ports and its options.

use std::collections::BTreeMap;
use std::fmt;

use crate::{Port, SdpaOptions, Sequence, TensorId};

/// Index of a node in its [`Graph`](crate::Graph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// Position of the node in [`Graph::nodes`](crate::Graph::nodes).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The operation a node performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Scaled dot-product attention forward: Q, K, V -> O (and Stats).
    SdpaForward,
    /// Scaled dot-product attention backward: Q, K, V, O, dO, Stats -> dQ, dK, dV (...).
    SdpaBackward,
}

impl OpKind {
    /// The JSON tag (the cuDNN frontend's).
    pub const fn tag(self) -> &'static str {
        match self {
            OpKind::SdpaForward => "SDPA_FWD",
            OpKind::SdpaBackward => "SDPA_BWD",
        }
    }

    /// Input ports the node must have.
    pub const fn required_inputs(self) -> &'static [Port] {
        match self {
            OpKind::SdpaForward => &[Port::Q, Port::K, Port::V],
            OpKind::SdpaBackward => &[Port::Q, Port::K, Port::V, Port::O, Port::DO, Port::Stats],
        }
    }

    /// Input ports the node may have.
    pub const fn optional_inputs(self) -> &'static [Port] {
        match self {
            OpKind::SdpaForward => &[
                Port::AttnScale,
                Port::Bias,
                Port::SeqLenQ,
                Port::SeqLenKv,
                Port::Seed,
                Port::Offset,
                Port::DropoutMask,
                Port::DropoutScale,
                Port::Sink,
            ],
            OpKind::SdpaBackward => &[
                Port::AttnScale,
                Port::Bias,
                Port::SeqLenQ,
                Port::SeqLenKv,
                Port::Seed,
                Port::Offset,
                Port::DropoutMask,
                Port::DropoutScale,
                Port::DropoutScaleInv,
                Port::Sink,
            ],
        }
    }

    /// Output ports the node must have.
    pub const fn required_outputs(self) -> &'static [Port] {
        match self {
            OpKind::SdpaForward => &[Port::O],
            OpKind::SdpaBackward => &[Port::DQ, Port::DK, Port::DV],
        }
    }

    /// Output ports the node may have.
    pub const fn optional_outputs(self) -> &'static [Port] {
        match self {
            OpKind::SdpaForward => &[Port::Stats, Port::RngDump],
            OpKind::SdpaBackward => &[Port::DBias, Port::DSink, Port::RngDump],
        }
    }

    /// Options (by JSON name) the op has. Determinism is a property of the backward's
    /// reductions; every forward engine is deterministic, so the forward has no such option.
    pub const fn options(self) -> &'static [&'static str] {
        const SHARED: [&str; 9] = [
            "alibi_mask",
            "attn_scale",
            "diagonal_alignment",
            "dropout_probability",
            "left_bound",
            "max_total_seq_len_kv",
            "max_total_seq_len_q",
            "padding_mask",
            "right_bound",
        ];
        const BACKWARD: [&str; 10] = [
            "alibi_mask",
            "attn_scale",
            "deterministic",
            "diagonal_alignment",
            "dropout_probability",
            "left_bound",
            "max_total_seq_len_kv",
            "max_total_seq_len_q",
            "padding_mask",
            "right_bound",
        ];
        match self {
            OpKind::SdpaForward => &SHARED,
            OpKind::SdpaBackward => &BACKWARD,
        }
    }

    /// True when `port` is an input port of this op.
    pub fn accepts_input(self, port: Port) -> bool {
        self.required_inputs().contains(&port) || self.optional_inputs().contains(&port)
    }

    /// True when `port` is an output port of this op.
    pub fn accepts_output(self, port: Port) -> bool {
        self.required_outputs().contains(&port) || self.optional_outputs().contains(&port)
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// A node of the graph: the op, the tensors bound to its ports, and its options.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Node name, unique within the graph.
    pub name: String,
    /// The operation.
    pub op: OpKind,
    /// Input port -> tensor.
    pub inputs: BTreeMap<Port, TensorId>,
    /// Output port -> tensor.
    pub outputs: BTreeMap<Port, TensorId>,
    /// Scalar options.
    pub options: SdpaOptions,
}

impl Node {
    /// The tensor bound to input `port`, if any.
    pub fn input(&self, port: Port) -> Option<TensorId> {
        self.inputs.get(&port).copied()
    }

    /// The tensor bound to output `port`, if any.
    pub fn output(&self, port: Port) -> Option<TensorId> {
        self.outputs.get(&port).copied()
    }

    /// The tensor bound to `port`, input or output.
    pub fn port(&self, port: Port) -> Option<TensorId> {
        self.input(port).or_else(|| self.output(port))
    }

    /// The per-batch lengths tensor of `sequence` when the node has a padding mask (else its
    /// tokens are all S of them).
    pub fn padding_lengths(&self, sequence: Sequence) -> Option<TensorId> {
        self.input(sequence.lengths_port())
            .filter(|_| self.options.padding_mask)
    }
}
