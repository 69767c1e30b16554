//! Per-head gradients and their reduction into the user's tensors, in a fixed order.
//!
//! dK and dV of a kv head are the sums over its group of query heads; a broadcast dBias is the
//! sum over the batches and/or heads it serves; dSink is the sum over batches. Each sum runs in
//! ascending (batch, head) order on the calling thread, so results do not depend on scheduling.

use super::element::Real;
use super::problem::{BackwardOutputs, Problem, Shape};

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
    pub fn zeros(s: &Shape, want_dbias: bool) -> Self {
        HeadGrads {
            dq: vec![A::zero(); s.sq * s.dqk],
            dk: vec![A::zero(); s.skv * s.dqk],
            dv: vec![A::zero(); s.skv * s.dv],
            dbias: if want_dbias {
                vec![A::zero(); s.sq * s.skv]
            } else {
                Vec::new()
            },
            dsink: A::zero(),
        }
    }
}

/// Sums the parts in the order given into a fresh vector.
fn sum_of<A: Real>(heads: impl Iterator<Item = Vec<A>>) -> Vec<A> {
    let mut acc: Vec<A> = Vec::new();
    for part in heads {
        if acc.is_empty() {
            acc = part;
        } else {
            acc.iter_mut().zip(&part).for_each(|(a, &x)| *a += x);
        }
    }
    acc
}

/// Writes every output of the backward from the per-head gradients (indexed b * Hq + h).
pub(crate) fn write_gradients<A: Real>(
    p: &Problem,
    heads: &[HeadGrads<A>],
    mut out: BackwardOutputs<'_>,
) {
    let s = p.shape;
    let head = |b: usize, h: usize| &heads[b * s.hq + h];
    for b in 0..s.b {
        for h in 0..s.hq {
            out.dq.scatter(b, h, 0..s.sq, s.dqk, &head(b, h).dq);
        }
        for g in 0..s.hk {
            let group = g * p.k_group()..(g + 1) * p.k_group();
            let dk = sum_of(group.map(|h| head(b, h).dk.clone()));
            out.dk.scatter(b, g, 0..s.skv, s.dqk, &dk);
        }
        for g in 0..s.hv {
            let group = g * p.v_group()..(g + 1) * p.v_group();
            let dv = sum_of(group.map(|h| head(b, h).dv.clone()));
            out.dv.scatter(b, g, 0..s.skv, s.dv, &dv);
        }
    }
    if let Some(dbias) = out.dbias.as_mut() {
        let [bb, bh, _, _] = dbias.view().dims;
        for tb in 0..bb {
            for th in 0..bh {
                let batches = if bb == 1 { 0..s.b } else { tb..tb + 1 };
                let hs = if bh == 1 { 0..s.hq } else { th..th + 1 };
                let parts = batches.flat_map(|b| hs.clone().map(move |h| (b, h)));
                let sum = sum_of(parts.map(|(b, h)| head(b, h).dbias.clone()));
                dbias.scatter(tb, th, 0..s.sq, s.skv, &sum);
            }
        }
    }
    if let Some(dsink) = out.dsink.as_mut() {
        for h in 0..s.hq {
            let total = (0..s.b).fold(A::zero(), |acc, b| acc + head(b, h).dsink);
            dsink.set(0, h, 0, 0, total);
        }
    }
}
