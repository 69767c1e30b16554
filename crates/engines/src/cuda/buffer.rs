//! Device memory for variant packs and workspaces: [`DeviceBuffer`] implements the engines'
//! [`Buffer`] trait for tensors that live on a CUDA device, [`DeviceWorkspace`] is the device
//! variant of [`crate::Workspace`].

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::CudaSlice;
use half::{bf16, f16};
use rime_graph::DataType;

use super::alloc;
use super::context::CudaDevice;
use super::error::CudaError;
use crate::{Buffer, HostBuffer, HostData, HostDataMut, MemoryLocation};

/// Typed device storage (16-bit floats are kept as raw bits).
#[derive(Debug)]
pub enum DeviceData {
    /// f16 or bf16 elements.
    Half(CudaSlice<u16>),
    /// f32 elements.
    F32(CudaSlice<f32>),
    /// i32 elements.
    I32(CudaSlice<i32>),
}

/// A tensor's buffer on a CUDA device.
#[derive(Debug)]
pub struct DeviceBuffer {
    data_type: DataType,
    ordinal: usize,
    data: DeviceData,
}

impl DeviceBuffer {
    /// Copies a host buffer to `dev` (f16, bf16, f32, i32).
    ///
    /// # Errors
    /// [`CudaError::Unsupported`] for other types; [`CudaError::OutOfMemory`]; driver errors.
    pub fn upload(dev: &CudaDevice, host: &HostBuffer) -> Result<Self, CudaError> {
        let what = format!("a {}-element {} tensor", host.len(), host.data_type());
        let data = match host {
            HostBuffer::F16(v) => DeviceData::Half(alloc::upload(
                dev,
                &what,
                &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            )?),
            HostBuffer::Bf16(v) => DeviceData::Half(alloc::upload(
                dev,
                &what,
                &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            )?),
            HostBuffer::F32(v) => DeviceData::F32(alloc::upload(dev, &what, v)?),
            HostBuffer::I32(v) => DeviceData::I32(alloc::upload(dev, &what, v)?),
            HostBuffer::F64(_) | HostBuffer::I64(_) => {
                return Err(CudaError::Unsupported {
                    what: "f64 and i64 device buffers",
                })
            }
        };
        Ok(Self {
            data_type: host.data_type(),
            ordinal: dev.properties().ordinal,
            data,
        })
    }

    /// A device buffer of `len` elements, every bit set (NaN for floats, -1 for i32): outputs
    /// the engine fails to write stay visible.
    ///
    /// # Errors
    /// [`CudaError::Unsupported`] for types other than f16, bf16, f32, i32;
    /// [`CudaError::OutOfMemory`]; driver errors.
    pub fn poisoned(dev: &CudaDevice, data_type: DataType, len: usize) -> Result<Self, CudaError> {
        let what = format!("a {len}-element {data_type} tensor");
        let data = match data_type {
            DataType::F16 | DataType::Bf16 => {
                DeviceData::Half(alloc::filled(dev, &what, len, 0xff)?)
            }
            DataType::F32 => DeviceData::F32(alloc::filled(dev, &what, len, 0xff)?),
            DataType::I32 => DeviceData::I32(alloc::filled(dev, &what, len, 0xff)?),
            _ => {
                return Err(CudaError::Unsupported {
                    what: "device buffers of this data type",
                })
            }
        };
        Ok(Self {
            data_type,
            ordinal: dev.properties().ordinal,
            data,
        })
    }

    /// Copies the buffer back to the host.
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, dev: &CudaDevice) -> Result<HostBuffer, CudaError> {
        let st = dev.stream();
        let drv = CudaError::driver("download");
        Ok(match (&self.data, self.data_type) {
            (DeviceData::Half(s), DataType::Bf16) => HostBuffer::Bf16(
                st.clone_dtoh(s)
                    .map_err(drv)?
                    .into_iter()
                    .map(bf16::from_bits)
                    .collect(),
            ),
            (DeviceData::Half(s), _) => HostBuffer::F16(
                st.clone_dtoh(s)
                    .map_err(drv)?
                    .into_iter()
                    .map(f16::from_bits)
                    .collect(),
            ),
            (DeviceData::F32(s), _) => HostBuffer::F32(st.clone_dtoh(s).map_err(drv)?),
            (DeviceData::I32(s), _) => HostBuffer::I32(st.clone_dtoh(s).map_err(drv)?),
        })
    }

    /// The 16-bit storage, if this is an f16 / bf16 buffer.
    pub fn half(&self) -> Option<&CudaSlice<u16>> {
        match &self.data {
            DeviceData::Half(s) => Some(s),
            _ => None,
        }
    }

    /// Mutable 16-bit storage.
    pub fn half_mut(&mut self) -> Option<&mut CudaSlice<u16>> {
        match &mut self.data {
            DeviceData::Half(s) => Some(s),
            _ => None,
        }
    }

    /// The f32 storage, if this is an f32 buffer.
    pub fn f32(&self) -> Option<&CudaSlice<f32>> {
        match &self.data {
            DeviceData::F32(s) => Some(s),
            _ => None,
        }
    }

    /// The i32 storage, if this is an i32 buffer.
    pub fn i32(&self) -> Option<&CudaSlice<i32>> {
        match &self.data {
            DeviceData::I32(s) => Some(s),
            _ => None,
        }
    }

    /// Mutable f32 storage.
    pub fn f32_mut(&mut self) -> Option<&mut CudaSlice<f32>> {
        match &mut self.data {
            DeviceData::F32(s) => Some(s),
            _ => None,
        }
    }
}

impl Buffer for DeviceBuffer {
    fn data_type(&self) -> DataType {
        self.data_type
    }

    fn len(&self) -> usize {
        match &self.data {
            DeviceData::Half(s) => s.len(),
            DeviceData::F32(s) => s.len(),
            DeviceData::I32(s) => s.len(),
        }
    }

    fn location(&self) -> MemoryLocation {
        MemoryLocation::Device(self.ordinal)
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

/// Device workspace bytes. Clones share the allocation (a workspace is scratch, reused across
/// executions on one stream); equality is identity.
#[derive(Debug, Clone)]
pub struct DeviceWorkspace {
    bytes: Arc<CudaSlice<u8>>,
    ordinal: usize,
}

impl PartialEq for DeviceWorkspace {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.bytes, &other.bytes)
    }
}

impl DeviceWorkspace {
    /// `bytes` bytes on `dev` (at least one, so the allocation has an address), every bit set:
    /// the engine must clear what it accumulates into.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`]; driver errors.
    pub fn new(dev: &CudaDevice, bytes: usize) -> Result<Self, CudaError> {
        let data = alloc::filled(dev, "the workspace", bytes.max(1), 0xff)?;
        Ok(Self {
            bytes: Arc::new(data),
            ordinal: dev.properties().ordinal,
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when empty (never: allocations hold at least one byte).
    pub fn is_empty(&self) -> bool {
        self.bytes.len() == 0
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The allocation.
    pub fn slice(&self) -> &CudaSlice<u8> {
        &self.bytes
    }
}
