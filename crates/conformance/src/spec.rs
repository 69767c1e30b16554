//! [`CaseSpec`]: one attention problem of the harness (sizes, dtype, layout, band, bias, ALiBi,
//! padding, sink, determinism) and the graphs built from it — the one place every harness table
//! (the sweep, the edge cases, the benchmark and determinism suites) makes its graphs, with the
//! graph builders a user has.

use rime_analyzer::Band;
use rime_graph::{
    Context, DataType, DiagonalAlignment, Graph, GraphError, NodeId, SdpaBackwardAttrs,
    SdpaForwardAttrs, Tensor, TensorId,
};

/// Physical layout of the io tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// (B, H, S, D) packed.
    Bhsd,
    /// (B, S, H, D) packed (heads interleaved in each row).
    Bshd,
    /// THD: ragged (packed variable-length) tokens. Every token tensor (Q, K, V, O, dO, dQ, dK,
    /// dV, Stats) has BSHD strides (token stride H x D, head stride D) and i64 ragged offsets
    /// that pack each sequence's real tokens one after another: the padding lengths when the
    /// spec has them (else every sequence is Sq / Skv tokens long), offsets = prefix sums of
    /// length x token stride ([`CaseSpec::ragged_offsets`]), max_total_seq_len_q/kv = the
    /// tokens in all. Bias and Sink stay dense.
    Thd,
}

impl Layout {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Bhsd => "bhsd",
            Layout::Bshd => "bshd",
            Layout::Thd => "thd",
        }
    }
}

/// Top-left causal.
pub const CAUSAL: Band = Band {
    left: None,
    right: Some(0),
    bottom_right: false,
};

/// Bottom-right causal.
pub const CAUSAL_BOTTOM_RIGHT: Band = Band {
    left: None,
    right: Some(0),
    bottom_right: true,
};

/// An additive bias: which of the batch and head dims it has (the others broadcast).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiasSpec {
    /// Batch dim B (else 1).
    pub per_batch: bool,
    /// Head dim Hq (else 1).
    pub per_head: bool,
}

/// One attention problem of the harness.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSpec {
    /// Batch.
    pub b: usize,
    /// Query heads.
    pub hq: usize,
    /// K / V heads.
    pub hk: usize,
    /// Query length.
    pub sq: usize,
    /// Key length.
    pub skv: usize,
    /// Q/K head dim.
    pub dqk: usize,
    /// V head dim.
    pub dv: usize,
    /// io type (f16 or bf16).
    pub io: DataType,
    /// io tensor layout.
    pub layout: Layout,
    /// Mask band, as the graph's options give it (the analyzer normalises it).
    pub band: Band,
    /// Bias, if any.
    pub bias: Option<BiasSpec>,
    /// dBias asked for (needs a bias).
    pub dbias: bool,
    /// ALiBi.
    pub alibi: bool,
    /// Per-batch (Q, KV) lengths of a padding mask.
    pub padding: Option<(Vec<usize>, Vec<usize>)>,
    /// Attention sink, with dSink.
    pub sink: bool,
    /// Attention scale (default 1/sqrt(Dqk)).
    pub scale: Option<f32>,
    /// Deterministic backward.
    pub deterministic: bool,
}

impl CaseSpec {
    /// True when dBias sums over a broadcast of the bias (batch or heads): the graphs the
    /// ordered_dbias route exists for.
    pub fn reduces_dbias(&self) -> bool {
        self.dbias
            && self
                .bias
                .is_some_and(|x| (!x.per_batch && self.b > 1) || (!x.per_head && self.hq > 1))
    }

    /// B x Hq x Sq x D self-attention (Hk = Hq, Skv = Sq), bf16 BHSD, nothing else.
    pub fn new(b: usize, hq: usize, hk: usize, sq: usize, skv: usize, d: usize) -> Self {
        Self {
            b,
            hq,
            hk,
            sq,
            skv,
            dqk: d,
            dv: d,
            io: DataType::Bf16,
            layout: Layout::Bhsd,
            band: Band::default(),
            bias: None,
            dbias: false,
            alibi: false,
            padding: None,
            sink: false,
            scale: None,
            deterministic: false,
        }
    }

    /// The bias dims (B or 1, Hq or 1, Sq, Skv).
    pub fn bias_dims(&self) -> Option<[usize; 4]> {
        self.bias.map(|b| {
            [
                if b.per_batch { self.b } else { 1 },
                if b.per_head { self.hq } else { 1 },
                self.sq,
                self.skv,
            ]
        })
    }

    /// The scale the graph applies.
    pub fn scale(&self) -> f64 {
        self.scale
            .map_or_else(|| 1.0 / (self.dqk as f64).sqrt(), f64::from)
    }

    /// The per-batch (Q, KV) token counts: the padding lengths, else Sq and Skv for every batch.
    pub fn token_lengths(&self) -> (Vec<usize>, Vec<usize>) {
        self.padding
            .clone()
            .unwrap_or_else(|| (vec![self.sq; self.b], vec![self.skv; self.b]))
    }

    /// The values of a THD graph's offsets tensor `name` (`Q_OFFSETS` for Q and dQ, `K_OFFSETS`
    /// for K and dK, `V_OFFSETS` for V and dV, `O_OFFSETS` for O and dO, `STATS_OFFSETS`): B + 1
    /// exclusive prefix sums of each sequence's tokens x the tensor's token stride, no gaps.
    /// `None` for another name or layout.
    pub fn ragged_offsets(&self, name: &str) -> Option<Vec<usize>> {
        if self.layout != Layout::Thd {
            return None;
        }
        let (q, kv) = self.token_lengths();
        let (lengths, token_stride) = match name {
            "Q_OFFSETS" => (q, self.hq * self.dqk),
            "K_OFFSETS" => (kv, self.hk * self.dqk),
            "V_OFFSETS" => (kv, self.hk * self.dv),
            "O_OFFSETS" => (q, self.hq * self.dv),
            "STATS_OFFSETS" => (q, self.hq),
            _ => return None,
        };
        let mut offsets = vec![0];
        let mut end = 0;
        for n in lengths {
            end += n * token_stride;
            offsets.push(end);
        }
        Some(offsets)
    }

    /// Backward FLOPs as reports count them: 10 * B * Hq * Sq * Skv * Dqk, halved for causal.
    /// A THD layout counts only the real tokens: 10 * Hq * Dqk * sum over b of Lq[b] * Lkv[b]
    /// (halved for causal the same way).
    pub fn backward_flops(&self) -> f64 {
        let pairs = if self.layout == Layout::Thd {
            let (q, kv) = self.token_lengths();
            q.iter().zip(&kv).map(|(a, b)| a * b).sum()
        } else {
            self.b * self.sq * self.skv
        };
        let f = 10.0 * (pairs * self.hq * self.dqk) as f64;
        if self.band.right == Some(0) {
            f / 2.0
        } else {
            f
        }
    }

    /// A forward node (`fwd`, writing O and Stats) and the backward node (`bwd`) reading them.
    ///
    /// # Errors
    /// The graph builder's errors (none for sizes >= 1).
    pub fn graph(&self) -> Result<CaseGraph, GraphError> {
        self.build(true, true, true)
    }

    /// The backward node alone: O and Stats are inputs.
    ///
    /// # Errors
    /// As [`Self::graph`].
    pub fn backward_graph(&self) -> Result<CaseGraph, GraphError> {
        self.build(false, true, true)
    }

    /// The forward node alone.
    ///
    /// # Errors
    /// As [`Self::graph`].
    pub fn forward_graph(&self) -> Result<CaseGraph, GraphError> {
        self.build(true, false, true)
    }

    /// The forward node alone, without a Stats output (inference).
    ///
    /// # Errors
    /// As [`Self::graph`].
    pub fn inference_graph(&self) -> Result<CaseGraph, GraphError> {
        self.build(true, false, false)
    }

    fn build(&self, forward: bool, backward: bool, stats: bool) -> Result<CaseGraph, GraphError> {
        let mut c = CaseGraph {
            graph: Graph::new(Context::with_io(self.io)),
            ids: Vec::new(),
            forward: None,
            backward: None,
        };
        let dims = |h: usize, s: usize, d: usize| [self.b, h, s, d].map(to_i64);
        let ragged = (self.layout == Layout::Thd).then(|| {
            let mut t = |n: &'static str| {
                let dims = [to_i64(self.b) + 1, 1, 1, 1];
                c.add(n, Tensor::packed(n, &dims).with_data_type(DataType::I64))
            };
            RaggedIds {
                q: t("Q_OFFSETS"),
                k: t("K_OFFSETS"),
                v: t("V_OFFSETS"),
                o: t("O_OFFSETS"),
                stats: t("STATS_OFFSETS"),
            }
        });
        let io = |name: &str, h: usize, s: usize, d: usize| match (self.layout, ragged) {
            (Layout::Bhsd, _) => Tensor::packed(name, &dims(h, s, d)),
            (Layout::Thd, Some(r)) => {
                Tensor::bshd(name, dims(h, s, d)).with_ragged_offset(r.of(name))
            }
            (Layout::Bshd | Layout::Thd, _) => Tensor::bshd(name, dims(h, s, d)),
        };
        let q = c.add("Q", io("Q", self.hq, self.sq, self.dqk));
        let k = c.add("K", io("K", self.hk, self.skv, self.dqk));
        let v = c.add("V", io("V", self.hk, self.skv, self.dv));
        let bias = self
            .bias_dims()
            .map(|d| c.add("Bias", Tensor::packed("Bias", &d.map(to_i64))));
        let lens = self.padding.as_ref().map(|_| {
            let t = |n: &str| {
                Tensor::packed(n, &[to_i64(self.b), 1, 1, 1]).with_data_type(DataType::I32)
            };
            (
                c.add("SEQ_LEN_Q", t("SEQ_LEN_Q")),
                c.add("SEQ_LEN_KV", t("SEQ_LEN_KV")),
            )
        });
        let sink = self.sink.then(|| {
            let t = Tensor::packed("Sink", &[1, to_i64(self.hq), 1, 1]);
            c.add("Sink", t.with_data_type(DataType::F32))
        });
        let options = Options {
            spec: self,
            bias,
            lens,
            thd: ragged.is_some(),
        };
        let (o, stats) = if forward {
            let mut a = options.apply(SdpaForwardAttrs::new().name("fwd"));
            if stats {
                a = a.generate_stats();
            }
            if let Some(s) = sink {
                a = a.sink(s);
            }
            let out = c.graph.sdpa_forward(q, k, v, a)?;
            if let Some(r) = ragged {
                c.make_thd(out.o, r.o);
                if let Some(s) = out.stats {
                    c.make_thd(s, r.stats);
                }
            }
            c.forward = c.graph.node_ids().last();
            c.ids.push(("O", out.o));
            c.ids.extend(out.stats.map(|id| ("Stats", id)));
            if !backward {
                return Ok(c);
            }
            let stats = out.stats.ok_or(GraphError::MissingPort {
                node: "fwd".to_owned(),
                port: rime_graph::Port::Stats,
            })?;
            (out.o, stats)
        } else {
            let o = c.add("O", io("O", self.hq, self.sq, self.dv));
            let stats = match ragged {
                Some(r) => {
                    Tensor::bshd("Stats", dims(self.hq, self.sq, 1)).with_ragged_offset(r.stats)
                }
                None => Tensor::packed("Stats", &dims(self.hq, self.sq, 1)),
            };
            (o, c.add("Stats", stats.with_data_type(DataType::F32)))
        };
        if backward {
            let d_o = c.add("dO", io("dO", self.hq, self.sq, self.dv));
            let mut a = options.apply(SdpaBackwardAttrs::new().name("bwd"));
            if self.dbias {
                a = a.dbias();
            }
            if let Some(s) = sink {
                a = a.sink(s).dsink();
            }
            if self.deterministic {
                a = a.deterministic();
            }
            let g = c.graph.sdpa_backward(q, k, v, o, d_o, stats, a)?;
            if let Some(r) = ragged {
                c.make_thd(g.dq, r.q);
                c.make_thd(g.dk, r.k);
                c.make_thd(g.dv, r.v);
            }
            c.backward = c.graph.node_ids().last();
            c.ids.extend([("dQ", g.dq), ("dK", g.dk), ("dV", g.dv)]);
            c.ids.extend(g.dbias.map(|id| ("dBias", id)));
            c.ids.extend(g.dsink.map(|id| ("dSink", id)));
        }
        Ok(c)
    }
}

/// The offsets tensors of a THD graph.
#[derive(Debug, Clone, Copy)]
struct RaggedIds {
    q: TensorId,
    k: TensorId,
    v: TensorId,
    o: TensorId,
    stats: TensorId,
}

impl RaggedIds {
    /// The offsets of the token tensor named `name` (its gradient shares them).
    fn of(&self, name: &str) -> TensorId {
        match name {
            "K" => self.k,
            "V" => self.v,
            "O" | "dO" => self.o,
            "Stats" => self.stats,
            _ => self.q,
        }
    }
}

fn to_i64(x: usize) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// A case's graph and its tensors by port name (`Q`, `Stats`, `SEQ_LEN_Q`, `dBias`, ...).
#[derive(Debug, Clone)]
pub struct CaseGraph {
    /// The graph.
    pub graph: Graph,
    /// Every tensor, by port name.
    pub ids: Vec<(&'static str, TensorId)>,
    /// The forward node, when built.
    pub forward: Option<NodeId>,
    /// The backward node, when built.
    pub backward: Option<NodeId>,
}

impl CaseGraph {
    /// Gives the node-made tensor `id` THD strides (BSHD) and `offsets` as its ragged offsets.
    fn make_thd(&mut self, id: TensorId, offsets: TensorId) {
        if let Some(t) = self.graph.get_mut(id) {
            if let Ok(dims) = <[i64; 4]>::try_from(t.dims.as_slice()) {
                t.strides = Tensor::bshd("", dims).strides;
            }
            t.ragged_offset = Some(offsets);
        }
    }

    fn add(&mut self, name: &'static str, t: Tensor) -> TensorId {
        let id = self.graph.tensor(t);
        self.ids.push((name, id));
        id
    }

    /// The tensor named `name`.
    pub fn id(&self, name: &str) -> Option<TensorId> {
        self.ids.iter().find(|(n, _)| *n == name).map(|(_, id)| *id)
    }

    /// The port name of tensor `id`.
    pub fn name_of(&self, id: TensorId) -> &'static str {
        self.ids
            .iter()
            .find(|(_, t)| *t == id)
            .map_or("?", |(n, _)| *n)
    }
}

/// The options both nodes share.
struct Options<'a> {
    spec: &'a CaseSpec,
    bias: Option<TensorId>,
    lens: Option<(TensorId, TensorId)>,
    /// THD: the token totals are given (max_total_seq_len_q/kv).
    thd: bool,
}

impl Options<'_> {
    fn apply<A: Attrs>(&self, mut a: A) -> A {
        let s = self.spec;
        if let Some(scale) = s.scale {
            a = a.scale(scale);
        }
        if let Some(r) = s.band.right {
            a = a.right(r);
        }
        if let Some(l) = s.band.left {
            a = a.left(l);
        }
        if s.band.bottom_right {
            a = a.alignment(DiagonalAlignment::BottomRight);
        }
        if let Some(b) = self.bias {
            a = a.with_bias(b);
        }
        if let Some((q, kv)) = self.lens {
            a = a.with_padding(q, kv);
        }
        if s.alibi {
            a = a.with_alibi();
        }
        if self.thd {
            let (q, kv) = s.token_lengths();
            let total = |l: Vec<usize>| Some(to_i64(l.iter().sum()));
            a = a.with_max_total(total(q), total(kv));
        }
        a
    }
}

/// The option setters both attribute builders have.
trait Attrs: Sized {
    fn scale(self, scale: f32) -> Self;
    fn right(self, bound: i64) -> Self;
    fn left(self, bound: i64) -> Self;
    fn alignment(self, a: DiagonalAlignment) -> Self;
    fn with_bias(self, bias: TensorId) -> Self;
    fn with_padding(self, q: TensorId, kv: TensorId) -> Self;
    fn with_alibi(self) -> Self;
    fn with_max_total(self, q: Option<i64>, kv: Option<i64>) -> Self;
}

macro_rules! attrs {
    ($ty:ty) => {
        impl Attrs for $ty {
            fn scale(self, scale: f32) -> Self {
                self.attn_scale(scale)
            }
            fn right(self, bound: i64) -> Self {
                self.right_bound(bound)
            }
            fn left(self, bound: i64) -> Self {
                self.left_bound(bound)
            }
            fn alignment(self, a: DiagonalAlignment) -> Self {
                self.diagonal_alignment(a)
            }
            fn with_bias(self, bias: TensorId) -> Self {
                self.bias(bias)
            }
            fn with_padding(self, q: TensorId, kv: TensorId) -> Self {
                self.padding(q, kv)
            }
            fn with_alibi(self) -> Self {
                self.alibi()
            }
            fn with_max_total(self, q: Option<i64>, kv: Option<i64>) -> Self {
                self.max_total_seq_len(q, kv)
            }
        }
    };
}
attrs!(SdpaForwardAttrs);
attrs!(SdpaBackwardAttrs);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_validate_and_name_every_tensor() {
        let mut s = CaseSpec::new(2, 4, 2, 33, 65, 64);
        s.layout = Layout::Bshd;
        s.band = CAUSAL_BOTTOM_RIGHT;
        s.padding = Some((vec![33, 20], vec![65, 40]));
        s.sink = true;
        let inference = s.inference_graph().expect("graph");
        assert!(inference.id("Stats").is_none() && inference.backward.is_none());
        for g in [s.graph(), s.backward_graph(), s.forward_graph()] {
            let g = g.expect("graph");
            assert!(g.graph.validate().is_ok(), "{:?}", g.graph.validate());
            for name in ["Q", "K", "V", "O", "Stats", "SEQ_LEN_Q", "Sink"] {
                assert!(g.id(name).is_some(), "{name}");
            }
        }
        let both = s.graph().expect("graph");
        assert!(both.forward.is_some() && both.backward.is_some());
        assert_eq!(both.name_of(both.id("dQ").expect("dQ")), "dQ");
        let mut b = CaseSpec::new(2, 4, 4, 16, 16, 64);
        b.bias = Some(BiasSpec {
            per_batch: false,
            per_head: true,
        });
        b.dbias = true;
        b.band = CAUSAL;
        assert_eq!(b.bias_dims(), Some([1, 4, 16, 16]));
        assert!(b.backward_graph().expect("graph").id("dBias").is_some());
        assert_eq!(
            b.backward_flops(),
            10.0 * (2 * 4 * 16 * 16 * 64) as f64 / 2.0
        );
    }
}
