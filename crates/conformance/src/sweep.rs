//! The GPU conformance sweep (`rime selftest`): for a table of cases, each a two-node graph (a
//! forward writing O and Stats, the backward reading them), the analyzer's sm120
//! configurations for the live device run through the engine API — the forward, then the
//! backward on the forward's O and Stats with the route under test — and every output is
//! compared with the CPU engine's f64 reference plan on the same inputs by ||out - ref|| /
//! ||ref|| (bf16 <= 1e-2, f16 <= 3e-3), with no NaN allowed. Outputs (and the workspace) are
//! poisoned before each run so that unwritten elements show; deterministic routes run twice
//! and must agree bit for bit. A route the analyzer does not approve for a case is listed with
//! its reason codes, never forced.

use std::sync::Arc;

use rime_analyzer::sm120::kernels::{envelope_dims, KernelRole};
use rime_analyzer::{analyze, EngineKind, Route, SupportReport, Target};
use rime_engines::cpu::Precision;
use rime_engines::cuda::CudaDevice;
use rime_engines::HostBuffer;
use rime_graph::{DataType, TensorId};

use crate::compare::{self, tolerance, CaseReport, OutputCheck};
use crate::exec::{on_cpu, on_device};
use crate::fill::{node_inputs, Fills};
use crate::spec::{BiasSpec, CaseSpec, Layout, CAUSAL, CAUSAL_BOTTOM_RIGHT};
use crate::HarnessError;
use rime_analyzer::Band;

/// One sweep case: a spec and the route its backward runs.
#[derive(Debug, Clone)]
pub struct SweepCase {
    /// Name, `{what}/{dtype}/{layout}/{route}` (`.../inference` for a forward alone).
    pub name: String,
    /// The problem.
    pub spec: CaseSpec,
    /// The dQ route of the backward; `None`: the forward alone, without Stats (inference).
    pub route: Option<Route>,
}

const WINDOW: Band = Band {
    left: Some(64),
    right: Some(0),
    bottom_right: false,
};
const BAND: Band = Band {
    left: Some(33),
    right: Some(17),
    bottom_right: false,
};

fn bias(per_batch: bool, per_head: bool) -> Option<BiasSpec> {
    Some(BiasSpec {
        per_batch,
        per_head,
    })
}

/// Padding lengths: a full batch, 2/3 and 1/3 of the length (at least 1), cycling; the KV
/// lengths one batch ahead in the cycle.
fn lens(b: usize, sq: usize, skv: usize) -> (Vec<usize>, Vec<usize>) {
    let pick = |n: usize, i: usize| match i % 3 {
        0 => n,
        1 => (n * 2 / 3).max(1),
        _ => (n / 3).max(1),
    };
    (
        (0..b).map(|i| pick(sq, i)).collect(),
        (0..b).map(|i| pick(skv, i + 1)).collect(),
    )
}

/// The backward envelopes of the SM120 kernel table, (Dqk, Dv): every one is swept (once,
/// however many entries serve its routes: every case runs on every route).
fn envelopes() -> Vec<(usize, usize)> {
    let dim = |d: u32| usize::try_from(d).expect("a head dim fits usize");
    envelope_dims(KernelRole::BackwardMain)
        .into_iter()
        .map(|(dqk, dv)| (dim(dqk), dim(dv)))
        .collect()
}

/// The case table. `small` keeps shapes tiny (for compute-sanitizer) while still reaching every
/// kernel specialization the analyzer approves: each head-dim envelope, both dtypes, no bias /
/// bias / direct and accumulated dBias, masks (also bounds far past the sequences, which must
/// equal no bound), GQA, padding, ragged tails.
pub fn cases(small: bool) -> Vec<SweepCase> {
    let mut v = Vec::new();
    let mut add = |what: &str, spec: CaseSpec| push_routes(&mut v, what, &spec);
    for (dqk, dv) in envelopes() {
        let s = CaseSpec {
            dv,
            ..CaseSpec::new(2, 4, 2, 70, 90, dqk)
        };
        let tag = format!("d{dqk}v{dv}");
        add(&format!("{tag}-plain"), s.clone());
        add(
            &format!("{tag}-causal-bias-dbias"),
            CaseSpec {
                band: CAUSAL,
                bias: bias(true, true),
                dbias: true,
                layout: Layout::Bshd,
                ..s.clone()
            },
        );
        // Skv and every bias stride multiples of 8 elements: the main kernel copies the bias
        // tile with 16-byte cp.async (the cases above, Skv 90, take its element-copy path).
        add(
            &format!("{tag}-causal-bias-dbias-skv96"),
            CaseSpec {
                band: CAUSAL,
                bias: bias(true, true),
                dbias: true,
                skv: 96,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-window-bcast-dbias"),
            CaseSpec {
                band: WINDOW,
                bias: bias(false, true),
                dbias: true,
                ..s.clone()
            },
        );
        // Causal over more than one KV tile (Skv 200 > every envelope's 128 or 64 columns), so
        // the backward skips rows above the diagonal: two_kernel's dBias reduction must read
        // only the rows the main kernel walked (dbias_reduce.cu, walked_rows_of).
        add(
            &format!("{tag}-causal-bcast-dbias-s200"),
            CaseSpec {
                band: CAUSAL,
                bias: bias(false, true),
                dbias: true,
                sq: 200,
                skv: 200,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-br-causal"),
            CaseSpec {
                band: CAUSAL_BOTTOM_RIGHT,
                sq: 33,
                layout: Layout::Bshd,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-alibi-causal"),
            CaseSpec {
                band: CAUSAL,
                alibi: true,
                ..s.clone()
            },
        );
        // Bounds far beyond the sequences: the same as no bound (the analyzer drops them, so
        // the kernels and the reference agree for every i64).
        add(
            &format!("{tag}-right-2^32"),
            CaseSpec {
                band: Band {
                    right: Some(1 << 32),
                    ..Band::default()
                },
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-causal-left-i64max-br"),
            CaseSpec {
                band: Band {
                    left: Some(i64::MAX),
                    right: Some(0),
                    bottom_right: true,
                },
                sq: 33,
                ..s.clone()
            },
        );
    }
    // Head dims padded up to the compiled envelope (zero-filled, never stored).
    let padded = [
        (
            "pad-d24v16-causal",
            CaseSpec {
                band: CAUSAL,
                dv: 16,
                ..CaseSpec::new(2, 4, 2, 70, 90, 24)
            },
        ),
        ("pad-d40", CaseSpec::new(2, 4, 2, 70, 90, 40)),
        (
            "pad-d96-causal-bias-dbias",
            CaseSpec {
                band: CAUSAL,
                bias: bias(true, true),
                dbias: true,
                ..CaseSpec::new(2, 4, 2, 70, 90, 96)
            },
        ),
        (
            "pad-d160v96-alibi-causal",
            CaseSpec {
                band: CAUSAL,
                alibi: true,
                dv: 96,
                ..CaseSpec::new(2, 4, 2, 70, 90, 160)
            },
        ),
        // (136, 176) into the d192 envelope: Dv past 192/128's, each dim padded differently.
        (
            "pad-d136v176-causal-bias-dbias",
            CaseSpec {
                band: CAUSAL,
                bias: bias(true, true),
                dbias: true,
                dv: 176,
                ..CaseSpec::new(2, 4, 2, 70, 90, 136)
            },
        ),
        // Past 192/192: (200, 200) and (256, 128) into the d256 envelope.
        (
            "pad-d200-causal-bcast-dbias",
            CaseSpec {
                band: CAUSAL,
                bias: bias(false, true),
                dbias: true,
                ..CaseSpec::new(2, 4, 2, 70, 90, 200)
            },
        ),
        (
            "pad-d256v128",
            CaseSpec {
                dv: 128,
                ..CaseSpec::new(2, 4, 2, 70, 90, 256)
            },
        ),
    ];
    for (name, s) in padded {
        add(
            name,
            CaseSpec {
                layout: Layout::Bshd,
                ..s
            },
        );
    }
    // Padding mask (per-batch lengths: full, 2/3, 1/3), with bias and dBias, bottom-right.
    for (dqk, dv) in envelopes() {
        add(
            &format!("d{dqk}v{dv}-padding-bias-hbcast-dbias"),
            CaseSpec {
                padding: Some(lens(3, 75, 66)),
                bias: bias(true, false),
                dbias: true,
                dv,
                ..CaseSpec::new(3, 2, 1, 75, 66, dqk)
            },
        );
        add(
            &format!("d{dqk}v{dv}-padding-br-causal"),
            CaseSpec {
                padding: Some(lens(3, 90, 40)),
                band: CAUSAL_BOTTOM_RIGHT,
                dv,
                layout: Layout::Bshd,
                ..CaseSpec::new(3, 2, 2, 90, 40, dqk)
            },
        );
    }
    sink_cases(&mut add);
    if small {
        v.extend(inference_cases());
        v.extend(thd_table());
        return v;
    }
    let big = [
        ("len1x17", CaseSpec::new(2, 2, 2, 1, 17, 64), Layout::Bhsd),
        ("len17", CaseSpec::new(2, 2, 1, 17, 17, 128), Layout::Bshd),
        (
            "len1000-alibi-causal",
            CaseSpec {
                band: CAUSAL,
                alibi: true,
                ..CaseSpec::new(1, 6, 6, 1000, 1000, 128)
            },
            Layout::Bhsd,
        ),
        (
            "len1000-causal",
            CaseSpec {
                band: CAUSAL,
                ..CaseSpec::new(1, 4, 4, 1000, 1000, 128)
            },
            Layout::Bhsd,
        ),
        (
            "len1537",
            CaseSpec::new(1, 2, 2, 1537, 1537, 64),
            Layout::Bshd,
        ),
        (
            "len1537-causal-d192",
            CaseSpec {
                band: CAUSAL,
                dv: 128,
                ..CaseSpec::new(1, 2, 2, 1537, 1537, 192)
            },
            Layout::Bshd,
        ),
        (
            "len1100-causal-d256-gqa",
            CaseSpec {
                band: CAUSAL,
                ..CaseSpec::new(1, 4, 2, 1100, 1100, 256)
            },
            Layout::Bshd,
        ),
        (
            "sq100-skv300-br-causal",
            CaseSpec {
                band: CAUSAL_BOTTOM_RIGHT,
                ..CaseSpec::new(2, 4, 4, 100, 300, 64)
            },
            Layout::Bshd,
        ),
        (
            "sq300-skv100-causal",
            CaseSpec {
                band: CAUSAL,
                ..CaseSpec::new(2, 4, 4, 300, 100, 128)
            },
            Layout::Bhsd,
        ),
        (
            "gqa32x8",
            CaseSpec::new(1, 32, 8, 257, 257, 64),
            Layout::Bshd,
        ),
        (
            "gqa32x8-causal-bias",
            CaseSpec {
                band: CAUSAL,
                bias: bias(false, true),
                dbias: true,
                ..CaseSpec::new(2, 32, 8, 130, 130, 128)
            },
            Layout::Bshd,
        ),
        (
            "mqa8x1",
            CaseSpec::new(2, 8, 1, 200, 200, 128),
            Layout::Bhsd,
        ),
        (
            "mqa8x1-band-bias-headbcast",
            CaseSpec {
                band: BAND,
                bias: bias(true, false),
                dbias: true,
                ..CaseSpec::new(2, 8, 1, 187, 211, 64)
            },
            Layout::Bshd,
        ),
        (
            "bias11-dbias",
            CaseSpec {
                bias: bias(false, false),
                dbias: true,
                ..CaseSpec::new(3, 2, 2, 150, 77, 64)
            },
            Layout::Bhsd,
        ),
        (
            "bias-no-dbias",
            CaseSpec {
                bias: bias(true, true),
                ..CaseSpec::new(2, 2, 2, 129, 129, 128)
            },
            Layout::Bshd,
        ),
        (
            "window-long",
            CaseSpec {
                band: WINDOW,
                ..CaseSpec::new(1, 2, 2, 1000, 1000, 64)
            },
            Layout::Bshd,
        ),
        (
            "gqa-causal-bias-padding",
            CaseSpec {
                band: CAUSAL,
                bias: bias(true, true),
                dbias: true,
                padding: Some((vec![77, 50], vec![130, 61])),
                ..CaseSpec::new(2, 8, 2, 77, 130, 64)
            },
            Layout::Bshd,
        ),
    ];
    for (name, s, layout) in big {
        add(name, CaseSpec { layout, ..s });
    }
    // Sinks at a length past one reduction block's threads, causal.
    add(
        "sink-len1000-causal",
        CaseSpec {
            band: CAUSAL,
            sink: true,
            ..CaseSpec::new(2, 4, 4, 1000, 1000, 128)
        },
    );
    v.extend(inference_cases());
    v.extend(thd_table());
    v
}

/// Every route of `spec` in both io types, as the case table lists them.
fn push_routes(v: &mut Vec<SweepCase>, what: &str, spec: &CaseSpec) {
    for io in [DataType::Bf16, DataType::F16] {
        // ordered_dbias is offered only where dBias sums over a broadcast bias.
        let routes = Route::ALL
            .into_iter()
            .filter(|&r| r != Route::OrderedDbias || spec.reduces_dbias());
        for route in routes {
            let spec = CaseSpec { io, ..spec.clone() };
            v.push(SweepCase {
                name: format!("{what}/{io}/{}/{route}", spec.layout.name()),
                spec,
                route: Some(route),
            });
        }
    }
}

/// The THD cases ([`thd_cases`]) on every route, then THD inference (O ragged, no Stats, so
/// `max_total_seq_len_q` counts O's tokens alone). Last in both tables, so that the seeds of
/// the cases before them (their positions) stay what they were.
fn thd_table() -> Vec<SweepCase> {
    let mut v = Vec::new();
    thd_cases(&mut |what, spec| push_routes(&mut v, what, &spec));
    v.extend(inference_table(
        "thd-",
        "padding-causal-bias",
        |dqk, dv, io| CaseSpec {
            dv,
            io,
            band: CAUSAL,
            bias: bias(true, false),
            padding: Some(thd_lens()),
            layout: Layout::Thd,
            max_total_seq_len: true,
            ..CaseSpec::new(4, 4, 2, 130, 130, dqk)
        },
    ));
    // Padded head dims on ragged tensors, every route (two_kernel's dQ GEMM since RTE002
    // retired): d40 in the d64 envelope, causal; d200 in the d256 envelope (two_kernel's split
    // kernel) with a per-batch bias and dBias. Last, so that every case before keeps its seed.
    let thd_padded = |dqk| CaseSpec {
        padding: Some(thd_lens()),
        layout: Layout::Thd,
        max_total_seq_len: true,
        ..CaseSpec::new(4, 4, 2, 130, 130, dqk)
    };
    let padded = [
        (
            "thd-pad-d40-padding-causal",
            CaseSpec {
                band: CAUSAL,
                ..thd_padded(40)
            },
        ),
        (
            "thd-pad-d200-padding-bias-dbias",
            CaseSpec {
                bias: bias(true, true),
                dbias: true,
                ..thd_padded(200)
            },
        ),
    ];
    for (what, spec) in padded {
        push_routes(&mut v, what, &spec);
    }
    v
}

/// Attention sinks with dSink (names `sink-...`, in the small table too: they reach
/// dsink_reduce.cu): every envelope, no mask, causal, a head-broadcast bias with dBias (and so
/// ordered_dbias), and padding masks whose rows attend to nothing — bottom-right causal with
/// kv_len < q_len, and a batch with no keys — so that O = 0, Stats = sink there, and the rows
/// past a batch's length, which keep Stats = +inf and give dSink nothing.
fn sink_cases(add: &mut impl FnMut(&str, CaseSpec)) {
    let sink = |s: CaseSpec| CaseSpec { sink: true, ..s };
    for (dqk, dv) in envelopes() {
        let s = sink(CaseSpec {
            dv,
            ..CaseSpec::new(2, 4, 2, 70, 90, dqk)
        });
        let tag = format!("sink-d{dqk}v{dv}");
        add(&format!("{tag}-plain"), s.clone());
        add(
            &format!("{tag}-causal-bshd"),
            CaseSpec {
                band: CAUSAL,
                layout: Layout::Bshd,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-padding-br-causal"),
            sink(CaseSpec {
                padding: Some(lens(3, 90, 40)),
                band: CAUSAL_BOTTOM_RIGHT,
                dv,
                ..CaseSpec::new(3, 2, 2, 90, 40, dqk)
            }),
        );
    }
    add(
        "sink-d64v64-window-bcast-dbias",
        CaseSpec {
            band: WINDOW,
            bias: bias(false, true),
            dbias: true,
            sink: true,
            ..CaseSpec::new(2, 4, 2, 70, 90, 64)
        },
    );
    add(
        "sink-d128v128-padding-kv0-bias-hbcast-dbias",
        CaseSpec {
            padding: Some((vec![75, 50, 20], vec![0, 66, 44])),
            bias: bias(true, false),
            dbias: true,
            sink: true,
            ..CaseSpec::new(3, 2, 1, 75, 66, 128)
        },
    );
}

/// THD lengths for B = 4, S = 130: an empty query sequence, lengths that are no multiple of
/// any tile (37, 45), a full one, one of 64; the KV lengths differ from the query's per batch
/// (batch 3's 37 keys for 64 queries leave rows with nothing to attend to bottom-right).
fn thd_lens() -> (Vec<usize>, Vec<usize>) {
    (vec![0, 37, 130, 64], vec![45, 130, 64, 37])
}

/// Ragged THD cases (names `thd-...`, in the small table too): every envelope with a padding
/// mask of the lengths of [`thd_lens`] under top-left and bottom-right causal masks and with a
/// per-batch bias and dBias, GQA (Hq = 4, Hk = 2) throughout, and without a padding mask
/// (every sequence S tokens, Sq != Skv); one with a sink and dSink. Every token tensor is
/// ragged, with gaps after each sequence; `max_total_seq_len_q/kv` is set, at its least, on
/// the top-left and bias cases and left unset on the others.
fn thd_cases(add: &mut impl FnMut(&str, CaseSpec)) {
    let thd = |s: CaseSpec| CaseSpec {
        layout: Layout::Thd,
        ..s
    };
    for (dqk, dv) in envelopes() {
        let s = thd(CaseSpec {
            dv,
            padding: Some(thd_lens()),
            ..CaseSpec::new(4, 4, 2, 130, 130, dqk)
        });
        let tag = format!("thd-d{dqk}v{dv}");
        add(
            &format!("{tag}-padding-causal"),
            CaseSpec {
                band: CAUSAL,
                max_total_seq_len: true,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-padding-br-causal"),
            CaseSpec {
                band: CAUSAL_BOTTOM_RIGHT,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-padding-bias-dbias"),
            CaseSpec {
                bias: bias(true, true),
                dbias: true,
                max_total_seq_len: true,
                ..s.clone()
            },
        );
        add(
            &format!("{tag}-full"),
            thd(CaseSpec {
                dv,
                ..CaseSpec::new(2, 4, 2, 70, 90, dqk)
            }),
        );
    }
    add(
        "thd-sink-d128v128-padding-causal",
        CaseSpec {
            band: CAUSAL,
            sink: true,
            max_total_seq_len: true,
            ..thd(CaseSpec {
                padding: Some(thd_lens()),
                ..CaseSpec::new(4, 4, 2, 130, 130, 128)
            })
        },
    );
}

/// The forward alone, without a Stats output (inference): the kernel must not write Stats.
fn inference_cases() -> Vec<SweepCase> {
    inference_table("", "causal-bias", |dqk, dv, io| CaseSpec {
        dv,
        io,
        band: CAUSAL,
        bias: bias(false, true),
        ..CaseSpec::new(2, 4, 2, 70, 90, dqk)
    })
}

/// One inference case per envelope (Dqk, Dv) and io type, the spec from `spec`, named
/// `{prefix}d{Dqk}v{Dv}-{what}/{io}/{layout}/inference`.
fn inference_table(
    prefix: &str,
    what: &str,
    spec: impl Fn(usize, usize, DataType) -> CaseSpec,
) -> Vec<SweepCase> {
    let mut v = Vec::new();
    for (dqk, dv) in envelopes() {
        for io in [DataType::Bf16, DataType::F16] {
            let spec = spec(dqk, dv, io);
            v.push(SweepCase {
                name: format!(
                    "{prefix}d{dqk}v{dv}-{what}/{io}/{}/inference",
                    spec.layout.name()
                ),
                spec,
                route: None,
            });
        }
    }
    v
}

/// What happened to one sweep case.
#[derive(Debug, Clone)]
pub enum SweepOutcome {
    /// It ran; the report says how it compared.
    Ran(CaseReport),
    /// The analyzer does not approve this route for this case on this device, with these
    /// reason codes: nothing was run (a user could not run it either).
    NotApproved(Vec<String>),
}

/// The reason codes that keep `route` of the backward (or the forward) from being approved.
fn refusal(report: &SupportReport, node: rime_graph::NodeId, route: Option<Route>) -> Vec<String> {
    let mut codes: Vec<String> = report
        .node(node)
        .into_iter()
        .flat_map(|n| {
            n.rejections
                .iter()
                .chain(
                    n.configs
                        .iter()
                        .filter(|c| c.engine == EngineKind::Sm120 && c.route == route)
                        .flat_map(|c| c.rejections.iter()),
                )
                .map(|r| r.code.code().to_owned())
        })
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

fn run_case(
    dev: &Arc<CudaDevice>,
    target: &Target,
    case: &SweepCase,
    seed: u64,
    guards: bool,
) -> Result<SweepOutcome, HarnessError> {
    let spec = &case.spec;
    let g = match case.route {
        Some(_) => spec.graph()?,
        None => spec.inference_graph()?,
    };
    let fwd = g.forward.ok_or(HarnessError::Sizing {
        tensor: "the case's forward node".to_owned(),
    })?;
    let report = analyze(&g.graph, target);
    let Ok(fwd_plan) = report.approve_config(fwd, EngineKind::Sm120, None) else {
        return Ok(SweepOutcome::NotApproved(refusal(&report, fwd, None)));
    };
    let fills = Fills::random(seed);
    let sizing = |what: &str| HarnessError::Sizing {
        tensor: what.to_owned(),
    };
    let inputs =
        node_inputs(spec, &g, fwd, &fills).ok_or_else(|| sizing("the forward's inputs"))?;
    let forward = on_device(dev, &fwd_plan, &g, &inputs, guards, 1)?;
    let forward_ref = on_cpu(&g, fwd, &inputs, Precision::F64)?;
    let (mut outputs, mut written) = compare::outputs(&g, &forward.outputs, &forward_ref);
    let mut kernels = forward.kernels;
    let mut tensor_copies = false;
    if let (Some(route), Some(bwd)) = (case.route, g.backward) {
        let Ok(bwd_plan) = report.approve_config(bwd, EngineKind::Sm120, Some(route)) else {
            return Ok(SweepOutcome::NotApproved(refusal(
                &report,
                bwd,
                Some(route),
            )));
        };
        // The backward reads the GPU's O and Stats, as it would in training.
        let mut bwd_inputs: Vec<(TensorId, HostBuffer)> =
            node_inputs(spec, &g, bwd, &fills).ok_or_else(|| sizing("the backward's inputs"))?;
        bwd_inputs.extend(forward.outputs.iter().cloned());
        let repeats = if route.is_deterministic() { 2 } else { 1 };
        let backward = on_device(dev, &bwd_plan, &g, &bwd_inputs, guards, repeats)?;
        let backward_ref = on_cpu(&g, bwd, &bwd_inputs, Precision::F64)?;
        let (checks, gaps) = compare::outputs(&g, &backward.outputs, &backward_ref);
        outputs.extend(checks);
        written.extend(gaps);
        // What a deterministic route promises to reproduce bit for bit: dQ, dK, dV, and dBias
        // when each of its elements has one writer or the route sums it in a fixed order
        // (two_kernel, ordered_dbias; relay sums a broadcast bias's dBias with fp32 atomics,
        // which the analyzer refuses for deterministic graphs, BIA003).
        if let [first, second] = backward.hashes.as_slice() {
            let dbias = g.id("dBias");
            let broadcast_dbias = bwd_plan.problem().bias_broadcasts() && route == Route::Relay;
            outputs.push(OutputCheck {
                name: "repeat",
                rel_err: 0.0,
                bad: backward
                    .outputs
                    .iter()
                    .zip(first.iter().zip(second))
                    .filter(|((id, _), (a, b))| a != b && !(broadcast_dbias && Some(*id) == dbias))
                    .count(),
            });
        }
        kernels.extend(backward.kernels);
        tensor_copies = backward.tensor_copies;
    }
    kernels.dedup();
    Ok(SweepOutcome::Ran(CaseReport {
        name: case.name.clone(),
        tolerance: tolerance(spec.io),
        kernels,
        tensor_copies,
        outputs,
        // Results and a description of what was written outside a ragged output's tokens.
        error: (!written.is_empty()).then(|| written.join("; ")),
    }))
}

/// Runs every case on `dev` for `target` (the live device's), calling `each` as each completes.
/// With `guards`, every output and the workspace sit between guard zones that must come back
/// unchanged.
pub fn run(
    dev: &Arc<CudaDevice>,
    target: &Target,
    cases: &[SweepCase],
    guards: bool,
    mut each: impl FnMut(&SweepCase, &SweepOutcome),
) -> Vec<SweepOutcome> {
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let outcome = run_case(dev, target, c, 0x5eed + i as u64, guards)
                .unwrap_or_else(|e| SweepOutcome::Ran(CaseReport::failed(c.name.clone(), e)));
            each(c, &outcome);
            outcome
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a GPU run will do, known without a GPU: on the sm_120 and sm_90 targets every case
    /// builds a valid graph, and the forward and every route of the backward are approved for
    /// every case, THD ones included. Every kernel file is reached.
    #[test]
    fn the_table_reaches_every_route_the_analyzer_approves() {
        for target in ["rtx-5090", "h200"] {
            let target = Target::by_name(target).expect("target");
            let mut approved = std::collections::BTreeSet::new();
            for c in cases(false) {
                let g = match c.route {
                    Some(_) => c.spec.graph(),
                    None => c.spec.inference_graph(),
                }
                .expect("graph");
                assert!(g.graph.validate().is_ok(), "{}", c.name);
                let report = analyze(&g.graph, &target);
                let fwd = g.forward.expect("fwd");
                let forward = report.approve_config(fwd, EngineKind::Sm120, None);
                assert!(
                    forward.is_ok(),
                    "{}: {:?}",
                    c.name,
                    refusal(&report, fwd, None)
                );
                let (Some(route), Some(bwd)) = (c.route, g.backward) else {
                    assert!(g.id("Stats").is_none(), "{}", c.name);
                    continue;
                };
                // Every route takes every case (padded head dims too, since RTE002 retired).
                match report.approve_config(bwd, EngineKind::Sm120, Some(route)) {
                    Ok(plan) => {
                        approved.insert((route, plan.config().kernel.map(|k| k.name)));
                    }
                    Err(_) => panic!("{}: {:?}", c.name, refusal(&report, bwd, Some(route))),
                }
            }
            // Every route of every backward envelope runs somewhere in the table.
            assert_eq!(
                approved.len(),
                envelopes().len() * Route::ALL.len(),
                "{approved:?}"
            );
        }
    }

    #[test]
    fn small_table_is_a_subset_with_every_envelope() {
        let (small, full) = (cases(true), cases(false));
        assert!(small.len() < full.len());
        assert!(small.iter().all(|a| full.iter().any(|b| a.name == b.name)));
        assert!(small.iter().any(|c| c.route.is_none()), "inference cases");
        for d in ["d64v64", "d128v128", "d192v128", "d256v256", "pad-d40"] {
            assert!(small.iter().any(|c| c.name.starts_with(d)), "{d}");
        }
        // Sinks on every route, in both dtypes, reach dsink_reduce.cu in the small table too.
        for route in Route::ALL {
            for io in [DataType::Bf16, DataType::F16] {
                assert!(
                    small.iter().any(|c| c.name.starts_with("sink-")
                        && c.spec.sink
                        && c.spec.io == io
                        && c.route == Some(route)),
                    "{route} {io}"
                );
            }
        }
        assert!(full.iter().all(|c| c.name.contains("sink") == c.spec.sink));
        // THD on every envelope, route and io type, inference too, in the small table; last in
        // both tables, so the cases before them keep their positions (and seeds).
        let envelope = |c: &SweepCase| (c.spec.dqk, c.spec.dv);
        for (dqk, dv) in envelopes() {
            for io in [DataType::Bf16, DataType::F16] {
                for route in Route::ALL.into_iter().filter(|&r| r != Route::OrderedDbias) {
                    let thd = small.iter().filter(|c| {
                        c.spec.layout == Layout::Thd
                            && envelope(c) == (dqk, dv)
                            && c.spec.io == io
                            && c.route == Some(route)
                    });
                    assert!(thd.count() >= 4, "d{dqk}v{dv} {io} {route}");
                }
                assert!(small.iter().any(|c| c.spec.layout == Layout::Thd
                    && envelope(c) == (dqk, dv)
                    && c.spec.io == io
                    && c.route.is_none()));
            }
        }
        for table in [&small, &full] {
            let first = table.iter().position(|c| c.spec.layout == Layout::Thd);
            let first = first.expect("THD cases");
            assert!(table[first..].iter().all(|c| c.spec.layout == Layout::Thd));
            assert!(table[first..].iter().all(|c| c.name.starts_with("thd-")));
        }
        assert!(small
            .iter()
            .any(|c| c.spec.layout == Layout::Thd && c.spec.sink && c.spec.padding.is_some()));
    }
}
