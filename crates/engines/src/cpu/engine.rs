//! The CPU reference engine: plans over host buffers that run [`forward`] / [`backward`] in
//! f32 (f16 / bf16 / f32 io), or in f64 for a reference plan ([`CpuEngine::reference_plan`]).

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::Arc;

use rime_analyzer::{ApprovedPlan, AttnScale, EngineConfig, EngineKind, SdpaProblem, TensorSpec};
use rime_graph::{DataType, Graph, NodeId, OpKind, Port, Scalar, TensorId};

use super::layout::{HostSliceMut, TensorMut, TensorRef, View4};
use super::problem::{
    AttentionInputs, BackwardInputs, BackwardOutputs, Dropout, ForwardOutputs, Problem, SeqLens,
};
use super::ragged::{check_max_total, integers, offsets_of, seq_len_values, Ragged};
use super::{backward, forward, memory, rng_dump, PhiloxDropout};
use crate::{
    check_workspace, expect_engine, Binding, Buffer, Engine, EngineError, HostBuffer, HostData,
    HostDataMut, MemoryLocation, MemoryNeeds, Plan, PlanTensors, VariantPack, Workspace,
};

const ENGINE: &str = "cpu_reference";

/// The element offsets of every ragged-offsets tensor a plan reads, by tensor.
type Offsets = BTreeMap<TensorId, Vec<usize>>;

/// The buffer read for tensor `t`, or which tensor is missing.
fn read_of<'r>(
    reads: &BTreeMap<TensorId, &'r dyn Buffer>,
    t: &TensorSpec,
) -> Result<&'r dyn Buffer, EngineError> {
    reads
        .get(&t.id)
        .copied()
        .ok_or_else(|| EngineError::MissingBuffer {
            tensor: t.name.clone(),
        })
}

/// The CPU reference engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuEngine;

/// The arithmetic a CPU plan runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// f32 accumulation on the graph's io types: what `rime run` executes.
    F32,
    /// f64 throughout, on f64 buffers for every floating-point tensor: a reference for
    /// checking other engines (the same math, without its rounding).
    F64,
}

/// A CPU plan: the node's problem with everything known at plan time.
#[derive(Debug, Clone)]
pub struct CpuPlan {
    graph: Arc<Graph>,
    node: NodeId,
    config: EngineConfig,
    spec: SdpaProblem,
    problem: Problem,
    /// Philox dropout's probability (Seed and Offset are read at execution).
    dropout_probability: Option<f32>,
    precision: Precision,
    tensors: PlanTensors,
}

impl Engine for CpuEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::CpuReference
    }

    fn build_plan(&self, approved: &ApprovedPlan) -> Result<Box<dyn Plan>, EngineError> {
        Ok(Box::new(CpuPlan::new(approved, Precision::F32)?))
    }

    fn upload(&self, host: &HostBuffer) -> Result<Box<dyn Buffer>, EngineError> {
        Ok(Box::new(host.clone()))
    }

    fn download(&self, buffer: &dyn Buffer) -> Result<HostBuffer, EngineError> {
        buffer
            .as_any()
            .downcast_ref::<HostBuffer>()
            .cloned()
            .ok_or_else(|| EngineError::WrongMemory {
                tensor: "a downloaded buffer".to_owned(),
                location: buffer.location().name(),
                engine: ENGINE,
            })
    }

    fn upload_owned(
        &self,
        host: HostBuffer,
    ) -> Result<(Box<dyn Buffer>, Option<HostBuffer>), EngineError> {
        Ok((Box::new(host), None))
    }

    fn download_owned(&self, mut buffer: Box<dyn Buffer>) -> Result<HostBuffer, EngineError> {
        match buffer.as_any_mut().downcast_mut::<HostBuffer>() {
            Some(host) => Ok(std::mem::replace(host, HostBuffer::F32(Vec::new()))),
            None => self.download(buffer.as_ref()),
        }
    }

    fn workspace(&self, bytes: usize) -> Result<Workspace, EngineError> {
        Ok(Workspace::host(bytes))
    }
}

impl CpuEngine {
    /// The f64 reference plan of an approved CPU configuration: the engine's math in f64, on
    /// [`HostBuffer::F64`] buffers for every floating-point tensor (integer tensors keep their
    /// type), for checking other engines without the reference's own rounding.
    ///
    /// # Errors
    /// As [`Engine::build_plan`].
    pub fn reference_plan(&self, approved: &ApprovedPlan) -> Result<CpuPlan, EngineError> {
        CpuPlan::new(approved, Precision::F64)
    }
}

impl CpuPlan {
    /// Builds the plan of an approved CPU configuration, computing in `precision`.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`] for another engine's configuration.
    pub fn new(approved: &ApprovedPlan, precision: Precision) -> Result<CpuPlan, EngineError> {
        expect_engine(EngineKind::CpuReference, approved)?;
        let graph = Arc::clone(approved.graph_arc());
        let spec = approved.problem().clone();
        let mut problem = Problem::new(spec.shape);
        problem.band = spec.band;
        problem.alibi = spec.alibi;
        if let AttnScale::Value(v) = spec.scale {
            problem.scale = f64::from(v);
        }
        Ok(CpuPlan {
            tensors: PlanTensors::of(&graph, approved.node()),
            node: approved.node_id(),
            config: approved.config().clone(),
            precision,
            dropout_probability: approved.node().options.dropout_probability,
            spec,
            problem,
            graph,
        })
    }

    /// The arithmetic it runs in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The node the plan executes.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The view of the tensor bound to `port`, from the checked problem.
    fn view(&self, port: Port) -> Option<(&str, View4)> {
        let t = self.spec.tensor(port)?;
        Some((
            t.name.as_str(),
            View4 {
                dims: t.dims,
                strides: t.strides,
            },
        ))
    }

    /// A buffer that holds other elements than its tensor needs (the variant pack's check
    /// should have refused it).
    fn wrong_type(&self, port: Port, buffer: &dyn Buffer) -> EngineError {
        let t = self.spec.tensor(port);
        EngineError::DataTypeMismatch {
            tensor: t.map_or_else(String::new, |t| t.name.clone()),
            expected: t.map_or(DataType::F32, |t| t.data_type),
            actual: buffer.data_type(),
        }
    }

    /// The sequence lengths of a padding mask, checked against the sequence dims.
    fn seq_lens(
        &self,
        reads: &BTreeMap<TensorId, &dyn Buffer>,
    ) -> Result<Option<SeqLens>, EngineError> {
        if !self.spec.padding {
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
            let (Some(t), Some((_, view))) = (self.spec.tensor(port), self.view(port)) else {
                continue; // validation requires both with the padding mask
            };
            let buffer = read_of(reads, t)?;
            *out = seq_len_values(t, &view, buffer, s.b, max)
                .ok_or_else(|| self.wrong_type(port, buffer))??;
        }
        Ok(Some(lens))
    }

    /// The value of the (1, 1, 1, 1) scalar tensor bound to `port`: the graph's by-value
    /// value, else element 0 of its buffer; `None` when the port is not bound.
    fn scalar(
        &self,
        port: Port,
        reads: &BTreeMap<TensorId, &dyn Buffer>,
    ) -> Result<Option<f64>, EngineError> {
        let (Some(t), Some((name, view))) = (self.spec.tensor(port), self.view(port)) else {
            return Ok(None);
        };
        if let Some(v) = self.graph.get(t.id).and_then(|g| g.pass_by_value) {
            return Ok(Some(v.as_f64()));
        }
        let buffer = read_of(reads, t)?;
        let float = match buffer.host() {
            Some(HostData::Float(x)) => x,
            _ => return Err(self.wrong_type(port, buffer)),
        };
        Ok(Some(
            TensorRef::new(name, float, view)?.get::<f64>(0, 0, 0, 0),
        ))
    }

    /// The 64 bits of the (1, 1, 1, 1) integer tensor bound to `port` (Seed, Offset): the
    /// graph's by-value value, else element 0 of its buffer, i32 sign-extended, then its two's
    /// complement bits (lossless: -1 is u64::MAX, as a uint64 seed).
    fn philox_word(
        &self,
        port: Port,
        reads: &BTreeMap<TensorId, &dyn Buffer>,
    ) -> Result<u64, EngineError> {
        let (Some(t), Some((_, view))) = (self.spec.tensor(port), self.view(port)) else {
            // The analyzer requires Seed and Offset with a probability (DRP003).
            return Err(EngineError::MissingBuffer {
                tensor: port.to_string(),
            });
        };
        let value = match self.graph.get(t.id).and_then(|g| g.pass_by_value) {
            Some(Scalar::I32(v)) => i64::from(v),
            Some(Scalar::I64(v)) => v,
            Some(other) => {
                return Err(EngineError::DataTypeMismatch {
                    tensor: t.name.clone(),
                    expected: t.data_type,
                    actual: other.data_type(),
                })
            }
            None => {
                let buffer = read_of(reads, t)?;
                integers(buffer, &view, 1)
                    .and_then(|v| v.first().copied())
                    .ok_or_else(|| self.wrong_type(port, buffer))?
            }
        };
        Ok(u64::from_ne_bytes(value.to_ne_bytes()))
    }

    /// The problem with the values only known at execution (scale tensors, sequence lengths).
    fn problem_for(&self, reads: &BTreeMap<TensorId, &dyn Buffer>) -> Result<Problem, EngineError> {
        let mut problem = self.problem.clone();
        if let AttnScale::Tensor(_) = self.spec.scale {
            if let Some(scale) = self.scalar(Port::AttnScale, reads)? {
                problem.scale = scale;
            }
        }
        if self.spec.tensor(Port::DropoutMask).is_some() {
            // The analyzer requires Dropout_scale with a mask, and Dropout_scale_inv in a
            // backward (DRP003); a forward does not read scale_inv.
            let missing = |port: Port| EngineError::MissingBuffer {
                tensor: port.to_string(),
            };
            let scale = self
                .scalar(Port::DropoutScale, reads)?
                .ok_or_else(|| missing(Port::DropoutScale))?;
            let scale_inv = match self.spec.op {
                OpKind::SdpaBackward => self
                    .scalar(Port::DropoutScaleInv, reads)?
                    .ok_or_else(|| missing(Port::DropoutScaleInv))?,
                OpKind::SdpaForward => 1.0 / scale,
            };
            problem.dropout = Some(Dropout { scale, scale_inv });
        }
        if let Some(probability) = self.dropout_probability {
            problem = problem.with_philox(PhiloxDropout {
                probability,
                seed: self.philox_word(Port::Seed, reads)?,
                offset: self.philox_word(Port::Offset, reads)?,
            });
        }
        problem.seq_lens = self.seq_lens(reads)?;
        Ok(problem)
    }

    /// The offsets of every ragged tensor of the node, read from a checked pack: element
    /// offsets >= 0, and within what `max_total_seq_len_q/kv` tokens hold when it is set. The
    /// rest (count, order, buffer end, each sequence's room) is checked with the views.
    fn ragged_offsets(
        &self,
        pack: &VariantPack,
        binding: &Binding,
    ) -> Result<Offsets, EngineError> {
        let mut read = Offsets::new();
        for (port, t) in self.spec.tensors() {
            let Some(id) = t.ragged_offset else { continue };
            let sequence = port
                .token_sequence()
                .ok_or_else(|| EngineError::RaggedNotAllowed {
                    tensor: t.name.clone(),
                })?;
            let o = self
                .graph
                .get(id)
                .ok_or_else(|| EngineError::MissingBuffer {
                    tensor: format!("ragged offsets of '{}'", t.name),
                })?;
            if let Entry::Vacant(slot) = read.entry(id) {
                let buffer = pack
                    .bound(binding, id)
                    .ok_or_else(|| EngineError::MissingBuffer {
                        tensor: o.name.clone(),
                    })?;
                slot.insert(offsets_of(&t.name, o, buffer)?);
            }
            check_max_total(&self.spec, t, sequence, &o.name, &read[&id])?;
        }
        Ok(read)
    }

    /// The offsets of `t`'s ragged layout, from those the plan read; `None` for a padded
    /// tensor.
    fn ragged<'a>(
        &'a self,
        t: &TensorSpec,
        offsets: &'a Offsets,
    ) -> Result<Option<Ragged<'a>>, EngineError> {
        let Some(id) = t.ragged_offset else {
            return Ok(None);
        };
        let (Some(o), Some(values)) = (self.graph.get(id), offsets.get(&id)) else {
            return Err(EngineError::MissingBuffer {
                tensor: format!("ragged offsets of '{}'", t.name),
            });
        };
        Ok(Some(Ragged::new(&o.name, values)))
    }

    /// The data type a buffer of `expected` has in this plan's precision.
    fn buffer_type(&self, expected: DataType) -> DataType {
        match self.precision {
            Precision::F64 if expected.is_float() => DataType::F64,
            _ => expected,
        }
    }
}

/// Read-only tensor views of a node's ports.
struct Reads<'a> {
    plan: &'a CpuPlan,
    buffers: BTreeMap<TensorId, &'a dyn Buffer>,
    offsets: &'a Offsets,
}

impl<'a> Reads<'a> {
    fn port(&self, port: Port) -> Result<Option<TensorRef<'a>>, EngineError> {
        let (Some(t), Some((name, view))) = (self.plan.spec.tensor(port), self.plan.view(port))
        else {
            return Ok(None);
        };
        let Some(&buffer) = self.buffers.get(&t.id) else {
            return Ok(None);
        };
        let data = match buffer.host() {
            Some(HostData::Float(x)) => x,
            _ => return Err(self.plan.wrong_type(port, buffer)),
        };
        Ok(Some(match self.plan.ragged(t, self.offsets)? {
            Some(ragged) => TensorRef::ragged(name, data, view, ragged)?,
            None => TensorRef::new(name, data, view)?,
        }))
    }

    fn required(&self, port: Port) -> Result<TensorRef<'a>, EngineError> {
        self.port(port)?.ok_or_else(|| EngineError::MissingBuffer {
            tensor: self
                .plan
                .spec
                .tensor(port)
                .map_or_else(|| port.to_string(), |t| t.name.clone()),
        })
    }
}

/// Writable tensor views of a node's outputs.
fn writes<'a>(
    plan: &'a CpuPlan,
    buffers: BTreeMap<TensorId, &'a mut dyn Buffer>,
    offsets: &'a Offsets,
) -> Result<BTreeMap<Port, TensorMut<'a>>, EngineError> {
    let mut out = BTreeMap::new();
    for (id, buffer) in buffers {
        let Some((port, t)) = plan.spec.tensors().find(|(_, t)| t.id == id) else {
            continue;
        };
        let view = View4 {
            dims: t.dims,
            strides: t.strides,
        };
        let actual = buffer.data_type();
        let data: HostSliceMut<'a> = match buffer.host_mut() {
            Some(HostDataMut::Float(x)) => x,
            _ => {
                return Err(EngineError::DataTypeMismatch {
                    tensor: t.name.clone(),
                    expected: t.data_type,
                    actual,
                })
            }
        };
        let tensor = match plan.ragged(t, offsets)? {
            Some(ragged) => TensorMut::ragged(&t.name, data, view, ragged)?,
            None => TensorMut::new(&t.name, data, view)?,
        };
        out.insert(port, tensor);
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
        let dbias = self
            .spec
            .tensor(Port::DBias)
            .map(|t| [t.dims[0], t.dims[1]]);
        let real = match self.precision {
            Precision::F32 => 4,
            Precision::F64 => 8,
        };
        let dropout =
            self.spec.tensor(Port::DropoutMask).is_some() || self.dropout_probability.is_some();
        memory::scratch(&self.problem, self.spec.op, dbias, dropout, real)
    }

    fn check(&self, pack: &VariantPack) -> Result<Binding, EngineError> {
        let binding =
            pack.check_typed(&self.graph, &self.tensors.all(), |t| self.buffer_type(t))?;
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
        let offsets = self.ragged_offsets(pack, &binding)?;
        let (reads, writes_) = pack.split(&binding, &self.tensors.outputs);
        let problem = self.problem_for(&reads)?;
        let reads = Reads {
            plan: self,
            buffers: reads,
            offsets: &offsets,
        };
        let attn = AttentionInputs {
            q: reads.required(Port::Q)?,
            k: reads.required(Port::K)?,
            v: reads.required(Port::V)?,
            bias: reads.port(Port::Bias)?,
            sink: reads.port(Port::Sink)?,
            dropout_mask: reads.port(Port::DropoutMask)?,
        };
        let mut out = writes(self, writes_, &offsets)?;
        let mut dump = out.remove(&Port::RngDump);
        let mut output = |port: Port| {
            out.remove(&port).ok_or_else(|| EngineError::MissingBuffer {
                tensor: self
                    .spec
                    .tensor(port)
                    .map_or_else(|| port.to_string(), |t| t.name.clone()),
            })
        };
        let ran = match self.spec.op {
            OpKind::SdpaForward => {
                let outputs = ForwardOutputs {
                    o: output(Port::O)?,
                    stats: output(Port::Stats).ok(),
                };
                match self.precision {
                    Precision::F32 => forward::<f32>(&problem, &attn, outputs),
                    Precision::F64 => forward::<f64>(&problem, &attn, outputs),
                }
            }
            OpKind::SdpaBackward => {
                let inputs = BackwardInputs {
                    attn,
                    o: reads.required(Port::O)?,
                    d_o: reads.required(Port::DO)?,
                    stats: reads.required(Port::Stats)?,
                };
                let outputs = BackwardOutputs {
                    dq: output(Port::DQ)?,
                    dk: output(Port::DK)?,
                    dv: output(Port::DV)?,
                    dbias: output(Port::DBias).ok(),
                    dsink: output(Port::DSink).ok(),
                };
                match self.precision {
                    Precision::F32 => backward::<f32>(&problem, &inputs, outputs),
                    Precision::F64 => backward::<f64>(&problem, &inputs, outputs),
                }
            }
        };
        ran?;
        // The mask the node used (the analyzer binds RNG_DUMP only with a probability, DRP004).
        if let (Some(stream), Some(dump)) = (problem.philox, dump.as_mut()) {
            rng_dump(&problem.shape, &stream, dump)?;
        }
        Ok(())
    }
}
