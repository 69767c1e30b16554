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

use crate::fill::{host, poison, poisoned};
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
    /// The main kernel took its Q and dO tiles by tensor copies (its build, not its entry).
    pub tensor_copies: bool,
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
        let dt = g.graph.data_type(id).ok_or_else(|| sized(g, id))?;
        // A ragged output's buffer takes its sequences and gaps (the offsets place them).
        let len = g.buffer_len(id).ok_or_else(|| sized(g, id))?;
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
        tensor_copies: plan.tensor_copies(),
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
/// f64 reference), outputs poisoned (every byte [`POISON_BYTE`], as on the device); returns
/// the outputs (f64 buffers for the reference).
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
        // Poisoned in the buffer's own type (f64 for the reference), so that the poison's bytes
        // are the device runs' and an element outside a ragged output's tokens can be checked.
        let p = match (precision, g.graph.data_type(id)) {
            (Precision::F64, Some(dt)) if dt.is_float() => {
                g.buffer_len(id).and_then(|n| poison(DataType::F64, n))
            }
            _ => poisoned(g, id),
        };
        pack.insert(id, Box::new(p.ok_or_else(|| sized(g, id))?));
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
}
