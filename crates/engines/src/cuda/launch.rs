//! Kernel launches. Every launch is `unsafe` (the driver cannot check the parameter block
//! against the kernel's signature); the SAFETY comments say what makes each one sound.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::abi::{AttnParams, ConvertParams};
use super::context::CudaDevice;
use super::error::CudaError;
use super::plan::Loaded;

/// Launches a forward, preprocess, main backward or dQ GEMM kernel with `params`.
///
/// # Safety
/// `kernel` must be an `AttnParams` kernel (its function compiled from its build, using
/// `build.smem_bytes` of dynamic shared memory), and every pointer in `params` must address a
/// live device allocation of this device holding at least the elements the kernel touches for
/// the dims and strides in `params`.
pub(crate) unsafe fn launch_attn(
    dev: &CudaDevice,
    kernel: &Loaded,
    grid: (u32, u32, u32),
    params: &AttnParams,
) -> Result<(), CudaError> {
    let cfg = LaunchConfig {
        grid_dim: grid,
        block_dim: (kernel.build.threads, 1, 1),
        shared_mem_bytes: kernel.build.smem_bytes,
    };
    let mut args = dev.stream().launch_builder(&kernel.function);
    args.arg(params);
    // SAFETY: the caller guarantees the kernel signature and the buffers (see # Safety); the
    // parameter block is a `repr(C)` copy of the CUDA struct, read by value at launch.
    unsafe { args.launch(cfg) }.map_err(CudaError::driver(kernel.build.file.entry()))?;
    Ok(())
}

/// Launches the convert kernel over a `[d0][d1][plane]` accumulator on `grid`.
///
/// # Safety
/// `kernel` must be the convert kernel; `params.src` must hold d0 * d1 * plane f32 values
/// (d0 = `grid.2`, d1 = `grid.1`) and `params.dst` the destination elements its strides
/// address.
pub(crate) unsafe fn launch_convert(
    dev: &CudaDevice,
    kernel: &Loaded,
    grid: (u32, u32, u32),
    params: &ConvertParams,
) -> Result<(), CudaError> {
    let cfg = LaunchConfig {
        grid_dim: grid,
        block_dim: (kernel.build.threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = dev.stream().launch_builder(&kernel.function);
    args.arg(params);
    // SAFETY: see # Safety; the kernel walks each (d0, d1) plane in grid-stride steps and
    // touches no element past it.
    unsafe { args.launch(cfg) }.map_err(CudaError::driver("rime_convert"))?;
    Ok(())
}
