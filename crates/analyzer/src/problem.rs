//! [`SdpaProblem`]: the checked description of one approved SDPA node — sizes, the normalised
//! mask band, bias broadcast, every port's dims, strides and data type — that every engine
//! projects its own launch parameters from. Only the analyzer builds one (inside an
//! [`ApprovedPlan`](crate::ApprovedPlan)), from a structurally valid graph, so its sizes are
//! positive and fit `usize`, and its band is exact for every `i64` bound the graph may hold.

use std::collections::BTreeMap;

use rime_graph::{
    DataType, DiagonalAlignment, Graph, Node, OpKind, Port, SdpaOptions, SdpaShape, TensorId,
};

use crate::AttnScale;

/// The sizes of a checked problem: every dim is at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemShape {
    /// Batch.
    pub b: usize,
    /// Query heads.
    pub hq: usize,
    /// Key heads (divides `hq`).
    pub hk: usize,
    /// Value heads (divides `hq`).
    pub hv: usize,
    /// Query length.
    pub sq: usize,
    /// Key/value length.
    pub skv: usize,
    /// Q/K head dim.
    pub dqk: usize,
    /// V head dim.
    pub dv: usize,
}

impl ProblemShape {
    /// The shape of a validated node, `None` when a dim is not positive.
    pub fn of(s: &SdpaShape) -> Option<ProblemShape> {
        let d = |x: i64| usize::try_from(x).ok().filter(|&v| v > 0);
        Some(ProblemShape {
            b: d(s.b)?,
            hq: d(s.hq)?,
            hk: d(s.hk)?,
            hv: d(s.hv)?,
            sq: d(s.sq)?,
            skv: d(s.skv)?,
            dqk: d(s.dqk)?,
            dv: d(s.dv)?,
        })
    }

    /// Query heads per key head.
    pub fn k_group(&self) -> usize {
        self.hq / self.hk
    }

    /// Query heads per value head.
    pub fn v_group(&self) -> usize {
        self.hq / self.hv
    }
}

/// The diagonal band of the mask: with shift d = 0 (top-left) or kv_len - q_len (bottom-right,
/// per batch), keep (i, j) iff `j <= i + d + right` (when set) and `j > i + d - left` (when
/// set).
///
/// [`Band::normalized`] drops a bound that cannot mask anything for the problem's sizes, so
/// every bound an engine sees is below max(Sq, Skv) and every engine agrees on graphs whose
/// bounds are as large as `i64` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Band {
    /// Sliding-window bound (>= 1), when it masks something.
    pub left: Option<i64>,
    /// Causal-like bound (>= 0; 0 is causal), when it masks something.
    pub right: Option<i64>,
    /// The diagonal is aligned to the bottom-right corner (shift kv_len - q_len).
    pub bottom_right: bool,
}

impl Band {
    /// The band of `options` for a problem of `sq` query rows and `skv` keys.
    ///
    /// Exact for every valid q_len <= sq, kv_len <= skv, with i < q_len and j < kv_len:
    ///
    /// - top-left (d = 0): a right bound of at least skv keeps every j (j < skv <= i + right),
    ///   and a left bound of at least sq too (i - left < 0 <= j);
    /// - bottom-right (d = kv_len - q_len): a right bound of at least sq keeps every j
    ///   (i + d + right >= kv_len - q_len + sq > j), and a left bound of at least skv too
    ///   (i + d - left <= kv_len - 1 - skv < 0).
    ///
    /// Such a bound is the same as none.
    pub fn normalized(options: &SdpaOptions, sq: usize, skv: usize) -> Band {
        let bottom_right = options.diagonal_alignment == DiagonalAlignment::BottomRight;
        let (right_reach, left_reach) = if bottom_right { (sq, skv) } else { (skv, sq) };
        let masks = |bound: Option<i64>, reach: usize| {
            bound.filter(|&b| usize::try_from(b).map_or(b < 0, |b| b < reach))
        };
        Band {
            left: masks(options.left_bound, left_reach),
            right: masks(options.right_bound, right_reach),
            bottom_right,
        }
    }

    /// The diagonal shift for valid lengths (q_len, kv_len).
    pub fn shift(&self, q_len: usize, kv_len: usize) -> i64 {
        if self.bottom_right {
            to_i64(kv_len) - to_i64(q_len)
        } else {
            0
        }
    }

    /// The definition: is score (i, j) kept, for valid lengths (q_len, kv_len)?
    pub fn keeps(&self, i: usize, j: usize, q_len: usize, kv_len: usize) -> bool {
        if i >= q_len || j >= kv_len {
            return false;
        }
        let (i, j) = (to_i64(i) + self.shift(q_len, kv_len), to_i64(j));
        self.right.is_none_or(|r| j <= i.saturating_add(r))
            && self.left.is_none_or(|l| j > i.saturating_sub(l))
    }
}

/// `x` as `i64`; sizes of a checked problem are far below `i64::MAX` (their products fit).
fn to_i64(x: usize) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// The (batch, head) dims of an additive bias: each 1 (broadcast) or the full B / Hq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiasShape {
    /// 1 or B.
    pub batch: usize,
    /// 1 or Hq.
    pub heads: usize,
}

/// One port's tensor, checked: rank 4, positive dims, non-negative strides with stride 1 on
/// the last dim (attention tensors), its element type resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    /// The graph tensor.
    pub id: TensorId,
    /// Its name (for errors).
    pub name: String,
    /// Logical dims.
    pub dims: [usize; 4],
    /// Element strides.
    pub strides: [usize; 4],
    /// Element type.
    pub data_type: DataType,
    /// The offsets tensor of a ragged (THD) layout: each sequence starts at its batch's offset,
    /// and the batch stride is unused.
    pub ragged_offset: Option<TensorId>,
}

impl TensorSpec {
    /// Elements a buffer must hold: the largest offset the dims and strides address, plus one.
    pub fn extent(&self) -> usize {
        // Checked when the problem was built: the span fits in 63 bits.
        self.dims
            .iter()
            .zip(&self.strides)
            .map(|(&d, &s)| (d - 1) * s)
            .sum::<usize>()
            + 1
    }

    fn of(graph: &Graph, id: TensorId) -> Option<TensorSpec> {
        let t = graph.get(id)?;
        let dims: [i64; 4] = t.dims.as_slice().try_into().ok()?;
        let strides: [i64; 4] = t.strides.as_slice().try_into().ok()?;
        let positive = |x: i64| usize::try_from(x).ok().filter(|&v| v > 0);
        let spec = TensorSpec {
            id,
            name: t.name.clone(),
            dims: [
                positive(dims[0])?,
                positive(dims[1])?,
                positive(dims[2])?,
                positive(dims[3])?,
            ],
            strides: [
                usize::try_from(strides[0]).ok()?,
                usize::try_from(strides[1]).ok()?,
                usize::try_from(strides[2]).ok()?,
                usize::try_from(strides[3]).ok()?,
            ],
            data_type: graph.data_type(id)?,
            ragged_offset: t.ragged_offset,
        };
        // The span must be representable (validation guarantees it; checked, not assumed).
        let span = spec
            .dims
            .iter()
            .zip(&spec.strides)
            .try_fold(1usize, |acc, (&d, &s)| {
                acc.checked_add((d - 1).checked_mul(s)?)
            })?;
        i64::try_from(span).ok().map(|_| spec)
    }
}

/// One approved SDPA node, checked: what an engine computes, on which tensors.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SdpaProblem {
    /// Forward or backward.
    pub op: OpKind,
    /// Sizes.
    pub shape: ProblemShape,
    /// Element type of Q, K, V, O, dO and the gradients.
    pub io: DataType,
    /// The attention scale.
    pub scale: AttnScale,
    /// The mask band, normalised.
    pub band: Band,
    /// ALiBi slopes added to the scores.
    pub alibi: bool,
    /// Padding mask (per-batch lengths come at execution).
    pub padding: bool,
    /// Additive bias, if any.
    pub bias: Option<BiasShape>,
    /// dBias requested.
    pub dbias: bool,
    /// Attention sink logits.
    pub sink: bool,
    /// dSink requested.
    pub dsink: bool,
    /// Tokens a packed (ragged) layout of the query side holds at most
    /// (`max_total_seq_len_q`; never negative, LAY002).
    pub max_total_seq_len_q: Option<u64>,
    /// Tokens a packed (ragged) layout of the key side holds at most (`max_total_seq_len_kv`).
    pub max_total_seq_len_kv: Option<u64>,
    tensors: BTreeMap<Port, TensorSpec>,
}

impl SdpaProblem {
    /// The problem of a node of a structurally valid graph; `None` when a tensor of it is not
    /// a rank-4 tensor of positive dims and representable span (never after validation).
    pub(crate) fn of(graph: &Graph, node: &Node, shape: &SdpaShape) -> Option<SdpaProblem> {
        let sizes = ProblemShape::of(shape)?;
        let mut tensors = BTreeMap::new();
        for (&port, &id) in node.inputs.iter().chain(&node.outputs) {
            tensors.insert(port, TensorSpec::of(graph, id)?);
        }
        let io = tensors.get(&Port::Q)?.data_type;
        let bias = tensors.get(&Port::Bias).map(|t| BiasShape {
            batch: t.dims[0],
            heads: t.dims[1],
        });
        let o = &node.options;
        Some(SdpaProblem {
            op: node.op,
            shape: sizes,
            io,
            scale: crate::plan::effective_scale(graph, node, shape),
            band: Band::normalized(o, sizes.sq, sizes.skv),
            alibi: o.alibi_mask,
            padding: o.padding_mask,
            bias,
            dbias: node.output(Port::DBias).is_some(),
            sink: node.input(Port::Sink).is_some(),
            dsink: node.output(Port::DSink).is_some(),
            max_total_seq_len_q: o.max_total_seq_len_q.and_then(|t| u64::try_from(t).ok()),
            max_total_seq_len_kv: o.max_total_seq_len_kv.and_then(|t| u64::try_from(t).ok()),
            tensors,
        })
    }

    /// The tensor bound to `port`, if any.
    pub fn tensor(&self, port: Port) -> Option<&TensorSpec> {
        self.tensors.get(&port)
    }

    /// Every bound port with its tensor, inputs and outputs alike, in port order.
    pub fn tensors(&self) -> impl Iterator<Item = (Port, &TensorSpec)> {
        self.tensors.iter().map(|(&p, t)| (p, t))
    }

    /// True when the bias broadcasts over the batch or the heads (dBias then sums over them).
    pub fn bias_broadcasts(&self) -> bool {
        let s = &self.shape;
        self.bias
            .is_some_and(|b| (b.batch == 1 && s.b > 1) || (b.heads == 1 && s.hq > 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(
        left: Option<i64>,
        right: Option<i64>,
        bottom_right: bool,
        sq: usize,
        skv: usize,
    ) -> Band {
        let options = SdpaOptions {
            left_bound: left,
            right_bound: right,
            diagonal_alignment: if bottom_right {
                DiagonalAlignment::BottomRight
            } else {
                DiagonalAlignment::TopLeft
            },
            ..SdpaOptions::default()
        };
        Band::normalized(&options, sq, skv)
    }

    #[test]
    fn bounds_that_mask_nothing_are_dropped_exactly() {
        // Every (i, j) and valid lengths: the normalised band keeps what the raw one keeps.
        for (sq, skv) in [(5, 7), (7, 5), (1, 9), (9, 1)] {
            for br in [false, true] {
                for bound in [0, 1, 3, 4, 5, 6, 7, 8, 11, 12, 13, 1 << 32, i64::MAX] {
                    for (left, right) in [(None, Some(bound)), (Some(bound.max(1)), None)] {
                        let raw = Band {
                            left,
                            right,
                            bottom_right: br,
                        };
                        let norm = band(left, right, br, sq, skv);
                        for q_len in 0..=sq {
                            for kv_len in 0..=skv {
                                for i in 0..sq {
                                    for j in 0..skv {
                                        assert_eq!(
                                            raw.keeps(i, j, q_len, kv_len),
                                            norm.keeps(i, j, q_len, kv_len),
                                            "{raw:?} {norm:?} {i} {j} {q_len} {kv_len}"
                                        );
                                    }
                                }
                            }
                        }
                        let reach = sq.max(skv) as i64;
                        for b in [norm.left, norm.right].into_iter().flatten() {
                            assert!(b < reach, "{norm:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn huge_bounds_are_no_bounds_and_small_ones_stay() {
        assert_eq!(
            band(Some(i64::MAX), Some(1 << 32), false, 64, 64),
            Band::default()
        );
        let kept = band(Some(64), Some(0), true, 64, 100);
        assert_eq!((kept.left, kept.right), (Some(64), Some(0)));
        // Top-left: right bounds from Skv on and left bounds from Sq on are dropped.
        assert_eq!(band(None, Some(99), false, 64, 100).right, Some(99));
        assert_eq!(band(None, Some(100), false, 64, 100).right, None);
        assert_eq!(band(Some(63), None, false, 64, 100).left, Some(63));
        assert_eq!(band(Some(64), None, false, 64, 100).left, None);
        // Bottom-right: the other way round.
        assert_eq!(band(None, Some(64), true, 64, 100).right, None);
        assert_eq!(band(Some(99), None, true, 64, 100).left, Some(99));
        assert_eq!(band(Some(100), None, true, 64, 100).left, None);
    }
}
