// dq_gemm.cu: second kernel of the SDPA backward's two_kernel route (deterministic, no atomics).
//   dQ[b,h,i,:] = scale * sum_j dS[b,h,i,j] K[b,g,j,:]       (g = h / (Hq / Hk))
// dS comes from bwd_main.cu (DQ_ROUTE 2) in the io dtype, rows of round_up(Skv, 128) columns,
// with zeros wherever the main kernel masked or skipped. Each dQ element is written once.
//
// One block per (Q tile of BLOCK_Q rows, query head, batch); WARPS warps, each owning 16 rows
// (BLOCK_Q = 16 * WARPS) and the whole head dim in f32 registers. The block walks Skv in chunks
// of BLOCK_KV columns: dS chunk and K chunk into shared memory through cp.async (rows past Sq or
// Skv zero-filled), then mma.sync m16n8k16 with dS from ldmatrix and K through transposed
// ldmatrix.
//
// Shared memory (dynamic, 16-bit, rows padded by 8 elements):
//   dS BLOCK_Q x (BLOCK_KV + 8), K BLOCK_KV x (HEAD_DIM_QK + 8):
//   2 * (BLOCK_Q * (BLOCK_KV + 8) + BLOCK_KV * (HEAD_DIM_QK + 8)) bytes, e.g. 128 x 64 with
//   DQK 192: 44,032 B (cap 101,376 B).
//
// Defines: HEAD_DIM_QK, BLOCK_Q, BLOCK_KV, WARPS, IS_BF16, SMEM_BYTES.

#define LD_DS (BLOCK_KV + 8)
#define LD_K (HEAD_DIM_QK + 8)
#define DQG_SMEM (2 * (BLOCK_Q * LD_DS + BLOCK_KV * LD_K))

static_assert(BLOCK_Q == 16 * WARPS, "one warp per 16 query rows");
static_assert(BLOCK_KV % 16 == 0 && 128 % BLOCK_KV == 0 && HEAD_DIM_QK % 16 == 0, "tile shapes");
static_assert(DQG_SMEM == SMEM_BYTES, "shared-memory formula disagrees with the engine's table");

extern "C" __global__ void __launch_bounds__(WARPS * 32, 1)
rime_dq_gemm(const AttnParams p) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    io_t* sdS = (io_t*)smem_raw;
    io_t* sK = sdS + BLOCK_Q * LD_DS;

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int q0 = blockIdx.x * BLOCK_Q;
    const int kvh = h / (p.hq / p.hk);
    const i64 pitch = ds_pitch(p.skv);

    const io_t* gdS = (const io_t*)p.ds + ((i64)b * p.hq + h) * p.sq * pitch + q0 * pitch;
    const io_t* gK = (const io_t*)p.k.ptr + batch_base(p.k, b) + kvh * p.k.sh;
    const SeqLens L = seq_lens(p, b);
    const int k_rows = rows_held(p.k, L.kv, p.skv);

    float acc[HEAD_DIM_QK / 8][4];
#pragma unroll
    for (int i = 0; i < HEAD_DIM_QK / 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;

    // The main kernel wrote every column of its KV tiles, i.e. up to round_up(Skv, its
    // BLOCK_KV), which can end before this chunk does (d256: 32-column KV tiles): columns from
    // round_up(Skv, 8) on are zero-filled here, never read (the workspace is not cleared).
    const int chunks = (p.skv + BLOCK_KV - 1) / BLOCK_KV;
    for (int c = 0; c < chunks; ++c) {
        const int j0 = c * BLOCK_KV;
        __syncthreads();
        load_tile<BLOCK_Q, BLOCK_KV, WARPS * 32, false>(sdS, LD_DS, gdS + j0, pitch, p.sq - q0,
                                                        (p.skv - j0 + 7) / 8 * 8, tid);
        load_tile<BLOCK_KV, HEAD_DIM_QK, WARPS * 32, false>(sK, LD_K, gK + j0 * p.k.ss, p.k.ss,
                                                            k_rows - j0, p.hd_qk, tid);
        cp_async_wait_all();
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) {
            u32 a[4];
            ldsm_x4(a, addr_a(smem_addr(sdS), LD_DS, warp * 16, kk * 16, lane));
#pragma unroll
            for (int np = 0; np < HEAD_DIM_QK / 16; ++np) {
                u32 bf[4];
                ldsm_x4_t(bf, addr_b_t(smem_addr(sK), LD_K, np * 16, kk * 16, lane));
                mma_16816(acc[2 * np], a, bf[0], bf[1]);
                mma_16816(acc[2 * np + 1], a, bf[2], bf[3]);
            }
        }
    }

    io_t* gdQ = (io_t*)p.dq.ptr + batch_base(p.dq, b) + h * p.dq.sh;
    const int dq_rows = rows_held(p.dq, L.q, p.sq);  // a ragged dQ: the real tokens only
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int i = q0 + warp * 16 + g + r * 8;
        if (i < dq_rows) {
#pragma unroll
            for (int dt = 0; dt < HEAD_DIM_QK / 8; ++dt)
                if (dt * 8 < p.hd_qk)
                *(u32*)(gdQ + (i64)i * p.dq.ss + dt * 8 + 2 * t) =
                    pack_io2(acc[dt][2 * r] * p.scale, acc[dt][2 * r + 1] * p.scale);
        }
    }
}
