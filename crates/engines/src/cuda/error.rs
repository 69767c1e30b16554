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
    /// Bytes around a tensor or the workspace changed during execution: a write out of bounds.
    #[error(
        "guard zone of {tensor} overwritten: first changed byte at offset {offset} from the \
         tensor's start ({side} it), 0x{expected:02x} -> 0x{found:02x}"
    )]
    GuardOverwritten {
        /// The tensor (or `workspace`) whose guard changed.
        tensor: String,
        /// Byte offset of the first changed byte from the tensor's first byte (negative: before).
        offset: i64,
        /// `before` or `after`.
        side: &'static str,
        /// The guard pattern byte.
        expected: u8,
        /// What was found there.
        found: u8,
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
    /// No compiled kernel configuration covers these head dims.
    #[error("no sm120 kernel configuration for head dims {head_dim_qk}/{head_dim_v}")]
    NoKernelConfig {
        /// Dqk asked for.
        head_dim_qk: usize,
        /// Dv asked for.
        head_dim_v: usize,
    },
    /// The problem is outside what the kernels implement.
    #[error("problem not supported by the sm120 kernels: {what}")]
    Unsupported {
        /// Which constraint failed.
        what: &'static str,
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
    /// A buffer handed to the engine has the wrong number of elements.
    #[error("buffer {name} holds {actual} elements, the problem needs at least {needed}")]
    BufferSize {
        /// Buffer (port) name.
        name: &'static str,
        /// Elements the problem addresses.
        needed: usize,
        /// Elements the buffer holds.
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
