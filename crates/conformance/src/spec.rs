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
}

impl Layout {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Bhsd => "bhsd",
            Layout::Bshd => "bshd",
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

    /// Backward FLOPs as reports count them: 10 * B * Hq * Sq * Skv * Dqk, halved for causal.
    pub fn backward_flops(&self) -> f64 {
        let f = 10.0 * (self.b * self.hq * self.sq * self.skv * self.dqk) as f64;
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
        let io = |name: &str, h: usize, s: usize, d: usize| match self.layout {
            Layout::Bhsd => Tensor::packed(name, &dims(h, s, d)),
            Layout::Bshd => Tensor::bshd(name, dims(h, s, d)),
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
            let stats = Tensor::packed("Stats", &dims(self.hq, self.sq, 1));
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
            c.backward = c.graph.node_ids().last();
            c.ids.extend([("dQ", g.dq), ("dK", g.dk), ("dV", g.dv)]);
            c.ids.extend(g.dbias.map(|id| ("dBias", id)));
            c.ids.extend(g.dsink.map(|id| ("dSink", id)));
        }
        Ok(c)
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
