//! Ragged (THD) layouts in the CPU engine's math, checked three ways on the same cases:
//!
//! - packed into THD buffers (sequences one after another, a gap of NaN between them and after
//!   the last), the engine computes bit for bit what it computes on the padded (B, H, S, D)
//!   tensors of the same problem, at every real token;
//! - every output element outside the real tokens keeps its sentinel, and no NaN of the input
//!   gaps reaches a result (the engine reads and writes real tokens only);
//! - the results agree with the independent naive f64 reference, and with central finite
//!   differences of L = sum(O * W) through the ragged forward.
//!
//! Cases: sequences of different lengths per batch, one of them empty, with causal masks
//! aligned top-left and bottom-right to each sequence's own lengths, a sliding window, GQA,
//! Dqk != Dv, a bias with dBias, a sink; and full-length sequences without a padding mask.

mod support;

use rime_engines::cpu::{
    backward, forward, AttentionInputs, BackwardInputs, BackwardOutputs, ForwardOutputs, HostSlice,
    HostSliceMut, Ragged, TensorMut, TensorRef, View4,
};
use rime_engines::EngineError;
use support::{engine_f64, indices, naive, worst, Case, Data, Host, Results};

/// Elements left between sequences (and after the last), filled with the sentinel.
const GAP: usize = 3;
/// What output buffers hold before the engine runs; it must survive outside the tokens.
const SENTINEL: f64 = -7777.0;

/// A THD tensor: sequence b's token s, head h, dim d at `offsets[b] + s*H*D + h*D + d`.
#[derive(Debug, Clone)]
struct Packed {
    name: &'static str,
    data: Vec<f64>,
    view: View4,
    offsets: Vec<usize>,
    tokens: Vec<usize>,
}

impl Packed {
    /// An all-`fill` THD buffer of `dims` (S the longest sequence) for `tokens` per batch.
    fn new(name: &'static str, dims: [usize; 4], tokens: &[usize], fill: f64) -> Packed {
        let [_, h, _, d] = dims;
        let token = h * d;
        let mut offsets = vec![0];
        for &n in tokens {
            offsets.push(offsets.last().unwrap() + n * token + GAP);
        }
        Packed {
            name,
            data: vec![fill; offsets.last().unwrap() + GAP],
            view: View4 {
                dims,
                strides: [token, d, token, 1],
            },
            offsets,
            tokens: tokens.to_vec(),
        }
    }

    /// `dense`'s real tokens packed, NaN everywhere else.
    fn of(dense: &Host, tokens: &[usize]) -> Packed {
        let mut p = Packed::new(dense.name, dense.view.dims, tokens, f64::NAN);
        for idx in p.real() {
            let at = p.offset(idx);
            p.data[at] = dense.at(idx);
        }
        p
    }

    fn offset(&self, [b, h, s, d]: [usize; 4]) -> usize {
        let st = self.view.strides;
        self.offsets[b] + h * st[1] + s * st[2] + d * st[3]
    }

    /// The indices of real elements, in (b, h, s, d) order.
    fn real(&self) -> Vec<[usize; 4]> {
        indices(self.view.dims)
            .filter(|&[b, _, s, _]| s < self.tokens[b])
            .collect()
    }

    fn r(&self) -> TensorRef<'_> {
        let ragged = Ragged::new("offsets", &self.offsets);
        TensorRef::ragged(self.name, HostSlice::F64(&self.data), self.view, ragged).unwrap()
    }

    fn w(&mut self) -> TensorMut<'_> {
        let ragged = Ragged::new("offsets", &self.offsets);
        TensorMut::ragged(
            self.name,
            HostSliceMut::F64(&mut self.data),
            self.view,
            ragged,
        )
        .unwrap()
    }

    /// The real elements, in (b, h, s, d) order.
    fn values(&self) -> Vec<f64> {
        self.real()
            .into_iter()
            .map(|i| self.data[self.offset(i)])
            .collect()
    }

    /// True when every element outside the real tokens still holds the sentinel.
    fn outside_untouched(&self) -> bool {
        let mut real = vec![false; self.data.len()];
        for i in self.real() {
            real[self.offset(i)] = true;
        }
        self.data
            .iter()
            .zip(&real)
            .all(|(&x, &r)| r || x == SENTINEL)
    }
}

/// The dense results at the real tokens of `like`, in (b, h, s, d) order.
fn at_tokens(dense: &Host, like: &Packed) -> Vec<f64> {
    like.real().into_iter().map(|i| dense.at(i)).collect()
}

/// The naive reference's packed (B, H, S, D) array at the real tokens of `like`.
fn naive_at_tokens(values: &[f64], like: &Packed) -> Vec<f64> {
    let [_, h, s, d] = like.view.dims;
    like.real()
        .into_iter()
        .map(|[bb, hh, ss, dd]| values[((bb * h + hh) * s + ss) * d + dd])
        .collect()
}

/// The ragged inputs of a case: Q, K, V and W (= dO) packed; bias and sink stay dense.
struct RaggedData {
    q: Packed,
    k: Packed,
    v: Packed,
    w: Packed,
}

impl RaggedData {
    fn of(case: &Case, data: &Data) -> RaggedData {
        let (q_len, kv_len) = lens(case);
        RaggedData {
            q: Packed::of(&data.q, &q_len),
            k: Packed::of(&data.k, &kv_len),
            v: Packed::of(&data.v, &kv_len),
            w: Packed::of(&data.w, &q_len),
        }
    }
}

/// The real tokens per batch: the padding mask's lengths, else S for every batch.
fn lens(case: &Case) -> (Vec<usize>, Vec<usize>) {
    let s = case.shape();
    match &case.problem.seq_lens {
        Some(l) => (l.q.clone(), l.kv.clone()),
        None => (vec![s.sq; s.b], vec![s.skv; s.b]),
    }
}

/// The ragged engine's outputs.
struct RaggedResults {
    o: Packed,
    stats: Packed,
    dq: Packed,
    dk: Packed,
    dv: Packed,
    dbias: Option<Host>,
    dsink: Option<Host>,
}

fn inputs<'a>(x: &'a RaggedData, data: &'a Data) -> AttentionInputs<'a> {
    AttentionInputs {
        q: x.q.r(),
        k: x.k.r(),
        v: x.v.r(),
        bias: data.bias.as_ref().map(Host::r),
        sink: data.sink.as_ref().map(Host::r),
        dropout_mask: None,
    }
}

fn ragged_forward(case: &Case, x: &RaggedData, data: &Data) -> (Packed, Packed) {
    let s = case.shape();
    let (q_len, _) = lens(case);
    let mut o = Packed::new("O", [s.b, s.hq, s.sq, s.dv], &q_len, SENTINEL);
    let mut stats = Packed::new("Stats", [s.b, s.hq, s.sq, 1], &q_len, SENTINEL);
    let out = ForwardOutputs {
        o: o.w(),
        stats: Some(stats.w()),
    };
    forward::<f64>(&case.problem, &inputs(x, data), out).unwrap();
    (o, stats)
}

fn ragged_f64(case: &Case, x: &RaggedData, data: &Data) -> RaggedResults {
    let s = case.shape();
    let (q_len, kv_len) = lens(case);
    let (o, stats) = ragged_forward(case, x, data);
    let dense_out = |h: &Host| {
        let mut h = h.clone();
        h.data.fill(0.0);
        h
    };
    let mut r = RaggedResults {
        dq: Packed::new("dQ", [s.b, s.hq, s.sq, s.dqk], &q_len, SENTINEL),
        dk: Packed::new("dK", [s.b, s.hk, s.skv, s.dqk], &kv_len, SENTINEL),
        dv: Packed::new("dV", [s.b, s.hv, s.skv, s.dv], &kv_len, SENTINEL),
        dbias: data.bias.as_ref().map(dense_out),
        dsink: data.sink.as_ref().map(dense_out),
        o,
        stats,
    };
    let x_in = BackwardInputs {
        attn: inputs(x, data),
        o: r.o.r(),
        d_o: x.w.r(),
        stats: r.stats.r(),
    };
    let out = BackwardOutputs {
        dq: r.dq.w(),
        dk: r.dk.w(),
        dv: r.dv.w(),
        dbias: r.dbias.as_mut().map(Host::w),
        dsink: r.dsink.as_mut().map(Host::w),
    };
    backward::<f64>(&case.problem, &x_in, out).unwrap();
    r
}

/// Lengths per batch: the longest, a short one, an empty one, one in between.
fn ragged_cases() -> Vec<Case> {
    let (b, sq, skv, d) = (4, 9, 11, 4);
    let (q, kv) = ([9, 2, 0, 5], [11, 7, 4, 0]);
    let c = |name| Case::new(name, b, 2, sq, skv, d).padding(&q, &kv);
    vec![
        c("ragged_plain"),
        c("ragged_causal_top_left").band(None, Some(0), false),
        c("ragged_causal_bottom_right").band(None, Some(0), true),
        c("ragged_sliding_window_bottom_right").band(Some(3), Some(1), true),
        Case::new("ragged_gqa", b, 4, sq, skv, d)
            .padding(&q, &kv)
            .heads(2, 1)
            .band(None, Some(0), false),
        c("ragged_dqk_ne_dv").dv(d + 3),
        c("ragged_bias_dbias").bias(true, false),
        c("ragged_sink").sink().band(None, Some(0), false),
        // No padding mask: every sequence has S tokens, only its offset moves.
        Case::new("ragged_no_padding_causal_bottom_right", b, 2, sq, skv, d).band(
            None,
            Some(0),
            true,
        ),
    ]
}

#[test]
fn ragged_layouts_compute_what_padded_layouts_compute_and_touch_only_real_tokens() {
    for case in ragged_cases() {
        let data = Data::random(&case, 11);
        let dense: Results = engine_f64(&case, &data);
        let x = RaggedData::of(&case, &data);
        let r = ragged_f64(&case, &x, &data);
        let pairs = [
            (&r.o, &dense.o),
            (&r.stats, &dense.stats),
            (&r.dq, &dense.dq),
            (&r.dk, &dense.dk),
            (&r.dv, &dense.dv),
        ];
        for (packed, padded) in pairs {
            let (got, want) = (packed.values(), at_tokens(padded, packed));
            let same = got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{}: {} differs from the padded layout",
                case.name, packed.name
            );
            assert!(
                packed.outside_untouched(),
                "{}: {} was written outside its tokens",
                case.name,
                packed.name
            );
        }
        for (ragged, padded) in [(&r.dbias, &dense.dbias), (&r.dsink, &dense.dsink)] {
            if let (Some(a), Some(b)) = (ragged, padded) {
                assert_eq!(a.logical(), b.logical(), "{}: {}", case.name, a.name);
            }
        }
    }
}

#[test]
fn ragged_results_agree_with_the_naive_reference() {
    for case in ragged_cases() {
        let data = Data::random(&case, 5);
        let want = naive(&case, &data);
        let r = ragged_f64(&case, &RaggedData::of(&case, &data), &data);
        let pairs = [
            (&r.o, &want.o),
            (&r.stats, &want.stats),
            (&r.dq, &want.dq),
            (&r.dk, &want.dk),
            (&r.dv, &want.dv),
        ];
        for (packed, values) in pairs {
            let w = worst(
                &packed.values(),
                &naive_at_tokens(values, packed),
                1e-12,
                1e-10,
            );
            assert!(w <= 1.0, "{}: {} (score {w})", case.name, packed.name);
        }
        if let Some(dbias) = &r.dbias {
            let w = worst(&dbias.logical(), &want.dbias, 1e-12, 1e-10);
            assert!(w <= 1.0, "{}: dBias (score {w})", case.name);
        }
        if let Some(dsink) = &r.dsink {
            let w = worst(&dsink.logical(), &want.dsink, 1e-12, 1e-10);
            assert!(w <= 1.0, "{}: dSink (score {w})", case.name);
        }
    }
}

/// Selects one input tensor of the ragged data.
type Pick = fn(&mut RaggedData) -> &mut Packed;

/// L = sum(O * W) over the real tokens, through the ragged forward.
fn loss(case: &Case, x: &RaggedData, data: &Data) -> f64 {
    let (o, _) = ragged_forward(case, x, data);
    o.values()
        .iter()
        .zip(x.w.values())
        .map(|(a, b)| a * b)
        .sum()
}

#[test]
fn ragged_gradients_match_finite_differences() {
    const H: f64 = 1e-6;
    for case in ragged_cases() {
        let data = Data::random(&case, 9);
        let x = RaggedData::of(&case, &data);
        let r = ragged_f64(&case, &x, &data);
        let pick: [(&str, Pick, &Packed); 3] = [
            ("dQ", |x| &mut x.q, &r.dq),
            ("dK", |x| &mut x.k, &r.dk),
            ("dV", |x| &mut x.v, &r.dv),
        ];
        for (name, tensor, analytic) in pick {
            let mut work = RaggedData::of(&case, &data);
            let idx = tensor(&mut work).real();
            let numeric: Vec<f64> = idx
                .into_iter()
                .map(|i| {
                    let at = tensor(&mut work).offset(i);
                    let x0 = tensor(&mut work).data[at];
                    tensor(&mut work).data[at] = x0 + H;
                    let up = loss(&case, &work, &data);
                    tensor(&mut work).data[at] = x0 - H;
                    let down = loss(&case, &work, &data);
                    tensor(&mut work).data[at] = x0;
                    (up - down) / (2.0 * H)
                })
                .collect();
            let got = analytic.values();
            let w = worst(&got, &numeric, 1e-7, 1e-6);
            assert!(
                w <= 1.0,
                "{}: {name} vs finite differences (score {w})",
                case.name
            );
            assert!(
                got.iter().any(|&g| g != 0.0),
                "{}: {name} is all zero",
                case.name
            );
        }
    }
}

/// Runs the ragged forward with the offsets of Q replaced by `offsets`.
fn forward_with_q_offsets(offsets: &[usize], q_len: [usize; 2]) -> Result<(), EngineError> {
    let case = Case::new("offsets", 2, 2, 4, 4, 2).padding(&q_len, &[4, 4]);
    let data = Data::random(&case, 1);
    let mut x = RaggedData::of(&case, &data);
    x.q.offsets = offsets.to_vec();
    let s = case.shape();
    let mut o = Packed::new("O", [s.b, s.hq, s.sq, s.dv], &q_len, SENTINEL);
    let ragged = Ragged::new("q_offsets", &x.q.offsets);
    let q = TensorRef::ragged("Q", HostSlice::F64(&x.q.data), x.q.view, ragged)?;
    let inputs = AttentionInputs {
        q,
        ..inputs(&x, &data)
    };
    let out = ForwardOutputs {
        o: o.w(),
        stats: None,
    };
    let result = forward::<f64>(&case.problem, &inputs, out);
    assert!(
        result.is_ok() || o.data.iter().all(|&v| v == SENTINEL),
        "a refused call wrote O"
    );
    result
}

#[test]
fn bad_offsets_are_refused_with_the_tensor_and_the_limit() {
    // Q (B=2, H=2, S=4, D=2): 4 elements a token, lengths (4, 4): offsets (0, 19, 38) with
    // gaps of 3, and a buffer of 41 elements.
    assert!(forward_with_q_offsets(&[0, 19, 35], [4, 4]).is_ok());
    assert_eq!(
        forward_with_q_offsets(&[0, 19], [4, 4]).unwrap_err(),
        EngineError::DimsMismatch {
            tensor: "q_offsets".into(),
            expected: vec![3, 1, 1, 1],
            actual: vec![2, 1, 1, 1]
        }
    );
    assert_eq!(
        forward_with_q_offsets(&[19, 0, 35], [4, 4]).unwrap_err(),
        EngineError::RaggedOffsetsNotMonotone {
            tensor: "Q".into(),
            offsets: "q_offsets".into(),
            batch: 0,
            start: 19,
            end: 0
        }
    );
    assert_eq!(
        forward_with_q_offsets(&[0, 19, 42], [4, 4]).unwrap_err(),
        EngineError::RaggedPastBufferEnd {
            tensor: "Q".into(),
            offsets: "q_offsets".into(),
            last: 42,
            len: 41
        }
    );
    // Sequence 0 would run into sequence 1 (overlapping sequences).
    assert_eq!(
        forward_with_q_offsets(&[0, 12, 35], [4, 4]).unwrap_err(),
        EngineError::RaggedSequenceOverflow {
            tensor: "Q".into(),
            offsets: "q_offsets".into(),
            batch: 0,
            tokens: 4,
            needed: 16,
            room: 12
        }
    );
    // The last sequence may not run past the last offset either.
    assert!(matches!(
        forward_with_q_offsets(&[0, 19, 30], [4, 4]).unwrap_err(),
        EngineError::RaggedSequenceOverflow { batch: 1, .. }
    ));
    // Fewer tokens fit where more did not.
    assert!(forward_with_q_offsets(&[0, 12, 35], [3, 4]).is_ok());
}

#[test]
fn dense_tensors_cannot_be_ragged() {
    let case = Case::new("dense", 2, 2, 4, 4, 2)
        .padding(&[4, 4], &[4, 4])
        .bias(true, true);
    let data = Data::random(&case, 1);
    let x = RaggedData::of(&case, &data);
    let bias = data.bias.as_ref().unwrap();
    let offsets = [0, 16, 32];
    let ragged = Ragged::new("bias_offsets", &offsets);
    let inputs = AttentionInputs {
        bias: Some(
            TensorRef::ragged("Bias", HostSlice::F64(&bias.data), bias.view, ragged).unwrap(),
        ),
        ..inputs(&x, &data)
    };
    let s = case.shape();
    let mut o = Packed::new("O", [s.b, s.hq, s.sq, s.dv], &[4, 4], SENTINEL);
    let out = ForwardOutputs {
        o: o.w(),
        stats: None,
    };
    assert_eq!(
        forward::<f64>(&case.problem, &inputs, out).unwrap_err(),
        EngineError::RaggedNotAllowed {
            tensor: "Bias".into()
        }
    );
}
