//! The kernels' tile ranges, checked on the host: attn.cuh's `kv_range_of`, `q_tiles_of`,
//! `tiles_of`, `rows_of_tiles` and `ds_rows_of` are plain integer functions, so this test
//! compiles attn.cuh itself (with the generated ABI before it, as NVRTC gets it) with the host's
//! C++ compiler (`CXX`, else `c++`) into a program that sweeps masks, lengths and tiles and
//! checks what the kernels rely on, for every tile of the kernel table:
//!
//! - every kept (i, j) lies in the KV range the forward and the dQ GEMM walk for row i's tile,
//!   and in the Q tiles the backward walks for column j's tile (nothing kept is skipped);
//! - q_tiles_of's ends never decrease with the KV tile (the relay turn's binary search);
//! - two_kernel: every dS element the dQ GEMM or dbias_reduce.cu reads was written by the main
//!   kernel, as a value or as one of the zeros `ds_rows_of` adds (the workspace is not cleared,
//!   so an element read but never written would be garbage from an earlier run). The dBias
//!   reduction reads `walked_rows_of`'s rows of each KV tile, in every column below Skv; with
//!   the first check (every kept element is walked) that makes its sum complete.
//! - the f32 dQ accumulator's tiled layout (`dq_acc_off`) is one-to-one onto the plane, each
//!   group of 16 rows is a contiguous range, and a warp's reduction of one fragment covers
//!   consecutive floats, as bwd_main.cu, bwd_preprocess.cu and convert.cu assume.
//!
//! No GPU is needed; the sweep is a fixed pseudo-random table (the same every run).

use std::path::PathBuf;
use std::process::Command;

use rime_analyzer::sm120::kernels::{companion, KERNELS};
use rime_analyzer::{KernelRole, Route};

/// The sweep: tile lists from the table, then the checks, in C++ around attn.cuh.
const HARNESS: &str = r#"
#include <cstdio>
#include <cstdint>
#include <vector>

struct Sweep { int fails = 0; long cases = 0; };

static void fail(Sweep& s, const char* name, const AttnParams& p, const SeqLens& L,
                 const char* what, int i, int j) {
    if (++s.fails <= 20)
        std::printf("FAIL %s: %s at (i %d, j %d): sq %d skv %d q %d kv %d shift %d right %d/%d "
                    "left %d/%d\n", name, what, i, j, p.sq, p.skv, L.q, L.kv, L.shift,
                    p.has_right, p.right_bound, p.has_left, p.left_bound);
}

static bool keep(const AttnParams& p, const SeqLens& L, int i, int j) {
    return rime_keep(i, j, L.q, L.kv, L.shift, p.has_right, p.right_bound, p.has_left,
                     p.left_bound);
}

// The band as a column range per row (the backward's masked softmax), which must keep what
// rime_keep keeps.
static bool keep_by_row(const AttnParams& p, const SeqLens& L, int i, int j) {
    int lo, hi;
    keep_cols_of_row(i, L.q, L.kv, L.shift, p.has_right, p.right_bound, p.has_left,
                     p.left_bound, lo, hi);
    return j >= lo && j < hi;
}

// The forward (rows = its Q tile) and the dQ GEMM (rows = RIME_DQ_ROWS) walk kv_range_of.
static void check_kv_range(Sweep& s, const char* name, const AttnParams& p, const SeqLens& L,
                           int rows) {
    for (int m0 = 0; m0 < p.sq; m0 += rows) {
        int jb, je;
        kv_range_of(p, L, m0, rows, jb, je);
        for (int i = m0; i < m0 + rows && i < p.sq; ++i)
            for (int j = 0; j < p.skv; ++j) {
                const bool kept = keep(p, L, i, j);
                if (kept != keep_by_row(p, L, i, j))
                    fail(s, name, p, L, "keep_cols_of_row differs from rime_keep", i, j);
                if (kept && (j < jb || j >= je))
                    fail(s, name, p, L, "kept, not in kv_range_of", i, j);
            }
    }
}

// One table entry: its Q and KV tiles and (CHUNK > 0: two_kernel) its dQ GEMM's chunk.
template <int BQ, int BKV, int CHUNK>
static void check(Sweep& s, const char* name, const AttnParams& p) {
    const SeqLens L = seq_lens(p, 0);
    ++s.cases;
    check_kv_range(s, name, p, L, BQ);
    const int n_tiles = (p.skv + BKV - 1) / BKV;
    const long pitch = (long)ds_pitch(p.skv);
    std::vector<char> written(CHUNK ? (size_t)p.sq * pitch : 0, 0);
    int last_mb = -1, last_me = -1;
    std::vector<int> walked_r0(n_tiles), walked_r1(n_tiles);  // dbias_reduce.cu's rows
    for (int n = 0; n < n_tiles; ++n) {
        int mb, me, r0, r1;
        q_tiles_of<BQ, BKV>(p, L, n, mb, me);
        rows_of_tiles<BQ>(p, mb, me, r0, r1);
        walked_rows_of<BQ, BKV>(p, L, n, walked_r0[n], walked_r1[n]);
        for (int i = 0; i < p.sq; ++i)
            for (int j = n * BKV; j < (n + 1) * BKV && j < p.skv; ++j)
                if (keep(p, L, i, j) && (i < r0 || i >= r1))
                    fail(s, name, p, L, "kept, not walked", i, j);
        if (me > mb) {
            if (mb < last_mb || me < last_me) fail(s, name, p, L, "q_tiles_of decreased", mb, n);
            last_mb = mb;
            last_me = me;
        }
        if (!CHUNK) continue;
        // The main kernel stores dS for its walked rows and zeros in ds_rows_of's others, in
        // all of its tile's columns (bwd_main.cu: store_ds_tile, zero_skipped_rows).
        int lo, hi;
        ds_rows_of(p, r0, r1, lo, hi);
        for (int i = lo < r0 ? lo : r0; i < (hi > r1 ? hi : r1); ++i)
            for (int j = n * BKV; j < (n + 1) * BKV; ++j) written[i * pitch + j] = 1;
    }
    if constexpr (CHUNK > 0) {
        check_kv_range(s, name, p, L, RIME_DQ_ROWS);
        // The dQ GEMM reads its chunks' columns below round_up(Skv, 8) (the rest is
        // zero-filled), in dq_gemm.cu's walk.
        const int cols = (p.skv + 7) / 8 * 8;
        for (int q0 = 0; q0 < p.sq; q0 += RIME_DQ_ROWS) {
            int jb, je, c_begin, c_end;
            kv_range_of(p, L, q0, RIME_DQ_ROWS, jb, je);
            tiles_of<CHUNK>(jb, je, c_begin, c_end);
            for (int j = c_begin * CHUNK; j < c_end * CHUNK && j < cols; ++j)
                for (int i = q0; i < q0 + RIME_DQ_ROWS && i < p.sq; ++i)
                    if (!written[i * pitch + j])
                        fail(s, name, p, L, "dQ GEMM reads unwritten dS", i, j);
        }
        for (int j = 0; j < p.skv; ++j)
            for (int i = walked_r0[j / BKV]; i < walked_r1[j / BKV]; ++i)
                if (!written[i * pitch + j])
                    fail(s, name, p, L, "dbias_reduce reads unwritten dS", i, j);
    }
}

// The dQ accumulator's layout (dq_acc_off): one-to-one onto [0, rows x cols) for every plane,
// the row-major plane's size, so the workspace region and the convert's planes are unchanged;
// each group of 16 rows is the contiguous range of its rows' row-major floats, as
// bwd_preprocess.cu's zeroing assumes; in a whole group a fragment's lane (g = lane / 4,
// t = lane % 4) finds (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1) at 4 consecutive floats,
// 4 lane on from the block's first, as bwd_main.cu's 16-byte reductions and convert.cu's row
// pairs assume; in a last, shorter group each row's 8 columns of a block are consecutive.
static int check_dq_layout() {
    int fails = 0;
    for (int rows = 1; rows <= 70; ++rows)
        for (int cols = 8; cols <= 96; cols += 8) {
            std::vector<char> hit((size_t)rows * cols, 0);
            for (int i = 0; i < rows; ++i)
                for (int d = 0; d < cols; ++d) {
                    const i64 o = dq_acc_off(i, d, rows, cols);
                    if (o < 0 || o >= (i64)rows * cols || hit[o]++) ++fails;
                    const int i0 = i & ~15;
                    const int n = rows - i0 < 16 ? rows - i0 : 16;
                    if (o < (i64)i0 * cols || o >= (i64)(i0 + n) * cols) ++fails;
                }
            for (int i0 = 0; i0 < rows; i0 += 16)
                for (int d0 = 0; d0 < cols; d0 += 8) {
                    const int n = rows - i0 < 16 ? rows - i0 : 16;
                    const i64 first = dq_acc_off(i0, d0, rows, cols);
                    if (n == 16) {
                        for (int lane = 0; lane < 32; ++lane)
                            for (int e = 0; e < 4; ++e)
                                if (dq_acc_off(i0 + lane / 4 + 8 * (e / 2),
                                               d0 + 2 * (lane % 4) + e % 2, rows, cols) !=
                                    first + 4 * lane + e)
                                    ++fails;
                    } else {
                        for (int r = 0; r < n; ++r)
                            for (int c = 0; c < 8; ++c)
                                if (dq_acc_off(i0 + r, d0 + c, rows, cols) != first + 8 * r + c)
                                    ++fails;
                    }
                }
        }
    std::printf("dq_acc_off: %d failures\n", fails);
    return fails;
}

// TILES
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static int draw(int n) {  // 0 .. n - 1
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}
// Lengths near the tiles' multiples as often as anywhere else.
static int length(int max) {
    const int near[] = {1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 255, 256, 257, 383, 384, 385};
    const int v = draw(2) ? near[draw(sizeof near / sizeof near[0])] : 1 + draw(max);
    return v < max ? v : max;
}

int main() {
    Sweep s;
    for (int c = 0; c < CASES; ++c) {
        AttnParams p = {};
        p.batch = 1;
        p.sq = length(400);
        p.skv = length(400);
        int lens[2] = {0, 0};
        if (draw(2)) {  // a padding mask: lengths within the tensors
            lens[0] = draw(p.sq + 1);
            lens[1] = draw(p.skv + 1);
            p.seq_q.ptr = (u64)(uintptr_t)&lens[0];
            p.seq_kv.ptr = (u64)(uintptr_t)&lens[1];
        }
        p.bottom_right = draw(2);
        const int big = p.sq > p.skv ? p.sq : p.skv;  // the analyzer keeps bounds below it
        p.has_right = draw(4) != 0;
        p.right_bound = draw(3) ? draw(4) : draw(big);
        p.has_left = draw(3) == 0;
        p.left_bound = 1 + (draw(2) ? draw(4) : draw(big));
        check_all(s, p);
    }
    std::printf("%ld tile checks, %d failures\n", s.cases, s.fails);
    const int layout_fails = check_dq_layout();  // run and reported even when tiles failed
    return s.fails || layout_fails ? 1 : 0;
}
"#;

/// Sweep cases (each checked on every tile).
const CASES: u32 = 1500;

/// The tiles to check: every backward main entry's (with its dQ GEMM's chunk when it serves
/// two_kernel) and every forward entry's (its KV range only).
fn tiles() -> String {
    let mut rows = Vec::new();
    for k in KERNELS {
        let chunk = match k.role {
            KernelRole::BackwardMain if k.serves(Route::TwoKernel) => {
                let dq = companion(KernelRole::DqGemm, k).expect("every envelope has a dQ GEMM");
                assert_eq!(
                    k.block_kv % dq.block_kv,
                    0,
                    "{}: a dQ chunk spans KV tiles",
                    k.name
                );
                dq.block_kv
            }
            KernelRole::BackwardMain | KernelRole::Forward => 0,
            KernelRole::DqGemm => continue,
        };
        rows.push(format!(
            "    check<{}, {}, {chunk}>(s, \"{}\", p);\n",
            k.block_q, k.block_kv, k.name
        ));
    }
    format!(
        "static void check_all(Sweep& s, const AttnParams& p) {{\n{}}}\n",
        rows.concat()
    )
}

#[test]
fn tile_ranges_cover_the_band_and_the_ds_the_dq_gemm_and_dbias_reduce_read() {
    let source = format!(
        "#define __device__\n#define __forceinline__ inline\n#define __align__(n) alignas(n)\n\
         #define CASES {CASES}\n\
         typedef unsigned short io_t;\ntypedef unsigned int u32;\n\
         typedef unsigned long long u64;\ntypedef long long i64;\n{}\n{}\n{}",
        super::abi::header(),
        super::compile::ATTN,
        HARNESS.replace("// TILES\n", &tiles()),
    );
    let dir = std::env::temp_dir().join(format!("rime-band-ranges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cpp = dir.join("band_ranges.cpp");
    let exe: PathBuf = dir.join("band_ranges");
    std::fs::write(&cpp, source).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-Wall", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap_or_else(|e| panic!("this test needs a host C++ compiler ({cxx}): {e}"));
    assert!(
        built.status.success(),
        "{cxx} {}: {}",
        cpp.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let report = String::from_utf8_lossy(&run.stdout);
    println!("{report}");
    assert!(run.status.success(), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
