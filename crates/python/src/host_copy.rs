//! The CPU engine's buffers for host arrays: a copy of the array's extent, carrying the
//! array's own address range so that the variant pack's overlap check sees the real memory.
//! Outputs start as a copy too, so the gaps of a strided output keep their bytes when the
//! extent is written back.

use std::any::Any;

use pyo3::prelude::*;
use rime_engines::{Buffer, HostBuffer, HostData, HostDataMut, MemoryLocation, MemorySpan};
use rime_graph::DataType;

use crate::array::{Place, TensorArg};
use crate::errors::tensor_error;

/// A host array's extent, copied.
#[derive(Debug)]
pub struct HostCopy {
    data: HostBuffer,
    span: MemorySpan,
}

impl HostCopy {
    /// A copy of the extent of `arg` (host memory).
    ///
    /// # Errors
    /// `TensorError` when `arg` is not in host memory or its type has no host buffer.
    pub fn of(py: Python<'_>, arg: &TensorArg) -> PyResult<Self> {
        if arg.place != Place::Host {
            return Err(tensor_error(
                py,
                &arg.name,
                format!("is on {}; the plan runs on the CPU engine", arg.place),
            ));
        }
        // SAFETY: `arg` was read from a live tensor or array whose elements (dims, strides)
        // all lie in `ptr .. ptr + bytes`, inside the object's allocation; the object is held
        // by `arg` and the GIL is held, so the memory stays allocated during the copy.
        let bytes = unsafe { std::slice::from_raw_parts(arg.ptr as *const u8, arg.bytes()) };
        let data = HostBuffer::from_le_bytes(arg.data_type, bytes)
            .ok_or_else(|| tensor_error(py, &arg.name, format!("has type {}", arg.data_type)))?;
        Ok(HostCopy {
            data,
            span: arg.memory_span(),
        })
    }

    /// Writes the (computed) extent back into the memory of `arg`, the array it was copied
    /// from.
    ///
    /// # Errors
    /// `TensorError` when `arg` is read-only or is not the array of this copy.
    pub fn write_back(&self, py: Python<'_>, arg: &TensorArg) -> PyResult<()> {
        if arg.memory_span() != self.span {
            return Err(tensor_error(
                py,
                &arg.name,
                "is not the array this copy was made of",
            ));
        }
        if !arg.writable {
            return Err(tensor_error(py, &arg.name, "is read-only"));
        }
        let bytes = self.data.to_le_bytes();
        if bytes.len() != arg.bytes() {
            return Err(tensor_error(py, &arg.name, "changed size while rime ran"));
        }
        // SAFETY: the destination is the writable extent of a live array (held by `arg`, GIL
        // held) of exactly `bytes.len()` bytes; the source is a separate Vec.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), arg.ptr as *mut u8, bytes.len());
        }
        Ok(())
    }
}

impl Buffer for HostCopy {
    fn data_type(&self) -> DataType {
        self.data.data_type()
    }

    fn len(&self) -> usize {
        self.data.len()
    }

    fn location(&self) -> MemoryLocation {
        MemoryLocation::Host
    }

    fn span(&self) -> Option<MemorySpan> {
        Some(self.span)
    }

    fn host(&self) -> Option<HostData<'_>> {
        self.data.host()
    }

    fn host_mut(&mut self) -> Option<HostDataMut<'_>> {
        self.data.host_mut()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
