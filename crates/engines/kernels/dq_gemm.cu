// dq_gemm.cu: second kernel of the SDPA backward's two_kernel route (deterministic, no atomics).
//   dQ[b,h,i,:] = scale * sum_j dS[b,h,i,j] K[b,g,j,:]       (g = h / (Hq / Hk))
// dS comes from bwd_main.cu (DQ_ROUTE 2) in the io dtype, rows of round_up(Skv, 128) columns,
// with zeros wherever the main kernel masked, and on the rows it skipped within the tiles of
// this kernel that read its KV tile (RIME_DQ_ROWS rows each). Each dQ element is written once.
//
// One block per (Q tile of BLOCK_Q rows, query head, batch; the last Q tile first, which under
// a causal band is the heaviest), WARPS warps in a grid of
// BLOCK_Q / 32 warps along the rows by the rest along the head dim: each warp owns a 32-row x
// (HEAD_DIM_QK / (WARPS / (BLOCK_Q / 32))) column tile of dQ in f32 registers, so every A (dS)
// fragment it loads serves all its columns and every B (K) fragment both of its 16-row blocks.
// The block walks the KV columns the mask band leaves its rows (kv_range_of: dS is zero
// elsewhere, so the chunks outside add nothing) in chunks of BLOCK_KV columns through a
// STAGES-deep cp.async ring of dS and K chunks (dS rows past Sq and K rows past the batch's
// key length zero-filled): chunk c + STAGES - 1 is copied while chunk c is multiplied
// (mma.sync m16n8k16, dS by ldmatrix, K by transposed ldmatrix), one block barrier per chunk.
//
// Shared memory (dynamic, 16-bit, rows padded by 8 elements), per stage:
//   dS BLOCK_Q x (BLOCK_KV + 8), K BLOCK_KV x (HEAD_DIM_QK + 8):
//   2 * STAGES * (BLOCK_Q * (BLOCK_KV + 8) + BLOCK_KV * (HEAD_DIM_QK + 8)) bytes; the table's
//   entries (crates/analyzer/src/sm120/kernels.rs, smem_dq_gemm) run from 71,680 B (d128,
//   128 x 64, 2 stages) to 88,064 B (d192, 128 x 64, 2 stages) (cap 101,376 B).
//
// Defines: HEAD_DIM_QK, BLOCK_Q, BLOCK_KV, WARPS, STAGES, IS_BF16, SMEM_BYTES.

#define LD_DS (BLOCK_KV + 8)
#define LD_K (HEAD_DIM_QK + 8)
#define STAGE_ELEMS (BLOCK_Q * LD_DS + BLOCK_KV * LD_K)
#define DQG_SMEM (2 * STAGES * STAGE_ELEMS)
#define WM (BLOCK_Q / 32)                      // warps along the Q rows
#define WARP_COLS (HEAD_DIM_QK / (WARPS / WM))  // head-dim columns per warp

static_assert(BLOCK_Q % 32 == 0 && WARPS % WM == 0, "32 query rows per warp");
static_assert(WARP_COLS % 16 == 0 && WARP_COLS * (WARPS / WM) == HEAD_DIM_QK, "warp columns");
static_assert(BLOCK_KV % 16 == 0 && 128 % BLOCK_KV == 0 && HEAD_DIM_QK % 16 == 0, "tile shapes");
static_assert(STAGES >= 2, "a ring of at least two chunks");
static_assert(BLOCK_Q == RIME_DQ_ROWS, "bwd_main.cu zeroes the skipped dS rows of these tiles");
static_assert(DQG_SMEM == SMEM_BYTES, "shared-memory formula disagrees with the engine's table");

extern "C" __global__ void __launch_bounds__(WARPS * 32, 1)
rime_dq_gemm(const AttnParams p) {
    pdl_enter();  // before any global access (common.cuh)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    io_t* smem = (io_t*)smem_raw;  // stage s: dS at s * STAGE_ELEMS, K after it

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BLOCK_Q;
    const int kvh = h / (p.hq / p.hk);
    const i64 pitch = ds_pitch(p.skv);
    const int row0 = (warp % WM) * 32;          // this warp's first row in the Q tile
    const int col0 = (warp / WM) * WARP_COLS;   // and first head-dim column

    const io_t* gdS = (const io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * pitch + q0 * pitch;
    const io_t* gK = (const io_t*)p.k.ptr + batch_base(p.k, b) + kvh * p.k.sh;
    const SeqLens L = seq_lens(p, b);

    // The main kernel wrote every column of its KV tiles, i.e. up to round_up(Skv, its
    // BLOCK_KV), which can end before this chunk does: columns from round_up(Skv, 8) on are
    // zero-filled here, never read (the workspace is not cleared).
    int j_begin, j_end;
    kv_range_of(p, L, q0, BLOCK_Q, j_begin, j_end);
    int c_begin, c_end;
    tiles_of<BLOCK_KV>(j_begin, j_end, c_begin, c_end);
    const int chunks = c_end - c_begin;
    // Chunk c of the walk (stage c % STAGES) is KV chunk c_begin + c.
    auto load_chunk = [&](int c) {
        io_t* sdS = smem + (c % STAGES) * STAGE_ELEMS;
        const int j0 = (c_begin + c) * BLOCK_KV;
        load_tile<BLOCK_Q, BLOCK_KV, WARPS * 32, false, true>(
            sdS, LD_DS, gdS + j0, pitch, p.sq - q0, (p.skv - j0 + 7) / 8 * 8, tid);
        load_tile<BLOCK_KV, HEAD_DIM_QK, WARPS * 32, false, true>(
            sdS + BLOCK_Q * LD_DS, LD_K, gK + j0 * p.k.ss, p.k.ss, L.kv - j0, p.hd_qk, tid);
    };

    float acc[2][WARP_COLS / 8][4];
    zero_acc<2, WARP_COLS / 8>(acc);
    // Lane addresses in stage 0; stage s adds s * STAGE_ELEMS elements.
    const u32 a_lane = addr_a(smem_addr(smem), LD_DS, row0, 0, lane);
    const u32 b_lane = addr_b_t(smem_addr(smem + BLOCK_Q * LD_DS), LD_K, col0, 0, lane);

#pragma unroll
    for (int c = 0; c < STAGES - 1; ++c) {
        if (c < chunks) load_chunk(c);
        cp_async_commit();
    }
    for (int c = 0; c < chunks; ++c) {
        cp_async_wait_group<STAGES - 2>();  // this thread's copies of chunk c have landed
        __syncthreads();  // everyone's have, and every warp is past chunk c - 1's stage
        if (c + STAGES - 1 < chunks) load_chunk(c + STAGES - 1);  // into chunk c - 1's stage
        cp_async_commit();
        const u32 off = 2 * (c % STAGES) * STAGE_ELEMS;
        warp_gemm<2, WARP_COLS / 8, BLOCK_KV / 16, false, true, LD_DS, LD_K>(acc, a_lane + off,
                                                                            b_lane + off);
    }

    io_t* gdQ = (io_t*)p.dq.ptr + batch_base(p.dq, b) + h * p.dq.sh;
    const int dq_rows = rows_held(p.dq, L.q, p.sq);  // a ragged dQ: the real tokens only
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int i = q0 + row0 + mi * 16 + g + r * 8;
            if (i >= dq_rows) continue;
#pragma unroll
            for (int nj = 0; nj < WARP_COLS / 8; ++nj) {
                const int d = col0 + nj * 8;
                if (d < p.hd_qk)
                    *(u32*)(gdQ + (i64)i * p.dq.ss + d + 2 * t) =
                        pack_io2(acc[mi][nj][2 * r] * p.scale, acc[mi][nj][2 * r + 1] * p.scale);
            }
        }
    }
}
