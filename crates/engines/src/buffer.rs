//! Buffers handed to a plan through the variant pack.
//!
//! [`Buffer`] is the interface every engine reads: element type, length and where the memory
//! lives. Host memory is [`HostBuffer`]; a device engine adds its own buffer type and finds it
//! again with [`Buffer::as_any`]. The CPU engine refuses anything that is not host memory.

use std::any::Any;
use std::fmt::Debug;

use half::{bf16, f16};
use rime_graph::DataType;

use crate::cpu::{HostSlice, HostSliceMut};

/// Where a buffer's memory lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLocation {
    /// Host (CPU) memory.
    Host,
    /// Memory of the GPU with this ordinal.
    Device(usize),
}

impl MemoryLocation {
    /// Short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            MemoryLocation::Host => "host",
            MemoryLocation::Device(_) => "device",
        }
    }
}

/// The address range a buffer occupies, for overlap checks between the buffers of one pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySpan {
    /// Where the range is.
    pub location: MemoryLocation,
    /// First byte's address.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl MemorySpan {
    /// True when the two ranges share a byte.
    pub fn overlaps(&self, other: &MemorySpan) -> bool {
        self.location == other.location && self.start < other.end && other.start < self.end
    }
}

/// Borrowed host elements of any type a tensor can have.
#[derive(Debug, Clone, Copy)]
pub enum HostData<'a> {
    /// Floating-point elements.
    Float(HostSlice<'a>),
    /// i32 elements.
    I32(&'a [i32]),
    /// i64 elements.
    I64(&'a [i64]),
}

/// Mutably borrowed host elements of any type a tensor can have.
#[derive(Debug)]
pub enum HostDataMut<'a> {
    /// Floating-point elements.
    Float(HostSliceMut<'a>),
    /// i32 elements.
    I32(&'a mut [i32]),
    /// i64 elements.
    I64(&'a mut [i64]),
}

/// Memory bound to one tensor of a plan.
pub trait Buffer: Debug + Send + Sync {
    /// Element type.
    fn data_type(&self) -> DataType;
    /// Number of elements.
    fn len(&self) -> usize;
    /// True when the buffer holds no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where the memory lives.
    fn location(&self) -> MemoryLocation;
    /// The address range of the elements when other buffers may share it (views of one
    /// allocation, memory wrapped from elsewhere); `None` for memory the buffer owns alone.
    fn span(&self) -> Option<MemorySpan> {
        None
    }
    /// The elements, when they are in host memory.
    fn host(&self) -> Option<HostData<'_>>;
    /// The elements, writable, when they are in host memory.
    fn host_mut(&mut self) -> Option<HostDataMut<'_>>;
    /// For engines that downcast to their own buffer type.
    fn as_any(&self) -> &dyn Any;
    /// For engines that downcast to their own buffer type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A typed vector in host memory.
#[derive(Debug, Clone, PartialEq)]
pub enum HostBuffer {
    /// f16 elements.
    F16(Vec<f16>),
    /// bf16 elements.
    Bf16(Vec<bf16>),
    /// f32 elements.
    F32(Vec<f32>),
    /// f64 elements.
    F64(Vec<f64>),
    /// i32 elements.
    I32(Vec<i32>),
    /// i64 elements.
    I64(Vec<i64>),
}

impl HostBuffer {
    /// `len` zeros of type `data_type`; `None` for types a host buffer cannot hold (bool).
    pub fn zeros(data_type: DataType, len: usize) -> Option<HostBuffer> {
        Some(match data_type {
            DataType::F16 => HostBuffer::F16(vec![f16::ZERO; len]),
            DataType::Bf16 => HostBuffer::Bf16(vec![bf16::ZERO; len]),
            DataType::F32 => HostBuffer::F32(vec![0.0; len]),
            DataType::F64 => HostBuffer::F64(vec![0.0; len]),
            DataType::I32 => HostBuffer::I32(vec![0; len]),
            DataType::I64 => HostBuffer::I64(vec![0; len]),
            DataType::Bool => return None,
        })
    }

    /// `values` rounded to `data_type` (integers truncate); `None` for bool.
    pub fn from_f64(data_type: DataType, values: &[f64]) -> Option<HostBuffer> {
        let it = values.iter().copied();
        Some(match data_type {
            DataType::F16 => HostBuffer::F16(it.map(f16::from_f64).collect()),
            DataType::Bf16 => HostBuffer::Bf16(it.map(bf16::from_f64).collect()),
            DataType::F32 => HostBuffer::F32(it.map(|x| x as f32).collect()),
            DataType::F64 => HostBuffer::F64(it.collect()),
            DataType::I32 => HostBuffer::I32(it.map(|x| x as i32).collect()),
            DataType::I64 => HostBuffer::I64(it.map(|x| x as i64).collect()),
            DataType::Bool => return None,
        })
    }

    /// Every element widened to f64 (for summaries and comparisons).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            HostBuffer::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
            HostBuffer::Bf16(v) => v.iter().map(|x| x.to_f64()).collect(),
            HostBuffer::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            HostBuffer::F64(v) => v.clone(),
            HostBuffer::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            HostBuffer::I64(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The raw little-endian bytes (what safetensors stores).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            HostBuffer::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostBuffer::Bf16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostBuffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostBuffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostBuffer::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostBuffer::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Elements from little-endian bytes; `None` when the length is not a multiple of the
    /// element size or the type is bool.
    pub fn from_le_bytes(data_type: DataType, bytes: &[u8]) -> Option<HostBuffer> {
        fn chunks<const N: usize, T>(bytes: &[u8], f: fn([u8; N]) -> T) -> Option<Vec<T>> {
            (bytes.len() % N == 0).then(|| {
                bytes
                    .chunks_exact(N)
                    .map(|c| {
                        let mut a = [0u8; N];
                        a.copy_from_slice(c);
                        f(a)
                    })
                    .collect()
            })
        }
        Some(match data_type {
            DataType::F16 => HostBuffer::F16(chunks(bytes, f16::from_le_bytes)?),
            DataType::Bf16 => HostBuffer::Bf16(chunks(bytes, bf16::from_le_bytes)?),
            DataType::F32 => HostBuffer::F32(chunks(bytes, f32::from_le_bytes)?),
            DataType::F64 => HostBuffer::F64(chunks(bytes, f64::from_le_bytes)?),
            DataType::I32 => HostBuffer::I32(chunks(bytes, i32::from_le_bytes)?),
            DataType::I64 => HostBuffer::I64(chunks(bytes, i64::from_le_bytes)?),
            DataType::Bool => return None,
        })
    }
}

/// Element offsets of every logical index of (dims, strides), in row-major logical order;
/// `None` for negative or mismatched dims/strides.
fn logical_offsets(dims: &[i64], strides: &[i64]) -> Option<Vec<usize>> {
    if dims.len() != strides.len() {
        return None;
    }
    let mut offsets = vec![0usize];
    for (&d, &st) in dims.iter().zip(strides) {
        let (d, st) = (usize::try_from(d).ok()?, usize::try_from(st).ok()?);
        offsets = offsets
            .iter()
            .flat_map(|&base| (0..d).map(move |i| base + i * st))
            .collect();
    }
    Some(offsets)
}

macro_rules! map_host {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            HostBuffer::F16($v) => HostBuffer::F16($body),
            HostBuffer::Bf16($v) => HostBuffer::Bf16($body),
            HostBuffer::F32($v) => HostBuffer::F32($body),
            HostBuffer::F64($v) => HostBuffer::F64($body),
            HostBuffer::I32($v) => HostBuffer::I32($body),
            HostBuffer::I64($v) => HostBuffer::I64($body),
        }
    };
}

impl HostBuffer {
    /// The logical elements of a strided tensor stored in this buffer, packed row-major (what
    /// safetensors and PyTorch's `.contiguous()` hold). `None` when the layout is unusable or
    /// reaches past the buffer.
    pub fn to_logical(&self, dims: &[i64], strides: &[i64]) -> Option<HostBuffer> {
        let offsets = logical_offsets(dims, strides)?;
        if offsets.iter().any(|&o| o >= self.len()) {
            return None;
        }
        Some(map_host!(self, v => offsets.iter().map(|&o| v[o]).collect()))
    }

    /// Places packed logical elements into a buffer of `span` elements laid out with
    /// (dims, strides); gaps are zero. `None` when the element count or layout does not fit.
    pub fn from_logical(&self, dims: &[i64], strides: &[i64], span: usize) -> Option<HostBuffer> {
        let offsets = logical_offsets(dims, strides)?;
        if offsets.len() != self.len() || offsets.iter().any(|&o| o >= span) {
            return None;
        }
        let mut out = HostBuffer::zeros(self.data_type(), span)?;
        macro_rules! place {
            ($($variant:ident),*) => {
                match (&mut out, self) {
                    $((HostBuffer::$variant(dst), HostBuffer::$variant(src)) => {
                        for (&o, &x) in offsets.iter().zip(src) {
                            dst[o] = x;
                        }
                    })*
                    _ => return None,
                }
            };
        }
        place!(F16, Bf16, F32, F64, I32, I64);
        Some(out)
    }
}

impl Buffer for HostBuffer {
    fn data_type(&self) -> DataType {
        match self {
            HostBuffer::F16(_) => DataType::F16,
            HostBuffer::Bf16(_) => DataType::Bf16,
            HostBuffer::F32(_) => DataType::F32,
            HostBuffer::F64(_) => DataType::F64,
            HostBuffer::I32(_) => DataType::I32,
            HostBuffer::I64(_) => DataType::I64,
        }
    }

    fn len(&self) -> usize {
        match self {
            HostBuffer::F16(v) => v.len(),
            HostBuffer::Bf16(v) => v.len(),
            HostBuffer::F32(v) => v.len(),
            HostBuffer::F64(v) => v.len(),
            HostBuffer::I32(v) => v.len(),
            HostBuffer::I64(v) => v.len(),
        }
    }

    fn location(&self) -> MemoryLocation {
        MemoryLocation::Host
    }

    fn host(&self) -> Option<HostData<'_>> {
        Some(match self {
            HostBuffer::F16(v) => HostData::Float(HostSlice::F16(v)),
            HostBuffer::Bf16(v) => HostData::Float(HostSlice::Bf16(v)),
            HostBuffer::F32(v) => HostData::Float(HostSlice::F32(v)),
            HostBuffer::F64(v) => HostData::Float(HostSlice::F64(v)),
            HostBuffer::I32(v) => HostData::I32(v),
            HostBuffer::I64(v) => HostData::I64(v),
        })
    }

    fn host_mut(&mut self) -> Option<HostDataMut<'_>> {
        Some(match self {
            HostBuffer::F16(v) => HostDataMut::Float(HostSliceMut::F16(v)),
            HostBuffer::Bf16(v) => HostDataMut::Float(HostSliceMut::Bf16(v)),
            HostBuffer::F32(v) => HostDataMut::Float(HostSliceMut::F32(v)),
            HostBuffer::F64(v) => HostDataMut::Float(HostSliceMut::F64(v)),
            HostBuffer::I32(v) => HostDataMut::I32(v),
            HostBuffer::I64(v) => HostDataMut::I64(v),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        for dt in [
            DataType::F16,
            DataType::Bf16,
            DataType::F32,
            DataType::I32,
            DataType::I64,
        ] {
            let b = HostBuffer::from_f64(dt, &[1.0, -2.0, 3.0]).unwrap();
            assert_eq!(b.data_type(), dt);
            let back = HostBuffer::from_le_bytes(dt, &b.to_le_bytes()).unwrap();
            assert_eq!(back, b);
            assert_eq!(back.to_f64(), vec![1.0, -2.0, 3.0]);
        }
        assert!(HostBuffer::from_le_bytes(DataType::F32, &[0u8; 3]).is_none());
        assert!(HostBuffer::zeros(DataType::Bool, 1).is_none());
    }

    #[test]
    fn logical_and_strided_layouts_convert_both_ways() {
        // (2, 3) stored column-major with a gap: strides (1, 3), span 8.
        let logical = HostBuffer::I32(vec![0, 1, 2, 3, 4, 5]);
        let strided = logical.from_logical(&[2, 3], &[1, 3], 8).unwrap();
        assert_eq!(strided, HostBuffer::I32(vec![0, 3, 0, 1, 4, 0, 2, 5]));
        assert_eq!(strided.to_logical(&[2, 3], &[1, 3]), Some(logical.clone()));
        assert!(logical.from_logical(&[2, 3], &[1, 3], 7).is_none());
        assert!(strided.to_logical(&[2, 3], &[1, 4]).is_none());
    }
}
