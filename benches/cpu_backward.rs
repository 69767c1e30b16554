//! Criterion bench of the CPU engine's SDPA backward; throughput is in FLOPs (report
//! convention: 10 B H S^2 D), so criterion's "elem/s" reads as FLOP/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rime_conformance::cpu_perf::BenchProblem;

fn cpu_backward(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_backward");
    group.sample_size(10);
    for (b, h, s, d, causal) in [
        (1, 8, 256, 64, false),
        (1, 8, 1024, 64, false),
        (1, 8, 1024, 64, true),
    ] {
        let mut p = BenchProblem::new(b, h, s, d, causal).expect("the problem builds");
        p.forward().expect("forward runs");
        group.throughput(Throughput::Elements(p.backward_flops() as u64));
        let name = format!("b{b}_h{h}_s{s}_d{d}{}", if causal { "_causal" } else { "" });
        group.bench_function(name, |bench| {
            bench.iter(|| p.backward().expect("backward runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, cpu_backward);
criterion_main!(benches);
