//! The edge-numerics cases, defined once: the CPU integration test (`tests/edge_numerics.rs`,
//! against an independent naive reference) and the GPU check (`rime selftest --edge`, the
//! sm120 engine against the CPU engine) both run this table through [`CaseSpec`] graphs.
//!
//! Each case is a small SDPA backward (bf16 io, f32 Stats, BHSD, Hq = Hk = Hv, D = 8) at a
//! numerical edge: one query or one key, a decode step, rows that see no key, empty sequences
//! in a padded batch, Stats near -3e4, biases of +-2e4, a dominant sink, a sink of -inf. On the
//! GPU, O and Stats come from the CPU engine's forward on the same inputs, and every approved
//! sm120 route runs the backward through the engine API; its outputs are compared with the CPU
//! engine's backward by relative error with an absolute floor ([`ABS_FLOOR`]), and every output
//! must be finite.

use std::sync::Arc;

use rime_analyzer::{analyze, EngineKind, Route, Target};
use rime_engines::cpu::Precision;
use rime_engines::cuda::CudaDevice;

use crate::compare::{relative, CaseReport};
use crate::exec::{on_cpu, on_device};
use crate::fill::{node_inputs, Fills};
use crate::spec::{BiasSpec, CaseSpec};
use crate::HarnessError;
use rime_analyzer::Band;

/// bf16 outputs: the sweep's tolerance.
pub const TOLERANCE: f64 = 1e-2;

/// Smallest per-element reference magnitude the relative error is taken against. Some edge
/// outputs are zero in exact arithmetic (a one-hot softmax gives dS = P (dP - delta) = 0 for
/// its kept element), so both engines return f32 rounding noise there (~1e-7).
pub const ABS_FLOOR: f64 = 1e-3;

/// How the Bias of a case is filled (index = (b, h, i, j)).
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
    /// The value function.
    pub fn function(self) -> fn([usize; 4]) -> f64 {
        match self {
            Self::VeryNegative => |[b, h, i, j]| -30000.0 + ((b + h + i + j) % 3) as f64,
            Self::OneHot => |[_, h, i, j]| {
                if j == (i + h) % 7 {
                    20000.0
                } else {
                    -20000.0
                }
            },
            Self::Mixed => |[b, _, i, j]| ((i * 7 + j + b) % 5) as f64 * 8000.0 - 16000.0,
        }
    }
}

/// One edge case.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeCase {
    /// Short name (the table's first column).
    pub name: &'static str,
    /// What is at the edge.
    pub note: &'static str,
    /// The problem (with dBias and dSink asked for when there is a bias or sink).
    pub spec: CaseSpec,
    /// The bias values, when there is a bias.
    pub bias_fill: Option<BiasFill>,
    /// Every head's sink logit (random when `None` and the spec has a sink).
    pub sink_value: Option<f64>,
    /// Seed of the random inputs.
    pub seed: u64,
}

impl EdgeCase {
    fn new(name: &'static str, note: &'static str, [b, h, sq, skv]: [usize; 4], seed: u64) -> Self {
        let spec = CaseSpec {
            scale: Some(1.0 / 8f32.sqrt()),
            ..CaseSpec::new(b, h, h, sq, skv, 8)
        };
        Self {
            name,
            note,
            spec,
            bias_fill: None,
            sink_value: None,
            seed,
        }
    }

    fn band(mut self, left: Option<i64>, right: Option<i64>, bottom_right: bool) -> Self {
        self.spec.band = Band {
            left,
            right,
            bottom_right,
        };
        self
    }

    fn padding(mut self, q: &[usize], kv: &[usize]) -> Self {
        self.spec.padding = Some((q.to_vec(), kv.to_vec()));
        self
    }

    fn bias(mut self, per_batch: bool, per_head: bool, fill: BiasFill) -> Self {
        self.spec.bias = Some(BiasSpec {
            per_batch,
            per_head,
        });
        self.spec.dbias = true;
        self.bias_fill = Some(fill);
        self
    }

    fn sink(mut self, value: Option<f64>) -> Self {
        self.spec.sink = true;
        self.sink_value = value;
        self
    }

    /// How its inputs are filled.
    pub fn fills(&self) -> Fills {
        Fills {
            seed: self.seed,
            bias: self.bias_fill.map(BiasFill::function),
            sink: self.sink_value,
        }
    }
}

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
        c(
            "sink_minus_infinity",
            "sink -inf: no sink, rows without keys",
            [2, 2, 5, 6],
            13,
        )
        .padding(&[5, 4], &[0, 6])
        .band(None, Some(0), true)
        .sink(Some(f64::NEG_INFINITY)),
    ]
}

/// What happened to one edge case.
#[derive(Debug, Clone)]
pub enum EdgeOutcome {
    /// The analyzer rejects sm120 for this graph, with these reason codes.
    Rejected(Vec<String>),
    /// One report per approved sm120 route.
    Ran(Vec<CaseReport>),
}

/// One row of the edge table.
#[derive(Debug, Clone)]
pub struct EdgeReport {
    /// The case.
    pub case: EdgeCase,
    /// Its outcome.
    pub outcome: EdgeOutcome,
}

impl EdgeReport {
    /// True unless an approved configuration failed (a rejection is not a failure).
    pub fn passed(&self) -> bool {
        match &self.outcome {
            EdgeOutcome::Rejected(_) => true,
            EdgeOutcome::Ran(r) => r.iter().all(CaseReport::passed),
        }
    }
}

fn run_case(
    dev: &Arc<CudaDevice>,
    target: &Target,
    c: &EdgeCase,
) -> Result<EdgeOutcome, HarnessError> {
    // The two-node graph: the CPU engine's forward gives O and Stats; the backward runs on both
    // engines from them.
    let g = c.spec.graph()?;
    let (Some(fwd), Some(bwd)) = (g.forward, g.backward) else {
        return Err(HarnessError::Sizing {
            tensor: "the case's nodes".to_owned(),
        });
    };
    let report = analyze(&g.graph, target);
    let routes: Vec<Route> = Route::ALL
        .into_iter()
        .filter(|&r| {
            report
                .approve_config(bwd, EngineKind::Sm120, Some(r))
                .is_ok()
        })
        .collect();
    if routes.is_empty() {
        let mut codes: Vec<String> = report
            .all_rejections()
            .map(|r| r.code.code().to_owned())
            .collect();
        codes.sort();
        codes.dedup();
        return Ok(EdgeOutcome::Rejected(codes));
    }
    let fills = c.fills();
    let missing = || HarnessError::Sizing {
        tensor: "the inputs".to_owned(),
    };
    let fwd_inputs = node_inputs(&c.spec, &g, fwd, &fills).ok_or_else(missing)?;
    let mut inputs = node_inputs(&c.spec, &g, bwd, &fills).ok_or_else(missing)?;
    inputs.extend(on_cpu(&g, fwd, &fwd_inputs, Precision::F32)?);
    let reference = on_cpu(&g, bwd, &inputs, Precision::F32)?;
    let mut reports = Vec::new();
    for route in routes {
        let name = format!("edge/{}/bf16/sm120/{route}", c.name);
        let plan = report.approve_config(bwd, EngineKind::Sm120, Some(route))?;
        reports.push(match on_device(dev, &plan, &g, &inputs, false, 1) {
            Ok(run) => CaseReport {
                name,
                tolerance: TOLERANCE,
                kernels: run.kernels,
                tensor_copies: run.tensor_copies,
                outputs: run
                    .outputs
                    .iter()
                    .filter_map(|(id, h)| {
                        let r = reference.iter().find(|(t, _)| t == id)?;
                        Some(relative(
                            g.name_of(*id),
                            &h.to_f64(),
                            &r.1.to_f64(),
                            ABS_FLOOR,
                        ))
                    })
                    .collect(),
                error: None,
            },
            Err(e) => CaseReport::failed(name, e),
        });
    }
    Ok(EdgeOutcome::Ran(reports))
}

/// Runs every edge case on `dev` for `target` (the live device's), calling `each` per case.
pub fn run(
    dev: &Arc<CudaDevice>,
    target: &Target,
    mut each: impl FnMut(&EdgeReport),
) -> Vec<EdgeReport> {
    edge_cases()
        .into_iter()
        .map(|case| {
            let outcome = run_case(dev, target, &case).unwrap_or_else(|e| {
                EdgeOutcome::Ran(vec![CaseReport::failed(format!("edge/{}", case.name), e)])
            });
            let report = EdgeReport { case, outcome };
            each(&report);
            report
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_builds_a_valid_graph() {
        for case in edge_cases() {
            let g = case
                .spec
                .graph()
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            assert!(g.graph.validate().is_ok(), "{}", case.name);
            assert_eq!(g.id("Bias").is_some(), case.bias_fill.is_some());
            assert_eq!(g.id("Sink").is_some(), case.spec.sink);
        }
    }

    /// What the GPU run will do, known without a GPU: sm120 approves every case, the sinks too.
    #[test]
    fn sm120_approves_every_edge_case() {
        for target in ["rtx-pro-6000", "h200"] {
            let target = Target::by_name(target).expect("target");
            for case in edge_cases() {
                let g = case.spec.graph().expect("graph");
                let report = analyze(&g.graph, &target);
                let codes: Vec<_> = report.all_rejections().map(|r| r.code.code()).collect();
                assert!(
                    report.supports(EngineKind::Sm120),
                    "{}: {codes:?}",
                    case.name
                );
            }
        }
    }
}
