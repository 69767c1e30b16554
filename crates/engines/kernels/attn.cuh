// attn.cuh: what the attention kernels share about the problem: per-batch sequence lengths and
// the mask band, the ALiBi slopes and the dS workspace pitch. It reads
// AttnParams, which the generated kernel ABI (crates/engines/src/cuda/abi.rs) declares just
// before this text.

// Valid lengths of batch b (the padding mask's, clamped to the tensors; else Sq, Skv) and the
// diagonal shift that goes with them: (i, j) is kept iff i < q, j < kv, j <= i + shift +
// right_bound (when has_right) and j > i + shift - left_bound (when has_left).
//
// Overflow: the analyzer keeps Sq, Skv <= 2^30 (rule SMX013) and drops bounds that mask nothing
// (top-left: right >= Skv, left >= Sq; bottom-right: right >= Sq, left >= Skv), so for i < q
// every i + shift + bound, and the tile ranges built from them, stay within 32 bits.
struct SeqLens {
    int q, kv, shift;
};

__device__ __forceinline__ int clamp_len(const TensorRef& t, int b, int max) {
    if (t.ptr == 0) return max;
    const int v = ((const int*)t.ptr)[b * t.sb];
    return v < 0 ? 0 : (v > max ? max : v);
}

// RAGGED: 1 lets a tensor be ragged (read from TensorRef::ragged at run time); 0, which the
// backward main kernel is built with for graphs without ragged tensors, compiles the padded
// layout alone (the ragged branches cost that kernel registers it does not have to spare).
#ifndef RAGGED
#define RAGGED 1
#endif

// Element where batch b of tensor t starts: its validated ragged offset (THD; the host copied
// the offsets into the workspace) or b times its batch stride.
__device__ __forceinline__ i64 batch_base(const TensorRef& t, int b) {
    return RAGGED && t.ragged ? ((const i64*)t.ragged)[b] : (i64)b * t.sb;
}

// Rows (tokens) of one batch that tensor t has memory for: a ragged sequence only its `len`
// real tokens (the host checked they fit before its next sequence), a padded tensor all `dim`.
// Loads zero-fill and stores skip the rows past it, so nothing outside a sequence is touched.
__device__ __forceinline__ int rows_held(const TensorRef& t, int len, int dim) {
    return RAGGED && t.ragged ? len : dim;
}

__device__ __forceinline__ SeqLens seq_lens(const AttnParams& p, int b) {
    SeqLens l;
    l.q = clamp_len(p.seq_q, b, p.sq);
    l.kv = clamp_len(p.seq_kv, b, p.skv);
    l.shift = p.bottom_right ? l.kv - l.q : 0;
    return l;
}

// Keep (i, j) iff it is inside the sequences and the diagonal band (docs/sdpa-backward.md,
// "Masks").
// (Scalars, not the parameter block by reference: at the backward's register limit, the
// reference measured up to 64 spill bytes more.)
__device__ __forceinline__ bool rime_keep(int i, int j, int q, int kv, int shift, int has_right,
                                          int right_bound, int has_left, int left_bound) {
    bool keep = i < q && j < kv;
    if (has_right) keep = keep && j <= i + shift + right_bound;
    if (has_left) keep = keep && j > i + shift - left_bound;
    return keep;
}

// KV columns [j_begin, j_end) that the band leaves to query rows [m0, m0 + rows) (tile skipping;
// 32-bit sums, see above): empty when every row lies past the padding mask's length (those rows
// are fully masked). The forward walks its KV tiles, the dQ GEMM its dS chunks, over this range.
__device__ __forceinline__ void kv_range_of(const AttnParams& p, const SeqLens& L, int m0,
                                            int rows, int& j_begin, int& j_end) {
    int row_last = m0 + rows - 1;
    if (row_last > L.q - 1) row_last = L.q - 1;
    j_begin = 0;
    j_end = L.kv;
    if (p.has_left) {
        const int lo = m0 + L.shift - p.left_bound + 1;
        if (lo > j_begin) j_begin = lo;
    }
    if (p.has_right) {
        const int hi = row_last + L.shift + p.right_bound + 1;
        if (hi < j_end) j_end = hi;
    }
    if (row_last < m0) j_end = j_begin;
}

// ALiBi slope of query head h (the standard geometric sequence, also for Hq not a power of 2).
__device__ __forceinline__ float rime_alibi_slope(const AttnParams& p, int h) {
    float s = h < p.alibi_n ? p.alibi_base : p.alibi_half;
    const int e = h < p.alibi_n ? h : h - p.alibi_n;
    for (int k = 0; k < e; ++k) s *= p.alibi_base;
    return s;
}

// Row pitch of the two_kernel route's dS workspace: Skv rounded up to RIME_DS_PITCH columns.
__device__ __forceinline__ i64 ds_pitch(int skv) {
    return (i64)((skv + RIME_DS_PITCH - 1) / RIME_DS_PITCH) * RIME_DS_PITCH;
}

__device__ __forceinline__ unsigned int ld_acquire_u32(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release_u32(unsigned int* p, unsigned int v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
