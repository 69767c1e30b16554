// common.cuh: helpers shared by every rime kernel. The engine hands NVRTC this text, then the
// kernel ABI it generates from crates/engines/src/cuda/abi.rs (the parameter structs with a
// static_assert on every field offset, and the launch constants), then attn.cuh, then the
// kernel itself, so kernels need no CUDA toolkit header.
//
// Everything here is inline PTX for sm_80+ (mma.sync m16n8k16 with f32 accumulate, ldmatrix,
// cp.async, red.global.add.f32, ex2.approx). Element storage is 16 bits (`io_t`); IS_BF16 picks
// bf16 (1) or f16 (0) for conversions and the mma variant.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane = 4 * g + t:
//   A 16x16: a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B 16x8 : b0 (k 2t..2t+1, n g), b1 (k 2t+8.., n g)
//   C 16x8 : c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// Two adjacent C tiles (n 0-7, 8-15) are, once packed to 16 bits, an A fragment with k 0-15.

#ifndef IS_BF16
#error "IS_BF16 must be defined (1 for bf16, 0 for f16)"
#endif

typedef unsigned short io_t;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#define RIME_LOG2E 1.4426950408889634f
#define RIME_LN2 0.6931471805599453f

__device__ __forceinline__ float rime_neg_inf() {
    float r;
    asm("mov.b32 %0, 0xff800000;" : "=f"(r));
    return r;
}

__device__ __forceinline__ float rime_exp2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ float rime_log2(float x) {
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ float rime_max(float a, float b) {
    float r;
    asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

__device__ __forceinline__ float rime_rcp(float x) {
    float r;
    asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ float rime_shfl_xor(float v, int mask) {
    float r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(mask));
    return r;
}

__device__ __forceinline__ float io_to_f32(io_t h) {
#if IS_BF16
    float r;
    u32 bits = ((u32)h) << 16;
    asm("mov.b32 %0, %1;" : "=f"(r) : "r"(bits));
    return r;
#else
    float r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
    return r;
#endif
}

// The two io-dtype elements of a 32-bit word as f32: the low half (the lower address) in lo.
__device__ __forceinline__ void io2_to_f32(u32 w, float& lo, float& hi) {
#if IS_BF16
    asm("mov.b32 %0, %1;" : "=f"(lo) : "r"(w << 16));
    asm("mov.b32 %0, %1;" : "=f"(hi) : "r"(w & 0xffff0000u));
#else
    lo = io_to_f32((io_t)(w & 0xffffu));
    hi = io_to_f32((io_t)(w >> 16));
#endif
}

__device__ __forceinline__ io_t f32_to_io(float f) {
    io_t r;
#if IS_BF16
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
#endif
    return r;
}

// Packs (lo, hi) into one 32-bit register: lo in the low half, as mma fragments expect.
__device__ __forceinline__ u32 pack_io2(float lo, float hi) {
    u32 r;
#if IS_BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

__device__ __forceinline__ void mma_16816(float* c, const u32* a, u32 b0, u32 b1) {
#if IS_BF16
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u32 r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

__device__ __forceinline__ void ldsm_x4(u32* r, u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldsm_x4_t(u32* r, u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// Tile layouts in shared memory, as a layout code `ld`: a positive code is a row-major tile whose
// rows are `ld` elements apart (padded by 8 elements: conflict-free ldmatrix); PANELS(rows) is a
// tile of `rows` rows as written by a TMA tensor copy with 32-byte swizzling (tma_load_4d below):
// panels of 16 columns, each `rows` x 32 bytes, in which the two 16-byte halves of row r swap
// places when bit 7 of the row's shared address is set (bits 4 ^= 7, the hardware's 32-byte
// pattern). An ldmatrix phase reads 8 consecutive rows of one half: 8 x 16 bytes over all 32
// banks, conflict-free as the padded rows are. Panels must start 256-byte aligned, so that
// adding 8 rows (256 bytes) or a panel keeps the swizzle bit (every block offset below does).
#define PANELS(rows) (-(rows))

// Byte offset of element (row, col) in a tile of layout `ld`: the constant added to a lane's
// ldmatrix address for the 16x16 block at (row, col) (in a PANELS tile, row a multiple of 8 and
// col of 16).
__device__ __forceinline__ constexpr int tile_off(int ld, int row, int col) {
    return ld > 0 ? 2 * (row * ld + col) : (col / 16) * -ld * 32 + row * 32 + (col % 16) * 2;
}

// Shared address of the 16 bytes at (row, col) (col a multiple of 8) of a PANELS(rows) tile at
// shared address `s`: the half that the swizzle puts there.
__device__ __forceinline__ u32 panel_addr(u32 s, int rows, int row, int col) {
    const u32 a = s + (col / 16) * rows * 32 + row * 32;
    return a + ((((col >> 3) & 1) ^ ((a >> 7) & 1)) << 4);
}

// ldmatrix address patterns for a tile of layout `ld` at shared address `s` (bytes, from
// smem_addr). Kernels take the lane's address once, with m0 = n0 = k0 = 0, and add the constant
// byte offset of each 16x16 block (tile_off) in the unrolled loops (ldmatrix [reg + imm]).
// A 16x16 from row-major [m][k] storage (non-transposed load).
__device__ __forceinline__ u32 addr_a(u32 s, int ld, int m0, int k0, int lane) {
    if (ld < 0) return panel_addr(s, -ld, m0 + (lane & 15), k0 + (lane >> 4) * 8);
    return s + 2 * ((m0 + (lane & 15)) * ld + k0 + (lane >> 4) * 8);
}
// A 16x16 from [k][m] storage (transposed load).
__device__ __forceinline__ u32 addr_a_t(u32 s, int ld, int m0, int k0, int lane) {
    if (ld < 0)
        return panel_addr(s, -ld, k0 + (lane & 7) + (lane >> 4) * 8, m0 + ((lane >> 3) & 1) * 8);
    return s + 2 * ((k0 + (lane & 7) + (lane >> 4) * 8) * ld + m0 + ((lane >> 3) & 1) * 8);
}
// Two B 16x8 tiles (n0..n0+15) from [n][k] storage: r0,r1 -> tile n0, r2,r3 -> tile n0+8.
__device__ __forceinline__ u32 addr_b(u32 s, int ld, int n0, int k0, int lane) {
    if (ld < 0)
        return panel_addr(s, -ld, n0 + (lane & 7) + (lane >> 4) * 8, k0 + ((lane >> 3) & 1) * 8);
    return s + 2 * ((n0 + (lane & 7) + (lane >> 4) * 8) * ld + k0 + ((lane >> 3) & 1) * 8);
}
// Two B 16x8 tiles (n0..n0+15) from [k][n] storage (transposed load), same register order.
__device__ __forceinline__ u32 addr_b_t(u32 s, int ld, int n0, int k0, int lane) {
    if (ld < 0)
        return panel_addr(s, -ld, k0 + (lane & 7) + ((lane >> 3) & 1) * 8, n0 + (lane >> 4) * 8);
    return s + 2 * ((k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * ld + n0 + (lane >> 4) * 8);
}
// Two adjacent f32 C tiles (columns 0-7 in c0, 8-15 in c1), packed to 16 bits, as the A
// fragment of a k = 16 step (see the fragment layouts above).
__device__ __forceinline__ void pack_a_frag(u32* a, const float* c0, const float* c1) {
    a[0] = pack_io2(c0[0], c0[1]);
    a[1] = pack_io2(c0[2], c0[3]);
    a[2] = pack_io2(c1[0], c1[1]);
    a[3] = pack_io2(c1[2], c1[3]);
}
// Zeroes a warp's MI x NJ accumulator fragments.
template <int MI, int NJ>
__device__ __forceinline__ void zero_acc(float (*acc)[NJ][4]) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int nj = 0; nj < NJ; ++nj)
            acc[mi][nj][0] = acc[mi][nj][1] = acc[mi][nj][2] = acc[mi][nj][3] = 0.f;
    }
}

// acc[MI][NJ][4] += A B over K16 steps of 16, a warp's (16 MI) x (8 NJ) tile, both operands in
// shared memory at the lane's ldmatrix addresses (see addr_a / addr_b above): A rows-
// major [m][k] with rows LDA elements apart (A_T: stored [k][m]), B stored [n][k] (B_T: [k][n]).
// Each A fragment serves NJ mma, each pair of B fragments MI x 2.
template <int MI, int NJ, int K16, bool A_T, bool B_T, int LDA, int LDB>
__device__ __forceinline__ void warp_gemm(float (*acc)[NJ][4], u32 a_lane, u32 b_lane) {
#pragma unroll
    for (int kk = 0; kk < K16; ++kk) {
        u32 a[MI][4];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            if (A_T) ldsm_x4_t(a[mi], a_lane + tile_off(LDA, kk * 16, mi * 16));
            else ldsm_x4(a[mi], a_lane + tile_off(LDA, mi * 16, kk * 16));
        }
#pragma unroll
        for (int np = 0; np < NJ / 2; ++np) {
            u32 bf[4];
            if (B_T) ldsm_x4_t(bf, b_lane + tile_off(LDB, kk * 16, np * 16));
            else ldsm_x4(bf, b_lane + tile_off(LDB, np * 16, kk * 16));
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                mma_16816(acc[mi][2 * np], a[mi], bf[0], bf[1]);
                mma_16816(acc[mi][2 * np + 1], a[mi], bf[2], bf[3]);
            }
        }
    }
}

// 16-byte global -> shared copy; rows outside the tensor are zero-filled (src_bytes = 0).
__device__ __forceinline__ void cp_async_16_to(u32 d, const void* src, bool valid) {
    int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
    cp_async_16_to(smem_addr(dst), src, valid);
}

__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_all;" ::: "memory");
}

// Closes the cp.async group of this thread's copies issued since the last one.
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most N of this thread's committed cp.async groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Tensor copies (TMA, sm_90+, SM120 included) completing on an mbarrier in shared memory. The
// tensor map (`TensorMap` of the kernel ABI) is a kernel parameter (`__grid_constant__`, so its
// address is a parameter-space one the copy can read), encoded on the host
// (crates/engines/src/cuda/tma.rs).
// Initialises the mbarrier at shared address `bar` for `count` arrivals a phase, and makes the
// initialisation visible to the tensor copies that will complete on it.
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival on `bar` that also expects `bytes` more of copies to complete on it this phase.
__device__ __forceinline__ void mbar_arrive_expect(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

// Waits until the phase of `bar` with parity `parity` (0 for its first phase, then 1, 0, ...)
// has completed: its arrivals made and the copies it expected landed (and visible).
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    u32 done;
    do {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
            "selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// Orders this thread's earlier generic-proxy accesses of shared memory (cp.async copies, loads)
// before later tensor copies into the same bytes.
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The box of a rank-5 tensor map at coordinates (c0 innermost .. c4) into shared address `dst`,
// completing on `bar` (elements outside the tensor land as zeros). The destination is
// `.shared::cta`: with `.shared::cluster` ptxas for sm_120 keeps a slow-path call (and its stack
// frame) beside every copy.
__device__ __forceinline__ void tma_load_5d(u32 dst, const void* map, int c0, int c1, int c2,
                                            int c3, int c4, u32 bar) {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cta.global.tile.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
        : "memory");
}

// Programmatic dependent launch: on sm_90 and newer every rime kernel is launched with the
// programmatic stream serialization attribute (crates/engines/src/cuda/launch.rs), so its blocks
// may be scheduled before the previous kernel in the stream has finished. Every kernel calls
// this first, before any global memory access: it waits until the previous grid has completed
// and its writes are visible, then lets the next grid's blocks be scheduled onto the SMs this
// one leaves idle (they wait here in turn). What it saves is the launch gap and the next
// grid's block start-up, not memory traffic.
__device__ __forceinline__ void pdl_enter() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void red_add_f32(float* p, float v) {
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// Adds four consecutive floats (16-byte aligned address); one reduction on sm_90 and newer.
__device__ __forceinline__ void red_add_f32x4(float* p, float a, float b, float c, float d) {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b),
                 "f"(c), "f"(d)
                 : "memory");
#else
    red_add_f32(p, a);
    red_add_f32(p + 1, b);
    red_add_f32(p + 2, c);
    red_add_f32(p + 3, d);
#endif
}

// Adds two consecutive floats (8-byte aligned address); one reduction on sm_90 and newer.
__device__ __forceinline__ void red_add_f32x2(float* p, float a, float b) {
#if __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
    red_add_f32(p, a);
    red_add_f32(p + 1, b);
#endif
}

// One 16-byte shared-memory load (16-byte aligned address).
__device__ __forceinline__ void ld_shared_v4(const void* p, u32* w) {
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "r"(smem_addr(p)));
}

// 8-byte global store of two f32 (p 8-byte aligned).
__device__ __forceinline__ void st_global_f32x2(float* p, float a, float b) {
    asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
}
// One 16-byte global load through the read-only path (16-byte aligned address; the data must
// not be written while the kernel runs).
__device__ __forceinline__ void ld_global_nc_v4(const void* p, u32* w) {
    asm volatile("ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "l"(p));
}
// One 16-byte global store (16-byte aligned address).
__device__ __forceinline__ void st_global_v4(void* p, u32 a, u32 b, u32 c, u32 d) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
}
// 4-byte global -> shared copy (f32 rows such as Stats and delta); zero-filled when !valid.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool valid) {
    u32 d = smem_addr(dst);
    int n = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(n));
}

// Copies a ROWS x COLS tile (COLS a multiple of 8) of a global tensor whose rows are `stride`
// elements apart into shared memory with leading dimension `ld`, NT threads taking 16-byte
// chunks in turn (the tile and thread count are compile-time: constant divisors); rows at or
// beyond `valid_rows` and columns at or beyond `valid_cols` (a multiple of 8: a head dim padded
// up to the compiled envelope) are zero-filled and never read. UNROLLED unrolls the chunk loop;
// callers whose registers are short keep it rolled, because ptxas then hoists every chunk's
// loop-invariant offset out of the caller's tile loop and holds it in registers.
// STEPPED, for the tiles a kernel streams in its main loop: where the NT threads cover whole
// rows (every tile the backward's copy groups take; the dQ GEMM's but 192 columns) a thread
// keeps one column and steps its source NT / (COLS / 8) rows per chunk, an add instead of a
// 64-bit row-times-stride multiply per chunk (on sm_90 the multiplies were a tenth of the d256
// main loop's instructions). The empty asm keeps the thread's row, column and stride from
// being hoisted out of the caller's loop as live registers (hoisted, the d256 atomic kernel
// spilled 20 B). Tiles copied once per block (the backward's K and V) keep the per-chunk
// offsets: stepped, the d128 ragged relay kernel with a broadcast dBias spilled 20 B.
template <int ROWS, int COLS, int NT, bool UNROLLED, bool STEPPED>
__device__ __forceinline__ void load_tile(io_t* s, int ld, const io_t* g, i64 stride,
                                          int valid_rows, int valid_cols, int tid) {
    constexpr int kChunksPerRow = COLS / 8;
    constexpr int kTotal = ROWS * kChunksPerRow;
    constexpr int kSteps = (kTotal + NT - 1) / NT;
    if constexpr (STEPPED && NT % kChunksPerRow == 0) {
        constexpr int kRowsPerStep = NT / kChunksPerRow;
        int r0 = (int)((unsigned)tid / kChunksPerRow);
        int col = (int)((unsigned)tid % kChunksPerRow) * 8;
        asm volatile("" : "+r"(r0), "+r"(col), "+l"(stride));
        const bool col_ok = col < valid_cols;
        // (u32: a zero-extended row times the stride is a 32 x 64-bit multiply; see elem_off)
        const io_t* src = g + (i64)(u32)r0 * stride + col;
        const i64 step = (i64)kRowsPerStep * stride;
        // The shared address as 32 bits once, each chunk's a constant offset from it (stepping
        // a generic pointer cost a 64-bit add and a move per chunk).
        const u32 dst = smem_addr(s + r0 * ld + col);
#pragma unroll(UNROLLED ? kSteps : 1)
        for (int k = 0; k < kSteps; ++k) {
            const int r = r0 + k * kRowsPerStep;
            if (kTotal % NT != 0 && r >= ROWS) break;
            const bool valid = col_ok && r < valid_rows;
            cp_async_16_to(dst + (u32)(k * kRowsPerStep * ld * (int)sizeof(io_t)),
                           valid ? src : g, valid);
            src += step;
        }
    } else {
#pragma unroll(UNROLLED ? kSteps : 1)
        for (int k = 0; k < kSteps; ++k) {
            const int c = tid + k * NT;
            if (kTotal % NT != 0 && c >= kTotal) break;
            const int r = c / kChunksPerRow;
            const int col = (c - r * kChunksPerRow) * 8;
            const bool valid = r < valid_rows && col < valid_cols;
            const io_t* src = valid ? g + (i64)r * stride + col : g;
            cp_async_16(s + r * ld + col, src, valid);
        }
    }
}
