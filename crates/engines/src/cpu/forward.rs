//! SDPA forward: O = softmax(S) V and Stats = logsumexp(S) per row, with the sink logit joining
//! the softmax denominator.
//!
//! One task per (batch, query head); each walks its query rows in blocks of [`BLOCK_Q`] and holds
//! a single (block x valid keys) score tile. A row with nothing to attend to (fully masked, or
//! padded) gets O = 0 and Stats = +inf, so that exp(S - Stats) is 0 in the backward (the
//! FlashAttention convention); with a sink such a row attends to the sink alone: O = 0, Stats =
//! sink.

use rayon::prelude::*;

use super::element::Real;
use super::exp::exp_shifted;
use super::gemm::{matmul, Mat};
use super::problem::{AttentionInputs, ForwardOutputs, HeadOperands, Problem};
use super::tile::{scores, TileAt};
use super::BLOCK_Q;
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
/// fit the problem; nothing is written then.
pub fn forward<A: Real>(
    problem: &Problem,
    inputs: &AttentionInputs<'_>,
    mut outputs: ForwardOutputs<'_>,
) -> Result<(), EngineError> {
    problem.check_inputs(inputs)?;
    problem.check_forward(&outputs)?;
    let s = problem.shape;
    let slopes = problem.slopes();
    let heads: Vec<HeadOutputs<A>> = (0..s.b * s.hq)
        .into_par_iter()
        .map(|t| forward_head(problem, inputs, &slopes, t / s.hq, t % s.hq))
        .collect();
    for (t, head) in heads.iter().enumerate() {
        let (b, h) = (t / s.hq, t % s.hq);
        outputs.o.scatter(b, h, 0..s.sq, s.dv, &head.o);
        if let Some(stats) = outputs.stats.as_mut() {
            stats.scatter(b, h, 0..s.sq, 1, &head.stats);
        }
    }
    Ok(())
}

fn forward_head<A: Real>(
    p: &Problem,
    x: &AttentionInputs<'_>,
    slopes: &[f64],
    b: usize,
    h: usize,
) -> HeadOutputs<A> {
    let s = p.shape;
    let HeadOperands {
        mask,
        scale,
        sink,
        k,
        v,
    } = p.head_operands::<A>(x, slopes, b, h);
    let mut q = Vec::new();
    let mut out = HeadOutputs {
        o: vec![A::zero(); s.sq * s.dv],
        stats: vec![A::infinity(); s.sq],
    };
    let (mut tile, mut scratch) = (Vec::new(), Vec::new());
    for i0 in (0..mask.q_len).step_by(BLOCK_Q) {
        let rows = i0..(i0 + BLOCK_Q).min(mask.q_len);
        let cols = mask.columns(&rows);
        if cols.is_empty() {
            out.stats[rows].fill(sink.unwrap_or(A::infinity()));
            continue;
        }
        x.q.gather(b, h, rows.clone(), 0..s.dqk, &mut q);
        let at = TileAt {
            b,
            h,
            rows: rows.clone(),
            cols: cols.clone(),
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
        let n = cols.len();
        for (r, i) in rows.clone().enumerate() {
            out.stats[i] = softmax_row(&mut tile[r * n..(r + 1) * n], sink);
        }
        let v_cols = &v[cols.start * s.dv..cols.end * s.dv];
        matmul(
            &mut out.o[i0 * s.dv..rows.end * s.dv],
            Mat::rows(&tile, rows.len(), n),
            Mat::rows(v_cols, n, s.dv),
            A::one(),
            false,
        );
    }
    out
}

/// Turns a row of scores into probabilities in place; returns its log-sum-exp (with the sink),
/// or +inf (and zeros) when nothing is kept.
fn softmax_row<A: Real>(row: &mut [A], sink: Option<A>) -> A {
    let max = row
        .iter()
        .fold(sink.unwrap_or(A::neg_infinity()), |m, &x| m.max(x));
    if max == A::neg_infinity() {
        row.fill(A::zero());
        return A::infinity();
    }
    exp_shifted(row, max);
    let sum = row
        .iter()
        .fold(sink.map_or(A::zero(), |s| (s - max).exp()), |acc, &x| {
            acc + x
        });
    let inv = sum.recip();
    for x in row.iter_mut() {
        *x = *x * inv;
    }
    max + sum.ln()
}
