//! Kernel launches. Every launch is `unsafe` (the driver cannot check the parameter block
//! against the kernel's signature); the SAFETY comments say what makes each one sound.
//!
//! On sm_90 and newer every launch is a programmatic dependent launch (the
//! `PROGRAMMATIC_STREAM_SERIALIZATION` attribute): the driver may schedule a kernel's blocks
//! while the previous kernel in the stream is still running, and each kernel's first statement,
//! `pdl_enter` (common.cuh), waits for that kernel to complete before touching global memory.
//! The backward is three to five short-lived grids in a row; this hides the launch gap and the
//! block start-up between them (the cuDNN frontend's SM120 backward, FROST, launches its chain
//! the same way by default).

use std::ffi::c_void;

use cudarc::driver::sys;

use super::abi::{AttnParams, ConvertParams, TmaMaps};
use super::context::CudaDevice;
use super::error::CudaError;
use super::plan::Loaded;

/// The first architecture with `griddepcontrol` (programmatic dependent launch).
const PDL_ARCH: u32 = 90;

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
    // SAFETY: the caller guarantees the kernel signature and the buffers (see # Safety).
    unsafe { launch_one(dev, kernel, grid, params) }
}

/// Launches a main backward kernel built with tensor copies (`TMA_TILES`) with `params` and
/// the tensor maps of its streamed tiles as its second parameter.
///
/// # Safety
/// As [`launch_attn`], and `kernel` must take `(AttnParams, TmaMaps)`; the maps must describe
/// tensors within the allocations `params` addresses (tma.rs encodes them from `params`).
pub(crate) unsafe fn launch_attn_with_maps(
    dev: &CudaDevice,
    kernel: &Loaded,
    grid: (u32, u32, u32),
    params: &AttnParams,
    maps: &TmaMaps,
) -> Result<(), CudaError> {
    let args = [arg(params), arg(maps)];
    // SAFETY: the caller guarantees the kernel signature, the buffers and the maps.
    unsafe { launch_args(dev, kernel, grid, &args) }
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
    // SAFETY: see # Safety; the kernel walks each (d0, d1) plane in grid-stride steps and
    // touches no element past it.
    unsafe { launch_one(dev, kernel, grid, params) }
}

/// The launch argument of a by-value kernel parameter: a pointer to it.
fn arg<P>(p: &P) -> *mut c_void {
    std::ptr::from_ref(p).cast_mut().cast::<c_void>()
}

/// Enqueues `kernel` with `params` as its one by-value argument (see [`launch_args`]).
///
/// # Safety
/// `P` must be the `repr(C)` struct the kernel takes by value, and the kernel must need no
/// more dynamic shared memory than its build was loaded with.
unsafe fn launch_one<P>(
    dev: &CudaDevice,
    kernel: &Loaded,
    grid: (u32, u32, u32),
    params: &P,
) -> Result<(), CudaError> {
    // SAFETY: as the caller guarantees (see # Safety).
    unsafe { launch_args(dev, kernel, grid, &[arg(params)]) }
}

/// Enqueues `kernel` on `dev`'s stream with `args` (a pointer to each by-value parameter, in
/// order) and its build's dynamic shared memory, as a programmatic dependent launch where the
/// device has it (see the module docs). Errors name the kernel's entry point.
///
/// # Safety
/// `args` must point at the kernel's parameters, each the `repr(C)` value it takes, alive for
/// the call; the kernel must need no more dynamic shared memory than its build was loaded with.
unsafe fn launch_args(
    dev: &CudaDevice,
    kernel: &Loaded,
    grid: (u32, u32, u32),
    args: &[*mut c_void],
) -> Result<(), CudaError> {
    let name = kernel.build.file.entry();
    dev.context()
        .bind_to_thread()
        .map_err(CudaError::driver(name))?;
    let pdl = dev.properties().arch() >= PDL_ARCH;
    // SAFETY: a plain-old-data union; every field zero is a valid value.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: kernel.build.threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: kernel.build.smem_bytes,
        hStream: dev.stream().cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(pdl),
    };
    let mut args = args.to_vec();
    // SAFETY: the function is live while `kernel` is (its module is held by the device); the
    // argument array holds one pointer per parameter to values that outlive the call (the
    // driver copies the parameter block at launch); the caller vouches for them and the shared
    // memory.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            kernel.function.cu_function(),
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(CudaError::driver(name))
}
