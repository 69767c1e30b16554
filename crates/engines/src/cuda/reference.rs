//! A plain f64 evaluation of the SDPA forward and backward on dense (B, H, S, D) arrays, used by
//! the GPU conformance sweep. It shares the mask rule with the kernels (sdpa-backward.md §2) but
//! no code with them. (The CPU engine's reference replaces this once the engines core lands.)

use rayon::prelude::*;

use super::problem::{alibi_slope, AttnProblem};

/// Dense inputs in f32 (already rounded to the io dtype), packed (B, H, S, D).
#[derive(Debug, Clone, Copy)]
pub struct DenseInputs<'a> {
    /// Q (B, Hq, Sq, Dqk).
    pub q: &'a [f32],
    /// K (B, Hk, Skv, Dqk).
    pub k: &'a [f32],
    /// V (B, Hv, Skv, Dv).
    pub v: &'a [f32],
    /// Bias (bias_b, bias_h, Sq, Skv), when the problem has one.
    pub bias: Option<&'a [f32]>,
    /// Padding mask lengths per batch (Q, KV), when the problem has one.
    pub seq_lens: Option<(&'a [i32], &'a [i32])>,
}

/// Reference gradients, packed like their forward twins.
#[derive(Debug, Clone)]
pub struct DenseGrads {
    /// dQ.
    pub dq: Vec<f64>,
    /// dK.
    pub dk: Vec<f64>,
    /// dV.
    pub dv: Vec<f64>,
    /// dBias, when requested.
    pub dbias: Option<Vec<f64>>,
}

fn keep(p: &AttnProblem, x: &DenseInputs<'_>, b: usize, i: usize, j: usize) -> bool {
    let (q_len, kv_len) = match x.seq_lens {
        Some((q, kv)) => (
            q[b].clamp(0, p.sq as i32) as usize,
            kv[b].clamp(0, p.skv as i32) as usize,
        ),
        None => (p.sq, p.skv),
    };
    if i >= q_len || j >= kv_len {
        return false;
    }
    let shift = if p.band.bottom_right {
        kv_len as i64 - q_len as i64
    } else {
        0
    };
    let (i, j) = (i as i64, j as i64);
    p.band.right.is_none_or(|r| j <= i + shift + i64::from(r))
        && p.band.left.is_none_or(|l| j > i + shift - i64::from(l))
}

/// Scores of one (b, h) row: scale * q_i . k_j + bias (None where masked).
fn scores(p: &AttnProblem, x: &DenseInputs<'_>, b: usize, h: usize, i: usize) -> Vec<Option<f64>> {
    let g = h / (p.hq / p.hk);
    let qrow = &x.q[((b * p.hq + h) * p.sq + i) * p.dqk..][..p.dqk];
    (0..p.skv)
        .map(|j| {
            if !keep(p, x, b, i, j) {
                return None;
            }
            let krow = &x.k[((b * p.hk + g) * p.skv + j) * p.dqk..][..p.dqk];
            let dot: f64 = qrow
                .iter()
                .zip(krow)
                .map(|(a, c)| f64::from(*a) * f64::from(*c))
                .sum();
            let mut s = f64::from(p.scale) * dot;
            if p.alibi {
                s += alibi_slope(h, p.hq) * (j as f64 - i as f64);
            }
            if let (Some(bias), Some(shape)) = (x.bias, p.bias) {
                let bb = if shape.batch == 1 { 0 } else { b };
                let bh = if shape.heads == 1 { 0 } else { h };
                s += f64::from(bias[((bb * shape.heads + bh) * p.sq + i) * p.skv + j]);
            }
            Some(s)
        })
        .collect()
}

/// O (B, Hq, Sq, Dv) and Stats (B, Hq, Sq); a fully masked row gives O = 0, Stats = +inf.
pub fn forward(p: &AttnProblem, x: &DenseInputs<'_>) -> (Vec<f64>, Vec<f64>) {
    let rows: Vec<(Vec<f64>, f64)> = (0..p.batch * p.hq * p.sq)
        .into_par_iter()
        .map(|r| {
            let (b, h, i) = (r / (p.hq * p.sq), (r / p.sq) % p.hq, r % p.sq);
            let gv = h / (p.hq / p.hv);
            let s = scores(p, x, b, h, i);
            let m = s.iter().flatten().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
            let mut o = vec![0.0; p.dv];
            if m == f64::NEG_INFINITY {
                return (o, f64::INFINITY);
            }
            let mut l = 0.0;
            for (j, sj) in s.iter().enumerate() {
                if let Some(v) = sj {
                    let e = (v - m).exp();
                    l += e;
                    let vrow = &x.v[((b * p.hv + gv) * p.skv + j) * p.dv..][..p.dv];
                    for (od, vd) in o.iter_mut().zip(vrow) {
                        *od += e * f64::from(*vd);
                    }
                }
            }
            o.iter_mut().for_each(|v| *v /= l);
            (o, m + l.ln())
        })
        .collect();
    let mut o = Vec::with_capacity(rows.len() * p.dv);
    let mut stats = Vec::with_capacity(rows.len());
    for (row, lse) in rows {
        o.extend(row);
        stats.push(lse);
    }
    (o, stats)
}

/// Gradients from the same inputs plus O, dO and Stats (dense, f32).
pub fn backward(
    p: &AttnProblem,
    x: &DenseInputs<'_>,
    o: &[f32],
    d_o: &[f32],
    stats: &[f32],
) -> DenseGrads {
    struct Part {
        b: usize,
        h: usize,
        dq: Vec<f64>,
        dk: Vec<f64>,
        dv: Vec<f64>,
        dbias: Vec<f64>,
    }
    let want_dbias = p.dbias && p.bias.is_some();
    let parts: Vec<Part> = (0..p.batch * p.hq)
        .into_par_iter()
        .map(|bh| {
            let (b, h) = (bh / p.hq, bh % p.hq);
            let g = h / (p.hq / p.hk);
            let mut part = Part {
                b,
                h,
                dq: vec![0.0; p.sq * p.dqk],
                dk: vec![0.0; p.skv * p.dqk],
                dv: vec![0.0; p.skv * p.dv],
                dbias: if want_dbias {
                    vec![0.0; p.sq * p.skv]
                } else {
                    Vec::new()
                },
            };
            for i in 0..p.sq {
                let row = (b * p.hq + h) * p.sq + i;
                let lse = f64::from(stats[row]);
                let do_i = &d_o[row * p.dv..][..p.dv];
                let o_i = &o[row * p.dv..][..p.dv];
                let delta: f64 = do_i
                    .iter()
                    .zip(o_i)
                    .map(|(a, c)| f64::from(*a) * f64::from(*c))
                    .sum();
                let q_i = &x.q[row * p.dqk..][..p.dqk];
                for (j, s) in scores(p, x, b, h, i).into_iter().enumerate() {
                    let Some(s) = s else { continue };
                    let pij = (s - lse).exp();
                    let v_j = &x.v[((b * p.hv + g) * p.skv + j) * p.dv..][..p.dv];
                    let k_j = &x.k[((b * p.hk + g) * p.skv + j) * p.dqk..][..p.dqk];
                    let dp: f64 = do_i
                        .iter()
                        .zip(v_j)
                        .map(|(a, c)| f64::from(*a) * f64::from(*c))
                        .sum();
                    let ds = pij * (dp - delta);
                    let row_dv = &mut part.dv[j * p.dv..][..p.dv];
                    row_dv
                        .iter_mut()
                        .zip(do_i)
                        .for_each(|(a, c)| *a += pij * f64::from(*c));
                    let sc = f64::from(p.scale) * ds;
                    let row_dq = &mut part.dq[i * p.dqk..][..p.dqk];
                    row_dq
                        .iter_mut()
                        .zip(k_j)
                        .for_each(|(a, c)| *a += sc * f64::from(*c));
                    let row_dk = &mut part.dk[j * p.dqk..][..p.dqk];
                    row_dk
                        .iter_mut()
                        .zip(q_i)
                        .for_each(|(a, c)| *a += sc * f64::from(*c));
                    if want_dbias {
                        part.dbias[i * p.skv + j] = ds;
                    }
                }
            }
            part
        })
        .collect();
    let mut out = DenseGrads {
        dq: vec![0.0; p.batch * p.hq * p.sq * p.dqk],
        dk: vec![0.0; p.batch * p.hk * p.skv * p.dqk],
        dv: vec![0.0; p.batch * p.hv * p.skv * p.dv],
        dbias: None,
    };
    let shape = p.bias.filter(|_| want_dbias);
    let mut dbias = shape.map(|s| vec![0.0; s.batch * s.heads * p.sq * p.skv]);
    for part in parts {
        let g = part.h / (p.hq / p.hk);
        let q0 = (part.b * p.hq + part.h) * p.sq * p.dqk;
        out.dq[q0..q0 + part.dq.len()].copy_from_slice(&part.dq);
        let k0 = (part.b * p.hk + g) * p.skv * p.dqk;
        out.dk[k0..k0 + part.dk.len()]
            .iter_mut()
            .zip(&part.dk)
            .for_each(|(a, c)| *a += c);
        let v0 = (part.b * p.hv + g) * p.skv * p.dv;
        out.dv[v0..v0 + part.dv.len()]
            .iter_mut()
            .zip(&part.dv)
            .for_each(|(a, c)| *a += c);
        if let (Some(db), Some(s)) = (dbias.as_mut(), shape) {
            let bb = if s.batch == 1 { 0 } else { part.b };
            let bh = if s.heads == 1 { 0 } else { part.h };
            let d0 = (bb * s.heads + bh) * p.sq * p.skv;
            db[d0..d0 + part.dbias.len()]
                .iter_mut()
                .zip(&part.dbias)
                .for_each(|(a, c)| *a += c);
        }
    }
    out.dbias = dbias;
    out
}
