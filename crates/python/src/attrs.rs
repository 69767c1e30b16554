//! The options and optional inputs both SDPA builders share (scale, mask band, ALiBi, bias,
//! padding, sink), gathered once by the functional API and by `Graph.sdpa` /
//! `Graph.sdpa_backward`, and applied to either attribute builder by [`common!`].

use rime_graph::{DiagonalAlignment, TensorId};

/// What an SDPA node takes besides Q, K, V (and O, dO, Stats for a backward).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Common {
    /// Node name.
    pub name: Option<String>,
    /// Scale by value (default 1/sqrt(Dqk)).
    pub scale: Option<f32>,
    /// Scale as a (1,1,1,1) f32 tensor.
    pub scale_tensor: Option<TensorId>,
    /// Keep j > i + shift - left (sliding window).
    pub left_bound: Option<i64>,
    /// Keep j <= i + shift + right (0: causal).
    pub right_bound: Option<i64>,
    /// Where the band's diagonal starts.
    pub alignment: DiagonalAlignment,
    /// ALiBi slopes.
    pub alibi: bool,
    /// Additive bias.
    pub bias: Option<TensorId>,
    /// Padding mask: (query lengths, key/value lengths).
    pub padding: Option<(TensorId, TensorId)>,
    /// Attention-sink logits.
    pub sink: Option<TensorId>,
    /// Tokens the packed (THD) query and key/value tensors hold (`max_total_seq_len_q/kv`;
    /// None: not set).
    pub max_total: (Option<i64>, Option<i64>),
}

/// `$attrs` (an `SdpaForwardAttrs` or `SdpaBackwardAttrs`) with every option of `$c`
/// (a [`Common`]) applied.
macro_rules! common {
    ($attrs:expr, $c:expr) => {{
        let c: &$crate::attrs::Common = $c;
        let mut a = $attrs.diagonal_alignment(c.alignment);
        if let Some(n) = &c.name {
            a = a.name(n.clone());
        }
        if let Some(s) = c.scale {
            a = a.attn_scale(s);
        }
        if let Some(t) = c.scale_tensor {
            a = a.attn_scale_tensor(t);
        }
        if let Some(l) = c.left_bound {
            a = a.left_bound(l);
        }
        if let Some(r) = c.right_bound {
            a = a.right_bound(r);
        }
        if c.alibi {
            a = a.alibi();
        }
        if let Some(b) = c.bias {
            a = a.bias(b);
        }
        if let Some((q, kv)) = c.padding {
            a = a.padding(q, kv);
        }
        if let Some(s) = c.sink {
            a = a.sink(s);
        }
        a.max_total_seq_len(c.max_total.0, c.max_total.1)
    }};
}
pub(crate) use common;

/// The alignment named `name` ("top_left", "bottom_right", or the cuDNN names).
pub fn alignment(name: &str) -> Option<DiagonalAlignment> {
    match name.to_ascii_lowercase().as_str() {
        "top_left" => Some(DiagonalAlignment::TopLeft),
        "bottom_right" => Some(DiagonalAlignment::BottomRight),
        _ => None,
    }
}
