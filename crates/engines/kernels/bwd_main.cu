// bwd_main.cu: main kernel of the SDPA backward (FlashAttention-2 "seqk parallel" shape).
// For its KV tile, with P = exp(scale * Q K^T + Bias - Stats) recomputed from the forward's
// Stats and delta from bwd_preprocess:
//   dV = sum over query heads of the group of P^T dO          (registers, stored at the end)
//   dK = scale * sum over the group of dS^T Q                 (registers, stored at the end)
//   dS = P * (dO V^T - delta)
//   dQ, by DQ_ROUTE: 0 atomic   dQ accum += dS K with red.global.add.f32 (order not fixed);
//                    1 relay    the same adds, but the KV-tile blocks of one Q tile take turns,
//                               last KV tile first (a per-Q-tile counter passes the baton), so
//                               the f32 sums are bitwise reproducible;
//                    2 two_kernel  dS (io dtype) is written to a workspace with Skv rounded up to
//                               128 columns (zeros where masked or skipped) for dq_gemm.cu.
//   (routes 0 and 1 end with the convert kernel, which scales and converts dQ)
//   dBias = dS: stored directly when each element has one writer (DBIAS_MODE 1), else added into
//   an f32 accumulator (DBIAS_MODE 2, broadcast bias) that the convert kernel turns into dBias.
//
// Grid (ceil(Skv / BLOCK_KV), Hk, B); requires Hk == Hv. Each block loads its K and V tile once,
// then walks the query heads of its group and, for each, the query tiles of BLOCK_Q rows that
// the mask band leaves (tile skipping). WARPS warps, each owning 16 KV rows
// (BLOCK_KV = 16 * WARPS). All products are mma.sync m16n8k16 with f32 accumulate, fed by
// ldmatrix (transposed loads give P^T / dS^T / Q^T / dO^T views without a transpose pass);
// tiles arrive through cp.async with rows past the sequence zero-filled and masked.
//
// Latency: a warp has few peers (one 8-warp block per SM at 255 registers), so each product
// keeps several independent accumulator chains in flight: S^T and dP^T share one k loop (both
// read only K / V and Q / dO), and the dQ k loop alternates two accumulators (DQ_SPLIT) where
// the registers allow. ldmatrix addresses are a per-lane base plus compile-time offsets.
//
// Pipelining, STAGES Q / dO / Stats / delta buffers:
//   2  the next step's tiles are copied (cp.async) into the other buffer as soon as the step
//      starts; two barriers per step.
//   1  (where a second buffer does not fit, as d128 in 101,376 B) the next dO / Stats / delta
//      are copied in place once every warp is past dV, and the next Q once dK is done, so the
//      copies overlap the dK / dQ / dBias work; three barriers per step.
// Bias values are fetched into registers before the S product so that its latency hides theirs.
// dQ partial sums leave as 16-byte vector reductions (sm_90+; neighbouring lanes swap halves
// of their fragments first), dBias partial sums (broadcast bias) straight from the dS fragments.
//
// Shared memory (dynamic, 16-bit elements, rows padded by 8 elements) plus f32 rows:
//   K BLOCK_KV x (DQK+8), V BLOCK_KV x (DV+8), STAGES x (Q BLOCK_Q x (DQK+8), dO BLOCK_Q x (DV+8)),
//   dS^T BLOCK_KV x (BLOCK_Q+8), Stats and delta: STAGES x 2 x BLOCK_Q x 4 bytes.
//   e.g. DQK = DV = 128, 32 x 128, 1 stage: 97,536 B; DQK = DV = 64, 64 x 128, 2 stages:
//   93,184 B; DQK 192 / DV 128, 16 x 64, 2 stages: 67,840 B (cap 101,376 B).
//
// Head dims below the envelope (p.hd_qk, p.hd_v multiples of 8) are zero-filled and not stored;
// ALiBi (HAS_ALIBI) adds slope_h * (j - i) to the scores. The dQ accumulator is compact with
// the actual p.hd_qk columns.
//
// Defines: HEAD_DIM_QK, HEAD_DIM_V, BLOCK_Q, BLOCK_KV, WARPS, STAGES, IS_BF16, HAS_BIAS,
// HAS_ALIBI, DBIAS_MODE, DQ_ROUTE, SMEM_BYTES.

#define LD_QK (HEAD_DIM_QK + 8)
#define LD_V (HEAD_DIM_V + 8)
#define LD_S (BLOCK_Q + 8)
#define BWD_SMEM                                                                          \
    (2 * (BLOCK_KV * LD_QK + BLOCK_KV * LD_V +                                             \
          STAGES * (BLOCK_Q * LD_QK + BLOCK_Q * LD_V) + BLOCK_KV * LD_S) +                 \
     8 * STAGES * BLOCK_Q)

// dQ is computed in units of 16 query rows x DQ_UNIT columns per warp: 64 columns when that
// still gives every warp a unit, else 32; always 32 for the widest head dim, where a narrow
// transient accumulator next to dK / dV avoids spills. DQ_SPLIT accumulators take the k steps
// in turn (independent mma chains), one for the widest head dim (registers).
#define DQ_UNITS_OF_64 ((BLOCK_Q / 16) * (HEAD_DIM_QK / 64))
#define DQ_UNIT (HEAD_DIM_QK > 128 || DQ_UNITS_OF_64 < WARPS ? 32 : 64)
#define DQ_SPLIT (HEAD_DIM_QK > 128 ? 1 : 2)

// Unrolled k loops let ptxas issue the next ldmatrix ahead of the mma chain. The S / dP loop is
// unrolled fully except on the relay route with ALiBi (rolled) or a broadcast dBias (by 2),
// which would spill; the dQ loop next to the live dK / dV by 2 (full unrolling measured 1-2%
// slower without a bias on the H200). The fitness test holds every sm_120 specialization to
// zero spills.
#if DQ_ROUTE == 1 && HAS_ALIBI
#define K_UNROLL _Pragma("unroll 1")
#elif DQ_ROUTE == 1 && DBIAS_MODE == 2
#define K_UNROLL _Pragma("unroll 2")
#else
#define K_UNROLL _Pragma("unroll")
#endif
#define DQ_UNROLL _Pragma("unroll 2")

static_assert(BLOCK_KV == 16 * WARPS, "one warp per 16 KV rows (two rows per pass of the block)");
static_assert(BLOCK_Q % 16 == 0 && HEAD_DIM_QK % DQ_UNIT == 0 && HEAD_DIM_V % 16 == 0,
              "tile shapes");
static_assert((BLOCK_KV / 16) % DQ_SPLIT == 0, "dQ k steps split evenly");
static_assert(STAGES == 1 || STAGES == 2, "one or two Q / dO buffers");
static_assert(BWD_SMEM == SMEM_BYTES, "shared-memory formula disagrees with the engine's table");
static_assert(DBIAS_MODE == 0 || HAS_BIAS, "dBias needs a bias");
static_assert(DQ_ROUTE >= 0 && DQ_ROUTE <= 2, "DQ_ROUTE: 0 atomic, 1 relay, 2 two_kernel");

// Query tiles [m_begin, m_end) that the band leaves for KV tile n (tile skipping). Every block
// and the relay turn order use this one function. (32-bit sums: see attn.cuh.)
__device__ __forceinline__ void q_tiles_of(const AttnParams& p, const SeqLens& L, int n,
                                           int& m_begin, int& m_end) {
    const int n0 = n * BLOCK_KV;
    int j_last = n0 + BLOCK_KV - 1;
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
    m_begin = i_begin / BLOCK_Q;
    m_end = i_end > i_begin ? (i_end + BLOCK_Q - 1) / BLOCK_Q : m_begin;
}

#if DQ_ROUTE == 1
// Turn of KV tile n among the KV tiles that reach Q tile m, the last of them going first: those
// tiles form a contiguous run (both ends of q_tiles_of grow with n; tiles past the padding
// mask's KV length reach nothing and come last), so the turn is the last n' >= n that still
// reaches m, minus n.
__device__ __forceinline__ unsigned int relay_turn(const AttnParams& p, const SeqLens& L, int n,
                                                   int m) {
    int lo = n;  // n itself reaches m
    int hi = (int)gridDim.x - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        int mb, me;
        q_tiles_of(p, L, mid, mb, me);
        if (mb <= m && m < me) lo = mid;
        else hi = mid - 1;
    }
    return (unsigned int)(lo - n);
}
#endif

// Copies Q rows [q0, q0 + BLOCK_Q) of head h (cp.async; rows past Sq zero-filled).
__device__ __forceinline__ void load_q_tile(io_t* sQ, const AttnParams& p, int b, int h, int q0,
                                            int tid) {
    const io_t* gQ = (const io_t*)p.q.ptr + b * p.q.sb + h * p.q.sh + q0 * p.q.ss;
    load_tile<BLOCK_Q, HEAD_DIM_QK, WARPS * 32, true>(sQ, LD_QK, gQ, p.q.ss, p.sq - q0, p.hd_qk,
                                                      tid);
}

// Copies what the P and dS steps of query tile q0 of head h read besides K, V and Q: dO rows,
// Stats and delta (cp.async; rows past Sq zero-filled, and masked by rime_keep).
__device__ __forceinline__ void load_do_tile(io_t* sdO, float* sLse, float* sDelta,
                                             const AttnParams& p, int b, int h, int q0, int tid) {
    const io_t* gdO = (const io_t*)p.d_o.ptr + b * p.d_o.sb + h * p.d_o.sh + q0 * p.d_o.ss;
    load_tile<BLOCK_Q, HEAD_DIM_V, WARPS * 32, true>(sdO, LD_V, gdO, p.d_o.ss, p.sq - q0, p.hd_v,
                                                     tid);
    const float* gLse = (const float*)p.stats.ptr + b * p.stats.sb + h * p.stats.sh;
    const float* gDelta = (const float*)p.delta + ((i64)b * p.hq + h) * p.sq;
    for (int r = tid; r < BLOCK_Q; r += WARPS * 32) {
        const bool in = q0 + r < p.sq;
        cp_async_4(sLse + r, in ? gLse + (i64)(q0 + r) * p.stats.ss : gLse, in);
        cp_async_4(sDelta + r, in ? gDelta + q0 + r : gDelta, in);
    }
}

// Stores the dS tile, transposed back from sdS^T to [q][kv], at dst (row stride `stride`
// elements): rows at or past `rows` and columns at or past `cols` are skipped. Each thread packs
// 8 consecutive KV columns of one query row into one 16-byte store, two neighbouring lanes
// filling a 32-byte sector (where dst and the stride keep rows 16-byte aligned; else element
// stores); the shared-memory reads see at most 2-way bank conflicts.
__device__ __forceinline__ void store_ds_tile(io_t* dst, i64 stride, int rows, int cols,
                                              const io_t* sdS, int tid) {
    constexpr int kChunks = BLOCK_Q * BLOCK_KV / 8;
    constexpr int kThreads = WARPS * 32;
    const bool vec = ((u64)dst & 15) == 0 && (stride & 7) == 0;
#pragma unroll 1
    for (int k = 0; k < (kChunks + kThreads - 1) / kThreads; ++k) {
        const int c = tid + k * kThreads;
        if (kChunks % kThreads != 0 && c >= kChunks) break;
        const int ql = (c >> 1) % BLOCK_Q;
        const int j0 = (((c >> 1) / BLOCK_Q) * 2 + (c & 1)) * 8;
        if (ql >= rows || j0 >= cols) continue;
        u32 w[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
            w[e] = (u32)sdS[(j0 + 2 * e) * LD_S + ql] |
                   ((u32)sdS[(j0 + 2 * e + 1) * LD_S + ql] << 16);
        io_t* d = dst + (i64)ql * stride + j0;
        if (vec && j0 + 8 <= cols) {
            st_global_v4(d, w[0], w[1], w[2], w[3]);
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e)
                if (j0 + e < cols) d[e] = (io_t)(w[e >> 1] >> (16 * (e & 1)));
        }
    }
}

// Step kk (16 columns) of this warp's 16-row strip times BLOCK_Q rows, both operands from
// [row][k] tiles in shared memory with rows LD elements apart: A at the lane's address a_lane,
// B at b_lane (the S^T = K Q^T and dP^T = V dO^T products).
template <int LD>
__device__ __forceinline__ void strip_k16(float (*acc)[4], u32 a_lane, u32 b_lane, int kk) {
    u32 a[4];
    ldsm_x4(a, a_lane + tile_off(LD, 0, kk * 16));
    mma_k16<BLOCK_Q / 16, false>(acc, a, b_lane + tile_off(LD, 0, kk * 16), tile_off(LD, 16, 0));
}

// P^T in place of S^T: exp2(S * scale * log2 e + Bias * log2 e + ALiBi - Stats * log2 e), 0
// where (i, j) is masked. Tiles wholly inside the sequences and the band skip the mask test
// (MASKED false), a uniform branch per step instead of a select per element.
template <bool MASKED>
__device__ __forceinline__ void p_from_s(float (*s)[4], const float* sLse, const u32 (*bias2)[2],
                                         const AttnParams& p, const SeqLens& L, int q0,
                                         int kv_row0, int t, float scale_log2, float alibi_log2) {
#pragma unroll
    for (int nt = 0; nt < BLOCK_Q / 8; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int j = kv_row0 + (e >> 1) * 8;
            const int ql = nt * 8 + 2 * t + (e & 1);
            const int i = q0 + ql;
            float v = s[nt][e] * scale_log2 - sLse[ql] * RIME_LOG2E;
#if HAS_BIAS
            v += io_to_f32((io_t)(bias2[nt][e >> 1] >> (16 * (e & 1)))) * RIME_LOG2E;
#endif
#if HAS_ALIBI
            v += alibi_log2 * (float)(j - i);
#endif
            v = rime_exp2(v);
            if (MASKED && !rime_keep(i, j, L.q, L.kv, L.shift, p.has_right, p.right_bound,
                                     p.has_left, p.left_bound))
                v = 0.f;
            s[nt][e] = v;
        }
    }
}

extern "C" __global__ void __launch_bounds__(WARPS * 32, 1)
rime_bwd_main(const AttnParams p) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    io_t* sK = (io_t*)smem_raw;
    io_t* sV = sK + BLOCK_KV * LD_QK;
    io_t* sQ = sV + BLOCK_KV * LD_V;           // STAGES buffers of BLOCK_Q x LD_QK
    io_t* sdO = sQ + STAGES * BLOCK_Q * LD_QK;  // STAGES buffers of BLOCK_Q x LD_V
    io_t* sdS = sdO + STAGES * BLOCK_Q * LD_V;
    float* sLse = (float*)(sdS + BLOCK_KV * LD_S);  // STAGES rows of BLOCK_Q
    float* sDelta = sLse + STAGES * BLOCK_Q;
    constexpr int kQBuf = BLOCK_Q * LD_QK;  // elements per buffer
    constexpr int kDoBuf = BLOCK_Q * LD_V;

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int kvh = blockIdx.y;
    const int b = blockIdx.z;
#if DQ_ROUTE == 1
    // Relay: a block takes its KV tile from its KV head's ticket (after the turn counters in the
    // relay region, zeroed by the preprocess kernel), not from blockIdx.x: tickets go to the blocks of a KV head in the order they start
    // running, ticket t is the t-th KV tile from the last, and a block waits only for larger KV
    // tiles of its KV head, whose tickets came before its own: blocks already running (CUDA does
    // not promise to start blocks in blockIdx order, so waiting on a block by its index could
    // wait on one that never starts). The last KV tile reaches the fewest Q tiles under a causal
    // mask, and on each Q tile the KV tiles take turns last-first: along the diagonal each block
    // starts at once and trails its neighbour by one step. The ticket is broadcast through the
    // dS^T tile, which nothing uses before the main loop's first barrier.
    if (tid == 0) {
        unsigned int* tickets = (unsigned int*)p.relay +
                                (i64)p.batch * p.hq * ((p.sq + BLOCK_Q - 1) / BLOCK_Q);
        *(volatile int*)sdS = (int)atomicAdd(tickets + b * p.hk + kvh, 1u);
    }
    __syncthreads();
    const int kv_tile = (int)gridDim.x - 1 - *(volatile int*)sdS;
#else
    const int kv_tile = blockIdx.x;
#endif
    const int n0 = kv_tile * BLOCK_KV;
    const int group = p.hq / p.hk;
    const float scale_log2 = p.scale * RIME_LOG2E;

    const SeqLens L = seq_lens(p, b);
    int m_begin, m_end;
    q_tiles_of(p, L, kv_tile, m_begin, m_end);
    // The block walks (query head of the group, Q tile) steps, heads outer.
    const int tiles = m_end - m_begin;
    const int steps = group * tiles;

#if DBIAS_MODE == 1 || DQ_ROUTE == 2
    // Rows the band skips still get dBias = 0 (and, for dq_gemm.cu, which reads every column
    // of this tile, dS = 0) in this tile's columns.
    for (int hh = 0; hh < group; ++hh) {
        const int h = kvh * group + hh;
#if DBIAS_MODE == 1
        io_t* gdB = (io_t*)p.dbias.ptr + b * p.dbias.sb + h * p.dbias.sh;
#endif
#if DQ_ROUTE == 2
        io_t* gdS = (io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * ds_pitch(p.skv) + n0;
#endif
        // Rows [0, r0) and [r1, Sq): the walked Q tiles cover [r0, r1).
        const int r0 = m_begin * BLOCK_Q < p.sq ? m_begin * BLOCK_Q : p.sq;
        const int r1 = m_end <= m_begin ? r0 : (m_end * BLOCK_Q < p.sq ? m_end * BLOCK_Q : p.sq);
        // Two rows per pass (2 * BLOCK_KV threads), so no index grows past Sq.
        const int jl = tid % BLOCK_KV;
        for (int row = tid / BLOCK_KV; row < r0 + p.sq - r1; row += WARPS * 32 / BLOCK_KV) {
            const int i = row < r0 ? row : row - r0 + r1;
#if DBIAS_MODE == 1
            if (n0 + jl < p.skv) gdB[(i64)i * p.dbias.ss + n0 + jl] = 0;
#endif
#if DQ_ROUTE == 2
            gdS[(i64)i * ds_pitch(p.skv) + jl] = 0;
#endif
        }
    }
#endif

    load_tile<BLOCK_KV, HEAD_DIM_QK, WARPS * 32, true>(
        sK, LD_QK, (const io_t*)p.k.ptr + b * p.k.sb + kvh * p.k.sh + n0 * p.k.ss, p.k.ss,
        p.skv - n0, p.hd_qk, tid);
    load_tile<BLOCK_KV, HEAD_DIM_V, WARPS * 32, true>(
        sV, LD_V, (const io_t*)p.v.ptr + b * p.v.sb + kvh * p.v.sh + n0 * p.v.ss, p.v.ss,
        p.skv - n0, p.hd_v, tid);
    if (steps > 0) {
        load_q_tile(sQ, p, b, kvh * group, m_begin * BLOCK_Q, tid);
        load_do_tile(sdO, sLse, sDelta, p, b, kvh * group, m_begin * BLOCK_Q, tid);
    }

    // This lane's ldmatrix addresses (buffer 0; block (row, col) adds tile_off(ld, row, col)).
    const u32 a_k = addr_a(smem_addr(sK), LD_QK, warp * 16, 0, lane);    // S^T: K rows
    const u32 a_v = addr_a(smem_addr(sV), LD_V, warp * 16, 0, lane);     // dP^T: V rows
    const u32 b_q = addr_b(smem_addr(sQ), LD_QK, 0, 0, lane);            // S^T: Q^T
    const u32 b_do = addr_b(smem_addr(sdO), LD_V, 0, 0, lane);           // dP^T: dO^T
    const u32 bt_do = addr_b_t(smem_addr(sdO), LD_V, 0, 0, lane);        // dV: dO
    const u32 bt_q = addr_b_t(smem_addr(sQ), LD_QK, 0, 0, lane);         // dK: Q
#if DQ_ROUTE != 2
    const u32 at_ds = addr_a_t(smem_addr(sdS), LD_S, 0, 0, lane);        // dQ: dS
    const u32 bt_k = addr_b_t(smem_addr(sK), LD_QK, 0, 0, lane);         // dQ: K
#endif

    float dk[HEAD_DIM_QK / 8][4];
    float dv[HEAD_DIM_V / 8][4];
#pragma unroll
    for (int i = 0; i < HEAD_DIM_QK / 8; ++i) dk[i][0] = dk[i][1] = dk[i][2] = dk[i][3] = 0.f;
#pragma unroll
    for (int i = 0; i < HEAD_DIM_V / 8; ++i) dv[i][0] = dv[i][1] = dv[i][2] = dv[i][3] = 0.f;

    const int kv_row0 = n0 + warp * 16 + g;  // this thread's KV rows: kv_row0, kv_row0 + 8

    for (int step = 0; step < steps; ++step) {
        const int hh = step / tiles;
        const int h = kvh * group + hh;
        const int m = m_begin + (step - hh * tiles);
        const int q0 = m * BLOCK_Q;
        // The next step's head and Q tile (prefetched during this one).
        const bool has_next = step + 1 < steps;
        const int next_hh = (step + 1) / tiles;
        const int next_h = kvh * group + next_hh;
        const int next_q0 = (m_begin + (step + 1 - next_hh * tiles)) * BLOCK_Q;
        // This step's buffer and its byte offsets from buffer 0.
        const int cur = STAGES == 2 ? (step & 1) : 0;
        const int q_off = cur * 2 * kQBuf;
        const int do_off = cur * 2 * kDoBuf;
        const float* lse = sLse + cur * BLOCK_Q;
        const float* delta = sDelta + cur * BLOCK_Q;
#if HAS_ALIBI
        const float alibi_log2 = rime_alibi_slope(p, h) * RIME_LOG2E;
#else
        const float alibi_log2 = 0.f;
#endif
        float* gdQ = (float*)p.dq_accum + ((i64)b * p.hq + h) * p.sq * p.hd_qk;
#if HAS_BIAS
        const io_t* gB = (const io_t*)p.bias.ptr + b * p.bias.sb + h * p.bias.sh;
#endif
#if DBIAS_MODE == 1
        io_t* gdB = (io_t*)p.dbias.ptr + b * p.dbias.sb + h * p.dbias.sh;
#elif DBIAS_MODE == 2
        float* gdBa = (float*)p.dbias_accum +
                      ((i64)(p.bias_b == 1 ? 0 : b) * p.bias_h + (p.bias_h == 1 ? 0 : h)) *
                          p.sq * p.skv;
#endif
#if DQ_ROUTE == 2
        io_t* gdS = (io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * ds_pitch(p.skv) + n0;
#elif DQ_ROUTE == 1
        unsigned int* gRelay =
            (unsigned int*)p.relay + ((i64)b * p.hq + h) * ((p.sq + BLOCK_Q - 1) / BLOCK_Q);
#endif

#if HAS_BIAS
        // This thread's bias values, (row i, row i + 1) packed per KV row, fetched before the
        // S product so that its latency covers theirs. Out-of-range elements read as 0 (masked).
        u32 bias2[BLOCK_Q / 8][2];
#pragma unroll
        for (int nt = 0; nt < BLOCK_Q / 8; ++nt) {
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int i = q0 + nt * 8 + 2 * t;
                const int j = kv_row0 + r * 8;
                const io_t* src = gB + (i64)i * p.bias.ss + j;
                const u32 lo = (i < p.sq && j < p.skv) ? src[0] : 0;
                const u32 hi = (i + 1 < p.sq && j < p.skv) ? src[p.bias.ss] : 0;
                bias2[nt][r] = lo | (hi << 16);
            }
        }
#else
        const u32 (*bias2)[2] = nullptr;
#endif
        // Every (i, j) of the tile inside the sequences and the band: no per-element mask.
        // A walked tile has q0 < q, so q0 + shift + bound stays within 32 bits (attn.cuh).
        bool interior = q0 + BLOCK_Q <= L.q && n0 + BLOCK_KV <= L.kv;
        if (p.has_right) interior = interior && n0 + BLOCK_KV - 1 <= q0 + L.shift + p.right_bound;
        if (p.has_left) interior = interior && n0 > q0 + BLOCK_Q - 1 + L.shift - p.left_bound;

        cp_async_wait_all();
        __syncthreads();  // this step's Q / dO / Stats / delta have landed; sdS is free
#if STAGES == 2
        // Every warp has finished the previous step: its buffer takes the next step's tiles.
        if (has_next) {
            const int nxt = cur ^ 1;
            load_q_tile(sQ + nxt * kQBuf, p, b, next_h, next_q0, tid);
            load_do_tile(sdO + nxt * kDoBuf, sLse + nxt * BLOCK_Q, sDelta + nxt * BLOCK_Q, p, b,
                         next_h, next_q0, tid);
        }
#endif

        // S^T = K Q^T and dP^T = V dO^T for this warp's 16 KV rows x BLOCK_Q query columns,
        // in one k loop over the common head dim (two independent chains), then the rest.
        float s[BLOCK_Q / 8][4];
        float dpt[BLOCK_Q / 8][4];
#pragma unroll
        for (int i = 0; i < BLOCK_Q / 8; ++i) {
            s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
            dpt[i][0] = dpt[i][1] = dpt[i][2] = dpt[i][3] = 0.f;
        }
        constexpr int kJoint = (HEAD_DIM_QK < HEAD_DIM_V ? HEAD_DIM_QK : HEAD_DIM_V) / 16;
        K_UNROLL
        for (int kk = 0; kk < kJoint; ++kk) {
            strip_k16<LD_QK>(s, a_k, b_q + q_off, kk);
            strip_k16<LD_V>(dpt, a_v, b_do + do_off, kk);
        }
#pragma unroll
        for (int kk = kJoint; kk < HEAD_DIM_QK / 16; ++kk)
            strip_k16<LD_QK>(s, a_k, b_q + q_off, kk);
#pragma unroll
        for (int kk = kJoint; kk < HEAD_DIM_V / 16; ++kk)
            strip_k16<LD_V>(dpt, a_v, b_do + do_off, kk);
        if (interior)
            p_from_s<false>(s, lse, bias2, p, L, q0, kv_row0, t, scale_log2, alibi_log2);
        else
            p_from_s<true>(s, lse, bias2, p, L, q0, kv_row0, t, scale_log2, alibi_log2);

        // P^T packed for dV, then dS^T = P^T * (dP^T - delta) in place of P^T.
        u32 pa[BLOCK_Q / 16][4];
#pragma unroll
        for (int kk = 0; kk < BLOCK_Q / 16; ++kk) pack_a_frag(pa[kk], s[2 * kk], s[2 * kk + 1]);
#pragma unroll
        for (int nt = 0; nt < BLOCK_Q / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) s[nt][e] *= dpt[nt][e] - delta[nt * 8 + 2 * t + (e & 1)];
        }
        // dV += P^T dO.
#pragma unroll
        for (int kk = 0; kk < BLOCK_Q / 16; ++kk)
            mma_k16<HEAD_DIM_V / 16, true>(dv, pa[kk], bt_do + do_off + tile_off(LD_V, kk * 16, 0),
                                           tile_off(LD_V, 0, 16));
#if STAGES == 1
        __syncthreads();  // every warp is past its reads of sdO, Stats and delta
        if (has_next) load_do_tile(sdO, sLse, sDelta, p, b, next_h, next_q0, tid);
#endif
#if DBIAS_MODE == 2
        // Broadcast dBias: f32 partial sums straight from the fragments (zeros, i.e. masked
        // elements, skipped); a warp's adds cover 4 rows x 8 full 32-byte sectors. (Four lanes
        // transposing 4 x 4 blocks for 16-byte reductions measured 3-7% slower on the H200.)
#pragma unroll
        for (int nt = 0; nt < BLOCK_Q / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int i = q0 + nt * 8 + 2 * t + (e & 1);
                const int j = kv_row0 + (e >> 1) * 8;
                if (s[nt][e] != 0.f && i < p.sq && j < p.skv)
                    red_add_f32(gdBa + (i64)i * p.skv + j, s[nt][e]);
            }
        }
#endif
        // dS^T to shared memory (for dQ, dS and dBias), then dK += dS^T Q.
#pragma unroll
        for (int kk = 0; kk < BLOCK_Q / 16; ++kk) {
            u32 a[4];
            pack_a_frag(a, s[2 * kk], s[2 * kk + 1]);
            // a[0..3]: (row g, cols 2t..), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                *(u32*)(sdS + (warp * 16 + g + (r & 1) * 8) * LD_S + kk * 16 + (r >> 1) * 8 +
                        2 * t) = a[r];
            mma_k16<HEAD_DIM_QK / 16, true>(dk, a, bt_q + q_off + tile_off(LD_QK, kk * 16, 0),
                                            tile_off(LD_QK, 0, 16));
        }
        __syncthreads();  // dS^T complete in shared memory; every warp is past its reads of sQ
#if STAGES == 1
        if (has_next) load_q_tile(sQ, p, b, next_h, next_q0, tid);
#endif
#if DBIAS_MODE == 1
        // dBias = dS (the io-dtype value).
        store_ds_tile(gdB + (i64)q0 * p.dbias.ss + n0, p.dbias.ss, p.sq - q0, p.skv - n0, sdS, tid);
#endif
#if DQ_ROUTE == 2
        // dS to the workspace (every column of the tile: dq_gemm.cu reads them all).
        store_ds_tile(gdS + (i64)q0 * ds_pitch(p.skv), ds_pitch(p.skv), p.sq - q0, BLOCK_KV, sdS,
                      tid);
#else
#if DQ_ROUTE == 1
        const unsigned int turn = relay_turn(p, L, kv_tile, m);
        if (tid == 0) {
            while (ld_acquire_u32(gRelay + m) != turn) {
            }
        }
        __syncthreads();  // our turn: earlier KV tiles' adds to this Q tile are visible
#endif

        // dQ accum += dS K, in units of 16 query rows x DQ_UNIT head-dim columns per warp.
        for (int u = warp; u < (BLOCK_Q / 16) * (HEAD_DIM_QK / DQ_UNIT); u += WARPS) {
            const int rq = (u % (BLOCK_Q / 16)) * 16;
            const int cq = (u / (BLOCK_Q / 16)) * DQ_UNIT;
            float acc[DQ_SPLIT][DQ_UNIT / 8][4];
#pragma unroll
            for (int c = 0; c < DQ_SPLIT; ++c) {
#pragma unroll
                for (int i = 0; i < DQ_UNIT / 8; ++i)
                    acc[c][i][0] = acc[c][i][1] = acc[c][i][2] = acc[c][i][3] = 0.f;
            }
            const u32 a_u = at_ds + tile_off(LD_S, 0, rq);
            const u32 b_u = bt_k + tile_off(LD_QK, 0, cq);
            DQ_UNROLL
            for (int kk = 0; kk < BLOCK_KV / 16; kk += DQ_SPLIT) {
#pragma unroll
                for (int c = 0; c < DQ_SPLIT; ++c) {
                    u32 a[4];
                    ldsm_x4_t(a, a_u + tile_off(LD_S, (kk + c) * 16, 0));
                    mma_k16<DQ_UNIT / 16, true>(acc[c], a, b_u + tile_off(LD_QK, (kk + c) * 16, 0),
                                                tile_off(LD_QK, 0, 16));
                }
            }
#pragma unroll
            for (int c = 1; c < DQ_SPLIT; ++c) {
#pragma unroll
                for (int i = 0; i < DQ_UNIT / 8; ++i) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[0][i][e] += acc[c][i][e];
                }
            }
            // Lanes t and t ^ 1 swap half their fragment: an even lane then holds 4 consecutive
            // columns of row g, an odd lane those of row g + 8, added with one 16-byte reduction.
            const bool odd = t & 1;
            const int i = q0 + rq + g + (odd ? 8 : 0);
#pragma unroll
            for (int nt = 0; nt < DQ_UNIT / 8; ++nt) {
                if (cq + nt * 8 >= p.hd_qk) break;  // padded head-dim columns (warp-uniform)
                const float* a = acc[0][nt];
                const float x0 = rime_shfl_xor(odd ? a[0] : a[2], 1);
                const float x1 = rime_shfl_xor(odd ? a[1] : a[3], 1);
                if (i < p.sq)
                    red_add_f32x4(gdQ + (i64)i * p.hd_qk + cq + nt * 8 + (t & 2) * 2,
                                  odd ? x0 : a[0], odd ? x1 : a[1], odd ? a[2] : x0,
                                  odd ? a[3] : x1);
            }
        }
#if DQ_ROUTE == 1
        fence_gpu();  // each thread's adds are performed before the baton moves
        __syncthreads();
        if (tid == 0) st_release_u32(gRelay + m, turn + 1);
#endif
#endif
    }

    // Epilogue: dK (scaled) and dV in the io dtype, rows past Skv skipped. A tile no query
    // row reaches stores zeros.
    io_t* gdK = (io_t*)p.dk.ptr + b * p.dk.sb + kvh * p.dk.sh;
    io_t* gdV = (io_t*)p.dv.ptr + b * p.dv.sb + kvh * p.dv.sh;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int j = kv_row0 + r * 8;
        if (j < p.skv) {
#pragma unroll
            for (int dt = 0; dt < HEAD_DIM_QK / 8; ++dt)
                if (dt * 8 < p.hd_qk)
                    *(u32*)(gdK + (i64)j * p.dk.ss + dt * 8 + 2 * t) =
                        pack_io2(dk[dt][2 * r] * p.scale, dk[dt][2 * r + 1] * p.scale);
#pragma unroll
            for (int dt = 0; dt < HEAD_DIM_V / 8; ++dt)
                if (dt * 8 < p.hd_v)
                    *(u32*)(gdV + (i64)j * p.dv.ss + dt * 8 + 2 * t) =
                        pack_io2(dv[dt][2 * r], dv[dt][2 * r + 1]);
        }
    }
}
