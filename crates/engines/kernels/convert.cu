// convert.cu: last kernel of the SDPA backward's atomic route.
//   dst[a][c][i][j] = scale * src[a][c][i][j], f32 -> io dtype (bf16 / f16)
// src is a compact f32 accumulator [D0][D1][D2][D3]; dst is the user's tensor with strides
// (last dim contiguous). Used for dQ (src = dQ accum, scale = attn scale, dims B, Hq, Sq, Dqk) and
// for broadcast dBias (src = dBias accum, scale = 1, dims bias_b, bias_h, Sq, Skv).
//
// Grid (ceil(D2 * D3 / 256), D1, D0), 256 threads, one element per thread; every element of
// dst is written. No shared memory.
//
// Defines: IS_BF16.

struct ConvertParams {
    u64 src;
    u64 dst;
    i64 s0, s1, s2;  // dst strides of dims 0..2 (elements)
    int d1, d2, d3;
    float scale;
};

extern "C" __global__ void __launch_bounds__(256) rime_convert(const ConvertParams p) {
    const i64 plane = (i64)p.d2 * p.d3;
    const i64 e = (i64)blockIdx.x * 256 + threadIdx.x;
    if (e >= plane) return;
    const int i = (int)(e / p.d3);
    const int j = (int)(e - (i64)i * p.d3);
    const int c = blockIdx.y;
    const int a = blockIdx.z;
    const float* src = (const float*)p.src + ((i64)a * p.d1 + c) * plane;
    io_t* dst = (io_t*)p.dst + a * p.s0 + c * p.s1 + i * p.s2 + j;
    *dst = f32_to_io(src[e] * p.scale);
}
