//! End-to-end check of the sm120 engine through the engines crate's API: graphs built with the
//! graph builders, analysed for the live device (`auto` target), every approved sm120 candidate
//! built by [`Sm120Engine`] and executed on [`DeviceBuffer`]s, and its outputs compared with the
//! CPU engine's on the same inputs (same tolerances as the kernel sweep).

use std::sync::Arc;

use rime_analyzer::{analyze, heuristics, EngineKind, HeuristicsOptions, SupportReport, Target};
use rime_graph::{
    Context, DataType, Graph, GraphError, SdpaBackwardAttrs, SdpaForwardAttrs, Tensor, TensorId,
};

use super::buffer::{DeviceBuffer, DeviceWorkspace};
use super::context::CudaDevice;
use super::engine::Sm120Engine;
use super::selftest::{CaseReport, OutputCheck};
use crate::{CpuEngine, Engine, EngineError, HostBuffer, VariantPack, Workspace};

/// One graph with the tensors it reads and writes.
pub(crate) struct Built {
    pub(crate) name: String,
    pub(crate) graph: Graph,
    pub(crate) inputs: Vec<TensorId>,
    pub(crate) outputs: Vec<TensorId>,
}

fn backward_graph(io: DataType) -> Result<Built, GraphError> {
    let (b, hq, hk, sq, skv, d) = (2, 8, 2, 77, 130, 64);
    let mut g = Graph::new(Context::with_io(io));
    let bshd = |name: &str, h: i64, s: i64| Tensor::bshd(name, [b, h, s, d]);
    let q = g.tensor(bshd("Q", hq, sq));
    let k = g.tensor(bshd("K", hk, skv));
    let v = g.tensor(bshd("V", hk, skv));
    let o = g.tensor(bshd("O", hq, sq));
    let d_o = g.tensor(bshd("dO", hq, sq));
    let stats = g.tensor(Tensor::packed("Stats", &[b, hq, sq, 1]).with_data_type(DataType::F32));
    let bias = g.tensor(Tensor::packed("Bias", &[b, hq, sq, skv]));
    let lens = |g: &mut Graph, name: &str| {
        g.tensor(Tensor::packed(name, &[b, 1, 1, 1]).with_data_type(DataType::I32))
    };
    let (lq, lkv) = (lens(&mut g, "SEQ_LEN_Q"), lens(&mut g, "SEQ_LEN_KV"));
    let attrs = SdpaBackwardAttrs::new()
        .name("bwd")
        .causal()
        .bias(bias)
        .dbias()
        .padding(lq, lkv);
    let grads = g.sdpa_backward(q, k, v, o, d_o, stats, attrs)?;
    let mut outputs = vec![grads.dq, grads.dk, grads.dv];
    outputs.extend(grads.dbias);
    Ok(Built {
        name: "engine/backward-gqa-causal-bias-padding".into(),
        graph: g,
        inputs: vec![q, k, v, o, d_o, stats, bias, lq, lkv],
        outputs,
    })
}

fn forward_graph(io: DataType) -> Result<Built, GraphError> {
    let (b, h, sq, skv) = (2, 4, 100, 61);
    let mut g = Graph::new(Context::with_io(io));
    let q = g.tensor(Tensor::packed("Q", &[b, h, sq, 192]));
    let k = g.tensor(Tensor::packed("K", &[b, h, skv, 192]));
    let v = g.tensor(Tensor::packed("V", &[b, h, skv, 128]));
    let out = g.sdpa_forward(
        q,
        k,
        v,
        SdpaForwardAttrs::new().name("fwd").generate_stats(),
    )?;
    let mut outputs = vec![out.o];
    outputs.extend(out.stats);
    Ok(Built {
        name: "engine/forward-d192v128".into(),
        graph: g,
        inputs: vec![q, k, v],
        outputs,
    })
}

/// Deterministic pseudo-random values in [-1, 1) (Stats: around ln(Skv), as a forward gives).
pub(crate) fn values(n: usize, seed: u64, stats: bool) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            if stats {
                5.0 + u
            } else {
                u
            }
        })
        .collect()
}

/// ||out - ref|| / ||ref|| over the finite outputs, and how many outputs are not finite.
pub(crate) fn relative(out: &[f64], reference: &[f64]) -> OutputCheck {
    relative_floored(out, reference, 0.0)
}

/// As [`relative`], with ||ref|| taken as at least `floor` x sqrt(elements): an output that is
/// zero in exact arithmetic comes back from both engines as rounding noise, and noise must not
/// be measured against noise.
pub(crate) fn relative_floored(out: &[f64], reference: &[f64], floor: f64) -> OutputCheck {
    let floor2 = floor * floor * reference.len() as f64;
    let (mut num, mut den, mut bad) = (0.0, 0.0, 0);
    for (&o, &r) in out.iter().zip(reference) {
        if !o.is_finite() {
            bad += 1;
            continue;
        }
        num += (o - r) * (o - r);
        den += r * r;
    }
    OutputCheck {
        name: "",
        rel_err: if den.max(floor2) > 0.0 {
            (num / den.max(floor2)).sqrt()
        } else {
            num.sqrt()
        },
        bad,
    }
}

fn run_one(dev: &Arc<CudaDevice>, target: &Target, built: &Built, io: DataType) -> Vec<CaseReport> {
    let g = &built.graph;
    // Host inputs shared by both engines.
    let host_of = |id: TensorId, n: u64| -> Option<(TensorId, HostBuffer)> {
        let t = g.get(id)?;
        let len = usize::try_from(t.span_elements()?).ok()?;
        let dt = g.data_type(id)?;
        let v = match t.name.as_str() {
            // Padding lengths: batch 0 full, batch 1 shorter (within the tensor's dims).
            "SEQ_LEN_Q" => vec![77.0, 50.0],
            "SEQ_LEN_KV" => vec![130.0, 61.0],
            name => values(len, n + 1, name == "Stats"),
        };
        HostBuffer::from_f64(dt, &v).map(|h| (id, h))
    };
    let inputs: Option<Vec<_>> = built
        .inputs
        .iter()
        .enumerate()
        .map(|(n, &id)| host_of(id, n as u64))
        .collect();
    let Some(inputs) = inputs else {
        return vec![failed(
            built.name.clone(),
            "could not size the buffers".into(),
        )];
    };
    let tolerance = if io == DataType::Bf16 { 1e-2 } else { 3e-3 };
    let report = analyze(g, target);
    let mut reports = against_cpu(
        dev,
        &report,
        built,
        &inputs,
        tolerance,
        &format!("/{io}"),
        0.0,
    );
    if reports.is_empty() {
        reports.push(failed(
            built.name.clone(),
            "the analyzer approved no sm120 configuration".into(),
        ));
    }
    reports
}

/// An output buffer of tensor `id`, every element NaN.
fn poisoned(g: &Graph, id: TensorId) -> Option<(TensorId, HostBuffer)> {
    let t = g.get(id)?;
    let len = usize::try_from(t.span_elements()?).ok()?;
    HostBuffer::from_f64(g.data_type(id)?, &vec![f64::NAN; len]).map(|h| (id, h))
}

/// Runs `built` on the CPU engine (its top configuration for the `cpu` target) on `inputs`,
/// returning its outputs in `built.outputs` order.
///
/// # Errors
/// [`EngineError::Unsupported`] when the CPU engine rejects the graph; execution errors.
pub(crate) fn run_cpu(
    built: &Built,
    inputs: &[(TensorId, HostBuffer)],
) -> Result<Vec<HostBuffer>, EngineError> {
    let g = &built.graph;
    let unsupported = |feature| EngineError::Unsupported {
        engine: "cpu_reference",
        feature,
    };
    let target = Target::by_name("cpu").ok_or(unsupported("a missing `cpu` target"))?;
    let report = analyze(g, &target);
    let ranked = heuristics(&report, &HeuristicsOptions::default());
    let cand = ranked
        .iter()
        .find(|c| c.config.engine == EngineKind::CpuReference)
        .ok_or(unsupported("this graph (the analyzer rejects it)"))?;
    let approved = report.approve(cand).map_err(|_| unsupported("approval"))?;
    let plan = CpuEngine.build_plan(&approved)?;
    let mut pack = VariantPack::new();
    for (id, h) in inputs {
        pack.insert(*id, Box::new(h.clone()));
    }
    for &id in &built.outputs {
        let (id, h) = poisoned(g, id).ok_or(unsupported("an output of unknown size"))?;
        pack.insert(id, Box::new(h));
    }
    plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))?;
    built
        .outputs
        .iter()
        .map(|id| {
            pack.get(&(*id).into())
                .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
                .cloned()
                .ok_or(unsupported("an output that is not a host buffer"))
        })
        .collect()
}

pub(crate) fn failed(name: String, e: String) -> CaseReport {
    CaseReport {
        name,
        tolerance: 0.0,
        outputs: Vec::new(),
        error: Some(e),
    }
}

/// Runs `built` on the CPU engine and on every sm120 candidate `report` approves, all on
/// `inputs` (outputs poisoned), and compares each candidate's outputs with the CPU's. Empty when
/// no sm120 configuration is approved. Case names are `{built.name}{tag}/{config label}`;
/// errors are [`relative_floored`] with `floor` (0: plain relative error).
pub(crate) fn against_cpu(
    dev: &Arc<CudaDevice>,
    report: &SupportReport,
    built: &Built,
    inputs: &[(TensorId, HostBuffer)],
    tolerance: f64,
    tag: &str,
    floor: f64,
) -> Vec<CaseReport> {
    let g = &built.graph;
    let ranked = heuristics(report, &HeuristicsOptions::default());
    let outputs: Option<Vec<_>> = built.outputs.iter().map(|&id| poisoned(g, id)).collect();
    let Some(outputs) = outputs else {
        return vec![failed(
            built.name.clone(),
            "could not size the buffers".into(),
        )];
    };
    let reference = match run_cpu(built, inputs) {
        Ok(r) => r.iter().map(HostBuffer::to_f64).collect::<Vec<_>>(),
        Err(e) => return vec![failed(format!("{}/cpu", built.name), e.to_string())],
    };
    let engine = Sm120Engine::new(Arc::clone(dev));
    let mut reports = Vec::new();
    for cand in ranked
        .iter()
        .filter(|c| c.config.engine == EngineKind::Sm120)
    {
        let name = format!("{}{tag}/{}", built.name, cand.config.label());
        let run = || -> Result<Vec<Vec<f64>>, EngineError> {
            let approved = report.approve(cand).map_err(|_| EngineError::Unsupported {
                engine: "sm120",
                feature: "approval",
            })?;
            let plan = engine.build_plan(&approved)?;
            let mut pack = VariantPack::new();
            for (id, h) in inputs.iter().chain(&outputs) {
                pack.insert(*id, Box::new(DeviceBuffer::upload(dev, h)?));
            }
            let mut ws = Workspace::Device(DeviceWorkspace::new(dev, plan.workspace_size())?);
            plan.execute(&mut pack, &mut ws)?;
            built
                .outputs
                .iter()
                .map(|id| {
                    let buf = pack
                        .get(&(*id).into())
                        .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>());
                    Ok(buf
                        .map(|b| b.download(dev))
                        .transpose()?
                        .map(|h| h.to_f64())
                        .unwrap_or_default())
                })
                .collect()
        };
        reports.push(match run() {
            Ok(out) => {
                // Name each output by its port (O, Stats, dQ, ...).
                let names = built.outputs.iter().map(|&id| {
                    g.nodes()
                        .iter()
                        .flat_map(|n| n.outputs.iter())
                        .find(|(_, &t)| t == id)
                        .map_or("?", |(p, _)| p.name())
                });
                let outputs = out
                    .iter()
                    .zip(&reference)
                    .zip(names)
                    .map(|((o, r), n)| OutputCheck {
                        name: n,
                        ..relative_floored(o, r, floor)
                    })
                    .collect();
                CaseReport {
                    name,
                    tolerance,
                    outputs,
                    error: None,
                }
            }
            Err(e) => failed(name, e.to_string()),
        });
    }
    reports
}

/// Runs the engine-level cases on `dev`, calling `each` with each report.
pub fn run(
    dev: &Arc<CudaDevice>,
    target: &Target,
    mut each: impl FnMut(&CaseReport),
) -> Vec<CaseReport> {
    let mut all = Vec::new();
    for io in [DataType::Bf16, DataType::F16] {
        for built in [backward_graph(io), forward_graph(io)] {
            let reports = match built {
                Ok(b) => run_one(dev, target, &b, io),
                Err(e) => vec![CaseReport {
                    name: "engine/graph".into(),
                    tolerance: 0.0,
                    outputs: Vec::new(),
                    error: Some(e.to_string()),
                }],
            };
            reports.iter().for_each(&mut each);
            all.extend(reports);
        }
    }
    all
}
