//! Tensors: logical dims, physical strides, data type, and how a value reaches the engine.

use crate::DataType;

/// Index of a tensor in its [`Graph`](crate::Graph). Only valid for the graph that issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TensorId(pub(crate) u32);

impl TensorId {
    /// Position of the tensor in [`Graph::tensors`](crate::Graph::tensors).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A scalar passed by value (from the host) instead of through device memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// 32-bit float.
    F32(f32),
    /// 64-bit float.
    F64(f64),
    /// 32-bit integer.
    I32(i32),
    /// 64-bit integer.
    I64(i64),
}

impl Scalar {
    /// The data type the scalar carries.
    pub fn data_type(self) -> DataType {
        match self {
            Scalar::F32(_) => DataType::F32,
            Scalar::F64(_) => DataType::F64,
            Scalar::I32(_) => DataType::I32,
            Scalar::I64(_) => DataType::I64,
        }
    }

    /// The value as f64 (exact for every variant but large i64).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::F32(v) => f64::from(v),
            Scalar::F64(v) => v,
            Scalar::I32(v) => f64::from(v),
            Scalar::I64(v) => v as f64,
        }
    }
}

/// A tensor of the graph. Dims are logical (B, H, S, D for attention); strides are in elements
/// and give the physical layout (BHSD, BSHD, interleaved and padded rows are all just strides).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Name, unique within the graph.
    pub name: String,
    /// User-assigned id, unique within the graph when set (the variant-pack key of cuDNN).
    pub uid: Option<i64>,
    /// Logical dims.
    pub dims: Vec<i64>,
    /// Strides in elements, one per dim.
    pub strides: Vec<i64>,
    /// Declared data type; `None` takes the graph context's type (see [`Context`](crate::Context)).
    pub data_type: Option<DataType>,
    /// A virtual tensor lives only inside a fused engine and is never given a buffer.
    pub is_virtual: bool,
    /// The value when the tensor is passed by value from the host.
    pub pass_by_value: Option<Scalar>,
    /// Offsets tensor (B+1 entries) of a ragged (THD) layout.
    pub ragged_offset: Option<TensorId>,
}

impl Tensor {
    /// A non-virtual tensor with the given name, dims and strides, and no declared type.
    pub fn new(name: impl Into<String>, dims: &[i64], strides: &[i64]) -> Self {
        Tensor {
            name: name.into(),
            uid: None,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            data_type: None,
            is_virtual: false,
            pass_by_value: None,
            ragged_offset: None,
        }
    }

    /// A tensor with compact row-major (last dim fastest) strides.
    pub fn packed(name: impl Into<String>, dims: &[i64]) -> Self {
        Tensor::new(name, dims, &packed_strides(dims))
    }

    /// A rank-4 (B, H, S, D) tensor stored as BSHD (heads interleaved within a sequence row).
    /// Strides saturate on overflow, like [`packed_strides`] (validation reports the size).
    pub fn bshd(name: impl Into<String>, dims: [i64; 4]) -> Self {
        let [_, h, s, d] = dims;
        let row = h.saturating_mul(d);
        Tensor::new(name, &dims, &[s.saturating_mul(row), d, row, 1])
    }

    /// A (1,1,1,1) f32 scalar passed by value.
    pub fn scalar_f32(name: impl Into<String>, value: f32) -> Self {
        Tensor::packed(name, &[1, 1, 1, 1])
            .with_data_type(DataType::F32)
            .with_value(Scalar::F32(value))
    }

    /// Sets the declared data type.
    pub fn with_data_type(mut self, data_type: DataType) -> Self {
        self.data_type = Some(data_type);
        self
    }

    /// Sets the user id.
    pub fn with_uid(mut self, uid: i64) -> Self {
        self.uid = Some(uid);
        self
    }

    /// Marks the tensor virtual (engine-internal) or not.
    pub fn with_virtual(mut self, is_virtual: bool) -> Self {
        self.is_virtual = is_virtual;
        self
    }

    /// Passes the tensor by value.
    pub fn with_value(mut self, value: Scalar) -> Self {
        self.pass_by_value = Some(value);
        self
    }

    /// Links a ragged-offset tensor.
    pub fn with_ragged_offset(mut self, offsets: TensorId) -> Self {
        self.ragged_offset = Some(offsets);
        self
    }

    /// Rank (number of dims).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements, `None` when a dim is negative or the product overflows.
    pub fn element_count(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |acc, &d| {
            u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
    }

    /// Elements spanned in memory: 1 + sum((dim - 1) * stride), the buffer length a strided
    /// tensor needs. `None` on overflow, negative strides, or a zero dim.
    pub fn span_elements(&self) -> Option<u64> {
        let mut last = 0u64;
        for (&d, &s) in self.dims.iter().zip(&self.strides) {
            let d = u64::try_from(d).ok().filter(|&d| d > 0)?;
            let s = u64::try_from(s).ok()?;
            last = last.checked_add((d - 1).checked_mul(s)?)?;
        }
        last.checked_add(1)
    }

    /// Elements a buffer of the tensor holds when the caller lays it out itself: its strided
    /// span, or for a ragged tensor (whose batch stride is unused) B sequences of S tokens
    /// packed one after another, which any offsets of sequences no longer than S fit without
    /// gaps (the engine checks the actual offsets at execution). `None` as [`Self::span_elements`].
    pub fn buffer_elements(&self) -> Option<u64> {
        if self.ragged_offset.is_none() {
            return self.span_elements();
        }
        let (&batch, rest) = self.dims.split_first()?;
        let sequence = Tensor::new("", &[&[1], rest].concat(), &self.strides);
        sequence
            .span_elements()?
            .checked_mul(u64::try_from(batch).ok()?)
    }

    /// True when the strides are the compact row-major strides of the dims.
    pub fn is_packed(&self) -> bool {
        self.strides == packed_strides(&self.dims)
    }
}

/// Compact row-major strides (last dim fastest) of `dims`, saturating on overflow.
pub fn packed_strides(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1].max(1));
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_and_spans() {
        assert_eq!(packed_strides(&[2, 3, 4, 5]), vec![60, 20, 5, 1]);
        let t = Tensor::bshd("q", [2, 4, 8, 16]);
        assert_eq!(t.strides, vec![512, 16, 64, 1]);
        assert_eq!(t.span_elements(), Some(2 * 4 * 8 * 16));
        assert_eq!(t.element_count(), Some(1024));
        let huge = Tensor::packed("h", &[i64::MAX, 4]);
        assert_eq!(huge.element_count(), None);
        let zero = Tensor::packed("z", &[0, 4]);
        assert_eq!(zero.span_elements(), None);
    }

    #[test]
    fn a_ragged_buffer_holds_full_sequences_packed() {
        // THD with cuDNN's strides: the batch stride is the token stride.
        let thd = Tensor::new("q", &[3, 2, 5, 4], &[8, 4, 8, 1]);
        assert_eq!(thd.buffer_elements(), thd.span_elements());
        let ragged = thd.with_ragged_offset(TensorId(9));
        assert_eq!(ragged.buffer_elements(), Some(3 * 5 * 8));
    }

    #[test]
    fn huge_bshd_dims_saturate_instead_of_panicking() {
        let t = Tensor::bshd("q", [1, 2, i64::MAX / 2, 64]);
        assert_eq!(t.strides, vec![i64::MAX, 64, 128, 1]);
        assert_eq!(t.span_elements(), None);
    }
}
