//! Tile products through the `gemm` crate, behind a bounds-checked, safe wrapper.
//!
//! Every product runs single-threaded (`Parallelism::None`): parallelism comes from the
//! (batch, head) tasks, and a fixed summation order per product keeps results bitwise
//! reproducible.

use super::element::Real;

/// A read-only matrix inside a slice: element (r, c) is `data[r * rs + c * cs]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mat<'a, A> {
    pub data: &'a [A],
    pub rows: usize,
    pub cols: usize,
    pub rs: usize,
    pub cs: usize,
}

impl<'a, A> Mat<'a, A> {
    /// Row-major `rows x cols` matrix.
    pub fn rows(data: &'a [A], rows: usize, cols: usize) -> Self {
        Mat {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose (no copy).
    pub fn t(self) -> Self {
        Mat {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }

    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.rs + (self.cols - 1) * self.cs < self.data.len()
    }
}

/// dst (m x n, row-major with row stride `n`) = `beta` * lhs * rhs, plus dst when `accumulate`.
///
/// Panics when the operands do not fit their slices or their sizes disagree (internal misuse,
/// never user data: callers size every tile from the checked problem).
pub(crate) fn matmul<A: Real>(
    dst: &mut [A],
    lhs: Mat<'_, A>,
    rhs: Mat<'_, A>,
    beta: A,
    accumulate: bool,
) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert_eq!(rhs.rows, k, "inner dims of a tile product");
    assert!(
        lhs.fits() && rhs.fits() && dst.len() >= m * n,
        "tile product out of bounds"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(A::zero());
        }
        return;
    }
    // SAFETY: the asserts above keep every element gemm reads (lhs, rhs) or writes (dst, m x n
    // with row stride n) inside its slice; dst is exclusively borrowed and cannot alias the
    // shared lhs/rhs borrows; A is f32 or f64, both of which gemm implements.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.cs as isize,
            lhs.rs as isize,
            rhs.data.as_ptr(),
            rhs.cs as isize,
            rhs.rs as isize,
            A::one(),
            beta,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_loops() {
        let a: Vec<f64> = (0..6).map(f64::from).collect(); // 2 x 3
        let b: Vec<f64> = (0..12).map(|x| f64::from(x) * 0.5).collect(); // 3 x 4
        let mut c = vec![1.0; 8];
        matmul(&mut c, Mat::rows(&a, 2, 3), Mat::rows(&b, 3, 4), 2.0, true);
        for i in 0..2 {
            for j in 0..4 {
                let want: f64 =
                    (0..3).map(|k| a[i * 3 + k] * b[k * 4 + j]).sum::<f64>() * 2.0 + 1.0;
                assert_eq!(c[i * 4 + j], want);
            }
        }
        // transposed operands: (a^T)^T = a
        let at: Vec<f64> = (0..3)
            .flat_map(|k| (0..2).map(move |i| (i * 3 + k) as f64))
            .collect();
        let mut d = vec![0.0; 8];
        matmul(
            &mut d,
            Mat::rows(&at, 3, 2).t(),
            Mat::rows(&b, 3, 4),
            2.0,
            false,
        );
        assert!(d.iter().zip(&c).all(|(x, y)| x + 1.0 == *y));
    }
}
