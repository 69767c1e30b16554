// bwd_main.cu: main kernel of the SDPA backward (FlashAttention-2 "seqk parallel" shape: each
// block owns one KV tile and walks the query tiles). For its KV tile, with
// P = exp(scale * Q K^T + Bias - Stats) recomputed from the forward's Stats and delta from
// bwd_preprocess:
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
//   an f32 accumulator (DBIAS_MODE 2, broadcast bias) that the convert kernel turns into dBias,
//   or (DBIAS_MODE 3, ordered_dbias route) stored as f32 into this (b, h)'s own partial slice,
//   which the convert kernel sums with the other slices in a fixed order.
//
// Grid (ceil(Skv / BLOCK_KV), Hk, B), or with KV_MAJOR (Hk, B, ceil(Skv / BLOCK_KV)): blocks
// then start KV tile slowest, which under a causal band (KV tile n reached by the Q rows from
// n on) starts the heaviest tiles first across every head instead of a head's tiles in a row
// (a long tail of heavy tiles starting last; the plan builds it for KV tiles of 64 rows or
// more, see KV_MAJOR_MIN_BLOCK_KV); requires Hk == Hv. Each block loads its K and V tile once,
// then walks the query heads of its group and, for each, the query tiles of BLOCK_Q rows that
// the mask band leaves (tile skipping). One step (one Q tile) is five products, each split over
// the WARPS warps by its own warp grid (WM_* warps along the product's rows, WARPS / WM_* along
// its columns), so that every warp owns a 2-D tile of every product and reuses each operand
// fragment it loads across the other dimension:
//   1  S  = Q K^T    and  dP = dO V^T   (BLOCK_Q x BLOCK_KV, grid WM_SDP); P and dS are formed
//      in registers (softmax VJP) and go to shared memory as io-dtype [q][kv] tiles. Where a
//      warp's tile has only two accumulator chains per product (d256), the two products are
//      issued mma by mma in turn over the head dim they share (sdp_k16).
//   2  dV += P^T dO  and  dK += dS^T Q  (BLOCK_KV x D, grid WM_DKV): the accumulators of the
//      whole pass stay in registers, split over the warps.
//   3  dQ  = dS K                       (BLOCK_Q x DQK, grid WM_DQ), reduced into the f32 dQ
//      accumulator (atomic / relay) or dS stored instead (two_kernel).
// All products are mma.sync m16n8k16 with f32 accumulate, fed by ldmatrix (transposed loads
// give the P^T / dS^T / dO / Q / K views without a transpose pass). With K_REGS (V_REGS) the
// warp's K (V) fragments for product 1 are loaded from shared memory once per block and kept in
// registers, so product 1 streams only Q and dO.
//
// With V_STAGED (only with V_REGS: the d128 and d256 envelopes) V has no region of its own: it
// is copied into the Q and dO buffers, read into registers, and only then do the first Q and dO
// tiles arrive; P and dS keep their own space (d256: this is what fits 101,376 B; d128: what
// makes room for a second dO buffer).
//
// With SPLIT_SDP (two_kernel only, K_REGS, V_REGS, V_STAGED, two stages: the d256 and 192/128
// two_kernel entries) product 1 is split by product instead of by tile (with DQK != DV the S
// warps' k loop is the longer one): the first WARPS / 2 warps
// ("S warps") compute S for the whole Q tile with K's fragments in registers, the others ("dP
// warps") dP with V's, each over the same (WM_SDP x WARPS / 2 / WM_SDP) grid of the tile. K and V
// are both staged (K through the Q buffers, V through the dO buffers: with no dQ product nothing
// reads K from shared memory), so product 1 reads Q and dO from shared memory as often as
// unsplit (each by four warps) but K never (unsplit: twice a step). An S warp hands its f32 P
// to its dP warp (same lane, same fragment element) through a shared exchange and a named
// barrier of the pair, which forms dS = P (dP - delta). dO, Stats and delta get two buffers
// like Q (their next tiles are copied from the start of a step: no third barrier), and the bias
// tile its own buffer.
//
// Pipelining: STAGES Q buffers (1 or 2) and DO_BUFS dO / Stats / delta buffers (1, or 2 with
// two Q buffers; SPLIT_SDP: STAGES of each, and the bias tile in its own buffer, refilled once
// every warp is past the softmax: two barriers per step). With two Q buffers, the next step's Q
// is copied (cp.async) into the other buffer as soon as the step starts; with two dO buffers
// and no bias (DO_AHEAD) the next dO, Stats and delta too, so that their copy overlaps the
// whole step and the barrier after dV goes (two per step). With a bias, whose next tile waits
// for that barrier anyway, two dO buffers keep the one-buffer schedule (copying ahead there
// spilled biased d64 and d128 builds on sm_120). With one dO buffer the next dO follows once
// every warp is past dV, so that copy overlaps dK, dQ and the reductions (with one Q buffer,
// the next Q follows once every warp is past dK). Three barriers per step (four with one Q
// buffer). Each streamed tile (Q, dO, Stats and delta) is copied by its own group of warps
// (COPY_THREADS, below), not by all of them.
// The bias tile of the next step is staged in sP (cp.async) once every warp is past dV, so that
// its load overlaps dK, dQ and the reductions; product 1 reads it from there.
// With TMA_TILES (two_kernel's split and two-dO-buffer layouts without a bias or ragged tensors,
// on sm_90 and sm_120: the plan's choice, tensor_copies_serve in compile.rs) the Q and dO tiles
// arrive by tensor copies instead: one thread issues one copy a tile (its 16-column panels one
// box) from the plan's tensor maps (crates/engines/src/cuda/tma.rs), completing on an mbarrier per buffer pair that every thread
// waits on after the step's first barrier, and the tiles sit in shared memory as 32-byte
// swizzled panels (PANELS in common.cuh) in the padded buffers' space; no other warp issues a
// copy for them (the Stats / delta copy group remains). K and V are staged as before.
// dQ partial sums leave as 16-byte vector reductions (sm_90+) straight from the fragments (two
// 8-byte ones in a group of rows that Sq cuts short), broadcast-dBias partial sums as 8-byte
// ones from the dS fragments (DBIAS_MODE 3: 8-byte stores of the same pairs).
//
// Shared memory (dynamic, 16-bit elements, rows padded by 8 elements: conflict-free ldmatrix)
// plus f32 rows:
//   K BLOCK_KV x (DQK+8), V BLOCK_KV x (DV+8), P and dS BLOCK_Q x (BLOCK_KV+8) each (P's tile
//   holds the staged bias until product 1; with V_REGS both reuse V's space, grown to hold
//   them where they are larger (d64): V is read only into the registers), STAGES x Q BLOCK_Q x
//   (DQK+8), DO_BUFS x (dO BLOCK_Q x (DV+8), Stats and delta 2 x BLOCK_Q x 4 bytes) (V_STAGED:
//   no V region; P and dS their own). SPLIT_SDP: STAGES x (Q, dO, Stats, delta), P, dS and the bias
//   tile, and the f32 P exchange, BLOCK_Q x BLOCK_KV x 4 bytes; no K or V region (both
//   staged). The table's entries (crates/analyzer/src/sm120/kernels.rs, smem_backward) give
//   DQK = DV = 64, 64 x 128, K_REGS, V_REGS, two Q buffers and one dO buffer: 81,408 B (a
//   second dO buffer, 91,136 B, made the no-bias atomic rows slower); DQK = DV = 128, 32 x 128,
//   V_REGS, V_STAGED (through two Q and two dO buffers): 87,552 B; DQK 192 / DV 128, 32 x 64,
//   V_REGS, two Q and two dO buffers: 86,528 B where the kernel computes dQ, and on
//   two_kernel split by product (SPLIT_SDP), 65,536 B; DQK = DV = 256, 32 x 64, V_STAGED: one Q
//   buffer where the kernel computes dQ (atomic, relay), 77,056 B; on two_kernel (no dQ
//   product) split by product (SPLIT_SDP), two Q and two dO buffers, 90,112 B (cap 101,376 B).
//
// Head dims below the envelope (p.hd_qk, p.hd_v multiples of 8) are zero-filled and not stored;
// ALiBi (HAS_ALIBI) adds slope_h * (j - i) to the scores. The dQ accumulator is compact with
// the actual p.hd_qk columns.
//
// With TMA_TILES the dynamic region starts 1,024-byte aligned (ptxas reports the two mbarriers
// as 1,024 B of static shared memory: the fitness test counts them).
//
// Defines: HEAD_DIM_QK, HEAD_DIM_V, BLOCK_Q, BLOCK_KV, WARPS, STAGES, DO_BUFS, WM_SDP, WM_DKV,
// WM_DQ, K_REGS, V_REGS, V_STAGED, SPLIT_SDP, IS_BF16, HAS_BIAS, HAS_ALIBI, DBIAS_MODE, DQ_ROUTE,
// KV_MAJOR, RAGGED, TMA_TILES, SMEM_BYTES.

#define LD_QK (HEAD_DIM_QK + 8)
#define LD_V (HEAD_DIM_V + 8)
#define LD_S (BLOCK_KV + 8)
// Layout codes (common.cuh) of the streamed Q and dO tiles: with TMA_TILES the 32-byte swizzled
// panels tensor copies write, else rows padded like K's and V's.
#define LQ (TMA_TILES ? PANELS(BLOCK_Q) : LD_QK)
#define LDO (TMA_TILES ? PANELS(BLOCK_Q) : LD_V)
// P and dS live in V's region when V_REGS (V is read only into registers) unless V is staged
// through the Q and dO buffers (V_STAGED), where they have their own.
#define PS_IN_V (V_REGS && !V_STAGED)
// V's region (none when staged); with PS_IN_V it also holds P and dS.
#define V_REGION                                                                 \
    (V_STAGED ? 0                                                                \
     : PS_IN_V && 2 * BLOCK_Q * LD_S > BLOCK_KV * LD_V ? 2 * BLOCK_Q * LD_S      \
                                                       : BLOCK_KV * LD_V)
#if SPLIT_SDP
// Q, dO, Stats and delta x STAGES; P, dS and the bias tile; the f32 P exchange.
#define BWD_SMEM                                                                          \
    (2 * (STAGES * BLOCK_Q * (LD_QK + LD_V) + 3 * BLOCK_Q * LD_S) + 4 * BLOCK_Q * BLOCK_KV + \
     8 * STAGES * BLOCK_Q)
#else
#define BWD_SMEM                                                                          \
    (2 * (BLOCK_KV * LD_QK + V_REGION + (PS_IN_V ? 0 : 2 * BLOCK_Q * LD_S) +              \
          STAGES * BLOCK_Q * LD_QK + DO_BUFS * BLOCK_Q * LD_V) +                           \
     8 * DO_BUFS * BLOCK_Q)
#endif

// The warps product 1 is split over: all of them, or (SPLIT_SDP) each half, S on one, dP on the
// other.
#define SDP_WARPS (SPLIT_SDP ? WARPS / 2 : WARPS)
// The next step's dO, Stats and delta are copied as the step starts (into the other buffer).
#define DO_AHEAD (SPLIT_SDP || (DO_BUFS == 2 && !HAS_BIAS))
// Warp tiles of the three products (rows x columns per warp).
#define SDP_M (BLOCK_Q / WM_SDP)                     // S / dP: query rows
#define SDP_N (BLOCK_KV / (SDP_WARPS / WM_SDP))      // S / dP: KV columns
#define DKV_M (BLOCK_KV / WM_DKV)                    // dK / dV: KV rows
#define DK_N (HEAD_DIM_QK / (WARPS / WM_DKV))        // dK: head-dim columns
#define DV_N (HEAD_DIM_V / (WARPS / WM_DKV))         // dV: head-dim columns
#define DQ_M (BLOCK_Q / WM_DQ)                       // dQ: query rows
#define DQ_N (HEAD_DIM_QK / (WARPS / WM_DQ))         // dQ: head-dim columns

static_assert(SDP_WARPS % WM_SDP == 0 && WARPS % WM_DKV == 0 && WARPS % WM_DQ == 0, "warp grids");
static_assert(SDP_M % 16 == 0 && SDP_N % 16 == 0, "S / dP warp tile: 16 x 16 blocks");
static_assert(DKV_M % 16 == 0 && DK_N % 16 == 0 && DV_N % 16 == 0, "dK / dV warp tile");
static_assert(DQ_M % 16 == 0 && DQ_N % 16 == 0, "dQ warp tile");
static_assert(BLOCK_Q % 16 == 0 && BLOCK_KV % 16 == 0, "tile shapes");
static_assert(STAGES == 1 || STAGES == 2, "one or two Q buffers");
static_assert(DO_BUFS == 1 || (DO_BUFS == 2 && STAGES == 2), "two dO buffers go with two Q's");
static_assert(!SPLIT_SDP || DO_BUFS == STAGES, "split: as many dO buffers as Q buffers");
static_assert(BWD_SMEM == SMEM_BYTES, "shared-memory formula disagrees with the engine's table");
static_assert(!V_STAGED || (V_REGS && BLOCK_KV * LD_V <= STAGES * BLOCK_Q * LD_QK +
                                                     DO_BUFS * BLOCK_Q * LD_V),
              "a staged V is held in registers and fits the Q and dO buffers");
static_assert(DBIAS_MODE == 0 || HAS_BIAS, "dBias needs a bias");
static_assert(DQ_ROUTE >= 0 && DQ_ROUTE <= 2, "DQ_ROUTE: 0 atomic, 1 relay, 2 two_kernel");
static_assert(!(KV_MAJOR && DQ_ROUTE == 1), "relay's tickets order its KV tiles");
// Tensor copies (TMA_TILES) keep the padded buffers' sizes (a staged K or V passes through them
// as padded rows); each buffer, and so each 16-column panel of it, starts 256-byte aligned.
static_assert(!TMA_TILES || (DO_AHEAD && !HAS_BIAS && !RAGGED),
              "tensor copies: Q and dO copied together as the step starts, padded tensors");
static_assert(!TMA_TILES || SPLIT_SDP ||
                  (2 * (BLOCK_KV * LD_QK + V_REGION + (PS_IN_V ? 0 : 2 * BLOCK_Q * LD_S))) % 256 ==
                      0,
              "tensor copies: the Q buffers start 256-byte aligned");
static_assert(!TMA_TILES || ((2 * BLOCK_Q * LD_QK) % 256 == 0 && (2 * BLOCK_Q * LD_V) % 256 == 0),
              "tensor copies: 256-byte aligned buffers");
static_assert(!SPLIT_SDP || (DQ_ROUTE == 2 && K_REGS && V_REGS && V_STAGED && STAGES == 2 &&
                             BLOCK_KV <= STAGES * BLOCK_Q),
              "split product 1: no dQ product (nothing reads K from shared memory), K and V "
              "staged through the two Q and dO buffers");

#if DQ_ROUTE == 1
// This step's turn (thread 0's own: nothing else reads it).
__shared__ unsigned int s_relay_turn;
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
        q_tiles_of<BLOCK_Q, BLOCK_KV>(p, L, mid, mb, me);
        if (mb <= m && m < me) lo = mid;
        else hi = mid - 1;
    }
    return (unsigned int)(lo - n);
}
#endif

// Where this block's batch starts in Q, dO and Stats (slots BASE_Q, BASE_DO, BASE_STATS). A
// ragged build reads the three offsets once per block into shared memory (kept in registers
// across the main loop, they spilled at the register limit); a padded one multiplies by the
// batch stride.
#define BASE_Q 0
#define BASE_DO 1
#define BASE_STATS 2
#if RAGGED
__shared__ i64 s_batch_base[3];
#endif
__device__ __forceinline__ i64 block_base(const TensorRef& t, int slot, int b) {
#if RAGGED
    return s_batch_base[slot];
#else
    return batch_base(t, b);
#endif
}

// The query rows a tile copy may read, of every query-side tensor (Q, dO, Stats, delta), and the
// key rows of K and V: the sequence's lengths (the padding mask's, or a ragged sequence's real
// tokens), never Sq and Skv. A ragged tensor has no rows past them; a padded one's rows past
// them are padding, which callers leave uninitialised: masked P and dS are 0, but 0 times a NaN
// row of Q, dO, K or V is NaN in dK, dV and dQ, so those rows are zero-filled instead (until
// 2026-12-07 a padded build read them up to Sq and Skv; tensor copies, bounded by Sq, serve no
// padding mask: tensor_copies_serve). One bound for all, not one per
// tensor: per-tensor bounds spilled at the register limit.
#define Q_ROWS(L) ((L).q)
#define KV_ROWS(L) ((L).kv)

// Copy groups: the streamed tiles are copied by a few warps each, not by all of them. Q by the
// COPY_THREADS threads from 0, dO by the next COPY_THREADS, Stats and delta by BLOCK_Q threads
// after those (wrapping round the block). A copy group computes its addresses once per tile and
// steps them, 8 16-byte chunks of the Q tile a thread (dO's tile is no wider), where every warp
// computing addresses for one or two chunks of each tile spent about a fifth of the d64 main
// loop's instructions on copies (sm_90 SASS, 2026-12-06). Whole rows per step: 64 threads for
// 64 x 64 and 32 x 128 tiles, 96 for 32 x 192, 128 for 32 x 256.
#define COPY_THREADS (BLOCK_Q * HEAD_DIM_QK / 8 / 8)
#define COPY_Q_FIRST 0
#define COPY_DO_FIRST COPY_THREADS
#define COPY_STATS_FIRST ((2 * COPY_THREADS) % (WARPS * 32))
static_assert(COPY_THREADS >= 32 && COPY_THREADS % 32 == 0 && 2 * COPY_THREADS <= WARPS * 32,
              "copy groups: whole warps, Q's and dO's apart");
static_assert(COPY_STATS_FIRST + BLOCK_Q <= WARPS * 32, "one Stats / delta row per thread");

// Copies Q rows [q0, q0 + BLOCK_Q) of head h (cp.async; rows from q_rows on zero-filled), by
// the Q copy group.
__device__ __forceinline__ void load_q_tile(io_t* sQ, const AttnParams& p, int b, int q_rows,
                                            int h, int q0, int tid) {
    const int ct = tid - COPY_Q_FIRST;
    if ((unsigned)ct >= (unsigned)COPY_THREADS) return;
    const io_t* gQ = (const io_t*)p.q.ptr + block_base(p.q, BASE_Q, b) + elem_off(h, p.q.sh) +
                     elem_off(q0, p.q.ss);
    load_tile<BLOCK_Q, HEAD_DIM_QK, COPY_THREADS, true, true>(sQ, LD_QK, gQ, p.q.ss, q_rows - q0,
                                                              p.hd_qk, ct);
}

// Copies the Stats and delta rows of query tile q0 of head h (cp.async, by the Stats copy group;
// rows from q_rows on zero-filled, and masked by rime_keep).
__device__ __forceinline__ void load_stats_rows(float* sLse, float* sDelta, const AttnParams& p,
                                                int b, int q_rows, int h, int q0, int tid) {
    const float* gLse =
        (const float*)p.stats.ptr + block_base(p.stats, BASE_STATS, b) + h * p.stats.sh;
    const float* gDelta = (const float*)p.delta + ((i64)b * p.hq + h) * p.sq;
    // One row per thread of the first BLOCK_Q: a loop over rows was unrolled into some 200
    // instructions per step for the two warps that copy. (The bases as they are, the row's offset
    // from elem_off: the other forms tried spilled in d128 or d192/128 builds on sm_120.)
    const int r = tid - COPY_STATS_FIRST;
    if ((unsigned)r < (unsigned)BLOCK_Q) {
        const int i = q0 + r;
        const bool in = i < q_rows;
        cp_async_4(sLse + r, in ? gLse + elem_off(i, p.stats.ss) : gLse, in);
        cp_async_4(sDelta + r, in ? gDelta + i : gDelta, in);
    }
}

// Copies what the dP and dV products of query tile q0 of head h read besides V: dO rows (by the
// dO copy group), Stats and delta (cp.async; rows from q_rows on zero-filled, and masked by
// rime_keep).
__device__ __forceinline__ void load_do_tile(io_t* sdO, float* sLse, float* sDelta,
                                             const AttnParams& p, int b, int q_rows, int h, int q0,
                                             int tid) {
    const int ct = tid - COPY_DO_FIRST;
    if ((unsigned)ct < (unsigned)COPY_THREADS) {
        const io_t* gdO = (const io_t*)p.d_o.ptr + block_base(p.d_o, BASE_DO, b) +
                          elem_off(h, p.d_o.sh) + elem_off(q0, p.d_o.ss);
        load_tile<BLOCK_Q, HEAD_DIM_V, COPY_THREADS, true, true>(sdO, LD_V, gdO, p.d_o.ss,
                                                                 q_rows - q0, p.hd_v, ct);
    }
    load_stats_rows(sLse, sDelta, p, b, q_rows, h, q0, tid);
}

#if TMA_TILES
// The mbarrier of each Q / dO buffer pair: its phase completes when both tiles have landed.
__shared__ __align__(8) u64 s_tile_bar[2];

// Copies the Q and dO tiles of query tile q0 of head h into the buffers at shared addresses sq
// and sdo by two tensor copies (the plan's tensor maps: one box a tile, its 16-column panels
// one after the other; rows past Sq and panels past the head dim land as zeros), completing on
// the buffers' mbarrier `bar`, which the issuing thread (lane 0 of warp 0) first arms with both
// tiles' bytes. After the block barrier that frees the buffers: the thread orders that
// barrier's generic accesses (the previous tiles' ldmatrix reads, K and V staged by cp.async)
// before its copies.
__device__ __forceinline__ void tma_step_tiles(const TmaMaps& maps, u32 sq, u32 sdo, u32 bar,
                                               int b, int h, int q0, int lane) {
    if (lane != 0) return;
    mbar_arrive_expect(bar, BLOCK_Q * 2 * (HEAD_DIM_QK + HEAD_DIM_V));
    fence_proxy_async();
    tma_load_5d(sq, &maps.q, 0, q0, 0, h, b, bar);
    tma_load_5d(sdo, &maps.d_o, 0, q0, 0, h, b, bar);
}
#endif

// Stores the shared [q][kv] dS tile at dst (row stride `stride` elements): rows at or past
// `rows` and columns at or past `cols` are skipped. Each thread copies 8 consecutive KV columns
// of one query row as one 16-byte store (where dst and the stride keep rows 16-byte aligned;
// else element stores), consecutive threads covering a row.
__device__ __forceinline__ void store_ds_tile(io_t* dst, i64 stride, int rows, int cols,
                                              const io_t* sdS, int tid) {
    constexpr int kPerRow = BLOCK_KV / 8;
    constexpr int kChunks = BLOCK_Q * kPerRow;
    constexpr int kThreads = WARPS * 32;
    const bool vec = ((u64)dst & 15) == 0 && (stride & 7) == 0;
#pragma unroll 1
    for (int c = tid; c < kChunks; c += kThreads) {
        const int ql = c / kPerRow;
        const int j0 = (c - ql * kPerRow) * 8;
        if (ql >= rows || j0 >= cols) continue;
        u32 w[4];
        ld_shared_v4(sdS + ql * LD_S + j0, w);
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

#if DBIAS_MODE == 2 || DBIAS_MODE == 3
// The f32 [Sq][Skv] plane that (b, h)'s dS goes to: DBIAS_MODE 2 adds into the bias's own
// (batch, head) slice of the accumulator; DBIAS_MODE 3 stores into that slice of partial
// `part`, one part per (batch, head) the bias broadcasts over, so every element has one writer
// (convert.cu sums the parts in ascending order, as the host's part count assumes).
__device__ __forceinline__ float* dbias_plane(const AttnParams& p, int b, int h) {
    const i64 slice = (i64)(p.bias_b == 1 ? 0 : b) * p.bias_h + (p.bias_h == 1 ? 0 : h);
#if DBIAS_MODE == 3
    const i64 part = (i64)(p.bias_b == 1 ? b : 0) * (p.bias_h == 1 ? p.hq : 1) +
                     (p.bias_h == 1 ? h : 0);
    return (float*)p.dbias_parts + (part * p.bias_b * p.bias_h + slice) * p.sq * p.skv;
#else
    return (float*)p.dbias_accum + slice * p.sq * p.skv;
#endif
}
#endif

// Rows the band skips still get dBias = 0 in KV tile n0's columns: rows [0, r0) and [r1, Sq),
// where the walked Q tiles [m_begin, m_end) cover [r0, r1) (DBIAS_MODE 2 needs none: its
// accumulator starts at 0), and (two_kernel) dS = 0 in the rows ds_rows_of adds around them:
// the rest of the dQ GEMM's tiles that read this KV tile's columns (attn.cuh says why those
// are enough; a host test, crates/engines/src/cuda/band_ranges.rs, checks it). dbias_reduce.cu
// reads only the walked rows (walked_rows_of), so a broadcast dBias needs no more.
__device__ __forceinline__ void zero_skipped_rows(const AttnParams& p, int b, int kvh, int n0,
                                                  int m_begin, int m_end, int tid) {
#if DBIAS_MODE == 1 || DBIAS_MODE == 3 || DQ_ROUTE == 2
    const int group = p.hq / p.hk;
    int r0, r1;
    rows_of_tiles<BLOCK_Q>(p, m_begin, m_end, r0, r1);
#if DQ_ROUTE == 2
    int ds_lo, ds_hi;
    ds_rows_of(p, r0, r1, ds_lo, ds_hi);
#endif
#if DBIAS_MODE == 1 || DBIAS_MODE == 3
    const int lo = 0, hi = p.sq;  // dBias: every skipped row
#else
    const int lo = ds_lo, hi = ds_hi;
#endif
    for (int hh = 0; hh < group; ++hh) {
        const int h = kvh * group + hh;
#if DBIAS_MODE == 1
        io_t* gdB = (io_t*)p.dbias.ptr + b * p.dbias.sb + h * p.dbias.sh;
#elif DBIAS_MODE == 3
        float* gdB = dbias_plane(p, b, h);
#endif
#if DQ_ROUTE == 2
        io_t* gdS = (io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * ds_pitch(p.skv) + n0;
#endif
        // WARPS * 32 / BLOCK_KV rows per pass, so no index grows past Sq.
        const int jl = tid % BLOCK_KV;
        for (int row = tid / BLOCK_KV; row < (r0 - lo) + (hi - r1);
             row += WARPS * 32 / BLOCK_KV) {
            const int i = row < r0 - lo ? lo + row : row - (r0 - lo) + r1;
#if DBIAS_MODE == 1
            if (n0 + jl < p.skv) gdB[(i64)i * p.dbias.ss + n0 + jl] = 0;
#elif DBIAS_MODE == 3
            if (n0 + jl < p.skv) gdB[(i64)i * p.skv + n0 + jl] = 0.f;
#endif
#if DQ_ROUTE == 2
            if (i >= ds_lo && i < ds_hi) gdS[(i64)i * ds_pitch(p.skv) + jl] = 0;
#endif
        }
    }
#endif
}

#if HAS_BIAS
// Stages the bias tile of query tile q0 of head h and KV tile n0 as a [q][kv] tile in sB (sP's
// space: free once every warp is past dV; product 1 reads it, then each warp overwrites its own
// elements with P), so that the bias load overlaps the previous step's dK and dQ. Rows past Sq
// and columns past Skv read as 0 (masked). The bias is not a vector port (any stride is
// allowed): with 16-byte rows (VEC: base, batch, head and row strides and Skv multiples of 8
// elements) cp.async copies it with the step's other prefetches, else element loads do. One
// chunk loop serves both (not load_tile, whose chunks are whole: Skv may end mid-chunk here),
// and the test is redone per call: either way fewer live registers (0 spills; a separate
// element loop or a hoisted flag spilled).
__device__ __forceinline__ void load_bias_tile(io_t* sB, const AttnParams& p, int b, int h,
                                               int q0, int n0, int tid) {
    const bool vec = ((p.bias.ptr | (u64)p.bias.sb | (u64)p.bias.sh | (u64)p.bias.ss |
                       (u64)p.skv) & 7) == 0 && (p.bias.ptr & 15) == 0;
    const io_t* gB = (const io_t*)p.bias.ptr + b * p.bias.sb + h * p.bias.sh +
                     (i64)q0 * p.bias.ss + n0;
    constexpr int kPerRow = BLOCK_KV / 8;
#pragma unroll 1
    for (int c = tid; c < BLOCK_Q * kPerRow; c += WARPS * 32) {
        const int r = c / kPerRow;
        const int col = (c - r * kPerRow) * 8;
        const int cols = r < p.sq - q0 ? p.skv - n0 - col : 0;  // valid columns of the chunk
        const io_t* src = cols > 0 ? gB + (i64)r * p.bias.ss + col : gB;
        io_t* dst = sB + r * LD_S + col;
        if (vec) {
            cp_async_16(dst, src, cols > 0);
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) dst[e] = e < cols ? src[e] : (io_t)0;
        }
    }
}
#endif

// The masked softmax (a tile that crosses a mask edge) tests each element against its row's
// kept columns, found once per row (keep_cols_of_row), where the registers allow it: with it, the
// relay builds and those past (128, 128) spilled on sm_120, so they test the band per element.
#define ROW_RANGE_MASK (DQ_ROUTE != 1 && HEAD_DIM_QK <= 128)

#define SDP_MI (SDP_M / 16)
#define SDP_NJ (SDP_N / 8)

// The warp's B fragments of product 1 for K16 k steps of a [n][k] tile (K or V, rows LD
// elements apart) at the lane's address b_lane: kept in registers for the whole block.
template <int K16, int LD>
__device__ __forceinline__ void load_b_frags(u32 (*f)[SDP_N / 16][4], u32 b_lane) {
#pragma unroll
    for (int kk = 0; kk < K16; ++kk) {
#pragma unroll
        for (int np = 0; np < SDP_N / 16; ++np)
            ldsm_x4(f[kk][np], b_lane + tile_off(LD, np * 16, kk * 16));
    }
}

// Step kk (16 columns of the head dim) of product 1 (S = Q K^T or dP = dO V^T): A from the
// [q][d] tile at a_lane (layout LA), B from the fragments in registers (B_REGS) or the [kv][d]
// tile at b_lane (layout LB).
template <bool B_REGS, int LA, int LB>
__device__ __forceinline__ void s_k16(float (*acc)[SDP_NJ][4], u32 a_lane, u32 b_lane, int kk,
                                      const u32 (*f)[SDP_N / 16][4]) {
    if (!B_REGS) {
        warp_gemm<SDP_MI, SDP_NJ, 1, false, false, LA, LB>(acc, a_lane + tile_off(LA, 0, kk * 16),
                                                           b_lane + tile_off(LB, 0, kk * 16));
        return;
    }
    u32 a[SDP_MI][4];
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) ldsm_x4(a[mi], a_lane + tile_off(LA, mi * 16, kk * 16));
#pragma unroll
    for (int np = 0; np < SDP_NJ / 2; ++np) {
#pragma unroll
        for (int mi = 0; mi < SDP_MI; ++mi) {
            mma_16816(acc[mi][2 * np], a[mi], f[kk][np][0], f[kk][np][1]);
            mma_16816(acc[mi][2 * np + 1], a[mi], f[kk][np][2], f[kk][np][3]);
        }
    }
}

// Step kk of both halves of product 1 at once, their mma issued alternately so that a warp has
// four independent accumulator chains in flight rather than two per product: ptxas for sm_120
// otherwise schedules all of S's k steps, then all of dP's (sm_90 interleaves them itself).
// Used where a warp's S / dP tile is two 16 x 8 blocks (d256's 16 x 16); wider tiles have four
// or more chains per product already, and there the d128 ALiBi builds spilled with it.
constexpr bool kFewChains = SDP_MI * SDP_NJ <= 2;
template <bool KR, bool VR>
__device__ __forceinline__ void sdp_k16(float (*s)[SDP_NJ][4], float (*dp)[SDP_NJ][4], u32 a_q,
                                        u32 a_do, u32 b_k, u32 b_v, int kk,
                                        const u32 (*kf)[SDP_N / 16][4],
                                        const u32 (*vf)[SDP_N / 16][4]) {
    u32 aq[SDP_MI][4];
    u32 ado[SDP_MI][4];
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) {
        ldsm_x4(aq[mi], a_q + tile_off(LQ, mi * 16, kk * 16));
        ldsm_x4(ado[mi], a_do + tile_off(LDO, mi * 16, kk * 16));
    }
#pragma unroll
    for (int np = 0; np < SDP_NJ / 2; ++np) {
        u32 bk[4];
        u32 bv[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            if (KR) bk[r] = kf[kk][np][r];
            if (VR) bv[r] = vf[kk][np][r];
        }
        if (!KR) ldsm_x4(bk, b_k + tile_off(LD_QK, np * 16, kk * 16));
        if (!VR) ldsm_x4(bv, b_v + tile_off(LD_V, np * 16, kk * 16));
#pragma unroll
        for (int mi = 0; mi < SDP_MI; ++mi) {
            mma_16816(s[mi][2 * np], aq[mi], bk[0], bk[1]);
            mma_16816(dp[mi][2 * np], ado[mi], bv[0], bv[1]);
            mma_16816(s[mi][2 * np + 1], aq[mi], bk[2], bk[3]);
            mma_16816(dp[mi][2 * np + 1], ado[mi], bv[2], bv[3]);
        }
    }
}

// dS of one element from its P and dP (the softmax VJP).
__device__ __forceinline__ float ds_of(float pv, float dp, float delta) {
    return pv * (dp - delta);
}

// The softmax VJP on the warp's S / dP fragments: S becomes P = exp2(S * scale * log2 e + Bias
// * log2 e + ALiBi - Stats * log2 e), 0 where (i, j) is masked, and (WITH_DS) dP becomes dS =
// P (dP - delta) in the same pass (without SPLIT_SDP's dP warps, which get P from the S warps:
// softmax_ds). The bias is read from the staged [q][kv] tile sB (the warp's own elements;
// without SPLIT_SDP sB is sP, which the warp then overwrites with P). Tiles wholly inside the
// sequences and the band skip the mask test (MASKED false), a uniform branch per step instead
// of a select per element. Fragment element e of block (mi, nj) is query row i = i0 + 16 mi + g
// + 8 (e >> 1), KV column j = j0 + 8 nj + 2 t + (e & 1).
template <bool MASKED, bool WITH_DS>
__device__ __forceinline__ void softmax_vjp(float (*s)[SDP_NJ][4], float (*dp)[SDP_NJ][4],
                                            const float* sLse, const float* sDelta,
                                            const io_t* sB, const AttnParams& p,
                                            const SeqLens& L, int i0, int il0, int j0, int jl0,
                                            int g, int t, float scale_log2, float alibi_log2) {
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int il = il0 + mi * 16 + g + 8 * r;  // row within the Q tile
            const int i = i0 + mi * 16 + g + 8 * r;
            const float lse_log2 = sLse[il] * RIME_LOG2E;
            const float delta = WITH_DS ? sDelta[il] : 0.f;
            // ROW_RANGE_MASK: the row's kept columns, relative to the lane's first (element
            // (nj, c) is column 8 nj + c of them), two compares per element instead of the band
            // per element.
            int lo = 0, hi = 0;
            if (MASKED && ROW_RANGE_MASK) {
                keep_cols_of_row(i, L.q, L.kv, L.shift, p.has_right, p.right_bound, p.has_left,
                                 p.left_bound, lo, hi);
                lo -= j0 + 2 * t;
                hi -= j0 + 2 * t;
            }
#pragma unroll
            for (int nj = 0; nj < SDP_NJ; ++nj) {
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const int e = 2 * r + c;
                    float v = s[mi][nj][e] * scale_log2 - lse_log2;
#if HAS_BIAS
                    v += io_to_f32(sB[il * LD_S + jl0 + nj * 8 + 2 * t + c]) * RIME_LOG2E;
#endif
#if HAS_ALIBI
                    v += alibi_log2 * (float)(j0 + nj * 8 + 2 * t + c - i);
#endif
                    v = rime_exp2(v);
                    if (MASKED) {
                        const int j = j0 + nj * 8 + 2 * t + c;
                        const bool keep = ROW_RANGE_MASK
                                              ? nj * 8 + c >= lo && nj * 8 + c < hi
                                              : rime_keep(i, j, L.q, L.kv, L.shift, p.has_right,
                                                          p.right_bound, p.has_left, p.left_bound);
                        if (!keep) v = 0.f;
                    }
                    s[mi][nj][e] = v;
                    if (WITH_DS) dp[mi][nj][e] = ds_of(v, dp[mi][nj][e], delta);
                }
            }
        }
    }
}

// One step's softmax VJP: the ALiBi slope of head h (when the kernel has ALiBi), then
// softmax_vjp without the mask test on an interior tile, with it elsewhere.
template <bool WITH_DS>
__device__ __forceinline__ void softmax_step(bool interior, float (*s)[SDP_NJ][4],
                                             float (*dp)[SDP_NJ][4], const float* sLse,
                                             const float* sDelta, const io_t* sB,
                                             const AttnParams& p, const SeqLens& L, int h, int i0,
                                             int il0, int j0, int jl0, int g, int t,
                                             float scale_log2) {
#if HAS_ALIBI
    const float alibi_log2 = rime_alibi_slope(p, h) * RIME_LOG2E;
#else
    const float alibi_log2 = 0.f;
#endif
    if (interior)
        softmax_vjp<false, WITH_DS>(s, dp, sLse, sDelta, sB, p, L, i0, il0, j0, jl0, g, t,
                                    scale_log2, alibi_log2);
    else
        softmax_vjp<true, WITH_DS>(s, dp, sLse, sDelta, sB, p, L, i0, il0, j0, jl0, g, t,
                                   scale_log2, alibi_log2);
}

// dP fragments become dS = P (dP - delta), given P for the same elements (SPLIT_SDP's dP warps;
// the fragment layout of softmax_vjp).
__device__ __forceinline__ void softmax_ds(float (*dp)[SDP_NJ][4], const float (*pv)[SDP_NJ][4],
                                           const float* sDelta, int il0, int g) {
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float delta = sDelta[il0 + mi * 16 + g + 8 * r];
#pragma unroll
            for (int nj = 0; nj < SDP_NJ; ++nj) {
#pragma unroll
                for (int c = 0; c < 2; ++c)
                    dp[mi][nj][2 * r + c] =
                        ds_of(pv[mi][nj][2 * r + c], dp[mi][nj][2 * r + c], delta);
            }
        }
    }
}

#if SPLIT_SDP
// The f32 P exchange between an S warp and its dP warp (pair `pair`): each lane's fragments as
// SDP_MI x SDP_NJ 16-byte slots, laid out [pair][slot][lane] so that each access of a warp is
// 512 contiguous bytes (conflict-free).
__device__ __forceinline__ float4* p_slots(float* sPf, int pair, int lane) {
    return (float4*)sPf + pair * SDP_MI * SDP_NJ * 32 + lane;
}
// Named barrier of S warp `pair` and dP warp `pair` + SDP_WARPS (ids 1.., 0 is __syncthreads):
// the S warp reaches it once its P is in the exchange, the dP warp before reading P. Every
// thread reaches it through the same instruction: bar.sync is barrier.sync.aligned, which PTX
// leaves undefined when the threads of a barrier arrive at different instructions (with a call
// in each branch, compute-sanitizer's synccheck reported divergent threads at the S warps'
// copy; H100, 2026-12-06, call B4 of docs/gpu-runs/2026-12-06-pdl). Both
// wait (bar.sync): with the S warp only arriving (bar.arrive), compute-sanitizer's racecheck
// reported tens of thousands of WAR hazards on the Q buffers between product 2's reads and
// the next Q tile's copy, which __syncthreads separates (H100, 2026-12-05, call R6; none with
// bar.sync, at the same speed: docs/performance.md).
__device__ __forceinline__ void pair_sync(int pair) {
    asm volatile("bar.sync %0, 64;" ::"r"(pair + 1) : "memory");
}
#endif

#if DBIAS_MODE == 2 || DBIAS_MODE == 3
// Broadcast dBias from the warp's dS fragments (f32), a pair (j, j + 1) per 8-byte access: a
// warp's cover 8 rows x one full 32-byte sector per 8 columns. Mode 2 adds them (zero pairs,
// i.e. masked elements, skipped); mode 3 stores every pair.
__device__ __forceinline__ void dbias_from_frags(const AttnParams& p, int b, int h,
                                                 const float (*ds)[SDP_NJ][4], int i0, int j0,
                                                 int g, int t) {
    float* gdBa = dbias_plane(p, b, h);
    const bool pairs = (p.skv & 1) == 0;
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int i = i0 + mi * 16 + g + 8 * r;
#pragma unroll
            for (int nj = 0; nj < SDP_NJ; ++nj) {
                const int j = j0 + nj * 8 + 2 * t;
                const float x = ds[mi][nj][2 * r];
                const float y = ds[mi][nj][2 * r + 1];
                if (i >= p.sq || j >= p.skv) continue;
                float* d = gdBa + (i64)i * p.skv + j;
#if DBIAS_MODE == 2
                if (x == 0.f && y == 0.f) continue;
                if (pairs) {
                    red_add_f32x2(d, x, y);
                } else {
                    red_add_f32(d, x);
                    if (j + 1 < p.skv) red_add_f32(d + 1, y);
                }
#else
                if (pairs) {
                    st_global_f32x2(d, x, y);
                } else {
                    d[0] = x;
                    if (j + 1 < p.skv) d[1] = y;
                }
#endif
            }
        }
    }
}
#endif

// Writes the warp's fragments of a BLOCK_Q x BLOCK_KV product, packed to the io dtype, into the
// shared [q][kv] tile at (il0, jl0) (4-byte stores, conflict-free with LD_S's padding).
__device__ __forceinline__ void store_frag_tile(io_t* sT, const float (*c)[SDP_NJ][4], int il0,
                                                int jl0, int g, int t) {
#pragma unroll
    for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
        for (int nj = 0; nj < SDP_NJ; ++nj) {
            io_t* d = sT + (il0 + mi * 16 + g) * LD_S + jl0 + nj * 8 + 2 * t;
            *(u32*)d = pack_io2(c[mi][nj][0], c[mi][nj][1]);
            *(u32*)(d + 8 * LD_S) = pack_io2(c[mi][nj][2], c[mi][nj][3]);
        }
    }
}

// With tensor copies the kernel takes the plan's tensor maps as a second parameter.
#if TMA_TILES
#define BWD_MAIN_MAPS , const __grid_constant__ TmaMaps maps
#else
#define BWD_MAIN_MAPS
#endif
extern "C" __global__ void __launch_bounds__(WARPS * 32, 1)
rime_bwd_main(const AttnParams p BWD_MAIN_MAPS) {
    pdl_enter();  // before any global access (common.cuh)
    // (Tensor copies: 1,024-byte aligned, so that every buffer's swizzle is the one the kernel's
    // addresses assume; common.cuh, PANELS.)
    extern __shared__ __align__(TMA_TILES ? 1024 : 16) unsigned char smem_raw[];
    constexpr int kQBuf = BLOCK_Q * LD_QK;  // elements per Q buffer
    constexpr int kDoBuf = BLOCK_Q * LD_V;  // elements per dO buffer
#if SPLIT_SDP
    // STAGES x Q (K staged there), STAGES x dO (V staged there), P, dS, the bias tile, the f32 P
    // exchange, STAGES x Stats and delta.
    io_t* sQ = (io_t*)smem_raw;
    io_t* sdO = sQ + STAGES * kQBuf;
    io_t* sP = sdO + STAGES * kDoBuf;
    io_t* sdS = sP + BLOCK_Q * LD_S;
    io_t* sBias = sdS + BLOCK_Q * LD_S;
    float* sPf = (float*)(sBias + BLOCK_Q * LD_S);
    float* sLse = sPf + BLOCK_Q * BLOCK_KV;           // STAGES x BLOCK_Q
    float* sDelta = sLse + STAGES * BLOCK_Q;          // STAGES x BLOCK_Q
    io_t* sK = sQ;
    io_t* sV = sdO;
#else
    io_t* sK = (io_t*)smem_raw;
    io_t* sVr = sK + BLOCK_KV * LD_QK;                // V's region (empty when staged)
    io_t* sP = PS_IN_V ? sVr : sVr + V_REGION;        // BLOCK_Q x LD_S
    io_t* sdS = sP + BLOCK_Q * LD_S;                  // BLOCK_Q x LD_S
    io_t* sQ = sVr + V_REGION + (PS_IN_V ? 0 : 2 * BLOCK_Q * LD_S);  // STAGES x BLOCK_Q x LD_QK
    io_t* sdO = sQ + STAGES * kQBuf;                  // DO_BUFS x BLOCK_Q x LD_V
    io_t* sV = V_STAGED ? sQ : sVr;                   // where V lands (staged: Q's buffers on)
    io_t* sBias = sP;                                 // the bias tile waits in P's
    float* sLse = (float*)(sdO + DO_BUFS * kDoBuf);   // DO_BUFS x BLOCK_Q
    float* sDelta = sLse + DO_BUFS * BLOCK_Q;
#endif

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
#if KV_MAJOR
    // Grid (Hk, B, KV tiles): blocks start KV tile slowest, a causal band's heaviest tiles
    // first across every head (the plan's choice; see the grid note at the top).
    const int kvh = blockIdx.x;
    const int b = blockIdx.y;
#else
    const int kvh = blockIdx.y;
    const int b = blockIdx.z;
#endif
#if DQ_ROUTE == 1
    // Relay: a block takes its KV tile from its KV head's ticket (after the turn counters in the
    // relay region, zeroed by the preprocess kernel), not from blockIdx.x: tickets go to the
    // blocks of a KV head in the order they start running, ticket t is the t-th KV tile from
    // the last, and a block waits only for larger KV tiles of its KV head, whose tickets came
    // before its own: blocks already running (CUDA does not promise to start blocks in blockIdx
    // order, so waiting on a block by its index could wait on one that never starts). The last
    // KV tile reaches the fewest Q tiles under a causal mask, and on each Q tile the KV tiles
    // take turns last-first: along the diagonal each block starts at once and trails its
    // neighbour by one step. The ticket is broadcast through the dS tile, which nothing uses
    // before the main loop's first barrier.
    if (tid == 0) {
        unsigned int* tickets = (unsigned int*)p.relay +
                                (i64)p.batch * p.hq * ((p.sq + BLOCK_Q - 1) / BLOCK_Q);
        *(volatile int*)sdS = (int)atomicAdd(tickets + b * p.hk + kvh, 1u);
    }
    __syncthreads();
    const int kv_tile = (int)gridDim.x - 1 - *(volatile int*)sdS;
    __syncthreads();  // every thread has its ticket before the V copy (or P) reuses the word
#elif KV_MAJOR
    const int kv_tile = blockIdx.z;
#else
    const int kv_tile = blockIdx.x;
#endif
    const int n0 = kv_tile * BLOCK_KV;
    const int group = p.hq / p.hk;
#if TMA_TILES
    // Each buffer pair's barrier, one arrival a phase (lane 0's, with the bytes it expects);
    // the barrier after K and V land makes the initialisation visible to every thread.
    const u32 tile_bar0 = smem_addr(&s_tile_bar[0]);
    if (tid == 0) {
        mbar_init(tile_bar0, 1);
        mbar_init(tile_bar0 + 8, 1);
    }
    __syncwarp();  // warp 0 may copy the first tiles before the block's first barrier
#endif
    const float scale_log2 = p.scale * RIME_LOG2E;

    const SeqLens L = seq_lens(p, b);
    int m_begin, m_end;
    q_tiles_of<BLOCK_Q, BLOCK_KV>(p, L, kv_tile, m_begin, m_end);
    // The block walks (query head of the group, Q tile) steps, heads outer.
    const int tiles = m_end - m_begin;
    const int steps = group * tiles;

    zero_skipped_rows(p, b, kvh, n0, m_begin, m_end, tid);
#if RAGGED
    if (tid == 0) {
        s_batch_base[BASE_Q] = batch_base(p.q, b);
        s_batch_base[BASE_DO] = batch_base(p.d_o, b);
        s_batch_base[BASE_STATS] = batch_base(p.stats, b);
    }
    __syncthreads();  // the bases are in place before the first Q / dO tile is copied
#endif

    // The first step's Q, dO, Stats and delta into buffer 0 (after K and V's copies are issued;
    // with V_STAGED once V's fragments have left the buffers).
    auto load_first_tiles = [&]() {
#if TMA_TILES
        if (warp == 0)
            tma_step_tiles(maps, smem_addr(sQ), smem_addr(sdO), tile_bar0, b, kvh * group,
                           m_begin * BLOCK_Q, lane);
        load_stats_rows(sLse, sDelta, p, b, Q_ROWS(L), kvh * group, m_begin * BLOCK_Q, tid);
#else
        load_q_tile(sQ, p, b, Q_ROWS(L), kvh * group, m_begin * BLOCK_Q, tid);
        load_do_tile(sdO, sLse, sDelta, p, b, Q_ROWS(L), kvh * group, m_begin * BLOCK_Q, tid);
#endif
    };
    load_tile<BLOCK_KV, HEAD_DIM_QK, WARPS * 32, true, false>(
        sK, LD_QK, (const io_t*)p.k.ptr + batch_base(p.k, b) + kvh * p.k.sh + n0 * p.k.ss,
        p.k.ss, KV_ROWS(L) - n0, p.hd_qk, tid);
    load_tile<BLOCK_KV, HEAD_DIM_V, WARPS * 32, true, false>(
        sV, LD_V, (const io_t*)p.v.ptr + batch_base(p.v, b) + kvh * p.v.sh + n0 * p.v.ss,
        p.v.ss, KV_ROWS(L) - n0, p.hd_v, tid);
#if !V_STAGED
    if (steps > 0) load_first_tiles();
#endif
#if HAS_BIAS && !PS_IN_V
    if (steps > 0) load_bias_tile(sBias, p, b, kvh * group, m_begin * BLOCK_Q, n0, tid);
#endif

    // This warp's place in each product's warp grid (SPLIT_SDP: in its half's).
#if SPLIT_SDP
    const int pair = warp % SDP_WARPS;           // the S warp and dP warp of one tile
    const bool s_warp = warp < SDP_WARPS;        // computes S (else dP)
#else
    const int pair = warp;
#endif
    const int s_il0 = (pair % WM_SDP) * SDP_M;   // S / dP: first query row (in the Q tile)
    const int s_jl0 = (pair / WM_SDP) * SDP_N;   // S / dP: first KV column (in the KV tile)
    const int k_jl0 = (warp % WM_DKV) * DKV_M;   // dK / dV: first KV row
    const int k_dk0 = (warp / WM_DKV) * DK_N;    // dK: first head-dim column
    const int k_dv0 = (warp / WM_DKV) * DV_N;    // dV: first head-dim column
    const int q_il0 = (warp % WM_DQ) * DQ_M;     // dQ: first query row
    const int q_d0 = (warp / WM_DQ) * DQ_N;      // dQ: first head-dim column

    // This lane's ldmatrix addresses (buffer 0; block (row, col) adds tile_off(ld, row, col)).
    const u32 a_q = addr_a(smem_addr(sQ), LQ, s_il0, 0, lane);          // S: Q rows
    const u32 a_do = addr_a(smem_addr(sdO), LDO, s_il0, 0, lane);       // dP: dO rows
    const u32 at_p = addr_a_t(smem_addr(sP), LD_S, k_jl0, 0, lane);     // dV: P^T
    const u32 at_ds = addr_a_t(smem_addr(sdS), LD_S, k_jl0, 0, lane);   // dK: dS^T
    const u32 bt_do = addr_b_t(smem_addr(sdO), LDO, k_dv0, 0, lane);    // dV: dO
    const u32 bt_q = addr_b_t(smem_addr(sQ), LQ, k_dk0, 0, lane);       // dK: Q
#if DQ_ROUTE != 2
    const u32 a_ds = addr_a(smem_addr(sdS), LD_S, q_il0, 0, lane);      // dQ: dS
    const u32 bt_k = addr_b_t(smem_addr(sK), LD_QK, q_d0, 0, lane);     // dQ: K
#endif
    const u32 b_k = addr_b(smem_addr(sK), LD_QK, s_jl0, 0, lane);       // S: K^T
    const u32 b_v = addr_b(smem_addr(sV), LD_V, s_jl0, 0, lane);        // dP: V^T

    float dk[DKV_M / 16][DK_N / 8][4];
    float dv[DKV_M / 16][DV_N / 8][4];
    zero_acc<DKV_M / 16, DK_N / 8>(dk);
    zero_acc<DKV_M / 16, DV_N / 8>(dv);

    // The warp's K and V fragments of product 1, for every k step (loaded once: K and V stay).
    // SPLIT_SDP: one set, K's in an S warp, V's in a dP warp.
#if SPLIT_SDP
    u32 kf[(HEAD_DIM_QK > HEAD_DIM_V ? HEAD_DIM_QK : HEAD_DIM_V) / 16][SDP_N / 16][4];
#else
    u32 kf[K_REGS ? HEAD_DIM_QK / 16 : 1][SDP_N / 16][4];
    u32 vf[V_REGS ? HEAD_DIM_V / 16 : 1][SDP_N / 16][4];
#endif
#if K_REGS || V_REGS
    cp_async_wait_all();
    __syncthreads();  // K and V have landed
#if SPLIT_SDP
    if (s_warp) load_b_frags<HEAD_DIM_QK / 16, LD_QK>(kf, b_k);
    else load_b_frags<HEAD_DIM_V / 16, LD_V>(kf, b_v);
#else
#if K_REGS
    load_b_frags<HEAD_DIM_QK / 16, LD_QK>(kf, b_k);
#endif
#if V_REGS
    load_b_frags<HEAD_DIM_V / 16, LD_V>(vf, b_v);
#endif
#endif
#if V_STAGED
    __syncthreads();  // every warp has its fragments: the Q and dO buffers take their tiles
    if (steps > 0) load_first_tiles();
#elif V_REGS && HAS_BIAS
    __syncthreads();  // every warp has its V fragments: sP (V's space) takes the first bias tile
    if (steps > 0) load_bias_tile(sBias, p, b, kvh * group, m_begin * BLOCK_Q, n0, tid);
#endif
#endif

    // The step's head of the group and Q tile, counted up (no runtime division per step).
    int hh = 0;
    int m = m_begin;
    for (int step = 0; step < steps; ++step) {
        const int h = kvh * group + hh;
        const int q0 = m * BLOCK_Q;
        // The next step's head and Q tile (prefetched during this one).
        const bool has_next = step + 1 < steps;
        const bool wraps = m + 1 == m_end;
        const int next_hh = wraps ? hh + 1 : hh;
        const int next_m = wraps ? m_begin : m + 1;
        const int next_h = kvh * group + next_hh;
        const int next_q0 = next_m * BLOCK_Q;
        // This step's Q buffer and its byte offset from buffer 0 (DO_AHEAD: the same for dO,
        // Stats and delta, which otherwise use buffer 0 only).
        const int cur = STAGES == 2 ? (step & 1) : 0;
        const int q_off = cur * 2 * kQBuf;
        const int do_off = DO_AHEAD ? cur * 2 * kDoBuf : 0;
        const float* lse = sLse + (DO_AHEAD ? cur * BLOCK_Q : 0);
        const float* delta = sDelta + (DO_AHEAD ? cur * BLOCK_Q : 0);
        const int i0 = q0 + s_il0;  // this warp's first query row and KV column of S / dP
        const int j0 = n0 + s_jl0;
#if DQ_ROUTE == 1
        // Only thread 0 waits and releases: it parks the turn in shared memory rather than hold
        // a register across the step's products (that register spilled the d256 32 x 64 tile;
        // finding the turn later, where the wait is, spilled more).
        if (tid == 0) s_relay_turn = relay_turn(p, L, kv_tile, m);
#endif

        // Every (i, j) of the tile inside the sequences and the band: no per-element mask.
        // A walked tile has q0 < q, so q0 + shift + bound stays within 32 bits (attn.cuh).
        bool interior = q0 + BLOCK_Q <= L.q && n0 + BLOCK_KV <= L.kv;
        if (p.has_right) interior = interior && n0 + BLOCK_KV - 1 <= q0 + L.shift + p.right_bound;
        if (p.has_left) interior = interior && n0 > q0 + BLOCK_Q - 1 + L.shift - p.left_bound;

        cp_async_wait_all();
        __syncthreads();  // this step's Q / dO / Stats / delta have landed; sP / sdS are free
#if TMA_TILES
        // Every warp has finished the previous step: its buffers take the next step's Q and dO
        // (tensor copies), Stats and delta; then this step's Q and dO must have landed.
        if (has_next && warp == 0)
            tma_step_tiles(maps, smem_addr(sQ + (cur ^ 1) * kQBuf),
                           smem_addr(sdO + (cur ^ 1) * kDoBuf), tile_bar0 + 8 * (cur ^ 1), b,
                           next_h, next_q0, lane);
        if (has_next)
            load_stats_rows(sLse + (cur ^ 1) * BLOCK_Q, sDelta + (cur ^ 1) * BLOCK_Q, p, b,
                            Q_ROWS(L), next_h, next_q0, tid);
        // The j-th fill of buffer cur (step 2 j + cur) completes the barrier's phase j.
        mbar_wait(tile_bar0 + 8 * cur, (step >> 1) & 1);
#elif STAGES == 2
        // Every warp has finished the previous step: its Q buffer takes the next step's Q (and
        // with DO_AHEAD its dO buffer the next dO, Stats and delta).
        if (has_next) load_q_tile(sQ + (cur ^ 1) * kQBuf, p, b, Q_ROWS(L), next_h, next_q0, tid);
#if DO_AHEAD
        if (has_next)
            load_do_tile(sdO + (cur ^ 1) * kDoBuf, sLse + (cur ^ 1) * BLOCK_Q,
                         sDelta + (cur ^ 1) * BLOCK_Q, p, b, Q_ROWS(L), next_h, next_q0, tid);
#endif
#endif

#if SPLIT_SDP
        // Product 1, by half: S = Q K^T in an S warp, dP = dO V^T in a dP warp, the same code
        // on different operands (B from the fragments in registers).
        float sdp[SDP_MI][SDP_NJ][4];
        zero_acc<SDP_MI, SDP_NJ>(sdp);
        if (HEAD_DIM_QK == HEAD_DIM_V) {  // one k loop for both halves (d256's code as timed)
            const u32 a_sdp = s_warp ? a_q + q_off : a_do + do_off;
#pragma unroll
            for (int kk = 0; kk < HEAD_DIM_QK / 16; ++kk)
                s_k16<true, LQ, LD_QK>(sdp, a_sdp, 0, kk, kf);
        } else if (s_warp) {
#pragma unroll
            for (int kk = 0; kk < HEAD_DIM_QK / 16; ++kk)
                s_k16<true, LQ, LD_QK>(sdp, a_q + q_off, 0, kk, kf);
        } else {
#pragma unroll
            for (int kk = 0; kk < HEAD_DIM_V / 16; ++kk)
                s_k16<true, LDO, LD_V>(sdp, a_do + do_off, 0, kk, kf);
        }
        if (s_warp) {
            softmax_step<false>(interior, sdp, sdp, lse, delta, sBias, p, L, h, i0, s_il0, j0,
                                s_jl0, g, t, scale_log2);
            float4* slot = p_slots(sPf, pair, lane);
#pragma unroll
            for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
                for (int nj = 0; nj < SDP_NJ; ++nj)
                    slot[(mi * SDP_NJ + nj) * 32] = make_float4(sdp[mi][nj][0], sdp[mi][nj][1],
                                                                sdp[mi][nj][2], sdp[mi][nj][3]);
            }
        }
        // One barrier instruction for both warps of a pair (see pair_sync): the S warp's P is in
        // the exchange.
        pair_sync(pair);
        if (s_warp) {
            store_frag_tile(sP, sdp, s_il0, s_jl0, g, t);
        } else {
            float pv[SDP_MI][SDP_NJ][4];
            const float4* slot = p_slots(sPf, pair, lane);
#pragma unroll
            for (int mi = 0; mi < SDP_MI; ++mi) {
#pragma unroll
                for (int nj = 0; nj < SDP_NJ; ++nj) {
                    const float4 v = slot[(mi * SDP_NJ + nj) * 32];
                    pv[mi][nj][0] = v.x;
                    pv[mi][nj][1] = v.y;
                    pv[mi][nj][2] = v.z;
                    pv[mi][nj][3] = v.w;
                }
            }
            softmax_ds(sdp, pv, delta, s_il0, g);
            store_frag_tile(sdS, sdp, s_il0, s_jl0, g, t);
#if DBIAS_MODE == 2 || DBIAS_MODE == 3
            dbias_from_frags(p, b, h, sdp, i0, j0, g, t);
#endif
        }
        __syncthreads();  // P and dS complete in shared memory; the bias tile is free
#if HAS_BIAS
        if (has_next) load_bias_tile(sBias, p, b, next_h, next_q0, n0, tid);
#endif
        // Product 2: dV += P^T dO and dK += dS^T Q over the Q tile's rows (this step's buffers:
        // the next step's tiles are landing in the others).
        warp_gemm<DKV_M / 16, DV_N / 8, BLOCK_Q / 16, true, true, LD_S, LDO>(dv, at_p,
                                                                              bt_do + do_off);
        warp_gemm<DKV_M / 16, DK_N / 8, BLOCK_Q / 16, true, true, LD_S, LQ>(dk, at_ds,
                                                                               bt_q + q_off);
#else
        // Product 1: S = Q K^T and dP = dO V^T, in one k loop over the common head dim (their
        // mma in turn: independent chains), then the rest of the wider one.
        float s[SDP_MI][SDP_NJ][4];
        float dp[SDP_MI][SDP_NJ][4];
        zero_acc<SDP_MI, SDP_NJ>(s);
        zero_acc<SDP_MI, SDP_NJ>(dp);
        constexpr int kJoint = (HEAD_DIM_QK < HEAD_DIM_V ? HEAD_DIM_QK : HEAD_DIM_V) / 16;
#pragma unroll
        for (int kk = 0; kk < kJoint; ++kk) {
            if constexpr (kFewChains) {
                sdp_k16<K_REGS, V_REGS>(s, dp, a_q + q_off, a_do + do_off, b_k, b_v, kk, kf, vf);
            } else {
                s_k16<K_REGS, LQ, LD_QK>(s, a_q + q_off, b_k, kk, kf);
                s_k16<V_REGS, LDO, LD_V>(dp, a_do + do_off, b_v, kk, vf);
            }
        }
#pragma unroll
        for (int kk = kJoint; kk < HEAD_DIM_QK / 16; ++kk)
            s_k16<K_REGS, LQ, LD_QK>(s, a_q + q_off, b_k, kk, kf);
#pragma unroll
        for (int kk = kJoint; kk < HEAD_DIM_V / 16; ++kk)
            s_k16<V_REGS, LDO, LD_V>(dp, a_do + do_off, b_v, kk, vf);
        // (the ALiBi slope is found after product 1: fewer live registers)
        softmax_step<true>(interior, s, dp, lse, delta, sBias, p, L, h, i0, s_il0, j0, s_jl0, g,
                           t, scale_log2);
        store_frag_tile(sP, s, s_il0, s_jl0, g, t);
        store_frag_tile(sdS, dp, s_il0, s_jl0, g, t);
#if DBIAS_MODE == 2 || DBIAS_MODE == 3
        dbias_from_frags(p, b, h, dp, i0, j0, g, t);
#endif
        __syncthreads();  // P and dS complete in shared memory

        // Product 2: dV += P^T dO, then (once every warp is past dO, Stats and delta, which
        // then take the next step's, unless DO_AHEAD copied them as the step started, and past
        // P, whose space takes the next bias tile) dK += dS^T Q over the Q tile's rows. Unsplit,
        // DO_AHEAD means no bias, so a bias tile always has this barrier to wait for.
        warp_gemm<DKV_M / 16, DV_N / 8, BLOCK_Q / 16, true, true, LD_S, LDO>(dv, at_p,
                                                                              bt_do + do_off);
#if !DO_AHEAD
        __syncthreads();
        if (has_next) load_do_tile(sdO, sLse, sDelta, p, b, Q_ROWS(L), next_h, next_q0, tid);
#endif
#if HAS_BIAS
        if (has_next) load_bias_tile(sBias, p, b, next_h, next_q0, n0, tid);
#endif
        warp_gemm<DKV_M / 16, DK_N / 8, BLOCK_Q / 16, true, true, LD_S, LQ>(dk, at_ds,
                                                                               bt_q + q_off);
#if STAGES == 1
        __syncthreads();  // every warp is past its reads of sQ
        if (has_next) load_q_tile(sQ, p, b, Q_ROWS(L), next_h, next_q0, tid);
#endif
#endif  // SPLIT_SDP
#if DBIAS_MODE == 1
        // dBias = dS (the io-dtype value).
        {
            io_t* gdB = (io_t*)p.dbias.ptr + b * p.dbias.sb + h * p.dbias.sh;
            store_ds_tile(gdB + (i64)q0 * p.dbias.ss + n0, p.dbias.ss, p.sq - q0, p.skv - n0, sdS,
                          tid);
        }
#endif
#if DQ_ROUTE == 2
        // dS to the workspace (every column of the tile: dq_gemm.cu reads them all).
        {
            io_t* gdS = (io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * ds_pitch(p.skv) + n0;
            store_ds_tile(gdS + (i64)q0 * ds_pitch(p.skv), ds_pitch(p.skv), p.sq - q0, BLOCK_KV,
                          sdS, tid);
        }
#else
        // Product 3: dQ partial = dS K for the Q tile, then into the f32 accumulator.
        float dq[DQ_M / 16][DQ_N / 8][4];
        zero_acc<DQ_M / 16, DQ_N / 8>(dq);
        warp_gemm<DQ_M / 16, DQ_N / 8, BLOCK_KV / 16, false, true, LD_S, LD_QK>(dq, a_ds, bt_k);
#if DQ_ROUTE == 1
        unsigned int* gRelay =
            (unsigned int*)p.relay + ((i64)b * p.hq + h) * ((p.sq + BLOCK_Q - 1) / BLOCK_Q);
        if (tid == 0) {
            while (ld_acquire_u32(gRelay + m) != s_relay_turn) {
            }
        }
        __syncthreads();  // our turn: earlier KV tiles' adds to this Q tile are visible
#endif
        {
            float* gdQ = (float*)p.dq_accum + elem_off((u32)b * p.hq + h, (i64)p.sq * p.hd_qk);
            // Each lane adds its fragment as it is, (g, 2t), (g, 2t + 1), (g + 8, 2t),
            // (g + 8, 2t + 1), with one 16-byte reduction: the accumulator's layout
            // (dq_acc_off) keeps a fragment's four floats together in every whole group of 16
            // rows, so a warp's reduction covers 512 consecutive bytes. Rows past Sq and padded
            // head-dim columns (the envelope's past hd_qk) are not stored; a tile with neither
            // (the block-uniform test) adds this way, without a test per reduction, which ptxas
            // compiled to a branch around each one; the others test each fragment's columns,
            // and rows only in a last, shorter group. The untested loop is not in the
            // ordered_dbias relay build (there its second copy of the loop spilled 4 B on
            // sm_120, d128) nor in the biased d256 builds, which it took past 255 registers on
            // sm_120 (4 B spilled) once the tiled addresses came in.
            const bool whole = DBIAS_MODE != 3 && !(HEAD_DIM_QK == 256 && HAS_BIAS) &&
                               q0 + BLOCK_Q <= p.sq && p.hd_qk == HEAD_DIM_QK;
#pragma unroll
            for (int mi = 0; mi < DQ_M / 16; ++mi) {
                const int i = q0 + q_il0 + mi * 16 + g;  // row g of a group, i + 8 its pair
                if (whole) {
                    // Whole groups of 16 rows: block nt of the warp's columns is 128 floats on.
                    float* at = gdQ + dq_acc_at(i, q_d0 + 2 * t, 16, p.hd_qk);
#pragma unroll
                    for (int nt = 0; nt < DQ_N / 8; ++nt)
                        red_add_f32x4(at + nt * 128, dq[mi][nt][0], dq[mi][nt][1],
                                      dq[mi][nt][2], dq[mi][nt][3]);
                } else {
                    // In a whole group (n = 16: rows i and i + 8 both inside Sq) one 16-byte
                    // reduction a fragment, as above; two 8-byte ones there spread a warp's
                    // 256 B over 512 and took the biased d256 rows 1.14-1.29 of the time of
                    // 8 x 8 tiles; this form takes 0.76-0.86 of theirs (2026-12-07, H100 calls
                    // N2 and T1). In a last, shorter group (row-major blocks)
                    // two 8-byte reductions, row i + 8's pair 64 floats after row i's, each row
                    // tested. A group's blocks are 8 n floats apart, a stride the loop adds
                    // rather than an offset per block.
                    const int n = dq_acc_group(i, p.sq);
                    float* row = gdQ + dq_acc_at(i, q_d0 + 2 * t, n, p.hd_qk);
                    float* row8 = row + 64;
#pragma unroll
                    for (int nt = 0; nt < DQ_N / 8; ++nt) {
                        if (q_d0 + nt * 8 < p.hd_qk) {
                            if (n == 16) {
                                red_add_f32x4(row, dq[mi][nt][0], dq[mi][nt][1], dq[mi][nt][2],
                                              dq[mi][nt][3]);
                            } else {
                                if (i < p.sq) red_add_f32x2(row, dq[mi][nt][0], dq[mi][nt][1]);
                                if (i + 8 < p.sq) red_add_f32x2(row8, dq[mi][nt][2], dq[mi][nt][3]);
                            }
                        }
                        row += 8 * n;
                        row8 += 8 * n;
                    }
                }
            }
        }
#if DQ_ROUTE == 1
        fence_gpu();  // each thread's adds are performed before the baton moves
        __syncthreads();
        if (tid == 0) st_release_u32(gRelay + m, s_relay_turn + 1);
#endif
#endif
        hh = next_hh;
        m = next_m;
    }

    // Epilogue: dK (scaled) and dV in the io dtype, rows past Skv (or past a ragged dK / dV's
    // real tokens) skipped. A tile no query row reaches stores zeros.
    io_t* gdK = (io_t*)p.dk.ptr + batch_base(p.dk, b) + kvh * p.dk.sh;
    io_t* gdV = (io_t*)p.dv.ptr + batch_base(p.dv, b) + kvh * p.dv.sh;
    const int dk_rows = rows_held(p.dk, L.kv, p.skv);
    const int dv_rows = rows_held(p.dv, L.kv, p.skv);
#pragma unroll
    for (int mi = 0; mi < DKV_M / 16; ++mi) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int j = n0 + k_jl0 + mi * 16 + g + 8 * r;
#pragma unroll
            for (int nt = 0; nt < DK_N / 8; ++nt) {
                const int d = k_dk0 + nt * 8;
                if (d < p.hd_qk && j < dk_rows)
                    *(u32*)(gdK + (i64)j * p.dk.ss + d + 2 * t) =
                        pack_io2(dk[mi][nt][2 * r] * p.scale, dk[mi][nt][2 * r + 1] * p.scale);
            }
#pragma unroll
            for (int nt = 0; nt < DV_N / 8; ++nt) {
                const int d = k_dv0 + nt * 8;
                if (d < p.hd_v && j < dv_rows)
                    *(u32*)(gdV + (i64)j * p.dv.ss + d + 2 * t) =
                        pack_io2(dv[mi][nt][2 * r], dv[mi][nt][2 * r + 1]);
            }
        }
    }
}
