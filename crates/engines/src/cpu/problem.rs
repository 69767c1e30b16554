//! The attention problem in plain terms: sizes, scale, mask options and sequence lengths, plus
//! the tensors of a forward and a backward call. Sizes and band are the analyzer's checked types
//! ([`ProblemShape`], [`Band`]); the rest is independent of the graph, so the math can be read
//! and tested on its own.

use super::dropout::{MaskSource, PhiloxDropout};
use super::element::Real;
use super::layout::{TensorMut, TensorRef, View4};
use super::mask::{alibi_slopes, HeadMask};
use super::ragged::Ragged;
use crate::memory::try_reserve;
use crate::EngineError;
pub use rime_analyzer::{Band, ProblemShape};
use rime_graph::Sequence;

/// Actual sequence lengths per batch (padding mask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqLens {
    /// Valid query rows per batch.
    pub q: Vec<usize>,
    /// Valid keys per batch.
    pub kv: Vec<usize>,
}

/// Dropout with a given mask (cuDNN's `Dropout_mask`, `Dropout_scale`, `Dropout_scale_inv`).
///
/// The forward's O is (P * mask * scale) V, its Stats those of P (undropped); the backward
/// computes what cuDNN's SDPA backward graph does: dV = (P * mask * scale)^T dO and
/// dS = scale * P * (mask * dO V^T - scale_inv * rowsum(dO * O)), which is the exact gradient
/// when scale_inv = 1 / scale (what cuDNN derives from a dropout probability).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dropout {
    /// Factor of the kept probabilities (usually 1 / (1 - p)).
    pub scale: f64,
    /// Factor of rowsum(dO * O) in the backward (usually 1 - p).
    pub scale_inv: f64,
}

/// One SDPA problem: what to compute, not where the data lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Sizes.
    pub shape: ProblemShape,
    /// Score scale.
    pub scale: f64,
    /// Causal / sliding-window band.
    pub band: Band,
    /// ALiBi linear bias with the standard slopes.
    pub alibi: bool,
    /// Padding mask lengths.
    pub seq_lens: Option<SeqLens>,
    /// Dropout scales: with a given mask (the mask itself is an input tensor) or with
    /// [`Problem::philox`].
    pub dropout: Option<Dropout>,
    /// Philox dropout: the mask is drawn from this stream instead of read from a
    /// `Dropout_mask` ([`Problem::with_philox`] sets it with its scales).
    pub philox: Option<PhiloxDropout>,
}

/// Inputs shared by forward and backward.
#[derive(Debug, Clone, Copy)]
pub struct AttentionInputs<'a> {
    /// (B, Hq, Sq, Dqk).
    pub q: TensorRef<'a>,
    /// (B, Hk, Skv, Dqk).
    pub k: TensorRef<'a>,
    /// (B, Hv, Skv, Dv).
    pub v: TensorRef<'a>,
    /// Broadcastable to (B, Hq, Sq, Skv), added after scaling.
    pub bias: Option<TensorRef<'a>>,
    /// (1, Hq, 1, 1) sink logits.
    pub sink: Option<TensorRef<'a>>,
    /// Dropout mask, broadcastable to (B, Hq, Sq, Skv), with [`Problem::dropout`].
    pub dropout_mask: Option<TensorRef<'a>>,
}

/// Outputs of the forward.
#[derive(Debug)]
pub struct ForwardOutputs<'a> {
    /// (B, Hq, Sq, Dv).
    pub o: TensorMut<'a>,
    /// (B, Hq, Sq, 1) natural-log log-sum-exp; +inf for rows with nothing to attend to.
    pub stats: Option<TensorMut<'a>>,
}

/// Extra inputs of the backward.
#[derive(Debug, Clone, Copy)]
pub struct BackwardInputs<'a> {
    /// Forward inputs.
    pub attn: AttentionInputs<'a>,
    /// (B, Hq, Sq, Dv) forward output.
    pub o: TensorRef<'a>,
    /// (B, Hq, Sq, Dv) gradient of the loss with respect to O.
    pub d_o: TensorRef<'a>,
    /// (B, Hq, Sq, 1) from the forward.
    pub stats: TensorRef<'a>,
}

/// Outputs of the backward.
#[derive(Debug)]
pub struct BackwardOutputs<'a> {
    /// Like Q.
    pub dq: TensorMut<'a>,
    /// Like K.
    pub dk: TensorMut<'a>,
    /// Like V.
    pub dv: TensorMut<'a>,
    /// Like Bias (summed over its broadcast dims).
    pub dbias: Option<TensorMut<'a>>,
    /// Like Sink.
    pub dsink: Option<TensorMut<'a>>,
}

fn expect(dims: &[usize; 4], name: &str, want: [usize; 4]) -> Result<(), EngineError> {
    if *dims == want {
        Ok(())
    } else {
        Err(EngineError::DimsMismatch {
            tensor: name.to_owned(),
            expected: want.to_vec(),
            actual: dims.to_vec(),
        })
    }
}

fn expect_ref(t: &TensorRef<'_>, want: [usize; 4]) -> Result<(), EngineError> {
    expect(&t.view().dims, t.name(), want)
}

fn expect_mut(t: &TensorMut<'_>, want: [usize; 4]) -> Result<(), EngineError> {
    expect(&t.view().dims, t.name(), want)
}

/// Refuses a ragged layout on a tensor indexed by batch, head and position (bias, masks,
/// sink): its offsets would move its rows away from the positions they belong to.
fn expect_dense(name: &str, ragged: Option<&Ragged<'_>>) -> Result<(), EngineError> {
    match ragged {
        Some(_) => Err(EngineError::RaggedNotAllowed {
            tensor: name.to_owned(),
        }),
        None => Ok(()),
    }
}

/// The bias dims a problem accepts: any dim may broadcast (size 1), as the graph model allows;
/// dBias then sums over the broadcast dims.
fn bias_dims_ok(s: &ProblemShape, dims: &[usize; 4]) -> bool {
    dims.iter()
        .zip([s.b, s.hq, s.sq, s.skv])
        .all(|(&d, full)| d == 1 || d == full)
}

impl Problem {
    /// Scale 1/sqrt(Dqk), no mask, no padding.
    pub fn new(shape: ProblemShape) -> Problem {
        Problem {
            shape,
            scale: 1.0 / (shape.dqk as f64).sqrt(),
            band: Band::default(),
            alibi: false,
            seq_lens: None,
            dropout: None,
            philox: None,
        }
    }

    /// Query heads per key head.
    pub fn k_group(&self) -> usize {
        self.shape.hq / self.shape.hk
    }

    /// Query heads per value head.
    pub fn v_group(&self) -> usize {
        self.shape.hq / self.shape.hv
    }

    /// The real tokens of batch `b` in `sequence`: its padding-mask length, else the whole
    /// sequence dim.
    pub fn tokens(&self, sequence: Sequence, b: usize) -> usize {
        let s = &self.shape;
        match (&self.seq_lens, sequence) {
            (Some(l), Sequence::Q) => l.q[b],
            (Some(l), Sequence::Kv) => l.kv[b],
            (None, Sequence::Q) => s.sq,
            (None, Sequence::Kv) => s.skv,
        }
    }

    /// Checks that a ragged tensor's sequences hold batch by batch the real tokens of
    /// `sequence` (checked lengths first: `check_self`).
    fn check_ragged(
        &self,
        name: &str,
        view: &View4,
        ragged: Option<&Ragged<'_>>,
        sequence: Sequence,
    ) -> Result<(), EngineError> {
        match ragged {
            Some(r) => r.check_tokens(name, view, |b| self.tokens(sequence, b)),
            None => Ok(()),
        }
    }

    fn check_ragged_ref(&self, t: &TensorRef<'_>, sequence: Sequence) -> Result<(), EngineError> {
        self.check_ragged(t.name(), t.view(), t.ragged_offsets(), sequence)
    }

    fn check_ragged_mut(&self, t: &TensorMut<'_>, sequence: Sequence) -> Result<(), EngineError> {
        self.check_ragged(t.name(), t.view(), t.ragged_offsets(), sequence)
    }

    /// The mask of batch `b`, query head `h`.
    pub(crate) fn head_mask(&self, b: usize, h: usize, slopes: &[f64]) -> HeadMask {
        let (q_len, kv_len) = (self.tokens(Sequence::Q, b), self.tokens(Sequence::Kv, b));
        let shift = self.band.shift(q_len, kv_len);
        HeadMask {
            q_len,
            kv_len,
            shift,
            left_bound: self.band.left,
            right_bound: self.band.right,
            alibi_slope: slopes.get(h).copied(),
        }
    }

    /// What every task of (batch `b`, query head `h`) starts from, forward and backward alike:
    /// its mask, the scale and sink logit in `A`, and the valid K and V rows of its KV heads,
    /// packed.
    pub(crate) fn head_operands<A: Real>(
        &self,
        inputs: &AttentionInputs<'_>,
        slopes: &[f64],
        b: usize,
        h: usize,
    ) -> Result<HeadOperands<A>, EngineError> {
        let s = &self.shape;
        let mask = self.head_mask(b, h, slopes);
        let (mut k, mut v) = (Vec::new(), Vec::new());
        try_reserve(&mut k, mask.kv_len * s.dqk, "one head's K, packed")?;
        try_reserve(&mut v, mask.kv_len * s.dv, "one head's V, packed")?;
        let kv_rows = 0..mask.kv_len;
        inputs
            .k
            .gather(b, h / self.k_group(), kv_rows.clone(), 0..s.dqk, &mut k);
        inputs
            .v
            .gather(b, h / self.v_group(), kv_rows, 0..s.dv, &mut v);
        Ok(HeadOperands {
            scale: A::of_f64(self.scale),
            // A sink of -inf adds exp(-inf) = 0 to every row's sum: the head has no sink (a
            // row with no key keeps Stats = +inf, and its dSink term is 0, not NaN).
            sink: inputs
                .sink
                .map(|t| t.get::<A>(0, h, 0, 0))
                .filter(|&x| x != A::neg_infinity()),
            mask,
            k,
            v,
        })
    }

    /// ALiBi slopes per query head (empty without ALiBi).
    pub(crate) fn slopes(&self) -> Vec<f64> {
        if self.alibi {
            alibi_slopes(self.shape.hq)
        } else {
            Vec::new()
        }
    }

    /// Checks the problem itself: divisibility and sequence lengths.
    fn check_self(&self) -> Result<(), EngineError> {
        let s = &self.shape;
        let sizes = [s.b, s.hq, s.hk, s.hv, s.sq, s.skv, s.dqk, s.dv];
        if sizes.contains(&0) || s.hq % s.hk != 0 || s.hq % s.hv != 0 {
            return Err(EngineError::DimsMismatch {
                tensor: "K/V heads".to_owned(),
                expected: vec![s.hq],
                actual: vec![s.hk, s.hv],
            });
        }
        if let Some(l) = &self.seq_lens {
            for (name, lens, max) in [("SEQ_LEN_Q", &l.q, s.sq), ("SEQ_LEN_KV", &l.kv, s.skv)] {
                if lens.len() != s.b {
                    return Err(EngineError::DimsMismatch {
                        tensor: name.to_owned(),
                        expected: vec![s.b],
                        actual: vec![lens.len()],
                    });
                }
                if let Some((batch, &value)) = lens.iter().enumerate().find(|(_, &v)| v > max) {
                    return Err(EngineError::SeqLenOutOfRange {
                        tensor: name.to_owned(),
                        batch,
                        value: value as i64,
                        max,
                    });
                }
            }
        }
        Ok(())
    }

    /// The problem with Philox dropout from `stream`, and the scales it implies
    /// ([`PhiloxDropout::scales`]).
    pub fn with_philox(mut self, stream: PhiloxDropout) -> Problem {
        self.dropout = Some(stream.scales());
        self.philox = Some(stream);
        self
    }

    /// Where the dropout mask of `x` comes from: the Philox stream, else the given mask.
    pub(crate) fn mask_source<'t, 'a>(
        &'t self,
        x: &'t AttentionInputs<'a>,
    ) -> Option<MaskSource<'t, 'a>> {
        match (&self.philox, &x.dropout_mask) {
            (Some(stream), _) => Some(MaskSource::Philox(stream, self.shape)),
            (None, Some(mask)) => Some(MaskSource::Given(mask)),
            (None, None) => None,
        }
    }

    /// Checks the inputs shared by forward and backward against the problem.
    pub(crate) fn check_inputs(&self, x: &AttentionInputs<'_>) -> Result<(), EngineError> {
        self.check_self()?;
        let s = &self.shape;
        expect_ref(&x.q, [s.b, s.hq, s.sq, s.dqk])?;
        expect_ref(&x.k, [s.b, s.hk, s.skv, s.dqk])?;
        expect_ref(&x.v, [s.b, s.hv, s.skv, s.dv])?;
        self.check_ragged_ref(&x.q, Sequence::Q)?;
        self.check_ragged_ref(&x.k, Sequence::Kv)?;
        self.check_ragged_ref(&x.v, Sequence::Kv)?;
        for dense in [&x.bias, &x.sink, &x.dropout_mask].into_iter().flatten() {
            expect_dense(dense.name(), dense.ragged_offsets())?;
        }
        if let Some(bias) = &x.bias {
            if !bias_dims_ok(s, &bias.view().dims) {
                expect_ref(bias, [s.b, s.hq, s.sq, s.skv])?;
            }
        }
        if let Some(sink) = &x.sink {
            expect_ref(sink, [1, s.hq, 1, 1])?;
        }
        match (&self.dropout, &self.philox, &x.dropout_mask) {
            (Some(_), None, Some(mask)) => {
                if !bias_dims_ok(s, &mask.view().dims) {
                    expect_ref(mask, [s.b, s.hq, s.sq, s.skv])?;
                }
            }
            (None, None, None) | (Some(_), Some(_), None) => {}
            (_, Some(_), Some(mask)) => {
                return Err(EngineError::DropoutMaskWithPhilox {
                    tensor: mask.name().to_owned(),
                })
            }
            (Some(_), None, None) => {
                return Err(EngineError::MissingBuffer {
                    tensor: "Dropout_mask".to_owned(),
                })
            }
            (None, None, Some(mask)) => {
                return Err(EngineError::MissingBuffer {
                    tensor: format!("Dropout_scale (Dropout_mask `{}` is given)", mask.name()),
                })
            }
            (None, Some(_), None) => {
                return Err(EngineError::MissingBuffer {
                    tensor: "Dropout_scale (a Philox dropout stream is given)".to_owned(),
                })
            }
        }
        Ok(())
    }

    /// Checks forward outputs.
    pub(crate) fn check_forward(&self, out: &ForwardOutputs<'_>) -> Result<(), EngineError> {
        let s = &self.shape;
        expect_mut(&out.o, [s.b, s.hq, s.sq, s.dv])?;
        self.check_ragged_mut(&out.o, Sequence::Q)?;
        if let Some(stats) = &out.stats {
            expect_mut(stats, [s.b, s.hq, s.sq, 1])?;
            self.check_ragged_mut(stats, Sequence::Q)?;
        }
        Ok(())
    }

    /// Checks backward inputs and outputs.
    pub(crate) fn check_backward(
        &self,
        x: &BackwardInputs<'_>,
        out: &BackwardOutputs<'_>,
    ) -> Result<(), EngineError> {
        self.check_inputs(&x.attn)?;
        let s = &self.shape;
        expect_ref(&x.o, [s.b, s.hq, s.sq, s.dv])?;
        expect_ref(&x.d_o, [s.b, s.hq, s.sq, s.dv])?;
        expect_ref(&x.stats, [s.b, s.hq, s.sq, 1])?;
        expect_mut(&out.dq, [s.b, s.hq, s.sq, s.dqk])?;
        expect_mut(&out.dk, [s.b, s.hk, s.skv, s.dqk])?;
        expect_mut(&out.dv, [s.b, s.hv, s.skv, s.dv])?;
        for t in [&x.o, &x.d_o, &x.stats] {
            self.check_ragged_ref(t, Sequence::Q)?;
        }
        self.check_ragged_mut(&out.dq, Sequence::Q)?;
        self.check_ragged_mut(&out.dk, Sequence::Kv)?;
        self.check_ragged_mut(&out.dv, Sequence::Kv)?;
        for dense in [&out.dbias, &out.dsink].into_iter().flatten() {
            expect_dense(dense.name(), dense.ragged_offsets())?;
        }
        match (&x.attn.bias, &out.dbias) {
            (Some(bias), Some(dbias)) => expect_mut(dbias, bias.view().dims)?,
            (None, Some(_)) => {
                return Err(EngineError::MissingBuffer {
                    tensor: "Bias (dBias is asked for)".to_owned(),
                })
            }
            _ => {}
        }
        match (&x.attn.sink, &out.dsink) {
            (Some(_), Some(dsink)) => expect_mut(dsink, [1, s.hq, 1, 1])?,
            (None, Some(_)) => {
                return Err(EngineError::MissingBuffer {
                    tensor: "Sink (dSink is asked for)".to_owned(),
                })
            }
            _ => {}
        }
        Ok(())
    }
}

/// The per-(batch, query head) operands of [`Problem::head_operands`].
pub(crate) struct HeadOperands<A> {
    /// The head's mask.
    pub mask: HeadMask,
    /// The score scale.
    pub scale: A,
    /// The head's sink logit, when the graph has one and it is not -inf.
    pub sink: Option<A>,
    /// K rows 0..kv_len of the head's KV head, packed (kv_len x Dqk).
    pub k: Vec<A>,
    /// V rows 0..kv_len of the head's value head, packed (kv_len x Dv).
    pub v: Vec<A>,
}
