//! The engine (f32 math, f16 / bf16 / f32 inputs) agrees with the independent naive f64
//! implementation for every option; fully masked rows give zeros, never NaN; results are
//! bitwise reproducible whatever the thread count.

mod support;

use half::{bf16, f16};
use rime_engines::cpu::{
    backward, forward, AttentionInputs, BackwardInputs, BackwardOutputs, ForwardOutputs, HostSlice,
    HostSliceMut, TensorMut, TensorRef,
};
use support::{cases, naive, worst, Case, Data, Host, Layout};

/// A host tensor converted to an input element type.
enum Typed {
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
}

#[derive(Clone, Copy, Debug)]
enum Io {
    F16,
    Bf16,
    F32,
}

impl Typed {
    fn of(host: &Host, io: Io) -> Typed {
        match io {
            Io::F16 => Typed::F16(host.data.iter().map(|&x| f16::from_f64(x)).collect()),
            Io::Bf16 => Typed::Bf16(host.data.iter().map(|&x| bf16::from_f64(x)).collect()),
            Io::F32 => Typed::F32(host.data.iter().map(|&x| x as f32).collect()),
        }
    }
    fn slice(&self) -> HostSlice<'_> {
        match self {
            Typed::F16(v) => HostSlice::F16(v),
            Typed::Bf16(v) => HostSlice::Bf16(v),
            Typed::F32(v) => HostSlice::F32(v),
        }
    }
}

/// Rounds every input to `io` so that the naive reference sees the values the engine sees.
fn rounded(data: &Data, io: Io) -> Data {
    let round = |h: &Host| {
        let mut h = h.clone();
        for x in &mut h.data {
            *x = match io {
                Io::F16 => f16::from_f64(*x).to_f64(),
                Io::Bf16 => bf16::from_f64(*x).to_f64(),
                Io::F32 => f64::from(*x as f32),
            };
        }
        h
    };
    Data {
        q: round(&data.q),
        k: round(&data.k),
        v: round(&data.v),
        bias: data.bias.as_ref().map(round),
        sink: data.sink.as_ref().map(round_f32),
        dropout_mask: data.dropout_mask.clone(), // 0 and 1: exact in every io type
        w: round(&data.w),
    }
}

fn round_f32(h: &Host) -> Host {
    let mut h = h.clone();
    h.data.iter_mut().for_each(|x| *x = f64::from(*x as f32));
    h
}

/// An f32 output buffer shaped like `h`.
struct Out32 {
    h: Host,
    data: Vec<f32>,
}

impl Out32 {
    fn like(h: &Host) -> Out32 {
        Out32 {
            data: vec![f32::NAN; h.data.len()],
            h: h.clone(),
        }
    }
    fn w(&mut self) -> TensorMut<'_> {
        TensorMut::new(self.h.name, HostSliceMut::F32(&mut self.data), self.h.view).unwrap()
    }
    fn r(&self) -> TensorRef<'_> {
        TensorRef::new(self.h.name, HostSlice::F32(&self.data), self.h.view).unwrap()
    }
    fn logical(&self) -> Vec<f64> {
        let mut h = self.h.clone();
        h.data = self.data.iter().map(|&x| f64::from(x)).collect();
        h.logical()
    }
}

struct Engine32 {
    o: Out32,
    stats: Out32,
    dq: Out32,
    dk: Out32,
    dv: Out32,
    dbias: Option<Out32>,
    dsink: Option<Out32>,
}

fn tref<'a>(name: &'a str, typed: &'a Typed, h: &Host) -> TensorRef<'a> {
    TensorRef::new(name, typed.slice(), h.view).unwrap()
}

fn engine_f32(case: &Case, data: &Data, io: Io) -> Engine32 {
    let s = case.shape();
    let l = case.layout;
    let t = |h: &Host| Typed::of(h, io);
    let (q, k, v, w) = (t(&data.q), t(&data.k), t(&data.v), t(&data.w));
    let bias = data.bias.as_ref().map(t);
    let mask = data.dropout_mask.as_ref().map(t);
    let sink: Option<Vec<f32>> = data
        .sink
        .as_ref()
        .map(|h| h.data.iter().map(|&x| x as f32).collect());
    let inputs = AttentionInputs {
        q: tref("Q", &q, &data.q),
        k: tref("K", &k, &data.k),
        v: tref("V", &v, &data.v),
        bias: bias
            .as_ref()
            .map(|b| tref("Bias", b, data.bias.as_ref().unwrap())),
        sink: sink.as_ref().map(|x| {
            TensorRef::new("Sink", HostSlice::F32(x), data.sink.as_ref().unwrap().view).unwrap()
        }),
        dropout_mask: mask
            .as_ref()
            .map(|m| tref("Dropout_mask", m, data.dropout_mask.as_ref().unwrap())),
    };
    let mut e = Engine32 {
        o: Out32::like(&Host::zeros("O", [s.b, s.hq, s.sq, s.dv], l)),
        stats: Out32::like(&Host::zeros("Stats", [s.b, s.hq, s.sq, 1], Layout::Bhsd)),
        dq: Out32::like(&data.q),
        dk: Out32::like(&data.k),
        dv: Out32::like(&data.v),
        dbias: data.bias.as_ref().map(Out32::like),
        dsink: data.sink.as_ref().map(Out32::like),
    };
    forward::<f32>(
        &case.problem,
        &inputs,
        ForwardOutputs {
            o: e.o.w(),
            stats: Some(e.stats.w()),
        },
    )
    .unwrap();
    let bwd_in = BackwardInputs {
        attn: inputs,
        o: e.o.r(),
        d_o: tref("dO", &w, &data.w),
        stats: e.stats.r(),
    };
    let out = BackwardOutputs {
        dq: e.dq.w(),
        dk: e.dk.w(),
        dv: e.dv.w(),
        dbias: e.dbias.as_mut().map(Out32::w),
        dsink: e.dsink.as_mut().map(Out32::w),
    };
    backward::<f32>(&case.problem, &bwd_in, out).unwrap();
    e
}

fn agree(case: &Case, io: Io, seed: u64) {
    let data = rounded(&Data::random(case, seed), io);
    let want = naive(case, &data);
    let got = engine_f32(case, &data, io);
    let mut pairs = vec![
        ("O", got.o.logical(), &want.o),
        ("Stats", got.stats.logical(), &want.stats),
        ("dQ", got.dq.logical(), &want.dq),
        ("dK", got.dk.logical(), &want.dk),
        ("dV", got.dv.logical(), &want.dv),
    ];
    if let Some(d) = &got.dbias {
        pairs.push(("dBias", d.logical(), &want.dbias));
    }
    if let Some(d) = &got.dsink {
        pairs.push(("dSink", d.logical(), &want.dsink));
    }
    for (name, actual, expected) in pairs {
        let w = worst(&actual, expected, 2e-5, 2e-4);
        assert!(
            w <= 1.0,
            "{} ({io:?}): {name} differs from the naive reference (score {w})",
            case.name
        );
    }
}

#[test]
fn engine_agrees_with_naive_reference_for_every_option() {
    let ios = [Io::F32, Io::Bf16, Io::F16];
    for (n, case) in cases(2, 37, 45, 8).iter().enumerate() {
        agree(case, ios[n % 3], n as u64);
    }
    // Several query blocks (BLOCK_Q = 64) and key ranges that start mid-sequence.
    for (n, case) in cases(1, 150, 131, 16)
        .iter()
        .enumerate()
        .filter(|(n, _)| n % 4 == 0)
    {
        agree(case, ios[n % 3], 100 + n as u64);
    }
    // Several key blocks (BLOCK_KV = 512): the online softmax of the forward and the blocked
    // backward, with masks whose bands cross block edges.
    for (n, case) in cases(1, 70, 1100, 8)
        .iter()
        .enumerate()
        .filter(|(n, _)| n % 3 == 0)
    {
        agree(case, ios[(n / 3) % 3], 200 + n as u64);
    }
}

#[test]
fn fully_masked_rows_give_zeros_not_nan() {
    // Batch 0: bottom-right causal with q_len 6 > kv_len 2 leaves rows 0..4 with no key;
    // batch 1: no keys at all.
    for sink in [false, true] {
        let mut case = Case::new("masked_rows", 2, 2, 6, 5, 4)
            .band(None, Some(0), true)
            .padding(&[6, 3], &[2, 0])
            .bias(true, true);
        if sink {
            case = case.sink();
        }
        let data = Data::random(&case, 3);
        let got = engine_f32(&case, &data, Io::F32);
        let all = [
            &got.o,
            &got.dq,
            &got.dk,
            &got.dv,
            got.dbias.as_ref().unwrap(),
        ];
        for t in all {
            assert!(
                t.logical().iter().all(|x| x.is_finite()),
                "{}: NaN or inf",
                t.h.name
            );
        }
        let s = case.shape();
        let dq = got.dq.logical();
        for h in 0..s.hq {
            for i in 0..6 {
                let row = |b: usize| ((b * s.hq + h) * s.sq + i) * s.dqk;
                let masked_b0 = i < 4;
                assert_eq!(dq[row(0)..row(0) + 4].iter().all(|&x| x == 0.0), masked_b0);
                assert!(dq[row(1)..row(1) + 4].iter().all(|&x| x == 0.0));
            }
        }
        let dk = got.dk.logical();
        assert!(
            dk[s.hk * s.skv * s.dqk..].iter().all(|&x| x == 0.0),
            "batch 1 has no keys"
        );
        agree(&case, Io::F32, 3);
    }
}

#[test]
fn a_sink_of_minus_infinity_is_no_sink() {
    // exp(-inf) = 0 joins every row's sum: the forward and backward are those of the graph
    // without a sink, bitwise, rows with no key included (Stats +inf, not -inf), and dSink is 0
    // (exp(-inf - Stats) = 0), never NaN.
    let sunk = Case::new("sink_minus_inf", 2, 2, 6, 5, 4)
        .band(None, Some(0), true)
        .padding(&[6, 3], &[2, 0])
        .sink();
    let mut data = Data::random(&sunk, 5);
    data.sink.as_mut().unwrap().data.fill(f64::NEG_INFINITY);
    let mut plain = sunk.clone();
    plain.sink = false;
    let plain_data = Data {
        sink: None,
        ..data.clone()
    };
    let got = engine_f32(&sunk, &data, Io::F32);
    let want = engine_f32(&plain, &plain_data, Io::F32);
    let bits = |o: &Out32| o.data.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    for (name, a, b) in [
        ("O", &got.o, &want.o),
        ("Stats", &got.stats, &want.stats),
        ("dQ", &got.dq, &want.dq),
        ("dK", &got.dk, &want.dk),
        ("dV", &got.dv, &want.dv),
    ] {
        assert_eq!(bits(a), bits(b), "{name}");
    }
    assert!(got.stats.data.contains(&f32::INFINITY), "rows with no key");
    assert_eq!(got.dsink.unwrap().data, vec![0.0; 2]);
}

#[test]
fn results_are_bitwise_reproducible_across_thread_counts() {
    // One key block, and three (BLOCK_KV = 512) with a band across their edges.
    for (skv, left) in [(97, 50), (1030, 700)] {
        let case = Case::new("determinism", 2, 4, 130, skv, 16)
            .heads(2, 1)
            .bias(false, true)
            .sink()
            .band(Some(left), Some(3), false);
        let data = Data::random(&case, 11);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let e = pool.install(|| engine_f32(&case, &data, Io::Bf16));
            [
                e.o.data,
                e.dq.data,
                e.dk.data,
                e.dv.data,
                e.dbias.unwrap().data,
                e.dsink.unwrap().data,
            ]
            .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
        };
        let one = run(1);
        assert_eq!(one, run(1), "skv {skv}");
        assert_eq!(one, run(3), "skv {skv}");
    }
}
