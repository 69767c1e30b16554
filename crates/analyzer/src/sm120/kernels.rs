//! The SM120 engine's compiled tile configurations: the table the analyzer selects from and the
//! CUDA engine implements entry by entry.
//!
//! Tiles start from FlashAttention-2's choices for ~99 KB parts (sm86/89, which is where SM120's
//! 101,376 B per block lands), as implemented by crates/engines/kernels/*.cu: each warp owns 16
//! rows (4 warps in the forward, 8 in the backward; d256's backward holds V in registers and
//! stages it through the Q and dO buffers, as FlashAttention-2 keeps V in registers there),
//! K/V resident in the backward with Q and dO streamed, shared-memory rows
//! padded by 8 elements against bank conflicts. Shared memory is derived from the tiles by the
//! `const fn` formulas below (never typed in; the kernels `static_assert` the same numbers), and a
//! test checks every entry fits [`SM120_SMEM_PER_BLOCK`]. The pipelines use cp.async groups, so no
//! mbarriers are counted. The engines crate's fitness test compiles every entry for sm_120 and
//! checks ptxas's shared memory, spills and registers.
//!
//! A backward envelope may have one main-kernel entry per group of routes (`routes`), with the
//! same tiles, when a route's kernel has registers another's lacks: d256 keeps two Q buffers
//! only on two_kernel, whose kernel has no dQ product. [`select_main`] picks by route; every
//! route of every envelope has exactly one entry (a test checks).
//!
//! Contract with the CUDA engine (what the workspace formulas assume): a backward block owns one
//! (b, KV head, KV tile) and loops over the query heads of its GQA group, so dK and dV are
//! accumulated in registers and stored once (no dK/dV workspace, deterministic on every route);
//! dQ goes through the route's path; a full (B, Hq) dBias is stored directly from the dS tile,
//! a broadcast one is added into the f32 `dbias_accum` region and converted afterwards.

use rime_graph::DataType;

use crate::Route;

/// SM120 opt-in shared memory per block, bytes.
pub const SM120_SMEM_PER_BLOCK: u64 = 101_376;

/// Q rows per block of every dQ GEMM entry (two_kernel). The main kernel zeroes the dS rows the
/// band skips only within the dQ GEMM's tiles that read them, so it is told this (bwd_main.cu,
/// `zero_skipped_rows`) and dq_gemm.cu asserts its tile.
pub const DQ_GEMM_ROWS: u32 = 128;

/// Bytes per io element (f16 and bf16 alike).
pub const IO_BYTES: u32 = 2;

/// What a kernel computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelRole {
    /// SDPA forward: O and Stats.
    Forward,
    /// SDPA backward main kernel: dK, dV (and dQ partials or dS, by route).
    BackwardMain,
    /// two_kernel route: dQ = scale * dS K from the dS workspace.
    DqGemm,
}

impl KernelRole {
    /// Stable name.
    pub const fn name(self) -> &'static str {
        match self {
            KernelRole::Forward => "forward",
            KernelRole::BackwardMain => "backward_main",
            KernelRole::DqGemm => "dq_gemm",
        }
    }
}

/// One compiled kernel configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelConfig {
    /// Stable name, e.g. `bwd_d128_32x64`.
    pub name: &'static str,
    /// What it computes.
    pub role: KernelRole,
    /// Q/K head-dim envelope: the compiled width; smaller multiples of 8 are padded up.
    pub head_dim_qk: u32,
    /// V head-dim envelope.
    pub head_dim_v: u32,
    /// Q rows per block.
    pub block_q: u32,
    /// K/V rows per block (for the dQ GEMM: the Skv chunk of dS and K per step).
    pub block_kv: u32,
    /// Warps per block.
    pub warps: u32,
    /// cp.async pipeline stages of the streamed operand (the backward main kernel: Q buffers;
    /// the dQ GEMM: the chunks of dS and K in its ring).
    pub stages: u32,
    /// Registers per thread the entry is held to: ptxas's count for its widest specialization
    /// on sm_120 (the fitness test checks every specialization against it; the cost model
    /// derives blocks per SM from it).
    pub registers: u32,
    /// Shared memory per block, bytes (from the formulas below).
    pub smem_bytes: u32,
    /// io data types it is compiled for.
    pub dtypes: &'static [DataType],
    /// How a backward main kernel splits its products over its warps; `None` for the other
    /// roles (one warp per 16 rows of the block's tile).
    pub layout: Option<BwdLayout>,
    /// The backward routes a main kernel is built and selected for (every route for the other
    /// roles). An envelope may have one entry per group of routes: without the dQ product
    /// (two_kernel) the d256 kernel has the registers for a second Q buffer, with it not.
    pub routes: &'static [Route],
}

/// The warp grids of a backward main kernel (bwd_main.cu): for each of its three products, how
/// many of the block's warps lie along the product's rows (the others along its columns), and
/// whether product 1's K and V fragments stay in registers for the whole block (then S / dP
/// stream only Q and dO, and with V's, P and dS take V's shared memory, unless V is staged
/// through the Q and dO buffers instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BwdLayout {
    /// S = Q K^T and dP = dO V^T (block_q x block_kv): warps along the query rows.
    pub sdp: u32,
    /// dV += P^T dO and dK += dS^T Q (block_kv x head dim): warps along the KV rows.
    pub dkv: u32,
    /// dQ = dS K (block_q x head_dim_qk): warps along the query rows.
    pub dq: u32,
    /// K fragments of the S product held in registers (loaded once per block).
    pub k_regs: bool,
    /// V fragments of the dP product held in registers; P and dS then reuse V's shared memory.
    pub v_regs: bool,
    /// With `v_regs`: V is copied into the Q and dO buffers (before their first tiles), read
    /// into registers, and has no region of its own; P and dS get theirs. This is what fits
    /// Dqk = Dv = 256 within 101,376 B: V needs no space once it is in registers.
    pub v_staged: bool,
    /// Product 1 split by product: S on the first half of the warps with K's fragments in
    /// registers, dP on the other half with V's, each half over the `sdp` grid of the whole
    /// tile; K staged through the Q buffers as V through the dO buffers (needs `k_regs`,
    /// `v_regs`, `v_staged`, two stages and the two_kernel route, whose kernel reads K from
    /// nowhere else; with Dqk > Dv the S half has the longer k loop). Product 1 then reads only
    /// Q and dO from shared memory, and half as often; an S warp hands its f32 P to its dP warp
    /// through shared memory. dO, Stats and delta get two buffers like Q, the bias tile its own
    /// ([`smem_backward_split`]).
    pub split: bool,
    /// Buffers of the streamed dO tile and its Stats and delta rows: 1, or 2 (with two Q
    /// buffers; `double_do` in the table), when without a bias the next step's dO is copied as
    /// the step starts, like its Q, instead of once every warp is past dV (one barrier fewer a
    /// step). With a bias the kernel keeps the one-buffer schedule and the second buffer only
    /// holds part of a staged V. A split layout always has as many as Q buffers.
    pub do_buffers: u32,
}

impl BwdLayout {
    /// True when every warp tile of `k` is whole 16 x 16 blocks (what bwd_main.cu asserts).
    pub fn tiles_evenly(&self, k: &KernelConfig) -> bool {
        let w = k.warps;
        // Product 1's warps: all, or each half when split by product.
        let sdp_w = if self.split { w / 2 } else { w };
        let divides = |w: u32, m: u32| m > 0 && w % m == 0;
        if !(divides(sdp_w, self.sdp) && divides(w, self.dkv) && divides(w, self.dq)) {
            return false;
        }
        let blocks = |rows: u32, m: u32| rows % (16 * m) == 0;
        let cols_of = |w: u32, n: u32, m: u32| (n * m / w) % 16 == 0 && (n * m) % w == 0;
        let cols = |n: u32, m: u32| cols_of(w, n, m);
        blocks(k.block_q, self.sdp)
            && cols_of(sdp_w, k.block_kv, self.sdp)
            && blocks(k.block_kv, self.dkv)
            && cols(k.head_dim_qk, self.dkv)
            && cols(k.head_dim_v, self.dkv)
            && blocks(k.block_q, self.dq)
            && cols(k.head_dim_qk, self.dq)
    }
}

impl KernelConfig {
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        self.warps * 32
    }

    /// True when this entry is built and selected for `route`.
    pub fn serves(&self, route: Route) -> bool {
        self.routes.contains(&route)
    }

    /// True when (dqk, dv) fits this envelope.
    pub const fn fits(&self, dqk: i64, dv: i64) -> bool {
        dqk <= self.head_dim_qk as i64 && dv <= self.head_dim_v as i64
    }

    /// True when `other` can stand in for this configuration in an approved plan: the same role,
    /// envelope and Q tile, so the plan's workspace (sized by them) fits it exactly.
    pub fn interchangeable(&self, other: &KernelConfig) -> bool {
        self.role == other.role
            && self.head_dim_qk == other.head_dim_qk
            && self.head_dim_v == other.head_dim_v
            && self.block_q == other.block_q
    }

    /// True when (dqk, dv) equals the envelope (no padding).
    pub const fn is_exact(&self, dqk: i64, dv: i64) -> bool {
        dqk == self.head_dim_qk as i64 && dv == self.head_dim_v as i64
    }
}

/// Elements of padding per shared-memory row (16 bytes: conflict-free ldmatrix).
pub const SMEM_ROW_PAD: u32 = 8;

/// Backward main kernel: resident K and V tiles, the P and dS tiles (`[q][kv]`, io type; in V's
/// space when `v_regs`, where V is read only into registers), `stages` buffers of the streamed
/// Q tile, `do_buffers` of dO and of the f32 rows of LSE and delta; rows padded. With
/// `v_staged` V passes through the Q and dO buffers (which must hold it) and P and dS have
/// their own space.
pub const fn smem_backward(
    (bq, bkv): (u32, u32),
    (dqk, dv): (u32, u32),
    (stages, do_buffers): (u32, u32),
    (v_regs, v_staged): (bool, bool),
) -> u32 {
    let p = SMEM_ROW_PAD;
    let v = bkv * (dv + p);
    let ps = 2 * bq * (bkv + p);
    let v_and_ps = if v_staged {
        ps
    } else if !v_regs {
        v + ps
    } else if ps > v {
        ps
    } else {
        v
    };
    IO_BYTES * (bkv * (dqk + p) + v_and_ps + stages * bq * (dqk + p) + do_buffers * bq * (dv + p))
        + 4 * 2 * do_buffers * bq
}

/// Backward main kernel split by product ([`BwdLayout::split`]): `stages` buffers each of Q,
/// dO, LSE and delta; P, dS and the bias tile (io); the f32 P exchange (`bq` x `bkv`); no K or
/// V region (staged through the Q and dO buffers: [`split_stage_fits`]).
pub const fn smem_backward_split((bq, bkv): (u32, u32), (dqk, dv): (u32, u32), stages: u32) -> u32 {
    let p = SMEM_ROW_PAD;
    IO_BYTES * (stages * bq * (dqk + p + dv + p) + 3 * bq * (bkv + p))
        + 4 * bq * bkv
        + 4 * 2 * stages * bq
}

/// True when a layout split by product can stage K through the Q buffers and V through the dO
/// buffers: `stages` Q tiles hold the KV tile's rows.
pub const fn split_stage_fits((bq, bkv): (u32, u32), stages: u32) -> bool {
    bkv <= stages * bq
}

/// True when a staged V tile fits the Q and dO buffers it passes through (`stages` Q buffers
/// and `do_buffers` dO buffers, contiguous).
pub const fn v_stage_fits(
    (bq, bkv): (u32, u32),
    (dqk, dv): (u32, u32),
    (stages, do_buffers): (u32, u32),
) -> bool {
    let p = SMEM_ROW_PAD;
    bkv * (dv + p) <= stages * bq * (dqk + p) + do_buffers * bq * (dv + p)
}

/// Forward kernel: a resident Q tile and `stages` buffers of the streamed K and V tiles (io),
/// rows padded.
pub const fn smem_forward(bq: u32, bkv: u32, dqk: u32, dv: u32, stages: u32) -> u32 {
    let p = SMEM_ROW_PAD;
    IO_BYTES * (bq * (dqk + p) + stages * bkv * (dqk + p + dv + p))
}

/// dQ GEMM: `stages` buffers of a dS chunk (bq x bkv) and a K chunk (bkv x dqk), io type, rows
/// padded.
pub const fn smem_dq_gemm(bq: u32, bkv: u32, dqk: u32, stages: u32) -> u32 {
    let p = SMEM_ROW_PAD;
    IO_BYTES * stages * (bq * (bkv + p) + bkv * (dqk + p))
}

const HALF: &[DataType] = &[DataType::F16, DataType::Bf16];

/// The shared memory of a forward or dQ GEMM configuration, by the formula of its role (a
/// backward main entry's also depends on its layout: [`smem_backward`]).
const fn smem_bytes(role: KernelRole, bq: u32, bkv: u32, dqk: u32, dv: u32, stages: u32) -> u32 {
    match role {
        KernelRole::Forward => smem_forward(bq, bkv, dqk, dv, stages),
        KernelRole::BackwardMain => {
            smem_backward((bq, bkv), (dqk, dv), (stages, 1), (false, false))
        }
        KernelRole::DqGemm => smem_dq_gemm(bq, bkv, dqk, stages),
    }
}

/// `KernelConfig` with its shared memory derived from the tiles, for f16 and bf16.
const fn kernel(
    name: &'static str,
    role: KernelRole,
    (head_dim_qk, head_dim_v): (u32, u32),
    (block_q, block_kv): (u32, u32),
    warps: u32,
    stages: u32,
    registers: u32,
) -> KernelConfig {
    KernelConfig {
        name,
        role,
        head_dim_qk,
        head_dim_v,
        block_q,
        block_kv,
        warps,
        stages,
        registers,
        smem_bytes: smem_bytes(role, block_q, block_kv, head_dim_qk, head_dim_v, stages),
        dtypes: HALF,
        layout: None,
        routes: &Route::ALL,
    }
}

/// The routes whose main kernel computes dQ itself (atomic, relay; ordered_dbias as relay).
const FUSED_DQ: &[Route] = &[Route::Atomic, Route::Relay, Route::OrderedDbias];

/// The route whose main kernel writes dS for the dQ GEMM instead.
const DS_OUT: &[Route] = &[Route::TwoKernel];

/// A `BackwardMain` entry for every route, with its warp grids `(sdp, dkv, dq)` and
/// `(k_regs, v_regs, v_staged)`.
const fn backward(
    name: &'static str,
    dims: (u32, u32),
    tiles: (u32, u32),
    (warps, stages): (u32, u32),
    registers: u32,
    (sdp, dkv, dq): (u32, u32, u32),
    (k_regs, v_regs, v_staged): (bool, bool, bool),
) -> KernelConfig {
    let mut k = kernel(
        name,
        KernelRole::BackwardMain,
        dims,
        tiles,
        warps,
        stages,
        registers,
    );
    k.layout = Some(BwdLayout {
        sdp,
        dkv,
        dq,
        k_regs,
        v_regs,
        v_staged,
        split: false,
        do_buffers: 1,
    });
    with_layout(k)
}

/// `k` with its shared memory derived from its backward layout (if any): [`smem_backward`], or
/// [`smem_backward_split`] when split by product. The one place a layout sets the bytes, so
/// that the builders below only change the layout.
const fn with_layout(mut k: KernelConfig) -> KernelConfig {
    if let Some(l) = k.layout {
        let tiles = (k.block_q, k.block_kv);
        let dims = (k.head_dim_qk, k.head_dim_v);
        k.smem_bytes = if l.split {
            smem_backward_split(tiles, dims, k.stages)
        } else {
            smem_backward(
                tiles,
                dims,
                (k.stages, l.do_buffers),
                (l.v_regs, l.v_staged),
            )
        };
    }
    k
}

/// [`backward`] (two Q buffers, not split) with two dO / Stats / delta buffers
/// ([`BwdLayout::do_buffers`]).
const fn double_do(mut k: KernelConfig) -> KernelConfig {
    if let Some(mut l) = k.layout {
        l.do_buffers = 2;
        k.layout = Some(l);
    }
    with_layout(k)
}

/// [`backward`] with product 1 split by product ([`BwdLayout::split`]).
const fn split_by_product(mut k: KernelConfig) -> KernelConfig {
    if let Some(mut l) = k.layout {
        l.split = true;
        l.do_buffers = k.stages;
        k.layout = Some(l);
    }
    with_layout(k)
}

/// [`backward`] built and selected for `routes` only.
const fn for_routes(mut k: KernelConfig, routes: &'static [Route]) -> KernelConfig {
    k.routes = routes;
    k
}

/// Every compiled configuration, smallest envelope first within each role.
pub const KERNELS: &[KernelConfig] = &[
    // Forward: 64-row Q tiles (16 per warp), 64-row K/V tiles streamed.
    kernel(
        "fwd_d32_64x64",
        KernelRole::Forward,
        (32, 32),
        (64, 64),
        4,
        1,
        128,
    ),
    kernel(
        "fwd_d64_64x64",
        KernelRole::Forward,
        (64, 64),
        (64, 64),
        4,
        1,
        168,
    ),
    kernel(
        "fwd_d128_64x64",
        KernelRole::Forward,
        (128, 128),
        (64, 64),
        4,
        1,
        208,
    ),
    kernel(
        "fwd_d192v128_64x64",
        KernelRole::Forward,
        (192, 128),
        (64, 64),
        4,
        1,
        202,
    ),
    // 228 registers since its loads stopped at the padding mask's lengths (2026-12-07, the
    // biased builds; 220 before): still two blocks' worth per SM, as before.
    kernel(
        "fwd_d192_64x64",
        KernelRole::Forward,
        (192, 192),
        (64, 64),
        4,
        1,
        228,
    ),
    // d256: the same tiles, 101,376 B exactly (Q, K and V at 64 x 264 elements each). 253
    // registers since the -inf sink test (2026-12-03; 251 before).
    kernel(
        "fwd_d256_64x64",
        KernelRole::Forward,
        (256, 256),
        (64, 64),
        4,
        1,
        253,
    ),
    // Backward main (bwd_main.cu): 8 warps, each product split over its own warp grid with
    // P and dS through shared memory (FlashAttention-2's layout), so every warp owns a 2-D tile
    // of every product and the dK / dV accumulators are spread over all warps; two Q buffers.
    // Tiles by envelope, within 101,376 B with rows padded: d64 64 x 128 (32 x 32 warp tiles in
    // S / dP and dK / dV) with K's and V's fragments in registers, so that product 1 streams
    // only Q and dO, and P / dS in V's region, grown to hold them (81,408 B; 0.95-0.99 of the
    // time of the same tile without them on the no-bias d64 rows, H100 2026-12-05, call C of
    // docs/gpu-runs/2026-12-05-d64; V alone spills on sm_120); d128 32 x 128 with V's fragments
    // in registers, so that dP streams only dO (64 x 64 with K and V in registers, measured on
    // 2026-12-01, lost 7% on d128: a 64-row KV tile doubles the dQ reductions per FLOP);
    // 192/128 32 x 64, V in registers (K's 48 more registers would spill).
    // d128 and 192/128 have two dO / Stats / delta buffers (`double_do`): without a bias the
    // next dO is copied as the step starts, like the next Q, and one barrier a step goes; with a
    // bias the schedule stays that of one buffer (copying ahead there spilled biased d64 and
    // d128 builds on sm_120, and gained nothing on 192/128). d128 has no room for a second
    // buffer beside V's region (104,960 B), so V is staged through its two Q and two dO buffers
    // as d256's is (they hold V's 128 x 136 exactly; P and dS then take their own space):
    // 87,552 B. No-bias rows, H100: 192/128 0.93 of the time (2026-12-05, call Z1 of
    // docs/gpu-runs/2026-12-05-addr), d128 0.94-0.98 (2026-12-06, call Q2n of
    // docs/gpu-runs/2026-12-06). d64 keeps one buffer: with two (91,136 B) its dense no-bias
    // atomic rows took 1.01-1.02 of the time (Q2n). Grids (sdp, dkv, dq) are warps along each
    // product's rows.
    // d32: d64's layout at 32 columns (before this envelope such dims were padded to 64, and
    // FROST's native d32 kernel took 0.91-0.94 of rime's time on the no-bias d32 rows, call V2
    // of docs/gpu-runs/2026-12-07-day); 249 registers (247 before its loads stopped at the
    // padding mask's lengths, 2026-12-07), so still one block per SM. Call X1:
    // 0.72-0.87 of the padded kernel's time without a deterministic route, FROST / rime
    // 1.26-1.31 without a bias.
    backward(
        "bwd_d32_64x128_v2",
        (32, 32),
        (64, 128),
        (8, 2),
        249,
        (2, 4, 4),
        (true, true, false),
    ),
    backward(
        "bwd_d64_64x128_v2",
        (64, 64),
        (64, 128),
        (8, 2),
        256,
        (2, 4, 4),
        (true, true, false),
    ),
    double_do(backward(
        "bwd_d128_32x128_v2",
        (128, 128),
        (32, 128),
        (8, 2),
        256,
        (1, 4, 2),
        (false, true, true),
    )),
    for_routes(
        double_do(backward(
            "bwd_d192v128_32x64_v2",
            (192, 128),
            (32, 64),
            (8, 2),
            256,
            (2, 2, 2),
            (false, true, false),
        )),
        FUSED_DQ,
    ),
    // 192/128 on two_kernel split by product as d256 is: S warps 32 x 16 with K's 48 fragment
    // registers (12 k steps), dP warps with V's (8 k steps); 65,536 B. Four accumulator chains
    // a warp in product 1 instead of two, and no K reads from shared memory, against 20% more
    // mma on the S warps than each unsplit warp issues. H100, 2026-12-06 (call P1 of
    // docs/gpu-runs/2026-12-06-d192-split): 0.966 of the unsplit kernel's time with a per-batch
    // bias, 0.947 with a broadcast one, 1.004 without a bias.
    for_routes(
        split_by_product(backward(
            "bwd_d192v128_32x64_split",
            (192, 128),
            (32, 64),
            (8, 2),
            256,
            (1, 2, 2),
            (true, true, true),
        )),
        DS_OUT,
    ),
    // d192 (Dqk = Dv = 192): d256's layouts at 192 columns (before this envelope such dims
    // were padded to 256: a third more work and 0.82-0.85 of FROST's speed on the no-bias d192
    // rows, call V2 of docs/gpu-runs/2026-12-07-day). Where the kernel computes dQ two Q and
    // two dO buffers fit (d256 has one Q buffer): 86,528 B; split by product on two_kernel,
    // 73,728 B. Call X1: 0.86-0.93 of the padded kernels' time on the d160 and d192 rows. FROST
    // / rime in one call (Y3 of docs/gpu-runs/2026-12-07-eve): 0.96 and 1.05 on the no-bias d192
    // rows (two_kernel), 1.01 and 1.07 on d160. FROST's own d192 layout on the fused routes
    // (V in registers in its own region, one dO buffer, 89,856 B) took 0.975-1.018 of this
    // entry's time on atomic and 0.98-1.00 on relay, V from shared memory 1.01-1.08 (call Y1):
    // neither adopted.
    for_routes(
        double_do(backward(
            "bwd_d192_32x64_v2",
            (192, 192),
            (32, 64),
            (8, 2),
            255,
            (2, 4, 2),
            (false, true, true),
        )),
        FUSED_DQ,
    ),
    for_routes(
        split_by_product(backward(
            "bwd_d192_32x64_split",
            (192, 192),
            (32, 64),
            (8, 2),
            249,
            (1, 2, 2),
            (true, true, true),
        )),
        DS_OUT,
    ),
    // d256: 32 x 64 (FROST's d256 tile; V in registers), with V staged through the Q and dO
    // buffers so that it needs no space of its own: K 64 x 264, P and dS 32 x 72 each, Q and dO
    // 32 x 264 each. The 64-row KV tile halves the Q / dO traffic and the atomic route's dQ
    // reductions per FLOP against the 64 x 32 tile it replaced (2026-12-03), at 128 dK / dV
    // accumulator registers per thread beside V's 64; grids (2, 2, 2) and (2, 4, 1) spilled.
    // Two entries by route: where the kernel computes dQ (atomic, relay, ordered_dbias) one Q
    // buffer, 77,056 B (a second spilled 56 of 152 specializations). On two_kernel, whose
    // kernel has no dQ product and so reads K only into registers, product 1 is split by
    // product (`split_by_product`): S on four warps holding K's fragments, dP on four holding
    // V's, each warp 32 x 16; K staged like V; two buffers of Q and of dO, 90,112 B. Product 1
    // then reads K from shared memory not at all (twice a step before), and the dK / dV grid 2
    // reads the dO and Q tiles twice instead of four times: ~290 instead of ~380 KB of
    // shared-memory reads a step, which bounds this kernel on the H200 before its tensor
    // throughput does; two barriers a step instead of three. 0.907x the time of the unsplit
    // two-Q-buffer entry (grids (2, 4, 2), 93,952 B) on the d256 suite, H200 2026-12-05 (with
    // dK / dV grid 4: 0.955; the unsplit entry with grid 2: 0.985; docs/performance-log.md).
    for_routes(
        backward(
            "bwd_d256_32x64_v2",
            (256, 256),
            (32, 64),
            (8, 1),
            256,
            (2, 4, 2),
            (false, true, true),
        ),
        FUSED_DQ,
    ),
    for_routes(
        split_by_product(backward(
            "bwd_d256_32x64_split",
            (256, 256),
            (32, 64),
            (8, 2),
            256,
            (1, 2, 2),
            (true, true, true),
        )),
        DS_OUT,
    ),
    // dQ GEMM of the two_kernel route: 128-row Q tiles (a multiple of the main kernel's Q tile;
    // 32 rows per warp, 4 x 2 warps), chunks of dS that divide the 128-column rounding of Skv,
    // in a ring of 2-3 stages (dq_gemm.cu): 64-column chunks, 32 for d256, whose 264-element K
    // rows would not fit two 64-row chunks. Four 32-column stages at d128 and 192/128 (three in
    // flight, 96 columns ahead) took 1.03x and 1.10x this GEMM's time (ncu, H100, 2026-12-06,
    // call A1 of docs/gpu-runs/2026-12-06-pdl, with a barrier per 32 columns): not adopted.
    kernel(
        "dq_gemm_d32_128x64_v2",
        KernelRole::DqGemm,
        (32, 32),
        (DQ_GEMM_ROWS, 64),
        8,
        3,
        72,
    ),
    kernel(
        "dq_gemm_d64_128x64_v2",
        KernelRole::DqGemm,
        (64, 64),
        (DQ_GEMM_ROWS, 64),
        8,
        3,
        94,
    ),
    kernel(
        "dq_gemm_d128_128x64_v2",
        KernelRole::DqGemm,
        (128, 128),
        (DQ_GEMM_ROWS, 64),
        8,
        2,
        144,
    ),
    kernel(
        "dq_gemm_d192v128_128x64_v2",
        KernelRole::DqGemm,
        (192, 128),
        (DQ_GEMM_ROWS, 64),
        8,
        2,
        188,
    ),
    kernel(
        "dq_gemm_d192_128x64_v2",
        KernelRole::DqGemm,
        (192, 192),
        (DQ_GEMM_ROWS, 64),
        8,
        2,
        188,
    ),
    kernel(
        "dq_gemm_d256_128x32_v2",
        KernelRole::DqGemm,
        (256, 256),
        (DQ_GEMM_ROWS, 32),
        8,
        3,
        224,
    ),
];

/// H200 (sm_90) opt-in shared memory per block, bytes.
pub const H200_SMEM_PER_BLOCK: u64 = 232_448;

/// Backward main configurations tuned for the H200's larger shared memory, for measuring what
/// the SM120 cap costs there (`rime bench --tuning h200`). They are the SM120 entries of their
/// envelope and Q tile with what 101,376 B rules out: V kept in shared memory beside P and dS
/// (d128: 113,408 B; no V fragments in registers), a 128-row KV tile for 192/128 (each streamed
/// Q / dO tile and dQ partial then serves twice the KV rows). The analyzer never selects them;
/// d64 has none.
pub const H200_TUNED: &[KernelConfig] = &[
    backward(
        "bwd_d128_32x128_v2_h200",
        (128, 128),
        (32, 128),
        (8, 2),
        256,
        (1, 4, 2),
        (false, false, false),
    ),
    backward(
        "bwd_d192v128_32x128_v2_h200",
        (192, 128),
        (32, 128),
        (8, 2),
        256,
        (2, 4, 2),
        (false, false, false),
    ),
];

/// The H200-tuned configuration of `main`'s envelope and Q tile, if there is one.
pub fn h200_tuned(main: &KernelConfig) -> Option<&'static KernelConfig> {
    H200_TUNED.iter().find(|k| k.interchangeable(main))
}

/// The smallest configuration of `role` whose envelope holds (dqk, dv) (for `BackwardMain`,
/// the first entry of the envelope, whatever its routes: [`select_main`] picks by route).
pub fn select(role: KernelRole, dqk: i64, dv: i64) -> Option<&'static KernelConfig> {
    KERNELS.iter().find(|k| k.role == role && k.fits(dqk, dv))
}

/// The backward main kernel of `route` for (dqk, dv): the smallest envelope that holds them,
/// and in it the entry built for `route`.
pub fn select_main(route: Route, dqk: i64, dv: i64) -> Option<&'static KernelConfig> {
    KERNELS
        .iter()
        .find(|k| k.role == KernelRole::BackwardMain && k.fits(dqk, dv) && k.serves(route))
}

/// True when backward main kernel `main` has ragged (THD) builds that sum a broadcast bias's
/// dBias in the kernel (atomic and relay: the f32 accumulator; ordered_dbias: the partials):
/// head dims of at most (128, 128). The d192/128 and d256 ragged builds spill 4 B there
/// (sm_120 fitness, 2026-12-03), so the analyzer refuses them (`SMX014`) and they are not
/// built.
pub fn ragged_dbias_sum_fits(main: &KernelConfig) -> bool {
    main.head_dim_qk <= 128 && main.head_dim_v <= 128
}

/// The configuration of `role` compiled for exactly the envelope of `main`.
pub fn companion(role: KernelRole, main: &KernelConfig) -> Option<&'static KernelConfig> {
    KERNELS.iter().find(|k| {
        k.role == role && k.head_dim_qk == main.head_dim_qk && k.head_dim_v == main.head_dim_v
    })
}

/// The envelopes of `role`, (Dqk, Dv), each once (an envelope may have an entry per group of
/// routes), in table order.
pub fn envelope_dims(role: KernelRole) -> Vec<(u32, u32)> {
    let mut dims: Vec<(u32, u32)> = Vec::new();
    for k in KERNELS.iter().filter(|k| k.role == role) {
        let d = (k.head_dim_qk, k.head_dim_v);
        if !dims.contains(&d) {
            dims.push(d);
        }
    }
    dims
}

/// The envelopes of `role`, as `(Dqk, Dv)` text for reports.
pub fn envelopes(role: KernelRole) -> String {
    envelope_dims(role)
        .iter()
        .map(|(dqk, dv)| format!("({dqk}, {dv})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// docs/sm120-kernels.md, generated from [`KERNELS`].
pub fn kernels_markdown() -> String {
    let mut out = String::from(
        "# SM120 kernel configurations\n\n<!-- Generated from crates/analyzer/src/sm120/kernels.rs \
         by `RIME_UPDATE_DOCS=1 cargo test -p rime-analyzer kernels_doc`; do not edit. -->\n\n\
         Every configuration the analyzer can select; the CUDA engine implements each one. Shared \
         memory is derived from the tiles (`smem_forward`, `smem_backward`, `smem_backward_split`, `smem_dq_gemm`) and must \
         stay within 101,376 B per block; registers are the per-thread budget the fitness test \
         holds every specialization to (ptxas, sm_120), from which the cost model counts blocks \
         per SM. A backward main entry is built and selected for the routes listed (`all`: every route).\n\n\
         | name | role | envelope (Dqk, Dv) | Q tile | KV tile | warps | stages | smem (B) | registers | dtypes | routes |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let row = |k: &KernelConfig| {
        let dtypes: Vec<&str> = k.dtypes.iter().map(|d| d.name()).collect();
        let routes = if k.role != KernelRole::BackwardMain {
            "-".to_string()
        } else if k.routes == Route::ALL.as_slice() {
            "all".to_string()
        } else {
            let names: Vec<&str> = k.routes.iter().map(|r| r.name()).collect();
            names.join(", ")
        };
        format!(
            "| `{}` | {} | ({}, {}) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            k.name,
            k.role.name(),
            k.head_dim_qk,
            k.head_dim_v,
            k.block_q,
            k.block_kv,
            k.warps,
            k.stages,
            k.smem_bytes,
            k.registers,
            dtypes.join(", "),
            routes
        )
    };
    out.extend(KERNELS.iter().map(row));
    out.push_str(
        "\n## H200-tuned configurations (benchmarks only)\n\n`H200_TUNED`: never selected by the \
         analyzer; `rime bench --tuning h200` runs them in place of the SM120 entry of the same \
         envelope and Q tile, to measure what the 101,376 B cap costs on an H200 (232,448 B per \
         block).\n\n\
         | name | role | envelope (Dqk, Dv) | Q tile | KV tile | warps | stages | smem (B) | registers | dtypes | routes |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    out.extend(H200_TUNED.iter().map(row));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_doc_is_fresh() {
        crate::generated::assert_fresh("docs/sm120-kernels.md", &kernels_markdown());
    }

    #[test]
    fn every_entry_fits_sm120_and_is_consistent() {
        for k in KERNELS {
            assert!(
                u64::from(k.smem_bytes) <= SM120_SMEM_PER_BLOCK,
                "{}: {}",
                k.name,
                k.smem_bytes
            );
            assert!(
                k.head_dim_qk % 8 == 0 && k.head_dim_v % 8 == 0,
                "{}",
                k.name
            );
            assert!(k.block_q % 16 == 0 && k.block_kv % 16 == 0, "{}", k.name);
            assert!(k.warps >= 4 && k.stages >= 1, "{}", k.name);
            assert!(KERNELS.iter().filter(|o| o.name == k.name).count() == 1);
            assert_eq!(
                k.layout.is_some(),
                k.role == KernelRole::BackwardMain,
                "{}",
                k.name
            );
        }
        for k in KERNELS.iter().chain(H200_TUNED) {
            if let Some(l) = k.layout {
                assert!(l.tiles_evenly(k), "{}: warp grids {l:?}", k.name);
                let tiles = (k.block_q, k.block_kv);
                let dims = (k.head_dim_qk, k.head_dim_v);
                assert!(
                    !l.v_staged
                        || (l.v_regs && v_stage_fits(tiles, dims, (k.stages, l.do_buffers))),
                    "{}: a staged V is held in registers and fits the Q and dO buffers",
                    k.name
                );
                // What bwd_main.cu asserts for SPLIT_SDP.
                assert!(
                    !l.split
                        || (l.k_regs
                            && l.v_regs
                            && l.v_staged
                            && k.stages == 2
                            && k.routes == [Route::TwoKernel]
                            && split_stage_fits(tiles, k.stages)),
                    "{}: a layout split by product",
                    k.name
                );
            }
        }
        // Every backward envelope has one main kernel per route, with the same tiles (a plan's
        // workspace depends on them, not on the route's entry), a forward and a dQ GEMM.
        for main in KERNELS
            .iter()
            .filter(|k| k.role == KernelRole::BackwardMain)
        {
            for route in Route::ALL {
                let dims = (main.head_dim_qk.into(), main.head_dim_v.into());
                let entries: Vec<_> = KERNELS
                    .iter()
                    .filter(|k| k.role == KernelRole::BackwardMain && k.is_exact(dims.0, dims.1))
                    .filter(|k| k.serves(route))
                    .collect();
                assert_eq!(entries.len(), 1, "{}: {route}", main.name);
                let k = entries[0];
                assert!(k.block_q == main.block_q && k.block_kv == main.block_kv);
            }
            assert!(
                companion(KernelRole::Forward, main).is_some(),
                "{}",
                main.name
            );
            let dq = companion(KernelRole::DqGemm, main).expect("dq gemm");
            assert!(dq.block_q % main.block_q == 0 && dq.block_q >= main.block_q);
            assert!(
                crate::sm120::DS_PITCH_COLUMNS % u64::from(dq.block_kv) == 0,
                "dS columns are rounded to DS_PITCH_COLUMNS"
            );
        }
    }

    #[test]
    fn h200_tuned_entries_need_the_h200_and_match_an_sm120_entry() {
        for k in H200_TUNED {
            let smem = u64::from(k.smem_bytes);
            assert!(
                smem > SM120_SMEM_PER_BLOCK && smem <= H200_SMEM_PER_BLOCK,
                "{}",
                k.name
            );
            let main = select(k.role, k.head_dim_qk.into(), k.head_dim_v.into()).expect("entry");
            assert_eq!(h200_tuned(main).map(|t| t.name), Some(k.name));
            assert!(KERNELS.iter().all(|o| o.name != k.name));
        }
        assert_eq!(
            smem_backward((32, 128), (128, 128), (2, 1), (false, false)),
            113_408
        );
        assert_eq!(
            smem_backward((32, 128), (192, 128), (2, 1), (false, false)),
            137_984
        );
    }

    #[test]
    fn selection_pads_up_to_the_smallest_envelope() {
        let pick = |dqk, dv| select(KernelRole::BackwardMain, dqk, dv).map(|k| k.name);
        assert_eq!(pick(64, 64), Some("bwd_d64_64x128_v2"));
        assert_eq!(pick(40, 64), Some("bwd_d64_64x128_v2"));
        assert_eq!(pick(32, 32), Some("bwd_d32_64x128_v2"));
        assert_eq!(pick(8, 24), Some("bwd_d32_64x128_v2"));
        assert_eq!(pick(32, 40), Some("bwd_d64_64x128_v2"));
        assert_eq!(pick(64, 128), Some("bwd_d128_32x128_v2"));
        assert_eq!(pick(192, 128), Some("bwd_d192v128_32x64_v2"));
        assert_eq!(pick(160, 96), Some("bwd_d192v128_32x64_v2"));
        assert_eq!(pick(192, 192), Some("bwd_d192_32x64_v2"));
        assert_eq!(pick(160, 160), Some("bwd_d192_32x64_v2"));
        assert_eq!(pick(128, 192), Some("bwd_d192_32x64_v2"));
        assert_eq!(pick(200, 192), Some("bwd_d256_32x64_v2"));
        assert_eq!(pick(256, 128), Some("bwd_d256_32x64_v2"));
        assert_eq!(pick(256, 256), Some("bwd_d256_32x64_v2"));
        assert_eq!(pick(264, 256), None);
        let by_route = |route, dqk, dv| select_main(route, dqk, dv).map(|k| k.name);
        assert_eq!(
            by_route(Route::TwoKernel, 256, 256),
            Some("bwd_d256_32x64_split")
        );
        assert_eq!(
            by_route(Route::TwoKernel, 160, 192),
            Some("bwd_d192_32x64_split")
        );
        assert_eq!(
            by_route(Route::TwoKernel, 200, 136),
            Some("bwd_d256_32x64_split")
        );
        for route in [Route::Atomic, Route::Relay, Route::OrderedDbias] {
            assert_eq!(by_route(route, 256, 256), Some("bwd_d256_32x64_v2"));
        }
        assert_eq!(by_route(Route::TwoKernel, 128, 128), pick(128, 128));
        assert_eq!(
            smem_backward((32, 64), (256, 256), (2, 1), (true, true)),
            93_952
        );
        assert_eq!(smem_backward_split((32, 64), (256, 256), 2), 90_112);
        assert_eq!(
            smem_backward((32, 128), (128, 128), (2, 1), (true, false)),
            96_000
        );
        assert_eq!(
            smem_backward((64, 128), (64, 64), (2, 1), (false, false)),
            99_840
        );
        assert_eq!(
            smem_backward((32, 64), (192, 128), (2, 1), (true, false)),
            77_568
        );
        // Two dO / Stats / delta buffers: one more 32 x 136 dO tile and two f32 rows.
        assert_eq!(
            smem_backward((32, 64), (192, 128), (2, 2), (true, false)),
            77_568 + 2 * 32 * 136 + 8 * 32
        );
        let d192 = select(KernelRole::BackwardMain, 192, 128)
            .and_then(|k| k.layout)
            .expect("d192");
        assert_eq!(d192.do_buffers, 2);
        let split = select_main(Route::TwoKernel, 256, 256)
            .and_then(|k| k.layout)
            .expect("split");
        assert_eq!(split.do_buffers, 2);
        assert_eq!(
            smem_backward((64, 32), (256, 256), (1, 1), (true, true)),
            95_232
        );
        assert_eq!(smem_forward(64, 64, 256, 256, 1), 101_376);
        assert_eq!(smem_forward(64, 64, 128, 128, 1), 52_224);
    }
}
