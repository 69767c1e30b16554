//! The sm120 plan: exactly the kernels an approved configuration names — the forward kernel of
//! a forward node, or a backward chain preprocess -> main -> (atomic, relay: dQ convert |
//! two_kernel: dQ GEMM) [-> dBias convert | reduction] [-> dSink reduction] — compiled, loaded
//! and kept, with the launch
//! parameters derived from the approved [`SdpaProblem`] by checked conversions and the
//! workspace regions at the analyzer's offsets.

use cudarc::driver::CudaFunction;
use rime_analyzer::{
    ApprovedPlan, DeviceKind, EngineKind, KernelConfig, KernelRole, RegionKind, Route, SdpaProblem,
    WorkspaceLayout,
};
use rime_graph::{DataType, OpKind, Port};

use super::abi::{AttnParams, ConvertParams, TensorRef, CONVERT_MAX_BLOCKS_X, PRE_ROWS};
use super::compile::{
    kv_major_pays, tensor_copies_serve, BwdFeatures, DbiasMode, IoType, KernelBuild,
};
use super::context::CudaDevice;
use super::launch::{launch_attn, launch_attn_with_maps, launch_convert};
use super::tma::tile_maps;
use crate::{expect_engine, EngineError};

const ENGINE: &str = "sm120";

/// An approved configuration that does not say what the engine must run (an analyzer bug).
fn malformed(what: &'static str) -> EngineError {
    EngineError::MalformedPlan {
        engine: ENGINE,
        what,
    }
}

/// A value the kernels take as a 32-bit integer (the analyzer's limits keep them in range).
fn int(name: &'static str, value: usize) -> Result<i32, EngineError> {
    i32::try_from(value).map_err(|_| EngineError::LimitExceeded {
        engine: ENGINE,
        what: name,
        value: u64::try_from(value).unwrap_or(u64::MAX),
        limit: i32::MAX as u64,
    })
}

/// A grid dimension (blocks).
fn grid_dim(name: &'static str, value: usize, limit: u32) -> Result<u32, EngineError> {
    u32::try_from(value)
        .ok()
        .filter(|&v| v <= limit)
        .ok_or(EngineError::LimitExceeded {
            engine: ENGINE,
            what: name,
            value: u64::try_from(value).unwrap_or(u64::MAX),
            limit: u64::from(limit),
        })
}

/// Blocks a CUDA grid holds along x, and along y or z.
const GRID_X: u32 = i32::MAX as u32;
const GRID_YZ: u32 = 65_535;

/// The kernels of a plan, in launch order: their builds ([`Builds`]) or, once compiled and
/// loaded, the kernels themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // one per plan: the size difference costs nothing
pub(crate) enum Chain<K> {
    /// A forward node: the forward kernel.
    Forward {
        /// O and Stats.
        forward: K,
    },
    /// A backward node: its chain.
    Backward {
        /// delta, zeroed accumulators.
        preprocess: K,
        /// dK, dV and the route's dQ path.
        main: K,
        /// f32 accumulators to the io dtype (dQ on atomic / relay, broadcast dBias).
        convert: K,
        /// dQ = scale dS K (two_kernel).
        dq_gemm: Option<K>,
        /// A broadcast bias's dBias summed from the dS workspace (two_kernel).
        dbias_reduce: Option<K>,
        /// dSink summed from the preprocess kernel's row terms (every route).
        dsink_reduce: Option<K>,
    },
}

/// The kernel builds of a plan.
pub(crate) type Builds = Chain<KernelBuild>;

impl<K> Chain<K> {
    /// Every kernel, in launch order.
    pub(crate) fn all(&self) -> Vec<&K> {
        match self {
            Chain::Forward { forward } => vec![forward],
            Chain::Backward {
                preprocess,
                main,
                convert,
                dq_gemm,
                dbias_reduce,
                dsink_reduce,
            } => [
                Some(preprocess),
                Some(main),
                dq_gemm.as_ref(),
                Some(convert),
                dbias_reduce.as_ref(),
                dsink_reduce.as_ref(),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }

    /// The chain with `f` applied to every kernel.
    fn try_map<U, E>(&self, mut f: impl FnMut(&K) -> Result<U, E>) -> Result<Chain<U>, E> {
        Ok(match self {
            Chain::Forward { forward } => Chain::Forward {
                forward: f(forward)?,
            },
            Chain::Backward {
                preprocess,
                main,
                convert,
                dq_gemm,
                dbias_reduce,
                dsink_reduce,
            } => Chain::Backward {
                preprocess: f(preprocess)?,
                main: f(main)?,
                convert: f(convert)?,
                dq_gemm: dq_gemm.as_ref().map(&mut f).transpose()?,
                dbias_reduce: dbias_reduce.as_ref().map(&mut f).transpose()?,
                dsink_reduce: dsink_reduce.as_ref().map(&mut f).transpose()?,
            },
        })
    }
}

fn io_type(problem: &SdpaProblem) -> Result<IoType, EngineError> {
    match problem.io {
        DataType::Bf16 => Ok(IoType::Bf16),
        DataType::F16 => Ok(IoType::F16),
        _ => Err(malformed("an io type other than f16 and bf16")),
    }
}

fn with_role(
    kernel: Option<&'static KernelConfig>,
    role: KernelRole,
) -> Result<&'static KernelConfig, EngineError> {
    kernel
        .filter(|k| k.role == role)
        .ok_or_else(|| malformed("a kernel of the node's role"))
}

/// True when `route` sums a broadcast bias's dBias from its dS workspace (dbias_reduce.cu).
fn dbias_from_ds(problem: &SdpaProblem, route: Route) -> bool {
    route == Route::TwoKernel && problem.dbias && problem.bias_broadcasts()
}

/// How the main kernel produces dBias on `route` (on two_kernel a broadcast bias's dBias is
/// not the main kernel's: its dS workspace already holds every (batch, head)'s share).
fn dbias_mode(problem: &SdpaProblem, route: Route) -> DbiasMode {
    match (problem.dbias, problem.bias_broadcasts()) {
        (false, _) => DbiasMode::None,
        _ if dbias_from_ds(problem, route) => DbiasMode::None,
        (true, false) => DbiasMode::Direct,
        (true, true) if route == Route::OrderedDbias => DbiasMode::Partials,
        (true, true) => DbiasMode::Accumulate,
    }
}

/// The kernel builds of an approved sm120 configuration: its kernels, specialised for the
/// problem's dtype and features. Needs no device.
///
/// # Errors
/// [`EngineError::WrongEngine`]; [`EngineError::MalformedPlan`] when the configuration lacks a
/// kernel its node needs.
pub(crate) fn builds(approved: &ApprovedPlan) -> Result<Builds, EngineError> {
    expect_engine(EngineKind::Sm120, approved)?;
    let p = approved.problem();
    let config = approved.config();
    let io = io_type(p)?;
    if p.op == OpKind::SdpaForward {
        let fwd = with_role(config.kernel, KernelRole::Forward)?;
        return Ok(Chain::Forward {
            forward: KernelBuild::forward(fwd, io, p.bias.is_some(), p.alibi),
        });
    }
    let main = with_role(config.kernel, KernelRole::BackwardMain)?;
    let route = config.route.ok_or_else(|| malformed("a backward route"))?;
    if !main.serves(route) {
        return Err(malformed("a main kernel built for the plan's route"));
    }
    let ragged = !super::ragged::ragged_ports(p).is_empty();
    let sm = match approved.target().device {
        DeviceKind::Gpu { sm } => sm,
        DeviceKind::Cpu => 0,
    };
    let features = BwdFeatures {
        has_bias: p.bias.is_some(),
        alibi: p.alibi,
        dbias: dbias_mode(p, route),
        kv_major: heaviest_tiles_first(p, route, main),
        ragged,
        tma: tensor_copies_serve(
            main,
            route,
            sm,
            // A padding mask's padding rows are not read, which a tensor map cannot bound.
            (ragged || p.padding, p.bias.is_some()),
            (p.shape.dqk, p.shape.dv),
        ),
    };
    let dq_gemm = match (route, config.dq_kernel) {
        (Route::TwoKernel, Some(k)) => Some(KernelBuild::dq_gemm(
            with_role(Some(k), KernelRole::DqGemm)?,
            io,
        )),
        (Route::TwoKernel, None) => return Err(malformed("the two_kernel route's dQ GEMM")),
        (_, Some(_)) => return Err(malformed("a dQ GEMM on a route without one")),
        (_, None) => None,
    };
    Ok(Chain::Backward {
        preprocess: KernelBuild::preprocess(main, io),
        main: KernelBuild::bwd_main(main, io, features, route),
        convert: KernelBuild::convert(io),
        dq_gemm,
        dbias_reduce: dbias_from_ds(p, route).then(|| KernelBuild::dbias_reduce(main, io)),
        dsink_reduce: p.dsink.then(|| KernelBuild::dsink_reduce(io)),
    })
}

/// A build with its loaded kernel.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) build: KernelBuild,
    pub(crate) function: CudaFunction,
}

impl Loaded {
    fn new(dev: &CudaDevice, build: &KernelBuild) -> Result<Self, EngineError> {
        Ok(Self {
            build: build.clone(),
            function: dev.function(build)?,
        })
    }
}

/// The device addresses of one execution, per port (0 for ports the node does not bind), and
/// of the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Addresses {
    pub(crate) ports: PortAddresses,
    pub(crate) workspace: u64,
    /// Per ragged port, the device address of its checked i64 offsets (ragged.rs); 0 else.
    pub(crate) ragged: PortAddresses,
}

/// Device address of each port's buffer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PortAddresses {
    pub(crate) q: u64,
    pub(crate) k: u64,
    pub(crate) v: u64,
    pub(crate) o: u64,
    pub(crate) d_o: u64,
    pub(crate) stats: u64,
    pub(crate) bias: u64,
    pub(crate) seq_q: u64,
    pub(crate) seq_kv: u64,
    pub(crate) dq: u64,
    pub(crate) dk: u64,
    pub(crate) dv: u64,
    pub(crate) dbias: u64,
    pub(crate) sink: u64,
    pub(crate) dsink: u64,
}

impl PortAddresses {
    /// The slot of `port`, for the ports the kernels read or write.
    pub(crate) fn slot(&mut self, port: Port) -> Option<&mut u64> {
        Some(match port {
            Port::Q => &mut self.q,
            Port::K => &mut self.k,
            Port::V => &mut self.v,
            Port::O => &mut self.o,
            Port::DO => &mut self.d_o,
            Port::Stats => &mut self.stats,
            Port::Bias => &mut self.bias,
            Port::SeqLenQ => &mut self.seq_q,
            Port::SeqLenKv => &mut self.seq_kv,
            Port::DQ => &mut self.dq,
            Port::DK => &mut self.dk,
            Port::DV => &mut self.dv,
            Port::DBias => &mut self.dbias,
            Port::Sink => &mut self.sink,
            Port::DSink => &mut self.dsink,
            _ => return None,
        })
    }
}

/// A built sm120 plan: the approved problem, route and workspace, and the loaded kernels.
#[derive(Debug, Clone)]
pub(crate) struct Sm120Plan {
    problem: SdpaProblem,
    route: Option<Route>,
    workspace: WorkspaceLayout,
    kernels: Chain<Loaded>,
    /// Everything in the launch parameters but the addresses, checked once.
    base: AttnParams,
}

impl Sm120Plan {
    /// Compiles (through the cache) and loads the kernels of `approved` on `dev`.
    ///
    /// # Errors
    /// As [`builds`]; [`EngineError::LimitExceeded`] for a size the kernels cannot take;
    /// compile and driver errors.
    pub(crate) fn new(dev: &CudaDevice, approved: &ApprovedPlan) -> Result<Self, EngineError> {
        let kernels = builds(approved)?.try_map(|b| Loaded::new(dev, b))?;
        let problem = approved.problem().clone();
        Ok(Self {
            base: base_params(&problem)?,
            problem,
            route: approved.config().route,
            workspace: approved.workspace().clone(),
            kernels,
        })
    }

    /// The problem.
    pub(crate) fn problem(&self) -> &SdpaProblem {
        &self.problem
    }

    /// The analyzer's workspace layout.
    pub(crate) fn workspace(&self) -> &WorkspaceLayout {
        &self.workspace
    }

    /// Workspace bytes an execution needs: the analyzer's layout total (0 for a forward
    /// without ragged tensors).
    pub(crate) fn workspace_bytes(&self) -> usize {
        usize::try_from(self.workspace.total_bytes()).unwrap_or(usize::MAX)
    }

    /// The kernel builds this plan launches, in launch order.
    pub(crate) fn launched(&self) -> Vec<&KernelBuild> {
        self.kernels.all().into_iter().map(|l| &l.build).collect()
    }

    /// The launch parameters of one execution on these addresses.
    fn params(&self, at: &Addresses) -> Result<AttnParams, EngineError> {
        let p = &self.problem;
        let a = &at.ports;
        let mut params = self.base;
        let mut ragged = at.ragged;
        let mut bind = |slot: &mut TensorRef, port: Port, ptr: u64| -> Result<(), EngineError> {
            if let Some(spec) = p.tensor(port) {
                *slot = tensor_ref(p, port, &spec.strides, ptr)?;
                slot.ragged = ragged.slot(port).map_or(0, |a| *a);
            }
            Ok(())
        };
        bind(&mut params.q, Port::Q, a.q)?;
        bind(&mut params.k, Port::K, a.k)?;
        bind(&mut params.v, Port::V, a.v)?;
        bind(&mut params.o, Port::O, a.o)?;
        bind(&mut params.d_o, Port::DO, a.d_o)?;
        bind(&mut params.stats, Port::Stats, a.stats)?;
        bind(&mut params.bias, Port::Bias, a.bias)?;
        bind(&mut params.dq, Port::DQ, a.dq)?;
        bind(&mut params.dk, Port::DK, a.dk)?;
        bind(&mut params.dv, Port::DV, a.dv)?;
        bind(&mut params.dbias, Port::DBias, a.dbias)?;
        bind(&mut params.sink, Port::Sink, a.sink)?;
        bind(&mut params.dsink, Port::DSink, a.dsink)?;
        if p.padding {
            bind(&mut params.seq_q, Port::SeqLenQ, a.seq_q)?;
            bind(&mut params.seq_kv, Port::SeqLenKv, a.seq_kv)?;
        }
        let region = |kind| {
            self.workspace
                .region(kind)
                .map_or(0, |r| at.workspace + r.offset)
        };
        params.delta = region(RegionKind::Delta);
        params.dq_accum = region(RegionKind::DqAccum);
        params.dbias_accum = region(RegionKind::DbiasAccum);
        params.dbias_parts = region(RegionKind::DbiasPartials);
        params.relay = region(RegionKind::RelayCounters);
        params.ds = region(RegionKind::DScores);
        params.dsink_rows = region(RegionKind::DsinkRows);
        Ok(params)
    }

    /// Enqueues the plan's kernels on `dev`'s stream.
    ///
    /// # Safety
    /// `dev` must be a view of the context the kernels were loaded in. Every address in `at`
    /// must be the device address of a live buffer of `dev` that holds
    /// the port's tensor (its extent under the problem's dims and strides) — or, for the
    /// workspace, at least [`Self::workspace_bytes`] bytes — and output buffers must not overlap
    /// anything else bound (the engine's `check` establishes all of it).
    pub(crate) unsafe fn enqueue(
        &self,
        dev: &CudaDevice,
        at: &Addresses,
    ) -> Result<(), EngineError> {
        let params = self.params(at)?;
        let s = &self.problem.shape;
        let (hq, b) = (grid_dim("Hq", s.hq, GRID_YZ)?, grid_dim("B", s.b, GRID_YZ)?);
        match &self.kernels {
            Chain::Forward { forward } => {
                let k = config_of(&forward.build)?;
                let grid = (
                    grid_dim("Q tiles", s.sq.div_ceil(block(k.block_q)), GRID_X)?,
                    hq,
                    b,
                );
                // SAFETY: the function comes from its build; the caller vouches for every
                // address in `params` (see # Safety).
                unsafe { launch_attn(dev, forward, grid, &params) }?;
            }
            Chain::Backward {
                preprocess,
                main,
                convert,
                dq_gemm,
                dbias_reduce,
                dsink_reduce,
            } => {
                let k = config_of(&main.build)?;
                let hk = grid_dim("Hk", s.hk, GRID_YZ)?;
                let pre_grid = (
                    grid_dim("preprocess tiles", s.sq.div_ceil(block(PRE_ROWS)), GRID_X)?,
                    hq,
                    b,
                );
                let kv_tiles = grid_dim("KV tiles", s.skv.div_ceil(block(k.block_kv)), GRID_X)?;
                // The grid order the main kernel was built for (`builds`): what was built runs.
                let main_grid = if main.build.defines.contains(&("KV_MAJOR", 1)) {
                    (hk, b, kv_tiles)
                } else {
                    (kv_tiles, hk, b)
                };
                // SAFETY (every launch below): each function comes from its build; the caller
                // vouches for the addresses, and the workspace holds the analyzer's layout for
                // this route. The stream orders preprocess -> main -> dQ -> dBias -> dSink.
                unsafe {
                    launch_attn(dev, preprocess, pre_grid, &params)?;
                    // A main kernel built with tensor copies takes this execution's maps of Q
                    // and dO (what was built runs).
                    if main.build.defines.contains(&("TMA_TILES", 1)) {
                        let envelope = (k.head_dim_qk, k.head_dim_v);
                        let maps = tile_maps(&params, self.problem.io, k.block_q, envelope)?;
                        launch_attn_with_maps(dev, main, main_grid, &params, &maps)?;
                    } else {
                        launch_attn(dev, main, main_grid, &params)?;
                    }
                    match dq_gemm {
                        Some(gemm) => {
                            let g = config_of(&gemm.build)?;
                            let grid = (
                                grid_dim("dQ tiles", s.sq.div_ceil(block(g.block_q)), GRID_X)?,
                                hq,
                                b,
                            );
                            launch_attn(dev, gemm, grid, &params)?;
                        }
                        None => {
                            let mut dq = convert_params(
                                params.dq_accum,
                                &params.dq,
                                [s.b, s.hq, s.sq, s.dqk],
                                1,
                                params.scale,
                            )?;
                            // The main kernel adds in dq_acc_off's layout (attn.cuh).
                            dq.tiled = 1;
                            // A ragged dQ: each sequence at its offset, its real rows only.
                            dq.ragged = params.dq.ragged;
                            dq.rows = params.seq_q;
                            launch_convert(dev, convert, convert_grid(&dq, b)?, &dq)?;
                        }
                    }
                    // A broadcast bias's dBias: its accumulator, or its partials summed in order
                    // (one per (batch, head) the bias broadcasts over, as bwd_main.cu indexes
                    // them).
                    let summed = match (
                        self.workspace.region(RegionKind::DbiasAccum),
                        self.workspace.region(RegionKind::DbiasPartials),
                    ) {
                        (Some(_), _) => Some((params.dbias_accum, false)),
                        (None, Some(_)) => Some((params.dbias_parts, true)),
                        (None, None) => None,
                    };
                    if let (Some((src, partials)), Some(bias)) = (summed, self.problem.bias) {
                        let parts = if partials {
                            let over = |bias_dim: usize, dim: usize| {
                                if bias_dim == 1 {
                                    dim
                                } else {
                                    1
                                }
                            };
                            over(bias.batch, s.b) * over(bias.heads, s.hq)
                        } else {
                            1
                        };
                        let db = convert_params(
                            src,
                            &params.dbias,
                            [bias.batch, bias.heads, s.sq, s.skv],
                            parts,
                            1.0,
                        )?;
                        let d0 = grid_dim("bias batch", bias.batch, GRID_YZ)?;
                        launch_convert(dev, convert, convert_grid(&db, d0)?, &db)?;
                    }
                    // two_kernel: the broadcast dBias summed from the dS workspace, after the
                    // dQ GEMM has read it (it stays intact).
                    if let (Some(reduce), Some(bias)) = (dbias_reduce, self.problem.bias) {
                        let grid = (
                            row_blocks(s.sq),
                            grid_dim("bias heads", bias.heads, GRID_YZ)?,
                            grid_dim("bias batch", bias.batch, GRID_YZ)?,
                        );
                        launch_attn(dev, reduce, grid, &params)?;
                    }
                    // dSink: one block per head sums the preprocess kernel's row terms.
                    if let Some(reduce) = dsink_reduce {
                        launch_attn(dev, reduce, (grid_dim("Hq", s.hq, GRID_X)?, 1, 1), &params)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The dQ route (backward plans).
    pub(crate) fn route(&self) -> Option<Route> {
        self.route
    }
}

/// A tile size as a divisor.
fn block(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX).max(1)
}

/// The table entry of a tiled build.
fn config_of(build: &KernelBuild) -> Result<&'static KernelConfig, EngineError> {
    build
        .entry
        .and_then(|name| {
            rime_analyzer::sm120::kernels::KERNELS
                .iter()
                .chain(rime_analyzer::sm120::kernels::H200_TUNED)
                .find(|k| k.name == name)
        })
        .ok_or_else(|| malformed("a kernel of the table"))
}

/// The kernel's view of a port: its address and strides, broadcast bias dims with stride 0.
fn tensor_ref(
    p: &SdpaProblem,
    port: Port,
    strides: &[usize; 4],
    ptr: u64,
) -> Result<TensorRef, EngineError> {
    let stride = |axis: usize| -> Result<i64, EngineError> {
        i64::try_from(strides[axis]).map_err(|_| EngineError::LimitExceeded {
            engine: ENGINE,
            what: "a stride",
            value: u64::try_from(strides[axis]).unwrap_or(u64::MAX),
            limit: i64::MAX as u64,
        })
    };
    let (mut sb, mut sh) = (stride(0)?, stride(1)?);
    if port == Port::Bias {
        if let Some(bias) = p.bias {
            if bias.batch == 1 {
                sb = 0;
            }
            if bias.heads == 1 {
                sh = 0;
            }
        }
    }
    Ok(TensorRef {
        ptr,
        sb,
        sh,
        ss: stride(2)?,
        ragged: 0,
    })
}

/// True when the backward main kernel is built and launched with its grid KV tile slowest
/// (`KV_MAJOR`: (Hk, B, KV tiles)): under a causal band (a right bound, no left one) KV tile n
/// is reached by the Q rows from n on, so the first tiles carry the most work, and starting
/// them first across every head removes the tail that a head-by-head order leaves (the heavy
/// tiles of the last heads starting last). Not on relay or ordered_dbias (their tickets order
/// the tiles), not on KV tiles too small to pay ([`kv_major_pays`]), nor past the z
/// dimension's 65,535 KV tiles (the other order then runs).
fn heaviest_tiles_first(p: &SdpaProblem, route: Route, main: &KernelConfig) -> bool {
    let causal = p.band.right.is_some() && p.band.left.is_none();
    let tiles = p.shape.skv.div_ceil(block(main.block_kv));
    let fits = u32::try_from(tiles).is_ok_and(|t| t <= GRID_YZ);
    causal && fits && kv_major_pays(main) && !matches!(route, Route::Relay | Route::OrderedDbias)
}

/// Everything in the launch parameters that does not depend on the buffers.
fn base_params(p: &SdpaProblem) -> Result<AttnParams, EngineError> {
    let s = &p.shape;
    let scale = match p.scale {
        rime_analyzer::AttnScale::Value(v) => v,
        rime_analyzer::AttnScale::Tensor(_) => {
            return Err(malformed("a scale known when the plan is built"))
        }
    };
    // ALiBi: n = 2^floor(log2 Hq) heads get slopes 2^(-8 (h + 1) / n), the rest interleave.
    let (alibi_n, alibi_base, alibi_half) = if p.alibi {
        // Hq <= 65,535 (analyzer rule SMX012), so n fits 16 bits and f32 holds it exactly.
        let n = u16::try_from(1usize << s.hq.ilog2()).map_err(|_| EngineError::LimitExceeded {
            engine: ENGINE,
            what: "ALiBi heads",
            value: u64::try_from(s.hq).unwrap_or(u64::MAX),
            limit: u64::from(u16::MAX),
        })?;
        let nf = f32::from(n);
        (i32::from(n), (-8.0 / nf).exp2(), (-4.0 / nf).exp2())
    } else {
        (0, 0.0, 0.0)
    };
    // Normalised bounds are below Sq + Skv <= 2^31 (rule SMX013): ints.
    let bound = |what: &'static str, b: Option<i64>| -> Result<(i32, i32), EngineError> {
        let v = b.unwrap_or(0);
        let v = i32::try_from(v).map_err(|_| EngineError::LimitExceeded {
            engine: ENGINE,
            what,
            value: v.unsigned_abs(),
            limit: i32::MAX.unsigned_abs().into(),
        })?;
        Ok((i32::from(b.is_some()), v))
    };
    let (has_right, right_bound) = bound("right bound", p.band.right)?;
    let (has_left, left_bound) = bound("left bound", p.band.left)?;
    Ok(AttnParams {
        batch: int("B", s.b)?,
        hq: int("Hq", s.hq)?,
        hk: int("Hk", s.hk)?,
        hv: int("Hv", s.hv)?,
        sq: int("Sq", s.sq)?,
        skv: int("Skv", s.skv)?,
        bottom_right: i32::from(p.band.bottom_right),
        has_right,
        right_bound,
        has_left,
        left_bound,
        bias_b: int("bias batch", p.bias.map_or(1, |b| b.batch))?,
        bias_h: int("bias heads", p.bias.map_or(1, |b| b.heads))?,
        scale,
        hd_qk: int("Dqk", s.dqk)?,
        hd_v: int("Dv", s.dv)?,
        alibi_n,
        alibi_base,
        alibi_half,
        ..AttnParams::default()
    })
}

/// The convert kernel's parameters for `parts` compact f32 accumulators `[d0][d1][d2][d3]`,
/// one after the other from `src`, summed in order into `dst`.
fn convert_params(
    src: u64,
    dst: &TensorRef,
    [d0, d1, d2, d3]: [usize; 4],
    parts: usize,
    scale: f32,
) -> Result<ConvertParams, EngineError> {
    let too_big = |what| EngineError::LimitExceeded {
        engine: ENGINE,
        what,
        value: u64::MAX,
        limit: i64::MAX as u64,
    };
    let plane = d2.checked_mul(d3).ok_or(too_big("accumulator plane"))?;
    let part_stride = [d0, d1]
        .iter()
        .try_fold(plane, |acc, &d| acc.checked_mul(d))
        .and_then(|n| i64::try_from(n).ok())
        .ok_or(too_big("accumulator part"))?;
    Ok(ConvertParams {
        src,
        dst: dst.ptr,
        s0: dst.sb,
        s1: dst.sh,
        s2: dst.ss,
        plane: i64::try_from(plane).map_err(|_| EngineError::LimitExceeded {
            engine: ENGINE,
            what: "accumulator plane",
            value: u64::try_from(plane).unwrap_or(u64::MAX),
            limit: i64::MAX as u64,
        })?,
        d1: int("accumulator dim 1", d1)?,
        d3: int("accumulator dim 3", d3)?,
        part_stride,
        scale,
        parts: int("accumulator parts", parts)?,
        tiled: 0,
        ragged: 0,
        rows: TensorRef::default(),
    })
}

/// The convert grid: enough blocks to cover a plane, at most [`CONVERT_MAX_BLOCKS_X`] (the
/// kernel strides over the rest), one row of them per (d1, d0).
fn convert_grid(p: &ConvertParams, d0: u32) -> Result<(u32, u32, u32), EngineError> {
    let blocks = plane_blocks(u64::try_from(p.plane).unwrap_or(0));
    let d1 = u32::try_from(p.d1).unwrap_or(0);
    if d1 > GRID_YZ {
        return Err(EngineError::LimitExceeded {
            engine: ENGINE,
            what: "accumulator dim 1",
            value: u64::from(d1),
            limit: u64::from(GRID_YZ),
        });
    }
    Ok((blocks, d1, d0))
}

/// Blocks along x of a grid-stride kernel over a plane of `plane` elements (convert.cu):
/// enough to cover it at [`CONVERT_VEC`](super::abi::CONVERT_VEC) elements a thread, at least
/// 1, at most [`CONVERT_MAX_BLOCKS_X`].
fn plane_blocks(plane: u64) -> u32 {
    let per_block = u64::from(super::abi::CONVERT_THREADS * super::abi::CONVERT_VEC);
    let blocks = plane
        .div_ceil(per_block)
        .clamp(1, u64::from(CONVERT_MAX_BLOCKS_X));
    u32::try_from(blocks).unwrap_or(CONVERT_MAX_BLOCKS_X)
}

/// Blocks along x of a kernel that strides over `rows` rows a block at a time
/// (dbias_reduce.cu): one per row, at least 1, at most [`CONVERT_MAX_BLOCKS_X`].
fn row_blocks(rows: usize) -> u32 {
    u32::try_from(rows).map_or(CONVERT_MAX_BLOCKS_X, |r| r.clamp(1, CONVERT_MAX_BLOCKS_X))
}
