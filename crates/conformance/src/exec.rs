//! Running one node of a case's graph the way a user does: approve a configuration, build the
//! plan with its engine, fill a variant pack, execute, read the outputs back. [`on_device`] runs
//! an sm120 plan with every output and the workspace optionally between guard zones;
//! [`on_cpu`] runs the CPU engine, in f32 or as the f64 reference.

use std::sync::Arc;

use rime_analyzer::{analyze, ApprovedPlan, EngineKind, SupportReport, Target};
use rime_engines::cpu::{CpuPlan, Precision};
use rime_engines::cuda::{CudaDevice, DeviceBuffer, DeviceWorkspace, Sm120EnginePlan};
use rime_engines::{Buffer, CpuEngine, HostBuffer, Plan, VariantPack, Workspace};
use rime_graph::{DataType, NodeId, TensorId};

use crate::fill::{host, poisoned};
use crate::guard::Guarded;
use crate::spec::CaseGraph;
use crate::HarnessError;

/// Every bit of an unwritten output: 0xffff is NaN in both bf16 and f16, as 0xffffffff in f32.
pub const POISON_BYTE: u8 = 0xff;

/// The outputs of one execution, by tensor, in the plan's order.
pub type Outputs = Vec<(TensorId, HostBuffer)>;

fn sized(g: &CaseGraph, id: TensorId) -> HarnessError {
    HarnessError::Sizing {
        tensor: g.name_of(id).to_owned(),
    }
}

/// The buffer of input `id` among `inputs` (outputs of an earlier node included).
fn input_of<'a>(
    g: &CaseGraph,
    inputs: &'a [(TensorId, HostBuffer)],
    id: TensorId,
) -> Result<&'a HostBuffer, HarnessError> {
    inputs
        .iter()
        .find(|(t, _)| *t == id)
        .map(|(_, h)| h)
        .ok_or_else(|| sized(g, id))
}

/// An sm120 plan's execution: its outputs, the kernels it launched, and the dQ bits of each
/// repeat (for deterministic routes run more than once).
#[derive(Debug)]
pub struct DeviceRun {
    /// The outputs of the first execution.
    pub outputs: Outputs,
    /// The table entries the plan launched.
    pub kernels: Vec<&'static str>,
    /// Outputs of every execution, hashed (FNV-1a of their bytes), per execution.
    pub hashes: Vec<Vec<u64>>,
}

/// Builds `approved` (an sm120 configuration) on `dev` and executes it `repeats` times on
/// `inputs`, every output poisoned before each run; with `guards`, every output and the
/// workspace sit between guard zones that must come back unchanged.
///
/// # Errors
/// Build, execution, guard or driver errors.
pub fn on_device(
    dev: &Arc<CudaDevice>,
    approved: &ApprovedPlan,
    g: &CaseGraph,
    inputs: &[(TensorId, HostBuffer)],
    guards: bool,
    repeats: usize,
) -> Result<DeviceRun, HarnessError> {
    let plan = Sm120EnginePlan::new(Arc::clone(dev), approved)?;
    let tensors = plan.tensors().clone();
    let mut pack = VariantPack::new();
    for &id in &tensors.inputs {
        pack.insert(
            id,
            Box::new(DeviceBuffer::upload(dev, input_of(g, inputs, id)?)?),
        );
    }
    let mut zones = Vec::new();
    for &id in &tensors.outputs {
        let t = g.graph.get(id).ok_or_else(|| sized(g, id))?;
        let dt = g.graph.data_type(id).ok_or_else(|| sized(g, id))?;
        let len = t
            .span_elements()
            .and_then(|s| usize::try_from(s).ok())
            .ok_or_else(|| sized(g, id))?;
        let z = Guarded::new(
            dev,
            g.name_of(id),
            len * dt.size_bytes(),
            POISON_BYTE,
            guards,
        )?;
        pack.insert(id, Box::new(DeviceBuffer::new(dt, len, z.interior()?)?));
        zones.push((id, z));
    }
    let ws_zone = Guarded::new(dev, "workspace", plan.workspace_size(), POISON_BYTE, guards)?;
    let mut workspace = Workspace::Device(DeviceWorkspace::over(ws_zone.interior()?));
    let mut hashes = Vec::new();
    let mut first = None;
    for _ in 0..repeats.max(1) {
        for (_, z) in &zones {
            z.interior()?.fill(dev, POISON_BYTE)?;
        }
        ws_zone.interior()?.fill(dev, POISON_BYTE)?;
        plan.execute(&mut pack, &mut workspace)?;
        for z in zones.iter().map(|(_, z)| z).chain([&ws_zone]) {
            z.check(dev)?;
        }
        let mut outs = Vec::new();
        for &(id, _) in &zones {
            let buf = pack
                .get(&id.into())
                .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
                .ok_or_else(|| sized(g, id))?;
            outs.push((id, buf.download(dev)?));
        }
        hashes.push(outs.iter().map(|(_, h)| hash(h)).collect());
        first.get_or_insert(outs);
    }
    Ok(DeviceRun {
        outputs: first.unwrap_or_default(),
        kernels: plan.kernels(),
        hashes,
    })
}

/// FNV-1a of a buffer's little-endian bytes: equal hashes over runs mean bitwise-equal outputs.
pub fn hash(buffer: &HostBuffer) -> u64 {
    buffer
        .to_le_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// The CPU engine's analysis of `g` (the `cpu` target) and its plan for `node`.
fn cpu_plan(g: &CaseGraph, node: NodeId, precision: Precision) -> Result<CpuPlan, HarnessError> {
    let target = Target::by_name("cpu").ok_or(HarnessError::Sizing {
        tensor: "the cpu target".to_owned(),
    })?;
    let report: SupportReport = analyze(&g.graph, &target);
    let approved = report.approve_config(node, EngineKind::CpuReference, None)?;
    Ok(match precision {
        Precision::F32 => CpuPlan::new(&approved, Precision::F32)?,
        Precision::F64 => CpuEngine.reference_plan(&approved)?,
    })
}

/// Runs `node` of `g` on the CPU engine on `inputs` (graph types; converted to f64 for the
/// f64 reference), outputs NaN-poisoned; returns the outputs (f64 buffers for the reference).
///
/// # Errors
/// Approval (the CPU engine rejects the graph) or execution errors.
pub fn on_cpu(
    g: &CaseGraph,
    node: NodeId,
    inputs: &[(TensorId, HostBuffer)],
    precision: Precision,
) -> Result<Outputs, HarnessError> {
    let plan = cpu_plan(g, node, precision)?;
    let as_precision = |h: &HostBuffer| -> Result<HostBuffer, HarnessError> {
        match precision {
            Precision::F64 if h.data_type().is_float() => {
                host(DataType::F64, &h.to_f64()).ok_or(HarnessError::Sizing {
                    tensor: "an f64 copy".to_owned(),
                })
            }
            _ => Ok(h.clone()),
        }
    };
    let tensors = plan.tensors().clone();
    let mut pack = VariantPack::new();
    for &id in &tensors.inputs {
        pack.insert(id, Box::new(as_precision(input_of(g, inputs, id)?)?));
    }
    for &id in &tensors.outputs {
        let p = poisoned(g, id).ok_or_else(|| sized(g, id))?;
        pack.insert(id, Box::new(as_precision(&p)?));
    }
    plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))?;
    tensors
        .outputs
        .iter()
        .map(|&id| {
            let h = pack
                .get(&id.into())
                .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
                .cloned()
                .ok_or_else(|| sized(g, id))?;
            Ok((id, h))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::relative;
    use crate::fill::{node_inputs, Fills};
    use crate::spec::{BiasSpec, CaseSpec, Layout, CAUSAL};

    /// The two CPU plans the harness uses agree: the f64 reference and the f32 engine, on a
    /// two-node graph (the backward reading the forward's O and Stats), BSHD, GQA, causal,
    /// broadcast bias with dBias, padding.
    #[test]
    fn the_f64_reference_agrees_with_the_f32_engine() {
        let spec = CaseSpec {
            layout: Layout::Bshd,
            band: CAUSAL,
            bias: Some(BiasSpec {
                per_batch: false,
                per_head: true,
            }),
            dbias: true,
            padding: Some((vec![17, 9], vec![23, 5])),
            ..CaseSpec::new(2, 4, 2, 17, 23, 16)
        };
        let g = spec.graph().expect("graph");
        let (fwd, bwd) = (g.forward.expect("fwd"), g.backward.expect("bwd"));
        let fills = Fills::random(9);
        let inputs = node_inputs(&spec, &g, fwd, &fills).expect("inputs");
        let o32 = on_cpu(&g, fwd, &inputs, Precision::F32).expect("f32 forward");
        let o64 = on_cpu(&g, fwd, &inputs, Precision::F64).expect("f64 forward");
        assert_eq!(o32.len(), 2);
        let mut bwd_inputs = node_inputs(&spec, &g, bwd, &fills).expect("inputs");
        bwd_inputs.extend(o32.iter().cloned());
        let g32 = on_cpu(&g, bwd, &bwd_inputs, Precision::F32).expect("f32 backward");
        let g64 = on_cpu(&g, bwd, &bwd_inputs, Precision::F64).expect("f64 backward");
        assert_eq!(g64.len(), 4, "dQ, dK, dV, dBias");
        for ((id, a), (id64, b)) in o32.iter().chain(&g32).zip(o64.iter().chain(&g64)) {
            assert_eq!(id, id64);
            assert_eq!(b.data_type(), DataType::F64);
            let c = relative(g.name_of(*id), &a.to_f64(), &b.to_f64(), 0.0);
            assert!(c.bad == 0 && c.rel_err < 1e-2, "{c:?}");
        }
    }

    /// A THD bench row (`BackwardCase::lens`) is the padded problem with the same lengths: its
    /// graph validates and runs on the CPU engine with the offsets `node_inputs` fills, and
    /// every real token's dQ, dK and dV equal those of a padded BSHD graph fed the same values.
    #[test]
    fn a_thd_row_computes_the_padded_problem_on_its_real_tokens() {
        use crate::workload::{BackwardCase, BiasKind};
        let lens = vec![5, 0, 17];
        let case = BackwardCase {
            b: 3,
            hq: 4,
            hk: 2,
            sq: 17,
            skv: 17,
            d: 16,
            dv: 16,
            causal: true,
            bias: BiasKind::None,
            io: DataType::Bf16,
            deterministic: false,
            sink: false,
            lens: Some(lens.clone()),
        };
        let thd = case.spec();
        assert_eq!(thd.layout, Layout::Thd);
        assert_eq!(
            thd.ragged_offsets("Q_OFFSETS"),
            Some(vec![0, 320, 320, 1408])
        );
        assert_eq!(
            thd.ragged_offsets("K_OFFSETS"),
            Some(vec![0, 160, 160, 704])
        );
        assert_eq!(
            thd.ragged_offsets("STATS_OFFSETS"),
            Some(vec![0, 20, 20, 88])
        );
        let expected = 10.0 * 4.0 * 16.0 * (25.0 + 289.0) / 2.0;
        assert_eq!(case.flops(), expected);
        let g = thd.backward_graph().expect("graph");
        assert!(g.graph.validate().is_ok(), "{:?}", g.graph.validate());
        let node = g.backward.expect("bwd");
        let inputs = node_inputs(&thd, &g, node, &Fills::random(3)).expect("inputs");
        assert_eq!(
            inputs.len(),
            8 + 5,
            "Q K V O dO Stats, two lengths, five offsets"
        );
        let out = on_cpu(&g, node, &inputs, Precision::F64).expect("THD backward on the CPU");

        // The same values placed in padded BSHD buffers (batch b at b x S x H x D).
        let padded = CaseSpec {
            layout: Layout::Bshd,
            ..thd.clone()
        };
        let pg = padded.backward_graph().expect("graph");
        let token = |name: &str| -> usize {
            match name {
                "Q" | "O" | "dO" | "dQ" => 4 * 16,
                "Stats" => 4,
                _ => 2 * 16,
            }
        };
        let offsets = |name: &str| -> Vec<usize> {
            let key = match name {
                "Q" | "dQ" => "Q_OFFSETS",
                "K" | "dK" => "K_OFFSETS",
                "V" | "dV" => "V_OFFSETS",
                "O" | "dO" => "O_OFFSETS",
                _ => "STATS_OFFSETS",
            };
            thd.ragged_offsets(key).expect("offsets")
        };
        // Element i of sequence b, token-major: THD index and padded index (BSHD, but the
        // padded graph's Stats is BHS1 packed).
        let pairs = |name: &str| -> Vec<(usize, usize)> {
            let (t, off) = (token(name), offsets(name));
            let mut v = Vec::new();
            for (b, &n) in lens.iter().enumerate() {
                for i in 0..n * t {
                    let at = if name == "Stats" {
                        (b * t + i % t) * 17 + i / t
                    } else {
                        b * 17 * t + i
                    };
                    v.push((off[b] + i, at));
                }
            }
            v
        };
        let mut pinputs = Vec::new();
        for (id, h) in &inputs {
            let name = g.name_of(*id);
            let Some(pid) = pg.id(name) else {
                continue; // the offsets
            };
            let values = h.to_f64();
            let mut p = if name.starts_with("SEQ_LEN") {
                values.clone()
            } else {
                let len = pg.graph.get(pid).and_then(|t| t.span_elements());
                vec![0.0; usize::try_from(len.expect("span")).expect("len")]
            };
            if !name.starts_with("SEQ_LEN") {
                for (a, b) in pairs(name) {
                    p[b] = values[a];
                }
            }
            let dt = pg.graph.data_type(pid).expect("type");
            pinputs.push((pid, host(dt, &p).expect("buffer")));
        }
        let pout = on_cpu(&pg, pg.backward.expect("bwd"), &pinputs, Precision::F64)
            .expect("padded backward on the CPU");
        for name in ["dQ", "dK", "dV"] {
            let get = |o: &Outputs, c: &CaseGraph| {
                let id = c.id(name).expect("grad");
                o.iter().find(|(i, _)| *i == id).expect("out").1.to_f64()
            };
            let (a, b) = (get(&out, &g), get(&pout, &pg));
            let pairs = pairs(name);
            assert!(!pairs.is_empty());
            for (i, j) in pairs {
                assert!(
                    a[i].is_finite() && a[i] == b[j],
                    "{name}: {} vs {}",
                    a[i],
                    b[j]
                );
            }
        }
    }
}
