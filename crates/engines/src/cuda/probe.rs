//! Finding out, without panicking, whether CUDA can be used here.
//!
//! cudarc loads the driver and NVRTC libraries lazily and panics when a symbol is missing, so
//! every check first asks whether the library can be opened at all, and the whole probe runs
//! under `catch_unwind` as a last guard. NVRTC must be CUDA 13's, not merely present
//! ([`super::nvrtc_probe`]): a machine without CUDA gets a reason, never a crash.

use std::fmt;

use super::nvrtc_probe::{nvrtc_status, NVRTC_MAJOR_NEEDED as NEEDED};

/// Why CUDA cannot be used on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// libcuda (the driver library) could not be opened.
    NoDriverLibrary,
    /// `cuInit` failed (driver present but not usable: no kernel module, wrong version).
    DriverInit(String),
    /// The driver reports no CUDA device.
    NoDevice,
    /// libnvrtc could not be opened (needed to compile the kernels at plan build).
    NoNvrtcLibrary,
    /// An NVRTC opened, but not CUDA 13's (the one cudarc would load is named).
    WrongNvrtcVersion {
        /// The library cudarc would load, e.g. `libnvrtc.so.12`.
        library: String,
        /// What its `nvrtcVersion` reports (`None`: it could not say).
        version: Option<(i32, i32)>,
        /// The other NVRTC libraries that opened, with their versions.
        also_found: Vec<String>,
    },
    /// A CUDA library panicked while being probed (for example a missing symbol).
    ProbePanicked(String),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDriverLibrary => write!(
                f,
                "the CUDA driver library (libcuda) was not found; install an NVIDIA driver"
            ),
            Self::DriverInit(e) => write!(f, "cuInit failed: {e}"),
            Self::NoDevice => write!(f, "the CUDA driver reports no device"),
            Self::NoNvrtcLibrary => write!(
                f,
                "NVRTC (libnvrtc.so.13, or any other version) was not found; install the CUDA 13 toolkit or \
                 `pip install nvidia-cuda-nvrtc==13.0.88` and add its lib directory to \
                 LD_LIBRARY_PATH"
            ),
            Self::WrongNvrtcVersion {
                library,
                version,
                also_found,
            } => {
                match version {
                    Some((major, minor)) => write!(f, "NVRTC {major}.{minor} ({library})")?,
                    None => write!(f, "an NVRTC of unknown version ({library})")?,
                }
                write!(
                    f,
                    " was found, but rime needs the CUDA {NEEDED} NVRTC (libnvrtc.so.{NEEDED}); \
                     install the CUDA {NEEDED} toolkit or `pip install nvidia-cuda-nvrtc==13.0.88` \
                     and put its lib directory first on LD_LIBRARY_PATH"
                )?;
                if !also_found.is_empty() {
                    write!(f, " (also found: {})", also_found.join(", "))?;
                }
                Ok(())
            }
            Self::ProbePanicked(e) => write!(f, "a CUDA library failed while probing: {e}"),
        }
    }
}

impl std::error::Error for Unavailable {}

/// Result of probing: how many devices there are, or why CUDA cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaStatus {
    /// The driver works, NVRTC is present, and this many devices exist.
    Available {
        /// Number of CUDA devices.
        devices: usize,
    },
    /// CUDA cannot be used; the engine falls back to the CPU.
    Unavailable(Unavailable),
}

/// True when the CUDA 13 NVRTC is the one cudarc loads (compiling needs no GPU); see
/// the `nvrtc_probe` module for why it is not enough that some NVRTC opens.
pub fn nvrtc_present() -> bool {
    nvrtc_status().is_ok()
}

/// Probes the driver, the devices and NVRTC. Never panics.
pub fn probe() -> CudaStatus {
    match std::panic::catch_unwind(probe_inner) {
        Ok(status) => status,
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            CudaStatus::Unavailable(Unavailable::ProbePanicked(what))
        }
    }
}

fn probe_inner() -> CudaStatus {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return CudaStatus::Unavailable(Unavailable::NoDriverLibrary);
    }
    if let Err(e) = cudarc::driver::result::init() {
        return CudaStatus::Unavailable(Unavailable::DriverInit(e.to_string()));
    }
    let devices = match cudarc::driver::result::device::get_count() {
        Ok(n) if n > 0 => n as usize,
        Ok(_) => return CudaStatus::Unavailable(Unavailable::NoDevice),
        Err(e) => return CudaStatus::Unavailable(Unavailable::DriverInit(e.to_string())),
    };
    if let Err(why) = nvrtc_status() {
        return CudaStatus::Unavailable(why);
    }
    CudaStatus::Available { devices }
}
