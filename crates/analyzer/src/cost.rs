//! The cost model behind the heuristics: a rough, documented time estimate per configuration.
//!
//! time = max(FLOPs / (mma rate x efficiency), bytes / bandwidth) x (1 + relay penalty)
//!        + atomics + two_kernel's dQ pass + ordered_dbias's partials pass
//!        + kernel launches x launch overhead,
//! then x (1 + workspace / free memory) so that memory-hungry routes lose ties.
//!
//! - FLOPs: forward 2·B·Hq·Sq·Skv·(Dqk + Dv), backward 2.5x that (docs/sdpa-backward.md, section 2),
//!   halved for a causal mask without a window; SM120 kernels pay for their envelope (padded
//!   head dims do full-width math).
//! - Bytes: every bound tensor once, plus route traffic: the f32 dQ accumulator is zeroed,
//!   written back once and read by the convert kernel (atomic, relay).
//! - Atomics come after max(compute, memory), because the warps that do the math issue them
//!   between their MMAs: the atomic route's dQ partial sums (one accumulator per KV tile, halved
//!   for a causal mask) at [`DQ_REDUCTION_COST`], and a broadcast bias's dBias adds (atomic and
//!   relay: one f32 per score pair, into an accumulator every batch adds to) at
//!   [`DBIAS_ATOMIC_COST`], each times one byte's time at the bandwidth. They are what makes
//!   atomic lose to two_kernel with 64-row KV tiles (d256, 192/128) and with a broadcast dBias.
//! - ordered_dbias's convert kernel reads its f32 dBias partials after the main kernel: that
//!   read is added at the bandwidth, not hidden under compute.
//! - two_kernel adds [`TWO_KERNEL_PASS`] of its separate dQ pass, estimated on its own: the dS
//!   round trip (written by the main kernel, read back) at the bandwidth, at most
//!   [`DS_PASS_MAX_GBS`], plus the dQ GEMM's
//!   2·B·Hq·Sq·round_up(Skv, 128)·Dqk FLOPs at the mma rate times the wave utilisation of its
//!   own grid, both halved for a causal mask and shrunk with a ragged node's fill (the GEMM
//!   walks only the KV chunks the band and the sequence lengths leave its rows, dq_gemm.cu), and
//!   takes off [`DQ_PRODUCT_SHARE`] of the compute term, the dQ product its main kernel skips;
//!   a broadcast dBias adds the reduction's read of dS, halved and shrunk likewise
//!   (dbias_reduce.cu reads only the rows the main kernel walked).
//! - Rates: the target's mma.sync rate at [`SM120_EFFICIENCY`], times the wave utilisation of
//!   the main kernel's grid (blocks / (waves x SMs x blocks per SM), blocks per SM from shared
//!   memory, threads and registers per SM: the 8-warp backward kernels hold 256 registers per
//!   thread and so run once per SM on SM120 and the H200 alike, the 4-warp 192/128 one twice on
//!   an H200 and once on SM120, whose 100 KiB per SM takes one of its 67 KB blocks); the CPU
//!   reference engine runs at [`HOST_TFLOPS`] / [`HOST_GBS`] whatever the target.
//! - On a GPU target the CPU reference ranks after every GPU configuration (see
//!   [`mod@crate::heuristics`]): it is a reference, and its data would cross PCIe.
//! - Determinism: relay serialises the KV-tile blocks of one Q tile: [`RELAY_PENALTY`] of the
//!   kernel time for a 128-row KV tile, scaled by the square root of 128 / KV tile, and by
//!   [`RELAY_CAUSAL_FACTOR`] under a causal mask.
//!
//! First calibration (H200, 2026-11-30 00:26 UTC, `rime bench --filter det --route R` on the
//! standard suite's 26 deterministic rows, docs/gpu-runs/2026-11-30-record/routes): relay /
//! atomic 1.18-1.45 with the 128-row kernels, two_kernel / atomic 1.04-1.15 without a causal
//! mask and 1.02-1.56 with one; [`RELAY_PENALTY`] and a flat share of two_kernel's dQ pass
//! picked the faster of relay and two_kernel on 23 of the 26 rows then. The kernels have
//! changed since (relay / atomic is 1.46-1.60 on the same rows now), and the test that held
//! the model to those timings was replaced by one on the calls below.
//!
//! Calibration of the atomic terms (H200, 2026-12-03 20:13-20:23 UTC, calls L1 and L3 of
//! docs/gpu-runs/2026-12-03-night: every non-deterministic row of the standard, sinks, thd and
//! d256 suites timed on atomic and on two_kernel in one call): with them the model ranks the
//! faster of the two first on all 63 rows (a test in the CLI's bench command,
//! `route_choice_follows_the_h200_timings_of_every_suite`, holds every timed row to that);
//! 0.3-0.4 for the dQ term and 2-6 for the dBias term do, and the centre is taken. The previous
//! form (the dQ reductions at 0.6 of the bandwidth beside the bytes, no dBias term) ranked 44,
//! and kept atomic on the broadcast-dBias rows, up to 1.82x slower than two_kernel (b2 s4096
//! d64: 4.65 against 2.56 ms). ordered_dbias, whose partials' read was hidden under compute,
//! then ranked first on a deterministic and a non-deterministic GQA broadcast row; it measured
//! 1.04-1.45x two_kernel's time on 18 of the 20 broadcast rows of 2026-12-02 (call M; not
//! timed again since). The same calls' deterministic rows, relay against two_kernel: with the
//! relay penalty alone the faster first on 23 of the standard suite's 26, and not on the sinks
//! suite's two causal GQA rows (relay 1.54x slower); the 5 misses were all causal, and
//! [`RELAY_CAUSAL_FACTOR`] fixes them (a larger relay penalty instead, 0.45, moved the thd
//! suite's 2 non-causal deterministic rows to two_kernel, 1.14-1.15x slower there).
//!
//! Recalibration for the pipelined dQ GEMM (H200, 2026-12-04 18:47-18:53 UTC, call C of
//! docs/gpu-runs/2026-12-04: every route of the four suites in one call): two_kernel got
//! 3-16% faster than in calls L1 / L3 (atomic and relay unchanged, 0.98-1.03), and the
//! previous two_kernel term, 0.3 of the dQ pass with no saving, ranked the fastest timed route
//! first on 74 of the 95 rows timed on two routes or more; with [`DQ_PRODUCT_SHARE`] and 0.4 of
//! a dQ pass charged in full whatever the mask, 91 of 95.
//!
//! Recalibration for the band walk (an **H100**, the only machine lent, 2026-12-05 14:48-14:54
//! UTC, call R7 of docs/gpu-runs/2026-12-05-d256: every route of the four suites in one call,
//! binary of 2a94f7d): the dQ GEMM had begun to walk only the band's KV chunks, and the
//! previous term, which charged the whole pass, ranked the fastest first on 75 of the 95 rows
//! (71 with the `h200` profile) and kept relay on the deterministic thd rows, where two_kernel
//! ran 1.41-1.77x faster. With the pass halved for a causal mask and shrunk with the ragged
//! fill, 89 rows rank the fastest first along a ridge where the pass share is about twice
//! [`DQ_PRODUCT_SHARE`] plus 0.05-0.15 (with either profile; off it 70-88); at a saving of
//! 0.2, 0.45-0.55 of the pass with the `h100` profile and 0.45-0.6 with `h200`, and 0.5 is
//! taken ([`DQ_REDUCTION_COST`] anywhere in 0.3-0.5 gives the same). Of the other 6 rows, 5
//! lose 0.2-3.5%, and the thd suite's causal d64 row loses 10% (atomic at 1.10x two_kernel's
//! time): no setting of these terms moves it without losing others.
//!
//! Checked again (an H100, 2026-12-05 22:36-22:40 UTC, calls Y1-Y2 of
//! docs/gpu-runs/2026-12-05-addr: the same routes and suites after the dQ convert's and the
//! main kernel's instruction cuts, atomic 3-5% faster, two_kernel 1%, and 192/128's two dO
//! buffers): 89 of the 95 rows rank the fastest first with these constants, and no point of
//! the grid two_kernel's pass 0.35-0.7 x saving 0.1-0.3 x [`DQ_REDUCTION_COST`] 0.25-0.45
//! ranks more (0.5 / 0.2 / 0.35 among the 89s), so they stay. The misses are now two causal
//! biased rows (two_kernel where atomic runs 1.044x and 1.078x faster) and four within 3%.
//!
//! Recalibration for the tiled dQ accumulator (an H100, 2026-12-06 09:13-09:17 UTC, call K1 of
//! docs/gpu-runs/2026-12-06-dq-tiled: the same routes and suites, binary `rime_tile`): laid out
//! in 8 x 8 tiles so that a warp's 8-byte reductions cover 256 consecutive bytes, the atomic
//! route ran 0.85-0.97x as long as before (relay 0.91-0.96x, two_kernel unchanged), and atomic
//! became the faster route on every d128 row without a broadcast-over-batch dBias (1.04-1.15x
//! faster than two_kernel). With [`DQ_REDUCTION_COST`] at 0.35 the model ranked 69 of the 95
//! rows fastest first; at 0.125 (0.075-0.175 the same) 92. The misses: two causal rows with a
//! per-batch bias, where two_kernel runs 1.099x (b8 s1024 d64) and 1.042x (192/128) atomic's
//! time, and the non-causal 192/128 one at 1.002x. Two_kernel's terms were not refitted.

use rime_graph::{Graph, Node, Port, SdpaShape};

use crate::rules::BiasBroadcast;
use crate::sm120::kernels::{companion, KernelRole};
use crate::sm120::KernelConfig;
use crate::{EngineConfig, EngineKind, RegionKind, Route, Target};

/// Fraction of the mma.sync peak an attention kernel is planned to reach: a planning constant,
/// roughly what FlashAttention-2-class backward kernels reach (rime's own measured rates on the
/// H200 are in docs/performance-log.md).
pub const SM120_EFFICIENCY: f64 = 0.5;
/// Host f32 rate of the CPU reference engine, TFLOP/s.
pub const HOST_TFLOPS: f64 = 0.05;
/// Host memory bandwidth seen by the CPU reference engine, GB/s.
pub const HOST_GBS: f64 = 20.0;
/// Extra time of the relay route's ordered dQ accumulation with 128-row KV tiles, as a fraction
/// (scaled by the square root of 128 / the kernel's KV tile).
pub const RELAY_PENALTY: f64 = 0.33;
/// Factor on the relay penalty under a causal mask: the turns of a Q tile's KV tiles form a
/// wavefront whose waits do not halve with the masked work. Measured on the H200 (call L1 and
/// L3, 2026-12-03): relay's time over atomic's fell to 0.57-0.91 of its non-causal extra under a
/// causal mask while the work halved (1.39-1.72x atomic's time dense, 2.30x on the sinks suite's
/// b1 h64/8 s4096 d64 causal row, against 1.46-1.60x without the mask), and with the factor at 1
/// relay ranked first on 5 dense causal deterministic rows where two_kernel ran 1.10-1.54x
/// faster. 1.2-2 rank the faster route first on every timed row of those calls; 1.5 is taken.
pub const RELAY_CAUSAL_FACTOR: f64 = 1.5;
/// Share of two_kernel's separate dQ pass (the dS round trip at the bandwidth and the dQ GEMM at
/// the mma rate times its own grid's wave utilisation, estimated on their own, both over the
/// band's work only) that shows in its total time. Fitted on an H100 with the band-walking dQ
/// GEMM (call R7, 2026-12-05: every route of the four suites in one call,
/// docs/gpu-runs/2026-12-05-d256): with [`DQ_PRODUCT_SHARE`] at 0.2, 0.45-0.55 rank the fastest
/// timed route first on 89 of the 95 rows timed on two routes or more with the `h100` profile
/// (0.4 on 88, 0.35 on 86, 0.6 on 70) and 0.45-0.6 with `h200`; 0.5 is taken.
pub const TWO_KERNEL_PASS: f64 = 0.5;
/// The bandwidth, GB/s, at which two_kernel's dS round trip (the main kernel's dS stores and
/// the dQ GEMM's reads) is charged at most. Measured on an H200 (call U6 of
/// docs/gpu-runs/2026-12-07-close, 2026-12-07): two_kernel took 1.07-1.13x atomic's time on
/// the d128 envelope's rows (padded d96), as it does on the H100 (the d128 rows of call K1,
/// 1.12-1.15x), so the H200's 4.8 TB/s did not shorten the pass against the H100's 3.35: the
/// GEMM's stores and loads do not run at the full rate. At the full rate the `h200` profile
/// put those rows on two_kernel; held to 2,700-4,000 GB/s it ranks the fastest route first on
/// all 36 rows of U6 timed on two routes, and call K1's check (the `h100` profile, where the
/// cap does not bind) still passes down to 2,700. 3,350, the H100's bandwidth, is taken: no
/// profile but `h200` (and a live H200) is changed by it.
pub const DS_PASS_MAX_GBS: f64 = 3350.0;
/// Share of the main kernel's compute that two_kernel saves: its main kernel skips the dQ
/// product, one of the backward's five (each half a forward's FLOPs). Subtracted from the
/// compute term (halved under a causal mask, shrunk with a ragged node's fill, as the dQ pass
/// is since the dQ GEMM walks only the band). With [`TWO_KERNEL_PASS`] it sets where two_kernel
/// wins: fitted together on call R7 (see there).
pub const DQ_PRODUCT_SHARE: f64 = 0.2;
/// Time of one byte of the atomic route's f32 dQ partial sums, as a multiple of one byte's time
/// at the target's bandwidth, added after max(compute, memory): every KV-tile block adds its
/// partial of every Q row it reaches (8-byte `red.global.add` into the accumulator's 8 x 8
/// tiles, each warp's reduction on 256 consecutive bytes) from the warps that do the math, so
/// the reductions do not hide under it; the traffic is the dQ accumulator times the KV tiles
/// (halved for a causal mask). Fitted on an H100 (call K1, 2026-12-06, see the module doc):
/// 0.075-0.175 rank the fastest timed route first on 92 of 95 rows; 0.05 puts the 64-row KV
/// tiles' no-bias 192/128 rows on atomic (1.02-1.05x slower than two_kernel), 0.2 and above
/// keep d128 on two_kernel (up to 1.15x slower). It was 0.35 before the tiled accumulator
/// (calls L1 and L3 of 2026-12-03 on the H200, R7 of 2026-12-05 on an H100), when each warp's
/// reduction touched eight rows' lines.
pub const DQ_REDUCTION_COST: f64 = 0.125;
/// Time of one byte of f32 dBias adds (atomic and relay routes) for a bias that broadcasts over
/// the batch or the heads (one per score pair, into one accumulator that every batch adds to), as a
/// multiple of one byte's time at the target's bandwidth, added after max(compute, memory).
/// Measured on the H200 (call L1, 2026-12-03): a broadcast bias over a per-batch one costs
/// atomic 0.23-2.5 ms, 1.0-2.3 TB/s of adds (the slowest at Sq = Skv = 4096, whose
/// accumulator is 1 GiB, twenty times the L2), and two_kernel, which sums dBias from its dS
/// workspace, ran 1.05-1.82x faster than atomic on every such row; 2-6 rank all of them, 3 is
/// taken.
pub const DBIAS_ATOMIC_COST: f64 = 3.0;
/// Fixed cost of one kernel launch, seconds.
pub const LAUNCH_SECONDS: f64 = 5e-6;
/// Shared memory the driver reserves per block on sm_80 and newer, bytes.
pub const SMEM_RESERVED_PER_BLOCK: u64 = 1024;
/// 32-bit registers per SM on sm_80, sm_90 and sm_120.
pub const REGISTERS_PER_SM: u64 = 65_536;

/// What bounds an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bound {
    /// Tensor-core arithmetic.
    Compute,
    /// Memory traffic.
    Memory,
}

impl Bound {
    /// Stable name.
    pub const fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

/// The estimate for one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostEstimate {
    /// Estimated seconds.
    pub seconds: f64,
    /// FLOPs executed (with envelope padding).
    pub flops: f64,
    /// Bytes moved.
    pub bytes: f64,
    /// Bytes of f32 dQ partial sums reduced into the accumulator (atomic route), counted at
    /// [`DQ_REDUCTION_COST`] after max(compute, memory).
    pub reduction_bytes: f64,
    /// Bytes of f32 dBias adds into a broadcast bias's accumulator (atomic, relay), counted at
    /// [`DBIAS_ATOMIC_COST`] after max(compute, memory).
    pub dbias_atomic_bytes: f64,
    /// Seconds the two kinds of atomic traffic add.
    pub atomic_seconds: f64,
    /// The relay penalty applied, as a fraction (relay, ordered_dbias; 0 for the others).
    pub relay_penalty: f64,
    /// Arithmetic rate assumed, FLOP/s.
    pub rate: f64,
    /// Bandwidth assumed, B/s.
    pub bandwidth: f64,
    /// What bounds it.
    pub bound: Bound,
    /// Kernel launches.
    pub launches: u32,
    /// Blocks in the main kernel's grid (0 for the CPU).
    pub blocks: u64,
    /// Fraction of the launched waves' block slots the grid fills (1 for the CPU).
    pub utilization: f64,
}

/// Blocks of `kernel` resident at once on one SM of `target`: the least of what shared memory,
/// threads and registers allow.
pub fn blocks_per_sm(kernel: &KernelConfig, target: &Target) -> u64 {
    let by_smem = target.smem_per_sm / (u64::from(kernel.smem_bytes) + SMEM_RESERVED_PER_BLOCK);
    let by_threads = u64::from(target.max_threads_per_sm / kernel.threads().max(1));
    let by_registers = REGISTERS_PER_SM / u64::from((kernel.threads() * kernel.registers).max(1));
    by_smem.min(by_threads).min(by_registers).min(32)
}

/// Tiles of `tile` rows that cover `len` rows.
fn tiles(len: i64, tile: u32) -> f64 {
    (len as f64 / f64::from(tile.max(1))).ceil()
}

/// Fraction of the block slots of the waves a grid of `blocks` blocks of `kernel` launches that it
/// fills on `target` (blocks / (waves x SMs x blocks per SM)).
fn wave_utilization(blocks: f64, kernel: &KernelConfig, target: &Target) -> f64 {
    let slots = (f64::from(target.sm_count) * blocks_per_sm(kernel, target) as f64).max(1.0);
    let waves = (blocks / slots).ceil().max(1.0);
    (blocks / (waves * slots)).clamp(1e-6, 1.0)
}

/// Blocks of a kernel's grid: one per (b, KV head, KV tile) for the backward main kernel (a
/// block loops over the query heads of its group), one per (b, query head, Q tile) for the
/// forward and the dQ GEMM.
fn grid(kernel: &KernelConfig, shape: &SdpaShape) -> f64 {
    let s = shape;
    match kernel.role {
        KernelRole::BackwardMain => {
            s.b as f64 * s.hk.max(s.hv) as f64 * tiles(s.skv, kernel.block_kv)
        }
        KernelRole::Forward | KernelRole::DqGemm => {
            s.b as f64 * s.hq as f64 * tiles(s.sq, kernel.block_q)
        }
    }
}

/// Estimates one configuration of one node.
pub fn estimate(
    graph: &Graph,
    node: &Node,
    shape: &SdpaShape,
    config: &EngineConfig,
    target: &Target,
) -> CostEstimate {
    let backward = node.op == rime_graph::OpKind::SdpaBackward;
    let (dqk, dv) = match config.kernel {
        Some(k) => (f64::from(k.head_dim_qk), f64::from(k.head_dim_v)),
        None => (shape.dqk as f64, shape.dv as f64),
    };
    let s = shape;
    let scores = s.b as f64 * s.hq as f64 * s.sq as f64 * s.skv as f64;
    let mut flops = 2.0 * scores * (dqk + dv);
    if backward {
        flops *= 2.5;
    }
    // The band as the engines see it: a bound beyond the sequences masks nothing.
    let band = crate::problem::ProblemShape::of(shape)
        .map(|p| crate::Band::normalized(&node.options, p.sq, p.skv));
    let causal = band.is_some_and(|b| b.right == Some(0) && b.left.is_none());
    // The share of the B x Sq x Skv score pairs the kernels reach: half under a causal mask,
    // and the kernels skip the tiles past each sequence's length, which only a ragged layout's
    // token totals bound before execution. Every term of work below shrinks with it.
    let work_share = if causal { 0.5 } else { 1.0 } * ragged_fill(graph, node, shape);
    flops *= work_share;
    let mut bytes = tensor_bytes(graph, node) + route_bytes(config);
    let (rate, bandwidth) = match config.engine {
        EngineKind::CpuReference => (HOST_TFLOPS * 1e12, HOST_GBS * 1e9),
        EngineKind::Sm120 => (
            target.mma_tflops * 1e12 * SM120_EFFICIENCY,
            target.bandwidth_gbs * 1e9,
        ),
    };
    let launches = launches(config, backward, graph, node, shape);
    let (blocks, utilization) = match config.kernel {
        Some(k) if config.engine == EngineKind::Sm120 => {
            let blocks = grid(k, shape);
            (blocks, wave_utilization(blocks, k, target))
        }
        _ => (0.0, 1.0),
    };
    let compute = flops / (rate * utilization).max(1.0);
    // The atomic route's dQ partials come from the KV tiles that run, over the rows they
    // reach: they shrink with the work.
    let reduction_bytes = dq_reduction_bytes(config, shape, work_share);
    // A route that adds a broadcast bias's dBias with atomics has its accumulator in the
    // workspace (atomic and relay; two_kernel sums dS, ordered_dbias writes partials).
    let dbias_atomic_bytes = if config.workspace.region(RegionKind::DbiasAccum).is_some() {
        scores * 4.0 * work_share
    } else {
        0.0
    };
    let memory = bytes / bandwidth.max(1.0);
    let bound = if compute >= memory {
        Bound::Compute
    } else {
        Bound::Memory
    };
    let atomic_seconds = (reduction_bytes * DQ_REDUCTION_COST
        + dbias_atomic_bytes * DBIAS_ATOMIC_COST)
        / bandwidth.max(1.0);
    let relay = match (config.route, config.kernel) {
        (Some(Route::Relay | Route::OrderedDbias), Some(k)) => relay_penalty(k, causal),
        _ => 0.0,
    };
    let mut seconds = compute.max(memory);
    match (config.route, config.kernel) {
        (Some(Route::Relay), Some(_)) => seconds *= 1.0 + relay,
        (Some(Route::OrderedDbias), Some(_)) => {
            seconds *= 1.0 + relay;
            // The convert kernel sums the dBias partials after the main kernel: a pass of its
            // own, not hidden under the main kernel's compute.
            seconds += region_bytes(config, RegionKind::DbiasPartials) / bandwidth.max(1.0);
        }
        (Some(Route::TwoKernel), _) => {
            let pitch = (s.skv as f64 / 128.0).ceil() * 128.0;
            // The dQ GEMM walks only the KV chunks the band and the sequence lengths leave its
            // rows, and reads only those chunks of dS: the pass shrinks like the main kernel's
            // work.
            let gemm = 2.0 * s.b as f64 * s.hq as f64 * s.sq as f64 * pitch * dqk * work_share;
            // The dQ GEMM's own grid.
            let gemm_utilization = config
                .kernel
                .and_then(|k| companion(KernelRole::DqGemm, k))
                .map_or(1.0, |k| wave_utilization(grid(k, s), k, target));
            // The dS round trip at no more than DS_PASS_MAX_GBS (see there).
            let ds_bandwidth = bandwidth.min(DS_PASS_MAX_GBS * 1e9);
            let pass = 2.0 * region_bytes(config, RegionKind::DScores) * work_share
                / ds_bandwidth.max(1.0)
                + gemm / (rate * gemm_utilization).max(1.0);
            seconds += TWO_KERNEL_PASS * pass - DQ_PRODUCT_SHARE * compute;
            // A broadcast bias's dBias: dbias_reduce.cu reads the dS region once more, only the
            // rows the main kernel walked, so it shrinks like the main kernel's work too.
            if reduces_dbias(graph, node, shape) {
                seconds +=
                    region_bytes(config, RegionKind::DScores) * work_share / bandwidth.max(1.0);
            }
        }
        _ => {}
    }
    seconds += atomic_seconds + f64::from(launches) * LAUNCH_SECONDS;
    let free = target.free_memory_bytes.max(1) as f64;
    seconds *= 1.0 + config.workspace.total_bytes() as f64 / free;
    bytes = bytes.max(0.0);
    CostEstimate {
        seconds,
        flops,
        bytes,
        reduction_bytes,
        dbias_atomic_bytes,
        atomic_seconds,
        relay_penalty: relay,
        rate,
        bandwidth,
        bound,
        launches,
        blocks: blocks as u64,
        utilization,
    }
}

fn tensor_bytes(graph: &Graph, node: &Node) -> f64 {
    node.inputs
        .iter()
        .chain(node.outputs.iter())
        .filter_map(|(_, &id)| {
            let t = graph.get(id)?;
            let size = graph.data_type(id)?.size_bytes() as f64;
            Some(t.element_count()? as f64 * size)
        })
        .sum()
}

/// Bytes of one workspace region of `config` (0 when it has none).
fn region_bytes(config: &EngineConfig, kind: RegionKind) -> f64 {
    config
        .workspace
        .region(kind)
        .map_or(0.0, |r| r.bytes as f64)
}

/// Extra fraction of the relay route: [`RELAY_PENALTY`] for 128-row KV tiles, growing with the
/// square root of the turns per Q tile for smaller ones, times [`RELAY_CAUSAL_FACTOR`] under a
/// causal mask, and for envelopes narrower than [`RELAY_FITTED_WIDTH`] by the ratio of the
/// widths.
pub fn relay_penalty(kernel: &KernelConfig, causal: bool) -> f64 {
    let causal = if causal { RELAY_CAUSAL_FACTOR } else { 1.0 };
    let width = kernel.head_dim_qk.max(kernel.head_dim_v).max(1);
    let narrow = (f64::from(RELAY_FITTED_WIDTH) / f64::from(width)).max(1.0);
    RELAY_PENALTY * (128.0 / f64::from(kernel.block_kv.max(1))).sqrt() * causal * narrow
}

/// The narrowest envelope [`RELAY_PENALTY`] was fitted on (d64). A relay turn's wait does not
/// shrink with the head dims while a step's work does, so below it the penalty grows as the
/// width falls: on the (32, 32) envelope relay took 2.0x atomic's time without a bias, causal
/// or not, and 1.77x with a per-batch one, against 1.46-1.60x on d64, so that with the d64
/// penalty the `h100` profile ranked relay first on three deterministic d32 rows where
/// two_kernel ran 1.31-1.35x faster (H100, call X1 of docs/gpu-runs/2026-12-07-day).
pub const RELAY_FITTED_WIDTH: u32 = 64;

/// Bytes of f32 dQ partial sums the atomic route reduces into its accumulator: one
/// accumulator's worth per KV tile, times the share of score pairs the KV tiles that run reach
/// (`work_share`: half under a causal mask, shrunk with a ragged node's fill). Relay and
/// ordered_dbias make the same reductions, but their [`RELAY_PENALTY`] was fitted to their time
/// over the atomic estimate without this term, so it already carries them (0 for them,
/// two_kernel and the CPU).
fn dq_reduction_bytes(config: &EngineConfig, shape: &SdpaShape, work_share: f64) -> f64 {
    let (Some(Route::Atomic), Some(k)) = (config.route, config.kernel) else {
        return 0.0;
    };
    region_bytes(config, RegionKind::DqAccum) * tiles(shape.skv, k.block_kv) * work_share
}

/// Traffic of the route's workspace beyond writing it once, overlapped with the main kernel
/// (two_kernel's dS round trip is a separate pass: see [`estimate`]).
fn route_bytes(config: &EngineConfig) -> f64 {
    // dSink's row terms: written by the preprocess kernel, read once by dsink_reduce.cu.
    let dsink = 2.0 * region_bytes(config, RegionKind::DsinkRows);
    dsink
        + match config.route {
            // Zeroed, written back once from L2 after the reductions, read by the convert kernel.
            Some(Route::Atomic | Route::Relay) => 3.0 * region_bytes(config, RegionKind::DqAccum),
            // dQ as relay; the partials written once by the main kernel (their read by the
            // convert kernel is a pass of its own: see [`estimate`]).
            Some(Route::OrderedDbias) => {
                3.0 * region_bytes(config, RegionKind::DqAccum)
                    + region_bytes(config, RegionKind::DbiasPartials)
            }
            Some(Route::TwoKernel) | None => 0.0,
        }
}

fn launches(
    config: &EngineConfig,
    backward: bool,
    graph: &Graph,
    node: &Node,
    shape: &SdpaShape,
) -> u32 {
    match (config.engine, backward) {
        (EngineKind::CpuReference, _) => 0,
        (EngineKind::Sm120, false) => 1,
        // preprocess + main + (dQ convert | dQ GEMM), + the dBias convert or reduction when
        // dBias sums over a broadcast bias, + the dSink reduction.
        (EngineKind::Sm120, true) => {
            3 + u32::from(reduces_dbias(graph, node, shape))
                + u32::from(node.output(Port::DSink).is_some())
        }
    }
}

/// The expected share of the B x Sq x Skv score pairs a ragged (THD) node's real tokens reach,
/// from the token totals alone (the lengths are known only at execution). With shares
/// a = `max_total_seq_len_q` / (B x Sq) and c = `max_total_seq_len_kv` / (B x Skv), the pairs
/// sum over b of len_q(b) x len_kv(b) lie between a x c (every sequence of the mean length)
/// and min(a, c) (each sequence full or empty); the estimate is the geometric mean of the two
/// bounds, sqrt(min(a, c) x a x c). 1 without a ragged tensor or without the totals.
///
/// Measured on the H200, 2026-12-03 (call H), on the thd suite (8192 tokens in B x S = 16384,
/// lengths 512-2048, real share 0.31): with the dense count two_kernel was ranked first for 5
/// deterministic rows and ran 1.1-1.5x slower than relay on all 5; the upper bound alone (0.5)
/// still ranked it first on 2 of them (10-12% slower there); the estimate (0.35) ranked relay.
/// Since the dQ GEMM walks only the band (2026-12-05), two_kernel's dQ pass shrinks with the
/// fill too, and two_kernel ranks first there again, now rightly (call R7, an H100: 0.57-0.71
/// of relay's time on the suite's 6 deterministic rows).
fn ragged_fill(graph: &Graph, node: &Node, shape: &SdpaShape) -> f64 {
    let ragged = node
        .inputs
        .values()
        .chain(node.outputs.values())
        .any(|&id| graph.get(id).is_some_and(|t| t.ragged_offset.is_some()));
    if !ragged {
        return 1.0;
    }
    let share = |total: Option<i64>, dim: i64| match total {
        Some(t) if t >= 0 && shape.b > 0 && dim > 0 => t as f64 / (shape.b as f64 * dim as f64),
        _ => 1.0,
    };
    let o = &node.options;
    let q = share(o.max_total_seq_len_q, shape.sq).clamp(0.0, 1.0);
    let kv = share(o.max_total_seq_len_kv, shape.skv).clamp(0.0, 1.0);
    (q.min(kv) * q * kv).sqrt()
}

/// True when `node` asks for dBias of a bias that broadcasts over batches or heads.
fn reduces_dbias(graph: &Graph, node: &Node, shape: &SdpaShape) -> bool {
    let bias = node.input(Port::Bias).and_then(|id| graph.get(id));
    node.output(Port::DBias).is_some()
        && bias.is_some_and(|t| BiasBroadcast::of(&t.dims, &shape.scores_dims()).reduces())
}

/// The padding a kernel adds to the head dims, for explanations.
pub(crate) fn padding_note(kernel: Option<&KernelConfig>, shape: &SdpaShape) -> Option<String> {
    let k = kernel?;
    (!k.is_exact(shape.dqk, shape.dv)).then(|| {
        format!(
            "pads ({}, {}) to ({}, {})",
            shape.dqk, shape.dv, k.head_dim_qk, k.head_dim_v
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm120::kernels::{select, KernelRole};

    #[test]
    fn occupancy_differs_between_sm120_and_h200() {
        let d128 = select(KernelRole::BackwardMain, 128, 128).expect("d128");
        let fwd = select(KernelRole::Forward, 64, 64).expect("fwd d64");
        let t = |n: &str| Target::by_name(n).expect("target");
        // 87,552 B + 1 KiB reserved: one per SM120 SM (100 KiB), two per H200 SM (228 KiB) by
        // shared memory, but 256 threads x 256 registers fill the register file: one on both.
        assert_eq!(blocks_per_sm(d128, &t("rtx-pro-6000")), 1);
        assert_eq!(blocks_per_sm(d128, &t("h200")), 1);
        // 77,568 B x 256 threads x 256 registers: one per SM on both (registers; an H200 SM's
        // shared memory would allow two).
        let d192 = select(KernelRole::BackwardMain, 192, 128).expect("d192");
        assert_eq!(blocks_per_sm(d192, &t("rtx-pro-6000")), 1);
        assert_eq!(blocks_per_sm(d192, &t("h200")), 1);
        // 27,648 B, 128 threads x 168 registers: three fit in 100 KiB and in 64K registers.
        assert_eq!(blocks_per_sm(fwd, &t("rtx-5090")), 3);
        assert_eq!(blocks_per_sm(fwd, &t("cpu")), 0);
    }

    /// A (B, H, S, D) ragged backward with the given token totals.
    fn ragged(b: i64, s: i64, q: Option<i64>, kv: Option<i64>) -> (Graph, SdpaShape) {
        use rime_graph::{Context, DataType, SdpaBackwardAttrs, Tensor};
        let mut g = Graph::new(Context::with_io(DataType::Bf16));
        let (h, d) = (2, 64);
        let thd = [s * h * d, d, h * d, 1];
        let offsets =
            g.tensor(Tensor::packed("offsets", &[b + 1, 1, 1, 1]).with_data_type(DataType::I64));
        let token = |g: &mut Graph, n: &str| {
            g.tensor(Tensor::new(n, &[b, h, s, d], &thd).with_ragged_offset(offsets))
        };
        let [q_t, k, v, o, d_o] = ["Q", "K", "V", "O", "dO"].map(|n| token(&mut g, n));
        let stats = Tensor::packed("Stats", &[b, h, s, 1]).with_data_type(DataType::F32);
        let stats = g.tensor(stats);
        let attrs = SdpaBackwardAttrs::new().max_total_seq_len(q, kv);
        g.sdpa_backward(q_t, k, v, o, d_o, stats, attrs)
            .expect("graph");
        let node = g.nodes()[0].clone();
        let shape = SdpaShape::of(&g, &node).expect("shape");
        (g, shape)
    }

    #[test]
    fn ragged_work_is_estimated_between_its_bounds() {
        let fill = |q, kv| {
            let (g, shape) = ragged(8, 2048, q, kv);
            ragged_fill(&g, &g.nodes()[0], &shape)
        };
        // The thd suite: 8192 of 16384 tokens on both sides. Bounds 0.25 and 0.5, real 0.31.
        let f = fill(Some(8192), Some(8192));
        assert!((f - 0.5f64.powf(1.5)).abs() < 1e-12, "{f}");
        assert!(f > 0.25 && f < 0.5);
        // Full sequences: dense. Without totals: dense (nothing bounds the lengths).
        assert_eq!(fill(Some(16384), Some(16384)), 1.0);
        assert_eq!(fill(None, None), 1.0);
        // One side's total: that side's share (both bounds agree).
        assert!((fill(Some(4096), None) - 0.25).abs() < 1e-12);
        // Totals past B x S are clamped to dense.
        assert_eq!(fill(Some(1 << 20), Some(1 << 20)), 1.0);
    }
}
