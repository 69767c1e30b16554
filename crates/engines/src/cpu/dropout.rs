//! Philox dropout: the keep mask the CPU engine draws from a dropout probability p, a Seed and
//! an Offset (cuDNN's `dropout_probability`, `Seed`, `Offset`), and where a tile's mask comes
//! from (that stream or a given `Dropout_mask`).
//!
//! The stream is rime's own (docs/cpu-engine.md, "Philox dropout"): cuDNN does not document
//! its generator's layout, so it is not bit-matched to cuDNN, PyTorch or FlashAttention. What
//! training needs holds: the same (Seed, Offset) gives the same mask in the forward and the
//! backward. Element (b, h, i, j) of the (B, Hq, Sq, Skv) scores has the linear index
//! L = ((b Hq + h) Sq + i) Skv + j; with key = (seed low 32 bits, seed high 32 bits) and the
//! 128-bit counter offset * 2^64 + floor(L / 4) (word 0 its lowest 32 bits), its 32-bit draw x
//! is output word L mod 4 of Philox4x32-10, and it is kept iff u = x / 2^32 >= p.

use std::ops::Range;

use super::element::Real;
use super::layout::{TensorMut, TensorRef};
use super::philox::philox4x32_10;
use super::problem::{Dropout, ProblemShape};
use crate::EngineError;

/// 2^32, the number of 32-bit draws.
const DRAWS: f64 = 4_294_967_296.0;

/// A dropout probability with its Philox stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhiloxDropout {
    /// Probability of dropping an element, in [0, 1).
    pub probability: f32,
    /// The Seed tensor's value, as 64 bits (an i32 or i64 seed's two's complement bits).
    pub seed: u64,
    /// The Offset tensor's value, as 64 bits: the high half of every counter.
    pub offset: u64,
}

/// A usize widened to 128 bits (lossless: usize is at most 64 bits wide).
fn wide(x: usize) -> u128 {
    u128::try_from(x).unwrap_or(u128::MAX)
}

/// Four 32-bit words of a 128-bit value, lowest first.
fn words(x: u128) -> [u32; 4] {
    let b = x.to_le_bytes();
    [0, 4, 8, 12].map(|i| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]))
}

impl PhiloxDropout {
    /// The scales cuDNN derives from the probability, each rounded to f32 as cuDNN's float
    /// scale tensors are: `Dropout_scale` 1 / (1 - p) and `Dropout_scale_inv` 1 - p. Feeding
    /// these, with the RNG_DUMP as `Dropout_mask`, runs the same arithmetic bit for bit.
    pub fn scales(&self) -> Dropout {
        let keep = 1.0f32 - self.probability;
        Dropout {
            scale: f64::from(1.0f32 / keep),
            scale_inv: f64::from(keep),
        }
    }

    fn key(&self) -> [u32; 2] {
        let [a, b, c, d, e, f, g, h] = self.seed.to_le_bytes();
        [
            u32::from_le_bytes([a, b, c, d]),
            u32::from_le_bytes([e, f, g, h]),
        ]
    }

    /// The counter of linear score index `index`: offset * 2^64 + floor(index / 4).
    fn counter(&self, index: u128) -> u128 {
        (u128::from(self.offset) << 64).wrapping_add(index / 4)
    }

    /// The 32-bit draw of linear score index `index`.
    fn draw(&self, key: [u32; 2], index: u128) -> u32 {
        philox4x32_10(words(self.counter(index)), key)[lane(index)]
    }

    /// True when a draw keeps its element: u = x / 2^32 >= p, compared exactly (p has 24
    /// significant bits, so p 2^32 is exact in f64).
    fn keeps_draw(&self, x: u32) -> bool {
        f64::from(x) >= f64::from(self.probability) * DRAWS
    }

    /// Whether score (b, h, i, j) of a problem of `shape` is kept.
    pub fn keeps(&self, shape: &ProblemShape, b: usize, h: usize, i: usize, j: usize) -> bool {
        self.keeps_draw(self.draw(self.key(), linear(shape, b, h, i) + wide(j)))
    }

    /// The 0 / 1 keep mask of row i, keys `cols`, of head (b, h), into `out`. Draws come four
    /// per Philox block; a block shared by neighbouring keys is computed once.
    fn row<A: Real>(
        &self,
        shape: &ProblemShape,
        (b, h, i): (usize, usize, usize),
        cols: Range<usize>,
        out: &mut Vec<A>,
    ) {
        let key = self.key();
        let base = linear(shape, b, h, i);
        out.clear();
        let mut block: Option<(u128, [u32; 4])> = None;
        for j in cols {
            let index = base + wide(j);
            let counter = self.counter(index);
            let draws = match block {
                Some((c, d)) if c == counter => d,
                _ => {
                    let d = philox4x32_10(words(counter), key);
                    block = Some((counter, d));
                    d
                }
            };
            out.push(if self.keeps_draw(draws[lane(index)]) {
                A::one()
            } else {
                A::zero()
            });
        }
    }
}

/// Which of a block's four words belongs to linear score index `index`: index mod 4.
fn lane(index: u128) -> usize {
    usize::from(index.to_le_bytes()[0] & 3)
}

/// Linear index of score (b, h, i, 0) in the (B, Hq, Sq, Skv) score tensor.
fn linear(shape: &ProblemShape, b: usize, h: usize, i: usize) -> u128 {
    ((wide(b) * wide(shape.hq) + wide(h)) * wide(shape.sq) + wide(i)) * wide(shape.skv)
}

/// Where a tile's dropout mask comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MaskSource<'t, 'a> {
    /// A given `Dropout_mask` (broadcast like a bias).
    Given(&'t TensorRef<'a>),
    /// The Philox stream of a problem of this shape.
    Philox(&'t PhiloxDropout, ProblemShape),
}

impl MaskSource<'_, '_> {
    /// The mask values of row i, keys `cols`, of head (b, h), into `out`.
    pub(crate) fn row<A: Real>(
        &self,
        b: usize,
        h: usize,
        i: usize,
        cols: Range<usize>,
        out: &mut Vec<A>,
    ) {
        match self {
            MaskSource::Given(mask) => mask.gather(b, h, i..i + 1, cols, out),
            MaskSource::Philox(stream, shape) => stream.row(shape, (b, h, i), cols, out),
        }
    }
}

/// Writes the keep mask of `stream` into `dump` (cuDNN's RNG_DUMP, dims (B, Hq, Sq, Skv)): 1
/// where an element is kept, 0 where it is dropped, unscaled (cuDNN's own tests multiply P by
/// the dump and divide by 1 - p). Every element is written, also where the attention mask or
/// padding leaves P = 0.
///
/// # Errors
/// [`EngineError::DimsMismatch`] when `dump` is not (B, Hq, Sq, Skv);
/// [`EngineError::RaggedNotAllowed`] when it is ragged. Nothing is written then.
pub fn rng_dump(
    shape: &ProblemShape,
    stream: &PhiloxDropout,
    dump: &mut TensorMut<'_>,
) -> Result<(), EngineError> {
    let want = [shape.b, shape.hq, shape.sq, shape.skv];
    if dump.view().dims != want {
        return Err(EngineError::DimsMismatch {
            tensor: dump.name().to_owned(),
            expected: want.to_vec(),
            actual: dump.view().dims.to_vec(),
        });
    }
    if dump.ragged_offsets().is_some() {
        return Err(EngineError::RaggedNotAllowed {
            tensor: dump.name().to_owned(),
        });
    }
    let mut row: Vec<f32> = Vec::new();
    for b in 0..shape.b {
        for h in 0..shape.hq {
            for i in 0..shape.sq {
                stream.row(shape, (b, h, i), 0..shape.skv, &mut row);
                dump.scatter(b, h, i..i + 1, shape.skv, &row);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(sq: usize, skv: usize) -> ProblemShape {
        ProblemShape {
            b: 2,
            hq: 3,
            hk: 3,
            hv: 3,
            sq,
            skv,
            dqk: 8,
            dv: 8,
        }
    }

    fn stream(probability: f32, offset: u64) -> PhiloxDropout {
        PhiloxDropout {
            probability,
            seed: 0x0123_4567_89ab_cdef,
            offset,
        }
    }

    fn mask(s: &PhiloxDropout, shape: &ProblemShape) -> Vec<f32> {
        let mut all = Vec::new();
        let mut row = Vec::new();
        for b in 0..shape.b {
            for h in 0..shape.hq {
                for i in 0..shape.sq {
                    s.row(shape, (b, h, i), 0..shape.skv, &mut row);
                    all.extend_from_slice(&row);
                }
            }
        }
        all
    }

    #[test]
    fn draws_are_philox_words_of_the_documented_counter() {
        // L = 0..3 share counter (0, 0, offset lo, offset hi); L = 4 is the next block.
        let s = stream(0.5, 0x0000_0007_0000_0005);
        let key = [0x89ab_cdef, 0x0123_4567];
        let block0 = philox4x32_10([0, 0, 5, 7], key);
        let block1 = philox4x32_10([1, 0, 5, 7], key);
        for (index, want) in block0.iter().chain(&block1).enumerate() {
            assert_eq!(s.draw(key, wide(index)), *want);
        }
        assert_eq!(s.key(), key);
    }

    #[test]
    fn rows_agree_with_single_elements() {
        let sh = shape(5, 7);
        let s = stream(0.3, 11);
        let mut row: Vec<f64> = Vec::new();
        s.row(&sh, (1, 2, 3), 2..7, &mut row);
        for (j, &m) in (2..7).zip(&row) {
            assert_eq!(m == 1.0, s.keeps(&sh, 1, 2, 3, j));
        }
    }

    #[test]
    fn keep_rate_is_one_minus_p() {
        // 2 x 3 x 100 x 200 = 120,000 draws; the kept count is binomial(n, 1 - p).
        let sh = shape(100, 200);
        for p in [0.1f32, 0.5, 0.9] {
            let m = mask(&stream(p, 0), &sh);
            let n = m.len() as f64;
            let kept = m.iter().filter(|&&x| x == 1.0).count() as f64;
            let q = 1.0 - f64::from(p);
            let sigma = (n * q * (1.0 - q)).sqrt();
            assert!(
                (kept - n * q).abs() < 5.0 * sigma,
                "p = {p}: kept {kept} of {n}, expected {}",
                n * q
            );
        }
    }

    #[test]
    fn p_zero_keeps_everything_and_offsets_give_other_masks() {
        let sh = shape(16, 33);
        assert!(mask(&stream(0.0, 3), &sh).iter().all(|&x| x == 1.0));
        let (a, b) = (mask(&stream(0.5, 0), &sh), mask(&stream(0.5, 1), &sh));
        assert_eq!(a, mask(&stream(0.5, 0), &sh), "same seed and offset");
        let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert!(differ > a.len() / 4, "offset 1 differs in {differ} places");
        // p just below 1 drops (nearly) everything: u >= p needs x >= p 2^32.
        let nearly = mask(&stream(1.0 - f32::EPSILON, 0), &sh);
        assert!(nearly.iter().filter(|&&x| x == 1.0).count() <= 2);
    }

    #[test]
    fn scales_are_f32_values() {
        let d = stream(0.1, 0).scales();
        assert_eq!(d.scale, f64::from(1.0f32 / 0.9f32));
        assert_eq!(d.scale_inv, f64::from(0.9f32));
        assert_eq!(stream(0.0, 0).scales().scale, 1.0);
    }
}
