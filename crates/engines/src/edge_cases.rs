//! The edge-numerics cases, defined once: the CPU integration test (`tests/edge_numerics.rs`,
//! against an independent naive reference) and the GPU check (`rime selftest --edge`, the
//! sm120 engine against the CPU engine) both run this table, through the graphs built here.
//!
//! Each case is a small SDPA backward (bf16 io, f32 Stats, BHSD, Hq = Hk = Hv, D = 8) at a
//! numerical edge: one query or one key, a decode step, rows that see no key, empty sequences
//! in a padded batch, Stats near -3e4, biases of +-2e4, a dominant sink.

use rime_graph::{
    Context, DataType, DiagonalAlignment, Graph, GraphError, SdpaBackwardAttrs, SdpaForwardAttrs,
    Tensor, TensorId,
};

/// How the Bias tensor of a case is filled (index = (b, h, i, j); `random` in [-1, 1)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BiasFill {
    /// About -3e4 everywhere: Stats come out near -3e4.
    VeryNegative,
    /// +2e4 on one key per row, -2e4 elsewhere: a one-hot softmax.
    OneHot,
    /// Multiples of 8000 in [-1.6e4, 1.6e4].
    Mixed,
}

impl BiasFill {
    /// The bias value at `[b, h, i, j]`.
    pub fn value(self, [b, h, i, j]: [usize; 4]) -> f64 {
        match self {
            Self::VeryNegative => -30000.0 + ((b + h + i + j) % 3) as f64,
            Self::OneHot if j == (i + h) % 7 => 20000.0,
            Self::OneHot => -20000.0,
            Self::Mixed => ((i * 7 + j + b) % 5) as f64 * 8000.0 - 16000.0,
        }
    }
}

/// The Bias of a case: which dims it has (the others broadcast) and its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeBias {
    /// Batch dim B (else 1).
    pub per_batch: bool,
    /// Head dim Hq (else 1).
    pub per_head: bool,
    /// The values.
    pub fill: BiasFill,
}

/// The mask band: optional left bound, right bound, diagonal alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeBand {
    /// Sliding-window width.
    pub left: Option<i64>,
    /// Keys past the diagonal kept.
    pub right: Option<i64>,
    /// Diagonal at the bottom-right corner.
    pub bottom_right: bool,
}

/// One edge case.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeCase {
    /// Short name (the table's first column).
    pub name: &'static str,
    /// What is at the edge.
    pub note: &'static str,
    /// Batch.
    pub b: usize,
    /// Heads (Hq = Hk = Hv).
    pub h: usize,
    /// Query length.
    pub sq: usize,
    /// Key length.
    pub skv: usize,
    /// Head dim (Dqk = Dv).
    pub d: usize,
    /// Mask band, if any.
    pub band: Option<EdgeBand>,
    /// Per-batch sequence lengths (Q, KV) of a padding mask.
    pub seq_lens: Option<(Vec<usize>, Vec<usize>)>,
    /// Bias, with dBias requested.
    pub bias: Option<EdgeBias>,
    /// Sink (with dSink): `Some(None)` random, `Some(Some(v))` every head `v`.
    pub sink: Option<Option<f64>>,
    /// Seed of the random inputs.
    pub seed: u64,
}

impl EdgeCase {
    fn new(name: &'static str, note: &'static str, dims: [usize; 4], seed: u64) -> Self {
        let [b, h, sq, skv] = dims;
        Self {
            name,
            note,
            b,
            h,
            sq,
            skv,
            d: 8,
            band: None,
            seq_lens: None,
            bias: None,
            sink: None,
            seed,
        }
    }

    fn band(self, left: Option<i64>, right: Option<i64>, bottom_right: bool) -> Self {
        Self {
            band: Some(EdgeBand {
                left,
                right,
                bottom_right,
            }),
            ..self
        }
    }

    fn padding(self, q: &[usize], kv: &[usize]) -> Self {
        Self {
            seq_lens: Some((q.to_vec(), kv.to_vec())),
            ..self
        }
    }

    fn bias(self, per_batch: bool, per_head: bool, fill: BiasFill) -> Self {
        Self {
            bias: Some(EdgeBias {
                per_batch,
                per_head,
                fill,
            }),
            ..self
        }
    }

    fn sink(self, value: Option<f64>) -> Self {
        Self {
            sink: Some(value),
            ..self
        }
    }

    /// The attention scale: 1 / sqrt(D).
    pub fn scale(&self) -> f64 {
        1.0 / (self.d as f64).sqrt()
    }

    /// The Bias dims (B or 1, Hq or 1, Sq, Skv).
    pub fn bias_dims(&self) -> Option<[usize; 4]> {
        self.bias.map(|b| {
            [
                if b.per_batch { self.b } else { 1 },
                if b.per_head { self.h } else { 1 },
                self.sq,
                self.skv,
            ]
        })
    }

    /// The backward graph: inputs Q, K, V, O, dO, Stats (+ Bias, SEQ_LEN_Q / SEQ_LEN_KV, Sink),
    /// outputs dQ, dK, dV (+ dBias, dSink); every tensor named by its port.
    ///
    /// # Errors
    /// A [`GraphError`] from the builder (none for the table's cases).
    pub fn backward_graph(&self) -> Result<EdgeGraph, GraphError> {
        let mut b = Builder::new(self);
        let (o, d_o) = (b.io("O"), b.io("dO"));
        let stats = b.add(
            "Stats",
            Tensor::packed("Stats", &b.dims(self.h, self.sq, 1)).with_data_type(DataType::F32),
        );
        let mut attrs = b.common(SdpaBackwardAttrs::new().name("bwd"), |a, s| a.sink(s));
        if self.bias.is_some() {
            attrs = attrs.dbias();
        }
        if self.sink.is_some() {
            attrs = attrs.dsink();
        }
        let (q, k, v) = (b.q, b.k, b.v);
        let grads = b.graph.sdpa_backward(q, k, v, o, d_o, stats, attrs)?;
        b.ids
            .extend([("dQ", grads.dq), ("dK", grads.dk), ("dV", grads.dv)]);
        b.ids.extend(grads.dbias.map(|id| ("dBias", id)));
        b.ids.extend(grads.dsink.map(|id| ("dSink", id)));
        Ok(b.finish())
    }

    /// The forward graph of the same attention: inputs Q, K, V (+ Bias, SEQ_LEN_Q /
    /// SEQ_LEN_KV, Sink), outputs O and Stats (what the backward reads).
    ///
    /// # Errors
    /// A [`GraphError`] from the builder (none for the table's cases).
    pub fn forward_graph(&self) -> Result<EdgeGraph, GraphError> {
        let mut b = Builder::new(self);
        let attrs = b.common(
            SdpaForwardAttrs::new().name("fwd").generate_stats(),
            |a, s| a.sink(s),
        );
        let (q, k, v) = (b.q, b.k, b.v);
        let out = b.graph.sdpa_forward(q, k, v, attrs)?;
        b.ids.push(("O", out.o));
        b.ids.extend(out.stats.map(|id| ("Stats", id)));
        Ok(b.finish())
    }
}

/// A graph of an edge case and its tensors by port name.
#[derive(Debug)]
pub struct EdgeGraph {
    /// The graph.
    pub graph: Graph,
    /// Every tensor, by port name (`Q`, `Stats`, `SEQ_LEN_Q`, `dBias`, ...).
    pub ids: Vec<(&'static str, TensorId)>,
}

impl EdgeGraph {
    /// The tensor named `name`.
    pub fn id(&self, name: &str) -> Option<TensorId> {
        self.ids.iter().find(|(n, _)| *n == name).map(|(_, id)| *id)
    }
}

/// Q, dO, O (Sq rows) or K, V (Skv rows): bf16 (the context's io type), packed BHSD.
fn io_tensor(c: &EdgeCase, name: &str) -> Tensor {
    let s = if matches!(name, "K" | "V") {
        c.skv
    } else {
        c.sq
    };
    Tensor::packed(name, &[c.b, c.h, s, c.d].map(|x| x as i64))
}

/// Shared construction of the forward and backward graphs (inputs and options).
struct Builder<'a> {
    case: &'a EdgeCase,
    graph: Graph,
    ids: Vec<(&'static str, TensorId)>,
    q: TensorId,
    k: TensorId,
    v: TensorId,
}

impl<'a> Builder<'a> {
    fn new(case: &'a EdgeCase) -> Self {
        let mut graph = Graph::new(Context::with_io(DataType::Bf16));
        let [q, k, v] = ["Q", "K", "V"].map(|name| graph.tensor(io_tensor(case, name)));
        Builder {
            case,
            graph,
            ids: vec![("Q", q), ("K", k), ("V", v)],
            q,
            k,
            v,
        }
    }

    fn dims(&self, h: usize, s: usize, d: usize) -> [i64; 4] {
        [self.case.b, h, s, d].map(|x| x as i64)
    }

    fn add(&mut self, name: &'static str, t: Tensor) -> TensorId {
        let id = self.graph.tensor(t);
        self.ids.push((name, id));
        id
    }

    fn io(&mut self, name: &'static str) -> TensorId {
        let t = io_tensor(self.case, name);
        self.add(name, t)
    }

    /// Scale, band, Bias, padding and Sink, on either attribute builder.
    fn common<A: Attrs>(&mut self, mut a: A, sink: impl Fn(A, TensorId) -> A) -> A {
        let c = self.case;
        a = a.scale(c.scale() as f32);
        if let Some(band) = c.band {
            a = a.band(band);
        }
        if let Some(dims) = c.bias_dims() {
            let bias = self.add("Bias", Tensor::packed("Bias", &dims.map(|x| x as i64)));
            a = a.with_bias(bias);
        }
        if c.seq_lens.is_some() {
            let lens =
                |n: &str| Tensor::packed(n, &[c.b as i64, 1, 1, 1]).with_data_type(DataType::I32);
            let lq = self.add("SEQ_LEN_Q", lens("SEQ_LEN_Q"));
            let lkv = self.add("SEQ_LEN_KV", lens("SEQ_LEN_KV"));
            a = a.with_padding(lq, lkv);
        }
        if c.sink.is_some() {
            let t = Tensor::packed("Sink", &[1, c.h as i64, 1, 1]).with_data_type(DataType::F32);
            let id = self.add("Sink", t);
            a = sink(a, id);
        }
        a
    }

    fn finish(self) -> EdgeGraph {
        EdgeGraph {
            graph: self.graph,
            ids: self.ids,
        }
    }
}

/// The options both attribute builders share, so that [`Builder::common`] sets them once.
trait Attrs: Sized {
    fn scale(self, scale: f32) -> Self;
    fn band(self, band: EdgeBand) -> Self;
    fn with_bias(self, bias: TensorId) -> Self;
    fn with_padding(self, q: TensorId, kv: TensorId) -> Self;
}

macro_rules! attrs {
    ($ty:ty) => {
        impl Attrs for $ty {
            fn scale(self, scale: f32) -> Self {
                self.attn_scale(scale)
            }
            fn band(mut self, band: EdgeBand) -> Self {
                if let Some(right) = band.right {
                    self = self.right_bound(right);
                }
                if let Some(left) = band.left {
                    self = self.left_bound(left);
                }
                if band.bottom_right {
                    self = self.diagonal_alignment(DiagonalAlignment::BottomRight);
                }
                self
            }
            fn with_bias(self, bias: TensorId) -> Self {
                self.bias(bias)
            }
            fn with_padding(self, q: TensorId, kv: TensorId) -> Self {
                self.padding(q, kv)
            }
        }
    };
}
attrs!(SdpaBackwardAttrs);
attrs!(SdpaForwardAttrs);

/// The table (the order of `docs/reliability.md`).
pub fn edge_cases() -> Vec<EdgeCase> {
    use BiasFill::{Mixed, OneHot, VeryNegative};
    let c = EdgeCase::new;
    vec![
        c("sq_1", "one query row", [2, 2, 1, 7], 1),
        c("skv_1", "one key: P = 1", [2, 2, 7, 1], 2),
        c("sq_1_causal_bottom_right", "decode step", [2, 2, 1, 9], 3).band(None, Some(0), true),
        c(
            "fully_masked_rows",
            "rows 0..4 of batch 0 see no key",
            [2, 2, 6, 5],
            4,
        )
        .band(None, Some(0), true)
        .padding(&[6, 3], &[2, 5]),
        c(
            "zero_len_batch",
            "batch 1: seq_len_q = seq_len_kv = 0",
            [3, 2, 5, 6],
            5,
        )
        .padding(&[5, 0, 3], &[6, 0, 2]),
        c(
            "zero_kv_len_batch",
            "batch 0: queries, no keys",
            [2, 2, 5, 6],
            6,
        )
        .padding(&[5, 4], &[0, 6]),
        c("zero_len_with_sink", "no keys, sink only", [2, 2, 5, 6], 7)
            .padding(&[5, 4], &[0, 6])
            .sink(None),
        c(
            "very_negative_stats",
            "bias -3e4: Stats ~ -3e4",
            [2, 2, 6, 7],
            8,
        )
        .bias(true, true, VeryNegative),
        c(
            "large_bias_one_hot",
            "bias +-2e4: one-hot softmax",
            [2, 2, 6, 7],
            9,
        )
        .bias(false, true, OneHot),
        c(
            "large_bias_mixed_masked",
            "bias +-1.6e4 with a window",
            [2, 2, 6, 7],
            10,
        )
        .bias(true, false, Mixed)
        .band(Some(2), Some(0), false),
        c("dominant_sink", "sink 40: P ~ e^-40", [2, 2, 6, 7], 12).sink(Some(40.0)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_builds_valid_forward_and_backward_graphs() {
        for case in edge_cases() {
            for g in [case.forward_graph(), case.backward_graph()] {
                let g = g.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                assert!(g.graph.validate().is_ok(), "{}", case.name);
                for name in ["Q", "K", "V"] {
                    assert!(g.id(name).is_some(), "{}: {name}", case.name);
                }
                assert_eq!(g.id("Bias").is_some(), case.bias.is_some());
                assert_eq!(g.id("Sink").is_some(), case.sink.is_some());
            }
        }
    }
}
