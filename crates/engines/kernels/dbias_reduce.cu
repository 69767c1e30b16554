// dbias_reduce.cu: last kernel of the SDPA backward's two_kernel route when dBias sums over a
// broadcast bias (batch and / or heads):
//   dBias[a][c][i][j] = sum over the (b, h) that bias slice (a, c) serves of dS[b][h][i][j]
// read from the main kernel's dS workspace (io dtype, rows ds_pitch(Skv) apart, zeros where
// masked; the dQ GEMM reads the same tiles), summed in f32 in a fixed order (b outer, h inner,
// both ascending): bitwise reproducible, no atomics and no extra stores in the main kernel.
// Only the rows the main kernel walked for the chunk's KV tile are read (walked_rows_of, with
// its tiles MAIN_BLOCK_Q x MAIN_BLOCK_KV): the band's other rows hold no kept element, so their
// dS is 0, and the main kernel does not store it (under a causal mask about half of the
// workspace). Skipping a zero leaves the sum bitwise as it was (it starts at +0 and never
// becomes -0). Written in the io dtype to the user's dBias (its strides).
//
// Grid (min(Sq, the host's cap), bias_h, bias_b), RIME_CONVERT_THREADS threads. A block walks
// rows i of its (a, c) plane in grid-stride steps; its threads take 8-column chunks of the row
// (16-byte loads: the workspace's rows are 16-byte aligned and padded with zeros to a multiple
// of RIME_DS_PITCH columns, so a chunk never leaves its row), neighbouring threads neighbouring
// chunks. Every element of dBias is written whatever the plane's size, and no thread divides.
// Each chunk is stored as one 16-byte store where dBias's base, row stride and the chunk allow,
// else element by element up to Skv. No shared memory. AttnParams comes from the generated ABI.
//
// Defines: IS_BF16; MAIN_BLOCK_Q, MAIN_BLOCK_KV (the main kernel's tiles, from its table entry).

static_assert(MAIN_BLOCK_KV % 8 == 0, "an 8-column chunk lies in one KV tile");

extern "C" __global__ void __launch_bounds__(RIME_CONVERT_THREADS)
rime_dbias_reduce(const AttnParams p) {
    pdl_enter();  // before any global access (common.cuh)
    const int c = blockIdx.y;
    const int a = blockIdx.z;
    // The (b, h) this slice serves: every batch (head) where the bias broadcasts over it.
    const int b_begin = p.bias_b == 1 ? 0 : a;
    const int b_end = p.bias_b == 1 ? p.batch : a + 1;
    const int h_begin = p.bias_h == 1 ? 0 : c;
    const int h_end = p.bias_h == 1 ? p.hq : c + 1;
    const i64 pitch = ds_pitch(p.skv);
    const i64 head_plane = (i64)p.sq * pitch;  // elements between heads of the workspace
    const io_t* ds = (const io_t*)p.ds;
    io_t* dst = (io_t*)p.dbias.ptr + a * p.dbias.sb + c * p.dbias.sh;
    const bool vec = (p.dbias.ptr & 15) == 0 && ((p.dbias.sb | p.dbias.sh | p.dbias.ss) & 7) == 0;
    // Without a padding mask every batch has the same band, so the walked rows are found once
    // per chunk; with one, once per batch (its lengths move the band).
    const bool per_batch_band = p.seq_q.ptr != 0 || p.seq_kv.ptr != 0;
    for (int i = blockIdx.x; i < p.sq; i += gridDim.x) {
        for (int j0 = threadIdx.x * 8; j0 < p.skv; j0 += RIME_CONVERT_THREADS * 8) {
            const int n = j0 / MAIN_BLOCK_KV;  // a chunk lies in one KV tile (8 divides it)
            int r0, r1;
            walked_rows_of<MAIN_BLOCK_Q, MAIN_BLOCK_KV>(p, seq_lens(p, b_begin), n, r0, r1);
            float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
            for (int b = b_begin; b < b_end; ++b) {
                if (per_batch_band && b > b_begin)
                    walked_rows_of<MAIN_BLOCK_Q, MAIN_BLOCK_KV>(p, seq_lens(p, b), n, r0, r1);
                if (i < r0 || i >= r1) continue;  // not walked: dS is 0 there, and not stored
                const io_t* src = ds + ((i64)b * p.hq + h_begin) * head_plane + i * pitch + j0;
#pragma unroll 4
                for (int h = h_begin; h < h_end; ++h, src += head_plane) {
                    u32 w[4];
                    ld_global_nc_v4(src, w);
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        acc[e] += io_to_f32((io_t)(w[e >> 1] >> (16 * (e & 1))));
                }
            }
            io_t* d = dst + (i64)i * p.dbias.ss + j0;
            if (vec && j0 + 8 <= p.skv) {
                st_global_v4(d, pack_io2(acc[0], acc[1]), pack_io2(acc[2], acc[3]),
                             pack_io2(acc[4], acc[5]), pack_io2(acc[6], acc[7]));
            } else {
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (j0 + e < p.skv) d[e] = f32_to_io(acc[e]);
            }
        }
    }
}
