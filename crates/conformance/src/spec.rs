//! [`CaseSpec`]: one attention problem of the harness (sizes, dtype, layout, band, bias, ALiBi,
//! padding, sink, determinism) and the graphs built from it — the one place every harness table
//! (the sweep, the edge cases, the benchmark and determinism suites) makes its graphs, with the
//! graph builders a user has.

use rime_analyzer::Band;
use rime_engines::cpu::{logical_elements, sequence_extent, View4};
use rime_graph::{
    Context, DataType, DiagonalAlignment, Graph, GraphError, NodeId, SdpaBackwardAttrs,
    SdpaForwardAttrs, Sequence, Tensor, TensorId,
};

/// Physical layout of the io tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// (B, H, S, D) packed.
    Bhsd,
    /// (B, S, H, D) packed (heads interleaved in each row).
    Bshd,
    /// Ragged THD (cuDNN's packed variable-length layout): every token tensor (Q, K, V, O,
    /// dO, Stats, dQ, dK, dV) holds only its sequences' real tokens, token stride H x D, head
    /// stride D, at per-batch offsets that leave [`THD_GAP`] elements after every sequence;
    /// Bias, dBias and Sink stay dense.
    Thd,
}

/// Elements a THD buffer leaves free after each sequence and after its last offset: one
/// 16-byte row of bf16/f16, so that every sequence of a tensor whose token stride is a multiple
/// of 8 elements starts 16-byte aligned (what the SM120 engine requires of io offsets), while
/// the gaps, NaN in inputs and poison in outputs, show any read or write outside real tokens.
pub const THD_GAP: usize = 8;

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
    /// With [`Layout::Thd`], set `max_total_seq_len_q/kv` to the least each sequence side's
    /// offsets allow (the engines refuse a last offset past total x token stride).
    pub max_total_seq_len: bool,
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
            max_total_seq_len: false,
        }
    }

    /// The real tokens of every batch on one side: the padding mask's lengths, else the full
    /// length (only a ragged layout distinguishes them from the dims).
    pub fn tokens(&self, side: Sequence) -> Vec<usize> {
        match (side, &self.padding) {
            (Sequence::Q, Some((q, _))) => q.clone(),
            (Sequence::Kv, Some((_, kv))) => kv.clone(),
            (Sequence::Q, None) => vec![self.sq; self.b],
            (Sequence::Kv, None) => vec![self.skv; self.b],
        }
    }

    /// `max_total_seq_len` of one side for THD offsets: the least total T with every ragged
    /// tensor's last offset <= T x its token stride, i.e. the real tokens plus the gaps
    /// measured in tokens of the side's narrowest tensor (Stats, H elements a token, when the
    /// graph has it). Equal to the bound, so that the engines' check is met exactly.
    fn max_total(&self, side: Sequence, stats: bool) -> i64 {
        let strides = match side {
            Sequence::Q if stats => vec![self.hq * self.dqk, self.hq * self.dv, self.hq],
            Sequence::Q => vec![self.hq * self.dqk, self.hq * self.dv],
            Sequence::Kv => vec![self.hk * self.dqk, self.hk * self.dv],
        };
        let tokens: usize = self.tokens(side).iter().sum();
        let gaps = strides
            .into_iter()
            .map(|ts| (self.b * THD_GAP).div_ceil(ts.max(1)))
            .max()
            .unwrap_or(0);
        to_i64(tokens + gaps)
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

    /// Backward FLOPs as reports count them: 10 * Hq * Dqk * the sum over b of `Lq[b] * Lkv[b]`,
    /// halved for causal, where L are the real tokens ([`Self::tokens`]): 10 * B * Hq * Sq *
    /// Skv * Dqk without a padding mask; with one (THD or a padded layout alike) only the
    /// tokens the mask keeps, which are all the kernels compute.
    pub fn backward_flops(&self) -> f64 {
        let (q, kv) = (self.tokens(Sequence::Q), self.tokens(Sequence::Kv));
        let pairs: usize = q.iter().zip(&kv).map(|(a, b)| a * b).sum();
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
            ragged: Vec::new(),
        };
        let dims = |h: usize, s: usize, d: usize| [self.b, h, s, d].map(to_i64);
        let io = |name: &str, h: usize, s: usize, d: usize| match self.layout {
            Layout::Bhsd => Tensor::packed(name, &dims(h, s, d)),
            Layout::Bshd => Tensor::bshd(name, dims(h, s, d)),
            // BSHD strides are THD's within a sequence; `thd` adds the offsets.
            Layout::Thd => Tensor::bshd(name, dims(h, s, d)),
        };
        let q = c.add("Q", io("Q", self.hq, self.sq, self.dqk));
        self.thd(&mut c, "Q", q);
        let k = c.add("K", io("K", self.hk, self.skv, self.dqk));
        self.thd(&mut c, "K", k);
        let v = c.add("V", io("V", self.hk, self.skv, self.dv));
        self.thd(&mut c, "V", v);
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
        let has_stats = stats || backward;
        let max_total = (self.layout == Layout::Thd && self.max_total_seq_len).then(|| {
            (
                self.max_total(Sequence::Q, has_stats),
                self.max_total(Sequence::Kv, has_stats),
            )
        });
        let options = Options {
            spec: self,
            bias,
            lens,
            max_total,
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
            c.forward = c.graph.node_ids().last();
            c.ids.push(("O", out.o));
            self.thd(&mut c, "O", out.o);
            if let Some(id) = out.stats {
                c.ids.push(("Stats", id));
                self.thd(&mut c, "Stats", id);
            }
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
            self.thd(&mut c, "O", o);
            let stats = Tensor::packed("Stats", &dims(self.hq, self.sq, 1));
            let stats = c.add("Stats", stats.with_data_type(DataType::F32));
            self.thd(&mut c, "Stats", stats);
            (o, stats)
        };
        if backward {
            let d_o = c.add("dO", io("dO", self.hq, self.sq, self.dv));
            self.thd(&mut c, "dO", d_o);
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
            c.backward = c.graph.node_ids().last();
            c.ids.extend([("dQ", g.dq), ("dK", g.dk), ("dV", g.dv)]);
            for (name, id) in [("dQ", g.dq), ("dK", g.dk), ("dV", g.dv)] {
                self.thd(&mut c, name, id);
            }
            c.ids.extend(g.dbias.map(|id| ("dBias", id)));
            c.ids.extend(g.dsink.map(|id| ("dSink", id)));
        }
        Ok(c)
    }

    /// With [`Layout::Thd`], makes token tensor `name` (`id`, already in the graph) ragged:
    /// THD strides, the offsets tensor of its side and token stride (added on first use), and
    /// its [`RaggedTensor`] record. Nothing for the other layouts.
    fn thd(&self, c: &mut CaseGraph, name: &str, id: TensorId) {
        if self.layout != Layout::Thd {
            return;
        }
        let (side, offsets) = match name {
            "Q" | "dQ" => (Sequence::Q, "Q_OFFSETS"),
            // O and dO share Q's offsets when their tokens are as wide (Dv = Dqk).
            "O" | "dO" if self.dv == self.dqk => (Sequence::Q, "Q_OFFSETS"),
            "O" | "dO" => (Sequence::Q, "O_OFFSETS"),
            "Stats" => (Sequence::Q, "STATS_OFFSETS"),
            "K" | "dK" => (Sequence::Kv, "K_OFFSETS"),
            "V" | "dV" if self.dv == self.dqk => (Sequence::Kv, "K_OFFSETS"),
            "V" | "dV" => (Sequence::Kv, "V_OFFSETS"),
            _ => return,
        };
        let offsets_id = c.id(offsets).unwrap_or_else(|| {
            // Both index types: the Q side's and V's offsets i32, K's, O's and Stats' i64
            // (so a graph with Dv = Dqk, which shares them, still has one of each).
            let dt = match offsets {
                "Q_OFFSETS" | "V_OFFSETS" => DataType::I32,
                _ => DataType::I64,
            };
            let t = Tensor::packed(offsets, &[to_i64(self.b + 1), 1, 1, 1]);
            c.add(offsets, t.with_data_type(dt))
        });
        let Some(t) = c.graph.get_mut(id) else { return };
        let [b, h, s, d] = [0, 1, 2, 3].map(|i| t.dims.get(i).copied().unwrap_or(1));
        // (B, H, S, D) with token stride H x D and head stride D (the batch stride is unused;
        // it keeps BSHD's, so a dense reading would still not overlap).
        t.strides = vec![s * h * d, d, h * d, 1];
        t.ragged_offset = Some(offsets_id);
        let dim = |x: i64| usize::try_from(x).unwrap_or(0);
        let view = View4 {
            dims: [b, h, s, d].map(dim),
            strides: [s * h * d, d, h * d, 1].map(dim),
        };
        let tokens = self.tokens(side);
        let mut starts = vec![0usize];
        for &n in &tokens {
            let extent = sequence_extent(&view, n).unwrap_or(usize::MAX);
            let last = starts.last().copied().unwrap_or(0);
            starts.push(last.saturating_add(extent).saturating_add(THD_GAP));
        }
        c.ragged.push(RaggedTensor {
            tensor: id,
            offsets: offsets_id,
            view,
            starts,
            tokens,
        });
    }
}

/// One ragged tensor of a case's graph: where its sequences start and how many real tokens
/// each has, for filling, sizing and comparing its buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct RaggedTensor {
    /// The tensor.
    pub tensor: TensorId,
    /// Its offsets tensor.
    pub offsets: TensorId,
    /// Its dims and strides (the batch stride unused).
    pub view: View4,
    /// B + 1 element offsets: sequence b's room is `starts[b]..starts[b + 1]`, its tokens
    /// followed by [`THD_GAP`] free elements.
    pub starts: Vec<usize>,
    /// Real tokens per batch.
    pub tokens: Vec<usize>,
}

impl RaggedTensor {
    /// The buffer's length: the last offset and one more gap after it, so that what lies past
    /// the last offset is watched too.
    pub fn buffer_len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0) + THD_GAP
    }

    /// The buffer element of every real logical element, in (b, h, s, d) order.
    pub fn real_elements(&self) -> impl Iterator<Item = usize> + '_ {
        logical_elements(&self.view, &self.starts, &self.tokens).flatten()
    }

    /// Per buffer element: true when it holds a real token's value.
    pub fn real_mask(&self) -> Vec<bool> {
        let mut real = vec![false; self.buffer_len()];
        for e in self.real_elements() {
            if let Some(r) = real.get_mut(e) {
                *r = true;
            }
        }
        real
    }

    /// Where buffer element `element` lies, in words: in batch b's room (between its offset
    /// and the next), or past the last offset.
    pub fn locate(&self, element: usize) -> String {
        let batch = self
            .starts
            .windows(2)
            .position(|w| (w[0]..w[1]).contains(&element));
        match batch {
            Some(b) => format!(
                "batch {b} (room {}..{}, {} real tokens)",
                self.starts[b],
                self.starts[b + 1],
                self.tokens[b]
            ),
            None => format!("past the last offset {}", self.buffer_len() - THD_GAP),
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
    /// The ragged tensors ([`Layout::Thd`]; empty otherwise).
    pub ragged: Vec<RaggedTensor>,
}

impl CaseGraph {
    fn add(&mut self, name: &'static str, t: Tensor) -> TensorId {
        let id = self.graph.tensor(t);
        self.ids.push((name, id));
        id
    }

    /// The tensor named `name`.
    pub fn id(&self, name: &str) -> Option<TensorId> {
        self.ids.iter().find(|(n, _)| *n == name).map(|(_, id)| *id)
    }

    /// The ragged layout of tensor `id`, when it has one.
    pub fn ragged_of(&self, id: TensorId) -> Option<&RaggedTensor> {
        self.ragged.iter().find(|r| r.tensor == id)
    }

    /// The values of offsets tensor `id` (those of its first user; every user of one offsets
    /// tensor has the same token stride and side).
    pub fn offsets_values(&self, id: TensorId) -> Option<&[usize]> {
        self.ragged
            .iter()
            .find(|r| r.offsets == id)
            .map(|r| r.starts.as_slice())
    }

    /// Elements of tensor `id`'s buffer: a ragged tensor's [`RaggedTensor::buffer_len`], else
    /// its strided span.
    pub fn buffer_len(&self, id: TensorId) -> Option<usize> {
        match self.ragged_of(id) {
            Some(r) => Some(r.buffer_len()),
            None => usize::try_from(self.graph.get(id)?.span_elements()?).ok(),
        }
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
    max_total: Option<(i64, i64)>,
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
        if let Some((q, kv)) = self.max_total {
            a = a.with_max_total(q, kv);
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
    fn with_max_total(self, q: i64, kv: i64) -> Self;
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
            fn with_max_total(self, q: i64, kv: i64) -> Self {
                self.max_total_seq_len(Some(q), Some(kv))
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

    /// THD as the SM120 engine's contract wants it: every token tensor ragged with THD
    /// strides, io offsets multiples of 8 elements (16-byte rows), a gap after every sequence,
    /// i32 and i64 offsets both, O / V sharing Q's / K's offsets only when Dv = Dqk, and
    /// `max_total_seq_len_q/kv` the least the offsets allow.
    #[test]
    fn thd_graphs_lay_out_every_token_tensor_with_aligned_offsets_and_gaps() {
        for dv in [128, 64] {
            let s = CaseSpec {
                layout: Layout::Thd,
                padding: Some((vec![0, 37, 130, 64], vec![45, 130, 64, 37])),
                max_total_seq_len: true,
                sink: true,
                dv,
                ..CaseSpec::new(4, 4, 2, 130, 130, 128)
            };
            let g = s.graph().expect("graph");
            assert!(g.graph.validate().is_ok(), "{:?}", g.graph.validate());
            let names: Vec<&str> = g.ragged.iter().map(|r| g.name_of(r.tensor)).collect();
            assert_eq!(
                names,
                ["Q", "K", "V", "O", "Stats", "dO", "dQ", "dK", "dV"],
                "every token tensor, nothing else"
            );
            let shared = g.id("O_OFFSETS").is_none() && g.id("V_OFFSETS").is_none();
            assert_eq!(shared, dv == 128);
            let types: std::collections::BTreeSet<_> = g
                .ragged
                .iter()
                .filter_map(|r| g.graph.data_type(r.offsets))
                .collect();
            assert_eq!(types.len(), 2, "{types:?}");
            for r in &g.ragged {
                let t = g.graph.get(r.tensor).expect("tensor");
                let name = g.name_of(r.tensor);
                assert_eq!(t.ragged_offset, Some(r.offsets), "{name}");
                let [_, h, _, d] = r.view.dims;
                assert_eq!(r.view.strides[1..], [d, h * d, 1], "{name}");
                for b in 0..s.b {
                    let used = r.tokens[b] * h * d;
                    assert_eq!(r.starts[b + 1] - r.starts[b], used + THD_GAP, "{name}");
                }
                if name != "Stats" {
                    assert!(
                        r.starts.iter().all(|o| o % 8 == 0),
                        "{name}: {:?}",
                        r.starts
                    );
                }
                let real = r.real_mask();
                assert_eq!(real.len(), r.buffer_len());
                assert_eq!(
                    real.iter().filter(|&&x| x).count(),
                    r.tokens.iter().sum::<usize>() * h * d,
                    "{name}"
                );
            }
            let fwd = g.graph.node(g.forward.expect("fwd")).expect("node");
            let opts = &fwd.options;
            for (side, total) in [
                (Sequence::Q, opts.max_total_seq_len_q),
                (Sequence::Kv, opts.max_total_seq_len_kv),
            ] {
                let total = usize::try_from(total.expect("set")).expect("count");
                let on_side = |r: &&RaggedTensor| r.tokens == s.tokens(side);
                let fits = |t: usize| {
                    g.ragged
                        .iter()
                        .filter(on_side)
                        .all(|r| r.starts[s.b] <= t * r.view.strides[2])
                };
                assert!(fits(total) && !fits(total - 1), "{side:?}: {total}");
            }
        }
        // Without the option, and for the dense layouts, nothing changes.
        let dense = CaseSpec::new(2, 4, 2, 33, 65, 64).graph().expect("graph");
        assert!(dense.ragged.is_empty());
        assert!(dense
            .graph
            .tensors()
            .iter()
            .all(|t| t.ragged_offset.is_none()));
    }
}
