//! Whether a strided layout maps two logical elements to one memory element: an output laid
//! out that way would be written twice in one place (a race on a GPU, a silently lost value on
//! the CPU), so validation refuses it for outputs. Inputs may overlap (a stride of 0 broadcasts
//! a read), like PyTorch's expanded views.

use crate::Tensor;

impl Tensor {
    /// True when two distinct indices may share a memory element ([`layout_overlaps`]).
    ///
    /// A ragged (THD) tensor's sequences are placed by its offsets, not by its batch stride
    /// (which is then unused): only the layout of one sequence, (H, S, D), is tested here. That
    /// sequences do not overlap each other depends on the offsets, which only execution sees.
    pub fn overlaps_itself(&self) -> bool {
        let placed_by_offsets = usize::from(self.ragged_offset.is_some());
        let skip = placed_by_offsets.min(self.dims.len());
        layout_overlaps(
            &self.dims[skip..],
            &self.strides[skip.min(self.strides.len())..],
        )
    }
}

/// True when two distinct indices of (dims, strides) may share a memory element.
///
/// The test is the usual sufficient condition for a non-overlapping layout: with the dims of
/// extent > 1 ordered by stride, each stride must exceed the span of all smaller ones (sum of
/// (dim - 1) * stride). Every BHSD, BSHD, interleaved or padded-row layout passes; an exotic
/// interleaving that does not overlap but fails the test is reported too (use a plain layout
/// for outputs). Layouts with negative strides or dims < 1 are validation errors of their own
/// and report `false` here.
pub fn layout_overlaps(dims: &[i64], strides: &[i64]) -> bool {
    let mut axes: Vec<(u64, u64)> = Vec::with_capacity(dims.len());
    for (&d, &s) in dims.iter().zip(strides) {
        let (Ok(d), Ok(s)) = (u64::try_from(d), u64::try_from(s)) else {
            return false;
        };
        if d > 1 {
            axes.push((s, d));
        }
    }
    axes.sort_unstable();
    let mut span = 0u64; // largest offset reachable with the smaller-stride axes
    for (stride, dim) in axes {
        if stride <= span {
            return true;
        }
        let Some(reach) = (dim - 1)
            .checked_mul(stride)
            .and_then(|r| r.checked_add(span))
        else {
            return false; // the size check reports the overflow
        };
        span = reach;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    fn overlaps(dims: &[i64], strides: &[i64]) -> bool {
        Tensor::new("t", dims, strides).overlaps_itself()
    }

    #[test]
    fn plain_layouts_do_not_overlap() {
        assert!(!overlaps(&[2, 4, 64, 64], &[16384, 4096, 64, 1]));
        assert!(!Tensor::bshd("t", [2, 4, 64, 64]).overlaps_itself());
        // Padded rows and size-1 dims with any stride.
        assert!(!overlaps(&[2, 4, 64, 64], &[20000, 5000, 72, 1]));
        assert!(!overlaps(&[1, 4, 1, 64], &[0, 64, 0, 1]));
    }

    #[test]
    fn shared_elements_overlap() {
        assert!(overlaps(&[2, 4, 64, 64], &[0, 4096, 64, 1]));
        assert!(overlaps(&[2, 4, 64, 64], &[16384, 64, 64, 1]));
        assert!(overlaps(&[2, 4, 64, 64], &[16384, 4096, 32, 1]));
        assert!(overlaps(&[2, 2], &[1, 1]));
    }

    #[test]
    fn a_ragged_tensor_is_tested_per_sequence() {
        // cuDNN's THD strides: the batch stride equals the token stride, since the offsets
        // place each sequence.
        let thd = Tensor::new("t", &[2, 4, 64, 64], &[256, 64, 256, 1]);
        assert!(thd.overlaps_itself());
        let ragged = thd.with_ragged_offset(crate::TensorId(1));
        assert!(!ragged.overlaps_itself());
        let heads_overlap = Tensor::new("t", &[2, 4, 64, 64], &[256, 32, 256, 1])
            .with_ragged_offset(crate::TensorId(1));
        assert!(heads_overlap.overlaps_itself());
    }

    #[test]
    fn bad_layouts_are_left_to_their_own_errors() {
        assert!(!overlaps(&[2, 4], &[-1, 1]));
        assert!(!overlaps(&[0, 4], &[4, 1]));
        assert!(!overlaps(&[i64::MAX, 4], &[i64::MAX, 1]));
    }
}
