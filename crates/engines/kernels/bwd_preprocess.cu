// bwd_preprocess.cu: first kernel of the SDPA backward.
//   delta[b][h][i] = sum_d dO[b,h,i,d] * O[b,h,i,d]   (f32, the "D" of dS = P * (dP - D))
// and, when dSink is asked for (p.dsink_rows != 0), each row's share of it (f32, [B][Hq][Sq]):
//   dsink_rows[b][h][i] = -exp(Sink[h] - Stats[b,h,i]) * delta[b][h][i]
// or 0 for a row past the padding mask's length, with Stats = +inf (a row that attended to
// nothing), or of a head whose sink is -inf (no sink; the term is exp(-inf) = 0 even where a
// caller's Stats are -inf): the CPU engine's rule. dsink_reduce.cu sums them per head in a
// fixed order.
// It also zeroes what the later kernels add into: the f32 dQ accumulator [B][Hq][Sq][Dqk]
// (atomic and relay routes; each plane in attn.cuh's dq_acc_off layout), the relay route's
// turn counters [B][Hq][ceil(Sq / RELAY_TILE)] and block tickets [B][Hk], and the f32 dBias
// accumulator [bias_b][bias_h][Sq][Skv] when the workspace has one.
//
// One block per (RIME_PRE_ROWS query rows, query head, batch), RIME_PRE_WARPS warps (both from
// the generated ABI, which the host's grid uses too). A row of dO and O is hd_v / 8 16-byte
// chunks (1 to 32); each row gets that many lanes rounded up to a power of two, so a warp
// reduces 32 / lanes rows at once, each over its own lanes with 16-byte loads (every row starts
// 16-byte aligned: SMX005's strides, the engine's base and ragged-offset checks), and zeroes
// one row's worth of the dQ accumulator (hd_qk floats of the plane, wherever the layout puts
// them) with 16-byte stores. Each row's sum is in a fixed order (chunk by chunk per lane, then
// a butterfly over its lanes). Every row below Sq is
// written (grid = ceil(Sq / RIME_PRE_ROWS)), so no accumulator, delta or dSink-row element is
// left unwritten. The dBias accumulator is zeroed by a grid-stride loop over all blocks. No
// shared memory.
//
// Defines: HEAD_DIM_QK, HEAD_DIM_V, IS_BF16, RELAY_TILE (the main kernel's BLOCK_Q).

#define PRE_ROWS RIME_PRE_ROWS
#define PRE_WARPS RIME_PRE_WARPS

extern "C" __global__ void __launch_bounds__(PRE_WARPS * 32)
rime_bwd_preprocess(const AttnParams p) {
    pdl_enter();  // before any global access (common.cuh)
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const io_t* gO = (const io_t*)p.o.ptr + batch_base(p.o, b) + h * p.o.sh;
    const io_t* gdO = (const io_t*)p.d_o.ptr + batch_base(p.d_o, b) + h * p.d_o.sh;
    float* delta = (float*)p.delta + ((i64)b * p.hq + h) * p.sq;
    float* dq_acc = p.dq_accum ? (float*)p.dq_accum + ((i64)b * p.hq + h) * p.sq * p.hd_qk : 0;
    float* dsink_rows =
        p.dsink_rows && p.sink.ptr ? (float*)p.dsink_rows + ((i64)b * p.hq + h) * p.sq : 0;
    const float sink = dsink_rows ? ((const float*)p.sink.ptr)[h * p.sink.sh] : 0.f;
    const float* stats = (const float*)p.stats.ptr + batch_base(p.stats, b) + h * p.stats.sh;
    // Rows past the sequence's length get delta 0 and dSink term 0 without a read of O, dO or
    // Stats: a ragged one has no such rows, a padded one's are padding (maybe NaN; the main
    // kernel masks those rows anyway).
    const int q_len = seq_lens(p, b).q;

    const int chunks = p.hd_v >> 3;  // 16-byte chunks of a dO / O row
    const int lanes = chunks <= 1 ? 1 : 1 << (32 - __clz(chunks - 1));
    const int per_pass = 32 / lanes;  // rows a warp reduces at once
    const int sub = lane / lanes, l = lane % lanes;
    const bool zero_dq = dq_acc != 0;
    // The accumulator's groups of 16 rows are contiguous ranges (dq_acc_off), so zeroing the
    // plane's first dq_zero x hd_qk floats zeroes every row below dq_rows.
    const int dq_rows = zero_dq ? rows_held(p.dq, q_len, p.sq) : 0;
    const int dq_zero = min(p.sq, (dq_rows + 15) & ~15);
    // r0 is warp-uniform, so every lane reaches the shuffles below.
    for (int r0 = warp * per_pass; r0 < PRE_ROWS; r0 += PRE_WARPS * per_pass) {
        const int i = blockIdx.x * PRE_ROWS + r0 + sub;
        const bool row = r0 + sub < PRE_ROWS && i < p.sq;
        float acc = 0.f;
        if (row && i < q_len) {
            const io_t* o = gO + (i64)i * p.o.ss;
            const io_t* d_o = gdO + (i64)i * p.d_o.ss;
            for (int c = l; c < chunks; c += lanes) {
                u32 wo[4], wd[4];
                ld_global_nc_v4(o + 8 * c, wo);
                ld_global_nc_v4(d_o + 8 * c, wd);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    float o0, o1, d0, d1;
                    io2_to_f32(wo[k], o0, o1);
                    io2_to_f32(wd[k], d0, d1);
                    acc += d0 * o0;
                    acc += d1 * o1;
                }
            }
        }
        for (int m = lanes >> 1; m >= 1; m >>= 1) acc += rime_shfl_xor(acc, m);
        if (row && l == 0) {
            delta[i] = acc;
            if (dsink_rows) {
                const float lse = i < q_len ? stats[(i64)i * p.stats.ss] : -rime_neg_inf();
                const bool counts =
                    i < q_len && lse != -rime_neg_inf() && sink != rime_neg_inf();
                dsink_rows[i] = counts ? -rime_exp2((sink - lse) * RIME_LOG2E) * acc : 0.f;
            }
        }
        // A ragged dQ has no rows past q_len (the convert kernel stores none of their sums):
        // only the groups holding rows below it are zeroed, row-sized range by range.
        if (row && i < dq_zero) {
            for (int c = l; c < (p.hd_qk >> 3); c += lanes) {
                float* z = dq_acc + (i64)i * p.hd_qk + 8 * c;
                st_global_v4(z, 0u, 0u, 0u, 0u);
                st_global_v4(z + 4, 0u, 0u, 0u, 0u);
            }
        }
    }
    if (p.relay != 0) {
        // [B][Hq][tiles] turn counters, then [B][Hk] block tickets.
        const int tiles = (p.sq + RELAY_TILE - 1) / RELAY_TILE;
        unsigned int* counters = (unsigned int*)p.relay + ((i64)b * p.hq + h) * tiles;
        unsigned int* tickets = (unsigned int*)p.relay + (i64)p.batch * p.hq * tiles;
        if (blockIdx.x == 0 && threadIdx.x == 0 && h < p.hk) tickets[b * p.hk + h] = 0;
        for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < tiles; m += gridDim.x * blockDim.x)
            counters[m] = 0;
    }

    if (p.dbias_accum != 0) {
        const i64 total = (i64)p.bias_b * p.bias_h * p.sq * p.skv;
        const i64 nblocks = (i64)gridDim.x * gridDim.y * gridDim.z;
        const i64 block = ((i64)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
        float* acc = (float*)p.dbias_accum;
        for (i64 e = block * blockDim.x + threadIdx.x; e < total; e += nblocks * blockDim.x)
            acc[e] = 0.f;
    }
}
