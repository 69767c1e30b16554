//! The kernels a plan builds are the kernels the analyzer approved: for every supported sm120
//! configuration of every fixture graph on every GPU target, the tiled kernel builds of its
//! plan name the approved main (or forward) kernel and dQ GEMM, with the table entry's tiles as
//! defines — also after `ApprovedPlan::with_main_kernel` swaps in an H200-tuned entry. The
//! plan loads exactly these builds (`Sm120Plan::new` takes them from the same `builds`).

use std::path::Path;

use rime_analyzer::sm120::kernels::{h200_tuned, select_main, H200_TUNED, KERNELS};
use rime_analyzer::{
    analyze, ApprovedPlan, DeviceKind, EngineKind, KernelConfig, RegionKind, Route, Target, Verdict,
};

use super::compile::{tensor_copies_serve, KernelBuild};
use super::plan::{builds, Chain};

fn define(build: &KernelBuild, name: &str) -> Option<i64> {
    build
        .defines
        .iter()
        .find(|(k, _)| *k == name)
        .map(|&(_, v)| v)
}

/// The build is compiled from table entry `k`: its name and every tile constant.
fn assert_built_from(build: &KernelBuild, k: &KernelConfig, what: &str) {
    assert_eq!(build.entry, Some(k.name), "{what}: {build:?}");
    for (name, value) in [
        ("HEAD_DIM_QK", k.head_dim_qk),
        ("HEAD_DIM_V", k.head_dim_v),
        ("BLOCK_Q", k.block_q),
        ("BLOCK_KV", k.block_kv),
        ("WARPS", k.warps),
        ("STAGES", k.stages),
        ("SMEM_BYTES", k.smem_bytes),
    ] {
        assert_eq!(
            define(build, name),
            Some(i64::from(value)),
            "{what}: {name}"
        );
    }
    if let Some(l) = k.layout {
        for (name, value) in [
            ("WM_SDP", l.sdp),
            ("WM_DKV", l.dkv),
            ("WM_DQ", l.dq),
            ("K_REGS", u32::from(l.k_regs)),
            ("V_REGS", u32::from(l.v_regs)),
            ("V_STAGED", u32::from(l.v_staged)),
            ("SPLIT_SDP", u32::from(l.split)),
            ("DO_BUFS", l.do_buffers),
        ] {
            assert_eq!(
                define(build, name),
                Some(i64::from(value)),
                "{what}: {name}"
            );
        }
    }
    assert_eq!(build.threads, k.threads(), "{what}");
    assert_eq!(build.smem_bytes, k.smem_bytes, "{what}");
}

/// Checks the builds of `approved` against its configuration; returns how many kernels.
fn check(approved: &ApprovedPlan, what: &str) -> usize {
    let config = approved.config();
    let kernel = config
        .kernel
        .expect("an sm120 configuration names its kernel");
    match builds(approved).expect("builds") {
        Chain::Forward { forward } => {
            assert_built_from(&forward, kernel, what);
            assert!(config.dq_kernel.is_none(), "{what}");
            1
        }
        Chain::Backward {
            preprocess,
            main,
            convert,
            dq_gemm,
            dbias_reduce,
            dsink_reduce,
        } => {
            assert_built_from(&main, kernel, what);
            // The route's own entry of the envelope (d256 has one per group of routes), or the
            // H200-tuned stand-in for it.
            let route = config
                .route
                .expect("a backward configuration names its route");
            assert!(kernel.serves(route), "{what}: {} on {route}", kernel.name);
            let own = select_main(route, kernel.head_dim_qk.into(), kernel.head_dim_v.into())
                .expect("an entry for the route");
            assert!(
                own.name == kernel.name || h200_tuned(own).is_some_and(|t| t.name == kernel.name),
                "{what}: {} is not {}'s",
                kernel.name,
                own.name
            );
            assert_eq!(preprocess.entry, Some(kernel.name), "{what}");
            assert_eq!(
                define(&preprocess, "RELAY_TILE"),
                Some(i64::from(kernel.block_q))
            );
            assert_eq!(convert.entry, None, "{what}");
            match (dq_gemm, config.dq_kernel) {
                (Some(b), Some(k)) => assert_built_from(&b, k, what),
                (None, None) => {}
                (b, k) => panic!("{what}: dQ GEMM built {b:?}, approved {k:?}"),
            }
            // The dS reduction exactly where two_kernel has a broadcast dBias to sum, and then
            // no accumulator for it (the main kernel writes no dBias).
            let p = approved.problem();
            let from_ds = config.route == Some(Route::TwoKernel) && p.dbias && p.bias_broadcasts();
            assert_eq!(dbias_reduce.is_some(), from_ds, "{what}");
            if let Some(reduce) = &dbias_reduce {
                // It reads only the rows the main kernel's tiles walk: the same tiles.
                assert_eq!(reduce.entry, Some(kernel.name), "{what}");
                assert_eq!(
                    define(reduce, "MAIN_BLOCK_Q"),
                    Some(i64::from(kernel.block_q))
                );
                assert_eq!(
                    define(reduce, "MAIN_BLOCK_KV"),
                    Some(i64::from(kernel.block_kv))
                );
            }
            if from_ds {
                assert_eq!(define(&main, "DBIAS_MODE"), Some(0), "{what}");
                assert!(
                    approved
                        .workspace()
                        .region(RegionKind::DbiasAccum)
                        .is_none(),
                    "{what}"
                );
            }
            // The KV-major grid exactly under a causal band, off the routes whose tickets order
            // the KV tiles and off the d256 kernel's 32-row KV tile (the fixtures' KV tiles all
            // fit the z dimension).
            let causal = p.band.right.is_some() && p.band.left.is_none();
            let ordered = matches!(config.route, Some(Route::Relay | Route::OrderedDbias));
            assert_eq!(
                define(&main, "KV_MAJOR"),
                Some(i64::from(causal && !ordered && kernel.block_kv >= 64)),
                "{what}"
            );
            // The ragged-layout code exactly when some tensor is ragged.
            let ragged = p.tensors().any(|(_, t)| t.ragged_offset.is_some());
            assert_eq!(define(&main, "RAGGED"), Some(i64::from(ragged)), "{what}");
            // Tensor copies of the Q and dO tiles exactly on two_kernel where the layout copies
            // both as a step starts (split, or two dO buffers), without a bias, a ragged
            // tensor or a padding mask, with head dims of whole 16-column panels, on targets
            // that have them (not the A100).
            let two_kernel = config.route == Some(Route::TwoKernel);
            let ahead = kernel
                .layout
                .is_some_and(|l| l.split || (l.do_buffers == 2 && kernel.stages == 2));
            let panels = p.shape.dqk % 16 == 0 && p.shape.dv % 16 == 0;
            let copies_sm = matches!(approved.target().device, DeviceKind::Gpu { sm } if sm >= 90);
            let varlen = ragged || p.padding;
            let copies = two_kernel && ahead && panels && !varlen && p.bias.is_none() && copies_sm;
            assert_eq!(
                define(&main, "TMA_TILES"),
                Some(i64::from(copies)),
                "{what}"
            );
            // The dSink reduction, and its row terms in the workspace, exactly with dSink.
            assert_eq!(dsink_reduce.is_some(), p.dsink, "{what}");
            assert_eq!(
                approved.workspace().region(RegionKind::DsinkRows).is_some(),
                p.dsink,
                "{what}"
            );
            2
        }
    }
}

fn fixtures() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files = Vec::new();
    for dir in ["valid", "unsupported"] {
        let mut these: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("fixture dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        these.sort();
        files.extend(these);
    }
    files
}

#[test]
fn plans_build_the_approved_kernels() {
    let targets: Vec<Target> = Target::all().into_iter().filter(Target::is_gpu).collect();
    let (mut plans, mut swapped, mut copies, mut padded) = (0, 0, 0, 0);
    for file in fixtures() {
        let Ok(graph) = rime_graph::json::load_file(&file) else {
            continue;
        };
        for target in &targets {
            let report = analyze(&graph, target);
            for node in &report.nodes {
                for c in node
                    .configs
                    .iter()
                    .filter(|c| c.engine == EngineKind::Sm120 && c.verdict == Verdict::Supported)
                {
                    let what = format!("{} {} {:?}", file.display(), target.name, c.route);
                    let approved = report
                        .approve_config(node.node, EngineKind::Sm120, c.route)
                        .expect("a supported configuration is approved");
                    check(&approved, &what);
                    plans += 1;
                    if let Ok(Chain::Backward { main, .. }) = builds(&approved) {
                        copies += usize::from(main.defines.contains(&("TMA_TILES", 1)));
                        // A plan with a padding mask that would take the copies without it
                        // (check asserted TMA_TILES = 0: a map would read the padding).
                        let p = approved.problem();
                        let sm = match target.device {
                            DeviceKind::Gpu { sm } => sm,
                            DeviceKind::Cpu => 0,
                        };
                        let ragged = p.tensors().any(|(_, t)| t.ragged_offset.is_some());
                        let unmasked =
                            approved.config().kernel.zip(c.route).is_some_and(|(k, r)| {
                                let dims = (p.shape.dqk, p.shape.dv);
                                tensor_copies_serve(k, r, sm, (ragged, p.bias.is_some()), dims)
                            });
                        padded += usize::from(p.padding && unmasked);
                    }
                    for tuned in H200_TUNED {
                        if let Some(plan) = approved.with_main_kernel(tuned) {
                            assert_eq!(plan.config().kernel.map(|k| k.name), Some(tuned.name));
                            check(&plan, &format!("{what} with {}", tuned.name));
                            swapped += 1;
                        }
                    }
                }
            }
        }
    }
    // Not vacuous: the corpus reaches many sm120 plans, the tuned swap on the H200, and plans
    // with tensor copies.
    assert!(plans > 100, "{plans} plans checked");
    assert!(swapped > 0, "no H200-tuned swap checked");
    assert!(copies > 0, "no plan with tensor copies checked");
    assert!(
        padded > 0,
        "no plan checked with a padding mask that tensor copies would serve without it"
    );
}

/// A main kernel never runs a route it is not built for: the d256 entries of the fused-dQ
/// routes and of two_kernel do not stand in for each other, though their tiles match.
#[test]
fn a_main_kernel_is_not_swapped_onto_another_route() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/valid/bwd_hdim256.json");
    let graph = rime_graph::json::load_file(&file).expect("fixture");
    let target = Target::all()
        .into_iter()
        .find(|t| t.name == "rtx-5090")
        .expect("target");
    let report = analyze(&graph, &target);
    let node = report.nodes.first().expect("a node").node;
    let mut checked = 0;
    for route in [Route::Atomic, Route::TwoKernel] {
        let approved = report
            .approve_config(node, EngineKind::Sm120, Some(route))
            .expect("approved");
        let own = approved.config().kernel.expect("a kernel");
        let other = KERNELS
            .iter()
            .find(|k| k.interchangeable(own) && k.name != own.name)
            .expect("the other d256 entry");
        assert!(!other.serves(route), "{} serves {route}", other.name);
        assert!(approved.with_main_kernel(other).is_none(), "{route}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}
