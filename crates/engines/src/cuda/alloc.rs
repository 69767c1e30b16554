//! Every device allocation of the CUDA engine goes through here, so that running out of memory
//! says what was being allocated, how many bytes, and how much the device had free
//! ([`CudaError::OutOfMemory`]) instead of a bare driver code. Fills are device memsets: a huge
//! request fails on the device, never by first building an equally huge host vector.

use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, DevicePtrMut, DeviceRepr, DriverError, ValidAsZeroBits};

use super::context::CudaDevice;
use super::error::CudaError;

/// The error for a failed allocation of `bytes` bytes of `what`: out-of-memory (with the
/// device's free and total memory read now) or the driver error as it is.
pub fn allocation_error(dev: &CudaDevice, what: &str, bytes: u64, e: DriverError) -> CudaError {
    if e.0 != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        return CudaError::Driver {
            during: "allocation",
            error: e,
        };
    }
    let p = dev.properties();
    let (free, total) = dev.memory_info().unwrap_or((p.free_memory, p.total_memory));
    CudaError::OutOfMemory {
        what: what.to_string(),
        needed: bytes,
        free,
        total,
    }
}

fn bytes_of<T>(what: &str, len: usize) -> Result<usize, CudaError> {
    len.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| CudaError::OutOfMemory {
            what: what.to_string(),
            needed: u64::MAX,
            free: 0,
            total: 0,
        })
}

/// `len` elements of `T` on `dev`, every byte set to `fill` (0xff: NaN for f16 / bf16 / f32).
///
/// # Errors
/// [`CudaError::OutOfMemory`] naming `what`; other driver errors.
pub fn filled<T: DeviceRepr + ValidAsZeroBits>(
    dev: &CudaDevice,
    what: &str,
    len: usize,
    fill: u8,
) -> Result<CudaSlice<T>, CudaError> {
    let bytes = bytes_of::<T>(what, len)?;
    // SAFETY: every byte is set by the memset right below, on the same stream, before any use.
    let mut slice = unsafe { dev.stream().alloc::<T>(len) }
        .map_err(|e| allocation_error(dev, what, bytes as u64, e))?;
    set_bytes(dev, &mut slice, fill)?;
    Ok(slice)
}

/// Sets every byte of `dst` (a slice or a view) to `byte`, on the device's stream.
///
/// # Errors
/// Driver errors.
pub fn set_bytes<T: ValidAsZeroBits>(
    dev: &CudaDevice,
    dst: &mut impl DevicePtrMut<T>,
    byte: u8,
) -> Result<(), CudaError> {
    let st = dev.stream();
    let bytes = dst.num_bytes();
    let (ptr, _record) = dst.device_ptr_mut(st);
    // SAFETY: `ptr` addresses the `bytes` bytes of `dst`, live on this stream; `T:
    // ValidAsZeroBits` are plain numbers here (u8, u16, f32, i32), valid for every byte pattern.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, bytes, st.cu_stream()) }
        .map_err(CudaError::driver("memset"))
}
