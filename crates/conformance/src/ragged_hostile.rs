//! `rime selftest --ragged`: hostile ragged (THD) offsets and lengths on the sm120 engine, on the
//! live device. The graph is the fixture `tests/fixtures/valid/bwd_thd_varlen_runs_on_sm120.json`
//! (B = 2, H = 4, S = 64, D = 64, bf16, THD Q/K/V/O/dO/dQ/dK/dV and a ragged Stats, causal, a
//! padding mask). Each case breaks one offsets tensor or one length and must get the engine's
//! error for it, with every output buffer still holding its poison (nothing written); the valid
//! case must run and leave the elements past its last sequence untouched. The engine copies the
//! offsets and lengths to the host and checks them before any kernel runs (cuda/ragged.rs).

use std::sync::Arc;

use rime_analyzer::{analyze, EngineKind, Route};
use rime_engines::cuda::{CudaDevice, DeviceBuffer, DeviceWorkspace, Sm120EnginePlan};
use rime_engines::{EngineError, HostBuffer, Plan, VariantPack, Workspace};
use rime_graph::{Graph, TensorId};

use crate::exec::POISON_BYTE;
use crate::fill;
use crate::resources::ResourceReport;

const FIXTURE: &str =
    include_str!("../../../tests/fixtures/valid/bwd_thd_varlen_runs_on_sm120.json");

/// Sequence lengths of the valid case (Q and KV), and the elements of one token (H x D).
const LENS: [i64; 2] = [40, 64];
const TOKEN: i64 = 4 * 64;
const STATS_TOKEN: i64 = 4;

/// One hostile case: what it changes and the error it must get.
struct Case {
    name: &'static str,
    /// (tensor name, new values) for offsets or length tensors.
    change: (&'static str, Vec<i64>),
    /// True when `err` is the error this case must get.
    expect: fn(&EngineError) -> bool,
}

fn packed(token: i64) -> Vec<i64> {
    vec![0, LENS[0] * token, (LENS[0] + LENS[1]) * token]
}

fn cases() -> Vec<Case> {
    let q = packed(TOKEN);
    vec![
        Case {
            name: "negative-offset",
            change: ("q_offsets", vec![0, -8, q[2]]),
            expect: |e| matches!(e, EngineError::RaggedOffsetNegative { .. }),
        },
        Case {
            name: "decreasing-offsets",
            change: ("k_offsets", vec![0, q[2], q[1]]),
            expect: |e| matches!(e, EngineError::RaggedOffsetsNotMonotone { .. }),
        },
        Case {
            name: "last-offset-past-buffer",
            change: ("v_offsets", vec![0, q[1], 2 * 64 * TOKEN + 8]),
            expect: |e| matches!(e, EngineError::RaggedPastBufferEnd { .. }),
        },
        Case {
            name: "sequences-overlap",
            change: ("o_offsets", vec![0, q[1] - TOKEN, q[2]]),
            expect: |e| matches!(e, EngineError::RaggedSequenceOverflow { .. }),
        },
        Case {
            name: "offset-not-16-byte-aligned",
            change: ("q_offsets", vec![0, q[1] + 4, q[2] + 4]),
            expect: |e| matches!(e, EngineError::RaggedOffsetMisaligned { .. }),
        },
        Case {
            name: "stats-sequences-overlap",
            change: (
                "stats_offsets",
                vec![0, (LENS[0] - 1) * STATS_TOKEN, packed(STATS_TOKEN)[2]],
            ),
            expect: |e| matches!(e, EngineError::RaggedSequenceOverflow { .. }),
        },
        Case {
            name: "seq-len-past-s",
            change: ("seq_len_q", vec![65, 64]),
            expect: |e| matches!(e, EngineError::SeqLenOutOfRange { .. }),
        },
    ]
}

/// The valid inputs: random values, packed offsets, the lengths.
fn inputs(graph: &Graph, plan: &Sm120EnginePlan) -> Option<Vec<(TensorId, String, HostBuffer)>> {
    let mut out = Vec::new();
    for (n, &id) in plan.tensors().inputs.iter().enumerate() {
        let t = graph.get(id)?;
        let len = usize::try_from(t.span_elements()?).ok()?;
        let values = match t.name.as_str() {
            "seq_len_q" | "seq_len_kv" => HostBuffer::I32(LENS.iter().map(|&l| l as i32).collect()),
            "stats_offsets" => HostBuffer::I64(packed(STATS_TOKEN)),
            name if name.ends_with("_offsets") => HostBuffer::I64(packed(TOKEN)),
            _ => fill::host(
                graph.data_type(id)?,
                &fill::random(
                    len,
                    40 + n as u64,
                    Some(if t.name == "Stats" { 3.0 } else { 0.0 }),
                ),
            )?,
        };
        out.push((id, t.name.clone(), values));
    }
    Some(out)
}

/// Runs the table: one report per case.
pub fn run(dev: &Arc<CudaDevice>) -> Vec<ResourceReport> {
    let mut reports = Vec::new();
    let mut report = |name: &'static str, result: Result<String, String>| {
        reports.push(ResourceReport {
            name,
            passed: result.is_ok(),
            detail: result.unwrap_or_else(|e| e),
        });
    };
    let setup = || -> Result<(Graph, Sm120EnginePlan), String> {
        let graph = rime_graph::json::from_str(FIXTURE, "bwd_thd_varlen_runs_on_sm120.json")
            .map_err(|e| e.to_string())?;
        let target = rime_engines::cuda::auto_target(0).map_err(|e| e.to_string())?;
        let report = analyze(&graph, &target);
        let node = graph.node_ids().next().ok_or("no node")?;
        let approved = report
            .approve_config(node, EngineKind::Sm120, Some(Route::Atomic))
            .map_err(|e| e.to_string())?;
        let plan = Sm120EnginePlan::new(Arc::clone(dev), &approved).map_err(|e| e.to_string())?;
        Ok((graph, plan))
    };
    let (graph, plan) = match setup() {
        Ok(x) => x,
        Err(e) => {
            report("setup", Err(e));
            return reports;
        }
    };
    let Some(valid) = inputs(&graph, &plan) else {
        report("setup", Err("inputs could not be sized".to_owned()));
        return reports;
    };
    // One execution on poisoned outputs: the engine's result and every output's bytes after it.
    type Run = (Result<(), EngineError>, Vec<(String, Vec<u8>)>);
    let execute = |change: Option<&(&str, Vec<i64>)>| -> Result<Run, String> {
        let mut pack = VariantPack::new();
        for (id, name, host) in &valid {
            let host = match change {
                Some((n, v)) if n == name => match host {
                    HostBuffer::I32(_) => HostBuffer::I32(
                        v.iter()
                            .map(|&x| i32::try_from(x).unwrap_or(i32::MAX))
                            .collect(),
                    ),
                    _ => HostBuffer::I64(v.clone()),
                },
                _ => host.clone(),
            };
            let buffer = DeviceBuffer::upload(dev, &host).map_err(|e| e.to_string())?;
            pack.insert(*id, Box::new(buffer));
        }
        let mut outputs = Vec::new();
        for &id in &plan.tensors().outputs {
            let (Some(t), Some(dt)) = (graph.get(id), graph.data_type(id)) else {
                return Err("an output is not in the graph".to_owned());
            };
            let len = t
                .span_elements()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or("an output's span")?;
            let b = DeviceBuffer::poisoned(dev, dt, len).map_err(|e| e.to_string())?;
            pack.insert(id, Box::new(b));
            outputs.push((id, t.name.clone()));
        }
        let mut ws = Workspace::Device(
            DeviceWorkspace::new(dev, plan.workspace_size()).map_err(|e| e.to_string())?,
        );
        let result = plan.execute(&mut pack, &mut ws);
        let mut bytes = Vec::new();
        for (id, name) in outputs {
            let b = pack
                .get(&id.into())
                .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
                .ok_or("an output buffer")?;
            bytes.push((name, b.memory().download(dev).map_err(|e| e.to_string())?));
        }
        Ok((result, bytes))
    };
    let untouched = |bytes: &[(String, Vec<u8>)]| {
        bytes
            .iter()
            .all(|(_, b)| b.iter().all(|&x| x == POISON_BYTE))
    };
    for case in cases() {
        let outcome = match execute(Some(&case.change)) {
            Err(e) => Err(e),
            Ok((Ok(()), _)) => Err(format!("{}: ran; the engine must refuse it", case.change.0)),
            Ok((Err(e), bytes)) if (case.expect)(&e) && untouched(&bytes) => {
                Ok(format!("refused, nothing written: {e}"))
            }
            Ok((Err(e), _)) if (case.expect)(&e) => {
                Err(format!("refused ({e}) but an output was written"))
            }
            Ok((Err(e), _)) => Err(format!("wrong error: {e}")),
        };
        report(case.name, outcome);
    }
    // The valid case: it runs, every real-token element of each output is written and nothing
    // past the last sequence is (those elements keep the poison).
    let outcome = match execute(None) {
        Err(e) => Err(e),
        Ok((Err(e), _)) => Err(format!("valid offsets refused: {e}")),
        Ok((Ok(()), bytes)) => {
            let mut bad = Vec::new();
            for (name, b) in &bytes {
                let (token, size) = if name == "Stats" {
                    (STATS_TOKEN, 4)
                } else {
                    (TOKEN, 2)
                };
                let end = usize::try_from((LENS[0] + LENS[1]) * token).unwrap_or(0) * size;
                let (real, past) = b.split_at(end.min(b.len()));
                if past.iter().any(|&x| x != POISON_BYTE) {
                    bad.push(format!("{name}: written past its last sequence"));
                }
                if real
                    .chunks(size)
                    .any(|c| c.iter().all(|&x| x == POISON_BYTE))
                {
                    bad.push(format!("{name}: a real-token element was not written"));
                }
            }
            if bad.is_empty() {
                Ok(format!(
                    "ran; {} outputs written at real tokens only",
                    bytes.len()
                ))
            } else {
                Err(bad.join("; "))
            }
        }
    };
    report("valid-offsets", outcome);
    reports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_has_the_tensors_the_cases_change() {
        let graph = rime_graph::json::from_str(FIXTURE, "fixture").unwrap();
        for case in cases() {
            assert!(
                graph
                    .tensor_ids()
                    .any(|id| graph.get(id).is_some_and(|t| t.name == case.change.0)),
                "{}",
                case.name
            );
        }
    }
}
