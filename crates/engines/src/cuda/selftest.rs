//! GPU conformance sweep: for a table of cases, run the sm120 kernels and the CPU engine's math
//! in f64 ([`super::cpu_reference`]) on the same inputs and compare every output by
//! ||out - ref|| / ||ref|| (bf16 <= 1e-2, f16 <= 3e-3), with no NaN allowed. Outputs (and the
//! workspace) are poisoned before each run so that unwritten elements show.

use std::sync::Arc;

use cudarc::driver::CudaSlice;
use half::{bf16, f16};

use rime_analyzer::Route;

use super::alloc;
use super::compile::{IoType, PtxCache};
use super::context::CudaDevice;
use super::cpu_reference::{self, DenseInputs};
use super::error::CudaError;
use super::guard::Guarded;
use super::plan::{BackwardBuffers, ForwardBuffers, Sm120Plan};
use super::problem::{AttnProblem, Band, BiasShape, Layouts, Strides};
use crate::EngineError;

/// Physical layout of the io tensors in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// (B, H, S, D) packed.
    Bhsd,
    /// (B, S, H, D) packed (heads interleaved).
    Bshd,
}

/// One conformance case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Short name.
    pub name: String,
    /// The problem (strides filled from `layout`).
    pub problem: AttnProblem,
    /// Layout of the io tensors.
    pub layout: Layout,
    /// dQ route of the backward.
    pub route: Route,
}

/// Builder-style description used by the case table.
#[derive(Debug, Clone, Copy)]
struct Spec {
    b: usize,
    hq: usize,
    hk: usize,
    sq: usize,
    skv: usize,
    dqk: usize,
    dv: usize,
    band: Band,
    bias: Option<(usize, usize)>,
    dbias: bool,
    alibi: bool,
    padding: bool,
}

const fn spec(b: usize, hq: usize, hk: usize, sq: usize, skv: usize, d: usize) -> Spec {
    Spec {
        b,
        hq,
        hk,
        sq,
        skv,
        dqk: d,
        dv: d,
        band: Band {
            right: None,
            left: None,
            bottom_right: false,
        },
        bias: None,
        dbias: false,
        alibi: false,
        padding: false,
    }
}

const CAUSAL: Band = Band {
    right: Some(0),
    left: None,
    bottom_right: false,
};
const CAUSAL_BR: Band = Band {
    right: Some(0),
    left: None,
    bottom_right: true,
};
const WINDOW: Band = Band {
    right: Some(0),
    left: Some(64),
    bottom_right: false,
};
const BAND: Band = Band {
    right: Some(17),
    left: Some(33),
    bottom_right: false,
};

fn make(name: &str, s: Spec, io: IoType, layout: Layout, route: Route) -> Case {
    let (hv, bias) = (
        s.hk,
        s.bias.map(|(batch, heads)| BiasShape { batch, heads }),
    );
    let io_strides = |h: usize, seq: usize, d: usize| match layout {
        Layout::Bhsd => Strides::bhsd(h, seq, d),
        Layout::Bshd => Strides::bshd(h, seq, d),
    };
    let bias_strides = bias.map_or(Strides::default(), |b| Strides::bhsd(b.heads, s.sq, s.skv));
    let layouts = Layouts {
        q: io_strides(s.hq, s.sq, s.dqk),
        k: io_strides(s.hk, s.skv, s.dqk),
        v: io_strides(hv, s.skv, s.dv),
        o: io_strides(s.hq, s.sq, s.dv),
        d_o: io_strides(s.hq, s.sq, s.dv),
        stats: Strides::bhsd(s.hq, s.sq, 1),
        bias: bias_strides,
        dq: io_strides(s.hq, s.sq, s.dqk),
        dk: io_strides(s.hk, s.skv, s.dqk),
        dv: io_strides(hv, s.skv, s.dv),
        dbias: bias_strides,
        seq_q: Strides { b: 1, h: 1, s: 1 },
        seq_kv: Strides { b: 1, h: 1, s: 1 },
    };
    let dt = match io {
        IoType::Bf16 => "bf16",
        IoType::F16 => "f16",
    };
    let lay = match layout {
        Layout::Bhsd => "bhsd",
        Layout::Bshd => "bshd",
    };
    Case {
        name: format!("{name}/{dt}/{lay}/{route}"),
        problem: AttnProblem {
            batch: s.b,
            hq: s.hq,
            hk: s.hk,
            hv,
            sq: s.sq,
            skv: s.skv,
            dqk: s.dqk,
            dv: s.dv,
            io,
            scale: 1.0 / (s.dqk as f32).sqrt(),
            band: s.band,
            bias,
            dbias: s.dbias,
            alibi: s.alibi,
            padding: s.padding,
            layouts,
        },
        layout,
        route,
    }
}

/// The case table. `small` keeps shapes tiny (for compute-sanitizer) while still reaching every
/// kernel specialization: each head-dim configuration, both dtypes, no bias / bias / direct and
/// accumulated dBias, masks, GQA and ragged tails.
pub fn cases(small: bool) -> Vec<Case> {
    let mut v = Vec::new();
    let both = |v: &mut Vec<Case>, name: &str, s: Spec, layout: Layout| {
        for route in Route::ALL {
            v.push(make(name, s, IoType::Bf16, layout, route));
            v.push(make(name, s, IoType::F16, layout, route));
        }
    };
    for d in [(64, 64), (128, 128), (192, 128)] {
        let mut s = spec(2, 4, 2, 70, 90, d.0);
        s.dv = d.1;
        let tag = format!("d{}v{}", d.0, d.1);
        both(&mut v, &format!("{tag}-plain"), s, Layout::Bhsd);
        both(
            &mut v,
            &format!("{tag}-causal-bias-dbias"),
            Spec {
                band: CAUSAL,
                bias: Some((2, 4)),
                dbias: true,
                ..s
            },
            Layout::Bshd,
        );
        both(
            &mut v,
            &format!("{tag}-window-bcast-dbias"),
            Spec {
                band: WINDOW,
                bias: Some((1, 4)),
                dbias: true,
                ..s
            },
            Layout::Bhsd,
        );
        both(
            &mut v,
            &format!("{tag}-br-causal"),
            Spec {
                band: CAUSAL_BR,
                sq: 33,
                ..s
            },
            Layout::Bshd,
        );
        both(
            &mut v,
            &format!("{tag}-alibi-causal"),
            Spec {
                band: CAUSAL,
                alibi: true,
                ..s
            },
            Layout::Bhsd,
        );
    }
    // Head dims padded up to the compiled envelope (zero-filled, never stored).
    let padded = [
        ("pad-d40", spec(2, 4, 2, 70, 90, 40)),
        (
            "pad-d96-causal-bias-dbias",
            Spec {
                band: CAUSAL,
                bias: Some((2, 4)),
                dbias: true,
                ..spec(2, 4, 2, 70, 90, 96)
            },
        ),
        (
            "pad-d160v96-alibi-causal",
            Spec {
                band: CAUSAL,
                alibi: true,
                dv: 96,
                ..spec(2, 4, 2, 70, 90, 160)
            },
        ),
    ];
    for (name, s) in padded {
        both(&mut v, name, s, Layout::Bshd);
    }
    // Padding mask (per-batch lengths: full, 2/3, 1/3), with bias and dBias, bottom-right.
    for d in [(64, 64), (128, 128), (192, 128)] {
        let s = Spec {
            padding: true,
            bias: Some((3, 1)),
            dbias: true,
            dv: d.1,
            ..spec(3, 2, 1, 75, 66, d.0)
        };
        both(
            &mut v,
            &format!("d{}v{}-padding-bias-hbcast-dbias", d.0, d.1),
            s,
            Layout::Bhsd,
        );
        let br = Spec {
            padding: true,
            band: CAUSAL_BR,
            dv: d.1,
            ..spec(3, 2, 2, 90, 40, d.0)
        };
        both(
            &mut v,
            &format!("d{}v{}-padding-br-causal", d.0, d.1),
            br,
            Layout::Bshd,
        );
    }
    if small {
        return v;
    }
    let l = Layout::Bshd;
    let big = [
        ("len1x17", spec(2, 2, 2, 1, 17, 64), Layout::Bhsd),
        ("len17", spec(2, 2, 1, 17, 17, 128), l),
        (
            "len1000-alibi-causal",
            Spec {
                band: CAUSAL,
                alibi: true,
                ..spec(1, 6, 6, 1000, 1000, 128)
            },
            Layout::Bhsd,
        ),
        (
            "len1000-causal",
            Spec {
                band: CAUSAL,
                ..spec(1, 4, 4, 1000, 1000, 128)
            },
            Layout::Bhsd,
        ),
        ("len1537", spec(1, 2, 2, 1537, 1537, 64), l),
        (
            "len1537-causal-d192",
            Spec {
                band: CAUSAL,
                dv: 128,
                ..spec(1, 2, 2, 1537, 1537, 192)
            },
            l,
        ),
        (
            "sq100-skv300-br-causal",
            Spec {
                band: CAUSAL_BR,
                ..spec(2, 4, 4, 100, 300, 64)
            },
            l,
        ),
        (
            "sq300-skv100-causal",
            Spec {
                band: CAUSAL,
                ..spec(2, 4, 4, 300, 100, 128)
            },
            Layout::Bhsd,
        ),
        ("gqa32x8", spec(1, 32, 8, 257, 257, 64), l),
        (
            "gqa32x8-causal-bias",
            Spec {
                band: CAUSAL,
                bias: Some((1, 32)),
                dbias: true,
                ..spec(2, 32, 8, 130, 130, 128)
            },
            l,
        ),
        ("mqa8x1", spec(2, 8, 1, 200, 200, 128), Layout::Bhsd),
        (
            "mqa8x1-band-bias-headbcast",
            Spec {
                band: BAND,
                bias: Some((2, 1)),
                dbias: true,
                ..spec(2, 8, 1, 211, 187, 64)
            },
            l,
        ),
        (
            "bias11-dbias",
            Spec {
                bias: Some((1, 1)),
                dbias: true,
                ..spec(3, 2, 2, 150, 77, 64)
            },
            Layout::Bhsd,
        ),
        (
            "bias-no-dbias",
            Spec {
                bias: Some((2, 2)),
                ..spec(2, 2, 2, 129, 129, 128)
            },
            l,
        ),
        (
            "window-long",
            Spec {
                band: WINDOW,
                ..spec(1, 2, 2, 1000, 1000, 64)
            },
            l,
        ),
    ];
    for (name, s, layout) in big {
        both(&mut v, name, s, layout);
    }
    v
}

/// Relative error of one output.
#[derive(Debug, Clone)]
pub struct OutputCheck {
    /// Port name.
    pub name: &'static str,
    /// ||out - ref|| / ||ref|| (over finite reference entries).
    pub rel_err: f64,
    /// Elements that are NaN, or infinite where the reference is finite.
    pub bad: usize,
}

/// Result of one case.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// Case name.
    pub name: String,
    /// Tolerance applied.
    pub tolerance: f64,
    /// Per-output checks.
    pub outputs: Vec<OutputCheck>,
    /// Set when the engine returned an error instead of results.
    pub error: Option<String>,
}

impl CaseReport {
    /// True when every output is within tolerance and finite, and nothing failed.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self
                .outputs
                .iter()
                .all(|o| o.bad == 0 && o.rel_err <= self.tolerance)
    }
}

/// splitmix64: a small seeded generator (tests must not depend on a `rand` version).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn to_bits(io: IoType, x: f32) -> u16 {
    match io {
        IoType::Bf16 => bf16::from_f32(x).to_bits(),
        IoType::F16 => f16::from_f32(x).to_bits(),
    }
}

fn from_bits(io: IoType, b: u16) -> f32 {
    match io {
        IoType::Bf16 => bf16::from_bits(b).to_f32(),
        IoType::F16 => f16::from_bits(b).to_f32(),
    }
}

/// Random dense tensor rounded to the io dtype: (bits, values).
fn random(io: IoType, n: usize, rng: &mut Rng) -> (Vec<u16>, Vec<f32>) {
    let bits: Vec<u16> = (0..n).map(|_| to_bits(io, rng.next())).collect();
    let vals = bits.iter().map(|&b| from_bits(io, b)).collect();
    (bits, vals)
}

fn dense_index(dims: [usize; 4], s: Strides) -> impl Iterator<Item = usize> {
    let [b, h, n, d] = dims;
    (0..b).flat_map(move |bi| {
        (0..h).flat_map(move |hi| {
            (0..n).flat_map(move |ni| {
                (0..d).map(move |di| {
                    (bi as i64 * s.b + hi as i64 * s.h + ni as i64 * s.s) as usize + di
                })
            })
        })
    })
}

fn scatter<T: Copy>(dense: &[T], dims: [usize; 4], s: Strides, fill: T) -> Vec<T> {
    let mut out = vec![fill; s.extent(dims)];
    for (src, dst) in dense.iter().zip(dense_index(dims, s)) {
        out[dst] = *src;
    }
    out
}

fn gather<T: Copy>(buf: &[T], dims: [usize; 4], s: Strides) -> Vec<T> {
    dense_index(dims, s).map(|i| buf[i]).collect()
}

fn compare(name: &'static str, out: &[f32], reference: &[f64]) -> OutputCheck {
    let (mut num, mut den, mut bad) = (0.0f64, 0.0f64, 0usize);
    for (&o, &r) in out.iter().zip(reference) {
        if r.is_finite() {
            if !o.is_finite() {
                bad += 1;
                continue;
            }
            num += (f64::from(o) - r).powi(2);
            den += r * r;
        } else if f64::from(o) != r {
            bad += 1; // e.g. Stats of a fully masked row must be +inf too
        }
    }
    let rel_err = if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    };
    OutputCheck { name, rel_err, bad }
}

/// Runs every case on `dev`, calling `each` with each report as it completes. With `guards`,
/// every output and the workspace sit between guard zones that must come back unchanged
/// ([`super::guard`]).
pub fn run(
    dev: &CudaDevice,
    cases: &[Case],
    guards: bool,
    mut each: impl FnMut(&CaseReport),
) -> Vec<CaseReport> {
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let report = match run_case(dev, c, 0x5eed + i as u64, guards) {
                Ok(outputs) => CaseReport {
                    name: c.name.clone(),
                    tolerance: tolerance(c),
                    outputs,
                    error: None,
                },
                Err(e) => CaseReport {
                    name: c.name.clone(),
                    tolerance: tolerance(c),
                    outputs: Vec::new(),
                    error: Some(e.to_string()),
                },
            };
            each(&report);
            report
        })
        .collect()
}

fn tolerance(c: &Case) -> f64 {
    match c.problem.io {
        IoType::Bf16 => 1e-2,
        IoType::F16 => 3e-3,
    }
}

/// Every byte of an unwritten output: 0xffff is NaN in both bf16 and f16, as 0xffffffff in f32.
const POISON_BYTE: u8 = 0xff;

/// Inputs of one case rounded to the io dtype (bits for the device, values for the reference)
/// and the padding lengths.
struct HostInputs {
    q: (Vec<u16>, Vec<f32>),
    k: (Vec<u16>, Vec<f32>),
    v: (Vec<u16>, Vec<f32>),
    d_o: (Vec<u16>, Vec<f32>),
    bias: Option<(Vec<u16>, Vec<f32>)>,
    lens: Option<(Vec<i32>, Vec<i32>)>,
}

impl HostInputs {
    /// Draws Q, K, V, dO and Bias (in that order) from `seed`, packed (B, H, S, D).
    fn random(p: &AttnProblem, seed: u64) -> Self {
        let io = p.io;
        let mut rng = Rng(seed);
        let mut draw = |n: usize| random(io, n, &mut rng);
        let q = draw(p.batch * p.hq * p.sq * p.dqk);
        let k = draw(p.batch * p.hk * p.skv * p.dqk);
        let v = draw(p.batch * p.hv * p.skv * p.dv);
        let d_o = draw(p.batch * p.hq * p.sq * p.dv);
        let bias = p.bias.map(|b| draw(b.batch * b.heads * p.sq * p.skv));
        // Padding mask lengths: a full batch, 2/3 and 1/3 of the length (at least 1), cycling.
        let lens = p.padding.then(|| {
            let pick = |n: usize, b: usize| match b % 3 {
                0 => n as i32,
                1 => (n as i32 * 2 / 3).max(1),
                _ => (n as i32 / 3).max(1),
            };
            let q = (0..p.batch).map(|b| pick(p.sq, b)).collect();
            let kv = (0..p.batch).map(|b| pick(p.skv, b + 1)).collect();
            (q, kv)
        });
        HostInputs {
            q,
            k,
            v,
            d_o,
            bias,
            lens,
        }
    }

    /// The values the reference reads.
    fn dense(&self) -> DenseInputs<'_> {
        DenseInputs {
            q: &self.q.1,
            k: &self.k.1,
            v: &self.v.1,
            bias: self.bias.as_ref().map(|b| b.1.as_slice()),
            seq_lens: self
                .lens
                .as_ref()
                .map(|(q, kv)| (q.as_slice(), kv.as_slice())),
        }
    }
}

fn run_case(
    dev: &CudaDevice,
    case: &Case,
    seed: u64,
    guards: bool,
) -> Result<Vec<OutputCheck>, EngineError> {
    let p = &case.problem;
    let l = &p.layouts;
    let io = p.io;
    let plan = Sm120Plan::new(p.clone(), case.route)?;
    let dq_dims = [p.batch, p.hq, p.sq, p.dqk];
    let dk_dims = [p.batch, p.hk, p.skv, p.dqk];
    let dv_dims = [p.batch, p.hv, p.skv, p.dv];
    let o_dims = [p.batch, p.hq, p.sq, p.dv];
    let st_dims = [p.batch, p.hq, p.sq, 1];
    let bias_dims = p.bias.map(|b| [b.batch, b.heads, p.sq, p.skv]);
    let host = HostInputs::random(p, seed);
    let d_lens = match &host.lens {
        Some((q, kv)) => Some((
            alloc::upload(dev, "SEQ_LEN_Q", q)?,
            alloc::upload(dev, "SEQ_LEN_KV", kv)?,
        )),
        None => None,
    };
    let seq_lens = || d_lens.as_ref().map(|(q, kv)| (q.as_view(), kv.as_view()));

    let up =
        |name: &str, bits: &[u16], dims, s| alloc::upload(dev, name, &scatter(bits, dims, s, 0u16));
    // Outputs and the workspace: poisoned, inside guard zones when `guards`.
    let out = |name: &str, dims, s: Strides| {
        Guarded::<u16>::new(dev, name, s.extent(dims), POISON_BYTE, guards)
    };
    let d_q = up("Q", &host.q.0, dq_dims, l.q)?;
    let d_k = up("K", &host.k.0, dk_dims, l.k)?;
    let d_v = up("V", &host.v.0, dv_dims, l.v)?;
    let d_do = up("dO", &host.d_o.0, o_dims, l.d_o)?;
    let d_bias: Option<CudaSlice<u16>> = match (&host.bias, bias_dims) {
        (Some((bits, _)), Some(dims)) => Some(up("Bias", bits, dims, l.bias)?),
        _ => None,
    };
    let mut d_o_buf = out("O", o_dims, l.o)?;
    let mut d_stats =
        Guarded::<f32>::new(dev, "Stats", l.stats.extent(st_dims), POISON_BYTE, guards)?;

    plan.forward(
        dev,
        ForwardBuffers {
            q: d_q.as_view(),
            k: d_k.as_view(),
            v: d_v.as_view(),
            bias: d_bias.as_ref().map(CudaSlice::as_view),
            seq_lens: seq_lens(),
            o: d_o_buf.view_mut(),
            stats: d_stats.view_mut(),
        },
    )?;
    dev.synchronize()?;
    d_o_buf.check(dev)?;
    d_stats.check(dev)?;
    let o_gpu_bits = gather(&d_o_buf.download(dev)?, o_dims, l.o);
    let stats_gpu = gather(&d_stats.download(dev)?, st_dims, l.stats);
    let o_gpu: Vec<f32> = o_gpu_bits.iter().map(|&b| from_bits(io, b)).collect();

    let inputs = host.dense();
    let (o_ref, stats_ref) = cpu_reference::forward(p, &inputs)?;
    let mut checks = vec![
        compare("O", &o_gpu, &o_ref),
        compare("Stats", &stats_gpu, &stats_ref),
    ];

    let mut d_dk = out("dK", dk_dims, l.dk)?;
    let mut d_dv = out("dV", dv_dims, l.dv)?;
    let mut d_dbias = match bias_dims {
        Some(dims) if p.dbias => Some(out("dBias", dims, l.dbias)?),
        _ => None,
    };
    // Deterministic routes run twice (dQ and workspace poisoned again) and must agree bit for
    // bit.
    let passes = if case.route == Route::Atomic { 1 } else { 2 };
    let mut dq_bits = Vec::new();
    let mut d_dq = out("dQ", dq_dims, l.dq)?;
    for _ in 0..passes {
        let ws = Guarded::<u8>::new(
            dev,
            "workspace",
            plan.workspace_bytes(),
            POISON_BYTE,
            guards,
        )?;
        d_dq.refill(dev, POISON_BYTE)?;
        plan.backward(
            dev,
            BackwardBuffers {
                q: d_q.as_view(),
                k: d_k.as_view(),
                v: d_v.as_view(),
                o: d_o_buf.view(),
                d_o: d_do.as_view(),
                stats: d_stats.view(),
                bias: d_bias.as_ref().map(CudaSlice::as_view),
                seq_lens: seq_lens(),
                dq: d_dq.view_mut(),
                dk: d_dk.view_mut(),
                dv: d_dv.view_mut(),
                dbias: d_dbias.as_mut().map(Guarded::view_mut),
                workspace: ws.view(),
            },
        )?;
        dev.synchronize()?;
        for g in [&d_dq, &d_dk, &d_dv].into_iter().chain(d_dbias.as_ref()) {
            g.check(dev)?;
        }
        ws.check(dev)?;
        dq_bits.push(d_dq.download(dev)?);
    }
    let fetch = |buf: &Guarded<u16>, dims, s| -> Result<Vec<f32>, CudaError> {
        Ok(gather(&buf.download(dev)?, dims, s)
            .iter()
            .map(|&b| from_bits(io, b))
            .collect())
    };
    let grads = cpu_reference::backward(p, &inputs, &o_gpu, &host.d_o.1, &stats_gpu)?;
    checks.push(compare("dQ", &fetch(&d_dq, dq_dims, l.dq)?, &grads.dq));
    checks.push(compare("dK", &fetch(&d_dk, dk_dims, l.dk)?, &grads.dk));
    checks.push(compare("dV", &fetch(&d_dv, dv_dims, l.dv)?, &grads.dv));
    if let (Some(buf), Some(dims), Some(reference)) = (&d_dbias, bias_dims, &grads.dbias) {
        checks.push(compare("dBias", &fetch(buf, dims, l.dbias)?, reference));
    }
    if let [first, second] = dq_bits.as_slice() {
        let differing = first.iter().zip(second).filter(|(a, b)| a != b).count();
        checks.push(OutputCheck {
            name: "dQ-repeat",
            rel_err: 0.0,
            bad: differing,
        });
    }
    Ok(checks)
}

/// Opens device 0 with the default kernel cache.
///
/// # Errors
/// [`CudaError::Unavailable`] with the reason when there is no usable GPU.
pub fn open_default_device() -> Result<CudaDevice, CudaError> {
    CudaDevice::open(0, Arc::new(PtxCache::new(PtxCache::default_dir())))
}
