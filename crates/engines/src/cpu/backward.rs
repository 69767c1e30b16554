//! SDPA backward (docs/sdpa-backward.md, section 2), one task per (batch, query head):
//!
//! ```text
//! S  = scale Q K^T + Bias + ALiBi, masked -> -inf     P  = exp(S - Stats)
//! D  = rowsum(dO * O)                                 dP = dO V^T
//! dS = P * (dP - D)                                   dBias = dS
//! dQ = scale dS K     dK += scale dS^T Q     dV += P^T dO     dSink -= exp(Sink - Stats) D
//! ```
//!
//! With dropout (a given mask M, scale r, scale_inv r'; see [`Dropout`](super::problem::Dropout)):
//! dV += (P M r)^T dO and dS = r P (M dP - r' D), as cuDNN's backward graph computes them.
//!
//! Each task walks its query rows in blocks of [`BLOCK_Q`] and their keys in blocks of
//! [`BLOCK_KV`], with one (BLOCK_Q x BLOCK_KV) tile for P and one for dP/dS. A row whose Stats
//! is +inf (the forward's mark of a row that attended to nothing) and masked entries have
//! P = 0, so they give exactly zero gradients; any other Stats goes through the arithmetic as
//! it is, so a NaN or -inf Stats, like a NaN in any input a kept score or product reads,
//! shows as NaN / inf in the gradients it reaches (PyTorch's math), never as silent zeros.
//! dK, dV, dBias and dSink come back per query head and are summed over heads and batches in
//! a fixed order on one thread (see `reduce`): deterministic by construction, no shared
//! accumulators.

use rayon::prelude::*;
use rime_graph::Sequence;

use super::element::Real;
use super::exp::exp_shifted;
use super::gemm::{matmul, Mat};
use super::problem::{BackwardInputs, BackwardOutputs, HeadOperands, Problem};
use super::reduce::{Accumulators, HeadGrads};
use super::tile::{drop_out, scores, TileAt};
use super::{BLOCK_KV, BLOCK_Q};
use crate::EngineError;

/// Runs the backward of `problem`, writing `outputs`, in arithmetic type `A`.
///
/// # Errors
/// [`EngineError::DimsMismatch`], [`EngineError::SeqLenOutOfRange`] or
/// [`EngineError::MissingBuffer`] (dBias without Bias, dSink without Sink) when the tensors do
/// not fit the problem (nothing is written then); [`EngineError::OutOfHostMemory`] when
/// scratch memory runs out (dQ of heads already done may have been written).
pub fn backward<A: Real>(
    problem: &Problem,
    inputs: &BackwardInputs<'_>,
    outputs: BackwardOutputs<'_>,
) -> Result<(), EngineError> {
    problem.check_backward(inputs, &outputs)?;
    let s = problem.shape;
    let slopes = problem.slopes();
    let mut outputs = outputs;
    let dbias_dims = outputs.dbias.as_ref().map(|t| t.view().dims);
    let mut sums = Accumulators::new(problem, dbias_dims)?;
    // Heads run in parallel a few per thread at a time, which bounds the memory of their
    // partial dK/dV/dBias; they are summed in ascending order whatever the chunk size.
    let tasks: Vec<usize> = (0..s.b * s.hq).collect();
    for chunk in tasks.chunks(super::heads_in_flight()) {
        let heads: Vec<HeadGrads<A>> = chunk
            .par_iter()
            .map(|&t| {
                backward_head(
                    problem,
                    inputs,
                    &slopes,
                    t / s.hq,
                    t % s.hq,
                    dbias_dims.is_some(),
                )
            })
            .collect::<Result<_, _>>()?;
        for (&t, g) in chunk.iter().zip(heads) {
            let (b, h) = (t / s.hq, t % s.hq);
            let rows = outputs.dq.rows(problem.tokens(Sequence::Q, b), s.sq);
            outputs.dq.scatter(b, h, rows, s.dqk, &g.dq);
            sums.add(b, h, g);
        }
    }
    sums.write(problem, &mut outputs)?;
    Ok(())
}

/// Packed per-block operands, reused across blocks of a task.
#[derive(Default)]
struct Scratch<A> {
    q: Vec<A>,
    o: Vec<A>,
    d_o: Vec<A>,
    p: Vec<A>,
    dropped: Vec<A>,
    ds: Vec<A>,
    row: Vec<A>,
    delta: Vec<A>,
    lse: Vec<A>,
}

fn backward_head<A: Real>(
    p: &Problem,
    x: &BackwardInputs<'_>,
    slopes: &[f64],
    b: usize,
    h: usize,
    want_dbias: bool,
) -> Result<HeadGrads<A>, EngineError> {
    let s = p.shape;
    let HeadOperands {
        mask,
        scale,
        sink,
        k,
        v,
    } = p.head_operands::<A>(&x.attn, slopes, b, h)?;
    let mut g = HeadGrads::zeros(&s, want_dbias)?;
    let dropout = p.dropout.zip(p.mask_source(&x.attn));
    let mut t = Scratch::default();
    for i0 in (0..mask.q_len).step_by(BLOCK_Q) {
        let rows = i0..(i0 + BLOCK_Q).min(mask.q_len);
        let m = rows.len();
        x.o.gather(b, h, rows.clone(), 0..s.dv, &mut t.o);
        x.d_o.gather(b, h, rows.clone(), 0..s.dv, &mut t.d_o);
        t.delta.clear();
        t.delta.extend(
            t.o.chunks_exact(s.dv)
                .zip(t.d_o.chunks_exact(s.dv))
                .map(|(o, d_o)| o.iter().zip(d_o).map(|(&a, &c)| a * c).sum::<A>()),
        );
        t.lse.clear();
        t.lse
            .extend(rows.clone().map(|i| x.stats.get::<A>(b, h, i, 0)));
        if let Some(sink) = sink {
            for (&lse, &delta) in t.lse.iter().zip(&t.delta) {
                // Stats = +inf marks a row that attended to nothing; anything else counts.
                if lse != A::infinity() {
                    g.dsink = g.dsink - (sink - lse).exp() * delta;
                }
            }
        }
        let cols = mask.columns(&rows);
        if cols.is_empty() {
            continue;
        }
        x.attn.q.gather(b, h, rows.clone(), 0..s.dqk, &mut t.q);
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
                x.attn.bias.as_ref(),
                &t.q,
                &k,
                s.dqk,
                &mut t.p,
                &mut t.row,
            );
            for (row, &lse) in t.p.chunks_exact_mut(n).zip(&t.lse) {
                if lse == A::infinity() {
                    row.fill(A::zero());
                } else {
                    exp_shifted(row, lse);
                }
            }
            let k_block = &k[block.start * s.dqk..block.end * s.dqk];
            let v_block = &v[block.start * s.dv..block.end * s.dv];
            // dV[block] += P^T dO (with dropout: (P M r)^T dO)
            let p_dv = match dropout {
                Some((d, dm)) => {
                    t.dropped.clear();
                    t.dropped.extend_from_slice(&t.p);
                    drop_out(&at, &dm, A::of_f64(d.scale), &mut t.dropped, &mut t.row);
                    &t.dropped
                }
                None => &t.p,
            };
            matmul(
                &mut g.dv[block.start * s.dv..block.end * s.dv],
                Mat::rows(p_dv, m, n).t(),
                Mat::rows(&t.d_o, m, s.dv),
                A::one(),
                true,
            );
            // dP = dO V^T, then dS = P * (dP - D) in place
            t.ds.clear();
            t.ds.resize(m * n, A::zero());
            matmul(
                &mut t.ds,
                Mat::rows(&t.d_o, m, s.dv),
                Mat::rows(v_block, n, s.dv).t(),
                A::one(),
                false,
            );
            // dS = r P (M dP - r' D); without dropout r = r' = 1 and M = 1 (exact: the
            // products by 1 round to themselves).
            let (r, r_inv) = match dropout {
                Some((d, dm)) => {
                    drop_out(&at, &dm, A::one(), &mut t.ds, &mut t.row);
                    (A::of_f64(d.scale), A::of_f64(d.scale_inv))
                }
                None => (A::one(), A::one()),
            };
            for ((ds, pr), &delta) in
                t.ds.chunks_exact_mut(n)
                    .zip(t.p.chunks_exact(n))
                    .zip(&t.delta)
            {
                for (x, &pv) in ds.iter_mut().zip(pr) {
                    *x = r * pv * (*x - r_inv * delta);
                }
            }
            if want_dbias {
                for (r, i) in rows.clone().enumerate() {
                    g.dbias[i * s.skv + block.start..i * s.skv + block.end]
                        .copy_from_slice(&t.ds[r * n..(r + 1) * n]);
                }
            }
            // dQ[rows] += scale dS K[block]
            matmul(
                &mut g.dq[i0 * s.dqk..rows.end * s.dqk],
                Mat::rows(&t.ds, m, n),
                Mat::rows(k_block, n, s.dqk),
                scale,
                true,
            );
            // dK[block] += scale dS^T Q
            matmul(
                &mut g.dk[block.start * s.dqk..block.end * s.dqk],
                Mat::rows(&t.ds, m, n).t(),
                Mat::rows(&t.q, m, s.dqk),
                scale,
                true,
            );
        }
    }
    Ok(g)
}
