// attn.cuh: what the attention kernels share about the problem: per-batch sequence lengths and
// the mask band, the tile ranges the band leaves (kv_range_of, q_tiles_of, ds_rows_of...: pure
// integer functions, which the host test crates/engines/src/cuda/band_ranges.rs also compiles
// with the host's C++ compiler), the ALiBi slopes and the dS workspace pitch. It reads
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

// Element offset idx * stride of an index below 2^32 (a batch, head, (batch, head) pair or row;
// pass an int only where it is non-negative): widened as unsigned, the product is one 32 x
// 64-bit multiply (IMAD.WIDE.U32 and one IMAD); widened as signed, the compiler sign-extends
// and multiplies 64 x 64 bits. Modulo 2^64 both are the same product, so a negative stride
// comes out right too.
__device__ __forceinline__ i64 elem_off(u32 idx, i64 stride) {
    return (i64)((u64)idx * (u64)stride);
}

// Offset of dQ element (row i, column d) in one (batch, head) plane of the f32 dQ accumulator,
// `rows` x `cols` (cols a multiple of 8). Rows go in groups of 16, each group a contiguous range
// of 16 x cols floats (the last group, n < 16 rows, n x cols) holding its 8-column blocks one
// after the other. In a whole group a block is 128 floats in mma-fragment order: lane
// (g = lane / 4, t = lane % 4) of a fragment holds (g, 2t), (g, 2t + 1), (g + 8, 2t),
// (g + 8, 2t + 1), at 4 (4 g + t) + {0, 1, 2, 3}, so one warp's 16-byte reductions of a fragment
// cover 512 consecutive bytes; the last group's blocks are row-major (n x 8), for 8-byte
// reductions of each row's pair. One-to-one onto [0, rows x cols): the plane's size is that of
// the row-major layout. bwd_main.cu adds in it, bwd_preprocess.cu zeroes its groups and
// convert.cu reads it (ConvertParams::tiled); band_ranges.rs checks all of this on the host.
// dq_acc_group: the rows n of row i's group; dq_acc_at: the offset of (i, d) in a group of n
// rows (the next 8-column block starts n x 8 floats on).
__device__ __forceinline__ int dq_acc_group(int i, int rows) {
    const int left = rows - (i & ~15);
    return left < 16 ? left : 16;
}
__device__ __forceinline__ i64 dq_acc_at(int i, int d, int n, int cols) {
    const i64 block = elem_off(i & ~15, cols) + (d >> 3) * (n * 8);
    return n == 16 ? block + ((i & 7) * 4 + ((d & 7) >> 1)) * 4 + (i & 8) / 4 + (d & 1)
                   : block + (i & 15) * 8 + (d & 7);
}
__device__ __forceinline__ i64 dq_acc_off(int i, int d, int rows, int cols) {
    return dq_acc_at(i, d, dq_acc_group(i, rows), cols);
}

// Element where batch b of tensor t starts: its validated ragged offset (THD; the host copied
// the offsets into the workspace) or b times its batch stride.
__device__ __forceinline__ i64 batch_base(const TensorRef& t, int b) {
    return RAGGED && t.ragged ? ((const i64*)t.ragged)[b] : elem_off(b, t.sb);
}

// Rows (tokens) of one batch that tensor t has memory for: a ragged sequence only its `len`
// real tokens (the host checked they fit before its next sequence), a padded tensor all `dim`.
// Stores skip the rows past it, so nothing outside a sequence is touched (a padded output's
// rows past `len` get their zeros). Loads read `len` rows of every tensor, ragged or padded:
// a padded tensor's rows past `len` are padding that callers leave uninitialised, and a masked
// P or dS of 0 times a NaN there is NaN in the real rows' results.
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

// The same band as the columns [lo, hi) that query row i keeps (empty for a row at or past q),
// so that a tile's masked elements are tested against two bounds found once per row. Two forms
// of one rule because each compiles better where it is used (rime_keep through this spilled in
// the d128 relay and d256 builds on sm_120); the host test band_ranges.rs checks that they
// agree. (32-bit sums: with the bounds the analyzer keeps, i + shift + right_bound + 1 <=
// 2^31 - 1, see above.)
__device__ __forceinline__ void keep_cols_of_row(int i, int q, int kv, int shift, int has_right,
                                                 int right_bound, int has_left, int left_bound,
                                                 int& lo, int& hi) {
    lo = 0;
    hi = 0;
    if (i >= q) return;
    hi = kv;
    if (has_right && i + shift + right_bound + 1 < hi) hi = i + shift + right_bound + 1;
    if (has_left && i + shift - left_bound + 1 > lo) lo = i + shift - left_bound + 1;
}

// Tiles [t_begin, t_end) of `tile` elements that hold positions [begin, end) (none when the
// range is empty): the forward's and the dQ GEMM's KV tiles, the backward's Q tiles.
template <int tile>
__device__ __forceinline__ void tiles_of(int begin, int end, int& t_begin, int& t_end) {
    t_begin = begin / tile;
    t_end = end > begin ? (end + tile - 1) / tile : t_begin;
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

// Query tiles [m_begin, m_end) of block_q rows that the band leaves for KV tile n of block_kv
// columns (the backward's tile skipping). Every backward block, the relay turn order and the
// two_kernel dS rows (ds_rows_of) use this one function. (32-bit sums: see above.)
template <int block_q, int block_kv>
__device__ __forceinline__ void q_tiles_of(const AttnParams& p, const SeqLens& L, int n,
                                           int& m_begin, int& m_end) {
    const int n0 = n * block_kv;
    int j_last = n0 + block_kv - 1;
    if (j_last > L.kv - 1) j_last = L.kv - 1;
    int i_begin = 0;
    int i_end = L.q;
    if (p.has_right) {
        const int lo = n0 - L.shift - p.right_bound;
        if (lo > i_begin) i_begin = lo;
    }
    if (p.has_left) {
        const int hi = j_last - L.shift + p.left_bound;
        if (hi < i_end) i_end = hi;
    }
    if (j_last < n0) i_end = i_begin;  // the tile lies past the padding mask's KV length
    tiles_of<block_q>(i_begin, i_end, m_begin, m_end);
}

// Rows [r0, r1) of the Sq rows that query tiles [m_begin, m_end) of block_q rows cover. (p, not
// p.sq, as the argument: Sq is then read where the expression needs it, which leaves the main
// kernel's code as it was before this function was shared.)
template <int block_q>
__device__ __forceinline__ void rows_of_tiles(const AttnParams& p, int m_begin, int m_end,
                                              int& r0, int& r1) {
    r0 = m_begin * block_q < p.sq ? m_begin * block_q : p.sq;
    r1 = m_end <= m_begin ? r0 : (m_end * block_q < p.sq ? m_end * block_q : p.sq);
}

// Rows [r0, r1) that a backward main kernel of block_q x block_kv tiles walks for KV tile n:
// every kept (i, j) of the tile lies in them, and on two_kernel the main kernel stores dS there
// in all of the tile's columns (masked elements as 0). dbias_reduce.cu reads only these rows.
template <int block_q, int block_kv>
__device__ __forceinline__ void walked_rows_of(const AttnParams& p, const SeqLens& L, int n,
                                               int& r0, int& r1) {
    int m_begin, m_end;
    q_tiles_of<block_q, block_kv>(p, L, n, m_begin, m_end);
    rows_of_tiles<block_q>(p, m_begin, m_end, r0, r1);
}

// dS rows [lo, hi) that the two_kernel main kernel writes for a KV tile whose walked rows are
// [r0, r1): those, and zeros in the rest of the dQ GEMM's RIME_DQ_ROWS-row tiles that meet them.
// Enough, because a dQ GEMM tile that reads a KV tile's columns meets its walked rows: before
// clamping to [0, kv), each row's kept columns are a run at least one wide (left_bound >= 1,
// right_bound >= 0) one column on from the row above's, so kv_range_of's range is exactly the
// union of the tile's rows' kept columns; a chunk it reads (within one KV tile: the chunk
// divides the KV tile) holds a column some row of the tile keeps, and q_tiles_of walks every
// row that keeps a column of the KV tile. Under a causal band this zeroes at most one dQ
// tile's worth of rows, not every row above the diagonal.
__device__ __forceinline__ void ds_rows_of(const AttnParams& p, int r0, int r1, int& lo,
                                           int& hi) {
    lo = r0 / RIME_DQ_ROWS * RIME_DQ_ROWS;
    const int end = (r1 + RIME_DQ_ROWS - 1) / RIME_DQ_ROWS * RIME_DQ_ROWS;
    hi = end < p.sq ? end : p.sq;
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
