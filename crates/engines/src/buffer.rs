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
use crate::memory::try_filled;
use crate::EngineError;

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
    /// `len` zeros of type `data_type`, or an error instead of an abort when memory is short;
    /// `what` names the buffer in that error.
    ///
    /// # Errors
    /// [`EngineError::OutOfHostMemory`], or [`EngineError::UnhostableType`] for bool.
    pub fn try_zeros(
        data_type: DataType,
        len: usize,
        what: &str,
    ) -> Result<HostBuffer, EngineError> {
        Ok(match data_type {
            DataType::F16 => HostBuffer::F16(try_filled(len, f16::ZERO, what)?),
            DataType::Bf16 => HostBuffer::Bf16(try_filled(len, bf16::ZERO, what)?),
            DataType::F32 => HostBuffer::F32(try_filled(len, 0.0, what)?),
            DataType::F64 => HostBuffer::F64(try_filled(len, 0.0, what)?),
            DataType::I32 => HostBuffer::I32(try_filled(len, 0, what)?),
            DataType::I64 => HostBuffer::I64(try_filled(len, 0, what)?),
            DataType::Bool => {
                return Err(EngineError::UnhostableType {
                    tensor: what.to_owned(),
                    data_type,
                })
            }
        })
    }

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

/// Element offsets of every logical index of (dims, strides), in row-major logical order,
/// computed one at a time (a tensor of n elements costs no n-sized index).
#[derive(Debug, Clone)]
pub struct LogicalOffsets {
    dims: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
    left: u64,
    /// The largest offset.
    last: usize,
}

impl LogicalOffsets {
    /// The offsets of (dims, strides); `None` for negative, mismatched or overflowing ones.
    pub fn new(dims: &[i64], strides: &[i64]) -> Option<LogicalOffsets> {
        if dims.len() != strides.len() {
            return None;
        }
        let dims: Vec<usize> = dims
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<_>>()?;
        let strides: Vec<usize> = strides
            .iter()
            .map(|&s| usize::try_from(s).ok())
            .collect::<Option<_>>()?;
        let left = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))?;
        // The largest offset must be addressable.
        let last = dims.iter().zip(&strides).try_fold(0usize, |a, (&d, &s)| {
            a.checked_add(d.saturating_sub(1).checked_mul(s)?)
        })?;
        Some(LogicalOffsets {
            index: vec![0; dims.len()],
            dims,
            strides,
            offset: 0,
            left,
            last,
        })
    }

    /// Number of logical elements.
    pub fn elements(&self) -> u64 {
        self.left
    }
}

impl Iterator for LogicalOffsets {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let current = self.offset;
        // Odometer step: bump the last axis, carrying into the ones before.
        for axis in (0..self.dims.len()).rev() {
            self.index[axis] += 1;
            self.offset += self.strides[axis];
            if self.index[axis] < self.dims[axis] {
                break;
            }
            self.offset -= self.strides[axis] * self.index[axis];
            self.index[axis] = 0;
        }
        Some(current)
    }
}

/// Why [`HostBuffer::from_logical`] placed nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlaceError {
    /// The element count does not match the dims, or the layout does not fit `span`.
    #[error("the element count or the layout does not fit")]
    Layout,
    /// Logical element `index` (row-major) lands on memory element `offset`, which an earlier
    /// logical element with a different value already holds.
    #[error(
        "logical element {index} lands on memory element {offset}, which an earlier element \
         with a different value already fills"
    )]
    Aliased {
        /// Row-major logical index.
        index: usize,
        /// Memory element.
        offset: usize,
    },
    /// The buffer could not be allocated.
    #[error(transparent)]
    Memory(#[from] EngineError),
}

/// The placement rule for layouts that map several logical elements to one memory element:
/// the later ones must bring the value already there ([`PlaceError::Aliased`] otherwise). It
/// keeps one bit per memory element, and nothing for a layout that cannot alias.
#[derive(Debug)]
pub struct FilledMap(Option<Vec<u64>>);

impl FilledMap {
    /// The map of a placement into `span` memory elements; empty (every check passes) unless
    /// the layout `can_alias`.
    ///
    /// # Errors
    /// [`EngineError::OutOfHostMemory`] when it cannot be allocated.
    pub fn new(span: usize, can_alias: bool) -> Result<FilledMap, EngineError> {
        let bits = can_alias.then(|| try_filled(span.div_ceil(64), 0, "a placement's map"));
        Ok(FilledMap(bits.transpose()?))
    }

    /// Marks memory element `offset` (< span) filled by logical element `index`. When an
    /// earlier element filled it, `same` says whether the values are bit-identical; if not,
    /// [`PlaceError::Aliased`].
    ///
    /// # Errors
    /// [`PlaceError::Aliased`] as above.
    pub fn fill(
        &mut self,
        index: usize,
        offset: usize,
        same: impl FnOnce() -> bool,
    ) -> Result<(), PlaceError> {
        let Some(bits) = self.0.as_mut() else {
            return Ok(());
        };
        let (word, bit) = (offset / 64, 1u64 << (offset % 64));
        if bits[word] & bit != 0 && !same() {
            return Err(PlaceError::Aliased { index, offset });
        }
        bits[word] |= bit;
        Ok(())
    }
}

/// Bit patterns, so that placing compares NaN payloads and signed zeros exactly.
trait Bits {
    fn to_bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty => |$x:ident| $e:expr),*) => {
        $(impl Bits for $t {
            fn to_bits(self) -> u64 {
                let $x = self;
                $e
            }
        })*
    };
}

bits!(
    f16 => |x| u64::from(x.to_bits()),
    bf16 => |x| u64::from(x.to_bits()),
    f32 => |x| u64::from(x.to_bits()),
    f64 => |x| x.to_bits(),
    i32 => |x| u64::from(u32::from_ne_bytes(x.to_ne_bytes())),
    i64 => |x| u64::from_ne_bytes(x.to_ne_bytes())
);

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
        let offsets = self.fitting(dims, strides)?;
        Some(map_host!(self, v => offsets.map(|o| v[o]).collect()))
    }

    /// Offsets of (dims, strides) when every one lies inside this buffer.
    fn fitting(&self, dims: &[i64], strides: &[i64]) -> Option<LogicalOffsets> {
        let offsets = LogicalOffsets::new(dims, strides)?;
        (offsets.elements() == 0 || offsets.last < self.len()).then_some(offsets)
    }

    /// Places packed logical elements into a buffer of `span` elements laid out with
    /// (dims, strides); gaps are zero. Where the layout maps several logical elements to one
    /// memory element (a stride of 0, overlapping strides), they must hold the same value:
    /// placing them would otherwise keep the last one and drop the others without a word.
    ///
    /// # Errors
    /// [`PlaceError::Layout`] when the element count or layout does not fit,
    /// [`PlaceError::Aliased`] for differing values on one memory element, and
    /// [`PlaceError::Memory`] when the buffer cannot be allocated.
    pub fn from_logical(
        &self,
        dims: &[i64],
        strides: &[i64],
        span: usize,
    ) -> Result<HostBuffer, PlaceError> {
        let offsets = LogicalOffsets::new(dims, strides).ok_or(PlaceError::Layout)?;
        if u64::try_from(self.len()).ok() != Some(offsets.elements()) {
            return Err(PlaceError::Layout);
        }
        let mut out = HostBuffer::try_zeros(self.data_type(), span, "a strided copy")?;
        let mut placed = FilledMap::new(span, rime_graph::layout_overlaps(dims, strides))?;
        macro_rules! place {
            ($($variant:ident),*) => {
                match (&mut out, self) {
                    $((HostBuffer::$variant(dst), HostBuffer::$variant(src)) => {
                        for (index, (offset, &x)) in offsets.zip(src).enumerate() {
                            let slot = dst.get_mut(offset).ok_or(PlaceError::Layout)?;
                            let held = *slot;
                            placed.fill(index, offset, || {
                                Bits::to_bits(held) == Bits::to_bits(x)
                            })?;
                            *slot = x;
                        }
                    })*
                    _ => return Err(PlaceError::Layout),
                }
            };
        }
        place!(F16, Bf16, F32, F64, I32, I64);
        Ok(out)
    }

    /// Calls `f` with every logical element of (dims, strides), widened to f64, in row-major
    /// order, without copying the tensor. `false` when the layout does not fit the buffer.
    pub fn for_each_logical(&self, dims: &[i64], strides: &[i64], mut f: impl FnMut(f64)) -> bool {
        let Some(offsets) = self.fitting(dims, strides) else {
            return false;
        };
        match self {
            HostBuffer::F16(v) => offsets.for_each(|o| f(v[o].to_f64())),
            HostBuffer::Bf16(v) => offsets.for_each(|o| f(v[o].to_f64())),
            HostBuffer::F32(v) => offsets.for_each(|o| f(f64::from(v[o]))),
            HostBuffer::F64(v) => offsets.for_each(|o| f(v[o])),
            HostBuffer::I32(v) => offsets.for_each(|o| f(f64::from(v[o]))),
            // Exact below 2^53; only summaries read integers this way.
            HostBuffer::I64(v) => offsets.for_each(|o| f(v[o] as f64)),
        }
        true
    }

    /// Sets every logical element of (dims, strides), in row-major order, to the next value of
    /// `values` rounded to the buffer's type (integers truncate). `false` when the layout does
    /// not fit the buffer.
    pub fn fill_logical(
        &mut self,
        dims: &[i64],
        strides: &[i64],
        mut values: impl FnMut() -> f64,
    ) -> bool {
        let Some(offsets) = self.fitting(dims, strides) else {
            return false;
        };
        match self {
            HostBuffer::F16(v) => offsets.for_each(|o| v[o] = f16::from_f64(values())),
            HostBuffer::Bf16(v) => offsets.for_each(|o| v[o] = bf16::from_f64(values())),
            HostBuffer::F32(v) => offsets.for_each(|o| v[o] = values() as f32),
            HostBuffer::F64(v) => offsets.for_each(|o| v[o] = values()),
            HostBuffer::I32(v) => offsets.for_each(|o| v[o] = values() as i32),
            HostBuffer::I64(v) => offsets.for_each(|o| v[o] = values() as i64),
        }
        true
    }

    /// Writes the logical elements of (dims, strides) as little-endian bytes, row-major, in
    /// chunks (no copy of the whole tensor).
    ///
    /// # Errors
    /// The writer's errors; `InvalidInput` when the layout does not fit the buffer.
    pub fn write_logical_le(
        &self,
        dims: &[i64],
        strides: &[i64],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let offsets = self.fitting(dims, strides).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "layout outside the buffer",
            )
        })?;
        let mut chunk = Vec::with_capacity(1 << 16);
        macro_rules! write_all {
            ($v:expr) => {{
                for o in offsets {
                    chunk.extend_from_slice(&$v[o].to_le_bytes());
                    if chunk.len() >= 1 << 16 {
                        out.write_all(&chunk)?;
                        chunk.clear();
                    }
                }
            }};
        }
        match self {
            HostBuffer::F16(v) => write_all!(v),
            HostBuffer::Bf16(v) => write_all!(v),
            HostBuffer::F32(v) => write_all!(v),
            HostBuffer::F64(v) => write_all!(v),
            HostBuffer::I32(v) => write_all!(v),
            HostBuffer::I64(v) => write_all!(v),
        }
        out.write_all(&chunk)
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
        assert_eq!(
            logical.from_logical(&[2, 3], &[1, 3], 7),
            Err(PlaceError::Layout)
        );
        assert!(strided.to_logical(&[2, 3], &[1, 4]).is_none());
        // A stride of 0 places equal values on one element; differing ones are refused.
        let repeated = HostBuffer::F32(vec![1.0, 2.0, 1.0, 2.0]);
        let broadcast = repeated.from_logical(&[2, 2], &[0, 1], 2).unwrap();
        assert_eq!(broadcast, HostBuffer::F32(vec![1.0, 2.0]));
        let differing = HostBuffer::F32(vec![1.0, 2.0, 1.0, -0.0]);
        assert_eq!(
            differing.from_logical(&[2, 2], &[0, 1], 2),
            Err(PlaceError::Aliased {
                index: 3,
                offset: 1
            })
        );
        let signed_zeros = HostBuffer::F32(vec![0.0, -0.0]);
        assert!(signed_zeros.from_logical(&[2], &[0], 1).is_err());
        let mut seen = Vec::new();
        assert!(strided.for_each_logical(&[2, 3], &[1, 3], |x| seen.push(x)));
        assert_eq!(seen, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut bytes = Vec::new();
        strided
            .write_logical_le(&[2, 3], &[1, 3], &mut bytes)
            .unwrap();
        assert_eq!(bytes, logical.to_le_bytes());
        let offsets: Vec<usize> = LogicalOffsets::new(&[2, 1, 3], &[10, 7, 2])
            .unwrap()
            .collect();
        assert_eq!(offsets, vec![0, 2, 4, 10, 12, 14]);
        assert!(LogicalOffsets::new(&[i64::MAX, 2], &[i64::MAX, 1]).is_none());
        assert!(HostBuffer::try_zeros(DataType::F32, usize::MAX / 8, "big").is_err());
    }
}
