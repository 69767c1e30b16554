//! Device memory for variant packs and workspaces.
//!
//! [`DeviceMemory`] is a range of bytes on one device: an allocation rime made (freed when the
//! last handle to it goes), a part of one ([`DeviceMemory::slice`], sharing it), or memory
//! someone else owns — a PyTorch tensor, a candle or burn buffer — wrapped with
//! [`DeviceMemory::from_raw`]. [`DeviceBuffer`] types it as one tensor's elements for the
//! engines' [`Buffer`] trait; [`DeviceWorkspace`] is the device variant of
//! [`crate::Workspace`]. Every copy and fill is enqueued on the device's stream.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr};
use half::{bf16, f16};
use rime_graph::DataType;

use super::alloc;
use super::context::CudaDevice;
use super::error::CudaError;
use crate::{Buffer, HostBuffer, HostData, HostDataMut, MemoryLocation, MemorySpan};

/// What keeps a [`DeviceMemory`]'s bytes alive.
#[derive(Clone)]
enum Owner {
    /// An allocation of rime's, freed (stream-ordered) when the last handle drops.
    Allocation { _slice: Arc<CudaSlice<u8>> },
    /// Memory of someone else's, kept alive by whatever they handed over (if anything).
    External {
        _keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    },
}

/// A range of bytes on one CUDA device. Clones and slices share the memory: binding two
/// overlapping ranges where an engine writes one of them is refused by the variant pack.
#[derive(Clone)]
pub struct DeviceMemory {
    ordinal: usize,
    ptr: u64,
    bytes: usize,
    owner: Owner,
}

impl fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let owner = match self.owner {
            Owner::Allocation { .. } => "allocation",
            Owner::External { .. } => "external",
        };
        f.debug_struct("DeviceMemory")
            .field("ordinal", &self.ordinal)
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .field("owner", &owner)
            .finish()
    }
}

impl DeviceMemory {
    /// `bytes` new bytes on `dev` (at least one, so the memory has an address), each set to
    /// `fill`.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] naming `what`; driver errors.
    pub fn alloc(dev: &CudaDevice, what: &str, bytes: usize, fill: u8) -> Result<Self, CudaError> {
        let slice = alloc::filled::<u8>(dev, what, bytes.max(1), fill)?;
        let ptr = {
            let (ptr, _record) = slice.device_ptr(dev.stream());
            ptr
        };
        Ok(Self {
            ordinal: dev.properties().ordinal,
            ptr,
            bytes,
            owner: Owner::Allocation {
                _slice: Arc::new(slice),
            },
        })
    }

    /// Wraps `bytes` bytes at device address `ptr` of device `ordinal` that rime did not
    /// allocate; `keep_alive` (if any) is held as long as any handle to the memory.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be memory of device `ordinal`'s context that stays allocated
    /// while any handle (or a buffer, workspace or plan execution using one) lives, and that no
    /// one else writes while rime's work on it is enqueued.
    pub unsafe fn from_raw(
        ordinal: usize,
        ptr: u64,
        bytes: usize,
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        Self {
            ordinal,
            ptr,
            bytes,
            owner: Owner::External {
                _keep_alive: keep_alive,
            },
        }
    }

    /// The bytes `range` of this memory, sharing it.
    ///
    /// # Errors
    /// [`CudaError::BufferSize`] when the range is not inside the memory.
    pub fn slice(&self, range: Range<usize>) -> Result<Self, CudaError> {
        if range.start > range.end || range.end > self.bytes {
            return Err(CudaError::BufferSize {
                name: "device memory slice".to_owned(),
                needed: range.end,
                actual: self.bytes,
            });
        }
        Ok(Self {
            ptr: self.ptr + range.start as u64,
            bytes: range.end - range.start,
            ..self.clone()
        })
    }

    /// Device address of the first byte.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// True when the range holds no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Ordinal of the device the memory is on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The address range, for overlap checks.
    pub fn span(&self) -> MemorySpan {
        MemorySpan {
            location: MemoryLocation::Device(self.ordinal),
            start: self.ptr,
            end: self.ptr + self.bytes as u64,
        }
    }

    fn same_device(&self, dev: &CudaDevice) -> Result<(), CudaError> {
        if dev.properties().ordinal == self.ordinal {
            Ok(())
        } else {
            Err(CudaError::NotOnDevice {
                tensor: "device memory".to_owned(),
                ordinal: dev.properties().ordinal,
                location: format!("device {}", self.ordinal),
            })
        }
    }

    /// Sets every byte to `byte` (enqueued on `dev`'s stream).
    ///
    /// # Errors
    /// [`CudaError::NotOnDevice`]; driver errors.
    pub fn fill(&self, dev: &CudaDevice, byte: u8) -> Result<(), CudaError> {
        self.same_device(dev)?;
        // SAFETY: `ptr..ptr + bytes` is live device memory of this device (construction).
        unsafe {
            cudarc::driver::result::memset_d8_async(
                self.ptr,
                byte,
                self.bytes,
                dev.stream().cu_stream(),
            )
        }
        .map_err(CudaError::driver("memset"))
    }

    /// Copies `host` to the start of the memory.
    ///
    /// # Errors
    /// [`CudaError::BufferSize`] when `host` is longer than the memory; driver errors.
    pub fn upload(&self, dev: &CudaDevice, host: &[u8]) -> Result<(), CudaError> {
        self.same_device(dev)?;
        if host.len() > self.bytes {
            return Err(CudaError::BufferSize {
                name: "upload".to_owned(),
                needed: host.len(),
                actual: self.bytes,
            });
        }
        // SAFETY: the destination is live device memory of at least host.len() bytes; a copy
        // from pageable host memory has read `host` when the call returns.
        unsafe {
            cudarc::driver::result::memcpy_htod_async(self.ptr, host, dev.stream().cu_stream())
        }
        .map_err(CudaError::driver("upload"))
    }

    /// Copies the memory back to the host (waits for the stream).
    ///
    /// # Errors
    /// Driver errors (including an earlier kernel's failure).
    pub fn download(&self, dev: &CudaDevice) -> Result<Vec<u8>, CudaError> {
        self.same_device(dev)?;
        let mut host = vec![0u8; self.bytes];
        // SAFETY: the source is live device memory of `bytes` bytes; `host` has as many and is
        // not touched until the stream is synchronized below.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(&mut host, self.ptr, dev.stream().cu_stream())
        }
        .map_err(CudaError::driver("download"))?;
        dev.synchronize()?;
        Ok(host)
    }
}

/// A tensor's buffer on a CUDA device: `len` elements of `data_type` at the start of a
/// [`DeviceMemory`].
#[derive(Debug, Clone)]
pub struct DeviceBuffer {
    data_type: DataType,
    len: usize,
    memory: DeviceMemory,
}

fn device_type(data_type: DataType) -> Result<(), CudaError> {
    match data_type {
        // i64: ragged offsets (the engine copies them to the host to check them).
        DataType::F16 | DataType::Bf16 | DataType::F32 | DataType::I32 | DataType::I64 => Ok(()),
        other => Err(CudaError::UnsupportedDataType {
            data_type: other.name(),
        }),
    }
}

fn bytes_for(data_type: DataType, len: usize, what: &str) -> Result<usize, CudaError> {
    len.checked_mul(data_type.size_bytes())
        .ok_or_else(|| CudaError::OutOfMemory {
            what: what.to_owned(),
            needed: u64::MAX,
            free: 0,
            total: 0,
        })
}

impl DeviceBuffer {
    /// `len` elements of `data_type` over `memory` (which must hold them).
    ///
    /// # Errors
    /// [`CudaError::UnsupportedDataType`] for types other than f16, bf16, f32, i32 and i64;
    /// [`CudaError::BufferSize`] when the memory is too small.
    pub fn new(data_type: DataType, len: usize, memory: DeviceMemory) -> Result<Self, CudaError> {
        device_type(data_type)?;
        let needed = bytes_for(data_type, len, "a device buffer")?;
        if needed > memory.len() {
            return Err(CudaError::BufferSize {
                name: format!("{len} {data_type} elements"),
                needed,
                actual: memory.len(),
            });
        }
        Ok(Self {
            data_type,
            len,
            memory,
        })
    }

    /// `len` new elements of `data_type` on `dev`, every byte `fill`.
    ///
    /// # Errors
    /// As [`Self::new`]; [`CudaError::OutOfMemory`]; driver errors.
    pub fn filled(
        dev: &CudaDevice,
        data_type: DataType,
        len: usize,
        fill: u8,
    ) -> Result<Self, CudaError> {
        device_type(data_type)?;
        let what = format!("a {len}-element {data_type} tensor");
        let bytes = bytes_for(data_type, len, &what)?;
        Self::new(
            data_type,
            len,
            DeviceMemory::alloc(dev, &what, bytes, fill)?,
        )
    }

    /// A device buffer of `len` elements, every bit set (NaN for floats, -1 for i32): outputs
    /// an engine fails to write stay visible.
    ///
    /// # Errors
    /// As [`Self::filled`].
    pub fn poisoned(dev: &CudaDevice, data_type: DataType, len: usize) -> Result<Self, CudaError> {
        Self::filled(dev, data_type, len, 0xff)
    }

    /// A copy of a host buffer on `dev` (f16, bf16, f32, i32, i64).
    ///
    /// # Errors
    /// As [`Self::filled`].
    pub fn upload(dev: &CudaDevice, host: &HostBuffer) -> Result<Self, CudaError> {
        let buffer = Self::filled(dev, host.data_type(), host.len(), 0)?;
        buffer.memory.upload(dev, &host.to_le_bytes())?;
        Ok(buffer)
    }

    /// Copies the elements back to the host.
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, dev: &CudaDevice) -> Result<HostBuffer, CudaError> {
        let bytes = bytes_for(self.data_type, self.len, "a download")?;
        let all = self.memory.slice(0..bytes)?.download(dev)?;
        let words =
            |n: usize| -> Vec<[u8; 2]> { (0..n).map(|i| [all[2 * i], all[2 * i + 1]]).collect() };
        Ok(match self.data_type {
            DataType::Bf16 => HostBuffer::Bf16(
                words(self.len)
                    .into_iter()
                    .map(bf16::from_le_bytes)
                    .collect(),
            ),
            DataType::F16 => HostBuffer::F16(
                words(self.len)
                    .into_iter()
                    .map(f16::from_le_bytes)
                    .collect(),
            ),
            data_type => HostBuffer::from_le_bytes(data_type, &all).ok_or(
                CudaError::UnsupportedDataType {
                    data_type: data_type.name(),
                },
            )?,
        })
    }

    /// Copies integer buffers (i32, i64: lengths, offsets) back to the host with one stream
    /// synchronize for all of them, not one each.
    ///
    /// # Errors
    /// [`CudaError::UnsupportedDataType`] for a buffer of another type; driver errors.
    pub fn download_integers(
        dev: &CudaDevice,
        buffers: &[&DeviceBuffer],
    ) -> Result<Vec<HostBuffer>, CudaError> {
        let mut hosts = Vec::with_capacity(buffers.len());
        for b in buffers {
            if !matches!(b.data_type, DataType::I32 | DataType::I64) {
                return Err(CudaError::UnsupportedDataType {
                    data_type: b.data_type.name(),
                });
            }
            b.memory.same_device(dev)?;
            let mut host = vec![0u8; bytes_for(b.data_type, b.len, "a download")?];
            // SAFETY: the source is live device memory of at least host.len() bytes (the
            // buffer's elements); `host` is not read or moved until the synchronize below
            // (pushing it into `hosts` moves the Vec, not its heap storage).
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    &mut host,
                    b.memory.ptr,
                    dev.stream().cu_stream(),
                )
            }
            .map_err(CudaError::driver("download"))?;
            hosts.push((b.data_type, host));
        }
        dev.synchronize()?;
        hosts
            .into_iter()
            .map(|(t, bytes)| {
                HostBuffer::from_le_bytes(t, &bytes).ok_or(CudaError::UnsupportedDataType {
                    data_type: t.name(),
                })
            })
            .collect()
    }

    /// The memory the elements are in.
    pub fn memory(&self) -> &DeviceMemory {
        &self.memory
    }

    /// Device address of the first element.
    pub fn device_ptr(&self) -> u64 {
        self.memory.ptr()
    }
}

impl Buffer for DeviceBuffer {
    fn data_type(&self) -> DataType {
        self.data_type
    }

    fn len(&self) -> usize {
        self.len
    }

    fn location(&self) -> MemoryLocation {
        MemoryLocation::Device(self.memory.ordinal())
    }

    fn span(&self) -> Option<MemorySpan> {
        Some(MemorySpan {
            end: self.memory.ptr() + (self.len * self.data_type.size_bytes()) as u64,
            ..self.memory.span()
        })
    }

    fn host(&self) -> Option<HostData<'_>> {
        None
    }

    fn host_mut(&mut self) -> Option<HostDataMut<'_>> {
        None
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Device workspace bytes. Clones share the memory (a workspace is scratch, reused across
/// executions on one stream); equality is identity of the range.
#[derive(Debug, Clone)]
pub struct DeviceWorkspace {
    memory: DeviceMemory,
}

impl PartialEq for DeviceWorkspace {
    fn eq(&self, other: &Self) -> bool {
        self.memory.span() == other.memory.span()
    }
}

impl DeviceWorkspace {
    /// `bytes` new bytes on `dev`, every bit set: the engine must clear what it accumulates
    /// into.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`]; driver errors.
    pub fn new(dev: &CudaDevice, bytes: usize) -> Result<Self, CudaError> {
        Ok(Self {
            memory: DeviceMemory::alloc(dev, "the workspace", bytes, 0xff)?,
        })
    }

    /// A workspace over `memory` (e.g. from a framework's caching allocator, or between guard
    /// zones).
    pub fn over(memory: DeviceMemory) -> Self {
        Self { memory }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.memory.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.memory.ordinal()
    }

    /// The memory.
    pub fn memory(&self) -> &DeviceMemory {
        &self.memory
    }
}
