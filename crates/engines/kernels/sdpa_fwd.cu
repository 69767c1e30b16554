// sdpa_fwd.cu: SDPA forward, O = softmax(scale * Q K^T + Bias, masked) V and, when the node has
// a Stats output (p.stats.ptr != 0), Stats = natural-log log-sum-exp of the masked, scaled,
// biased scores (f32), per query row (+inf for a row with nothing kept, whose O is 0).
//
// Attention sink (p.sink.ptr != 0, f32 (1, Hq, 1, 1)): the head's logit joins the softmax
// denominator of every row below the padding mask's length, unscaled and unbiased — the online
// softmax starts from it (running max = sink, running sum = 1) instead of (-inf, 0). A row with
// nothing kept then attends to the sink alone: O = 0, Stats = sink. A runtime test, not a
// define: it is an initialisation. Rows past the padding mask's length stay O = 0, Stats = +inf,
// and so does every row of a head whose sink is -inf (exp(-inf) = 0: no sink, as on the CPU).
//
// FlashAttention-2 style: one block per (query tile of BLOCK_Q rows, query head, batch); WARPS
// warps, each owning 16 query rows (BLOCK_Q = 16 * WARPS). The block walks the KV tiles of
// BLOCK_KV rows that the mask leaves (tile skipping), S = Q K^T with mma.sync m16n8k16 (f32
// accumulate) fed by ldmatrix, an online softmax in the log2 domain (exp2 with log2(e) folded into
// the scale), and O += P V with P taken straight from the S accumulators. Tiles arrive in shared
// memory through cp.async; rows past the sequence are zero-filled and masked.
//
// Shared memory (dynamic, rows padded by 8 elements against bank conflicts):
//   Q: BLOCK_Q x (HEAD_DIM_QK + 8), K: BLOCK_KV x (HEAD_DIM_QK + 8), V: BLOCK_KV x (HEAD_DIM_V + 8)
//   all 16-bit: 2 * (BLOCK_Q * (DQK+8) + BLOCK_KV * (DQK+8) + BLOCK_KV * (DV+8)) bytes,
//   e.g. DQK = DV = 128, 64 x 64: 52,224 B; DQK 192 / DV 128: 62,464 B (cap 101,376 B).
//
// Head dims below the envelope (p.hd_qk, p.hd_v multiples of 8) are zero-filled and not stored;
// ALiBi (HAS_ALIBI) adds slope_h * (j - i) to the scores.
//
// Defines: HEAD_DIM_QK, HEAD_DIM_V, BLOCK_Q, BLOCK_KV, WARPS, IS_BF16, HAS_BIAS, HAS_ALIBI,
// SMEM_BYTES.

#define LD_QK (HEAD_DIM_QK + 8)
#define LD_V (HEAD_DIM_V + 8)
#define FWD_SMEM (2 * (BLOCK_Q * LD_QK + BLOCK_KV * LD_QK + BLOCK_KV * LD_V))

static_assert(BLOCK_Q == 16 * WARPS, "one warp per 16 query rows");
static_assert(BLOCK_KV % 16 == 0 && HEAD_DIM_QK % 16 == 0 && HEAD_DIM_V % 16 == 0, "tile shapes");
static_assert(FWD_SMEM == SMEM_BYTES, "shared-memory formula disagrees with the engine's table");

extern "C" __global__ void __launch_bounds__(WARPS * 32, 1)
rime_sdpa_fwd(const AttnParams p) {
    pdl_enter();  // before any global access (common.cuh)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    io_t* sQ = (io_t*)smem_raw;
    io_t* sK = sQ + BLOCK_Q * LD_QK;
    io_t* sV = sK + BLOCK_KV * LD_QK;

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int m_tile = blockIdx.x;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int hk = h / (p.hq / p.hk);
    const int hv = h / (p.hq / p.hv);
    const int m0 = m_tile * BLOCK_Q;

    const io_t* gQ = (const io_t*)p.q.ptr + batch_base(p.q, b) + h * p.q.sh + m0 * p.q.ss;
    const io_t* gK = (const io_t*)p.k.ptr + batch_base(p.k, b) + hk * p.k.sh;
    const io_t* gV = (const io_t*)p.v.ptr + batch_base(p.v, b) + hv * p.v.sh;
#if HAS_BIAS
    const io_t* gB = (const io_t*)p.bias.ptr + b * p.bias.sb + h * p.bias.sh;
#endif

    // KV range the band leaves for rows m0 .. m0 + BLOCK_Q - 1 (tile skipping); rows past the
    // padding mask's length are fully masked (O = 0, Stats = +inf) and walk nothing.
    const SeqLens L = seq_lens(p, b);
    int j_begin, j_end;
    kv_range_of(p, L, m0, BLOCK_Q, j_begin, j_end);
    int n_begin, n_end;
    tiles_of<BLOCK_KV>(j_begin, j_end, n_begin, n_end);

    // Loads read the sequences' rows alone (a padded tensor's rows past them are padding, maybe
    // NaN, and masked P = 0 times NaN is NaN in O); stores keep rows_held's bound.
    load_tile<BLOCK_Q, HEAD_DIM_QK, WARPS * 32, false, false>(
        sQ, LD_QK, gQ, p.q.ss, L.q - m0, p.hd_qk, tid);

    const float scale_log2 = p.scale * RIME_LOG2E;
#if HAS_ALIBI
    const float alibi_log2 = rime_alibi_slope(p, h) * RIME_LOG2E;
#endif
    const float neg_inf = rime_neg_inf();
    float o_acc[HEAD_DIM_V / 8][4];
#pragma unroll
    for (int i = 0; i < HEAD_DIM_V / 8; ++i)
        o_acc[i][0] = o_acc[i][1] = o_acc[i][2] = o_acc[i][3] = 0.f;
    const int qrow0 = m0 + warp * 16 + g;
    // The sink in the log2 domain; the quad's t == 0 lane holds its 1 in the running sum (the
    // epilogue adds the quad's sums up; every lane of a quad rescales by the same max).
    const float sink_log2 =
        p.sink.ptr != 0 ? ((const float*)p.sink.ptr)[h * p.sink.sh] * RIME_LOG2E : neg_inf;
    float row_max[2], row_sum[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const bool sunk = p.sink.ptr != 0 && sink_log2 != neg_inf && qrow0 + r * 8 < L.q;
        row_max[r] = sunk ? sink_log2 : neg_inf;
        row_sum[r] = sunk && t == 0 ? 1.f : 0.f;
    }

    for (int n = n_begin; n < n_end; ++n) {
        const int n0 = n * BLOCK_KV;
        __syncthreads();
        load_tile<BLOCK_KV, HEAD_DIM_QK, WARPS * 32, false, false>(
            sK, LD_QK, gK + n0 * p.k.ss, p.k.ss, L.kv - n0, p.hd_qk, tid);
        load_tile<BLOCK_KV, HEAD_DIM_V, WARPS * 32, false, false>(
            sV, LD_V, gV + n0 * p.v.ss, p.v.ss, L.kv - n0, p.hd_v, tid);
        cp_async_wait_all();
        __syncthreads();

        float s[BLOCK_KV / 8][4];
#pragma unroll
        for (int i = 0; i < BLOCK_KV / 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
        // A rolled outer loop keeps the fragments in flight (and the registers) bounded.
#pragma unroll 1
        for (int kk = 0; kk < HEAD_DIM_QK / 16; ++kk) {
            u32 a[4];
            ldsm_x4(a, addr_a(smem_addr(sQ), LD_QK, warp * 16, kk * 16, lane));
#pragma unroll
            for (int np = 0; np < BLOCK_KV / 16; ++np) {
                u32 bf[4];
                ldsm_x4(bf, addr_b(smem_addr(sK), LD_QK, np * 16, kk * 16, lane));
                mma_16816(s[2 * np], a, bf[0], bf[1]);
                mma_16816(s[2 * np + 1], a, bf[2], bf[3]);
            }
        }

        // Scale, bias and mask in the log2 domain; new running max per row.
        float tile_max[2] = {neg_inf, neg_inf};
#pragma unroll
        for (int nt = 0; nt < BLOCK_KV / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int i = qrow0 + (e >> 1) * 8;
                const int j = n0 + nt * 8 + 2 * t + (e & 1);
                float v = s[nt][e] * scale_log2;
                const bool keep = rime_keep(i, j, L.q, L.kv, L.shift, p.has_right, p.right_bound,
                                            p.has_left, p.left_bound);
#if HAS_BIAS
                if (keep) v += io_to_f32(gB[(i64)i * p.bias.ss + j]) * RIME_LOG2E;
#endif
#if HAS_ALIBI
                v += alibi_log2 * (float)(j - i);
#endif
                v = keep ? v : neg_inf;
                s[nt][e] = v;
                tile_max[e >> 1] = rime_max(tile_max[e >> 1], v);
            }
        }
        float corr[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            tile_max[r] = rime_max(tile_max[r], rime_shfl_xor(tile_max[r], 1));
            tile_max[r] = rime_max(tile_max[r], rime_shfl_xor(tile_max[r], 2));
            float m_new = rime_max(row_max[r], tile_max[r]);
            // A row with nothing kept so far subtracts 0 instead of -inf (no inf - inf).
            float m_use = m_new == neg_inf ? 0.f : m_new;
            corr[r] = rime_exp2(row_max[r] - m_use);
            row_max[r] = m_new;
            tile_max[r] = m_use;
            row_sum[r] *= corr[r];
        }
#pragma unroll
        for (int nt = 0; nt < BLOCK_KV / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float pe = rime_exp2(s[nt][e] - tile_max[e >> 1]);
                s[nt][e] = pe;
                row_sum[e >> 1] += pe;
            }
        }
#pragma unroll
        for (int i = 0; i < HEAD_DIM_V / 8; ++i) {
            o_acc[i][0] *= corr[0];
            o_acc[i][1] *= corr[0];
            o_acc[i][2] *= corr[1];
            o_acc[i][3] *= corr[1];
        }

        // O += P V: P straight from the S accumulators, V through transposed ldmatrix.
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
            u32 a[4];
            pack_a_frag(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
            for (int dp = 0; dp < HEAD_DIM_V / 16; ++dp) {
                u32 bf[4];
                ldsm_x4_t(bf, addr_b_t(smem_addr(sV), LD_V, dp * 16, kk * 16, lane));
                mma_16816(o_acc[2 * dp], a, bf[0], bf[1]);
                mma_16816(o_acc[2 * dp + 1], a, bf[2], bf[3]);
            }
        }
    }

    // Epilogue: normalise, store O (io dtype) and Stats (f32, natural log).
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        row_sum[r] += rime_shfl_xor(row_sum[r], 1);
        row_sum[r] += rime_shfl_xor(row_sum[r], 2);
        inv[r] = row_sum[r] > 0.f ? rime_rcp(row_sum[r]) : 0.f;
    }
    io_t* gO = (io_t*)p.o.ptr + batch_base(p.o, b) + h * p.o.sh;
    float* gS = (float*)p.stats.ptr + batch_base(p.stats, b) + h * p.stats.sh;
    // A ragged O or Stats has rows for the real tokens only (a padded one gets every row).
    const int o_rows = rows_held(p.o, L.q, p.sq);
    const int s_rows = rows_held(p.stats, L.q, p.sq);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int i = qrow0 + r * 8;
        if (i < o_rows) {
#pragma unroll
            for (int dt = 0; dt < HEAD_DIM_V / 8; ++dt) {
                if (dt * 8 >= p.hd_v) break;  // padded head-dim columns are not stored
                u32 v = pack_io2(o_acc[dt][2 * r] * inv[r], o_acc[dt][2 * r + 1] * inv[r]);
                *(u32*)(gO + (i64)i * p.o.ss + dt * 8 + 2 * t) = v;
            }
        }
        if (i < s_rows) {
            if (t == 0 && p.stats.ptr != 0) {  // Stats only when the node writes them
                // A row with nothing kept (and no sink) gets +inf, so that exp(S - Stats) = 0
                // downstream; with a sink its sum holds the sink's 1.
                float lse = row_sum[r] > 0.f ? (row_max[r] + rime_log2(row_sum[r])) * RIME_LN2
                                             : -neg_inf;
                gS[(i64)i * p.stats.ss] = lse;
            }
        }
    }
}
