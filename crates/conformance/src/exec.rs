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
