// dsink_reduce.cu: last kernel of an SDPA backward that asks for dSink:
//   dSink[h] = sum over b < B, i < Sq of dsink_rows[b][h][i]   (f32 -> f32)
// the per-row terms -exp(Sink[h] - Stats[b,h,i]) * delta[b][h][i] that bwd_preprocess.cu wrote
// (0 for rows past the padding mask's length and rows that attended to nothing). Written to the
// user's dSink at its head stride.
//
// One block per query head (grid (Hq, 1, 1)), RIME_CONVERT_THREADS threads. Thread t adds the
// rows t, t + T, t + 2T, ... (T threads) of each batch, b ascending; then lanes combine by xor
// shuffles (16, 8, 4, 2, 1) and thread 0 adds the warps' sums in ascending order. Which thread
// adds which term, and in what order, depends only on the sizes, never on timing: bitwise
// reproducible, no atomics. No tiles; static shared memory: one float per warp (32 B).
//
// Defines: IS_BF16 (unused here; common.cuh requires it).

#define DSINK_WARPS (RIME_CONVERT_THREADS / 32)
static_assert(RIME_CONVERT_THREADS % 32 == 0, "whole warps");

extern "C" __global__ void __launch_bounds__(RIME_CONVERT_THREADS)
rime_dsink_reduce(const AttnParams p) {
    pdl_enter();  // before any global access (common.cuh)
    __shared__ float warp_sums[DSINK_WARPS];
    const int h = blockIdx.x;
    const float* rows = (const float*)p.dsink_rows;
    float acc = 0.f;
    for (int b = 0; b < p.batch; ++b) {
        const float* r = rows + ((i64)b * p.hq + h) * p.sq;
        for (int i = threadIdx.x; i < p.sq; i += RIME_CONVERT_THREADS) acc += r[i];
    }
#pragma unroll
    for (int m = 16; m >= 1; m >>= 1) acc += rime_shfl_xor(acc, m);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.f;
        for (int w = 0; w < DSINK_WARPS; ++w) total += warp_sums[w];
        ((float*)p.dsink.ptr)[h * p.dsink.sh] = total;
    }
}
