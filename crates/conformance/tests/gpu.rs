//! The small conformance sweep on a real GPU: every kernel specialization the analyzer approves
//! for the small table, every route, against the CPU engine's f64 reference, outputs and
//! workspace between guard zones. Needs a CUDA GPU, so it is ignored unless asked for:
//! `cargo test -p rime-conformance --test gpu -- --ignored` on a GPU machine (or
//! `rime selftest --small --guards`, the same sweep).

use std::sync::Arc;

use rime_conformance::sweep::{self, SweepOutcome};
use rime_engines::cuda::{auto_target, CudaDevice};

#[test]
#[ignore = "needs a CUDA GPU (run with --ignored on a GPU machine, or `rime selftest --small --guards`)"]
fn small_sweep_passes_on_the_gpu() {
    let dev = Arc::new(CudaDevice::open_default(0).expect("a usable GPU"));
    let target = auto_target(0).expect("the device's target");
    let outcomes = sweep::run(&dev, &target, &sweep::cases(true), true, |_, _| {});
    let ran: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            SweepOutcome::Ran(r) => Some(r),
            SweepOutcome::NotApproved(_) => None,
        })
        .collect();
    assert!(!ran.is_empty(), "nothing ran");
    let failed: Vec<String> = ran
        .iter()
        .filter(|r| !r.passed())
        .map(|r| r.line())
        .collect();
    assert!(failed.is_empty(), "failed cases:\n{}", failed.join("\n"));
}
