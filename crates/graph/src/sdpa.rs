//! SDPA node options and the attribute builders of `sdpa_forward` / `sdpa_backward`.

use crate::{Port, TensorId};

/// Where the diagonal of a causal or banded mask starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DiagonalAlignment {
    /// Row i keeps columns j <= i (+ bounds).
    #[default]
    TopLeft,
    /// The diagonal is shifted right by Skv - Sq (per batch with sequence lengths).
    BottomRight,
}

impl DiagonalAlignment {
    /// The JSON name (the cuDNN frontend's).
    pub const fn name(self) -> &'static str {
        match self {
            DiagonalAlignment::TopLeft => "TOP_LEFT",
            DiagonalAlignment::BottomRight => "BOTTOM_RIGHT",
        }
    }
}

/// Scalar options shared by SDPA forward and backward nodes (tensors are ports, not options).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SdpaOptions {
    /// Score scale given by value; default (when neither this nor the Attn_scale port is set)
    /// is 1/sqrt(Dqk).
    pub attn_scale: Option<f32>,
    /// Keep (i, j) only if j > i + shift - left_bound (sliding window). Must be >= 1.
    pub left_bound: Option<i64>,
    /// Keep (i, j) only if j <= i + shift + right_bound; 0 is causal. Must be >= 0.
    pub right_bound: Option<i64>,
    /// Alignment of the diagonal band.
    pub diagonal_alignment: DiagonalAlignment,
    /// Mask rows >= `seq_len_q[b]` and columns >= `seq_len_kv[b]`.
    pub padding_mask: bool,
    /// ALiBi linear bias with the standard slopes.
    pub alibi_mask: bool,
    /// Philox dropout probability (with the Seed and Offset ports).
    pub dropout_probability: Option<f32>,
    /// Bitwise-reproducible gradients (backward only).
    pub deterministic: bool,
    /// Token count of a packed (ragged) Q layout, for workspace sizing.
    pub max_total_seq_len_q: Option<i64>,
    /// Token count of a packed (ragged) K/V layout, for workspace sizing.
    pub max_total_seq_len_kv: Option<i64>,
}

impl SdpaOptions {
    /// True when a right bound is set (causal-like masking).
    pub fn is_causal_like(&self) -> bool {
        self.right_bound.is_some()
    }

    /// True for bottom-right causal-like masking.
    pub fn is_bottom_right(&self) -> bool {
        self.right_bound.is_some() && self.diagonal_alignment == DiagonalAlignment::BottomRight
    }

    /// The JSON names of the options that differ from their defaults, in key order.
    pub fn set_options(&self) -> Vec<&'static str> {
        let set = [
            ("alibi_mask", self.alibi_mask),
            ("attn_scale", self.attn_scale.is_some()),
            ("deterministic", self.deterministic),
            (
                "diagonal_alignment",
                self.diagonal_alignment != DiagonalAlignment::TopLeft,
            ),
            ("dropout_probability", self.dropout_probability.is_some()),
            ("left_bound", self.left_bound.is_some()),
            ("max_total_seq_len_kv", self.max_total_seq_len_kv.is_some()),
            ("max_total_seq_len_q", self.max_total_seq_len_q.is_some()),
            ("padding_mask", self.padding_mask),
            ("right_bound", self.right_bound.is_some()),
        ];
        set.into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect()
    }
}

/// Attributes shared by both builders: the options plus the optional input ports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SdpaCommon {
    pub(crate) name: Option<String>,
    pub(crate) options: SdpaOptions,
    pub(crate) inputs: Vec<(Port, TensorId)>,
}

macro_rules! common_setters {
    ($ty:ident) => {
        impl $ty {
            /// Node name; output tensors are named `<name>::<port>`.
            pub fn name(mut self, name: impl Into<String>) -> Self {
                self.common.name = Some(name.into());
                self
            }
            /// Score scale by value (default 1/sqrt(Dqk)).
            pub fn attn_scale(mut self, scale: f32) -> Self {
                self.common.options.attn_scale = Some(scale);
                self
            }
            /// Score scale as a (1,1,1,1) f32 tensor, usually passed by value.
            pub fn attn_scale_tensor(self, scale: TensorId) -> Self {
                self.input(Port::AttnScale, scale)
            }
            /// Causal mask, diagonal at the top-left corner (right bound 0).
            pub fn causal(mut self) -> Self {
                self.common.options.right_bound = Some(0);
                self.common.options.diagonal_alignment = DiagonalAlignment::TopLeft;
                self
            }
            /// Causal mask, diagonal at the bottom-right corner (right bound 0).
            pub fn causal_bottom_right(mut self) -> Self {
                self.common.options.right_bound = Some(0);
                self.common.options.diagonal_alignment = DiagonalAlignment::BottomRight;
                self
            }
            /// Sliding window: keep keys j with j > i + shift - `left_bound`.
            pub fn left_bound(mut self, left_bound: i64) -> Self {
                self.common.options.left_bound = Some(left_bound);
                self
            }
            /// Keep keys j with j <= i + shift + `right_bound`.
            pub fn right_bound(mut self, right_bound: i64) -> Self {
                self.common.options.right_bound = Some(right_bound);
                self
            }
            /// Alignment of the diagonal band.
            pub fn diagonal_alignment(mut self, alignment: DiagonalAlignment) -> Self {
                self.common.options.diagonal_alignment = alignment;
                self
            }
            /// Additive bias (1|B, 1|Hq, Sq, Skv).
            pub fn bias(self, bias: TensorId) -> Self {
                self.input(Port::Bias, bias)
            }
            /// Padding mask with per-batch sequence lengths (B,1,1,1) i32.
            pub fn padding(mut self, seq_len_q: TensorId, seq_len_kv: TensorId) -> Self {
                self.common.options.padding_mask = true;
                self.input(Port::SeqLenQ, seq_len_q)
                    .input(Port::SeqLenKv, seq_len_kv)
            }
            /// ALiBi bias (needs a causal mask).
            pub fn alibi(mut self) -> Self {
                self.common.options.alibi_mask = true;
                self
            }
            /// Attention-sink logits (1, Hq, 1, 1) f32.
            pub fn sink(self, sink: TensorId) -> Self {
                self.input(Port::Sink, sink)
            }
            /// Philox dropout with probability `probability`.
            pub fn dropout(mut self, probability: f32, seed: TensorId, offset: TensorId) -> Self {
                self.common.options.dropout_probability = Some(probability);
                self.input(Port::Seed, seed).input(Port::Offset, offset)
            }
            /// Token counts of packed (ragged) layouts, for workspace sizing.
            pub fn max_total_seq_len(mut self, q: Option<i64>, kv: Option<i64>) -> Self {
                self.common.options.max_total_seq_len_q = q;
                self.common.options.max_total_seq_len_kv = kv;
                self
            }
            /// Attaches any optional input port directly.
            pub fn input(mut self, port: Port, tensor: TensorId) -> Self {
                self.common.inputs.retain(|(p, _)| *p != port);
                self.common.inputs.push((port, tensor));
                self
            }
        }
    };
}

/// Attributes of an SDPA forward node (O and, optionally, Stats).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SdpaForwardAttrs {
    pub(crate) common: SdpaCommon,
    pub(crate) generate_stats: bool,
}

impl SdpaForwardAttrs {
    /// Default attributes: no mask, no bias, default scale, no Stats output.
    pub fn new() -> Self {
        Self::default()
    }
    /// Also produce Stats (the log-sum-exp a backward needs).
    pub fn generate_stats(mut self) -> Self {
        self.generate_stats = true;
        self
    }
    /// Custom dropout mask and scale.
    pub fn dropout_mask(self, mask: TensorId, scale: TensorId) -> Self {
        self.input(Port::DropoutMask, mask)
            .input(Port::DropoutScale, scale)
    }
}
common_setters!(SdpaForwardAttrs);

/// Attributes of an SDPA backward node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SdpaBackwardAttrs {
    pub(crate) common: SdpaCommon,
    pub(crate) dbias: bool,
    pub(crate) dsink: bool,
    pub(crate) rng_dump: bool,
}

impl SdpaBackwardAttrs {
    /// Default attributes: no mask, no bias, default scale, non-deterministic.
    pub fn new() -> Self {
        Self::default()
    }
    /// Also produce dBias (needs a bias), shaped like the bias.
    pub fn dbias(mut self) -> Self {
        self.dbias = true;
        self
    }
    /// Also produce dSink (needs a sink).
    pub fn dsink(mut self) -> Self {
        self.dsink = true;
        self
    }
    /// Also dump the Philox dropout mask.
    pub fn rng_dump(mut self) -> Self {
        self.rng_dump = true;
        self
    }
    /// Bitwise-reproducible gradients.
    pub fn deterministic(mut self) -> Self {
        self.common.options.deterministic = true;
        self
    }
    /// Custom dropout mask with scale and inverse scale.
    pub fn dropout_mask(self, mask: TensorId, scale: TensorId, scale_inv: TensorId) -> Self {
        self.input(Port::DropoutMask, mask)
            .input(Port::DropoutScale, scale)
            .input(Port::DropoutScaleInv, scale_inv)
    }
}
common_setters!(SdpaBackwardAttrs);
