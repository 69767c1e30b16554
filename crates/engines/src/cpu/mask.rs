//! Which scores are kept: diagonal band (causal, sliding window; top-left or bottom-right),
//! padding, and the ALiBi slopes.
//!
//! Semantics (docs/sdpa-backward.md, section 2): with shift d = 0 (top-left) or kv_len - q_len
//! (bottom-right, per batch), keep (i, j) iff j <= i + d + right_bound (if set), j > i + d -
//! left_bound (if set), i < q_len and j < kv_len.

use std::ops::Range;

/// The mask of one (batch, query head).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HeadMask {
    /// Valid query rows.
    pub q_len: usize,
    /// Valid keys.
    pub kv_len: usize,
    /// Diagonal shift.
    pub shift: i64,
    /// Sliding-window bound.
    pub left_bound: Option<i64>,
    /// Causal-like bound.
    pub right_bound: Option<i64>,
    /// ALiBi slope of this head.
    pub alibi_slope: Option<f64>,
}

impl HeadMask {
    /// Columns that may be kept for any row of `rows` (a superset; `keep` decides per entry).
    pub fn columns(&self, rows: &Range<usize>) -> Range<usize> {
        if rows.is_empty() {
            return 0..0;
        }
        let first = rows.start as i64 + self.shift;
        let last = rows.end as i64 - 1 + self.shift;
        // Saturating: bounds come from the user and may be extreme.
        let lo = self
            .left_bound
            .map_or(0, |l| first.saturating_sub(l).saturating_add(1))
            .max(0);
        let hi = self
            .right_bound
            .map_or(self.kv_len as i64, |r| {
                last.saturating_add(r).saturating_add(1)
            })
            .min(self.kv_len as i64);
        if lo >= hi {
            0..0
        } else {
            lo as usize..hi as usize
        }
    }

    /// The keys row `i` keeps (the band is contiguous): `keep(i, j)` iff `j` is in it.
    pub fn row(&self, i: usize) -> Range<usize> {
        if i >= self.q_len {
            return 0..0;
        }
        self.columns(&(i..i + 1))
    }

    /// True when score (i, j) takes part in the softmax: the definition `row` is tested against.
    #[cfg(test)]
    pub fn keep(&self, i: usize, j: usize) -> bool {
        if i >= self.q_len || j >= self.kv_len {
            return false;
        }
        let (i, j) = (i as i64 + self.shift, j as i64);
        self.right_bound.is_none_or(|r| j <= i.saturating_add(r))
            && self.left_bound.is_none_or(|l| j > i.saturating_sub(l))
    }
}

/// The standard ALiBi slopes for `heads` heads: with n = 2^floor(log2 heads), 2^(-8(k+1)/n) for
/// k < n, then 2^(-4(2m+1)/n) for the remaining heads.
pub(crate) fn alibi_slopes(heads: usize) -> Vec<f64> {
    if heads == 0 {
        return Vec::new();
    }
    let n = 1usize << heads.ilog2();
    let nf = n as f64;
    let mut slopes: Vec<f64> = (0..n)
        .map(|k| (-8.0 * (k as f64 + 1.0) / nf).exp2())
        .collect();
    slopes.extend((0..heads - n).map(|m| (-4.0 * (2.0 * m as f64 + 1.0) / nf).exp2()));
    slopes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(q: usize, kv: usize, shift: i64, l: Option<i64>, r: Option<i64>) -> HeadMask {
        HeadMask {
            q_len: q,
            kv_len: kv,
            shift,
            left_bound: l,
            right_bound: r,
            alibi_slope: None,
        }
    }

    #[test]
    fn column_ranges_cover_exactly_the_kept_entries() {
        for m in [
            mask(5, 7, 0, None, Some(0)),
            mask(5, 7, 2, None, Some(0)),
            mask(5, 7, 2, Some(2), Some(1)),
            mask(4, 3, -1, Some(1), None),
            mask(6, 6, 0, None, None),
            mask(3, 4, 1, Some(i64::MAX), Some(i64::MAX)),
            mask(3, 4, -1, Some(i64::MIN), Some(i64::MIN)),
        ] {
            for i0 in 0..m.q_len {
                for i1 in i0 + 1..=m.q_len {
                    let cols = m.columns(&(i0..i1));
                    for i in i0..i1 {
                        for j in 0..8 {
                            assert_eq!(m.keep(i, j), m.row(i).contains(&j), "{m:?} ({i}, {j})");
                            if m.keep(i, j) {
                                assert!(cols.contains(&j), "{m:?} rows {i0}..{i1} col {j}");
                            }
                        }
                    }
                }
            }
        }
        let causal = mask(3, 3, 0, None, Some(0));
        assert!(causal.keep(1, 1) && !causal.keep(1, 2));
        let window = mask(5, 5, 0, Some(2), Some(0));
        assert!(window.keep(3, 2) && !window.keep(3, 1));
    }

    #[test]
    fn slopes_follow_the_standard_recipe() {
        let s = alibi_slopes(8);
        assert_eq!(s[0], 0.5);
        assert_eq!(s[7], 1.0 / 256.0);
        let s = alibi_slopes(6); // n = 4: 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3
        assert_eq!(s, vec![0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]);
    }
}
