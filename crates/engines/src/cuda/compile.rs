//! NVRTC compilation of the kernels in crates/engines/kernels/, with the configuration passed as
//! defines, and a PTX cache in memory and on disk keyed by source hash, options, architecture and
//! NVRTC version.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::nvrtc::{CompileError, CompileOptions};

use super::error::CudaError;
use rime_analyzer::sm120::kernels::ragged_dbias_sum_fits;
use rime_analyzer::{KernelConfig, KernelRole, Route};

/// Helpers every kernel uses; first in each kernel source (no toolkit headers needed).
const COMMON: &str = include_str!("../../kernels/common.cuh");

/// What the attention kernels share about the problem; after the generated ABI.
pub(super) const ATTN: &str = include_str!("../../kernels/attn.cuh");

/// The kernel source files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelFile {
    /// sdpa_fwd.cu: O and Stats.
    Forward,
    /// bwd_preprocess.cu: delta, zeroed accumulators.
    Preprocess,
    /// bwd_main.cu: dK, dV, dQ accum, dBias.
    BwdMain,
    /// convert.cu: f32 accumulator to io dtype.
    Convert,
    /// dq_gemm.cu: dQ = scale * dS K (two_kernel route).
    DqGemm,
    /// dbias_reduce.cu: a broadcast bias's dBias summed in order from the dS workspace
    /// (two_kernel route).
    DbiasReduce,
    /// dsink_reduce.cu: dSink, the preprocess kernel's row terms summed per head in a fixed
    /// order (every route).
    DsinkReduce,
}

impl KernelFile {
    /// Every kernel file.
    pub const ALL: [KernelFile; 7] = [
        Self::Forward,
        Self::Preprocess,
        Self::BwdMain,
        Self::Convert,
        Self::DqGemm,
        Self::DbiasReduce,
        Self::DsinkReduce,
    ];

    /// File name under crates/engines/kernels/.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::Forward => "sdpa_fwd.cu",
            Self::Preprocess => "bwd_preprocess.cu",
            Self::BwdMain => "bwd_main.cu",
            Self::Convert => "convert.cu",
            Self::DqGemm => "dq_gemm.cu",
            Self::DbiasReduce => "dbias_reduce.cu",
            Self::DsinkReduce => "dsink_reduce.cu",
        }
    }

    /// The `extern "C"` entry point.
    pub fn entry(self) -> &'static str {
        match self {
            Self::Forward => "rime_sdpa_fwd",
            Self::Preprocess => "rime_bwd_preprocess",
            Self::BwdMain => "rime_bwd_main",
            Self::Convert => "rime_convert",
            Self::DqGemm => "rime_dq_gemm",
            Self::DbiasReduce => "rime_dbias_reduce",
            Self::DsinkReduce => "rime_dsink_reduce",
        }
    }

    fn body(self) -> &'static str {
        match self {
            Self::Forward => include_str!("../../kernels/sdpa_fwd.cu"),
            Self::Preprocess => include_str!("../../kernels/bwd_preprocess.cu"),
            Self::BwdMain => include_str!("../../kernels/bwd_main.cu"),
            Self::Convert => include_str!("../../kernels/convert.cu"),
            Self::DqGemm => include_str!("../../kernels/dq_gemm.cu"),
            Self::DbiasReduce => include_str!("../../kernels/dbias_reduce.cu"),
            Self::DsinkReduce => include_str!("../../kernels/dsink_reduce.cu"),
        }
    }

    /// Full source handed to NVRTC: common helpers, the generated kernel ABI
    /// ([`super::abi::header`]), the attention helpers, then the kernel.
    pub fn source(self) -> String {
        format!(
            "{COMMON}\n{}\n#line 1 \"attn.cuh\"\n{ATTN}\n#line 1 \"{}\"\n{}",
            super::abi::header(),
            self.file_name(),
            self.body()
        )
    }
}

/// Element type of Q, K, V, O, dO and the gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoType {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
}

impl IoType {
    fn is_bf16(self) -> i64 {
        i64::from(self == Self::Bf16)
    }
}

/// How the main backward kernel produces dBias.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DbiasMode {
    /// No dBias requested.
    None = 0,
    /// Each dBias element has one writer: stored directly in the io dtype.
    Direct = 1,
    /// Bias broadcast over batch or heads: f32 accumulator plus the convert kernel (atomic and
    /// relay; two_kernel builds `None` and sums its dS workspace instead, dbias_reduce.cu).
    Accumulate = 2,
    /// Bias broadcast over batch or heads, ordered_dbias route: one f32 partial slice per
    /// (batch, head), each element stored once; the convert kernel sums them in order.
    Partials = 3,
}

/// What the main backward kernel is specialised for, besides tiles, dtype and route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BwdFeatures {
    /// An additive bias is read.
    pub has_bias: bool,
    /// ALiBi slopes are added to the scores.
    pub alibi: bool,
    /// How dBias is produced.
    pub dbias: DbiasMode,
    /// The grid is (Hk, B, KV tiles), KV tile slowest (`KV_MAJOR`): the plan's choice under a
    /// causal band (see `heaviest_tiles_first` in plan.rs); never on relay or ordered_dbias,
    /// nor on a main kernel whose KV tile is below [`KV_MAJOR_MIN_BLOCK_KV`].
    pub kv_major: bool,
    /// Some Q, K, V, O, dO, Stats, dK or dV is ragged (THD): `RAGGED=1`, the kernel reads each
    /// tensor's offsets; 0 compiles the padded layout alone.
    pub ragged: bool,
    /// The streamed Q and dO tiles arrive by tensor copies (TMA) from warp 0, completing on an
    /// mbarrier, instead of cp.async from the copy groups (`TMA_TILES`; the kernel then takes
    /// the plan's tensor maps, tma.rs, as a second parameter): the plan's choice where
    /// [`tensor_copies_serve`] holds.
    pub tma: bool,
}

/// True when the main kernel of `main` takes its streamed Q and dO tiles by tensor copies on
/// `route`, on a device of compute capability `sm`, for a graph with or without variable
/// lengths (ragged tensors or a padding mask) and a bias and with head dims `(dqk, dv)`: only
/// on two_kernel, whose main kernels they made 1-8% faster (d96 to d256, H100 call T3 of
/// 2026-12-07), where on atomic the d128 kernels took 1.5% longer with them and relay and
/// ordered_dbias were not timed; the copies need sm_90 or newer (SM120 has them); the kernel
/// has them where Q and dO are copied together as a step starts (the split layouts and those
/// with two dO buffers); a ragged tensor's batches start at offsets a tensor map cannot hold,
/// and a map bounds rows by Sq alone, where a padding mask's rows past each batch's length are
/// padding the kernel must not read (it may be NaN, and a masked 0 times NaN is NaN:
/// bwd_main.cu's `Q_ROWS`); one box a tile takes head dims of whole
/// 16-column panels (tma.rs); and with a bias the builds ran short of registers (on sm_120 the
/// d256 ones with a direct dBias spilled 8 B, the d192 ones took 250-252 registers where the
/// cp.async builds take 241).
pub fn tensor_copies_serve(
    main: &KernelConfig,
    route: Route,
    sm: u32,
    (varlen, has_bias): (bool, bool),
    (dqk, dv): (usize, usize),
) -> bool {
    route == Route::TwoKernel
        && sm >= TENSOR_COPY_MIN_SM
        && !varlen
        && !has_bias
        && dqk % 16 == 0
        && dv % 16 == 0
        && main
            .layout
            .is_some_and(|l| l.split || (l.do_buffers == 2 && main.stages == 2))
}

/// The first compute capability with tensor copies (`cp.async.bulk.tensor`) and mbarrier
/// transaction counts.
pub const TENSOR_COPY_MIN_SM: u32 = 90;

/// The smallest KV tile that gets the KV-major grid. A block streams all of its head's Q and dO
/// rows once per KV tile, so the bytes it reads per unit of work grow as its KV tile shrinks; the
/// 32-row tile of the d256 kernel lives on the L2 reuse that the head-major order gives (the
/// blocks running together share a head's Q and dO), and KV-major lost it: 0.90x at b4 h16
/// s2048 d256 causal, while the 64- and 128-row tiles gained up to 1.54x (H200 call F,
/// 2026-12-03, docs/gpu-runs/2026-12-03-kvmajor).
pub const KV_MAJOR_MIN_BLOCK_KV: u32 = 64;

/// True when `main` (a backward main entry) is built, and may run, on the KV-major grid.
pub fn kv_major_pays(main: &KernelConfig) -> bool {
    main.block_kv >= KV_MAJOR_MIN_BLOCK_KV
}

/// One kernel specialization: a file plus the defines that configure it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelBuild {
    /// Which kernel.
    pub file: KernelFile,
    /// The kernel table entry whose tiles it is compiled with (the main kernel's for the
    /// preprocess and dBias reduction kernels; none for convert): what a plan's kernels are
    /// checked against.
    pub entry: Option<&'static str>,
    /// `-D` defines, in a fixed order.
    pub defines: Vec<(&'static str, i64)>,
    /// Threads per block the kernel is launched with.
    pub threads: u32,
    /// Dynamic shared memory per block (bytes).
    pub smem_bytes: u32,
}

/// The kernel's DQ_ROUTE: how dQ is reduced (ordered_dbias reduces it as relay does).
fn route_code(route: Route) -> i64 {
    match route {
        Route::Atomic => 0,
        Route::Relay | Route::OrderedDbias => 1,
        Route::TwoKernel => 2,
    }
}

impl KernelBuild {
    fn tiled(file: KernelFile, k: &'static KernelConfig, io: IoType) -> Self {
        let mut b = Self {
            file,
            entry: Some(k.name),
            defines: vec![
                ("HEAD_DIM_QK", k.head_dim_qk.into()),
                ("HEAD_DIM_V", k.head_dim_v.into()),
                ("BLOCK_Q", k.block_q.into()),
                ("BLOCK_KV", k.block_kv.into()),
                ("WARPS", k.warps.into()),
                ("STAGES", k.stages.into()),
                ("IS_BF16", io.is_bf16()),
                ("SMEM_BYTES", k.smem_bytes.into()),
            ],
            threads: k.threads(),
            smem_bytes: k.smem_bytes,
        };
        if let Some(l) = k.layout {
            b.defines.extend([
                ("WM_SDP", l.sdp.into()),
                ("WM_DKV", l.dkv.into()),
                ("WM_DQ", l.dq.into()),
                ("K_REGS", i64::from(l.k_regs)),
                ("V_REGS", i64::from(l.v_regs)),
                ("V_STAGED", i64::from(l.v_staged)),
                ("SPLIT_SDP", i64::from(l.split)),
                ("DO_BUFS", l.do_buffers.into()),
            ]);
        }
        b
    }

    /// The forward kernel of a `Forward` table entry.
    pub fn forward(k: &'static KernelConfig, io: IoType, has_bias: bool, alibi: bool) -> Self {
        let mut b = Self::tiled(KernelFile::Forward, k, io);
        b.defines.push(("HAS_BIAS", i64::from(has_bias)));
        b.defines.push(("HAS_ALIBI", i64::from(alibi)));
        b
    }

    /// The backward preprocess kernel (delta, zeroed accumulators and relay counters) for a
    /// `BackwardMain` entry.
    pub fn preprocess(main: &'static KernelConfig, io: IoType) -> Self {
        Self {
            file: KernelFile::Preprocess,
            entry: Some(main.name),
            defines: vec![
                ("HEAD_DIM_QK", main.head_dim_qk.into()),
                ("HEAD_DIM_V", main.head_dim_v.into()),
                ("IS_BF16", io.is_bf16()),
                ("RELAY_TILE", main.block_q.into()),
            ],
            threads: super::abi::PRE_WARPS * 32,
            smem_bytes: 0,
        }
    }

    /// The main backward kernel of a `BackwardMain` entry, for one route.
    pub fn bwd_main(
        main: &'static KernelConfig,
        io: IoType,
        features: BwdFeatures,
        route: Route,
    ) -> Self {
        let BwdFeatures {
            has_bias,
            alibi,
            dbias,
            kv_major,
            ragged,
            tma,
        } = features;
        let mut b = Self::tiled(KernelFile::BwdMain, main, io);
        b.defines.push(("HAS_BIAS", i64::from(has_bias)));
        b.defines.push(("HAS_ALIBI", i64::from(alibi)));
        b.defines.push(("DBIAS_MODE", dbias as i64));
        b.defines.push(("KV_MAJOR", i64::from(kv_major)));
        b.defines.push(("RAGGED", i64::from(ragged)));
        b.defines.push(("TMA_TILES", i64::from(tma)));
        b.defines.push(("DQ_ROUTE", route_code(route)));
        b
    }

    /// The dQ GEMM of a `DqGemm` entry (two_kernel route).
    pub fn dq_gemm(k: &'static KernelConfig, io: IoType) -> Self {
        Self::tiled(KernelFile::DqGemm, k, io)
    }

    /// The f32 -> io dtype convert kernel.
    pub fn convert(io: IoType) -> Self {
        Self::elementwise(KernelFile::Convert, io)
    }

    /// The two_kernel route's broadcast-dBias reduction over the dS workspace of `main` (a
    /// `BackwardMain` entry): it reads only the rows `main`'s tiles walk, so it takes them.
    pub fn dbias_reduce(main: &'static KernelConfig, io: IoType) -> Self {
        let mut b = Self::elementwise(KernelFile::DbiasReduce, io);
        b.entry = Some(main.name);
        b.defines.push(("MAIN_BLOCK_Q", main.block_q.into()));
        b.defines.push(("MAIN_BLOCK_KV", main.block_kv.into()));
        b
    }

    /// dSink summed per head from the preprocess kernel's row terms.
    pub fn dsink_reduce(io: IoType) -> Self {
        Self::elementwise(KernelFile::DsinkReduce, io)
    }

    /// A kernel of CONVERT_THREADS threads without dynamic shared memory or tiles.
    fn elementwise(file: KernelFile, io: IoType) -> Self {
        Self {
            file,
            entry: None,
            defines: vec![("IS_BF16", io.is_bf16())],
            threads: super::abi::CONVERT_THREADS,
            smem_bytes: 0,
        }
    }

    /// The kernel file that implements a table entry's role.
    pub fn file_of(role: KernelRole) -> KernelFile {
        match role {
            KernelRole::Forward => KernelFile::Forward,
            KernelRole::BackwardMain => KernelFile::BwdMain,
            KernelRole::DqGemm => KernelFile::DqGemm,
        }
    }

    /// Every specialization a table entry can need (what the fitness test compiles): a
    /// `BackwardMain` entry's for the routes it serves, with the auxiliary preprocess, convert
    /// and reduction kernels.
    pub fn all_for(k: &'static KernelConfig) -> Vec<Self> {
        let mut v = Vec::new();
        for io in [IoType::Bf16, IoType::F16] {
            match k.role {
                KernelRole::Forward => {
                    for (has_bias, alibi) in
                        [(false, false), (true, false), (false, true), (true, true)]
                    {
                        v.push(Self::forward(k, io, has_bias, alibi));
                    }
                }
                KernelRole::BackwardMain => {
                    for route in Route::ALL.into_iter().filter(|&r| k.serves(r)) {
                        for alibi in [false, true] {
                            for f in Self::bwd_features(k, route, alibi) {
                                v.push(Self::bwd_main(k, io, f, route));
                            }
                        }
                    }
                    v.push(Self::preprocess(k, io));
                    v.push(Self::convert(io));
                    v.push(Self::dbias_reduce(k, io));
                    v.push(Self::dsink_reduce(io));
                }
                KernelRole::DqGemm => v.push(Self::dq_gemm(k, io)),
            }
        }
        v
    }

    /// The feature sets a route's main kernel `k` is built with: ordered_dbias only serves a
    /// broadcast bias's dBias (partials); the other routes every other combination.
    fn bwd_features(k: &KernelConfig, route: Route, alibi: bool) -> Vec<BwdFeatures> {
        let with_bias = |dbias| BwdFeatures {
            has_bias: true,
            alibi,
            dbias,
            kv_major: false,
            ragged: false,
            tma: false,
        };
        if route == Route::OrderedDbias {
            // Partials are summed in the kernel: a ragged build only where it fits (SMX014).
            let partials = with_bias(DbiasMode::Partials);
            let ragged = BwdFeatures {
                ragged: true,
                ..partials
            };
            return std::iter::once(partials)
                .chain(ragged_dbias_sum_fits(k).then_some(ragged))
                .collect();
        }
        let plain = BwdFeatures {
            has_bias: false,
            alibi,
            dbias: DbiasMode::None,
            kv_major: false,
            ragged: false,
            tma: false,
        };
        let mut v = vec![plain];
        v.extend([DbiasMode::None, DbiasMode::Direct, DbiasMode::Accumulate].map(with_bias));
        // Relay's tickets order its KV tiles; the other routes also build the KV-major grid.
        if route != Route::Relay && kv_major_pays(k) {
            let kv_major: Vec<_> = v
                .iter()
                .map(|f| BwdFeatures {
                    kv_major: true,
                    ..*f
                })
                .collect();
            v.extend(kv_major);
        }
        // Every combination again with ragged tensors, but those that sum a broadcast bias's
        // dBias in the kernel where the analyzer refuses them (SMX014).
        let sums = |f: &BwdFeatures| matches!(f.dbias, DbiasMode::Accumulate | DbiasMode::Partials);
        let ragged: Vec<_> = v
            .iter()
            .filter(|f| ragged_dbias_sum_fits(k) || !sums(f))
            .map(|f| BwdFeatures { ragged: true, ..*f })
            .collect();
        // The padded ones again with tensor copies where the route and layout take them (every
        // device the fitness test builds for has them).
        let dim = |d: u32| usize::try_from(d).unwrap_or(0);
        let dims = (dim(k.head_dim_qk), dim(k.head_dim_v));
        let tma: Vec<_> = v
            .iter()
            .filter(|f| {
                tensor_copies_serve(k, route, TENSOR_COPY_MIN_SM, (f.ragged, f.has_bias), dims)
            })
            .map(|f| BwdFeatures { tma: true, ..*f })
            .collect();
        v.extend(ragged);
        v.extend(tma);
        v
    }

    /// NVRTC options for a virtual architecture (e.g. 120 -> compute_120).
    pub fn options(&self, arch: u32) -> Vec<String> {
        let mut o = vec![
            format!("--gpu-architecture=compute_{arch}"),
            "--std=c++17".to_string(),
        ];
        o.extend(self.defines.iter().map(|(k, v)| format!("-D{k}={v}")));
        o
    }

    /// Short description, e.g. `bwd_main.cu HEAD_DIM_QK=128 ...`.
    pub fn describe(&self) -> String {
        let mut s = self.file.file_name().to_string();
        for (k, v) in &self.defines {
            s.push_str(&format!(" {k}={v}"));
        }
        s
    }
}

/// NVRTC's version (major, minor): the CUDA 13 one cudarc loads.
///
/// # Errors
/// [`CudaError::Unavailable`] when NVRTC is missing or of another major version.
pub fn nvrtc_version() -> Result<(i32, i32), CudaError> {
    // Cached per process by the probe (every kernel lookup needs it for the cache key).
    Ok(super::nvrtc_probe::nvrtc_status()?)
}

/// Compiles one specialization to PTX for `compute_{arch}` (no GPU needed).
///
/// # Errors
/// [`CudaError::Compile`] with the options and the full log when NVRTC rejects the source;
/// [`CudaError::Unavailable`] without NVRTC.
pub fn compile_ptx(build: &KernelBuild, arch: u32) -> Result<String, CudaError> {
    compile_source(
        build.file.file_name(),
        build.file.source(),
        build.options(arch),
    )
}

/// Compiles `source` (named `kernel` in errors) to PTX with NVRTC `options`.
///
/// # Errors
/// As [`compile_ptx`].
pub(crate) fn compile_source(
    kernel: &'static str,
    source: String,
    options: Vec<String>,
) -> Result<String, CudaError> {
    super::nvrtc_probe::nvrtc_status()?;
    let opts = CompileOptions {
        options,
        name: Some(kernel.to_string()),
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { options, log, .. }) => Err(CudaError::Compile {
            kernel,
            options,
            log: log.to_string_lossy().into_owned(),
        }),
        Err(other) => Err(CudaError::Nvrtc {
            kernel,
            during: "compile",
            detail: format!("{other:?}"),
        }),
    }
}

/// The source of the ABI offset check: common helpers, the ABI, then
/// `abi::offset_check_kernel` with `skew`.
#[cfg(test)]
pub(crate) fn abi_check_source(skew: usize) -> String {
    format!(
        "{COMMON}\n{}\n{}",
        super::abi::header(),
        super::abi::offset_check_kernel(skew)
    )
}

/// FNV-1a's offset basis: the state before any byte.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// 64-bit FNV-1a of `parts` continued from state `h` (start at [`FNV_OFFSET`]): stable across
/// Rust versions, so on-disk keys stay valid; continuing from a stored state hashes a common
/// prefix once.
fn fnv1a_from(mut h: u64, parts: &[&[u8]]) -> u64 {
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff; // separator, so ("ab","c") and ("a","bc") differ
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The FNV-1a state after a kernel file's full source, computed once per file: the sources are
/// compiled in, and hashing tens of kilobytes on every kernel lookup (each execute looks its
/// kernels up) would dominate the lookup.
fn source_state(file: KernelFile) -> u64 {
    static STATES: [OnceLock<u64>; KernelFile::ALL.len()] =
        [const { OnceLock::new() }; KernelFile::ALL.len()];
    let at = KernelFile::ALL.iter().position(|&f| f == file).unwrap_or(0);
    *STATES[at].get_or_init(|| fnv1a_from(FNV_OFFSET, &[file.source().as_bytes()]))
}

/// Cache key: source hash, options, arch and NVRTC version.
pub fn cache_key(build: &KernelBuild, arch: u32, nvrtc: (i32, i32)) -> String {
    let options = build.options(arch).join(" ");
    let version = format!("nvrtc{}.{}", nvrtc.0, nvrtc.1);
    let h = fnv1a_from(
        source_state(build.file),
        &[options.as_bytes(), version.as_bytes()],
    );
    format!("{}-sm{arch}-{version}-{h:016x}", build.file.entry())
}

/// Compiled PTX, cached in memory and (optionally) on disk.
#[derive(Debug)]
pub struct PtxCache {
    memory: Mutex<HashMap<String, Arc<str>>>,
    dir: Option<PathBuf>,
}

impl PtxCache {
    /// A cache that also persists to `dir` (None: memory only).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            memory: Mutex::new(HashMap::new()),
            dir,
        }
    }

    /// `$RIME_KERNEL_CACHE`, else `$XDG_CACHE_HOME/rime/kernels`, else `$HOME/.cache/rime/kernels`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(d) = std::env::var_os("RIME_KERNEL_CACHE") {
            return Some(PathBuf::from(d));
        }
        if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
            return Some(PathBuf::from(d).join("rime/kernels"));
        }
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rime/kernels"))
    }

    /// PTX for `build` on `compute_{arch}`, compiling at most once per key.
    ///
    /// # Errors
    /// As [`compile_ptx`]; disk-cache failures are not errors (they only cost a recompile).
    pub(crate) fn get_or_compile(
        &self,
        build: &KernelBuild,
        arch: u32,
    ) -> Result<(String, Arc<str>), CudaError> {
        let key = cache_key(build, arch, nvrtc_version()?);
        if let Some(hit) = self.lock().get(&key) {
            return Ok((key, hit.clone()));
        }
        let path = self.dir.as_ref().map(|d| d.join(format!("{key}.ptx")));
        let ptx: Arc<str> = match path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
            Some(text) => text.into(),
            None => {
                let text = compile_ptx(build, arch)?;
                if let (Some(dir), Some(p)) = (&self.dir, &path) {
                    // Write then rename, so a concurrent reader never sees half a file.
                    let tmp = p.with_extension(format!("ptx.{}", std::process::id()));
                    let _ = std::fs::create_dir_all(dir)
                        .and_then(|()| std::fs::write(&tmp, &text))
                        .and_then(|()| std::fs::rename(&tmp, p));
                }
                text.into()
            }
        };
        self.lock().insert(key.clone(), ptx.clone());
        Ok((key, ptx))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<str>>> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts).
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rime_analyzer::sm120::KERNELS;

    #[test]
    fn keys_change_with_options_arch_and_version() {
        let cfg = &KERNELS[0];
        let a = KernelBuild::forward(cfg, IoType::Bf16, false, false);
        let b = KernelBuild::forward(cfg, IoType::F16, false, false);
        assert_ne!(cache_key(&a, 120, (13, 0)), cache_key(&b, 120, (13, 0)));
        assert_ne!(cache_key(&a, 120, (13, 0)), cache_key(&a, 90, (13, 0)));
        assert_ne!(cache_key(&a, 120, (13, 0)), cache_key(&a, 120, (13, 1)));
        assert_eq!(cache_key(&a, 120, (13, 0)), cache_key(&a, 120, (13, 0)));
    }

    #[test]
    fn kv_major_grid_is_built_for_the_64_and_128_row_kv_tiles_only() {
        use rime_analyzer::sm120::kernels::select;
        let pays = |dqk, dv| {
            let main = select(KernelRole::BackwardMain, dqk, dv).expect("an envelope");
            let built = KernelBuild::all_for(main)
                .iter()
                .any(|b| b.defines.contains(&("KV_MAJOR", 1)));
            assert_eq!(built, kv_major_pays(main), "{}", main.name);
            built
        };
        // Every envelope's KV tile is 64 or 128 rows since the d256 entry went to 32 x 64
        // (2026-12-03); its 32-row tile had lost 10% on KV-major.
        assert!(pays(64, 64) && pays(128, 128) && pays(192, 128) && pays(256, 256));
    }

    #[test]
    fn tensor_copies_are_built_for_two_kernel_without_a_bias_or_ragged_tensors_only() {
        use rime_analyzer::sm120::kernels::select_main;
        let copies = |b: &KernelBuild| b.defines.contains(&("TMA_TILES", 1));
        for k in KERNELS
            .iter()
            .filter(|k| k.role == KernelRole::BackwardMain)
        {
            for b in KernelBuild::all_for(k).iter().filter(|b| copies(b)) {
                assert!(b.defines.contains(&("DQ_ROUTE", 2)), "{}", k.name);
                assert!(b.defines.contains(&("HAS_BIAS", 0)), "{}", k.name);
                assert!(b.defines.contains(&("RAGGED", 0)), "{}", k.name);
            }
        }
        // The rule the plan applies (on an SM120, without a bias or ragged tensors) is the rule
        // the builds follow.
        let serve = |route, dqk: i64, dv: i64| {
            let main = select_main(route, dqk, dv).expect("an envelope");
            let dims = (usize::try_from(dqk).unwrap(), usize::try_from(dv).unwrap());
            let serves = tensor_copies_serve(main, route, 120, (false, false), dims);
            let built = KernelBuild::all_for(main).iter().any(copies);
            assert!(serves <= built, "{}", main.name);
            serves
        };
        // The split layouts (d192, 192/128, d256) and d128's two dO buffers take them; d64's
        // layout copies Q and dO at different points of a step and does not.
        for (dqk, dv) in [(128, 128), (192, 128), (192, 192), (256, 256), (96, 96)] {
            assert!(serve(Route::TwoKernel, dqk, dv), "d{dqk}/{dv}");
            assert!(!serve(Route::Atomic, dqk, dv) && !serve(Route::Relay, dqk, dv));
        }
        assert!(!serve(Route::TwoKernel, 64, 64) && !serve(Route::TwoKernel, 32, 32));
        // Not before sm_90, nor for head dims that end inside a 16-column panel, variable
        // lengths (a ragged tensor or a padding mask) or a bias.
        let main = select_main(Route::TwoKernel, 192, 192).expect("an envelope");
        let two_kernel =
            |sm, features, dims| tensor_copies_serve(main, Route::TwoKernel, sm, features, dims);
        assert!(two_kernel(90, (false, false), (192, 192)));
        assert!(!two_kernel(89, (false, false), (192, 192)));
        assert!(!two_kernel(120, (false, false), (184, 184)));
        assert!(!two_kernel(120, (true, false), (192, 192)));
        assert!(!two_kernel(120, (false, true), (192, 192)));
    }

    #[test]
    fn ragged_builds_sum_a_broadcast_dbias_only_where_they_fit() {
        for k in KERNELS
            .iter()
            .filter(|k| k.role == KernelRole::BackwardMain)
        {
            let builds = KernelBuild::all_for(k);
            let ragged_sums = builds.iter().any(|b| {
                b.defines.contains(&("RAGGED", 1))
                    && (b.defines.contains(&("DBIAS_MODE", 2))
                        || b.defines.contains(&("DBIAS_MODE", 3)))
            });
            assert_eq!(ragged_sums, ragged_dbias_sum_fits(k), "{}", k.name);
            assert!(builds.iter().any(|b| b.defines.contains(&("RAGGED", 1))));
        }
    }

    #[test]
    fn keys_hash_the_whole_source_options_and_version() {
        // The per-file stored state must give the key of hashing everything in one go, so that
        // kernel caches on disk written before it stay valid.
        for (n, build) in KERNELS.iter().flat_map(KernelBuild::all_for).enumerate() {
            let (arch, nvrtc) = (120 - 30 * (n as u32 % 2), (13, n as i32 % 3));
            let source = build.file.source();
            let options = build.options(arch).join(" ");
            let version = format!("nvrtc{}.{}", nvrtc.0, nvrtc.1);
            let parts = [source.as_bytes(), options.as_bytes(), version.as_bytes()];
            let whole = fnv1a_from(FNV_OFFSET, &parts);
            let key = cache_key(&build, arch, nvrtc);
            assert!(key.ends_with(&format!("-{whole:016x}")), "{key}");
        }
    }

    /// Every kernel is launched as a programmatic dependent launch on sm_90+ (launch.rs), so
    /// the first statement of its body must be `pdl_enter()`: a kernel that touched global
    /// memory before it could read its predecessor's outputs before they are written.
    #[test]
    fn every_kernel_waits_for_its_predecessor_first() {
        for f in KernelFile::ALL {
            let body = f.body();
            let entry = body
                .find(&format!("{}(", f.entry()))
                .unwrap_or_else(|| panic!("{}: no {}", f.file_name(), f.entry()));
            let open = entry + body[entry..].find('{').expect("a body");
            let first = body[open + 1..]
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("//"))
                .unwrap_or_default();
            assert!(
                first.starts_with("pdl_enter();"),
                "{}: the first statement of {} is `{first}`, not pdl_enter()",
                f.file_name(),
                f.entry()
            );
        }
    }

    #[test]
    fn sources_are_self_contained_and_carry_the_abi() {
        for f in KernelFile::ALL {
            let source = f.source();
            assert!(!source.contains("#include"), "{}", f.file_name());
            assert!(
                source.contains(&super::super::abi::header()),
                "{}",
                f.file_name()
            );
        }
    }
}
