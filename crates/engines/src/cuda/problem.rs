//! The attention problem the sm120 kernels are asked to solve: dims, dtype, options and the
//! strides of every tensor. (The analyzer's approved plan is what will fill this in.)

use super::compile::IoType;

/// Element strides of a rank-4 (B, H, S, D) tensor; the last dim is contiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Strides {
    /// Batch stride.
    pub b: i64,
    /// Head stride.
    pub h: i64,
    /// Sequence stride.
    pub s: i64,
}

impl Strides {
    /// Packed BHSD strides for dims (_, h, s, d).
    pub fn bhsd(h: usize, s: usize, d: usize) -> Self {
        Self {
            b: (h * s * d) as i64,
            h: (s * d) as i64,
            s: d as i64,
        }
    }

    /// Packed BSHD strides (heads interleaved in each row) for dims (_, h, s, d).
    pub fn bshd(h: usize, s: usize, d: usize) -> Self {
        Self {
            b: (s * h * d) as i64,
            h: d as i64,
            s: (h * d) as i64,
        }
    }

    /// Elements a buffer needs to hold this tensor (largest offset + 1).
    pub fn extent(&self, dims: [usize; 4]) -> usize {
        let last = |n: usize, s: i64| n.saturating_sub(1) as i64 * s;
        (last(dims[0], self.b) + last(dims[1], self.h) + last(dims[2], self.s)) as usize + dims[3]
    }
}

/// The diagonal band: keep (i, j) iff `j <= i + shift + right` and `j > i + shift - left`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Band {
    /// Right bound (causal = Some(0)).
    pub right: Option<i32>,
    /// Left bound (>= 1; sliding window).
    pub left: Option<i32>,
    /// Diagonal aligned to the bottom-right corner (shift = Skv - Sq) instead of top-left.
    pub bottom_right: bool,
}

/// Shape of an additive bias: (bias_b, bias_h, Sq, Skv) with bias_b in {1, B}, bias_h in {1, Hq}.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiasShape {
    /// 1 (broadcast over the batch) or B.
    pub batch: usize,
    /// 1 (broadcast over heads) or Hq.
    pub heads: usize,
}

/// Every tensor's strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layouts {
    /// Q.
    pub q: Strides,
    /// K.
    pub k: Strides,
    /// V.
    pub v: Strides,
    /// O.
    pub o: Strides,
    /// dO.
    pub d_o: Strides,
    /// Stats (f32, D = 1).
    pub stats: Strides,
    /// Bias (real strides; broadcast dims are handled by the engine).
    pub bias: Strides,
    /// dQ.
    pub dq: Strides,
    /// dK.
    pub dk: Strides,
    /// dV.
    pub dv: Strides,
    /// dBias.
    pub dbias: Strides,
    /// Sequence lengths of the padding mask (only the batch stride matters).
    pub seq_q: Strides,
    /// KV sequence lengths of the padding mask.
    pub seq_kv: Strides,
}

/// One SDPA problem for the sm120 engine.
#[derive(Debug, Clone, PartialEq)]
pub struct AttnProblem {
    /// B.
    pub batch: usize,
    /// Query heads.
    pub hq: usize,
    /// K heads.
    pub hk: usize,
    /// V heads.
    pub hv: usize,
    /// Query length.
    pub sq: usize,
    /// KV length.
    pub skv: usize,
    /// Head dim of Q and K.
    pub dqk: usize,
    /// Head dim of V.
    pub dv: usize,
    /// Element type of the io tensors.
    pub io: IoType,
    /// Attention scale.
    pub scale: f32,
    /// Mask band.
    pub band: Band,
    /// Additive bias, if any.
    pub bias: Option<BiasShape>,
    /// Whether dBias is requested.
    pub dbias: bool,
    /// ALiBi: adds slope_h * (j - i) to the scores (the standard slopes, as the CPU engine).
    pub alibi: bool,
    /// Padding mask: per-batch valid lengths come with the buffers (i32, (B,1,1,1)).
    pub padding: bool,
    /// Strides of every tensor.
    pub layouts: Layouts,
}

/// Logical (B, H, S, D) dims of every tensor of a problem (Stats as (B, Hq, Sq, 1), the bias as
/// its own (B, H) with (Sq, Skv)).
#[derive(Debug, Clone, Copy)]
pub struct Dims {
    /// Q and dQ.
    pub q: [usize; 4],
    /// K and dK.
    pub k: [usize; 4],
    /// V and dV.
    pub v: [usize; 4],
    /// O and dO.
    pub o: [usize; 4],
    /// Stats.
    pub stats: [usize; 4],
    /// Bias and dBias, when the problem has one.
    pub bias: Option<[usize; 4]>,
}

impl AttnProblem {
    /// The logical dims of every tensor.
    pub fn dims(&self) -> Dims {
        Dims {
            q: [self.batch, self.hq, self.sq, self.dqk],
            k: [self.batch, self.hk, self.skv, self.dqk],
            v: [self.batch, self.hv, self.skv, self.dv],
            o: [self.batch, self.hq, self.sq, self.dv],
            stats: [self.batch, self.hq, self.sq, 1],
            bias: self.bias.map(|b| [b.batch, b.heads, self.sq, self.skv]),
        }
    }

    /// True when some bias dim broadcasts (dBias then needs the f32 accumulator).
    pub fn bias_broadcasts(&self) -> bool {
        self.bias
            .is_some_and(|b| (b.batch == 1 && self.batch > 1) || (b.heads == 1 && self.hq > 1))
    }
}
