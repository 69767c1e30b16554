//! A device: its primary context, the stream rime enqueues on (its own, or one borrowed from
//! a framework), the device's properties, and the kernels loaded in the context.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUcontext, CUdevice_attribute, CUstream};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};

use super::compile::{KernelBuild, PtxCache};
use super::error::CudaError;
use super::probe::{probe, CudaStatus};

/// What the engine and the analyzer's `auto` target need to know about a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Number of multiprocessors.
    pub multiprocessors: u32,
    /// Opt-in maximum of shared memory per block (bytes).
    pub smem_per_block_optin: u32,
    /// Total device memory (bytes).
    pub total_memory: u64,
    /// Free device memory when read (bytes).
    pub free_memory: u64,
}

impl DeviceProperties {
    /// The NVRTC virtual architecture number of this device, e.g. 90 or 120.
    pub fn arch(&self) -> u32 {
        (self.compute_capability.0 * 10 + self.compute_capability.1) as u32
    }
}

/// What every view of one device shares: the primary context, the properties read when it was
/// opened, the kernel cache and the kernels loaded so far.
#[derive(Debug)]
struct Shared {
    ctx: Arc<CudaContext>,
    props: DeviceProperties,
    cache: Arc<PtxCache>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

/// One device: its primary context, the stream rime enqueues on, and the kernels loaded so far.
///
/// The context is the device's *primary* context, the one the CUDA runtime (and so PyTorch)
/// uses, so memory allocated by a framework on the same device can be wrapped
/// ([`DeviceMemory::from_raw`](super::DeviceMemory::from_raw)) and used in place.
///
/// A `CudaDevice` is a view: [`Self::on_stream`] and [`Self::on_raw_stream`] give the same
/// device on another stream of its context (a framework's current stream), sharing the
/// context, the kernel cache and every loaded kernel, so a plan built once runs on any of
/// them ([`Sm120EnginePlan::enqueue_on`](super::Sm120EnginePlan::enqueue_on)). Clones are
/// cheap and share everything, the stream included.
#[derive(Debug, Clone)]
pub struct CudaDevice {
    shared: Arc<Shared>,
    stream: Arc<CudaStream>,
}

impl CudaDevice {
    /// Opens device `ordinal` after probing (never panics without CUDA): retains its primary
    /// context and creates a stream of rime's own.
    ///
    /// # Errors
    /// [`CudaError::Unavailable`] with the reason when CUDA cannot be used, or a driver error.
    pub fn open(ordinal: usize, cache: Arc<PtxCache>) -> Result<Self, CudaError> {
        if let CudaStatus::Unavailable(why) = probe() {
            return Err(why.into());
        }
        let ctx = CudaContext::new(ordinal).map_err(CudaError::driver("context creation"))?;
        let stream = ctx
            .new_stream()
            .map_err(CudaError::driver("stream creation"))?;
        let props = read_properties(&ctx)?;
        Ok(Self {
            shared: Arc::new(Shared {
                ctx,
                props,
                cache,
                functions: Mutex::new(HashMap::new()),
            }),
            stream,
        })
    }

    /// Opens device `ordinal` with the default kernel cache (memory, and on disk in
    /// [`PtxCache::default_dir`]).
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_default(ordinal: usize) -> Result<Self, CudaError> {
        Self::open(ordinal, Arc::new(PtxCache::new(PtxCache::default_dir())))
    }

    /// This device on `stream`, a stream of its context made with cudarc: the same context,
    /// kernel cache and loaded kernels; every copy, fill and launch through the returned view
    /// goes to `stream`.
    ///
    /// # Errors
    /// [`CudaError::ForeignStream`] when `stream` belongs to another context.
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> Result<Self, CudaError> {
        if **stream.context() != *self.shared.ctx {
            return Err(CudaError::ForeignStream {
                ordinal: self.shared.props.ordinal,
            });
        }
        Ok(Self {
            shared: Arc::clone(&self.shared),
            stream,
        })
    }

    /// This device on a stream made elsewhere — PyTorch's current stream, a candle or burn
    /// stream — given by its raw handle: as [`Self::on_stream`], and rime's work on it is
    /// ordered with the owner's. Dropping the view never destroys the stream.
    ///
    /// The driver is asked which context the stream belongs to (`cuStreamGetCtx`), and a
    /// stream of another context (another device, or a context that is not the primary one)
    /// is refused.
    ///
    /// # Safety
    /// `stream` must be the null (legacy default) stream, the per-thread default stream, or a
    /// live stream created in this device's primary context, and must stay alive (not be
    /// destroyed) while the returned view, or anything holding it, may enqueue work: engines,
    /// plans, device memory operations. A destroyed or made-up handle cannot be detected.
    ///
    /// # Errors
    /// [`CudaError::ForeignStream`]; a driver error.
    pub unsafe fn on_raw_stream(&self, stream: CUstream) -> Result<Self, CudaError> {
        let ctx = &self.shared.ctx;
        // The null and per-thread handles mean the calling thread's current context.
        ctx.bind_to_thread()
            .map_err(CudaError::driver("context bind"))?;
        let mut owner: CUcontext = std::ptr::null_mut();
        // SAFETY: the caller promises `stream` is a live stream handle (or a default-stream
        // handle); `owner` is a valid place for the driver to write the context to.
        unsafe { cudarc::driver::sys::cuStreamGetCtx(stream, &mut owner) }
            .result()
            .map_err(CudaError::driver("cuStreamGetCtx"))?;
        if owner != ctx.cu_ctx() {
            return Err(CudaError::ForeignStream {
                ordinal: self.shared.props.ordinal,
            });
        }
        // SAFETY: `stream` belongs to this context (checked above) and the caller keeps it
        // alive while the view may use it; the wrapper never destroys it.
        let stream = unsafe { ctx.wrap_borrowed_stream(stream) };
        Ok(Self {
            shared: Arc::clone(&self.shared),
            stream,
        })
    }

    /// True when both views are of the same context: kernels loaded through one run on the
    /// streams of the other.
    pub fn same_context(&self, other: &CudaDevice) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared) || *self.shared.ctx == *other.shared.ctx
    }

    /// The device's primary context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }

    /// The device's properties as read when opened (free memory: see [`Self::free_memory`]).
    pub fn properties(&self) -> &DeviceProperties {
        &self.shared.props
    }

    /// Free device memory now (bytes).
    ///
    /// # Errors
    /// A driver error.
    pub fn free_memory(&self) -> Result<u64, CudaError> {
        Ok(self.memory_info()?.0)
    }

    /// Free and total device memory now (bytes).
    ///
    /// # Errors
    /// A driver error.
    pub fn memory_info(&self) -> Result<(u64, u64), CudaError> {
        let (free, total) = self
            .shared
            .ctx
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        Ok((free as u64, total as u64))
    }

    /// The analyzer's `auto` target for this device: its properties, with the free memory read
    /// now.
    ///
    /// # Errors
    /// A driver error.
    pub fn target(&self) -> Result<rime_analyzer::Target, CudaError> {
        Ok(target_of(self.properties(), self.free_memory()?))
    }

    /// The stream every copy, fill and launch of this view goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The kernel for `build`, compiled (through the cache) for this device and loaded once
    /// per context (every view shares it).
    ///
    /// # Errors
    /// Compile errors (with options and log) or driver errors.
    pub fn function(&self, build: &KernelBuild) -> Result<CudaFunction, CudaError> {
        let shared = &self.shared;
        let (key, ptx) = shared.cache.get_or_compile(build, shared.props.arch())?;
        let mut map = shared.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = map.get(&key) {
            return Ok(f.clone());
        }
        let module = shared
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx.to_string()))
            .map_err(CudaError::driver("module load"))?;
        let f = module
            .load_function(build.file.entry())
            .map_err(CudaError::driver("function lookup"))?;
        if build.smem_bytes > 48 * 1024 {
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                build.smem_bytes as i32,
            )
            .map_err(CudaError::driver("shared-memory opt-in"))?;
        }
        map.insert(key, f.clone());
        Ok(f)
    }

    /// Waits for all work on this view's stream.
    ///
    /// # Errors
    /// A driver error (including an earlier kernel's failure).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .map_err(CudaError::driver("stream synchronize"))
    }
}

fn read_properties(ctx: &Arc<CudaContext>) -> Result<DeviceProperties, CudaError> {
    let attr = |a| {
        ctx.attribute(a)
            .map_err(CudaError::driver("device attribute"))
    };
    let (free, total) = ctx
        .mem_get_info()
        .map_err(CudaError::driver("cuMemGetInfo"))?;
    Ok(DeviceProperties {
        ordinal: ctx.ordinal(),
        name: ctx.name().map_err(CudaError::driver("device name"))?,
        compute_capability: (
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        multiprocessors: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        smem_per_block_optin: attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as u32,
        total_memory: total as u64,
        free_memory: free as u64,
    })
}

/// Properties of device `ordinal` for the analyzer's `auto` target.
///
/// # Errors
/// [`CudaError::Unavailable`] with the reason, or a driver error.
pub fn auto_properties(ordinal: usize) -> Result<DeviceProperties, CudaError> {
    if let CudaStatus::Unavailable(why) = probe() {
        return Err(why.into());
    }
    let ctx = CudaContext::new(ordinal).map_err(CudaError::driver("context creation"))?;
    read_properties(&ctx)
}

/// The analyzer's `auto` target for device `ordinal`: its properties and free memory read now.
///
/// # Errors
/// [`CudaError::Unavailable`] with the reason, or a driver error.
pub fn auto_target(ordinal: usize) -> Result<rime_analyzer::Target, CudaError> {
    let p = auto_properties(ordinal)?;
    Ok(target_of(&p, p.free_memory))
}

/// The analyzer's target for a device with properties `p` and `free` bytes free.
fn target_of(p: &DeviceProperties, free: u64) -> rime_analyzer::Target {
    rime_analyzer::Target::from_device(&rime_analyzer::DeviceProperties {
        name: p.name.clone(),
        sm: p.arch(),
        sm_count: p.multiprocessors,
        smem_per_block: u64::from(p.smem_per_block_optin),
        memory_bytes: p.total_memory,
        free_memory_bytes: free,
    })
}
