//! Kernel launches. Every launch is `unsafe` (the driver cannot check the parameter block
//! against the kernel's signature); the SAFETY comments say what makes each one sound.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::compile::KernelBuild;
use super::context::CudaDevice;
use super::error::CudaError;
use super::params::{AttnParams, ConvertParams};

/// Launches the forward, preprocess or main backward kernel with `params`.
///
/// # Safety
/// `f` must be the entry point compiled from `build` (so it takes one `AttnParams` by value and
/// uses `build.smem_bytes` of dynamic shared memory), and every pointer in `params` must address
/// a live device allocation of this device holding at least the elements the kernel touches for
/// the dims and strides in `params` (the plan checks buffer extents before calling).
pub(crate) unsafe fn launch_attn(
    dev: &CudaDevice,
    f: &CudaFunction,
    build: &KernelBuild,
    grid: (u32, u32, u32),
    params: &AttnParams,
) -> Result<(), CudaError> {
    let cfg = LaunchConfig {
        grid_dim: grid,
        block_dim: (build.threads, 1, 1),
        shared_mem_bytes: build.smem_bytes,
    };
    let mut args = dev.stream().launch_builder(f);
    args.arg(params);
    // SAFETY: the caller guarantees the kernel signature and the buffers (see # Safety); the
    // parameter block is a `repr(C)` copy of the CUDA struct, read by value at launch.
    unsafe { args.launch(cfg) }.map_err(CudaError::driver(build.file.entry()))?;
    Ok(())
}

/// Launches the convert kernel over a `[d0][d1][d2][d3]` accumulator.
///
/// # Safety
/// `f` must be the convert entry point; `params.src` must hold d0*d1*d2*d3 f32 values and
/// `params.dst` the destination elements its strides address.
pub(crate) unsafe fn launch_convert(
    dev: &CudaDevice,
    f: &CudaFunction,
    build: &KernelBuild,
    d0: u32,
    params: &ConvertParams,
) -> Result<(), CudaError> {
    let plane = params.d2 as u64 * params.d3 as u64;
    let cfg = LaunchConfig {
        grid_dim: (plane.div_ceil(256) as u32, params.d1 as u32, d0),
        block_dim: (build.threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = dev.stream().launch_builder(f);
    args.arg(params);
    // SAFETY: see # Safety; the grid covers exactly d0 x d1 x ceil(d2*d3/256) blocks and the
    // kernel returns for elements past d2*d3.
    unsafe { args.launch(cfg) }.map_err(CudaError::driver("rime_convert"))?;
    Ok(())
}
