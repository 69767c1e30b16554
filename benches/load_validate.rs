//! Loading and validating graph files: time against size, which must grow linearly
//! (docs/reliability.md has the table). A valid file of 1 to 20,000 backward nodes is parsed
//! and validated; a file with 100 to 16,000 invalid tensors is parsed, validated and every
//! error located in the text (what `rime validate` does).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rime::graph::json;

#[path = "../tests/support/many_nodes.rs"]
mod many_nodes;

fn load_validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("load+validate");
    group
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(200))
        .measurement_time(std::time::Duration::from_secs(2));
    for nodes in [1usize, 100, 2_000, 20_000] {
        let text = many_nodes::text(nodes);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("nodes", nodes), &text, |b, text| {
            b.iter(|| {
                let graph = json::from_str(text, "bench.json").expect("loads");
                graph.validate().expect("valid");
                graph
            })
        });
    }
    group.finish();
}

fn load_validate_describe(c: &mut Criterion) {
    let mut group = c.benchmark_group("load+validate+describe");
    group
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(200))
        .measurement_time(std::time::Duration::from_secs(2));
    for bad in [100usize, 1_000, 16_000] {
        let text = many_nodes::invalid_text(bad);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("invalid_tensors", bad),
            &text,
            |b, text| {
                b.iter(|| {
                    let graph = json::from_str(text, "bench.json").expect("loads");
                    let errors = graph.validate().expect_err("invalid");
                    let describer = json::Describer::new(text, "bench.json", &graph);
                    let lines: Vec<String> =
                        errors.0.iter().map(|e| describer.describe(e)).collect();
                    assert_eq!(lines.len(), bad);
                    lines
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, load_validate, load_validate_describe);
criterion_main!(benches);
