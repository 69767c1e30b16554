//! The conformance sweep's reference: the CPU engine's math ([`cpu::forward`], [`cpu::backward`])
//! evaluated in f64 on the sweep's dense inputs. This file only maps an [`AttnProblem`] and
//! packed (B, H, S, D) buffers onto the CPU engine's [`Problem`] and tensor views; the SDPA math
//! (masks, bands, padding, ALiBi, bias broadcast, GQA sums, fully masked rows) is the CPU
//! engine's, so the kernels are checked against the same definition `rime run --target cpu` uses.

use super::problem::{AttnProblem, Dims};
use crate::cpu::{
    self, AttentionInputs, BackwardInputs, BackwardOutputs, Band, ForwardOutputs, HostSlice,
    HostSliceMut, Problem, SeqLens, Shape, TensorMut, TensorRef, View4,
};
use crate::EngineError;

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

/// The CPU engine's [`Problem`] for `p` with the padding lengths `seq_lens`.
///
/// # Errors
/// [`EngineError::SeqLenOutOfRange`] when a length is negative or exceeds its sequence dim.
pub fn problem(
    p: &AttnProblem,
    seq_lens: Option<(&[i32], &[i32])>,
) -> Result<Problem, EngineError> {
    let lens = |tensor: &str, xs: &[i32], max: usize| {
        xs.iter()
            .enumerate()
            .map(|(batch, &value)| {
                usize::try_from(value)
                    .ok()
                    .filter(|&l| l <= max)
                    .ok_or_else(|| EngineError::SeqLenOutOfRange {
                        tensor: tensor.to_owned(),
                        batch,
                        value: i64::from(value),
                        max,
                    })
            })
            .collect::<Result<Vec<usize>, EngineError>>()
    };
    let seq_lens = match seq_lens {
        Some((q, kv)) => Some(SeqLens {
            q: lens("SEQ_LEN_Q", q, p.sq)?,
            kv: lens("SEQ_LEN_KV", kv, p.skv)?,
        }),
        None => None,
    };
    Ok(Problem {
        shape: Shape {
            b: p.batch,
            hq: p.hq,
            hk: p.hk,
            hv: p.hv,
            sq: p.sq,
            skv: p.skv,
            dqk: p.dqk,
            dv: p.dv,
        },
        scale: f64::from(p.scale),
        band: Band {
            left_bound: p.band.left.map(i64::from),
            right_bound: p.band.right.map(i64::from),
            bottom_right: p.band.bottom_right,
        },
        alibi: p.alibi,
        seq_lens,
    })
}

fn packed<'a>(
    name: &'a str,
    data: &'a [f32],
    dims: [usize; 4],
) -> Result<TensorRef<'a>, EngineError> {
    TensorRef::new(name, HostSlice::F32(data), View4::packed(dims))
}

fn packed_mut<'a>(
    name: &'a str,
    data: &'a mut [f64],
    dims: [usize; 4],
) -> Result<TensorMut<'a>, EngineError> {
    TensorMut::new(name, HostSliceMut::F64(data), View4::packed(dims))
}

fn attention<'a>(d: &Dims, x: &DenseInputs<'a>) -> Result<AttentionInputs<'a>, EngineError> {
    Ok(AttentionInputs {
        q: packed("Q", x.q, d.q)?,
        k: packed("K", x.k, d.k)?,
        v: packed("V", x.v, d.v)?,
        bias: match (x.bias, d.bias) {
            (Some(bias), Some(dims)) => Some(packed("Bias", bias, dims)?),
            _ => None,
        },
        sink: None,
    })
}

fn zeros(dims: [usize; 4]) -> Vec<f64> {
    vec![0.0; dims.iter().product()]
}

/// O (B, Hq, Sq, Dv) and Stats (B, Hq, Sq) in f64; a row with nothing to attend to gives O = 0,
/// Stats = +inf (the CPU engine's convention, which the kernels follow).
///
/// # Errors
/// When the buffers do not fit the problem, or a padding length is out of range.
pub fn forward(p: &AttnProblem, x: &DenseInputs<'_>) -> Result<(Vec<f64>, Vec<f64>), EngineError> {
    let problem = problem(p, x.seq_lens)?;
    let d = p.dims();
    let (mut o, mut stats) = (zeros(d.o), zeros(d.stats));
    cpu::forward::<f64>(
        &problem,
        &attention(&d, x)?,
        ForwardOutputs {
            o: packed_mut("O", &mut o, d.o)?,
            stats: Some(packed_mut("Stats", &mut stats, d.stats)?),
        },
    )?;
    Ok((o, stats))
}

/// Gradients in f64 from the same inputs plus O, dO and Stats (dense, f32, as the kernels
/// produced them); dBias when the problem asks for it.
///
/// # Errors
/// When the buffers do not fit the problem, or a padding length is out of range.
pub fn backward(
    p: &AttnProblem,
    x: &DenseInputs<'_>,
    o: &[f32],
    d_o: &[f32],
    stats: &[f32],
) -> Result<DenseGrads, EngineError> {
    let problem = problem(p, x.seq_lens)?;
    let d = p.dims();
    let (mut dq, mut dk, mut dv) = (zeros(d.q), zeros(d.k), zeros(d.v));
    let dbias_dims = d.bias.filter(|_| p.dbias);
    let mut dbias = dbias_dims.map(zeros);
    let inputs = BackwardInputs {
        attn: attention(&d, x)?,
        o: packed("O", o, d.o)?,
        d_o: packed("dO", d_o, d.o)?,
        stats: packed("Stats", stats, d.stats)?,
    };
    let dbias_out = match (dbias.as_mut(), dbias_dims) {
        (Some(buf), Some(dims)) => Some(packed_mut("dBias", buf, dims)?),
        _ => None,
    };
    cpu::backward::<f64>(
        &problem,
        &inputs,
        BackwardOutputs {
            dq: packed_mut("dQ", &mut dq, d.q)?,
            dk: packed_mut("dK", &mut dk, d.k)?,
            dv: packed_mut("dV", &mut dv, d.v)?,
            dbias: dbias_out,
            dsink: None,
        },
    )?;
    Ok(DenseGrads { dq, dk, dv, dbias })
}
