//! Kernel parameter blocks, laid out exactly as the `AttnParams` / `ConvertParams` structs in
//! crates/engines/kernels/common.cuh and convert.cu (same field order, C layout).

use cudarc::driver::DeviceRepr;

/// One tensor argument: device address and element strides of the batch, head and sequence dims.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TensorRef {
    /// Device address (0 when the tensor is absent).
    pub ptr: u64,
    /// Batch stride (elements; 0 for a broadcast batch dim).
    pub sb: i64,
    /// Head stride (elements; 0 for a broadcast head dim).
    pub sh: i64,
    /// Sequence stride (elements).
    pub ss: i64,
}

/// Parameters of the forward, preprocess and main backward kernels.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AttnParams {
    /// Q.
    pub q: TensorRef,
    /// K.
    pub k: TensorRef,
    /// V.
    pub v: TensorRef,
    /// O (forward output, backward input).
    pub o: TensorRef,
    /// dO.
    pub d_o: TensorRef,
    /// Stats (f32 log-sum-exp).
    pub stats: TensorRef,
    /// Additive bias.
    pub bias: TensorRef,
    /// dQ.
    pub dq: TensorRef,
    /// dK.
    pub dk: TensorRef,
    /// dV.
    pub dv: TensorRef,
    /// dBias.
    pub dbias: TensorRef,
    /// i32 sequence lengths of the padding mask, (B,1,1,1) (ptr 0: no padding mask).
    pub seq_q: TensorRef,
    /// i32 KV sequence lengths of the padding mask.
    pub seq_kv: TensorRef,
    /// Workspace: f32 delta `[B][Hq][Sq]`.
    pub delta: u64,
    /// Workspace: f32 dQ accumulator `[B][Hq][Sq][Dqk]`.
    pub dq_accum: u64,
    /// Workspace: f32 dBias accumulator `[bias_b][bias_h][Sq][Skv]` (0 when unused).
    pub dbias_accum: u64,
    /// Workspace: u32 relay turn counters `[B][Hq][ceil(Sq / block_q)]` (0 unless relay).
    pub relay: u64,
    /// Workspace: io dS `[B][Hq][Sq][round_up(Skv, 128)]` (0 unless two_kernel).
    pub ds: u64,
    /// B.
    pub batch: i32,
    /// Query heads.
    pub hq: i32,
    /// K heads.
    pub hk: i32,
    /// V heads.
    pub hv: i32,
    /// Query length.
    pub sq: i32,
    /// KV length.
    pub skv: i32,
    /// 1: diagonal aligned bottom-right (shift = kv_len - q_len per batch), 0: top-left.
    pub bottom_right: i32,
    /// 1 when the band has a right bound.
    pub has_right: i32,
    /// Right bound (causal: 0).
    pub right_bound: i32,
    /// 1 when the band has a left bound.
    pub has_left: i32,
    /// Left bound (>= 1).
    pub left_bound: i32,
    /// Bias batch dim (1 or B).
    pub bias_b: i32,
    /// Bias head dim (1 or Hq).
    pub bias_h: i32,
    /// Attention scale.
    pub scale: f32,
    /// Actual Q/K head dim (at most the compiled envelope; a multiple of 8).
    pub hd_qk: i32,
    /// Actual V head dim.
    pub hd_v: i32,
    /// 0 without ALiBi; else 2^floor(log2 Hq).
    pub alibi_n: i32,
    /// 2^(-8 / alibi_n).
    pub alibi_base: f32,
    /// 2^(-4 / alibi_n).
    pub alibi_half: f32,
    /// Keeps the struct a multiple of 8 bytes, like the CUDA side.
    pub pad_: i32,
}

/// Parameters of the convert kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConvertParams {
    /// Compact f32 accumulator `[d0][d1][d2][d3]`.
    pub src: u64,
    /// Destination tensor (io dtype).
    pub dst: u64,
    /// Destination stride of dim 0.
    pub s0: i64,
    /// Destination stride of dim 1.
    pub s1: i64,
    /// Destination stride of dim 2.
    pub s2: i64,
    /// Extent of dim 1.
    pub d1: i32,
    /// Extent of dim 2.
    pub d2: i32,
    /// Extent of dim 3 (contiguous).
    pub d3: i32,
    /// Factor applied before conversion.
    pub scale: f32,
}

// SAFETY: both are plain `repr(C)` structs of integers and floats with the exact layout of their
// CUDA counterparts (checked by the size test below), passed to kernels by value.
unsafe impl DeviceRepr for AttnParams {}
// SAFETY: as above.
unsafe impl DeviceRepr for ConvertParams {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_cuda_structs() {
        // 13 TensorRefs of 32 bytes, 5 pointers, 20 ints and floats.
        assert_eq!(std::mem::size_of::<AttnParams>(), 13 * 32 + 5 * 8 + 20 * 4);
        assert_eq!(std::mem::size_of::<ConvertParams>(), 2 * 8 + 3 * 8 + 4 * 4);
    }
}
