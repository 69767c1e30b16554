//! The sm120 engine plan: checks a problem against what the kernels implement, takes the exact
//! workspace layout from the analyzer, and runs the forward (O, Stats) or the backward chain of
//! a route: preprocess -> main -> (atomic, relay: dQ convert | two_kernel: dQ GEMM)
//! [-> dBias convert].

use cudarc::driver::{CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice};
use rime_analyzer::sm120::{backward_workspace, WorkspaceNeeds};
use rime_analyzer::{KernelConfig, KernelRole, RegionKind, Route, WorkspaceLayout};
use rime_graph::SdpaShape;

use super::compile::{BwdFeatures, DbiasMode, KernelBuild};
use super::context::CudaDevice;
use super::error::CudaError;
use super::launch::{launch_attn, launch_convert};
use super::params::{AttnParams, ConvertParams, TensorRef};
use super::problem::{AttnProblem, Strides};
use super::table::envelope;

/// Device buffers of a forward run (io tensors as 16-bit words, Stats as f32). Views, so that a
/// tensor may sit inside a larger allocation (the guard zones of `rime selftest --guards`).
#[derive(Debug)]
pub struct ForwardBuffers<'a> {
    /// Q.
    pub q: CudaView<'a, u16>,
    /// K.
    pub k: CudaView<'a, u16>,
    /// V.
    pub v: CudaView<'a, u16>,
    /// Bias, when the problem has one.
    pub bias: Option<CudaView<'a, u16>>,
    /// Sequence lengths (Q, KV) of the padding mask, when the problem has one.
    pub seq_lens: Option<(CudaView<'a, i32>, CudaView<'a, i32>)>,
    /// O (written).
    pub o: CudaViewMut<'a, u16>,
    /// Stats (written).
    pub stats: CudaViewMut<'a, f32>,
}

/// Device buffers of a backward run.
#[derive(Debug)]
pub struct BackwardBuffers<'a> {
    /// Q.
    pub q: CudaView<'a, u16>,
    /// K.
    pub k: CudaView<'a, u16>,
    /// V.
    pub v: CudaView<'a, u16>,
    /// O from the forward.
    pub o: CudaView<'a, u16>,
    /// dO.
    pub d_o: CudaView<'a, u16>,
    /// Stats from the forward.
    pub stats: CudaView<'a, f32>,
    /// Bias, when the problem has one.
    pub bias: Option<CudaView<'a, u16>>,
    /// Sequence lengths (Q, KV) of the padding mask, when the problem has one.
    pub seq_lens: Option<(CudaView<'a, i32>, CudaView<'a, i32>)>,
    /// dQ (written).
    pub dq: CudaViewMut<'a, u16>,
    /// dK (written).
    pub dk: CudaViewMut<'a, u16>,
    /// dV (written).
    pub dv: CudaViewMut<'a, u16>,
    /// dBias (written), when requested.
    pub dbias: Option<CudaViewMut<'a, u16>>,
    /// Workspace of at least [`Sm120Plan::workspace_bytes`] bytes (scratch: the kernels write
    /// it through its device address, so a shared reference suffices).
    pub workspace: CudaView<'a, u8>,
}

/// A checked problem bound to its kernel configurations and route.
#[derive(Debug, Clone)]
pub struct Sm120Plan {
    problem: AttnProblem,
    route: Route,
    forward: &'static KernelConfig,
    main: &'static KernelConfig,
    dq_gemm: &'static KernelConfig,
    workspace: WorkspaceLayout,
}

impl Sm120Plan {
    /// Checks `problem` against the kernels, picks the table entries for its head dims, and sizes
    /// the backward workspace of `route` with the analyzer's formulas.
    ///
    /// # Errors
    /// [`CudaError::NoKernelConfig`] or [`CudaError::Unsupported`] naming the constraint.
    pub fn new(problem: AttnProblem, route: Route) -> Result<Self, CudaError> {
        let (dqk, dv) = (problem.dqk, problem.dv);
        let missing = || CudaError::NoKernelConfig {
            head_dim_qk: dqk,
            head_dim_v: dv,
        };
        if dqk % 8 != 0 || dv % 8 != 0 {
            return Err(CudaError::Unsupported {
                what: "head dims must be multiples of 8",
            });
        }
        let forward = envelope(KernelRole::Forward, dqk, dv).ok_or_else(missing)?;
        let main = envelope(KernelRole::BackwardMain, dqk, dv).ok_or_else(missing)?;
        let dq_gemm = envelope(KernelRole::DqGemm, dqk, dv).ok_or_else(missing)?;
        let p = &problem;
        let unsupported = |what| Err(CudaError::Unsupported { what });
        if p.batch == 0 || p.hq == 0 || p.hk == 0 || p.sq == 0 || p.skv == 0 {
            return unsupported("every dim must be at least 1");
        }
        if p.hq % p.hk != 0 || p.hk != p.hv {
            return unsupported("Hq must be a multiple of Hk, and Hk must equal Hv");
        }
        if p.batch > 65_535 || p.hq > 65_535 || p.sq > 1 << 30 || p.skv > 1 << 30 {
            return unsupported("B and H at most 65,535; Sq and Skv at most 2^30");
        }
        let l = &p.layouts;
        let aligned = |s: &Strides| s.b % 8 == 0 && s.h % 8 == 0 && s.s % 8 == 0;
        if ![l.q, l.k, l.v, l.o, l.d_o, l.dq, l.dk, l.dv]
            .iter()
            .all(aligned)
        {
            return unsupported(
                "strides of Q, K, V, O, dO, dQ, dK, dV must be multiples of 8 elements",
            );
        }
        if p.dbias && p.bias.is_none() {
            return unsupported("dBias needs a Bias");
        }
        if let Some(b) = p.bias {
            if !(b.batch == 1 || b.batch == p.batch) || !(b.heads == 1 || b.heads == p.hq) {
                return unsupported("bias dims must be (1 or B, 1 or Hq, Sq, Skv)");
            }
        }
        if p.band.left.is_some_and(|v| v < 1) || p.band.right.is_some_and(|v| v < 0) {
            return unsupported("left bound >= 1 and right bound >= 0");
        }
        let shape = SdpaShape {
            b: p.batch as i64,
            hq: p.hq as i64,
            hk: p.hk as i64,
            hv: p.hv as i64,
            sq: p.sq as i64,
            skv: p.skv as i64,
            dqk: p.dqk as i64,
            dv: p.dv as i64,
        };
        let needs = WorkspaceNeeds {
            dbias_accum_elements: p
                .bias
                .filter(|_| p.dbias && p.bias_broadcasts())
                .map(|b| (b.batch * b.heads * p.sq * p.skv) as u64),
            dsink: false,
        };
        let workspace =
            backward_workspace(&shape, route, main, needs).map_err(|_| CudaError::Unsupported {
                what: "workspace size overflows 64 bits",
            })?;
        Ok(Self {
            problem,
            route,
            forward,
            main,
            dq_gemm,
            workspace,
        })
    }

    /// The backward main kernel's table entry.
    pub fn config(&self) -> &'static KernelConfig {
        self.main
    }

    /// The dQ route.
    pub fn route(&self) -> Route {
        self.route
    }

    /// The problem.
    pub fn problem(&self) -> &AttnProblem {
        &self.problem
    }

    /// Exact workspace layout of the backward (the analyzer's).
    pub fn workspace(&self) -> &WorkspaceLayout {
        &self.workspace
    }

    /// Workspace bytes the backward needs.
    pub fn workspace_bytes(&self) -> usize {
        usize::try_from(self.workspace.total_bytes()).unwrap_or(usize::MAX)
    }

    fn features(&self) -> BwdFeatures {
        BwdFeatures {
            has_bias: self.problem.bias.is_some(),
            alibi: self.problem.alibi,
            dbias: self.dbias_mode(),
        }
    }

    fn dbias_mode(&self) -> DbiasMode {
        match (self.problem.dbias, self.problem.bias_broadcasts()) {
            (false, _) => DbiasMode::None,
            (true, false) => DbiasMode::Direct,
            (true, true) => DbiasMode::Accumulate,
        }
    }

    /// Every kernel build this plan launches.
    pub fn builds(&self) -> Vec<KernelBuild> {
        let p = &self.problem;
        let mut v = vec![
            KernelBuild::forward(self.forward, p.io, p.bias.is_some(), p.alibi),
            KernelBuild::preprocess(self.main, p.io),
            KernelBuild::bwd_main(self.main, p.io, self.features(), self.route),
            KernelBuild::convert(p.io),
        ];
        if self.route == Route::TwoKernel {
            v.push(KernelBuild::dq_gemm(self.dq_gemm, p.io));
        }
        v
    }

    fn base_params(&self) -> AttnParams {
        let p = &self.problem;
        AttnParams {
            batch: p.batch as i32,
            hq: p.hq as i32,
            hk: p.hk as i32,
            hv: p.hv as i32,
            sq: p.sq as i32,
            skv: p.skv as i32,
            bottom_right: i32::from(p.band.bottom_right),
            has_right: i32::from(p.band.right.is_some()),
            right_bound: p.band.right.unwrap_or(0),
            has_left: i32::from(p.band.left.is_some()),
            left_bound: p.band.left.unwrap_or(0),
            bias_b: p.bias.map_or(1, |b| b.batch as i32),
            bias_h: p.bias.map_or(1, |b| b.heads as i32),
            scale: p.scale,
            hd_qk: p.dqk as i32,
            hd_v: p.dv as i32,
            alibi_n: if p.alibi { 1 << p.hq.max(1).ilog2() } else { 0 },
            alibi_base: if p.alibi {
                (-8.0 / (1u32 << p.hq.max(1).ilog2()) as f32).exp2()
            } else {
                0.0
            },
            alibi_half: if p.alibi {
                (-4.0 / (1u32 << p.hq.max(1).ilog2()) as f32).exp2()
            } else {
                0.0
            },
            ..AttnParams::default()
        }
    }

    /// Bias strides with broadcast dims set to 0.
    fn bias_strides(&self, s: Strides) -> Strides {
        let b = self.problem.bias.map_or((1, 1), |b| (b.batch, b.heads));
        Strides {
            b: if b.0 == 1 { 0 } else { s.b },
            h: if b.1 == 1 { 0 } else { s.h },
            s: s.s,
        }
    }

    /// The padding mask's sequence-length tensors, checked against the problem.
    fn seq_refs(
        &self,
        lens: Option<&(CudaView<'_, i32>, CudaView<'_, i32>)>,
        st: &cudarc::driver::CudaStream,
    ) -> Result<(TensorRef, TensorRef), CudaError> {
        let p = &self.problem;
        match (p.padding, lens) {
            (false, _) => Ok((TensorRef::default(), TensorRef::default())),
            (true, Some((q, kv))) => {
                let dims = [p.batch, 1, 1, 1];
                Ok((
                    tref(q, "SEQ_LEN_Q", p.layouts.seq_q, dims, st)?,
                    tref(kv, "SEQ_LEN_KV", p.layouts.seq_kv, dims, st)?,
                ))
            }
            (true, None) => Err(CudaError::BufferSize {
                name: "SEQ_LEN_Q",
                needed: p.batch,
                actual: 0,
            }),
        }
    }

    /// Runs the forward: O and Stats.
    ///
    /// # Errors
    /// Buffer-size, compile or driver errors.
    pub fn forward(&self, dev: &CudaDevice, bufs: ForwardBuffers<'_>) -> Result<(), CudaError> {
        let (p, l, d, st) = (
            &self.problem,
            &self.problem.layouts,
            self.problem.dims(),
            dev.stream(),
        );
        let mut params = self.base_params();
        params.q = tref(&bufs.q, "Q", l.q, d.q, st)?;
        params.k = tref(&bufs.k, "K", l.k, d.k, st)?;
        params.v = tref(&bufs.v, "V", l.v, d.v, st)?;
        params.bias = bias_ref(
            bufs.bias.as_ref(),
            self.bias_strides(l.bias),
            l.bias,
            d.bias,
            st,
        )?;
        (params.seq_q, params.seq_kv) = self.seq_refs(bufs.seq_lens.as_ref(), st)?;
        let (mut o, mut stats) = (bufs.o, bufs.stats);
        params.o = tref_mut(&mut o, "O", l.o, d.o, st)?;
        params.stats = tref_mut(&mut stats, "Stats", l.stats, d.stats, st)?;
        let build = KernelBuild::forward(self.forward, p.io, p.bias.is_some(), p.alibi);
        let f = dev.function(&build)?;
        let grid = (
            p.sq.div_ceil(self.forward.block_q as usize) as u32,
            p.hq as u32,
            p.batch as u32,
        );
        // SAFETY: `f` comes from `build`; every pointer was checked against the extent its
        // dims and strides address (tref / tref_mut).
        unsafe { launch_attn(dev, &f, &build, grid, &params) }
    }

    /// Runs the backward: dQ, dK, dV and (when requested) dBias.
    ///
    /// # Errors
    /// Buffer-size, compile or driver errors.
    pub fn backward(&self, dev: &CudaDevice, bufs: BackwardBuffers<'_>) -> Result<(), CudaError> {
        let (p, l, d, st) = (
            &self.problem,
            &self.problem.layouts,
            self.problem.dims(),
            dev.stream(),
        );
        let ws = &self.workspace;
        if bufs.workspace.len() < self.workspace_bytes() {
            return Err(CudaError::BufferSize {
                name: "workspace",
                needed: self.workspace_bytes(),
                actual: bufs.workspace.len(),
            });
        }
        let mut params = self.base_params();
        params.q = tref(&bufs.q, "Q", l.q, d.q, st)?;
        params.k = tref(&bufs.k, "K", l.k, d.k, st)?;
        params.v = tref(&bufs.v, "V", l.v, d.v, st)?;
        params.o = tref(&bufs.o, "O", l.o, d.o, st)?;
        params.d_o = tref(&bufs.d_o, "dO", l.d_o, d.o, st)?;
        params.stats = tref(&bufs.stats, "Stats", l.stats, d.stats, st)?;
        params.bias = bias_ref(
            bufs.bias.as_ref(),
            self.bias_strides(l.bias),
            l.bias,
            d.bias,
            st,
        )?;
        (params.seq_q, params.seq_kv) = self.seq_refs(bufs.seq_lens.as_ref(), st)?;
        let (mut dq, mut dk, mut dv) = (bufs.dq, bufs.dk, bufs.dv);
        params.dq = tref_mut(&mut dq, "dQ", l.dq, d.q, st)?;
        params.dk = tref_mut(&mut dk, "dK", l.dk, d.k, st)?;
        params.dv = tref_mut(&mut dv, "dV", l.dv, d.v, st)?;
        if p.dbias {
            let (Some(mut buf), Some(dims)) = (bufs.dbias, d.bias) else {
                return Err(CudaError::BufferSize {
                    name: "dBias",
                    needed: 1,
                    actual: 0,
                });
            };
            params.dbias = tref_mut(&mut buf, "dBias", l.dbias, dims, st)?;
        }
        let ws_base = {
            let (ptr, _guard) = bufs.workspace.device_ptr(st);
            ptr
        };
        let region = |kind| ws.region(kind).map_or(0, |r| ws_base + r.offset);
        params.delta = region(RegionKind::Delta);
        params.dq_accum = region(RegionKind::DqAccum);
        params.dbias_accum = region(RegionKind::DbiasAccum);
        params.relay = region(RegionKind::RelayCounters);
        params.ds = region(RegionKind::DScores);

        let main = self.main;
        let pre = KernelBuild::preprocess(main, p.io);
        let bwd = KernelBuild::bwd_main(main, p.io, self.features(), self.route);
        let conv = KernelBuild::convert(p.io);
        let gemm = KernelBuild::dq_gemm(self.dq_gemm, p.io);
        let (f_pre, f_main, f_conv) = (
            dev.function(&pre)?,
            dev.function(&bwd)?,
            dev.function(&conv)?,
        );
        let f_gemm = match self.route {
            Route::TwoKernel => Some(dev.function(&gemm)?),
            Route::Atomic | Route::Relay => None,
        };
        let (b, hq) = (p.batch as u32, p.hq as u32);
        // SAFETY (all launches below): each function comes from its build; every pointer was
        // checked against its extent above, and the workspace holds the analyzer's layout for
        // this route. The stream orders preprocess -> main -> dQ -> dBias.
        unsafe {
            launch_attn(
                dev,
                &f_pre,
                &pre,
                (p.sq.div_ceil(16) as u32, hq, b),
                &params,
            )?;
            let grid = (
                p.skv.div_ceil(main.block_kv as usize) as u32,
                p.hk as u32,
                b,
            );
            launch_attn(dev, &f_main, &bwd, grid, &params)?;
            if let Some(f) = &f_gemm {
                let grid = (p.sq.div_ceil(self.dq_gemm.block_q as usize) as u32, hq, b);
                launch_attn(dev, f, &gemm, grid, &params)?;
            } else {
                let dq = ConvertParams {
                    src: params.dq_accum,
                    dst: params.dq.ptr,
                    s0: l.dq.b,
                    s1: l.dq.h,
                    s2: l.dq.s,
                    d1: p.hq as i32,
                    d2: p.sq as i32,
                    d3: p.dqk as i32,
                    scale: p.scale,
                };
                launch_convert(dev, &f_conv, &conv, b, &dq)?;
            }
            if let (Some(_), Some(bias)) = (ws.region(RegionKind::DbiasAccum), p.bias) {
                let db = ConvertParams {
                    src: params.dbias_accum,
                    dst: params.dbias.ptr,
                    s0: l.dbias.b,
                    s1: l.dbias.h,
                    s2: l.dbias.s,
                    d1: bias.heads as i32,
                    d2: p.sq as i32,
                    d3: p.skv as i32,
                    scale: 1.0,
                };
                launch_convert(dev, &f_conv, &conv, bias.batch as u32, &db)?;
            }
        }
        Ok(())
    }
}

fn check<T>(
    buf: &impl DeviceSlice<T>,
    name: &'static str,
    s: Strides,
    dims: [usize; 4],
) -> Result<(), CudaError> {
    let needed = s.extent(dims);
    if buf.len() < needed {
        return Err(CudaError::BufferSize {
            name,
            needed,
            actual: buf.len(),
        });
    }
    Ok(())
}

fn tref<T>(
    buf: &impl DevicePtr<T>,
    name: &'static str,
    s: Strides,
    dims: [usize; 4],
    st: &cudarc::driver::CudaStream,
) -> Result<TensorRef, CudaError> {
    check(buf, name, s, dims)?;
    let (ptr, _guard) = buf.device_ptr(st);
    Ok(TensorRef {
        ptr,
        sb: s.b,
        sh: s.h,
        ss: s.s,
    })
}

fn tref_mut<T>(
    buf: &mut impl DevicePtrMut<T>,
    name: &'static str,
    s: Strides,
    dims: [usize; 4],
    st: &cudarc::driver::CudaStream,
) -> Result<TensorRef, CudaError> {
    check(buf, name, s, dims)?;
    let (ptr, _guard) = buf.device_ptr_mut(st);
    Ok(TensorRef {
        ptr,
        sb: s.b,
        sh: s.h,
        ss: s.s,
    })
}

fn bias_ref(
    buf: Option<&CudaView<'_, u16>>,
    kernel_strides: Strides,
    real: Strides,
    dims: Option<[usize; 4]>,
    st: &cudarc::driver::CudaStream,
) -> Result<TensorRef, CudaError> {
    match (buf, dims) {
        (Some(buf), Some(dims)) => {
            let r = tref(buf, "Bias", real, dims, st)?;
            Ok(TensorRef {
                sb: kernel_strides.b,
                sh: kernel_strides.h,
                ..r
            })
        }
        (None, Some(_)) => Err(CudaError::BufferSize {
            name: "Bias",
            needed: 1,
            actual: 0,
        }),
        _ => Ok(TensorRef::default()),
    }
}
