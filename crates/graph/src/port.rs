//! Named ports of the SDPA nodes, with the cuDNN frontend's JSON names.

use std::fmt;

/// A named input or output slot of a node.
///
/// Wire names are the cuDNN frontend's, so that graphs read like its serialized ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Port {
    /// Query (B, Hq, Sq, Dqk).
    Q,
    /// Key (B, Hk, Skv, Dqk).
    K,
    /// Value (B, Hv, Skv, Dv).
    V,
    /// Forward output (B, Hq, Sq, Dv).
    O,
    /// Output gradient (B, Hq, Sq, Dv).
    DO,
    /// Log-sum-exp of the forward's scores (B, Hq, Sq, 1), f32.
    Stats,
    /// Score scale as a (1,1,1,1) f32 tensor.
    AttnScale,
    /// Additive bias (1|B, 1|Hq, Sq, Skv).
    Bias,
    /// Per-batch query lengths (B,1,1,1) i32, with the padding mask.
    SeqLenQ,
    /// Per-batch key/value lengths (B,1,1,1) i32, with the padding mask.
    SeqLenKv,
    /// Philox dropout seed (1,1,1,1).
    Seed,
    /// Philox dropout offset (1,1,1,1).
    Offset,
    /// Custom dropout mask, broadcastable to (B, Hq, Sq, Skv).
    DropoutMask,
    /// Dropout scale (usually 1/(1-p)).
    DropoutScale,
    /// Inverse dropout scale (usually 1-p), backward only.
    DropoutScaleInv,
    /// Attention-sink logit per head (1, Hq, 1, 1) f32.
    Sink,
    /// Query gradient, like Q.
    DQ,
    /// Key gradient, like K.
    DK,
    /// Value gradient, like V.
    DV,
    /// Bias gradient, like Bias.
    DBias,
    /// Sink gradient (1, Hq, 1, 1) f32.
    DSink,
    /// Debug dump of the dropout mask (B, Hq, Sq, Skv).
    RngDump,
}

impl Port {
    /// Every port, in declaration order.
    pub const ALL: [Port; 22] = [
        Port::Q,
        Port::K,
        Port::V,
        Port::O,
        Port::DO,
        Port::Stats,
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
        Port::DQ,
        Port::DK,
        Port::DV,
        Port::DBias,
        Port::DSink,
        Port::RngDump,
    ];

    /// The JSON name (the cuDNN frontend's).
    pub const fn name(self) -> &'static str {
        match self {
            Port::Q => "Q",
            Port::K => "K",
            Port::V => "V",
            Port::O => "O",
            Port::DO => "dO",
            Port::Stats => "Stats",
            Port::AttnScale => "Attn_scale",
            Port::Bias => "Bias",
            Port::SeqLenQ => "SEQ_LEN_Q",
            Port::SeqLenKv => "SEQ_LEN_KV",
            Port::Seed => "Seed",
            Port::Offset => "Offset",
            Port::DropoutMask => "Dropout_mask",
            Port::DropoutScale => "Dropout_scale",
            Port::DropoutScaleInv => "Dropout_scale_inv",
            Port::Sink => "SINK_TOKEN",
            Port::DQ => "dQ",
            Port::DK => "dK",
            Port::DV => "dV",
            Port::DBias => "dBias",
            Port::DSink => "DSINK_TOKEN",
            Port::RngDump => "RNG_DUMP",
        }
    }

    /// True for the scalar ports an engine reads as a value (Attn_scale, Seed, Offset and the
    /// dropout scales), so that a pass-by-value tensor may be bound there. Every other port is
    /// read from a buffer, where a by-value tensor has none and would be ignored.
    pub const fn takes_value(self) -> bool {
        matches!(
            self,
            Port::AttnScale
                | Port::Seed
                | Port::Offset
                | Port::DropoutScale
                | Port::DropoutScaleInv
        )
    }

    /// Parses a JSON port name.
    pub fn from_name(name: &str) -> Option<Port> {
        Port::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The sequence whose tokens the port's dim 2 walks, for the tensors laid out token by
    /// token (Q, O, dO, Stats, dQ: the query; K, V, dK, dV: the keys); `None` for the others
    /// (bias, masks, scalars, sequence lengths), which are dense. Only the token tensors may
    /// be ragged (packed by per-batch offsets).
    pub const fn token_sequence(self) -> Option<Sequence> {
        match self {
            Port::Q | Port::O | Port::DO | Port::Stats | Port::DQ => Some(Sequence::Q),
            Port::K | Port::V | Port::DK | Port::DV => Some(Sequence::Kv),
            _ => None,
        }
    }
}

/// The two sequences of attention: queries, and keys / values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sequence {
    /// The query rows (Sq, `SEQ_LEN_Q`, `max_total_seq_len_q`).
    Q,
    /// The keys and values (Skv, `SEQ_LEN_KV`, `max_total_seq_len_kv`).
    Kv,
}

impl Sequence {
    /// The port of the sequence's per-batch lengths under a padding mask.
    pub const fn lengths_port(self) -> Port {
        match self {
            Sequence::Q => Port::SeqLenQ,
            Sequence::Kv => Port::SeqLenKv,
        }
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
