//! The sm120 engine behind the engines crate's [`Engine`] / [`Plan`] traits: it builds exactly
//! the kernels an analyzer-approved SM120 configuration names (compiled with NVRTC through the
//! cache, loaded once and kept in the plan) and executes them on [`DeviceBuffer`]s and a device
//! [`Workspace`].

use std::path::Path;
use std::sync::Arc;

use rime_analyzer::{ApprovedPlan, EngineConfig, EngineKind, Route};
use rime_graph::{Graph, NodeId};

use super::buffer::{DeviceBuffer, DeviceWorkspace};
use super::compile::PtxCache;
use super::context::CudaDevice;
use super::error::CudaError;
use super::plan::{builds, Addresses, Sm120Plan};
use crate::{
    check_workspace, Binding, Buffer, Engine, EngineError, HostBuffer, MemoryLocation, Plan,
    PlanTensors, VariantPack, Workspace,
};

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

    fn upload(&self, host: &HostBuffer) -> Result<Box<dyn Buffer>, EngineError> {
        Ok(Box::new(DeviceBuffer::upload(&self.device, host)?))
    }

    fn download(&self, buffer: &dyn Buffer) -> Result<HostBuffer, EngineError> {
        let device = buffer
            .as_any()
            .downcast_ref::<DeviceBuffer>()
            .ok_or_else(|| not_on_device("a downloaded buffer", buffer.location(), &self.device))?;
        Ok(device.download(&self.device)?)
    }

    fn workspace(&self, bytes: usize) -> Result<Workspace, EngineError> {
        Ok(Workspace::Device(DeviceWorkspace::new(
            &self.device,
            bytes,
        )?))
    }
}

fn not_on_device(tensor: &str, location: MemoryLocation, dev: &CudaDevice) -> EngineError {
    let location = match location {
        MemoryLocation::Host => "host".to_owned(),
        MemoryLocation::Device(n) => format!("device {n}"),
    };
    CudaError::NotOnDevice {
        tensor: tensor.to_owned(),
        ordinal: dev.properties().ordinal,
        location,
    }
    .into()
}

/// A built SM120 plan: the approved problem with its kernels compiled, loaded and kept.
#[derive(Debug)]
pub struct Sm120EnginePlan {
    device: Arc<CudaDevice>,
    graph: Arc<Graph>,
    node: NodeId,
    config: EngineConfig,
    plan: Sm120Plan,
    tensors: PlanTensors,
}

/// Byte alignment the kernels' 16-byte vector loads and stores need of Q, K, V, O, dO, dQ, dK
/// and dV, and of the workspace's base.
const VECTOR_ALIGN: u64 = 16;

/// [`EngineError::Misaligned`] naming `tensor` unless `address` is a multiple of `alignment`.
fn check_aligned(tensor: &str, address: u64, alignment: u64) -> Result<(), EngineError> {
    if address % alignment == 0 {
        Ok(())
    } else {
        Err(EngineError::Misaligned {
            tensor: tensor.to_owned(),
            address,
            alignment,
        })
    }
}

impl Sm120EnginePlan {
    /// Builds the plan of an approved SM120 configuration: compiles and loads exactly the
    /// kernels it names.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`]; [`EngineError::MalformedPlan`] when the configuration
    /// lacks a kernel its node needs; [`EngineError::LimitExceeded`]; [`EngineError::Cuda`] for
    /// compile or driver errors.
    pub fn new(device: Arc<CudaDevice>, approved: &ApprovedPlan) -> Result<Self, EngineError> {
        let plan = Sm120Plan::new(&device, approved)?;
        let graph = Arc::clone(approved.graph_arc());
        Ok(Self {
            tensors: PlanTensors::of(&graph, approved.node()),
            node: approved.node_id(),
            device,
            graph,
            config: approved.config().clone(),
            plan,
        })
    }

    /// The table entries of the kernels this plan launches, each once, in launch order (the
    /// preprocess kernel is built from the main kernel's entry; the convert kernel has none):
    /// what a benchmark row must name.
    pub fn kernels(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for name in self.plan.launched().iter().filter_map(|b| b.entry) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// True when the plan launches its backward main kernel on the KV-major grid
    /// (`KV_MAJOR=1`): what a benchmark row records so that a grid-order A/B names its grid.
    pub fn kv_major_grid(&self) -> bool {
        self.plan
            .launched()
            .iter()
            .any(|b| b.defines.contains(&("KV_MAJOR", 1)))
    }

    /// True when the plan's backward main kernel takes its Q and dO tiles by tensor copies
    /// (`TMA_TILES=1`, tma.rs): what a benchmark or sweep row records, since the kernel keeps its
    /// table entry's name either way.
    pub fn tensor_copies(&self) -> bool {
        self.plan
            .launched()
            .iter()
            .any(|b| b.defines.contains(&("TMA_TILES", 1)))
    }

    /// The dQ route (backward plans).
    pub fn route(&self) -> Option<Route> {
        self.plan.route()
    }

    /// Compiles the kernels `approved` names for `compute_{arch}` into `cache` without a
    /// device (warming a kernel cache ahead of time; a cold call measures NVRTC's cost).
    /// Returns how many kernels it compiled or found.
    ///
    /// # Errors
    /// As [`Self::new`], less the driver errors.
    pub fn compile_kernels(
        approved: &ApprovedPlan,
        cache: &PtxCache,
        arch: u32,
    ) -> Result<usize, EngineError> {
        let builds = builds(approved)?;
        for build in builds.all() {
            cache.get_or_compile(build, arch)?;
        }
        Ok(builds.all().len())
    }

    /// A kernel cache in `dir` (memory only when `None`), for [`Self::compile_kernels`].
    pub fn cache(dir: Option<&Path>) -> PtxCache {
        PtxCache::new(dir.map(Path::to_path_buf))
    }

    /// The device addresses of a checked pack's buffers and of the workspace, refusing buffers
    /// the kernels cannot use (other device, misaligned, overlapping an output).
    fn addresses(
        &self,
        pack: &VariantPack,
        binding: &Binding,
        workspace: &Workspace,
    ) -> Result<Addresses, EngineError> {
        let dev = &self.device;
        let ordinal = dev.properties().ordinal;
        let mut at = Addresses::default();
        let problem = self.plan.problem();
        for (port, spec) in problem.tensors() {
            let Some(buffer) = pack.bound(binding, spec.id) else {
                continue; // by-value tensors (the scale) have no buffer
            };
            let device = buffer
                .as_any()
                .downcast_ref::<DeviceBuffer>()
                .filter(|b| b.location() == MemoryLocation::Device(ordinal))
                .ok_or_else(|| not_on_device(&spec.name, buffer.location(), dev))?;
            let ptr = device.device_ptr();
            let align = if rime_analyzer::sm120::VECTOR_PORTS.contains(&port) {
                VECTOR_ALIGN
            } else {
                spec.data_type.size_bytes() as u64
            };
            check_aligned(&spec.name, ptr, align)?;
            if let Some(slot) = at.ports.slot(port) {
                *slot = ptr;
            }
        }
        pack.check_overlaps(&self.graph, binding, &self.tensors.outputs)?;
        if self.plan.workspace_bytes() > 0 {
            at.workspace = match workspace {
                Workspace::Device(w) if w.ordinal() == ordinal => {
                    let span = w.memory().span();
                    if let Some(tensor) = pack.overlapping(&self.graph, binding, &span) {
                        return Err(EngineError::AliasedBuffers {
                            output: "workspace".to_owned(),
                            other: tensor,
                        });
                    }
                    // The regions sit at multiples of 256 bytes from the base and take the
                    // kernels' 16-byte (and 8-byte reduction) accesses: a base off a 16-byte
                    // boundary (a byte view of a framework's tensor) would fault mid-run.
                    let ptr = w.memory().ptr();
                    check_aligned("workspace", ptr, VECTOR_ALIGN)?;
                    ptr
                }
                other => return Err(not_on_device("workspace", other.location(), dev)),
            };
        }
        Ok(at)
    }

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
        self.enqueue_on(&self.device, pack, workspace)
    }

    /// [`Self::enqueue`] on the stream of `device`, a view of the plan's device on another
    /// stream of its context ([`CudaDevice::on_stream`], [`CudaDevice::on_raw_stream`]): the
    /// kernels the plan loaded are launched there as they are, after the same checks. This is
    /// how a framework's current stream runs a plan built once.
    ///
    /// The buffers must stay allocated until the stream has run the kernels: memory a
    /// framework allocates on that same stream (a caching allocator's blocks, which it only
    /// reuses in stream order) is.
    ///
    /// # Errors
    /// [`CudaError::ForeignStream`] when `device` is a view of another context; otherwise as
    /// [`Self::enqueue`].
    pub fn enqueue_on(
        &self,
        device: &CudaDevice,
        pack: &mut VariantPack,
        workspace: &mut Workspace,
    ) -> Result<(), EngineError> {
        if !self.device.same_context(device) {
            return Err(CudaError::ForeignStream {
                ordinal: self.device.properties().ordinal,
            }
            .into());
        }
        check_workspace(self.plan.workspace_bytes(), workspace)?;
        let binding = self.check(pack)?;
        let mut at = self.addresses(pack, &binding, workspace)?;
        let memory = match workspace {
            Workspace::Device(w) => Some(w.memory()),
            _ => None,
        };
        at.ragged = super::ragged::upload(
            device,
            self.plan.problem(),
            &self.graph,
            pack,
            &binding,
            self.plan.workspace(),
            memory,
        )?;
        // SAFETY: `check` proved every buffer is bound, of its tensor's type and long enough
        // for its strided extent; `addresses` that each is a device buffer of this device,
        // aligned, with no output overlapping another buffer or the workspace, which is at
        // least the plan's size. `device` is a view of the plan's context (checked above), so
        // the loaded kernels and the addresses are valid on its stream. The pack and the
        // workspace stay borrowed until return; the caller keeps the buffers alive until the
        // stream has run the kernels (a Drop of a buffer rime allocated is stream-ordered).
        unsafe { self.plan.enqueue(device, &at) }
    }
}

impl Plan for Sm120EnginePlan {
    fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn workspace_size(&self) -> usize {
        self.plan.workspace_bytes()
    }

    fn tensors(&self) -> &PlanTensors {
        &self.tensors
    }

    fn check(&self, pack: &VariantPack) -> Result<Binding, EngineError> {
        pack.check(&self.graph, &self.tensors.all())
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
    /// The node the plan executes.
    pub fn node(&self) -> NodeId {
        self.node
    }
}
