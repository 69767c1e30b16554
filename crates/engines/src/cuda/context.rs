//! A CUDA context and stream per device, the device's properties, and loaded kernels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute;
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

/// One device: its context, the stream rime works on, and the kernels loaded so far.
#[derive(Debug)]
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    props: DeviceProperties,
    cache: Arc<PtxCache>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

impl CudaDevice {
    /// Opens device `ordinal` after probing (never panics without CUDA).
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
            ctx,
            stream,
            props,
            cache,
            functions: Mutex::new(HashMap::new()),
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

    /// The device's properties as read when opened (free memory: see [`Self::free_memory`]).
    pub fn properties(&self) -> &DeviceProperties {
        &self.props
    }

    /// Free device memory now (bytes).
    ///
    /// # Errors
    /// A driver error.
    pub fn free_memory(&self) -> Result<u64, CudaError> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        Ok(free as u64)
    }

    /// Free and total device memory now (bytes).
    ///
    /// # Errors
    /// A driver error.
    pub fn memory_info(&self) -> Result<(u64, u64), CudaError> {
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        Ok((free as u64, total as u64))
    }

    /// The stream every launch of this device goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The kernel for `build`, compiled (through the cache) for this device and loaded once.
    ///
    /// # Errors
    /// Compile errors (with options and log) or driver errors.
    pub fn function(&self, build: &KernelBuild) -> Result<CudaFunction, CudaError> {
        let (key, ptx) = self.cache.get_or_compile(build, self.props.arch())?;
        let mut map = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = map.get(&key) {
            return Ok(f.clone());
        }
        let module = self
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

    /// Waits for all work on the stream.
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
    Ok(rime_analyzer::Target::from_device(
        &rime_analyzer::DeviceProperties {
            name: p.name.clone(),
            sm: p.arch(),
            sm_count: p.multiprocessors,
            smem_per_block: u64::from(p.smem_per_block_optin),
            memory_bytes: p.total_memory,
            free_memory_bytes: p.free_memory,
        },
    ))
}
