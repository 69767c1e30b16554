//! Per-head gradients and their reduction into the user's tensors, in a fixed order.
//!
//! dK and dV of a kv head are the sums over its group of query heads; a broadcast dBias is the
//! sum over the batches, heads, query rows and/or keys it serves; dSink is the sum over
//! batches. Heads are added
//! into f32 sums one at a time in ascending (batch, head) order on the calling thread, so
//! results do not depend on scheduling or on how many heads ran at once.

use rime_graph::Sequence;

use super::element::Real;
use super::problem::{BackwardOutputs, Problem, ProblemShape};
use crate::memory::try_filled;
use crate::EngineError;

/// Gradients one (batch, query head) task produces, packed row-major.
pub(crate) struct HeadGrads<A> {
    /// Sq x Dqk.
    pub dq: Vec<A>,
    /// Skv x Dqk, this head's share of its kv head's dK.
    pub dk: Vec<A>,
    /// Skv x Dv, this head's share of its kv head's dV.
    pub dv: Vec<A>,
    /// Sq x Skv when dBias is wanted, else empty.
    pub dbias: Vec<A>,
    /// This head's share of dSink.
    pub dsink: A,
}

impl<A: Real> HeadGrads<A> {
    /// All-zero gradients (rows a task never touches stay zero).
    pub fn zeros(s: &ProblemShape, want_dbias: bool) -> Result<Self, EngineError> {
        Ok(HeadGrads {
            dq: try_filled(s.sq * s.dqk, A::zero(), "one head's dQ")?,
            dk: try_filled(s.skv * s.dqk, A::zero(), "one head's share of dK")?,
            dv: try_filled(s.skv * s.dv, A::zero(), "one head's share of dV")?,
            dbias: if want_dbias {
                try_filled(s.sq * s.skv, A::zero(), "one head's dBias")?
            } else {
                Vec::new()
            },
            dsink: A::zero(),
        })
    }
}

/// Running sums of dK, dV, dBias and dSink, one packed slot per (batch, kv head) of dK and dV
/// and per (batch, head) of dBias. A slot starts empty and takes its first share as it is
/// (moved, not copied); later shares are added into it. So a kv head served by a single query
/// head costs no second copy of its gradients.
pub(crate) struct Accumulators<A> {
    shape: ProblemShape,
    k_group: usize,
    v_group: usize,
    /// (1 or B, 1 or Hq, 1 or Sq, 1 or Skv) of the dBias tensor, when wanted.
    dbias_dims: Option<[usize; 4]>,
    dk: Vec<Option<Vec<A>>>,
    dv: Vec<Option<Vec<A>>>,
    dbias: Vec<Option<Vec<A>>>,
    dsink: Vec<A>,
}

/// A (sq x skv) dBias sum reduced to (rows x cols) = (1 or sq, 1 or skv): summed over the
/// query rows and/or keys a bias broadcast along them serves, in ascending order.
fn seq_sums<A: Real>(
    sum: &[A],
    sq: usize,
    skv: usize,
    rows: usize,
    cols: usize,
) -> Result<std::borrow::Cow<'_, [A]>, EngineError> {
    if rows == sq && cols == skv {
        return Ok(std::borrow::Cow::Borrowed(sum));
    }
    let mut out = try_filled(rows * cols, A::zero(), "a dBias broadcast along a sequence")?;
    for i in 0..sq {
        let r = if rows == 1 { 0 } else { i };
        for j in 0..skv {
            let c = if cols == 1 { 0 } else { j };
            out[r * cols + c] += sum[i * skv + j];
        }
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Adds `part` into `slot`, or makes it the slot when the slot is empty.
fn add_into<A: Real>(slot: &mut Option<Vec<A>>, part: Vec<A>) {
    match slot {
        Some(acc) => acc.iter_mut().zip(&part).for_each(|(a, &x)| *a += x),
        None => *slot = Some(part),
    }
}

impl<A: Real> Accumulators<A> {
    /// Empty sums for `p`; `dbias_dims` are the dims of dBias.
    pub fn new(p: &Problem, dbias_dims: Option<[usize; 4]>) -> Result<Self, EngineError> {
        let s = p.shape;
        let slots = |n: usize| (0..n).map(|_| None).collect::<Vec<_>>();
        Ok(Accumulators {
            shape: s,
            k_group: p.k_group(),
            v_group: p.v_group(),
            dbias_dims,
            dk: slots(s.b * s.hk),
            dv: slots(s.b * s.hv),
            dbias: slots(dbias_dims.map_or(0, |[bb, bh, ..]| bb * bh)),
            dsink: try_filled(s.hq, A::zero(), "the dSink sums")?,
        })
    }

    /// Adds head (b, h)'s shares. Call in ascending (b, h) order.
    pub fn add(&mut self, b: usize, h: usize, g: HeadGrads<A>) {
        let s = self.shape;
        let (gk, gv) = (h / self.k_group, h / self.v_group);
        add_into(&mut self.dk[b * s.hk + gk], g.dk);
        add_into(&mut self.dv[b * s.hv + gv], g.dv);
        if let Some([bb, bh, ..]) = self.dbias_dims {
            let (tb, th) = (if bb == 1 { 0 } else { b }, if bh == 1 { 0 } else { h });
            add_into(&mut self.dbias[tb * bh + th], g.dbias);
        }
        self.dsink[h] += g.dsink;
    }

    /// Writes the sums into the outputs of problem `p` (a slot no head reached is written as
    /// zeros; a ragged dK / dV gets the real keys of each sequence only).
    pub fn write(&self, p: &Problem, out: &mut BackwardOutputs<'_>) -> Result<(), EngineError> {
        let s = self.shape;
        let zeros = |len: usize| try_filled(len, A::zero(), "zero gradients");
        for b in 0..s.b {
            let tokens = p.tokens(Sequence::Kv, b);
            let rows = out.dk.rows(tokens, s.skv);
            for g in 0..s.hk {
                let len = s.skv * s.dqk;
                match &self.dk[b * s.hk + g] {
                    Some(sum) => out.dk.scatter(b, g, rows.clone(), s.dqk, sum),
                    None => out.dk.scatter(b, g, rows.clone(), s.dqk, &zeros(len)?),
                }
            }
            let rows = out.dv.rows(tokens, s.skv);
            for g in 0..s.hv {
                let len = s.skv * s.dv;
                match &self.dv[b * s.hv + g] {
                    Some(sum) => out.dv.scatter(b, g, rows.clone(), s.dv, sum),
                    None => out.dv.scatter(b, g, rows.clone(), s.dv, &zeros(len)?),
                }
            }
        }
        if let (Some(dbias), Some([bb, bh, rows, cols])) = (out.dbias.as_mut(), self.dbias_dims) {
            for tb in 0..bb {
                for th in 0..bh {
                    let sum = match &self.dbias[tb * bh + th] {
                        Some(sum) => seq_sums(sum, s.sq, s.skv, rows, cols)?,
                        None => std::borrow::Cow::Owned(zeros(rows * cols)?),
                    };
                    dbias.scatter(tb, th, 0..rows, cols, &sum);
                }
            }
        }
        if let Some(dsink) = out.dsink.as_mut() {
            for (h, &v) in self.dsink.iter().enumerate() {
                dsink.set(0, h, 0, 0, v);
            }
        }
        Ok(())
    }
}
