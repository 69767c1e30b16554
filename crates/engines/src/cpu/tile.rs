//! One score tile: rows of a query block against a range of keys, scaled, biased, with ALiBi,
//! masked entries at -inf. Forward and backward both start from it.

use std::ops::Range;

use super::dropout::MaskSource;
use super::element::Real;
use super::gemm::{matmul, Mat};
use super::layout::TensorRef;
use super::mask::HeadMask;

/// Where a tile sits: batch, query head, query rows, key columns.
#[derive(Debug, Clone)]
pub(crate) struct TileAt {
    pub b: usize,
    pub h: usize,
    pub rows: Range<usize>,
    pub cols: Range<usize>,
}

/// `s` (rows x cols, row-major) = scale * Q_rows K_cols^T + Bias + slope * (j - i), -inf where
/// the mask drops the entry. `q` holds the block's rows packed (rows x Dqk), `k` all valid keys
/// packed (kv_len x Dqk).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scores<A: Real>(
    at: &TileAt,
    mask: &HeadMask,
    scale: A,
    bias: Option<&TensorRef<'_>>,
    q: &[A],
    k: &[A],
    dqk: usize,
    s: &mut Vec<A>,
    scratch: &mut Vec<A>,
) {
    let (m, n) = (at.rows.len(), at.cols.len());
    s.clear();
    s.resize(m * n, A::zero());
    let k_cols = &k[at.cols.start * dqk..at.cols.end * dqk];
    matmul(
        s,
        Mat::rows(q, m, dqk),
        Mat::rows(k_cols, n, dqk).t(),
        scale,
        false,
    );
    if let Some(bias) = bias {
        for (r, i) in at.rows.clone().enumerate() {
            bias.gather(at.b, at.h, i..i + 1, at.cols.clone(), scratch);
            let row = &mut s[r * n..(r + 1) * n];
            for (x, &bv) in row.iter_mut().zip(scratch.iter()) {
                *x += bv;
            }
        }
    }
    for (r, i) in at.rows.clone().enumerate() {
        let row = &mut s[r * n..(r + 1) * n];
        // Kept keys of row i, as positions within the tile.
        let keep = mask.row(i);
        let lo = keep.start.clamp(at.cols.start, at.cols.end) - at.cols.start;
        let hi = keep.end.clamp(at.cols.start, at.cols.end) - at.cols.start;
        let hi = hi.max(lo);
        row[..lo].fill(A::neg_infinity());
        row[hi..].fill(A::neg_infinity());
        if let Some(slope) = mask.alibi_slope {
            for (x, j) in row[lo..hi].iter_mut().zip(at.cols.start + lo..) {
                *x += A::of_f64(slope * (j as f64 - i as f64));
            }
        }
    }
}

/// `p` (rows x cols, row-major) times mask x scale, elementwise: the dropped probabilities of
/// a tile (cuDNN's `Dropout_mask` / `Dropout_scale`; a given mask broadcasts like a bias, a
/// Philox mask is 0 / 1 from its stream).
pub(crate) fn drop_out<A: Real>(
    at: &TileAt,
    mask: &MaskSource<'_, '_>,
    scale: A,
    p: &mut [A],
    scratch: &mut Vec<A>,
) {
    let n = at.cols.len();
    for (r, i) in at.rows.clone().enumerate() {
        mask.row(at.b, at.h, i, at.cols.clone(), scratch);
        for (x, &m) in p[r * n..(r + 1) * n].iter_mut().zip(scratch.iter()) {
            *x = *x * m * scale;
        }
    }
}
