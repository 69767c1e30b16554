// convert.cu: last kernel of the SDPA backward's atomic and relay routes (dQ) and of a broadcast
// bias's dBias.
//   dst[a][c][i][j] = scale * sum over k < parts of src[k][a][c][i][j], f32 -> io dtype
// src is `parts` compact f32 arrays [D0][D1][D2][D3], part_stride elements apart, summed in
// ascending k (a fixed order: bitwise reproducible), each (D0, D1) plane row-major or, with
// p.tiled (the dQ accumulator), in attn.cuh's dq_acc_off layout (in a whole group of 16 rows
// an 8-column block holds rows i and i + 8 interleaved in 16 consecutive floats, so one step
// converts both; in a last, shorter group a row's 8 columns are 8 consecutive floats); dst is
// the user's tensor with strides (last dim contiguous). Used for dQ (src = dQ accum, parts 1,
// scale = attn scale, dims B, Hq, Sq, Dqk),
// for broadcast dBias (src = dBias accum, parts 1, scale 1, dims bias_b, bias_h, Sq, Skv) and
// for the ordered_dbias route's dBias (src = the partials, one part per (batch, head) the bias
// broadcasts over).
//
// Grid (min(ceil(D2 * D3 / (RIME_CONVERT_VEC * RIME_CONVERT_THREADS)), the host's cap), D1,
// D0), RIME_CONVERT_THREADS threads; each thread converts elements of its (d0, d1) plane in
// grid-stride steps, so every element of dst is written whatever the plane's size. Where D3 is
// a multiple of RIME_CONVERT_VEC (8) and dst's row start and stride allow it (dQ: the head dim
// is), a step is 8 consecutive elements of a row: two 16-byte loads per part and one 16-byte
// store (one element per thread, with a 64-bit division per thread, ran at 0.9 TB/s on an
// H100). Otherwise a step is one element. No shared memory. ConvertParams comes from the
// generated kernel ABI.
//
// A ragged destination (p.ragged != 0: dQ of a THD layout) starts batch a at its validated
// offset and has rows i < its sequence length only; the rows past it are not written.
//
// Defines: IS_BF16.

// acc = the sum over parts of the N consecutive floats (N a multiple of 4, 16-byte aligned) at s,
// in ascending part order.
template <int N>
__device__ __forceinline__ void sum_parts(const ConvertParams& p, const float* s, float* acc) {
    u32 w[N];
#pragma unroll
    for (int q = 0; q < N / 4; ++q) ld_global_nc_v4(s + 4 * q, w + 4 * q);
#pragma unroll
    for (int e = 0; e < N; ++e) acc[e] = __uint_as_float(w[e]);
    for (int k = 1; k < p.parts; ++k) {
#pragma unroll
        for (int q = 0; q < N / 4; ++q) ld_global_nc_v4(s + k * p.part_stride + 4 * q, w + 4 * q);
#pragma unroll
        for (int e = 0; e < N; ++e) acc[e] += __uint_as_float(w[e]);
    }
}

// One 16-byte store of 8 consecutive elements of a dst row: scale, convert.
__device__ __forceinline__ void store_row_vec(const ConvertParams& p, io_t* d, const float* acc) {
    st_global_v4(d, pack_io2(acc[0] * p.scale, acc[1] * p.scale),
                 pack_io2(acc[2] * p.scale, acc[3] * p.scale),
                 pack_io2(acc[4] * p.scale, acc[5] * p.scale),
                 pack_io2(acc[6] * p.scale, acc[7] * p.scale));
}

// Rows i and i + 8 (i % 16 < 8) of 8-column block j of a whole group of the dQ accumulator:
// 16 consecutive floats (dq_acc_off), 4 (4 g + t) + {0, 1} row i's columns 2t, 2t + 1 and
// + {2, 3} row i + 8's. Row i + 8 is stored only below `rows` (a ragged dQ's length).
__device__ __forceinline__ void convert_row_pair(const ConvertParams& p, const float* src,
                                                 io_t* dst, int i, int j, i64 rows) {
    float acc[16];
    sum_parts<16>(p, src + dq_acc_at(i, j * RIME_CONVERT_VEC, 16, p.d3), acc);
    float lo[8], hi[8];
#pragma unroll
    for (int t = 0; t < 4; ++t) {
        lo[2 * t] = acc[4 * t];
        lo[2 * t + 1] = acc[4 * t + 1];
        hi[2 * t] = acc[4 * t + 2];
        hi[2 * t + 1] = acc[4 * t + 3];
    }
    store_row_vec(p, dst + (i64)i * p.s2 + j * RIME_CONVERT_VEC, lo);
    if (i + 8 < rows) store_row_vec(p, dst + (i64)(i + 8) * p.s2 + j * RIME_CONVERT_VEC, hi);
}

extern "C" __global__ void __launch_bounds__(RIME_CONVERT_THREADS)
rime_convert(const ConvertParams p) {
    pdl_enter();  // before any global access (common.cuh)
    const int c = blockIdx.y;
    const int a = blockIdx.z;
    const float* src = (const float*)p.src + ((i64)a * p.d1 + c) * p.plane;
    const i64 base = p.ragged ? ((const i64*)p.ragged)[a] : (i64)a * p.s0;
    io_t* dst = (io_t*)p.dst + base + c * p.s1;
    // A ragged destination has rows for its sequence's real tokens only (clamp_len: attn.cuh).
    const int plane_rows = (int)(p.plane / p.d3);  // <= Sq, below 2^31 (rule SMX013)
    const i64 rows = p.ragged ? clamp_len(p.rows, a, plane_rows) : plane_rows;
    const i64 end = rows * p.d3;
    const i64 first = (i64)blockIdx.x * RIME_CONVERT_THREADS + threadIdx.x;
    const i64 step = (i64)gridDim.x * RIME_CONVERT_THREADS;
    // With D3 a multiple of 8, plane and part_stride are too, so every part's rows start where
    // this plane's do: one alignment test covers src (else one element a step).
    const bool vec = p.d3 % RIME_CONVERT_VEC == 0 && (((u64)dst | (u64)src) & 15) == 0 &&
                     p.s2 % RIME_CONVERT_VEC == 0;
    if (vec) {
        // Vector v is (row i, columns [j, j + 8)); one division per thread, as below.
        const int row_vecs = p.d3 / RIME_CONVERT_VEC;
        const i64 vecs = rows * row_vecs;
        const i64 step_i = step / row_vecs;
        const int step_j = (int)(step - step_i * row_vecs);
        i64 i = first / row_vecs;
        int j = (int)(first - i * row_vecs);
        for (i64 v = first; v < vecs; v += step) {
            // In a whole group of the dQ accumulator (dq_acc_off) rows i and i + 8 of a block
            // interleave in 16 consecutive floats: row i's step takes both, row i + 8's none.
            const int group = p.tiled ? dq_acc_group((int)i, plane_rows) : 0;
            if (group == 16) {
                if ((i & 8) == 0) convert_row_pair(p, src, dst, (int)i, j, rows);
            } else {
                float acc[8];
                sum_parts<RIME_CONVERT_VEC>(
                    p,
                    src + (p.tiled ? dq_acc_at((int)i, j * RIME_CONVERT_VEC, group, p.d3)
                                   : i * p.d3 + j * RIME_CONVERT_VEC),
                    acc);
                store_row_vec(p, dst + i * p.s2 + j * RIME_CONVERT_VEC, acc);
            }
            i += step_i;
            j += step_j;
            if (j >= row_vecs) {
                j -= row_vecs;
                ++i;
            }
        }
        return;
    }
    // Element e is (row i, column j) of the plane; one division up front, then each grid-stride
    // step advances (i, j) by the step's quotient and remainder.
    const i64 step_i = step / p.d3;
    const int step_j = (int)(step - step_i * p.d3);
    i64 e = first;
    i64 i = e / p.d3;
    int j = (int)(e - i * p.d3);
    for (; e < end; e += step) {
        const i64 at = p.tiled ? dq_acc_off((int)i, j, plane_rows, p.d3) : e;
        float acc = src[at];
        for (int k = 1; k < p.parts; ++k) acc += src[k * p.part_stride + at];
        dst[i * p.s2 + j] = f32_to_io(acc * p.scale);
        i += step_i;
        j += step_j;
        if (j >= p.d3) {
            j -= p.d3;
            ++i;
        }
    }
}
