//! A built plan of one node, and how it runs on Python tensors: the CPU engine on copies of
//! host arrays, or the sm120 engine on CUDA tensors in place — device memory wrapped where it
//! is, the workspace from PyTorch's allocator, the kernels enqueued on PyTorch's current
//! stream.

use std::any::Any;
use std::sync::Arc;

use pyo3::prelude::*;
use rime_analyzer::ApprovedPlan;
use rime_engines::cpu::{CpuPlan, Precision};
use rime_engines::cuda::{
    CUstream, CudaDevice, DeviceBuffer, DeviceMemory, DeviceWorkspace, Sm120EnginePlan,
};
use rime_engines::{Plan, TensorKey, VariantPack, Workspace};
use rime_graph::{Graph, TensorId};

use crate::array::{Place, TensorArg, WorkspaceArg};
use crate::device;
use crate::errors::{engine_error, engine_failure, tensor_error};
use crate::hooks;
use crate::host_copy::HostCopy;

/// The engine plan of one node.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per cached plan: the size difference costs nothing
pub enum Runnable {
    /// The CPU reference engine (f32 arithmetic on the graph's io types).
    Cpu(CpuPlan),
    /// The sm120 engine on a CUDA device.
    Sm120 {
        /// The plan, its kernels loaded.
        plan: Sm120EnginePlan,
        /// The device it was built on (streams are views of it).
        device: Arc<CudaDevice>,
        /// Its ordinal.
        ordinal: usize,
    },
}

/// A tensor bound to a graph tensor for one execution.
pub type Bound<'a> = (TensorId, &'a TensorArg);

impl Runnable {
    /// Builds the plan of `approved` for the engine of `place` (for sm120: compiles, or finds
    /// in the kernel cache, and loads exactly the kernels it names).
    ///
    /// # Errors
    /// `EngineError` for build failures (CUDA unavailable, compilation, driver).
    pub fn build(py: Python<'_>, approved: &ApprovedPlan, place: Place) -> PyResult<Self> {
        match place {
            Place::Host => CpuPlan::new(approved, Precision::F32)
                .map(Runnable::Cpu)
                .map_err(|e| engine_error(py, &e)),
            Place::Cuda(ordinal) => {
                let device = device::cuda(py, ordinal)?;
                let plan = py
                    .detach(|| Sm120EnginePlan::new(Arc::clone(&device), approved))
                    .map_err(|e| engine_error(py, &e))?;
                Ok(Runnable::Sm120 {
                    plan,
                    device,
                    ordinal,
                })
            }
        }
    }

    /// The plan, as the engines' trait.
    pub fn plan(&self) -> &dyn Plan {
        match self {
            Runnable::Cpu(p) => p,
            Runnable::Sm120 { plan, .. } => plan,
        }
    }

    /// Where its tensors must be.
    pub fn place(&self) -> Place {
        match self {
            Runnable::Cpu(_) => Place::Host,
            Runnable::Sm120 { ordinal, .. } => Place::Cuda(*ordinal),
        }
    }

    /// Runs the node with `bound` (every buffered tensor of the node) and, for a plan that
    /// needs one, `workspace` (else one is allocated). CUDA work is enqueued on PyTorch's
    /// current stream and not waited for.
    ///
    /// # Errors
    /// `TensorError` naming a tensor on the wrong device, of the wrong type or size,
    /// misaligned, read-only, or an output overlapping another buffer; `EngineError` for
    /// engine failures. Nothing is written when a check fails.
    pub fn run(
        &self,
        py: Python<'_>,
        graph: &Graph,
        bound: &[Bound<'_>],
        workspace: Option<&WorkspaceArg>,
    ) -> PyResult<()> {
        let mut staged = self.stage(py, graph, bound, workspace)?;
        self.launch(py, &mut staged)?;
        self.finish(py, &staged, bound)
    }

    /// Everything an execution needs, checked and wrapped: the variant pack over the tensors
    /// (CPU: copies; CUDA: the tensors' memory), the workspace and, on CUDA, the device on
    /// PyTorch's current stream.
    ///
    /// # Errors
    /// As [`Self::run`].
    pub fn stage(
        &self,
        py: Python<'_>,
        graph: &Graph,
        bound: &[Bound<'_>],
        workspace: Option<&WorkspaceArg>,
    ) -> PyResult<Staged> {
        let place = self.place();
        if let Some((_, wrong)) = bound.iter().find(|(_, a)| a.place != place) {
            return Err(tensor_error(
                py,
                &wrong.name,
                format!("is on {}; the plan runs on {place}", wrong.place),
            ));
        }
        let outputs = &self.plan().tensors().outputs;
        if let Some((_, ro)) = bound
            .iter()
            .find(|(id, a)| outputs.contains(id) && !a.writable)
        {
            return Err(tensor_error(py, &ro.name, "is an output but read-only"));
        }
        match self {
            Runnable::Cpu(plan) => stage_cpu(py, plan, graph, bound),
            Runnable::Sm120 {
                plan,
                device,
                ordinal,
            } => stage_sm120(py, plan, device, *ordinal, bound, workspace),
        }
    }

    /// Executes a staged run: the CPU engine computes (the GIL released); the sm120 engine
    /// checks the pack again and enqueues its kernels.
    ///
    /// # Errors
    /// The engine's refusals and failures.
    pub fn launch(&self, py: Python<'_>, staged: &mut Staged) -> PyResult<()> {
        let Staged {
            pack,
            workspace,
            stream,
        } = staged;
        match (self, stream) {
            (Runnable::Cpu(plan), _) => py
                .detach(|| plan.execute(pack, workspace))
                .map_err(|e| engine_error(py, &e)),
            (Runnable::Sm120 { plan, .. }, Some(on_stream)) => plan
                .enqueue_on(on_stream, pack, workspace)
                .map_err(|e| engine_error(py, &e)),
            (Runnable::Sm120 { .. }, None) => Err(engine_failure(py, "staged without a stream")),
        }
    }

    /// After [`Self::launch`]: the CPU engine's outputs written back into the arrays of
    /// `bound` (the sm120 engine wrote them in place).
    ///
    /// # Errors
    /// `TensorError` for an array that cannot take them.
    pub fn finish(&self, py: Python<'_>, staged: &Staged, bound: &[Bound<'_>]) -> PyResult<()> {
        if let Runnable::Sm120 { .. } = self {
            return Ok(());
        }
        let outputs = &self.plan().tensors().outputs;
        for (id, arg) in bound.iter().filter(|(id, _)| outputs.contains(id)) {
            let copy = staged
                .pack
                .get(&TensorKey::Id(*id))
                .and_then(|b| b.as_any().downcast_ref::<HostCopy>())
                .ok_or_else(|| {
                    engine_failure(py, format!("output '{}' lost its buffer", arg.name))
                })?;
            copy.write_back(py, arg)?;
        }
        Ok(())
    }
}

/// A checked, wrapped execution (see [`Runnable::stage`]).
#[derive(Debug)]
pub struct Staged {
    pack: VariantPack,
    workspace: Workspace,
    /// The device on PyTorch's current stream (sm120 only).
    stream: Option<CudaDevice>,
}

impl Staged {
    /// Waits for the staged stream (nothing to wait for on the CPU).
    ///
    /// # Errors
    /// A driver error.
    pub fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        match &self.stream {
            Some(dev) => dev.synchronize().map_err(|e| engine_failure(py, e)),
            None => Ok(()),
        }
    }
}

fn stage_cpu(
    py: Python<'_>,
    plan: &CpuPlan,
    graph: &Graph,
    bound: &[Bound<'_>],
) -> PyResult<Staged> {
    let mut pack = VariantPack::new();
    for (id, arg) in bound {
        pack.insert(*id, Box::new(HostCopy::of(py, arg)?));
    }
    let binding = plan.check(&pack).map_err(|e| engine_error(py, &e))?;
    // The copies carry the arrays' own address ranges: an output sharing memory with another
    // array is refused here, as the sm120 engine refuses it.
    pack.check_overlaps(graph, &binding, &plan.tensors().outputs)
        .map_err(|e| engine_error(py, &e))?;
    Ok(Staged {
        pack,
        workspace: Workspace::host(plan.workspace_size()),
        stream: None,
    })
}

/// Keeps a Python object (a tensor) alive as long as rime's handles to its memory.
fn keep_alive(py: Python<'_>, object: &Py<PyAny>) -> Option<Arc<dyn Any + Send + Sync>> {
    Some(Arc::new(object.clone_ref(py)))
}

fn stage_sm120(
    py: Python<'_>,
    plan: &Sm120EnginePlan,
    device: &CudaDevice,
    ordinal: usize,
    bound: &[Bound<'_>],
    workspace: Option<&WorkspaceArg>,
) -> PyResult<Staged> {
    let mut pack = VariantPack::new();
    for (id, arg) in bound {
        // SAFETY: `arg` is a CUDA tensor of device `ordinal` (checked by `stage` against the
        // plan's place), allocated by PyTorch in that device's primary context — the one
        // rime's device retains — and its elements lie in `ptr .. ptr + bytes`. The tensor is
        // kept alive with the handle; once the call returns, PyTorch's caching allocator only
        // reuses its memory in the order of the stream the kernels are enqueued on (its
        // current stream), as for any PyTorch operation.
        let memory = unsafe {
            DeviceMemory::from_raw(ordinal, arg.ptr, arg.bytes(), keep_alive(py, &arg.object))
        };
        let buffer = DeviceBuffer::new(arg.data_type, arg.span, memory)
            .map_err(|e| tensor_error(py, &arg.name, e))?;
        pack.insert(*id, Box::new(buffer));
    }
    let needed = plan.workspace_size();
    let allocated;
    let workspace = if needed == 0 {
        Workspace::host(0)
    } else {
        let given = match workspace {
            Some(w) => w,
            None => {
                allocated = hooks::cuda_workspace(py, needed, ordinal)?;
                &allocated
            }
        };
        if given.place != Place::Cuda(ordinal) {
            return Err(tensor_error(
                py,
                "workspace",
                format!("is on {}; the plan runs on cuda:{ordinal}", given.place),
            ));
        }
        // SAFETY: as for the tensors above: a live CUDA tensor of this device, `bytes` long,
        // kept alive with the handle, reused by PyTorch only in stream order.
        let memory = unsafe {
            DeviceMemory::from_raw(
                ordinal,
                given.ptr,
                given.bytes,
                keep_alive(py, &given.object),
            )
        };
        Workspace::Device(DeviceWorkspace::over(memory))
    };
    let stream = hooks::cuda_stream(py, ordinal)?;
    // SAFETY: `stream` is PyTorch's current stream of `cuda:ordinal` (or its null default
    // stream): a stream of the device's primary context (the driver confirms it) that PyTorch
    // never destroys (its streams come from pools kept for the process). The view lives in
    // the staged run, which the caller drops before returning to Python.
    let on_stream =
        unsafe { device.on_raw_stream(stream as CUstream) }.map_err(|e| engine_failure(py, e))?;
    Ok(Staged {
        pack,
        workspace,
        stream: Some(on_stream),
    })
}
