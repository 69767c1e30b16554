//! A plain description of an SDPA graph (sizes and options) and the one builder that turns it
//! into a [`Graph`]: shared by the property tests (`tests/properties.rs`, proptest fills the
//! spec) and the structure-aware fuzz target (`fuzz/`, libFuzzer's bytes fill it), so both
//! explore the same space through the same code.
//!
//! Every spec builds a structurally valid graph (`Graph::validate` passes); whether an engine
//! supports it is the analyzer's question.

#![allow(dead_code)] // each includer uses its own subset

use rime_graph::{
    Context, DataType, DiagonalAlignment, Graph, SdpaBackwardAttrs, SdpaForwardAttrs, Tensor,
    TensorId,
};

/// The mask of the node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaskSpec {
    /// No mask.
    None,
    /// Causal (right bound 0), top-left or bottom-right.
    Causal {
        /// Diagonal at the bottom-right corner.
        bottom_right: bool,
    },
    /// A band: optional left bound (>= 1 when well-formed) and right bound (>= 0).
    Band {
        /// Sliding-window width.
        left: Option<i64>,
        /// Keys past the diagonal kept.
        right: i64,
        /// Diagonal at the bottom-right corner.
        bottom_right: bool,
    },
}

/// The additive bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BiasSpec {
    /// Batch dim B (else 1, broadcast).
    pub per_batch: bool,
    /// Head dim Hq (else 1, broadcast).
    pub per_head: bool,
    /// Request dBias.
    pub dbias: bool,
}

/// How the attention scale is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScaleSpec {
    /// Neither option nor tensor: 1/sqrt(Dqk).
    Default,
    /// The `attn_scale` option.
    Value(f32),
    /// A pass-by-value `Attn_scale` tensor.
    Tensor(f32),
}

/// Sizes and options of one SDPA backward node (optionally fed by its forward twin).
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSpec {
    /// f16 or bf16.
    pub io: DataType,
    /// B.
    pub batch: i64,
    /// Hk = Hv.
    pub heads_kv: i64,
    /// Hq / Hk (GQA group size; 1 = MHA).
    pub group: i64,
    /// Sq.
    pub seq_q: i64,
    /// Skv.
    pub seq_kv: i64,
    /// Dqk.
    pub d_qk: i64,
    /// Dv.
    pub d_v: i64,
    /// BSHD strides for Q/K/V/O/dO instead of BHSD.
    pub bshd: bool,
    /// Mask.
    pub mask: MaskSpec,
    /// Bias, if any.
    pub bias: Option<BiasSpec>,
    /// Padding mask with SEQ_LEN_Q / SEQ_LEN_KV tensors.
    pub padding: bool,
    /// ALiBi.
    pub alibi: bool,
    /// Attention sink; `Some(true)` also requests dSink.
    pub sink: Option<bool>,
    /// Attention scale.
    pub scale: ScaleSpec,
    /// Deterministic backward.
    pub deterministic: bool,
    /// O and Stats come from a forward node of the same graph instead of being inputs.
    pub forward_twin: bool,
    /// Give every tensor a uid (1, 2, ...).
    pub uids: bool,
}

impl GraphSpec {
    /// Hq.
    pub fn heads_q(&self) -> i64 {
        self.heads_kv.saturating_mul(self.group)
    }

    /// The graph: tensors Q, K, V, (O, dO, Stats), options, one backward node `bwd` (and
    /// `fwd` when `forward_twin`).
    pub fn build(&self) -> Graph {
        let mut g = Graph::new(Context::with_io(self.io));
        g.context.name = "spec".to_owned();
        let (b, hq, hk) = (self.batch, self.heads_q(), self.heads_kv);
        let (sq, skv) = (self.seq_q, self.seq_kv);
        let operand = |name: &str, h: i64, s: i64, d: i64| {
            if self.bshd {
                Tensor::bshd(name, [b, h, s, d])
            } else {
                Tensor::packed(name, &[b, h, s, d])
            }
        };
        let q = g.tensor(operand("Q", hq, sq, self.d_qk));
        let k = g.tensor(operand("K", hk, skv, self.d_qk));
        let v = g.tensor(operand("V", hk, skv, self.d_v));
        let d_o = g.tensor(operand("dO", hq, sq, self.d_v));

        let mut fwd = SdpaForwardAttrs::new().name("fwd").generate_stats();
        let mut bwd = SdpaBackwardAttrs::new().name("bwd");
        macro_rules! both {
            ($method:ident $(, $arg:expr)*) => {{
                fwd = fwd.$method($($arg),*);
                bwd = bwd.$method($($arg),*);
            }};
        }
        match self.mask {
            MaskSpec::None => {}
            MaskSpec::Causal { bottom_right } => {
                if bottom_right {
                    both!(causal_bottom_right)
                } else {
                    both!(causal)
                }
            }
            MaskSpec::Band {
                left,
                right,
                bottom_right,
            } => {
                both!(right_bound, right);
                if let Some(left) = left {
                    both!(left_bound, left);
                }
                if bottom_right {
                    both!(diagonal_alignment, DiagonalAlignment::BottomRight);
                }
            }
        }
        let mut dbias = false;
        if let Some(bias) = self.bias {
            let dims = [
                if bias.per_batch { b } else { 1 },
                if bias.per_head { hq } else { 1 },
                sq,
                skv,
            ];
            let id = g.tensor(Tensor::packed("bias", &dims));
            both!(bias, id);
            dbias = bias.dbias;
        }
        if self.padding {
            let lens =
                |name: &str| Tensor::packed(name, &[b, 1, 1, 1]).with_data_type(DataType::I32);
            let (lq, lkv) = (g.tensor(lens("seq_len_q")), g.tensor(lens("seq_len_kv")));
            both!(padding, lq, lkv);
        }
        if self.alibi {
            both!(alibi);
        }
        let mut dsink = false;
        if let Some(with_grad) = self.sink {
            let t = Tensor::packed("sink", &[1, hq, 1, 1]).with_data_type(DataType::F32);
            let id = g.tensor(t);
            both!(sink, id);
            dsink = with_grad;
        }
        match self.scale {
            ScaleSpec::Default => {}
            ScaleSpec::Value(s) => both!(attn_scale, s),
            ScaleSpec::Tensor(s) => {
                let id = g.tensor(Tensor::scalar_f32("attn_scale", s));
                both!(attn_scale_tensor, id);
            }
        }
        if self.deterministic {
            bwd = bwd.deterministic();
        }
        if dbias {
            bwd = bwd.dbias();
        }
        if dsink {
            bwd = bwd.dsink();
        }

        let (o, stats) = if self.forward_twin {
            let out = g.sdpa_forward(q, k, v, fwd).expect("ids of this graph");
            let stats = out.stats.expect("generate_stats was asked for");
            (out.o, stats)
        } else {
            let o = g.tensor(operand("O", hq, sq, self.d_v));
            let stats = Tensor::packed("Stats", &[b, hq, sq, 1]).with_data_type(DataType::F32);
            (o, g.tensor(stats))
        };
        g.sdpa_backward(q, k, v, o, d_o, stats, bwd)
            .expect("ids of this graph");
        if self.uids {
            let ids: Vec<TensorId> = g.tensor_ids().collect();
            for (uid, id) in (1..).zip(ids) {
                if let Some(t) = g.get_mut(id) {
                    t.uid = Some(uid);
                }
            }
        }
        g
    }
}
