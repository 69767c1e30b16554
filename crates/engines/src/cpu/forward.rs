//! SDPA forward: O = softmax(S) V and Stats = logsumexp(S) per row, with the sink logit joining
//! the softmax denominator.
//!
//! One task per (batch, query head); each walks its query rows in blocks of [`BLOCK_Q`] and
//! their keys in blocks of [`BLOCK_KV`], holding one (BLOCK_Q x BLOCK_KV) score tile at a time
//! and a running (online) softmax per row: the running maximum and sum are rescaled as each
//! key block arrives, so memory does not grow with Skv.
//!
//! A row with nothing to attend to (every key masked, or a padded row) gets O = 0 and Stats =
//! +inf, so that exp(S - Stats) is 0 in the backward (the FlashAttention convention); with a
//! sink such a row attends to the sink alone: O = 0, Stats = sink. A NaN among a row's kept
//! scores makes the row's maximum, O and Stats NaN (PyTorch's math), never a masked row.
//!
//! Ragged (THD) outputs get their real rows only: a ragged sequence has no padded rows.
//!
//! Dropout (a given mask): the sums and Stats are those of the undropped probabilities; each
//! tile is multiplied by mask x scale before it meets V.

use rayon::prelude::*;
use rime_graph::Sequence;

use super::element::Real;
use super::exp::exp_shifted;
use super::gemm::{matmul, Mat};
use super::problem::{AttentionInputs, ForwardOutputs, HeadOperands, Problem};
use super::tile::{drop_out, scores, TileAt};
use super::{BLOCK_KV, BLOCK_Q};
use crate::memory::try_filled;
use crate::EngineError;

/// O (Sq x Dv) and Stats (Sq) of one head, packed.
struct HeadOutputs<A> {
    o: Vec<A>,
    stats: Vec<A>,
}

/// Runs the forward of `problem` on `inputs`, writing `outputs`, in arithmetic type `A`.
///
/// # Errors
/// [`EngineError::DimsMismatch`] or [`EngineError::SeqLenOutOfRange`] when a tensor does not
/// fit the problem (nothing is written then); [`EngineError::OutOfHostMemory`] when scratch
/// memory runs out (heads already done may have been written).
pub fn forward<A: Real>(
    problem: &Problem,
    inputs: &AttentionInputs<'_>,
    mut outputs: ForwardOutputs<'_>,
) -> Result<(), EngineError> {
    problem.check_inputs(inputs)?;
    problem.check_forward(&outputs)?;
    let s = problem.shape;
    let slopes = problem.slopes();
    // Heads run a few per thread at a time, which bounds the memory of their outputs; each
    // chunk is written as soon as it is done.
    let tasks: Vec<usize> = (0..s.b * s.hq).collect();
    for chunk in tasks.chunks(super::heads_in_flight()) {
        let heads: Vec<HeadOutputs<A>> = chunk
            .par_iter()
            .map(|&t| forward_head(problem, inputs, &slopes, t / s.hq, t % s.hq))
            .collect::<Result<_, _>>()?;
        for (&t, head) in chunk.iter().zip(&heads) {
            let (b, h) = (t / s.hq, t % s.hq);
            let tokens = problem.tokens(Sequence::Q, b);
            let rows = outputs.o.rows(tokens, s.sq);
            outputs.o.scatter(b, h, rows, s.dv, &head.o);
            if let Some(stats) = outputs.stats.as_mut() {
                let rows = stats.rows(tokens, s.sq);
                stats.scatter(b, h, rows, 1, &head.stats);
            }
        }
    }
    Ok(())
}

/// The maximum of `a` and `b`, NaN when either is (`f32::max` would drop the NaN).
fn nan_max<A: Real>(a: A, b: A) -> A {
    if a.is_nan() || b.is_nan() {
        A::nan()
    } else if b > a {
        b
    } else {
        a
    }
}

fn forward_head<A: Real>(
    p: &Problem,
    x: &AttentionInputs<'_>,
    slopes: &[f64],
    b: usize,
    h: usize,
) -> Result<HeadOutputs<A>, EngineError> {
    let s = p.shape;
    let HeadOperands {
        mask,
        scale,
        sink,
        k,
        v,
    } = p.head_operands::<A>(x, slopes, b, h)?;
    let dropout = p.dropout.zip(p.mask_source(x));
    let mut out = HeadOutputs {
        o: try_filled(s.sq * s.dv, A::zero(), "the forward's O of one head")?,
        stats: try_filled(s.sq, A::infinity(), "the forward's Stats of one head")?,
    };
    let (mut q, mut tile, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    // Running softmax state of the block's rows: maximum, sum of exp(S - maximum), and the
    // unnormalized O rows.
    let (mut run_max, mut run_sum, mut acc) = (Vec::new(), Vec::new(), Vec::new());
    for i0 in (0..mask.q_len).step_by(BLOCK_Q) {
        let rows = i0..(i0 + BLOCK_Q).min(mask.q_len);
        let m = rows.len();
        let cols = mask.columns(&rows);
        if cols.is_empty() {
            out.stats[rows].fill(sink.unwrap_or(A::infinity()));
            continue;
        }
        x.q.gather(b, h, rows.clone(), 0..s.dqk, &mut q);
        run_max.clear();
        run_max.resize(m, sink.unwrap_or(A::neg_infinity()));
        run_sum.clear();
        run_sum.resize(m, if sink.is_some() { A::one() } else { A::zero() });
        acc.clear();
        acc.resize(m * s.dv, A::zero());
        for c0 in cols.clone().step_by(BLOCK_KV) {
            let block = c0..(c0 + BLOCK_KV).min(cols.end);
            let n = block.len();
            let at = TileAt {
                b,
                h,
                rows: rows.clone(),
                cols: block.clone(),
            };
            scores(
                &at,
                &mask,
                scale,
                x.bias.as_ref(),
                &q,
                &k,
                s.dqk,
                &mut tile,
                &mut scratch,
            );
            for r in 0..m {
                let row = &mut tile[r * n..(r + 1) * n];
                let max = row.iter().fold(run_max[r], |a, &b| nan_max(a, b));
                if max == A::neg_infinity() {
                    row.fill(A::zero()); // nothing kept so far
                    continue;
                }
                // exp(-inf - max) = 0: the first kept block starts the sums afresh.
                let rescale = (run_max[r] - max).exp();
                exp_shifted(row, max);
                run_sum[r] = run_sum[r] * rescale + row.iter().fold(A::zero(), |a, &x| a + x);
                for o in &mut acc[r * s.dv..(r + 1) * s.dv] {
                    *o = *o * rescale;
                }
                run_max[r] = max;
            }
            if let Some((d, dm)) = dropout {
                drop_out(&at, &dm, A::of_f64(d.scale), &mut tile, &mut scratch);
            }
            matmul(
                &mut acc,
                Mat::rows(&tile, m, n),
                Mat::rows(&v[block.start * s.dv..block.end * s.dv], n, s.dv),
                A::one(),
                true,
            );
        }
        for (r, i) in rows.enumerate() {
            if run_max[r] == A::neg_infinity() {
                continue; // O stays 0, Stats +inf
            }
            let inv = run_sum[r].recip();
            let o_row = &mut out.o[i * s.dv..(i + 1) * s.dv];
            for (o, &a) in o_row.iter_mut().zip(&acc[r * s.dv..(r + 1) * s.dv]) {
                *o = a * inv;
            }
            out.stats[i] = run_max[r] + run_sum[r].ln();
        }
    }
    Ok(out)
}
