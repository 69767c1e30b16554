//! The sm120 engine plan: checks a problem against what the kernels implement, sizes the
//! workspace exactly, and runs the forward (O, Stats) or the backward chain
//! (preprocess -> main -> dQ convert [-> dBias convert]) of the `atomic` route.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::compile::{DbiasMode, KernelBuild};
use super::context::CudaDevice;
use super::error::CudaError;
use super::launch::{launch_attn, launch_convert};
use super::params::{AttnParams, ConvertParams, TensorRef};
use super::problem::{AttnProblem, Strides};
use super::table::KernelConfig;

/// Alignment of each workspace region (bytes).
const WS_ALIGN: usize = 256;

/// Byte offsets of the workspace regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceLayout {
    /// f32 delta [B][Hq][Sq].
    pub delta: usize,
    /// f32 dQ accumulator [B][Hq][Sq][Dqk].
    pub dq_accum: usize,
    /// f32 dBias accumulator [bias_b][bias_h][Sq][Skv], when dBias broadcasts.
    pub dbias_accum: Option<usize>,
    /// Total bytes.
    pub bytes: usize,
}

/// Device buffers of a forward run (io tensors as 16-bit words, Stats as f32).
#[derive(Debug)]
pub struct ForwardBuffers<'a> {
    /// Q.
    pub q: &'a CudaSlice<u16>,
    /// K.
    pub k: &'a CudaSlice<u16>,
    /// V.
    pub v: &'a CudaSlice<u16>,
    /// Bias, when the problem has one.
    pub bias: Option<&'a CudaSlice<u16>>,
    /// O (written).
    pub o: &'a mut CudaSlice<u16>,
    /// Stats (written).
    pub stats: &'a mut CudaSlice<f32>,
}

/// Device buffers of a backward run.
#[derive(Debug)]
pub struct BackwardBuffers<'a> {
    /// Q.
    pub q: &'a CudaSlice<u16>,
    /// K.
    pub k: &'a CudaSlice<u16>,
    /// V.
    pub v: &'a CudaSlice<u16>,
    /// O from the forward.
    pub o: &'a CudaSlice<u16>,
    /// dO.
    pub d_o: &'a CudaSlice<u16>,
    /// Stats from the forward.
    pub stats: &'a CudaSlice<f32>,
    /// Bias, when the problem has one.
    pub bias: Option<&'a CudaSlice<u16>>,
    /// dQ (written).
    pub dq: &'a mut CudaSlice<u16>,
    /// dK (written).
    pub dk: &'a mut CudaSlice<u16>,
    /// dV (written).
    pub dv: &'a mut CudaSlice<u16>,
    /// dBias (written), when requested.
    pub dbias: Option<&'a mut CudaSlice<u16>>,
    /// Workspace of [`Sm120Plan::workspace`]`.bytes` bytes.
    pub workspace: &'a mut CudaSlice<u8>,
}

/// A checked problem bound to a kernel configuration.
#[derive(Debug, Clone)]
pub struct Sm120Plan {
    problem: AttnProblem,
    config: &'static KernelConfig,
    workspace: WorkspaceLayout,
}

fn round_up(x: usize) -> usize {
    x.div_ceil(WS_ALIGN) * WS_ALIGN
}

impl Sm120Plan {
    /// Checks `problem` against the kernels and picks the configuration for its head dims.
    ///
    /// # Errors
    /// [`CudaError::NoKernelConfig`] or [`CudaError::Unsupported`] naming the constraint.
    pub fn new(problem: AttnProblem) -> Result<Self, CudaError> {
        let config = KernelConfig::for_head_dims(problem.dqk, problem.dv).ok_or(
            CudaError::NoKernelConfig {
                head_dim_qk: problem.dqk,
                head_dim_v: problem.dv,
            },
        )?;
        let p = &problem;
        let unsupported = |what| Err(CudaError::Unsupported { what });
        if p.batch == 0 || p.hq == 0 || p.hk == 0 || p.sq == 0 || p.skv == 0 {
            return unsupported("every dim must be at least 1");
        }
        if p.hq % p.hk != 0 || p.hk != p.hv {
            return unsupported("Hq must be a multiple of Hk, and Hk must equal Hv");
        }
        if p.batch > 65_535
            || p.hq > 65_535
            || p.sq > i32::MAX as usize / 2
            || p.skv > i32::MAX as usize / 2
        {
            return unsupported("B and H at most 65,535; Sq and Skv below 2^30");
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
        let delta = 0;
        let dq_accum = round_up(p.batch * p.hq * p.sq * 4);
        let mut bytes = dq_accum + round_up(p.batch * p.hq * p.sq * p.dqk * 4);
        let dbias_accum = match p.bias {
            Some(b) if p.dbias && p.bias_broadcasts() => {
                let at = bytes;
                bytes += round_up(b.batch * b.heads * p.sq * p.skv * 4);
                Some(at)
            }
            _ => None,
        };
        let workspace = WorkspaceLayout {
            delta,
            dq_accum,
            dbias_accum,
            bytes,
        };
        Ok(Self {
            problem,
            config,
            workspace,
        })
    }

    /// The kernel configuration chosen.
    pub fn config(&self) -> &'static KernelConfig {
        self.config
    }

    /// The problem.
    pub fn problem(&self) -> &AttnProblem {
        &self.problem
    }

    /// Exact workspace layout of the backward.
    pub fn workspace(&self) -> WorkspaceLayout {
        self.workspace
    }

    fn dbias_mode(&self) -> DbiasMode {
        match (self.problem.dbias, self.problem.bias_broadcasts()) {
            (false, _) => DbiasMode::None,
            (true, false) => DbiasMode::Direct,
            (true, true) => DbiasMode::Accumulate,
        }
    }

    /// Every kernel build this plan launches (compiled ahead by `prepare`).
    pub fn builds(&self) -> Vec<KernelBuild> {
        let p = &self.problem;
        vec![
            KernelBuild::forward(self.config, p.io, p.bias.is_some()),
            KernelBuild::preprocess(self.config, p.io),
            KernelBuild::bwd_main(self.config, p.io, p.bias.is_some(), self.dbias_mode()),
            KernelBuild::convert(p.io),
        ]
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
            shift: p.shift(),
            has_right: i32::from(p.band.right.is_some()),
            right_bound: p.band.right.unwrap_or(0),
            has_left: i32::from(p.band.left.is_some()),
            left_bound: p.band.left.unwrap_or(0),
            bias_b: p.bias.map_or(1, |b| b.batch as i32),
            bias_h: p.bias.map_or(1, |b| b.heads as i32),
            scale: p.scale,
            ..AttnParams::default()
        }
    }

    fn dims(&self) -> Dims {
        let p = &self.problem;
        Dims {
            q: [p.batch, p.hq, p.sq, p.dqk],
            k: [p.batch, p.hk, p.skv, p.dqk],
            v: [p.batch, p.hv, p.skv, p.dv],
            o: [p.batch, p.hq, p.sq, p.dv],
            stats: [p.batch, p.hq, p.sq, 1],
            bias: p.bias.map(|b| [b.batch, b.heads, p.sq, p.skv]),
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

    /// Runs the forward: O and Stats.
    ///
    /// # Errors
    /// Buffer-size, compile or driver errors.
    pub fn forward(&self, dev: &CudaDevice, bufs: ForwardBuffers<'_>) -> Result<(), CudaError> {
        let (p, l, d, st) = (
            &self.problem,
            &self.problem.layouts,
            self.dims(),
            dev.stream(),
        );
        let mut params = self.base_params();
        params.q = tref(bufs.q, "Q", l.q, d.q, st)?;
        params.k = tref(bufs.k, "K", l.k, d.k, st)?;
        params.v = tref(bufs.v, "V", l.v, d.v, st)?;
        params.bias = bias_ref(bufs.bias, self.bias_strides(l.bias), l.bias, d.bias, st)?;
        params.o = tref_mut(bufs.o, "O", l.o, d.o, st)?;
        params.stats = tref_mut(bufs.stats, "Stats", l.stats, d.stats, st)?;
        let build = KernelBuild::forward(self.config, p.io, p.bias.is_some());
        let f = dev.function(&build)?;
        let grid = (
            p.sq.div_ceil(self.config.fwd_block_q as usize) as u32,
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
            self.dims(),
            dev.stream(),
        );
        let ws = self.workspace;
        if bufs.workspace.len() < ws.bytes {
            return Err(CudaError::BufferSize {
                name: "workspace",
                needed: ws.bytes,
                actual: bufs.workspace.len(),
            });
        }
        let mut params = self.base_params();
        params.q = tref(bufs.q, "Q", l.q, d.q, st)?;
        params.k = tref(bufs.k, "K", l.k, d.k, st)?;
        params.v = tref(bufs.v, "V", l.v, d.v, st)?;
        params.o = tref(bufs.o, "O", l.o, d.o, st)?;
        params.d_o = tref(bufs.d_o, "dO", l.d_o, d.o, st)?;
        params.stats = tref(bufs.stats, "Stats", l.stats, d.stats, st)?;
        params.bias = bias_ref(bufs.bias, self.bias_strides(l.bias), l.bias, d.bias, st)?;
        params.dq = tref_mut(bufs.dq, "dQ", l.dq, d.q, st)?;
        params.dk = tref_mut(bufs.dk, "dK", l.dk, d.k, st)?;
        params.dv = tref_mut(bufs.dv, "dV", l.dv, d.v, st)?;
        if p.dbias {
            let (Some(buf), Some(dims)) = (bufs.dbias, d.bias) else {
                return Err(CudaError::BufferSize {
                    name: "dBias",
                    needed: 1,
                    actual: 0,
                });
            };
            params.dbias = tref_mut(buf, "dBias", l.dbias, dims, st)?;
        }
        let ws_base = {
            let (ptr, _guard) = bufs.workspace.device_ptr_mut(st);
            ptr
        };
        params.delta = ws_base + ws.delta as u64;
        params.dq_accum = ws_base + ws.dq_accum as u64;
        params.dbias_accum = ws.dbias_accum.map_or(0, |o| ws_base + o as u64);

        let cfg = self.config;
        let pre = KernelBuild::preprocess(cfg, p.io);
        let main = KernelBuild::bwd_main(cfg, p.io, p.bias.is_some(), self.dbias_mode());
        let conv = KernelBuild::convert(p.io);
        let (f_pre, f_main, f_conv) = (
            dev.function(&pre)?,
            dev.function(&main)?,
            dev.function(&conv)?,
        );
        let (b, hq) = (p.batch as u32, p.hq as u32);
        // SAFETY (all launches below): each function comes from its build; every pointer was
        // checked against its extent above, and the workspace holds `ws.bytes` bytes laid out
        // by `WorkspaceLayout`. The stream orders preprocess -> main -> converts.
        unsafe {
            launch_attn(
                dev,
                &f_pre,
                &pre,
                (p.sq.div_ceil(16) as u32, hq, b),
                &params,
            )?;
            let grid = (
                p.skv.div_ceil(cfg.bwd_block_kv as usize) as u32,
                p.hk as u32,
                b,
            );
            launch_attn(dev, &f_main, &main, grid, &params)?;
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
            if let (Some(_), Some(bias)) = (ws.dbias_accum, p.bias) {
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

struct Dims {
    q: [usize; 4],
    k: [usize; 4],
    v: [usize; 4],
    o: [usize; 4],
    stats: [usize; 4],
    bias: Option<[usize; 4]>,
}

fn check<T>(
    buf: &CudaSlice<T>,
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
    buf: &CudaSlice<T>,
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
    buf: &mut CudaSlice<T>,
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
    buf: Option<&CudaSlice<u16>>,
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
