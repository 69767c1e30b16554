//! The CPU engine's scratch estimate (`Plan::scratch`) bounds what `execute` really allocates,
//! measured by a counting global allocator, and is not far above it; the scratch grows with
//! Skv x D, not with Sq x Skv. One test in this binary, so that nothing else allocates while
//! it measures (a worker thread's first gemm call allocates gemm's per-thread slab, which the
//! estimate counts).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rime_analyzer::{analyze, heuristics, HeuristicsOptions, Target};
use rime_engines::{CpuEngine, Engine, HostBuffer, VariantPack, Workspace};
use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, SdpaForwardAttrs, Tensor, TensorId};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (name, backward, B, Hq, Hk, Sq, Skv, D, bias with dBias)
type Case = (&'static str, bool, i64, i64, i64, i64, i64, i64, bool);

const CASES: [Case; 7] = [
    ("fwd_small", false, 1, 2, 2, 100, 90, 16, false),
    ("fwd_long_kv", false, 1, 1, 1, 64, 40_000, 8, false),
    ("bwd_small", true, 2, 4, 2, 100, 90, 16, false),
    ("bwd_long_kv", true, 1, 1, 1, 64, 40_000, 8, false),
    ("bwd_long_q", true, 1, 2, 1, 5_000, 64, 8, false),
    ("bwd_dbias", true, 1, 2, 2, 300, 700, 8, true),
    ("bwd_many_heads", true, 3, 8, 2, 130, 600, 16, false),
];

fn graph(c: &Case) -> (Graph, Vec<TensorId>) {
    let &(_, backward, b, hq, hk, sq, skv, d, bias) = c;
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let q = g.tensor(Tensor::packed("Q", &[b, hq, sq, d]));
    let k = g.tensor(Tensor::packed("K", &[b, hk, skv, d]));
    let v = g.tensor(Tensor::packed("V", &[b, hk, skv, d]));
    let bias = bias.then(|| g.tensor(Tensor::packed("Bias", &[b, hq, sq, skv])));
    if backward {
        let o = g.tensor(Tensor::packed("O", &[b, hq, sq, d]));
        let d_o = g.tensor(Tensor::packed("dO", &[b, hq, sq, d]));
        let stats =
            g.tensor(Tensor::packed("Stats", &[b, hq, sq, 1]).with_data_type(DataType::F32));
        let mut attrs = SdpaBackwardAttrs::new().name("bwd");
        if let Some(bias) = bias {
            attrs = attrs.bias(bias).dbias();
        }
        g.sdpa_backward(q, k, v, o, d_o, stats, attrs)
            .expect("builds");
    } else {
        g.sdpa_forward(
            q,
            k,
            v,
            SdpaForwardAttrs::new().name("fwd").generate_stats(),
        )
        .expect("builds");
    }
    let ids = g.tensor_ids().collect();
    (g, ids)
}

#[test]
fn the_scratch_estimate_bounds_what_execute_allocates() {
    let target = Target::by_name("cpu").expect("cpu target");
    let mut table = Vec::new();
    for case in &CASES {
        let (g, ids) = graph(case);
        let report = analyze(&g, &target);
        let best = &heuristics(&report, &HeuristicsOptions::default())[0];
        let plan = CpuEngine
            .build_plan(&report.approve(best).expect("approved"))
            .expect("plan");
        let mut pack = VariantPack::new();
        for id in ids {
            let t = g.get(id).expect("tensor");
            let len = usize::try_from(t.span_elements().expect("span")).expect("fits");
            let dt = g.data_type(id).expect("type");
            pack.insert(id, Box::new(HostBuffer::zeros(dt, len).expect("buffer")));
        }
        let mut ws = Workspace::host(0);
        // Once to start rayon's threads, then measured.
        plan.execute(&mut pack, &mut ws).expect("runs");
        let before = CURRENT.load(Ordering::SeqCst);
        PEAK.store(before, Ordering::SeqCst);
        plan.execute(&mut pack, &mut ws).expect("runs");
        let used = u64::try_from(PEAK.load(Ordering::SeqCst) - before).expect("fits");
        let estimate = plan.scratch().total();
        table.push(format!(
            "{:16} used {used:>10} B, estimate {estimate:>10} B",
            case.0
        ));
        assert!(
            used <= estimate,
            "{}: used {used} B > estimate {estimate} B",
            case.0
        );
        // gemm's per-thread memory is counted in full but allocated once per thread, often
        // before this measurement: it is slack here, not a measure of the bound's quality.
        let gemm = u64::try_from(rayon::current_num_threads()).expect("fits")
            * rime_engines::cpu::memory::GEMM_PER_THREAD;
        assert!(
            estimate <= 3 * used + gemm + (1 << 20),
            "{}: estimate {estimate} B is far above the {used} B used",
            case.0
        );
    }
    println!("{}", table.join("\n"));
}
