//! `rime selftest --edge`: the edge-numerics cases of [`crate::edge_cases`] on the sm120 engine.
//! Each case's backward graph is analysed for the live device; when sm120 rejects it the reason
//! codes are reported; otherwise O and Stats come from the CPU engine's forward on the same
//! inputs, and every approved sm120 configuration runs the backward through the engine API and
//! is compared with the CPU engine's backward (`engine_check::against_cpu`): relative error per
//! output with an absolute floor (`ABS_FLOOR`, 1e-3 per element), and every output must be
//! finite.

use std::sync::Arc;

use rime_analyzer::{analyze, EngineKind, Target};
use rime_graph::{DataType, TensorId};

use super::context::CudaDevice;
use super::engine_check::{against_cpu, run_cpu, values, Built};
use super::selftest::CaseReport;
use crate::edge_cases::{edge_cases, EdgeCase, EdgeGraph};
use crate::{EngineError, HostBuffer};

/// bf16 outputs: the sweep's tolerance.
const TOLERANCE: f64 = 1e-2;

/// Smallest per-element reference magnitude the relative error is taken against. Some edge
/// outputs are zero in exact arithmetic (a one-hot softmax gives dS = P (dP - delta) = 0 for
/// its kept element), so both engines return f32 rounding noise there (~1e-7); the CPU column
/// of docs/reliability.md has the matching absolute tolerance.
const ABS_FLOOR: f64 = 1e-3;

/// What happened to one edge case.
#[derive(Debug, Clone)]
pub enum EdgeOutcome {
    /// The analyzer rejects sm120 for this graph, with these reason codes.
    Rejected(Vec<String>),
    /// One report per approved sm120 configuration (route).
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

/// Host inputs of `g` for case `c`: Q, K, V, dO seeded random in [-1, 1) (rounded to bf16 by
/// the buffer), the Bias as the table fills it, the padding lengths, the sink.
fn host_inputs(c: &EdgeCase, g: &EdgeGraph) -> Option<Vec<(TensorId, HostBuffer)>> {
    let mut out = Vec::new();
    for (n, &(name, id)) in g.ids.iter().enumerate() {
        let t = g.graph.get(id)?;
        let len = usize::try_from(t.span_elements()?).ok()?;
        let seed = c.seed * 16 + n as u64;
        let v: Vec<f64> = match name {
            "Q" | "K" | "V" | "dO" => values(len, seed, false),
            "Bias" => {
                let (fill, [bb, bh, sq, skv]) = (c.bias?.fill, c.bias_dims()?);
                (0..bb * bh * sq * skv)
                    .map(|i| {
                        fill.value([
                            i / (bh * sq * skv),
                            i / (sq * skv) % bh,
                            i / skv % sq,
                            i % skv,
                        ])
                    })
                    .collect()
            }
            "SEQ_LEN_Q" => c.seq_lens.as_ref()?.0.iter().map(|&x| x as f64).collect(),
            "SEQ_LEN_KV" => c.seq_lens.as_ref()?.1.iter().map(|&x| x as f64).collect(),
            "Sink" => match c.sink? {
                Some(v) => vec![v; len],
                None => values(len, seed, false),
            },
            _ => continue, // outputs, and O / Stats (from the forward)
        };
        out.push((id, HostBuffer::from_f64(g.graph.data_type(id)?, &v)?));
    }
    Some(out)
}

fn built(name: &str, g: EdgeGraph, inputs: &[&str], outputs: &[&str]) -> Built {
    let pick = |names: &[&str]| names.iter().filter_map(|n| g.id(n)).collect();
    Built {
        name: name.to_string(),
        inputs: pick(inputs),
        outputs: pick(outputs),
        graph: g.graph,
    }
}

fn run_case(dev: &Arc<CudaDevice>, target: &Target, c: &EdgeCase) -> Result<EdgeOutcome, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let bwd = c.backward_graph().map_err(|e| err(&e))?;
    let report = analyze(&bwd.graph, target);
    if !report.supports(EngineKind::Sm120) {
        let mut codes: Vec<String> = report
            .all_rejections()
            .map(|r| r.code.code().to_string())
            .collect();
        codes.sort();
        codes.dedup();
        return Ok(EdgeOutcome::Rejected(codes));
    }
    let fwd = c.forward_graph().map_err(|e| err(&e))?;
    let fwd_inputs = host_inputs(c, &fwd).ok_or("could not size the forward inputs")?;
    let mut bwd_inputs = host_inputs(c, &bwd).ok_or("could not size the backward inputs")?;
    let by_name = |g: &EdgeGraph, n: &str| g.id(n).ok_or(format!("no tensor {n}"));
    // The same inputs by name in the backward graph, plus O and Stats from the CPU forward.
    let fwd_built = built(&format!("edge/{}", c.name), fwd, &[], &["O", "Stats"]);
    let os = run_cpu(&fwd_built, &fwd_inputs).map_err(|e: EngineError| err(&e))?;
    let [o, stats] = os.as_slice() else {
        return Err("the CPU forward gave no O and Stats".into());
    };
    bwd_inputs.push((by_name(&bwd, "O")?, o.clone()));
    bwd_inputs.push((by_name(&bwd, "Stats")?, stats.clone()));
    let inputs: Vec<&str> = bwd.ids.iter().map(|(n, _)| *n).collect();
    let outputs = ["dQ", "dK", "dV", "dBias", "dSink"];
    let inputs: Vec<&str> = inputs
        .into_iter()
        .filter(|n| !outputs.contains(n))
        .collect();
    let bwd_built = built(&format!("edge/{}", c.name), bwd, &inputs, &outputs);
    Ok(EdgeOutcome::Ran(against_cpu(
        dev,
        &report,
        &bwd_built,
        &bwd_inputs,
        TOLERANCE,
        &format!("/{}", DataType::Bf16),
        ABS_FLOOR,
    )))
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
                EdgeOutcome::Ran(vec![super::engine_check::failed(
                    format!("edge/{}", case.name),
                    e,
                )])
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

    /// What the GPU run will do, known without a GPU: sm120 rejects exactly the sink cases.
    #[test]
    fn sm120_approves_every_edge_case_but_the_sinks() {
        for target in ["rtx-pro-6000", "h200"].map(Target::by_name) {
            let Some(target) = target else {
                panic!("missing target profile");
            };
            for case in edge_cases() {
                let Ok(g) = case.backward_graph() else {
                    panic!("{}: graph", case.name);
                };
                let report = analyze(&g.graph, &target);
                let codes: Vec<_> = report.all_rejections().map(|r| r.code.code()).collect();
                assert_eq!(
                    report.supports(EngineKind::Sm120),
                    case.sink.is_none(),
                    "{}: {codes:?}",
                    case.name
                );
                if case.sink.is_some() {
                    let sink = rime_analyzer::ReasonCode::Sm120Sink.code();
                    assert!(codes.contains(&sink), "{}: {codes:?}", case.name);
                }
            }
        }
    }
}
