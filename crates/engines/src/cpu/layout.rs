//! Strided rank-4 views of host memory: where element (b, h, s, d) lives, and packing of rows
//! into contiguous tiles (and back) for the tile products.
//!
//! A dim of size 1 broadcasts: any index along it reads element 0. That is how a (1, Hq, Sq, Skv)
//! bias serves every batch, and how K serves its group of query heads (the caller passes the kv
//! head index). A ragged tensor ([`Ragged`]) places each batch at its own offset instead of at a
//! multiple of the batch stride.

use std::ops::Range;

use half::{bf16, f16};
use rime_graph::DataType;

use super::element::{Element, Real};
use super::ragged::Ragged;
use crate::EngineError;

/// Logical dims and element strides of a rank-4 tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View4 {
    /// Dims (B, H, S, D).
    pub dims: [usize; 4],
    /// Strides in elements.
    pub strides: [usize; 4],
}

impl View4 {
    /// Checks and converts graph dims/strides (i64) into a view.
    ///
    /// # Errors
    /// [`EngineError::BadLayout`] when the rank is not 4, a dim is not positive, a stride is
    /// negative, or the span overflows.
    pub fn new(tensor: &str, dims: &[i64], strides: &[i64]) -> Result<View4, EngineError> {
        let bad = || EngineError::BadLayout {
            tensor: tensor.to_owned(),
            dims: dims.to_vec(),
            strides: strides.to_vec(),
        };
        if dims.len() != 4 || strides.len() != 4 {
            return Err(bad());
        }
        let mut view = View4 {
            dims: [0; 4],
            strides: [0; 4],
        };
        for k in 0..4 {
            view.dims[k] = usize::try_from(dims[k])
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(bad)?;
            view.strides[k] = usize::try_from(strides[k]).map_err(|_| bad())?;
        }
        view.span().ok_or_else(bad)?;
        Ok(view)
    }

    /// Packed row-major view of `dims`.
    pub fn packed(dims: [usize; 4]) -> View4 {
        let strides = [dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1];
        View4 { dims, strides }
    }

    /// Elements a buffer must hold: 1 + sum((dim - 1) * stride); `None` on overflow.
    pub fn span(&self) -> Option<usize> {
        self.dims
            .iter()
            .zip(&self.strides)
            .try_fold(1usize, |acc, (&d, &s)| {
                acc.checked_add((d - 1).checked_mul(s)?)
            })
    }

    /// Offset of element (b, h, s, d); dims of size 1 broadcast.
    #[inline]
    pub fn offset(&self, b: usize, h: usize, s: usize, d: usize) -> usize {
        let at = |k: usize, i: usize| {
            if self.dims[k] == 1 {
                0
            } else {
                i * self.strides[k]
            }
        };
        at(0, b) + at(1, h) + at(2, s) + at(3, d)
    }
}

/// Borrowed host elements of one of the float types.
#[derive(Debug, Clone, Copy)]
pub enum HostSlice<'a> {
    /// f16 elements.
    F16(&'a [f16]),
    /// bf16 elements.
    Bf16(&'a [bf16]),
    /// f32 elements.
    F32(&'a [f32]),
    /// f64 elements.
    F64(&'a [f64]),
}

/// Mutably borrowed host elements of one of the float types.
#[derive(Debug)]
pub enum HostSliceMut<'a> {
    /// f16 elements.
    F16(&'a mut [f16]),
    /// bf16 elements.
    Bf16(&'a mut [bf16]),
    /// f32 elements.
    F32(&'a mut [f32]),
    /// f64 elements.
    F64(&'a mut [f64]),
}

macro_rules! with_slice {
    ($data:expr, $s:ident => $body:expr) => {
        match $data {
            HostSlice::F16($s) => $body,
            HostSlice::Bf16($s) => $body,
            HostSlice::F32($s) => $body,
            HostSlice::F64($s) => $body,
        }
    };
}

macro_rules! with_slice_mut {
    ($data:expr, $s:ident => $body:expr) => {
        match $data {
            HostSliceMut::F16($s) => $body,
            HostSliceMut::Bf16($s) => $body,
            HostSliceMut::F32($s) => $body,
            HostSliceMut::F64($s) => $body,
        }
    };
}

impl HostSlice<'_> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        with_slice!(self, s => s.len())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element type.
    pub fn data_type(&self) -> DataType {
        match self {
            HostSlice::F16(_) => DataType::F16,
            HostSlice::Bf16(_) => DataType::Bf16,
            HostSlice::F32(_) => DataType::F32,
            HostSlice::F64(_) => DataType::F64,
        }
    }
}

impl HostSliceMut<'_> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        with_slice_mut!(self, s => s.len())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named, strided, read-only rank-4 tensor whose span is known to fit its slice (a ragged
/// one: whose offsets are; its sequences are checked against the problem's lengths).
#[derive(Debug, Clone, Copy)]
pub struct TensorRef<'a> {
    name: &'a str,
    data: HostSlice<'a>,
    view: View4,
    ragged: Option<Ragged<'a>>,
}

/// A named, strided, writable rank-4 tensor whose span is known to fit its slice (a ragged
/// one: whose offsets are).
#[derive(Debug)]
pub struct TensorMut<'a> {
    name: &'a str,
    data: HostSliceMut<'a>,
    view: View4,
    ragged: Option<Ragged<'a>>,
}

/// Where batch `b` of a tensor starts: its offset when ragged, else b x the batch stride.
#[inline]
fn batch_base(view: &View4, ragged: Option<&Ragged<'_>>, b: usize) -> usize {
    match ragged {
        Some(r) => r.start(b),
        None => view.offset(b, 0, 0, 0),
    }
}

fn check_span(name: &str, view: &View4, len: usize) -> Result<(), EngineError> {
    let needed = view.span().ok_or_else(|| EngineError::BadLayout {
        tensor: name.to_owned(),
        dims: view.dims.iter().map(|&d| d as i64).collect(),
        strides: view.strides.iter().map(|&s| s as i64).collect(),
    })?;
    if needed > len {
        return Err(EngineError::BufferTooSmall {
            tensor: name.to_owned(),
            needed,
            len,
        });
    }
    Ok(())
}

impl<'a> TensorRef<'a> {
    /// Wraps `data` as a tensor of layout `view`.
    ///
    /// # Errors
    /// [`EngineError::BufferTooSmall`] when the view's span exceeds the slice.
    pub fn new(name: &'a str, data: HostSlice<'a>, view: View4) -> Result<Self, EngineError> {
        check_span(name, &view, data.len())?;
        Ok(TensorRef {
            name,
            data,
            view,
            ragged: None,
        })
    }

    /// Wraps `data` as a ragged tensor of layout `view` whose batches start at `ragged`'s
    /// offsets.
    ///
    /// # Errors
    /// As [`Ragged`]'s checks: B + 1 offsets, not decreasing, the last within the slice.
    pub fn ragged(
        name: &'a str,
        data: HostSlice<'a>,
        view: View4,
        ragged: Ragged<'a>,
    ) -> Result<Self, EngineError> {
        ragged.check(name, &view, data.len())?;
        Ok(TensorRef {
            name,
            data,
            view,
            ragged: Some(ragged),
        })
    }

    /// The offsets of a ragged tensor.
    pub fn ragged_offsets(&self) -> Option<&Ragged<'a>> {
        self.ragged.as_ref()
    }

    /// Tensor name (for errors).
    pub fn name(&self) -> &str {
        self.name
    }

    /// Layout.
    pub fn view(&self) -> &View4 {
        &self.view
    }

    /// Element (b, h, s, d) in the math type.
    pub fn get<A: Real>(&self, b: usize, h: usize, s: usize, d: usize) -> A {
        let at = batch_base(&self.view, self.ragged.as_ref(), b) + self.view.offset(0, h, s, d);
        with_slice!(self.data, x => x[at].load())
    }

    /// Packs rows `rows` (dim 2) of head (b, h), columns `cols` of dim 3, row-major into `out`
    /// (cleared first).
    pub fn gather<A: Real>(
        &self,
        b: usize,
        h: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut Vec<A>,
    ) {
        out.clear();
        let base = batch_base(&self.view, self.ragged.as_ref(), b);
        with_slice!(self.data, x => gather_rows(x, &self.view, base, h, rows, cols, out));
    }
}

/// Rows `rows` of head `h` of the batch that starts at element `base`.
fn gather_rows<E: Element, A: Real>(
    x: &[E],
    view: &View4,
    base: usize,
    h: usize,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut Vec<A>,
) {
    for s in rows {
        if view.strides[3] == 1 && view.dims[3] > 1 {
            let row = base + view.offset(0, h, s, 0);
            out.extend(
                x[row + cols.start..row + cols.end]
                    .iter()
                    .map(|e| e.load::<A>()),
            );
        } else {
            out.extend(
                cols.clone()
                    .map(|d| x[base + view.offset(0, h, s, d)].load::<A>()),
            );
        }
    }
}

impl<'a> TensorMut<'a> {
    /// Wraps `data` as a writable tensor of layout `view`.
    ///
    /// # Errors
    /// [`EngineError::BufferTooSmall`] when the view's span exceeds the slice.
    pub fn new(name: &'a str, data: HostSliceMut<'a>, view: View4) -> Result<Self, EngineError> {
        check_span(name, &view, data.len())?;
        Ok(TensorMut {
            name,
            data,
            view,
            ragged: None,
        })
    }

    /// Wraps `data` as a writable ragged tensor of layout `view` whose batches start at
    /// `ragged`'s offsets.
    ///
    /// # Errors
    /// As [`TensorRef::ragged`].
    pub fn ragged(
        name: &'a str,
        data: HostSliceMut<'a>,
        view: View4,
        ragged: Ragged<'a>,
    ) -> Result<Self, EngineError> {
        ragged.check(name, &view, data.len())?;
        Ok(TensorMut {
            name,
            data,
            view,
            ragged: Some(ragged),
        })
    }

    /// The offsets of a ragged tensor.
    pub fn ragged_offsets(&self) -> Option<&Ragged<'a>> {
        self.ragged.as_ref()
    }

    /// The rows of one (batch, head) to write, of `full` rows of which `tokens` are real: a
    /// ragged sequence has memory for its real tokens only, a padded tensor for all of them
    /// (its padded rows are written too, as zero gradients or +inf Stats).
    pub fn rows(&self, tokens: usize, full: usize) -> Range<usize> {
        if self.ragged.is_some() {
            0..tokens
        } else {
            0..full
        }
    }

    /// Tensor name (for errors).
    pub fn name(&self) -> &str {
        self.name
    }

    /// Layout.
    pub fn view(&self) -> &View4 {
        &self.view
    }

    /// Writes packed row-major `src` (rows x width) into rows `rows` of head (b, h).
    pub fn scatter<A: Real>(
        &mut self,
        b: usize,
        h: usize,
        rows: Range<usize>,
        width: usize,
        src: &[A],
    ) {
        let view = self.view;
        let base = batch_base(&view, self.ragged.as_ref(), b);
        with_slice_mut!(&mut self.data, x => scatter_rows(x, &view, base, h, rows, width, src));
    }

    /// Writes one element.
    pub fn set<A: Real>(&mut self, b: usize, h: usize, s: usize, d: usize, value: A) {
        let at = batch_base(&self.view, self.ragged.as_ref(), b) + self.view.offset(0, h, s, d);
        with_slice_mut!(&mut self.data, x => x[at] = Element::store(value));
    }
}

/// Writes rows `rows` of head `h` of the batch that starts at element `base`.
fn scatter_rows<E: Element, A: Real>(
    x: &mut [E],
    view: &View4,
    base: usize,
    h: usize,
    rows: Range<usize>,
    width: usize,
    src: &[A],
) {
    for (r, s) in rows.enumerate() {
        let from = &src[r * width..(r + 1) * width];
        for (d, &v) in from.iter().enumerate() {
            x[base + view.offset(0, h, s, d)] = E::store(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_check_layouts_and_spans() {
        let v = View4::new("Q", &[2, 3, 4, 5], &[60, 5, 15, 1]).unwrap();
        assert_eq!(v.span(), Some(120));
        assert_eq!(v.offset(1, 2, 3, 4), 60 + 10 + 45 + 4);
        assert!(View4::new("Q", &[2, 3, 4], &[12, 4, 1]).is_err());
        assert!(View4::new("Q", &[2, 0, 4, 1], &[4, 4, 1, 1]).is_err());
        let data = [0.0f32; 119];
        let err = TensorRef::new("Q", HostSlice::F32(&data), v).unwrap_err();
        assert_eq!(
            err,
            EngineError::BufferTooSmall {
                tensor: "Q".into(),
                needed: 120,
                len: 119
            }
        );
    }

    #[test]
    fn gather_and_scatter_honour_strides_and_broadcast() {
        // (1, 2, 2, 2) stored BSHD: strides (8, 2, 4, 1).
        let data: Vec<f32> = (0..8).map(|x| x as f32).collect();
        let view = View4::new("K", &[1, 2, 2, 2], &[8, 2, 4, 1]).unwrap();
        let t = TensorRef::new("K", HostSlice::F32(&data), view).unwrap();
        let mut out = Vec::new();
        t.gather::<f64>(5, 1, 0..2, 0..2, &mut out); // batch broadcasts
        assert_eq!(out, vec![2.0, 3.0, 6.0, 7.0]);
        let mut dst = vec![f16::ZERO; 8];
        let mut m = TensorMut::new("dK", HostSliceMut::F16(&mut dst), view).unwrap();
        m.scatter(0, 1, 0..2, 2, &out);
        assert_eq!(dst[6].to_f32(), 6.0);
        assert_eq!(dst[0].to_f32(), 0.0);
    }
}
