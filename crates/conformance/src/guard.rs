//! Guarded device memory for `rime selftest --guards`: a tensor (or the workspace) placed
//! inside a larger allocation, between two [`GUARD_BYTES`] zones filled with [`GUARD_PATTERN`].
//! After the kernels ran, [`Guarded::check`] downloads both zones and names the first byte that
//! changed: a kernel writing out of its tensor's bounds is caught even when the write lands in
//! memory the driver would not fault on. With guards off the zones are empty, so a run has one
//! code path either way. Built on the engines' public [`DeviceMemory`] (slices of one
//! allocation), as a user wrapping their own memory would.

use rime_engines::cuda::{CudaDevice, DeviceMemory};

use crate::HarnessError;

/// Bytes of guard zone before and after each guarded range (a multiple of every element size
/// and of the 256-byte alignment rime's allocations have).
pub const GUARD_BYTES: usize = 4096;

/// The byte every guard zone is filled with: neither 0 nor the 0xff poison, and not a value a
/// kernel stores by accident (0xa5a5 as bf16 is about -2.9e-16).
pub const GUARD_PATTERN: u8 = 0xa5;

/// `bytes` bytes between two guard zones (or none).
#[derive(Debug, Clone)]
pub struct Guarded {
    name: String,
    whole: DeviceMemory,
    guard: usize,
    bytes: usize,
}

impl Guarded {
    /// `bytes` bytes named `name`, each set to `fill`, with [`GUARD_BYTES`] of
    /// [`GUARD_PATTERN`] on each side when `guarded`.
    ///
    /// # Errors
    /// Out of memory (naming the tensor); driver errors.
    pub fn new(
        dev: &CudaDevice,
        name: &str,
        bytes: usize,
        fill: u8,
        guarded: bool,
    ) -> Result<Self, HarnessError> {
        let guard = if guarded { GUARD_BYTES } else { 0 };
        let total = bytes.checked_add(2 * guard).ok_or(HarnessError::Sizing {
            tensor: name.to_owned(),
        })?;
        let what = if guarded {
            format!("{name} ({bytes} bytes) with its guard zones")
        } else {
            name.to_owned()
        };
        let whole = DeviceMemory::alloc(dev, &what, total, GUARD_PATTERN)?;
        let g = Self {
            name: name.to_owned(),
            whole,
            guard,
            bytes,
        };
        g.interior()?.fill(dev, fill)?;
        Ok(g)
    }

    /// The range between the zones.
    ///
    /// # Errors
    /// None in practice (the range lies inside the allocation).
    pub fn interior(&self) -> Result<DeviceMemory, HarnessError> {
        Ok(self.whole.slice(self.guard..self.guard + self.bytes)?)
    }

    /// Checks that both zones still hold [`GUARD_PATTERN`] (nothing to check without guards).
    ///
    /// # Errors
    /// [`HarnessError::GuardOverwritten`] with the tensor and the first changed byte; driver
    /// errors.
    pub fn check(&self, dev: &CudaDevice) -> Result<(), HarnessError> {
        if self.guard == 0 {
            return Ok(());
        }
        let end = self.guard + self.bytes;
        for (side, start) in [("before", 0), ("after", end)] {
            let zone = self.whole.slice(start..start + self.guard)?.download(dev)?;
            if let Some(at) = zone.iter().position(|&b| b != GUARD_PATTERN) {
                let offset = i64::try_from(start + at).unwrap_or(i64::MAX)
                    - i64::try_from(self.guard).unwrap_or(0);
                return Err(HarnessError::GuardOverwritten {
                    tensor: self.name.clone(),
                    offset,
                    side,
                    expected: GUARD_PATTERN,
                    found: zone[at],
                });
            }
        }
        Ok(())
    }
}
