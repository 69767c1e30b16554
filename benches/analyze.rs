//! Host-side cost of the support decision: `analyze` + `heuristics` per fixture graph on an
//! SM120 target (what `rime check` / `rime heuristics` spend besides loading the file).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use rime::analyzer::{analyze, heuristics, HeuristicsOptions, Target};

fn fixtures() -> Vec<(String, rime::graph::Graph)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for dir in ["valid", "unsupported"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for path in paths {
            if let Ok(graph) = rime::graph::json::load_file(&path) {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                out.push((format!("{dir}/{}", stem.unwrap_or_default()), graph));
            }
        }
    }
    out
}

fn analyze_and_rank(c: &mut Criterion) {
    let Some(target) = Target::by_name("rtx-pro-6000") else {
        return;
    };
    let options = HeuristicsOptions::default();
    let mut group = c.benchmark_group("analyze+heuristics");
    group
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(100))
        .measurement_time(std::time::Duration::from_millis(300));
    for (name, graph) in fixtures() {
        group.bench_function(name, |b| {
            b.iter(|| {
                let report = analyze(std::hint::black_box(&graph), &target);
                heuristics(&report, &options)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, analyze_and_rank);
criterion_main!(benches);
