// convert.cu: last kernel of the SDPA backward's atomic and relay routes (dQ) and of a broadcast
// bias's dBias.
//   dst[a][c][i][j] = scale * sum over k < parts of src[k][a][c][i][j], f32 -> io dtype
// src is `parts` compact f32 arrays [D0][D1][D2][D3], part_stride elements apart, summed in
// ascending k (a fixed order: bitwise reproducible); dst is the user's tensor with strides (last
// dim contiguous). Used for dQ (src = dQ accum, parts 1, scale = attn scale, dims B, Hq, Sq, Dqk),
// for broadcast dBias (src = dBias accum, parts 1, scale 1, dims bias_b, bias_h, Sq, Skv) and
// for the ordered_dbias route's dBias (src = the partials, one part per (batch, head) the bias
// broadcasts over).
//
// Grid (min(ceil(D2 * D3 / RIME_CONVERT_THREADS), the host's cap), D1, D0), RIME_CONVERT_THREADS
// threads; each thread converts elements of its (d0, d1) plane in grid-stride steps, so every
// element of dst is written whatever the plane's size. No shared memory. ConvertParams comes
// from the generated kernel ABI.
//
// A ragged destination (p.ragged != 0: dQ of a THD layout) starts batch a at its validated
// offset and has rows i < its sequence length only; the rows past it are not written.
//
// Defines: IS_BF16.

extern "C" __global__ void __launch_bounds__(RIME_CONVERT_THREADS)
rime_convert(const ConvertParams p) {
    const int c = blockIdx.y;
    const int a = blockIdx.z;
    const float* src = (const float*)p.src + ((i64)a * p.d1 + c) * p.plane;
    const i64 base = p.ragged ? ((const i64*)p.ragged)[a] : (i64)a * p.s0;
    io_t* dst = (io_t*)p.dst + base + c * p.s1;
    // A ragged destination has rows for its sequence's real tokens only (clamp_len: attn.cuh).
    const i64 rows = p.ragged ? clamp_len(p.rows, a, (int)(p.plane / p.d3)) : p.plane / p.d3;
    const i64 end = rows * p.d3;
    // Element e is (row i, column j) of the plane; one division up front, then each grid-stride
    // step advances (i, j) by the step's quotient and remainder.
    const i64 step = (i64)gridDim.x * RIME_CONVERT_THREADS;
    const i64 step_i = step / p.d3;
    const int step_j = (int)(step - step_i * p.d3);
    i64 e = (i64)blockIdx.x * RIME_CONVERT_THREADS + threadIdx.x;
    i64 i = e / p.d3;
    int j = (int)(e - i * p.d3);
    for (; e < end; e += step) {
        float acc = src[e];
        for (int k = 1; k < p.parts; ++k) acc += src[k * p.part_stride + e];
        dst[i * p.s2 + j] = f32_to_io(acc * p.scale);
        i += step_i;
        j += step_j;
        if (j >= p.d3) {
            j -= p.d3;
            ++i;
        }
    }
}
