//! Snapshot tests of the analyzer: every fixture x the sm120 targets, h200 and cpu -> the text
//! rendering of the support report and of the heuristics ranking.

use std::fmt::Write as _;
use std::path::Path;

use rime::analyzer::{
    analyze, heuristics, render_candidates, render_report, sm120, EngineKind, HeuristicsMode,
    HeuristicsOptions, KernelConfig, KernelRole, Route, Selector, Subject, Target,
};

const TARGETS: [&str; 4] = ["rtx-5090", "rtx-pro-6000", "h200", "cpu"];

fn target(name: &str) -> Target {
    Target::by_name(name).unwrap_or_else(|| panic!("unknown target {name}"))
}

/// Report + ranking of one graph file on every snapshot target.
fn check_file(path: &Path) -> String {
    // Loaded under its repository-relative name, so that messages do not depend on the checkout.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let graph = match rime::graph::json::from_str(&text, &name) {
        Ok(g) => g,
        Err(e) => return format!("load error: {e}\n"),
    };
    let mut out = String::new();
    for name in TARGETS {
        let report = analyze(&graph, &target(name));
        let ranked = heuristics(&report, &HeuristicsOptions::default());
        let _ = writeln!(out, "===== rime check --target {name}");
        out.push_str(&render_report(&report));
        let _ = writeln!(out, "===== rime heuristics --target {name}");
        out.push_str(&render_candidates(&report, &ranked));
    }
    out
}

#[test]
fn unsupported_fixtures() {
    insta::glob!("fixtures/unsupported/*.json", |path| {
        insta::assert_snapshot!(check_file(path));
    });
}

#[test]
fn valid_fixtures() {
    if !Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valid")
        .is_dir()
    {
        return; // the valid corpus arrives with the wire branch
    }
    insta::glob!("fixtures/valid/*.json", |path| {
        insta::assert_snapshot!(check_file(path));
    });
}

/// Invalid graphs: a load error, or structural rejections that block every engine.
#[test]
fn invalid_fixtures() {
    insta::glob!("fixtures/invalid/*.json", |path| {
        insta::assert_snapshot!(check_file(path));
    });
}

/// two_kernel falls back to relay when its dS workspace exceeds a quarter of the free memory.
#[test]
fn two_kernel_falls_back_to_relay_on_small_free_memory() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/unsupported/rte001_deterministic_never_atomic.json");
    let graph = rime::graph::json::load_file(path).expect("fixture loads");
    let mut out = String::new();
    for free in [600_000u64, 100_000] {
        let t = target("rtx-5090").with_free_memory(free);
        let report = analyze(&graph, &t);
        let ranked = heuristics(&report, &HeuristicsOptions::default());
        let _ = writeln!(out, "===== free memory {free} B");
        out.push_str(&render_report(&report));
        out.push_str(&render_candidates(&report, &ranked));
    }
    insta::assert_snapshot!(out);
}

/// The (main kernel, dQ GEMM) pair rules, on kernel pairs the shipped table never produces.
#[test]
fn two_kernel_pair_rules() {
    let main = *sm120::kernels::select(KernelRole::BackwardMain, 128, 128).expect("main");
    let dq = *sm120::kernels::companion(KernelRole::DqGemm, &main).expect("dq gemm");
    let cases: [(&str, KernelConfig, u64); 4] = [
        ("shipped pair on sm_120", dq, sm120::SM120_SMEM_PER_BLOCK),
        (
            "dQ GEMM Q tile 16 < 32",
            KernelConfig { block_q: 16, ..dq },
            sm120::SM120_SMEM_PER_BLOCK,
        ),
        (
            "dQ GEMM Q tile 48, not a multiple of 32",
            KernelConfig { block_q: 48, ..dq },
            sm120::SM120_SMEM_PER_BLOCK,
        ),
        ("dQ GEMM over a 32 KiB cap", dq, 32_768),
    ];
    let subject = Subject::Target {
        target: "synthetic".into(),
    };
    let mut out = String::new();
    for (what, dq, cap) in cases {
        let found = sm120::two_kernel_pair_rejections(&main, &dq, cap, &subject);
        let _ = writeln!(out, "{what}: {} rejection(s)", found.len());
        for r in found {
            let _ = writeln!(out, "  {r}");
        }
    }
    insta::assert_snapshot!(out);
}

/// Every heuristics mode, a deselection and a pin, on one graph.
#[test]
fn heuristics_modes_deselection_and_pinning() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valid/large_bwd_b4_h16_s1024_d128_causal.json");
    let graph = rime::graph::json::load_file(path).expect("fixture loads");
    let report = analyze(&graph, &target("rtx-pro-6000"));
    let cases = [
        ("--mode a", HeuristicsOptions::default()),
        (
            "--mode b",
            HeuristicsOptions {
                mode: HeuristicsMode::B,
                ..Default::default()
            },
        ),
        (
            "--mode fallback",
            HeuristicsOptions {
                mode: HeuristicsMode::Fallback,
                ..Default::default()
            },
        ),
        (
            "--deselect sm120/atomic --deselect cpu_reference",
            HeuristicsOptions {
                deselect: vec![
                    Selector::route(Route::Atomic),
                    Selector::engine(EngineKind::CpuReference),
                ],
                ..Default::default()
            },
        ),
        (
            "--pin sm120/two_kernel",
            HeuristicsOptions {
                pin: Some(Selector::route(Route::TwoKernel)),
                ..Default::default()
            },
        ),
    ];
    let mut out = String::new();
    for (args, options) in cases {
        let _ = writeln!(out, "===== rime heuristics {args}");
        out.push_str(&render_candidates(&report, &heuristics(&report, &options)));
    }
    insta::assert_snapshot!(out);
}
