//! The sm120 engine behind the engines crate's [`Engine`] / [`Plan`] traits: it turns an
//! analyzer-approved SM120 configuration into an [`Sm120Plan`] (compiling its kernels with
//! NVRTC through the cache) and executes it on [`DeviceBuffer`]s and a device [`Workspace`].

use std::sync::Arc;

use rime_analyzer::{ApprovedPlan, AttnScale, EngineConfig, EngineKind, Route};
use rime_graph::{DataType, DiagonalAlignment, Graph, NodeId, OpKind, Port, TensorId};

use super::buffer::DeviceBuffer;
use super::compile::{IoType, KernelBuild, KernelFile};
use super::context::CudaDevice;
use super::error::CudaError;
use super::plan::{BackwardBuffers, ForwardBuffers, Sm120Plan};
use super::problem::{AttnProblem, Band, BiasShape, Layouts, Strides};
use crate::{
    check_workspace, expect_engine, Binding, Buffer, Engine, EngineError, MemoryLocation, Plan,
    PlanTensors, VariantPack, Workspace,
};

const ENGINE: &str = "sm120";

fn unsupported(feature: &'static str) -> EngineError {
    EngineError::Unsupported {
        engine: ENGINE,
        feature,
    }
}

/// The SM120 CUDA engine on one device.
#[derive(Debug, Clone)]
pub struct Sm120Engine {
    device: Arc<CudaDevice>,
}

impl Sm120Engine {
    /// The engine on an opened device.
    pub fn new(device: Arc<CudaDevice>) -> Self {
        Self { device }
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.device
    }
}

impl Engine for Sm120Engine {
    fn kind(&self) -> EngineKind {
        EngineKind::Sm120
    }

    fn build_plan(&self, approved: &ApprovedPlan) -> Result<Box<dyn Plan>, EngineError> {
        Ok(Box::new(Sm120EnginePlan::new(
            Arc::clone(&self.device),
            approved,
        )?))
    }
}

/// A built SM120 plan: the problem, its kernels (already compiled and loaded) and the route.
#[derive(Debug)]
pub struct Sm120EnginePlan {
    device: Arc<CudaDevice>,
    graph: Arc<Graph>,
    node: NodeId,
    op: OpKind,
    config: EngineConfig,
    plan: Sm120Plan,
    tensors: PlanTensors,
}

fn strides_of(graph: &Graph, id: Option<TensorId>) -> Strides {
    match id
        .and_then(|id| graph.get(id))
        .map(|t| t.strides.as_slice())
    {
        Some([b, h, s, _]) => Strides {
            b: *b,
            h: *h,
            s: *s,
        },
        _ => Strides::default(),
    }
}

impl Sm120EnginePlan {
    /// Builds the plan of an approved SM120 configuration and compiles its kernels.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`]; [`EngineError::Unsupported`] for what the kernels do not
    /// implement yet (sink, dropout, ragged layouts, an Attn_scale tensor read at execution,
    /// Hk != Hv);
    /// [`EngineError::Cuda`] for compile or driver errors.
    pub fn new(device: Arc<CudaDevice>, approved: &ApprovedPlan) -> Result<Self, EngineError> {
        let plan = sm120_plan(approved)?;
        let node = approved.node();
        // Compile and load every kernel execute launches now, so that execute never compiles.
        for build in launched(&plan, node.op) {
            device.function(&build)?;
        }
        let graph = Arc::clone(approved.graph_arc());
        Ok(Self {
            tensors: PlanTensors::of(&graph, node),
            op: node.op,
            node: approved.node_id(),
            device,
            graph,
            config: approved.config().clone(),
            plan,
        })
    }

    /// The kernel specializations [`Self::new`] compiles and loads for `approved`, found without
    /// a device: what warming the kernel cache ahead of time, or measuring the cold-cache compile
    /// cost with [`compile_ptx`](super::compile::compile_ptx), needs.
    ///
    /// # Errors
    /// As [`Self::new`], less the compile and driver errors.
    pub fn kernel_builds(approved: &ApprovedPlan) -> Result<Vec<KernelBuild>, EngineError> {
        Ok(launched(&sm120_plan(approved)?, approved.node().op))
    }

    fn name(&self, id: TensorId) -> String {
        self.graph
            .get(id)
            .map_or_else(String::new, |t| t.name.clone())
    }
}

/// The kernels an execute of `op` launches: the forward kernel for a forward node, the backward
/// chain for a backward one (a backward plan has no use for the forward kernel, whose compile is
/// about 40% of a cold build).
fn launched(plan: &Sm120Plan, op: OpKind) -> Vec<KernelBuild> {
    let forward = op == OpKind::SdpaForward;
    plan.builds()
        .into_iter()
        .filter(|b| (b.file == KernelFile::Forward) == forward)
        .collect()
}

/// The checked problem, kernel configurations and workspace of an approved SM120
/// configuration: everything [`Sm120EnginePlan::new`] decides before it touches the device.
fn sm120_plan(approved: &ApprovedPlan) -> Result<Sm120Plan, EngineError> {
    expect_engine(EngineKind::Sm120, approved)?;
    let graph = Arc::clone(approved.graph_arc());
    let node = approved.node();
    let o = &node.options;
    if o.dropout_probability.is_some() || node.port(Port::DropoutMask).is_some() {
        return Err(unsupported("dropout"));
    }
    if node.port(Port::Sink).is_some() || node.port(Port::DSink).is_some() {
        return Err(unsupported("attention sinks"));
    }
    let scale = match approved.attn_scale() {
        AttnScale::Value(v) => v,
        AttnScale::Tensor(_) => return Err(unsupported("an Attn_scale tensor read at execution")),
    };
    let s = approved.shape();
    let dim = |x: i64| usize::try_from(x).map_err(|_| unsupported("negative sizes"));
    let io = match node.input(Port::Q).and_then(|q| graph.data_type(q)) {
        Some(DataType::Bf16) => IoType::Bf16,
        Some(DataType::F16) => IoType::F16,
        _ => return Err(unsupported("io data types other than f16 and bf16")),
    };
    let bias = match node
        .input(Port::Bias)
        .and_then(|b| graph.get(b))
        .map(|t| t.dims.as_slice())
    {
        Some([bb, bh, _, _]) => Some(BiasShape {
            batch: dim(*bb)?,
            heads: dim(*bh)?,
        }),
        Some(_) => return Err(unsupported("a bias that is not rank 4")),
        None => None,
    };
    let port = |p| strides_of(&graph, node.port(p));
    let layouts = Layouts {
        q: port(Port::Q),
        k: port(Port::K),
        v: port(Port::V),
        o: port(Port::O),
        d_o: port(Port::DO),
        stats: port(Port::Stats),
        bias: port(Port::Bias),
        dq: port(Port::DQ),
        dk: port(Port::DK),
        dv: port(Port::DV),
        dbias: port(Port::DBias),
        seq_q: port(Port::SeqLenQ),
        seq_kv: port(Port::SeqLenKv),
    };
    let problem = AttnProblem {
        batch: dim(s.b)?,
        hq: dim(s.hq)?,
        hk: dim(s.hk)?,
        hv: dim(s.hv)?,
        sq: dim(s.sq)?,
        skv: dim(s.skv)?,
        dqk: dim(s.dqk)?,
        dv: dim(s.dv)?,
        io,
        scale,
        band: Band {
            right: o.right_bound.map(|v| v as i32),
            left: o.left_bound.map(|v| v as i32),
            bottom_right: o.diagonal_alignment == DiagonalAlignment::BottomRight,
        },
        bias,
        dbias: node.output(Port::DBias).is_some(),
        alibi: o.alibi_mask,
        padding: o.padding_mask,
        layouts,
    };
    let config = approved.config();
    let route = config.route.unwrap_or(Route::Atomic);
    let plan = Sm120Plan::new(problem, route)?;
    if node.op == OpKind::SdpaBackward && plan.workspace() != &config.workspace {
        return Err(unsupported("a workspace layout other than the kernels'"));
    }
    Ok(plan)
}

fn device_buf<'a>(
    reads: &std::collections::BTreeMap<TensorId, &'a dyn Buffer>,
    id: Option<TensorId>,
) -> Option<&'a DeviceBuffer> {
    id.and_then(|id| reads.get(&id))
        .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
}

impl Plan for Sm120EnginePlan {
    fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn workspace_size(&self) -> usize {
        match self.op {
            OpKind::SdpaForward => 0,
            OpKind::SdpaBackward => self.plan.workspace_bytes(),
        }
    }

    fn tensors(&self) -> &PlanTensors {
        &self.tensors
    }

    fn check(&self, pack: &VariantPack) -> Result<Binding, EngineError> {
        let binding = pack.check(&self.graph, &self.tensors.all())?;
        let ordinal = self.device.properties().ordinal;
        for key in pack.keys() {
            if let Some(buffer) = pack.get(key) {
                let on_device = buffer.location() == MemoryLocation::Device(ordinal)
                    && buffer.as_any().downcast_ref::<DeviceBuffer>().is_some();
                if !on_device {
                    return Err(CudaError::NotOnDevice {
                        tensor: key.to_string(),
                        ordinal,
                        location: buffer.location().name().to_string(),
                    }
                    .into());
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
        self.enqueue(pack, workspace)?;
        // Surface asynchronous kernel failures here rather than at a later, unrelated call.
        self.device.synchronize()?;
        Ok(())
    }
}

impl Sm120EnginePlan {
    /// [`Plan::execute`] without the final stream synchronize: the kernels are queued on the
    /// device's stream and may still be running on return (what timing with CUDA events needs).
    ///
    /// # Errors
    /// As [`Plan::execute`], except that kernel failures surface at the next synchronize.
    pub fn enqueue(
        &self,
        pack: &mut VariantPack,
        workspace: &mut Workspace,
    ) -> Result<(), EngineError> {
        check_workspace(self.workspace_size(), workspace)?;
        let binding = self.check(pack)?;
        let node = self
            .graph
            .node(self.node)
            .ok_or_else(|| unsupported("a plan without its node"))?;
        let (reads, mut writes) = pack.split(&binding, &self.tensors.outputs);
        let missing = |p: Port| EngineError::MissingBuffer {
            tensor: node
                .port(p)
                .map_or_else(|| p.to_string(), |id| self.name(id)),
        };
        let half = |p: Port| {
            device_buf(&reads, node.input(p))
                .and_then(DeviceBuffer::half)
                .ok_or_else(|| missing(p))
        };
        let (q, k, v) = (half(Port::Q)?, half(Port::K)?, half(Port::V)?);
        let (q, k, v) = (q.as_view(), k.as_view(), v.as_view());
        let bias = match node.input(Port::Bias) {
            Some(_) => Some(half(Port::Bias)?.as_view()),
            None => None,
        };
        let lens = |p: Port| {
            device_buf(&reads, node.input(p))
                .and_then(DeviceBuffer::i32)
                .ok_or_else(|| missing(p))
        };
        let seq_lens = match self.plan.problem().padding {
            true => Some((
                lens(Port::SeqLenQ)?.as_view(),
                lens(Port::SeqLenKv)?.as_view(),
            )),
            false => None,
        };
        // Take each output out of the map, so that several can be borrowed mutably at once.
        let mut out = |p: Port| -> Option<&mut DeviceBuffer> {
            let id = node.output(p)?;
            writes
                .remove(&id)
                .and_then(|b| b.as_any_mut().downcast_mut::<DeviceBuffer>())
        };
        let dev = &self.device;
        match self.op {
            OpKind::SdpaForward => {
                let o = out(Port::O)
                    .and_then(DeviceBuffer::half_mut)
                    .ok_or_else(|| missing(Port::O))?;
                let mut scratch;
                let stats = match out(Port::Stats).and_then(DeviceBuffer::f32_mut) {
                    Some(s) => s,
                    None => {
                        let p = self.plan.problem();
                        scratch =
                            DeviceBuffer::poisoned(dev, DataType::F32, p.batch * p.hq * p.sq)?;
                        scratch.f32_mut().ok_or_else(|| missing(Port::Stats))?
                    }
                };
                self.plan.forward(
                    dev,
                    ForwardBuffers {
                        q,
                        k,
                        v,
                        bias,
                        seq_lens,
                        o: o.as_view_mut(),
                        stats: stats.as_view_mut(),
                    },
                )?;
            }
            OpKind::SdpaBackward => {
                let ws = match workspace {
                    Workspace::Device(w) if w.ordinal() == dev.properties().ordinal => {
                        w.slice().as_view()
                    }
                    _ => {
                        return Err(CudaError::NotOnDevice {
                            tensor: "workspace".to_string(),
                            ordinal: dev.properties().ordinal,
                            location: workspace.location().name().to_string(),
                        }
                        .into())
                    }
                };
                let o = half(Port::O)?.as_view();
                let d_o = half(Port::DO)?.as_view();
                let stats = device_buf(&reads, node.input(Port::Stats))
                    .and_then(DeviceBuffer::f32)
                    .ok_or_else(|| missing(Port::Stats))?
                    .as_view();
                let dq = out(Port::DQ)
                    .and_then(DeviceBuffer::half_mut)
                    .ok_or_else(|| missing(Port::DQ))?;
                let dk = out(Port::DK)
                    .and_then(DeviceBuffer::half_mut)
                    .ok_or_else(|| missing(Port::DK))?;
                let dv = out(Port::DV)
                    .and_then(DeviceBuffer::half_mut)
                    .ok_or_else(|| missing(Port::DV))?;
                let dbias = out(Port::DBias)
                    .and_then(DeviceBuffer::half_mut)
                    .map(|b| b.as_view_mut());
                let bufs = BackwardBuffers {
                    q,
                    k,
                    v,
                    o,
                    d_o,
                    stats,
                    bias,
                    seq_lens,
                    dq: dq.as_view_mut(),
                    dk: dk.as_view_mut(),
                    dv: dv.as_view_mut(),
                    dbias,
                    workspace: ws,
                };
                self.plan.backward(dev, bufs)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::workload::{sm120_candidates, BackwardCase, BiasKind};
    use rime_analyzer::Target;
    use rime_graph::{Context, SdpaForwardAttrs, Tensor};

    fn files(graph: &Graph) -> Vec<Vec<KernelFile>> {
        let target = Target::by_name("rtx-pro-6000").expect("profile");
        let (report, ranked) = sm120_candidates(graph, &target);
        assert!(!ranked.is_empty());
        ranked
            .iter()
            .map(|c| {
                let approved = report.approve(c).expect("approved");
                let builds = Sm120EnginePlan::kernel_builds(&approved).expect("builds");
                builds.iter().map(|b| b.file).collect()
            })
            .collect()
    }

    #[test]
    fn plans_build_only_the_kernels_their_node_launches() {
        let case = BackwardCase {
            b: 2,
            hq: 4,
            hk: 4,
            sq: 256,
            skv: 256,
            d: 128,
            dv: 128,
            causal: true,
            bias: BiasKind::Batch,
            io: DataType::Bf16,
            deterministic: false,
        };
        for kernels in files(&case.graph().expect("graph")) {
            assert!(!kernels.contains(&KernelFile::Forward), "{kernels:?}");
            assert!(kernels.contains(&KernelFile::BwdMain), "{kernels:?}");
        }
        let mut g = Graph::new(Context::with_io(DataType::Bf16));
        let dims = [1, 2, 64, 64];
        let (q, k, v) = (
            g.tensor(Tensor::packed("Q", &dims)),
            g.tensor(Tensor::packed("K", &dims)),
            g.tensor(Tensor::packed("V", &dims)),
        );
        g.sdpa_forward(q, k, v, SdpaForwardAttrs::new().name("fwd"))
            .expect("forward");
        for kernels in files(&g) {
            assert_eq!(kernels, [KernelFile::Forward]);
        }
    }
}
