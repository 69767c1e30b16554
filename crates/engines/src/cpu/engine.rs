//! The CPU reference engine: plans over host buffers that run [`forward`] / [`backward`] in
//! f32 (f16 / bf16 / f32 io).

use std::collections::BTreeMap;
use std::sync::Arc;

use rime_analyzer::{ApprovedPlan, AttnScale, EngineConfig, EngineKind};
use rime_graph::{DiagonalAlignment, Graph, NodeId, OpKind, Port, TensorId};

use super::layout::{HostSliceMut, TensorMut, TensorRef, View4};
use super::problem::{
    AttentionInputs, BackwardInputs, BackwardOutputs, Band, ForwardOutputs, Problem, SeqLens, Shape,
};
use super::{backward, forward, memory};
use crate::{
    check_workspace, expect_engine, Binding, Buffer, Engine, EngineError, HostData, HostDataMut,
    MemoryLocation, MemoryNeeds, Plan, PlanTensors, VariantPack, Workspace,
};

const ENGINE: &str = "cpu_reference";

/// The CPU reference engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuEngine;

/// A CPU plan: the node's problem with everything known at plan time.
#[derive(Debug, Clone)]
pub struct CpuPlan {
    graph: Arc<Graph>,
    node: NodeId,
    op: OpKind,
    config: EngineConfig,
    problem: Problem,
    scale: AttnScale,
    tensors: PlanTensors,
    /// (batch, head) dims of the dBias output, when the node writes one.
    dbias: Option<[usize; 2]>,
}

fn unsupported(feature: &'static str) -> EngineError {
    EngineError::Unsupported {
        engine: ENGINE,
        feature,
    }
}

fn to_usize(x: i64) -> Result<usize, EngineError> {
    usize::try_from(x).map_err(|_| unsupported("negative sizes"))
}

impl Engine for CpuEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::CpuReference
    }

    fn build_plan(&self, approved: &ApprovedPlan) -> Result<Box<dyn Plan>, EngineError> {
        Ok(Box::new(CpuPlan::new(approved)?))
    }
}

impl CpuPlan {
    /// Builds the plan of an approved CPU configuration.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`] for another engine's configuration;
    /// [`EngineError::Unsupported`] for dropout or ragged layouts.
    pub fn new(approved: &ApprovedPlan) -> Result<CpuPlan, EngineError> {
        expect_engine(EngineKind::CpuReference, approved)?;
        let graph = Arc::clone(approved.graph_arc());
        let node = approved.node();
        let dropout = [Port::Seed, Port::Offset, Port::DropoutMask, Port::RngDump];
        if node.options.dropout_probability.is_some()
            || dropout.iter().any(|&p| node.port(p).is_some())
        {
            return Err(unsupported("dropout"));
        }
        let ports = node.inputs.values().chain(node.outputs.values());
        if ports
            .filter_map(|&id| graph.get(id))
            .any(|t| t.ragged_offset.is_some())
        {
            return Err(unsupported("ragged (THD) layouts"));
        }
        let s = approved.shape();
        let shape = Shape {
            b: to_usize(s.b)?,
            hq: to_usize(s.hq)?,
            hk: to_usize(s.hk)?,
            hv: to_usize(s.hv)?,
            sq: to_usize(s.sq)?,
            skv: to_usize(s.skv)?,
            dqk: to_usize(s.dqk)?,
            dv: to_usize(s.dv)?,
        };
        let o = &node.options;
        let mut problem = Problem::new(shape);
        problem.band = Band {
            left_bound: o.left_bound,
            right_bound: o.right_bound,
            bottom_right: o.diagonal_alignment == DiagonalAlignment::BottomRight,
        };
        problem.alibi = o.alibi_mask;
        if let AttnScale::Value(v) = approved.attn_scale() {
            problem.scale = f64::from(v);
        }
        let dbias = match node.output(Port::DBias).and_then(|id| graph.get(id)) {
            Some(t) => match t.dims.as_slice() {
                [bb, bh, ..] => Some([to_usize(*bb)?, to_usize(*bh)?]),
                _ => None,
            },
            None => None,
        };
        Ok(CpuPlan {
            dbias,
            tensors: PlanTensors::of(&graph, node),
            op: node.op,
            node: approved.node_id(),
            config: approved.config().clone(),
            scale: approved.attn_scale(),
            problem,
            graph,
        })
    }

    fn name(&self, id: TensorId) -> &str {
        self.graph.get(id).map_or("", |t| t.name.as_str())
    }

    fn view(&self, id: TensorId) -> Result<View4, EngineError> {
        let t = self
            .graph
            .get(id)
            .ok_or_else(|| unsupported("a port without its tensor"))?;
        View4::new(&t.name, &t.dims, &t.strides)
    }

    /// Reads integer element `b` of a (B,1,1,1) tensor.
    fn int_at(&self, id: TensorId, buffer: &dyn Buffer, b: usize) -> Result<i64, EngineError> {
        let view = self.view(id)?;
        let at = view.offset(b, 0, 0, 0);
        match buffer.host() {
            Some(HostData::I32(x)) => Ok(i64::from(x[at])),
            Some(HostData::I64(x)) => Ok(x[at]),
            _ => Err(unsupported("non-integer sequence lengths")),
        }
    }

    /// The sequence lengths of a padding mask, checked against the sequence dims.
    fn seq_lens(
        &self,
        reads: &BTreeMap<TensorId, &dyn Buffer>,
    ) -> Result<Option<SeqLens>, EngineError> {
        let Some(node) = self.graph.node(self.node) else {
            return Ok(None);
        };
        if !node.options.padding_mask {
            return Ok(None);
        }
        let s = self.problem.shape;
        let mut lens = SeqLens {
            q: Vec::new(),
            kv: Vec::new(),
        };
        for (port, max, out) in [
            (Port::SeqLenQ, s.sq, &mut lens.q),
            (Port::SeqLenKv, s.skv, &mut lens.kv),
        ] {
            let id = node
                .input(port)
                .ok_or_else(|| unsupported("padding without sequence lengths"))?;
            let buffer = *reads.get(&id).ok_or_else(|| EngineError::MissingBuffer {
                tensor: self.name(id).to_owned(),
            })?;
            for b in 0..s.b {
                let value = self.int_at(id, buffer, b)?;
                let len = usize::try_from(value).ok().filter(|&l| l <= max);
                out.push(len.ok_or_else(|| EngineError::SeqLenOutOfRange {
                    tensor: self.name(id).to_owned(),
                    batch: b,
                    value,
                    max,
                })?);
            }
        }
        Ok(Some(lens))
    }

    /// The problem with the values only known at execution (scale tensor, sequence lengths).
    fn problem_for(&self, reads: &BTreeMap<TensorId, &dyn Buffer>) -> Result<Problem, EngineError> {
        let mut problem = self.problem.clone();
        if let AttnScale::Tensor(id) = self.scale {
            let buffer = *reads.get(&id).ok_or_else(|| EngineError::MissingBuffer {
                tensor: self.name(id).to_owned(),
            })?;
            let view = self.view(id)?;
            let float = match buffer.host() {
                Some(HostData::Float(x)) => x,
                _ => return Err(unsupported("a non-float Attn_scale tensor")),
            };
            problem.scale = TensorRef::new(self.name(id), float, view)?.get::<f64>(0, 0, 0, 0);
        }
        problem.seq_lens = self.seq_lens(reads)?;
        Ok(problem)
    }
}

/// Read-only tensor views of a node's ports.
struct Reads<'a> {
    plan: &'a CpuPlan,
    buffers: BTreeMap<TensorId, &'a dyn Buffer>,
}

impl<'a> Reads<'a> {
    fn port(&self, port: Port) -> Result<Option<TensorRef<'a>>, EngineError> {
        let Some(node) = self.plan.graph.node(self.plan.node) else {
            return Ok(None);
        };
        let Some(id) = node.input(port) else {
            return Ok(None);
        };
        let Some(&buffer) = self.buffers.get(&id) else {
            return Ok(None);
        };
        let data = match buffer.host() {
            Some(HostData::Float(x)) => x,
            _ => return Err(unsupported("integer attention tensors")),
        };
        let name = self.plan.graph.get(id).map_or("", |t| t.name.as_str());
        Ok(Some(TensorRef::new(name, data, self.plan.view(id)?)?))
    }

    fn required(&self, port: Port) -> Result<TensorRef<'a>, EngineError> {
        self.port(port)?
            .ok_or_else(|| unsupported("a required port without a buffer"))
    }
}

/// Writable tensor views of a node's outputs.
fn writes<'a>(
    plan: &'a CpuPlan,
    buffers: BTreeMap<TensorId, &'a mut dyn Buffer>,
) -> Result<BTreeMap<Port, TensorMut<'a>>, EngineError> {
    let node = plan
        .graph
        .node(plan.node)
        .ok_or_else(|| unsupported("a plan without its node"))?;
    let mut out = BTreeMap::new();
    for (id, buffer) in buffers {
        let Some((&port, _)) = node.outputs.iter().find(|(_, &t)| t == id) else {
            continue;
        };
        let name = plan.graph.get(id).map_or("", |t| t.name.as_str());
        let data: HostSliceMut<'a> = match buffer.host_mut() {
            Some(HostDataMut::Float(x)) => x,
            _ => return Err(unsupported("integer attention outputs")),
        };
        out.insert(port, TensorMut::new(name, data, plan.view(id)?)?);
    }
    Ok(out)
}

impl Plan for CpuPlan {
    fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn workspace_size(&self) -> usize {
        usize::try_from(self.config.workspace.total_bytes()).unwrap_or(usize::MAX)
    }

    fn tensors(&self) -> &PlanTensors {
        &self.tensors
    }

    fn scratch(&self) -> MemoryNeeds {
        memory::scratch(&self.problem, self.op, self.dbias)
    }

    fn check(&self, pack: &VariantPack) -> Result<Binding, EngineError> {
        let binding = pack.check(&self.graph, &self.tensors.all())?;
        for key in pack.keys() {
            if let Some(buffer) = pack.get(key) {
                if buffer.location() != MemoryLocation::Host {
                    return Err(EngineError::WrongMemory {
                        tensor: key.to_string(),
                        location: buffer.location().name(),
                        engine: ENGINE,
                    });
                }
            }
        }
        Ok(binding)
    }

    fn execute(
        &self,
        pack: &mut VariantPack,
        workspace: &mut Workspace,
    ) -> Result<(), EngineError> {
        check_workspace(self.workspace_size(), workspace)?;
        let binding = self.check(pack)?;
        let (reads, writes_) = pack.split(&binding, &self.tensors.outputs);
        let problem = self.problem_for(&reads)?;
        let reads = Reads {
            plan: self,
            buffers: reads,
        };
        let attn = AttentionInputs {
            q: reads.required(Port::Q)?,
            k: reads.required(Port::K)?,
            v: reads.required(Port::V)?,
            bias: reads.port(Port::Bias)?,
            sink: reads.port(Port::Sink)?,
        };
        let mut out = writes(self, writes_)?;
        let missing = || unsupported("a required output without a buffer");
        match self.op {
            OpKind::SdpaForward => {
                let o = out.remove(&Port::O).ok_or_else(missing)?;
                let outputs = ForwardOutputs {
                    o,
                    stats: out.remove(&Port::Stats),
                };
                forward::<f32>(&problem, &attn, outputs)
            }
            OpKind::SdpaBackward => {
                let inputs = BackwardInputs {
                    attn,
                    o: reads.required(Port::O)?,
                    d_o: reads.required(Port::DO)?,
                    stats: reads.required(Port::Stats)?,
                };
                let outputs = BackwardOutputs {
                    dq: out.remove(&Port::DQ).ok_or_else(missing)?,
                    dk: out.remove(&Port::DK).ok_or_else(missing)?,
                    dv: out.remove(&Port::DV).ok_or_else(missing)?,
                    dbias: out.remove(&Port::DBias),
                    dsink: out.remove(&Port::DSink),
                };
                backward::<f32>(&problem, &inputs, outputs)
            }
        }
    }
}
