//! Host-side costs around a backward plan (issue 7, item 5): the support decision, the first
//! plan build (NVRTC compiles), plan builds with a warm kernel cache, and the host time of one
//! execution on a tiny problem. Parts that need NVRTC or a GPU detect their absence and print
//! why they are skipped. See docs/performance.md, "Host-side costs".

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode};
use rime::analyzer::{analyze, heuristics, Candidate, HeuristicsOptions, Route, Target};
use rime::engines::cuda::{probe, CudaDevice, CudaStatus, PtxCache, Sm120EnginePlan};
use rime::engines::{CpuEngine, Engine, HostBuffer, Plan, VariantPack, Workspace};
use rime::graph::{DataType, Graph};
use rime_conformance::workload::{
    sm120_candidates, BackwardCase, BiasKind, Prepared, Tokens, Workload,
};

/// The typical backward plan: d128 bf16, causal, per-batch bias with dBias.
fn case(b: usize, h: usize, s: usize, d: usize) -> BackwardCase {
    BackwardCase {
        b,
        hq: h,
        hk: h,
        sq: s,
        skv: s,
        d,
        dv: d,
        causal: true,
        bias: BiasKind::Batch,
        io: DataType::Bf16,
        deterministic: false,
        sink: false,
        tokens: Tokens::Full,
    }
}

fn typical() -> BackwardCase {
    case(2, 16, 1024, 128)
}

/// The analyzer's atomic-route sm120 candidate (else its first) for `graph` on `target`.
fn atomic_candidate(
    graph: &Graph,
    target: &Target,
) -> Option<(rime::analyzer::SupportReport, Candidate)> {
    let (report, ranked) = sm120_candidates(graph, target);
    let pick = ranked
        .iter()
        .find(|c| c.config.route == Some(Route::Atomic))
        .or_else(|| ranked.first())
        .cloned()?;
    Some((report, pick))
}

/// What the machine offers: the sm120 target to analyze for, and the device when there is one.
struct Machine {
    target: Target,
    device: Option<Arc<CudaDevice>>,
    nvrtc: bool,
    cache_dir: PathBuf,
}

impl Machine {
    fn detect() -> Machine {
        let cache_dir =
            std::env::temp_dir().join(format!("rime-host-costs-{}", std::process::id()));
        let nvrtc = rime::engines::cuda::nvrtc_present();
        if !nvrtc {
            println!("host_costs: NVRTC not found, skipping the cold-compile and cache benches");
        }
        let device = match probe() {
            CudaStatus::Available { .. } => {
                let cache = Arc::new(PtxCache::new(Some(cache_dir.join("device"))));
                match CudaDevice::open(0, cache) {
                    Ok(dev) => Some(Arc::new(dev)),
                    Err(e) => {
                        println!(
                            "host_costs: device 0 did not open ({e}), skipping the GPU benches"
                        );
                        None
                    }
                }
            }
            CudaStatus::Unavailable(why) => {
                println!("host_costs: no usable GPU ({why}), skipping the GPU benches");
                None
            }
        };
        let target = device
            .as_ref()
            .and_then(|_| rime::engines::cuda::auto_target(0).ok())
            .or_else(|| Target::by_name("rtx-pro-6000"))
            .unwrap_or_else(|| Target::all().remove(0));
        println!("host_costs: target {}", target.name);
        Machine {
            target,
            device,
            nvrtc,
            cache_dir,
        }
    }

    /// The architecture the kernels are compiled for: the device's, else sm_120.
    fn arch(&self) -> u32 {
        self.device.as_ref().map_or(120, |d| d.properties().arch())
    }
}

/// analyze + heuristics + approve of the typical graph: the support decision before any build.
fn support_decision(c: &mut Criterion, m: &Machine) {
    let Ok(graph) = typical().graph().map(|g| g.graph) else {
        return;
    };
    let options = HeuristicsOptions::default();
    c.bench_function("host/analyze+heuristics+approve", |b| {
        b.iter(|| {
            let report = analyze(black_box(&graph), &m.target);
            let ranked = heuristics(&report, &options);
            ranked.first().map(|best| report.approve(best).is_ok())
        })
    });
}

/// The approved typical backward plan, found without a device.
fn typical_plan(m: &Machine) -> Option<rime::analyzer::ApprovedPlan> {
    let graph = typical().graph().ok()?;
    let (report, cand) = atomic_candidate(&graph.graph, &m.target)?;
    report.approve(&cand).ok()
}

/// First build: NVRTC compiles of every kernel the typical plan needs into an empty cache; then
/// the PTX cache's memory and disk hits for the same kernels (what a warm build pays before the
/// driver loads them).
fn nvrtc_and_cache(c: &mut Criterion, m: &Machine) {
    if !m.nvrtc {
        return;
    }
    let Some(approved) = typical_plan(m) else {
        println!("host_costs: no sm120 plan for the typical case, skipping the compile benches");
        return;
    };
    let arch = m.arch();
    match Sm120EnginePlan::compile_kernels(&approved, &PtxCache::new(None), arch) {
        Ok(n) => println!(
            "host_costs: the typical plan ({}) compiles {n} kernels for compute_{arch}",
            typical().name()
        ),
        Err(e) => {
            println!("host_costs: the typical plan does not compile ({e}), skipped");
            return;
        }
    }
    let mut group = c.benchmark_group("nvrtc_cold");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.bench_function("typical_plan_all_kernels", |b| {
        b.iter(|| Sm120EnginePlan::compile_kernels(&approved, &PtxCache::new(None), arch))
    });
    group.finish();

    let dir = m.cache_dir.join("ptx");
    let warm = PtxCache::new(Some(dir.clone()));
    if Sm120EnginePlan::compile_kernels(&approved, &warm, arch).is_err() {
        return;
    }
    let mut group = c.benchmark_group("ptx_cache");
    group.bench_function("memory_hit_all_kernels", |b| {
        b.iter(|| Sm120EnginePlan::compile_kernels(&approved, &warm, arch))
    });
    group.bench_function("disk_hit_all_kernels", |b| {
        b.iter_batched(
            || PtxCache::new(Some(dir.clone())),
            |fresh| Sm120EnginePlan::compile_kernels(&approved, &fresh, arch),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// A host variant pack for the node of `graph`: small non-zero inputs, Stats near ln(Skv),
/// zeroed outputs.
fn host_pack(graph: &Graph) -> Option<VariantPack> {
    let node = graph.nodes().first()?;
    let skv = rime::graph::SdpaShape::of(graph, node)?.skv;
    let mut pack = VariantPack::new();
    for (n, &id) in node.inputs.values().enumerate() {
        let t = graph.get(id)?;
        let len = usize::try_from(t.span_elements()?).ok()?;
        let values: Vec<f64> = if t.name == "Stats" {
            vec![(skv as f64).ln(); len]
        } else {
            (0..len)
                .map(|i| ((i + n) % 7) as f64 * 0.125 - 0.375)
                .collect()
        };
        pack.insert(
            id,
            Box::new(HostBuffer::from_f64(graph.data_type(id)?, &values)?),
        );
    }
    for &id in node.outputs.values() {
        let len = usize::try_from(graph.get(id)?.span_elements()?).ok()?;
        pack.insert(id, Box::new(HostBuffer::zeros(graph.data_type(id)?, len)?));
    }
    Some(pack)
}

/// CPU engine on a tiny backward (B1 H1 S8 D8, causal, bias + dBias): plan build, variant-pack
/// check alone, and a whole execute (check + dispatch + a negligible amount of arithmetic).
fn cpu_tiny(c: &mut Criterion) {
    let setup = || {
        let graph = case(1, 1, 8, 8).graph().ok()?.graph;
        let report = analyze(&graph, &Target::by_name("cpu")?);
        let approved = report
            .approve_best(&HeuristicsOptions::default())
            .ok()?
            .pop()?;
        let plan = CpuEngine.build_plan(&approved).ok()?;
        let pack = host_pack(&graph)?;
        Some((approved, plan, pack))
    };
    let Some((approved, plan, mut pack)) = setup() else {
        println!("host_costs: the tiny CPU case did not set up, skipped");
        return;
    };
    let mut ws = Workspace::host(plan.workspace_size());
    if let Err(e) = plan.execute(&mut pack, &mut ws) {
        println!("host_costs: the tiny CPU case does not execute ({e}), skipped");
        return;
    }
    let mut group = c.benchmark_group("cpu_tiny_b1h1s8d8");
    group.bench_function("build_plan", |b| b.iter(|| CpuEngine.build_plan(&approved)));
    group.bench_function("check", |b| b.iter(|| plan.check(black_box(&pack)).is_ok()));
    group.bench_function("execute", |b| {
        b.iter(|| plan.execute(&mut pack, &mut ws).is_ok())
    });
    group.finish();
}

/// SM120 plan builds with a warm kernel cache: the same device (PTX and loaded modules in
/// memory), and a freshly opened device over a warm disk cache (PTX read from disk, modules
/// loaded by the driver; the device open is not timed). The first, cold build is timed once.
fn sm120_build(c: &mut Criterion, m: &Machine, dev: &Arc<CudaDevice>) {
    let Ok(graph) = typical().graph() else {
        return;
    };
    let Some((report, cand)) = atomic_candidate(&graph.graph, &m.target) else {
        println!(
            "host_costs: no sm120 candidate for the typical case on {}, skipped",
            m.target.name
        );
        return;
    };
    let Ok(approved) = report.approve(&cand) else {
        return;
    };
    let t = Instant::now();
    if let Err(e) = Sm120EnginePlan::new(Arc::clone(dev), &approved) {
        println!("host_costs: the typical plan does not build ({e}), skipped");
        return;
    }
    println!(
        "host_costs: first build of the typical plan (NVRTC + module load, empty cache): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let mut group = c.benchmark_group("sm120_build");
    group.bench_function("memory_warm", |b| {
        b.iter(|| Sm120EnginePlan::new(Arc::clone(dev), &approved))
    });
    let dir = m.cache_dir.join("device");
    group.sample_size(20).sampling_mode(SamplingMode::Flat);
    group.bench_function("new_device_disk_warm", |b| {
        b.iter_batched(
            || CudaDevice::open(0, Arc::new(PtxCache::new(Some(dir.clone())))).map(Arc::new),
            // The plan (and with it the device) is returned, so it is dropped outside the timing.
            |fresh| fresh.ok().map(|d| Sm120EnginePlan::new(d, &approved)),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// SM120 execute on a tiny backward (B1 H1 S64 D128, the typical plan's kernels): the variant
/// pack check alone, the host time to check and enqueue every kernel (no synchronize; the
/// stream is drained every 64 calls outside the timed region), and execute with synchronize.
fn sm120_tiny(c: &mut Criterion, m: &Machine, dev: &Arc<CudaDevice>) {
    let tiny = case(1, 1, 64, 128);
    let setup = || -> Option<(Prepared, Workload)> {
        let graph = tiny.graph().ok()?;
        let (report, cand) = atomic_candidate(&graph.graph, &m.target)?;
        let prepared = Prepared::new(dev, &report, &cand, None).ok()?;
        let work = Workload::new(dev, &tiny, 7).ok()?;
        Some((prepared, work))
    };
    let Some((mut prep, mut work)) = setup() else {
        println!("host_costs: the tiny sm120 case did not set up, skipped");
        return;
    };
    if let Err(e) = prep.execute(&mut work.pack) {
        println!("host_costs: the tiny sm120 case does not execute ({e}), skipped");
        return;
    }
    let mut group = c.benchmark_group("sm120_tiny_b1h1s64d128");
    group.bench_function("check", |b| {
        b.iter(|| prep.plan.check(black_box(&work.pack)).is_ok())
    });
    group.bench_function("enqueue", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                if i % 64 == 0 {
                    let _ = dev.synchronize();
                }
                let t = Instant::now();
                let r = prep.plan.enqueue(&mut work.pack, &mut prep.workspace);
                total += t.elapsed();
                black_box(r.is_ok());
            }
            let _ = dev.synchronize();
            total
        })
    });
    group.bench_function("execute", |b| {
        b.iter(|| {
            prep.plan
                .execute(&mut work.pack, &mut prep.workspace)
                .is_ok()
        })
    });
    group.finish();
}

fn remove_dir(dir: &Path) {
    // Only the directory this process created (its name carries the process id).
    if dir.starts_with(std::env::temp_dir()) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let m = Machine::detect();
    support_decision(&mut c, &m);
    nvrtc_and_cache(&mut c, &m);
    cpu_tiny(&mut c);
    if let Some(dev) = &m.device {
        sm120_build(&mut c, &m, dev);
        sm120_tiny(&mut c, &m, dev);
    }
    c.final_summary();
    remove_dir(&m.cache_dir);
}
