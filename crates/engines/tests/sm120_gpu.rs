//! The small conformance sweep of the sm120 kernels on a real GPU (every kernel specialization
//! the sweep reaches, every route, against the f64 reference, outputs and workspace between guard
//! zones). Skips, saying why, without a
//! usable GPU, unless `RIME_REQUIRE_GPU=1` (set it on GPU machines).

use rime_engines::cuda::selftest;

#[test]
fn small_sweep_passes_on_the_gpu() {
    let dev = match selftest::open_default_device() {
        Ok(d) => d,
        Err(e) => {
            if std::env::var("RIME_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("RIME_REQUIRE_GPU=1 but {e}");
            }
            eprintln!("SKIPPED sm120_gpu: {e} (set RIME_REQUIRE_GPU=1 to make this a failure)");
            return;
        }
    };
    // Guard zones on: an out-of-bounds write fails the case naming the tensor.
    let reports = selftest::run(&dev, &selftest::cases(true), true, |_| {});
    let failed: Vec<_> = reports
        .iter()
        .filter(|r| !r.passed())
        .map(|r| format!("{r:?}"))
        .collect();
    assert!(!reports.is_empty());
    assert!(failed.is_empty(), "failed cases:\n{}", failed.join("\n"));
}
