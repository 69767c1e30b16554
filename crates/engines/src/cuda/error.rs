//! Errors of the CUDA side of the engines crate.

use cudarc::driver::DriverError;

/// Why the CUDA engine could not do what was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudaError {
    // The message of each variant carries its cause, so no variant exposes it again as
    // `source()`: anyhow's `{:#}` would print it twice.
    /// CUDA cannot be used on this machine (no driver library, no device, no NVRTC).
    #[error("CUDA unavailable: {0}")]
    Unavailable(crate::cuda::probe::Unavailable),
    /// A CUDA driver call failed.
    #[error("CUDA driver call failed during {during}: {error}")]
    Driver {
        /// What the engine was doing.
        during: &'static str,
        /// The driver's error.
        error: DriverError,
    },
    /// A device allocation failed for lack of memory.
    #[error(
        "out of device memory allocating {what}: {needed} bytes needed, {free} of {total} bytes free"
    )]
    OutOfMemory {
        /// What was being allocated (tensor, workspace, guard region...).
        what: String,
        /// Bytes asked for.
        needed: u64,
        /// Free device memory right after the failure (cuMemGetInfo).
        free: u64,
        /// Total device memory.
        total: u64,
    },
    /// NVRTC rejected a kernel; the options and the full compiler log are kept.
    #[error("NVRTC failed to compile {kernel} with options {options:?}:\n{log}")]
    Compile {
        /// Kernel file name.
        kernel: &'static str,
        /// Every option passed to NVRTC (defines included).
        options: Vec<String>,
        /// NVRTC's full program log.
        log: String,
    },
    /// NVRTC failed outside compilation proper (program creation, PTX retrieval).
    #[error("NVRTC failed during {during} of {kernel}: {detail}")]
    Nvrtc {
        /// Kernel file name.
        kernel: &'static str,
        /// Which NVRTC step failed.
        during: &'static str,
        /// NVRTC's error code, rendered.
        detail: String,
    },
    /// A device buffer was asked for a data type the engine does not read (f64, bool).
    #[error("device buffers hold f16, bf16, f32, i32 or i64 elements, not {data_type}")]
    UnsupportedDataType {
        /// The type asked for.
        data_type: &'static str,
    },
    /// A variant-pack buffer is not a device buffer of this engine's device.
    #[error("tensor '{tensor}' must be a device buffer on device {ordinal} (it is in {location} memory)")]
    NotOnDevice {
        /// Tensor name.
        tensor: String,
        /// The engine's device.
        ordinal: usize,
        /// Where the buffer is.
        location: String,
    },
    /// A stream handed to rime belongs to another context than the device's primary context
    /// (another device, or a context made with `cuCtxCreate`), or a plan was asked to run on a
    /// view of another device.
    #[error("the stream does not belong to device {ordinal}'s primary context, where the plan's kernels are loaded")]
    ForeignStream {
        /// The device whose context the stream must belong to.
        ordinal: usize,
    },
    /// A range of device memory is smaller than what was asked of it.
    #[error("{name}: {actual} bytes of device memory, {needed} needed")]
    BufferSize {
        /// What was asked (a slice, an upload, a buffer of so many elements).
        name: String,
        /// Bytes needed.
        needed: usize,
        /// Bytes there are.
        actual: usize,
    },
}

impl CudaError {
    /// Wraps a driver error with what the engine was doing.
    pub(crate) fn driver(during: &'static str) -> impl FnOnce(DriverError) -> Self {
        move |error| Self::Driver { during, error }
    }
}

impl From<crate::cuda::probe::Unavailable> for CudaError {
    fn from(u: crate::cuda::probe::Unavailable) -> Self {
        Self::Unavailable(u)
    }
}
