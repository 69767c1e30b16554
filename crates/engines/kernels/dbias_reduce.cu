// dbias_reduce.cu: last kernel of the SDPA backward's two_kernel route when dBias sums over a
// broadcast bias (batch and / or heads):
//   dBias[a][c][i][j] = sum over the (b, h) that bias slice (a, c) serves of dS[b][h][i][j]
// read from the main kernel's dS workspace (io dtype, rows ds_pitch(Skv) apart, zeros where
// masked or skipped; the dQ GEMM reads the same tiles), summed in f32 in a fixed order (b
// outer, h inner, both ascending): bitwise reproducible, no atomics and no extra stores in the
// main kernel. Written in the io dtype to the user's dBias (its strides).
//
// Grid (min(ceil(Sq * Skv / RIME_CONVERT_THREADS), the host's cap), bias_h, bias_b),
// RIME_CONVERT_THREADS threads; each thread walks its (a, c) plane in grid-stride steps, so
// every element of dBias is written whatever the plane's size; neighbouring threads read
// neighbouring columns of a dS row. No shared memory. AttnParams comes from the generated ABI.
//
// Defines: IS_BF16.

extern "C" __global__ void __launch_bounds__(RIME_CONVERT_THREADS)
rime_dbias_reduce(const AttnParams p) {
    const int c = blockIdx.y;
    const int a = blockIdx.z;
    // The (b, h) this slice serves: every batch (head) where the bias broadcasts over it.
    const int b_begin = p.bias_b == 1 ? 0 : a;
    const int b_end = p.bias_b == 1 ? p.batch : a + 1;
    const int h_begin = p.bias_h == 1 ? 0 : c;
    const int h_end = p.bias_h == 1 ? p.hq : c + 1;
    const i64 pitch = ds_pitch(p.skv);
    const i64 plane = (i64)p.sq * p.skv;
    const io_t* ds = (const io_t*)p.ds;
    io_t* dst = (io_t*)p.dbias.ptr + a * p.dbias.sb + c * p.dbias.sh;
    const i64 step = (i64)gridDim.x * RIME_CONVERT_THREADS;
    for (i64 e = (i64)blockIdx.x * RIME_CONVERT_THREADS + threadIdx.x; e < plane; e += step) {
        const i64 i = e / p.skv;
        const i64 j = e - i * p.skv;
        float acc = 0.f;
        for (int b = b_begin; b < b_end; ++b)
            for (int h = h_begin; h < h_end; ++h)
                acc += io_to_f32(ds[(((i64)b * p.hq + h) * p.sq + i) * pitch + j]);
        dst[i * p.dbias.ss + j] = f32_to_io(acc);
    }
}
