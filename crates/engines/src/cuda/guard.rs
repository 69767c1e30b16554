//! Guarded device allocations for `rime selftest --guards`: a tensor (or the workspace) placed
//! inside a larger allocation, between two [`GUARD_BYTES`] zones filled with [`GUARD_PATTERN`].
//! After the kernels ran, [`Guarded::check`] downloads both zones and names the first byte that
//! changed: a kernel writing out of its tensor's bounds is caught even when the write lands in
//! memory the driver would not fault on. With guards off the zones are empty and the tensor is a
//! plain allocation, so the sweep has one code path either way.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::alloc;
use super::context::CudaDevice;
use super::error::CudaError;

/// Bytes of guard zone before and after each guarded tensor (a multiple of every element size
/// and of the 256-byte alignment the kernels' vector accesses assume).
pub const GUARD_BYTES: usize = 4096;

/// The byte every guard zone is filled with: neither 0 nor the 0xff poison, and not a value a
/// kernel stores by accident (0xa5a5 as bf16 is about -2.9e-16).
pub const GUARD_PATTERN: u8 = 0xa5;

/// Element types a guarded tensor may hold: plain numbers valid for every bit pattern, so that
/// a byte allocation may be viewed as them.
pub trait Plain:
    cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + private::Sealed
{
}

impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for f32 {}
impl Plain for i32 {}

mod private {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
}

/// A tensor of `len` elements of `T` between two guard zones (or none).
#[derive(Debug)]
pub struct Guarded<T: Plain> {
    name: String,
    slice: CudaSlice<T>,
    /// Elements of guard on each side.
    guard: usize,
    len: usize,
}

impl<T: Plain> Guarded<T> {
    /// `len` elements named `name`, every byte set to `fill`, with [`GUARD_BYTES`] of
    /// [`GUARD_PATTERN`] on each side when `guarded`.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] naming the tensor; driver errors.
    pub fn new(
        dev: &CudaDevice,
        name: &str,
        len: usize,
        fill: u8,
        guarded: bool,
    ) -> Result<Self, CudaError> {
        let guard = if guarded {
            GUARD_BYTES / std::mem::size_of::<T>()
        } else {
            0
        };
        let total = len.saturating_add(2 * guard).max(1);
        let what = if guarded {
            format!("{name} ({len} elements) with its guard zones")
        } else {
            name.to_string()
        };
        let mut slice = alloc::filled::<T>(dev, &what, total, GUARD_PATTERN)?;
        alloc::set_bytes(dev, &mut slice.slice_mut(guard..guard + len), fill)?;
        Ok(Self {
            name: name.to_string(),
            slice,
            guard,
            len,
        })
    }

    /// Like [`Self::new`], with the tensor's elements copied from `host`.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn upload(
        dev: &CudaDevice,
        name: &str,
        host: &[T],
        guarded: bool,
    ) -> Result<Self, CudaError> {
        let mut g = Self::new(dev, name, host.len(), 0, guarded)?;
        dev.stream()
            .memcpy_htod(host, &mut g.view_mut())
            .map_err(CudaError::driver("upload"))?;
        Ok(g)
    }

    /// Sets every byte of the tensor (not its guards) to `byte` again.
    ///
    /// # Errors
    /// Driver errors.
    pub fn refill(&mut self, dev: &CudaDevice, byte: u8) -> Result<(), CudaError> {
        alloc::set_bytes(dev, &mut self.view_mut(), byte)
    }

    /// The tensor (without its guards).
    pub fn view(&self) -> CudaView<'_, T> {
        self.slice.slice(self.guard..self.guard + self.len)
    }

    /// The tensor (without its guards), writable.
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice.slice_mut(self.guard..self.guard + self.len)
    }

    /// Copies the tensor back to the host.
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, dev: &CudaDevice) -> Result<Vec<T>, CudaError> {
        dev.stream()
            .clone_dtoh(&self.view())
            .map_err(CudaError::driver("download"))
    }

    /// Checks that both guard zones still hold [`GUARD_PATTERN`] (nothing to check without
    /// guards).
    ///
    /// # Errors
    /// [`CudaError::GuardOverwritten`] with the tensor and the first changed byte; driver errors.
    pub fn check(&self, dev: &CudaDevice) -> Result<(), CudaError> {
        if self.guard == 0 {
            return Ok(());
        }
        let st = dev.stream();
        let size = std::mem::size_of::<T>();
        let end = self.guard + self.len;
        for (side, start) in [("before", 0), ("after", end)] {
            let zone = self.slice.slice(start..start + self.guard);
            // SAFETY: every byte is a valid u8; the view covers exactly the zone's bytes.
            let bytes =
                unsafe { zone.transmute::<u8>(GUARD_BYTES) }.ok_or(CudaError::BufferSize {
                    name: "guard zone",
                    needed: GUARD_BYTES,
                    actual: self.guard * size,
                })?;
            let host = st
                .clone_dtoh(&bytes)
                .map_err(CudaError::driver("download"))?;
            if let Some(at) = host.iter().position(|&b| b != GUARD_PATTERN) {
                return Err(CudaError::GuardOverwritten {
                    tensor: self.name.clone(),
                    offset: ((start * size + at) as i64) - (self.guard * size) as i64,
                    side,
                    expected: GUARD_PATTERN,
                    found: host[at],
                });
            }
        }
        Ok(())
    }
}
