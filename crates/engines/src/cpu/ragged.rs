//! Ragged (packed, THD) layouts, as cuDNN's `ragged_offset` defines them: a tensor of dims
//! (B, H, S, D) whose batch `b` starts at element `offsets[b]` of its buffer instead of at
//! `b x` its batch stride (which is unused), with B + 1 offsets. Sequence `b` holds only its
//! real tokens (its sequence length, S without a padding mask), laid out by the head, token
//! and dim strides; THD is the layout with token stride H x D and head stride D, and offsets
//! `cumsum(seq_len) x H x D`.
//!
//! The checks here make every access of a ragged tensor land inside its own sequence: the
//! offsets do not decrease, the last one is inside the buffer, and each sequence's tokens fit
//! between its offset and the next, so sequences never overlap (outputs included). They are
//! engine-neutral: the sm120 engine runs the same ones on the offsets and lengths it copies to
//! the host before its kernels run (`crates/engines/src/cuda/ragged.rs`).

use rime_analyzer::{SdpaProblem, TensorSpec};
use rime_graph::{Sequence, Tensor};

use super::layout::View4;
use crate::{Buffer, EngineError, HostData};

/// Elements (i, 0, 0, 0) for i < `count` of an integer tensor: sequence lengths, offsets.
/// `None` when the buffer does not hold integers (or is not on the host).
pub(crate) fn integers(buffer: &dyn Buffer, view: &View4, count: usize) -> Option<Vec<i64>> {
    let at = |i: usize| view.offset(i, 0, 0, 0);
    match buffer.host()? {
        HostData::I32(x) => Some((0..count).map(|i| i64::from(x[at(i)])).collect()),
        HostData::I64(x) => Some((0..count).map(|i| x[at(i)]).collect()),
        HostData::Float(_) => None,
    }
}

/// The B + 1 element offsets held by `buffer`, the offsets tensor `o` of the ragged tensor
/// `tensor`: each must be >= 0 (the order and the ends are checked with the tensor's view).
pub(crate) fn offsets_of(
    tensor: &str,
    o: &Tensor,
    buffer: &dyn Buffer,
) -> Result<Vec<usize>, EngineError> {
    let view = View4::new(&o.name, &o.dims, &o.strides)?;
    let values =
        integers(buffer, &view, view.dims[0]).ok_or_else(|| EngineError::DataTypeMismatch {
            tensor: o.name.clone(),
            expected: rime_graph::DataType::I64,
            actual: buffer.data_type(),
        })?;
    values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            usize::try_from(value).map_err(|_| EngineError::RaggedOffsetNegative {
                tensor: tensor.to_owned(),
                offsets: o.name.clone(),
                index,
                value,
            })
        })
        .collect()
}

/// Checks the last offset of ragged tensor `t` (of `sequence`) against what
/// `max_total_seq_len_q/kv` tokens hold when the option is set: total x the token stride
/// elements, the packed scratch the cuDNN frontend sizes by it.
pub(crate) fn check_max_total(
    spec: &SdpaProblem,
    t: &TensorSpec,
    sequence: Sequence,
    offsets_name: &str,
    offsets: &[usize],
) -> Result<(), EngineError> {
    let (option, total) = match sequence {
        Sequence::Q => ("max_total_seq_len_q", spec.max_total_seq_len_q),
        Sequence::Kv => ("max_total_seq_len_kv", spec.max_total_seq_len_kv),
    };
    let last = offsets.last().copied().unwrap_or(0);
    let stride = t.strides[2];
    let limit = total.and_then(|n| n.checked_mul(u64::try_from(stride).ok()?));
    if let (Some(total), Some(limit)) = (total, limit) {
        if u64::try_from(last).map_or(true, |l| l > limit) {
            return Err(EngineError::RaggedPastMaxTotal {
                tensor: t.name.clone(),
                offsets: offsets_name.to_owned(),
                option,
                total,
                stride,
                limit,
                last,
            });
        }
    }
    Ok(())
}

/// The `batch` sequence lengths of a padding mask's length tensor `t` (layout `view`) held
/// by `buffer`, each within 0..=`max`; `None` when the buffer holds no integers.
pub(crate) fn seq_len_values(
    t: &TensorSpec,
    view: &View4,
    buffer: &dyn Buffer,
    batch: usize,
    max: usize,
) -> Option<Result<Vec<usize>, EngineError>> {
    let values = integers(buffer, view, batch)?;
    Some(
        values
            .into_iter()
            .enumerate()
            .map(|(b, value)| {
                usize::try_from(value)
                    .ok()
                    .filter(|&l| l <= max)
                    .ok_or_else(|| EngineError::SeqLenOutOfRange {
                        tensor: t.name.clone(),
                        batch: b,
                        value,
                        max,
                    })
            })
            .collect(),
    )
}

/// The sequence offsets of one ragged tensor: sequence `b` may use elements
/// `offsets[b]..offsets[b + 1]`.
#[derive(Debug, Clone, Copy)]
pub struct Ragged<'a> {
    name: &'a str,
    offsets: &'a [usize],
}

impl<'a> Ragged<'a> {
    /// The offsets (B + 1 element offsets) held by the tensor `name`.
    pub fn new(name: &'a str, offsets: &'a [usize]) -> Ragged<'a> {
        Ragged { name, offsets }
    }

    /// The offsets tensor's name (for errors).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The element where sequence `b` starts.
    #[inline]
    pub fn start(&self, b: usize) -> usize {
        self.offsets[b]
    }

    /// The last offset: where the last sequence's room ends.
    pub fn last(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Checks the offsets of tensor `tensor` (layout `view`) against a buffer of `len`
    /// elements: B + 1 of them, not decreasing, the last within the buffer.
    pub(crate) fn check(&self, tensor: &str, view: &View4, len: usize) -> Result<(), EngineError> {
        let batch = view.dims[0];
        if self.offsets.len() != batch + 1 {
            return Err(EngineError::DimsMismatch {
                tensor: self.name.to_owned(),
                expected: vec![batch + 1, 1, 1, 1],
                actual: vec![self.offsets.len(), 1, 1, 1],
            });
        }
        if let Some(b) = (0..batch).find(|&b| self.offsets[b] > self.offsets[b + 1]) {
            return Err(EngineError::RaggedOffsetsNotMonotone {
                tensor: tensor.to_owned(),
                offsets: self.name.to_owned(),
                batch: b,
                start: self.offsets[b],
                end: self.offsets[b + 1],
            });
        }
        if self.last() > len {
            return Err(EngineError::RaggedPastBufferEnd {
                tensor: tensor.to_owned(),
                offsets: self.name.to_owned(),
                last: self.last(),
                len,
            });
        }
        Ok(())
    }

    /// Checks that sequence `b`'s `tokens(b)` tokens fit between its offset and the next.
    pub(crate) fn check_tokens(
        &self,
        tensor: &str,
        view: &View4,
        tokens: impl Fn(usize) -> usize,
    ) -> Result<(), EngineError> {
        for b in 0..view.dims[0] {
            let tokens = tokens(b);
            let room = self.offsets[b + 1] - self.offsets[b];
            let needed = sequence_extent(view, tokens);
            if needed.is_none_or(|n| n > room) {
                return Err(EngineError::RaggedSequenceOverflow {
                    tensor: tensor.to_owned(),
                    offsets: self.name.to_owned(),
                    batch: b,
                    tokens,
                    needed: needed.unwrap_or(usize::MAX),
                    room,
                });
            }
        }
        Ok(())
    }
}

/// Offsets that pack sequences of `tokens[b]` tokens one after another, each taking what its
/// tokens span ([`sequence_extent`]): for THD, `cumsum(tokens) x` the token stride, as cuDNN's
/// samples compute them. B + 1 of them; `None` on overflow.
pub fn packed_offsets(view: &View4, tokens: &[usize]) -> Option<Vec<usize>> {
    let mut offsets = Vec::with_capacity(tokens.len() + 1);
    offsets.push(0usize);
    let mut end = 0usize;
    for &n in tokens {
        end = end.checked_add(sequence_extent(view, n)?)?;
        offsets.push(end);
    }
    Some(offsets)
}

/// For every logical index (b, h, s, d) of `view`'s dims, in row-major order, the element of
/// the ragged buffer that holds it: `Some` for the real tokens (s < `tokens[b]`), `None` for
/// the rows a ragged sequence does not have. For packing and unpacking whole tensors.
pub fn logical_elements<'a>(
    view: &'a View4,
    offsets: &'a [usize],
    tokens: &'a [usize],
) -> impl Iterator<Item = Option<usize>> + 'a {
    let [b, h, s, d] = view.dims;
    let [_, sh, ss, sd] = view.strides;
    (0..b).flat_map(move |bb| {
        (0..h).flat_map(move |hh| {
            (0..s).flat_map(move |tt| {
                (0..d).map(move |dd| {
                    (tt < tokens[bb]).then(|| offsets[bb] + hh * sh + tt * ss + dd * sd)
                })
            })
        })
    })
}

/// Elements `tokens` tokens of one sequence span from its offset: 1 + the largest offset of
/// (h, s, d) with s < tokens; 0 for an empty sequence; `None` on overflow.
pub fn sequence_extent(view: &View4, tokens: usize) -> Option<usize> {
    if tokens == 0 {
        return Some(0);
    }
    let [_, h, _, d] = view.dims;
    let [_, sh, ss, sd] = view.strides;
    let reach = [(h, sh), (tokens, ss), (d, sd)]
        .into_iter()
        .try_fold(0usize, |acc, (n, stride)| {
            acc.checked_add((n - 1).checked_mul(stride)?)
        })?;
    reach.checked_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (B=3, H=2, S=4, D=3) in THD: token stride 6, head stride 3.
    fn thd() -> View4 {
        View4 {
            dims: [3, 2, 4, 3],
            strides: [6, 3, 6, 1],
        }
    }

    #[test]
    fn extents_count_real_tokens_only() {
        assert_eq!(sequence_extent(&thd(), 0), Some(0));
        assert_eq!(sequence_extent(&thd(), 1), Some(6));
        assert_eq!(sequence_extent(&thd(), 4), Some(24));
        // Stats (B, H, S, 1) in THD: H elements per token.
        let stats = View4 {
            dims: [3, 2, 4, 1],
            strides: [2, 1, 2, 1],
        };
        assert_eq!(sequence_extent(&stats, 3), Some(6));
    }

    #[test]
    fn packed_offsets_are_prefix_sums_and_elements_follow_them() {
        let offsets = packed_offsets(&thd(), &[1, 0, 3]).unwrap();
        assert_eq!(offsets, vec![0, 6, 6, 24]);
        Ragged::new("off", &offsets)
            .check_tokens("Q", &thd(), |b| [1, 0, 3][b])
            .unwrap();
        let tokens = [1, 0, 3];
        let at: Vec<Option<usize>> = logical_elements(&thd(), &offsets, &tokens).collect();
        assert_eq!(at.len(), 3 * 2 * 4 * 3);
        // Batch 0, head 1, token 0, dim 2; batch 0's token 1 does not exist.
        assert_eq!(at[4 * 3 + 2], Some(5));
        assert_eq!(at[3], None);
        // Batch 2, head 0, token 2, dim 1.
        assert_eq!(at[((2 * 2) * 4 + 2) * 3 + 1], Some(6 + 12 + 1));
        let mut real: Vec<usize> = at.iter().flatten().copied().collect();
        real.sort_unstable();
        assert_eq!(real, (0..24).collect::<Vec<_>>(), "every element once");
    }

    #[test]
    fn offsets_are_checked_in_count_order_and_reach() {
        let ok = [0, 6, 6, 24];
        Ragged::new("off", &ok).check("Q", &thd(), 24).unwrap();
        Ragged::new("off", &ok)
            .check_tokens("Q", &thd(), |b| [1, 0, 3][b])
            .unwrap();
        let short = [0, 6, 24];
        assert!(matches!(
            Ragged::new("off", &short).check("Q", &thd(), 24),
            Err(EngineError::DimsMismatch { .. })
        ));
        let down = [0, 12, 6, 24];
        assert_eq!(
            Ragged::new("off", &down).check("Q", &thd(), 24),
            Err(EngineError::RaggedOffsetsNotMonotone {
                tensor: "Q".into(),
                offsets: "off".into(),
                batch: 1,
                start: 12,
                end: 6
            })
        );
        assert_eq!(
            Ragged::new("off", &ok).check("Q", &thd(), 23),
            Err(EngineError::RaggedPastBufferEnd {
                tensor: "Q".into(),
                offsets: "off".into(),
                last: 24,
                len: 23
            })
        );
        // Two tokens in batch 0 would run into batch 1's first token.
        assert_eq!(
            Ragged::new("off", &ok).check_tokens("Q", &thd(), |b| [2, 0, 3][b]),
            Err(EngineError::RaggedSequenceOverflow {
                tensor: "Q".into(),
                offsets: "off".into(),
                batch: 0,
                tokens: 2,
                needed: 12,
                room: 6
            })
        );
    }
}
