//! Test support: random cases of the attention problem, strided host data, and an independent
//! naive f64 implementation (full score matrix, plain loops) written straight from the spec
//! (docs/sdpa-backward.md, section 2). It shares no code with the engine beyond the input types.
#![allow(dead_code, clippy::needless_range_loop)] // the naive reference indexes on purpose

use rime_engines::cpu::{
    AttentionInputs, BackwardInputs, BackwardOutputs, Band, Dropout, ForwardOutputs, HostSlice,
    HostSliceMut, PhiloxDropout, Problem, ProblemShape, Real, SeqLens, TensorMut, TensorRef, View4,
};

/// Deterministic xorshift numbers in [-1, 1).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// How rank-4 tensors are laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layout {
    /// (B, H, S, D) packed.
    Bhsd,
    /// (B, S, H, D) with `pad` unused elements after every D row.
    BshdPadded(usize),
}

fn view_of(dims: [usize; 4], layout: Layout) -> View4 {
    match layout {
        Layout::Bhsd => View4::packed(dims),
        Layout::BshdPadded(pad) => {
            let [_, h, s, d] = dims;
            let row = d + pad;
            View4 {
                dims,
                strides: [s * h * row, row, h * row, 1],
            }
        }
    }
}

/// A strided f64 host tensor.
#[derive(Debug, Clone)]
pub struct Host {
    pub name: &'static str,
    pub data: Vec<f64>,
    pub view: View4,
}

impl Host {
    pub fn zeros(name: &'static str, dims: [usize; 4], layout: Layout) -> Host {
        let view = view_of(dims, layout);
        // NaN in the gaps: a write outside the logical elements or a read of them shows.
        Host {
            name,
            data: vec![f64::NAN; view.span().unwrap()],
            view,
        }
        .filled(|_| 0.0)
    }
    pub fn random(name: &'static str, dims: [usize; 4], layout: Layout, rng: &mut Rng) -> Host {
        Host::zeros(name, dims, layout).filled(|_| rng.next())
    }
    pub fn filled(mut self, mut f: impl FnMut([usize; 4]) -> f64) -> Host {
        for idx in indices(self.view.dims) {
            let at = self.offset(idx);
            self.data[at] = f(idx);
        }
        self
    }
    pub fn offset(&self, [b, h, s, d]: [usize; 4]) -> usize {
        let st = self.view.strides;
        b * st[0] + h * st[1] + s * st[2] + d * st[3]
    }
    /// Element (b, h, s, d) with size-1 dims broadcasting.
    pub fn at(&self, [b, h, s, d]: [usize; 4]) -> f64 {
        let dims = self.view.dims;
        let pick = |k: usize, i: usize| if dims[k] == 1 { 0 } else { i };
        self.data[self.offset([pick(0, b), pick(1, h), pick(2, s), pick(3, d)])]
    }
    pub fn r(&self) -> TensorRef<'_> {
        TensorRef::new(self.name, HostSlice::F64(&self.data), self.view).unwrap()
    }
    pub fn w(&mut self) -> TensorMut<'_> {
        TensorMut::new(self.name, HostSliceMut::F64(&mut self.data), self.view).unwrap()
    }
    /// Logical elements in (b, h, s, d) order.
    pub fn logical(&self) -> Vec<f64> {
        indices(self.view.dims).map(|i| self.at(i)).collect()
    }
    /// The gaps between logical elements (must stay NaN).
    pub fn gaps_untouched(&self) -> bool {
        let mut logical = vec![false; self.data.len()];
        for idx in indices(self.view.dims) {
            logical[self.offset(idx)] = true;
        }
        self.data
            .iter()
            .zip(&logical)
            .all(|(x, &l)| l || x.is_nan())
    }
}

pub fn indices(dims: [usize; 4]) -> impl Iterator<Item = [usize; 4]> {
    (0..dims[0]).flat_map(move |b| {
        (0..dims[1]).flat_map(move |h| {
            (0..dims[2]).flat_map(move |s| (0..dims[3]).map(move |d| [b, h, s, d]))
        })
    })
}

/// One test case: the problem plus which optional tensors exist.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    pub problem: Problem,
    pub bias: Option<[usize; 4]>,
    pub sink: bool,
    /// Dims of the dropout mask (with `problem.dropout`).
    pub dropout_mask: Option<[usize; 4]>,
    pub layout: Layout,
}

impl Case {
    pub fn new(name: &'static str, b: usize, hq: usize, sq: usize, skv: usize, d: usize) -> Case {
        let shape = ProblemShape {
            b,
            hq,
            hk: hq,
            hv: hq,
            sq,
            skv,
            dqk: d,
            dv: d,
        };
        Case {
            name,
            problem: Problem::new(shape),
            bias: None,
            sink: false,
            dropout_mask: None,
            layout: Layout::Bhsd,
        }
    }
    pub fn heads(mut self, hk: usize, hv: usize) -> Case {
        self.problem.shape.hk = hk;
        self.problem.shape.hv = hv;
        self
    }
    pub fn dv(mut self, dv: usize) -> Case {
        self.problem.shape.dv = dv;
        self
    }
    pub fn band(mut self, left: Option<i64>, right: Option<i64>, bottom_right: bool) -> Case {
        self.problem.band = Band {
            left,
            right,
            bottom_right,
        };
        self
    }
    pub fn alibi(mut self) -> Case {
        self.problem.alibi = true;
        self
    }
    pub fn padding(mut self, q: &[usize], kv: &[usize]) -> Case {
        self.problem.seq_lens = Some(SeqLens {
            q: q.to_vec(),
            kv: kv.to_vec(),
        });
        self
    }
    pub fn bias(mut self, batch: bool, heads: bool) -> Case {
        let s = self.problem.shape;
        self.bias = Some([
            if batch { s.b } else { 1 },
            if heads { s.hq } else { 1 },
            s.sq,
            s.skv,
        ]);
        self
    }
    /// A bias of `dims` (1 where a dim broadcasts, the sequence dims included).
    pub fn bias_dims(mut self, dims: [usize; 4]) -> Case {
        self.bias = Some(dims);
        self
    }
    pub fn sink(mut self) -> Case {
        self.sink = true;
        self
    }
    /// Dropout with a mask of `dims` (1 where a dim broadcasts), keep factor 1 / (1 - p) for
    /// p = 0.2 and the backward's inverse 1 - p.
    pub fn dropout(mut self, dims: [usize; 4]) -> Case {
        self.problem.dropout = Some(Dropout {
            scale: 1.25,
            scale_inv: 0.8,
        });
        self.dropout_mask = Some(dims);
        self
    }
    /// Philox dropout with probability `p` (seed and offset fixed), its scales derived.
    pub fn philox(mut self, probability: f32) -> Case {
        self.problem = self.problem.with_philox(PhiloxDropout {
            probability,
            seed: 0x5eed_0000_0000_002a,
            offset: 3,
        });
        self
    }
    pub fn layout(mut self, layout: Layout) -> Case {
        self.layout = layout;
        self
    }
    pub fn shape(&self) -> ProblemShape {
        self.problem.shape
    }
}

/// The inputs of a case: Q, K, V, Bias, Sink, and W (the weights of the loss sum(O * W), which
/// is also dO).
#[derive(Debug, Clone)]
pub struct Data {
    pub q: Host,
    pub k: Host,
    pub v: Host,
    pub bias: Option<Host>,
    pub sink: Option<Host>,
    /// 0 / 1 dropout mask (about 80% ones).
    pub dropout_mask: Option<Host>,
    pub w: Host,
}

impl Data {
    pub fn random(case: &Case, seed: u64) -> Data {
        let s = case.shape();
        let l = case.layout;
        let rng = &mut Rng::new(seed);
        Data {
            q: Host::random("Q", [s.b, s.hq, s.sq, s.dqk], l, rng),
            k: Host::random("K", [s.b, s.hk, s.skv, s.dqk], l, rng),
            v: Host::random("V", [s.b, s.hv, s.skv, s.dv], l, rng),
            bias: case
                .bias
                .map(|dims| Host::random("Bias", dims, Layout::Bhsd, rng)),
            sink: case
                .sink
                .then(|| Host::random("Sink", [1, s.hq, 1, 1], Layout::Bhsd, rng)),
            dropout_mask: case.dropout_mask.map(|dims| {
                Host::zeros("Dropout_mask", dims, Layout::Bhsd).filled(|_| {
                    if rng.next() < 0.6 {
                        1.0
                    } else {
                        0.0
                    }
                })
            }),
            w: Host::random("dO", [s.b, s.hq, s.sq, s.dv], l, rng),
        }
    }
    pub fn inputs(&self) -> AttentionInputs<'_> {
        AttentionInputs {
            q: self.q.r(),
            k: self.k.r(),
            v: self.v.r(),
            bias: self.bias.as_ref().map(Host::r),
            sink: self.sink.as_ref().map(Host::r),
            dropout_mask: self.dropout_mask.as_ref().map(Host::r),
        }
    }
}

/// Engine results in f64.
#[derive(Debug, Clone)]
pub struct Results {
    pub o: Host,
    pub stats: Host,
    pub dq: Host,
    pub dk: Host,
    pub dv: Host,
    pub dbias: Option<Host>,
    pub dsink: Option<Host>,
}

/// The engine's forward in f64: (O, Stats).
pub fn engine_forward(case: &Case, data: &Data) -> (Host, Host) {
    engine_forward_in::<f64>(case, data)
}

/// The engine's forward in arithmetic `A`: (O, Stats).
pub fn engine_forward_in<A: Real>(case: &Case, data: &Data) -> (Host, Host) {
    let s = case.shape();
    let mut o = Host::zeros("O", [s.b, s.hq, s.sq, s.dv], case.layout);
    let mut stats = Host::zeros("Stats", [s.b, s.hq, s.sq, 1], Layout::Bhsd);
    let out = ForwardOutputs {
        o: o.w(),
        stats: Some(stats.w()),
    };
    rime_engines::cpu::forward::<A>(&case.problem, &data.inputs(), out).unwrap();
    (o, stats)
}

/// The engine's forward then backward with dO = W, in f64.
pub fn engine_f64(case: &Case, data: &Data) -> Results {
    engine_in::<f64>(case, data)
}

/// The engine's forward then backward with dO = W, in arithmetic `A`.
pub fn engine_in<A: Real>(case: &Case, data: &Data) -> Results {
    let s = case.shape();
    let (o, stats) = engine_forward_in::<A>(case, data);
    let l = case.layout;
    let mut r = Results {
        dq: Host::zeros("dQ", [s.b, s.hq, s.sq, s.dqk], l),
        dk: Host::zeros("dK", [s.b, s.hk, s.skv, s.dqk], l),
        dv: Host::zeros("dV", [s.b, s.hv, s.skv, s.dv], l),
        dbias: case
            .bias
            .map(|dims| Host::zeros("dBias", dims, Layout::Bhsd)),
        dsink: case
            .sink
            .then(|| Host::zeros("dSink", [1, s.hq, 1, 1], Layout::Bhsd)),
        o,
        stats,
    };
    let inputs = BackwardInputs {
        attn: data.inputs(),
        o: r.o.r(),
        d_o: data.w.r(),
        stats: r.stats.r(),
    };
    let out = BackwardOutputs {
        dq: r.dq.w(),
        dk: r.dk.w(),
        dv: r.dv.w(),
        dbias: r.dbias.as_mut().map(Host::w),
        dsink: r.dsink.as_mut().map(Host::w),
    };
    rime_engines::cpu::backward::<A>(&case.problem, &inputs, out).unwrap();
    r
}

/// ALiBi slopes as the reference Python writes them (power-of-two heads, then every other
/// slope of twice as many heads).
fn naive_slopes(heads: usize) -> Vec<f64> {
    let pow2 = |n: usize| -> Vec<f64> {
        let start = 2f64.powf(-(2f64.powf(-((n as f64).log2() - 3.0))));
        (0..n).map(|i| start * start.powi(i as i32)).collect()
    };
    let n = 2usize.pow((heads as f64).log2().floor() as u32);
    let mut s = pow2(n);
    s.extend(pow2(2 * n).into_iter().step_by(2).take(heads - n));
    s
}

/// Logical (packed) f64 results of the naive implementation.
#[derive(Debug, Clone)]
pub struct Naive {
    pub o: Vec<f64>,
    pub stats: Vec<f64>,
    pub dq: Vec<f64>,
    pub dk: Vec<f64>,
    pub dv: Vec<f64>,
    pub dbias: Vec<f64>,
    pub dsink: Vec<f64>,
}

/// Full-matrix, loop-by-loop forward and backward of the case with dO = W.
pub fn naive(case: &Case, data: &Data) -> Naive {
    let p = &case.problem;
    let s = p.shape;
    let slopes = naive_slopes(s.hq);
    let (sq, skv) = (s.sq, s.skv);
    let ix = |b: usize, h: usize, i: usize, d: usize, hn: usize, sn: usize, dn: usize| {
        ((b * hn + h) * sn + i) * dn + d
    };
    let mut n = Naive {
        o: vec![0.0; s.b * s.hq * sq * s.dv],
        stats: vec![f64::INFINITY; s.b * s.hq * sq],
        dq: vec![0.0; s.b * s.hq * sq * s.dqk],
        dk: vec![0.0; s.b * s.hk * skv * s.dqk],
        dv: vec![0.0; s.b * s.hv * skv * s.dv],
        dbias: case
            .bias
            .map_or(Vec::new(), |d| vec![0.0; d.iter().product()]),
        dsink: vec![0.0; s.hq],
    };
    for b in 0..s.b {
        let (ql, kl) = match &p.seq_lens {
            Some(l) => (l.q[b], l.kv[b]),
            None => (sq, skv),
        };
        let shift = if p.band.bottom_right {
            kl as i64 - ql as i64
        } else {
            0
        };
        for h in 0..s.hq {
            let (hk, hv) = (h / (s.hq / s.hk), h / (s.hq / s.hv));
            let sink = data.sink.as_ref().map(|t| t.at([0, h, 0, 0]));
            for i in 0..ql {
                // scores of row i
                let mut srow = vec![f64::NEG_INFINITY; skv];
                for (j, sc) in srow.iter_mut().enumerate().take(kl) {
                    let (ii, jj) = (i as i64 + shift, j as i64);
                    if p.band.right.is_some_and(|r| jj > ii + r)
                        || p.band.left.is_some_and(|l| jj <= ii - l)
                    {
                        continue;
                    }
                    let dot: f64 = (0..s.dqk)
                        .map(|d| data.q.at([b, h, i, d]) * data.k.at([b, hk, j, d]))
                        .sum();
                    let mut x = p.scale * dot;
                    if let Some(bias) = &data.bias {
                        x += bias.at([b, h, i, j]);
                    }
                    if p.alibi {
                        x += slopes[h] * (j as f64 - i as f64);
                    }
                    *sc = x;
                }
                let mx = srow
                    .iter()
                    .copied()
                    .chain(sink)
                    .fold(f64::NEG_INFINITY, f64::max);
                if mx == f64::NEG_INFINITY {
                    continue; // nothing to attend to: O = 0, Stats = +inf, zero gradients
                }
                let denom: f64 = srow
                    .iter()
                    .chain(sink.as_ref())
                    .map(|x| (x - mx).exp())
                    .sum();
                let lse = mx + denom.ln();
                n.stats[ix(b, h, i, 0, s.hq, sq, 1)] = lse;
                let prob: Vec<f64> = srow.iter().map(|x| (x - lse).exp()).collect();
                // Dropout: O and dV see prob * mask * scale; dS = scale prob (mask dP -
                // scale_inv D), as cuDNN's backward graph has it.
                let keep: Vec<f64> = (0..skv)
                    .map(|j| match (&p.dropout, &p.philox, &data.dropout_mask) {
                        // Philox: the documented stream decides each element on its own.
                        (Some(dr), Some(stream), _) => {
                            if stream.keeps(&s, b, h, i, j) {
                                dr.scale
                            } else {
                                0.0
                            }
                        }
                        (Some(dr), None, Some(m)) => m.at([b, h, i, j]) * dr.scale,
                        _ => 1.0,
                    })
                    .collect();
                let (r, r_inv) = p.dropout.map_or((1.0, 1.0), |d| (d.scale, d.scale_inv));
                for d in 0..s.dv {
                    n.o[ix(b, h, i, d, s.hq, sq, s.dv)] = (0..skv)
                        .map(|j| prob[j] * keep[j] * data.v.at([b, hv, j, d]))
                        .sum();
                }
                // backward of row i
                let delta: f64 = (0..s.dv)
                    .map(|d| data.w.at([b, h, i, d]) * n.o[ix(b, h, i, d, s.hq, sq, s.dv)])
                    .sum();
                if let Some(sink) = sink {
                    n.dsink[h] -= (sink - lse).exp() * delta;
                }
                for j in 0..skv {
                    let dp: f64 = (0..s.dv)
                        .map(|d| data.w.at([b, h, i, d]) * data.v.at([b, hv, j, d]))
                        .sum();
                    let ds = r * prob[j] * (keep[j] / r * dp - r_inv * delta);
                    for d in 0..s.dv {
                        n.dv[ix(b, hv, j, d, s.hv, skv, s.dv)] +=
                            prob[j] * keep[j] * data.w.at([b, h, i, d]);
                    }
                    for d in 0..s.dqk {
                        n.dq[ix(b, h, i, d, s.hq, sq, s.dqk)] +=
                            p.scale * ds * data.k.at([b, hk, j, d]);
                        n.dk[ix(b, hk, j, d, s.hk, skv, s.dqk)] +=
                            p.scale * ds * data.q.at([b, h, i, d]);
                    }
                    if let Some(dims) = case.bias {
                        let (bb, bh) = (
                            if dims[0] == 1 { 0 } else { b },
                            if dims[1] == 1 { 0 } else { h },
                        );
                        let (bi, bj) = (
                            if dims[2] == 1 { 0 } else { i },
                            if dims[3] == 1 { 0 } else { j },
                        );
                        n.dbias[((bb * dims[1] + bh) * dims[2] + bi) * dims[3] + bj] += ds;
                    }
                }
            }
        }
    }
    n
}

/// Largest |a - b| / (atol + rtol |b|) over the elements; <= 1 passes.
pub fn worst(actual: &[f64], expected: &[f64], atol: f64, rtol: f64) -> f64 {
    assert_eq!(actual.len(), expected.len());
    actual
        .iter()
        .zip(expected)
        .map(|(a, e)| {
            if a.is_nan() || e.is_nan() {
                f64::INFINITY
            } else if a == e {
                0.0
            } else {
                (a - e).abs() / (atol + rtol * e.abs())
            }
        })
        .fold(0.0, f64::max)
}

/// Every option the engine supports, on tiny shapes (gradient checks) or small ones.
pub fn cases(b: usize, sq: usize, skv: usize, d: usize) -> Vec<Case> {
    let c = |name| Case::new(name, b, 2, sq, skv, d);
    let short = skv.saturating_sub(2).max(1);
    vec![
        c("plain"),
        c("causal_top_left").band(None, Some(0), false),
        c("causal_bottom_right").band(None, Some(0), true),
        c("sliding_window").band(Some(2), Some(0), false),
        c("band_bottom_right").band(Some(3), Some(1), true),
        c("padding").padding(&vec![sq - 1; b], &vec![short; b]),
        c("padding_causal_bottom_right")
            .padding(&vec![sq - 1; b], &vec![short; b])
            .band(None, Some(0), true),
        c("alibi_causal").alibi().band(None, Some(0), false),
        c("bias_per_batch_head").bias(true, true),
        c("bias_broadcast_batch").bias(false, true),
        c("bias_broadcast_head").bias(true, false),
        c("bias_broadcast_both").bias(false, false),
        // One bias row for every query row (a per-key bias), per batch and head / for all.
        c("bias_broadcast_rows").bias_dims([b, 2, 1, skv]),
        c("bias_broadcast_rows_all_causal")
            .bias_dims([1, 1, 1, skv])
            .band(None, Some(0), false),
        Case::new("gqa", b, 4, sq, skv, d).heads(2, 1),
        Case::new("mqa", b, 4, sq, skv, d).heads(1, 1),
        c("dqk_ne_dv").dv(d + 2),
        c("sink").sink(),
        c("sink_causal_padding")
            .sink()
            .band(None, Some(0), false)
            .padding(&vec![sq; b], &vec![short; b]),
        c("strided_bshd_padded").layout(Layout::BshdPadded(3)),
        c("dropout_mask").dropout([b, 2, sq, skv]),
        c("dropout_broadcast_mask_causal")
            .dropout([1, 2, 1, skv])
            .band(None, Some(0), true),
        c("dropout_philox").philox(0.3),
        c("dropout_philox_causal_padding")
            .philox(0.5)
            .band(None, Some(0), false)
            .padding(&vec![sq; b], &vec![short; b]),
        Case::new("everything", b, 4, sq, skv, d)
            .heads(2, 1)
            .dv(d + 2)
            .bias(false, true)
            .sink()
            .band(Some(4), Some(1), false)
            .padding(&vec![sq - 1; b], &vec![short; b])
            .dropout([b, 1, sq, skv])
            .layout(Layout::BshdPadded(1)),
    ]
}
