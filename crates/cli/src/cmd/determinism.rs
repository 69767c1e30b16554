//! `rime selftest --determinism`: prints the determinism table (one row per case and route).

use std::process::ExitCode;
use std::sync::Arc;

use rime_conformance::determinism::{self, CaseResult};
use rime_engines::cuda::CudaDevice;

use super::selftest::SelftestArgs;

fn rows(c: &CaseResult, repeats: usize) -> Vec<String> {
    let status = if c.passed() { "PASS" } else { "FAIL" };
    let mut out = vec![format!("{status} {} (tol {:.0e})", c.name, c.tolerance)];
    if let Some(e) = &c.error {
        out.push(format!("  error: {e}"));
    }
    for r in &c.routes {
        let mut l = format!(
            "  | {:<16} | {:<6} | {:<28} | {:>2}/{:<2} distinct | {:016x} | {:>8.2e} | {:>8.2e} | {:>9.4} ms |",
            r.label,
            if r.chosen { "chosen" } else { "" },
            r.kernel,
            r.distinct,
            repeats,
            r.hash,
            r.vs_atomic,
            r.vs_cpu,
            r.median_ms
        );
        if r.bad > 0 {
            l.push_str(&format!(
                " {} bad (non-finite, or written outside a ragged output's tokens)",
                r.bad
            ));
        }
        if let Some(first) = &r.outside {
            l.push_str(&format!(" first outside the tokens: {first}"));
        }
        if let Some(e) = &r.error {
            l.push_str(&format!(" error: {e}"));
        }
        out.push(l);
    }
    if let Some(x) = c.det_over_atomic() {
        out.push(format!("  deterministic (chosen) / atomic time: {x:.3}"));
    }
    out
}

/// Runs the determinism table and the broadcast-dBias rejection check; exit 1 on any failure.
///
/// # Errors
/// When the target cannot be read off the device or the report file cannot be written.
pub fn run(
    dev: &Arc<CudaDevice>,
    args: &SelftestArgs,
    mut file: Option<&mut std::fs::File>,
) -> anyhow::Result<ExitCode> {
    let target = rime_engines::cuda::auto_target(0)?;
    let mut emit = |l: &str| super::selftest::emit(file.as_deref_mut(), l);
    emit(&format!(
        "determinism: {} runs per route, target {} (columns: route | analyzer's choice | kernel | distinct output hashes | combined hash | max rel err vs atomic | vs CPU engine | median time)",
        args.repeats, target.name
    ))?;
    let mut write_err = None;
    let filter = args.filter.as_deref();
    let results = determinism::run(dev, &target, args.small, filter, args.repeats, |c| {
        for l in rows(c, args.repeats) {
            if let Err(e) = emit(&l) {
                write_err.get_or_insert(e);
            }
        }
    });
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let rejected = determinism::broadcast_dbias_ordered_routes(&target);
    match &rejected {
        Ok(codes) => emit(&format!(
            "PASS deterministic + broadcast bias (1,H) + dBias: only the ordered routes \
             (two_kernel, ordered_dbias) approved (the others: {})",
            codes.join(", ")
        ))?,
        Err(routes) => emit(&format!(
            "FAIL deterministic + broadcast bias (1,H) + dBias: approved routes [{}], want \
             ordered_dbias and at most two_kernel besides",
            routes.join(", ")
        ))?,
    }
    let failed = results.iter().filter(|c| !c.passed()).count() + usize::from(rejected.is_err());
    emit(&format!(
        "{} determinism cases, {} failed",
        results.len() + 1,
        failed
    ))?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
