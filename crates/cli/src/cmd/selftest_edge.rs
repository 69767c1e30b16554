//! `rime selftest --edge`, `--resources` and `--ragged`: the edge-numerics table on the sm120
//! engine, the out-of-memory checks and the hostile ragged offsets, printed one line per case.

use std::process::ExitCode;
use std::sync::Arc;

use rime_conformance::edge::{self, EdgeOutcome, EdgeReport};
use rime_conformance::resources;
use rime_engines::cuda::CudaDevice;

use super::selftest::SelftestArgs;

/// One markdown row per approved route (or one for a rejected case): case, what, route, finite,
/// max relative error per output.
fn rows(r: &EdgeReport) -> Vec<String> {
    let c = &r.case;
    match &r.outcome {
        EdgeOutcome::Rejected(codes) => vec![format!(
            "| {} | {} | rejected by sm120: {} | - | - |",
            c.name,
            c.note,
            codes.join(", ")
        )],
        EdgeOutcome::Ran(reports) => reports
            .iter()
            .map(|rep| {
                let route = rep.name.rsplit('/').next().unwrap_or("?");
                let finite = rep.outputs.iter().all(|o| o.bad == 0) && rep.error.is_none();
                let errs: Vec<String> = rep
                    .outputs
                    .iter()
                    .map(|o| format!("{}={:.2e}", o.name, o.rel_err))
                    .chain(rep.error.iter().map(|e| format!("error: {e}")))
                    .collect();
                format!(
                    "| {} | {} | {} | {} | {} | {}",
                    c.name,
                    c.note,
                    route,
                    if finite { "yes" } else { "NO" },
                    errs.join(" "),
                    if rep.passed() { "PASS |" } else { "FAIL |" }
                )
            })
            .collect(),
    }
}

/// Runs the edge table and / or the resource checks: exit 0 when all passed, 1 otherwise.
///
/// # Errors
/// When the live target cannot be read or the report file cannot be written.
pub fn run(
    dev: &Arc<CudaDevice>,
    args: &SelftestArgs,
    mut file: Option<&mut std::fs::File>,
) -> anyhow::Result<ExitCode> {
    let target = rime_engines::cuda::auto_target(0)?;
    let mut failed = 0;
    let mut emit = |l: String| super::selftest::emit(file.as_deref_mut(), &l);
    if args.edge {
        emit("| case | what | route | finite | max rel err (tol 1e-2) | verdict |".into())?;
        emit("|---|---|---|---|---|---|".into())?;
        let mut rendered = Vec::new();
        let reports = edge::run(dev, &target, |r| rendered.extend(rows(r)));
        for l in rendered {
            emit(l)?;
        }
        failed += reports.iter().filter(|r| !r.passed()).count();
    }
    if args.resources {
        for r in resources::run(dev, &target) {
            let status = if r.passed { "PASS" } else { "FAIL" };
            emit(format!("{status} resources/{}: {}", r.name, r.detail))?;
            failed += usize::from(!r.passed);
        }
    }
    if args.ragged {
        for r in rime_conformance::ragged_hostile::run(dev) {
            let status = if r.passed { "PASS" } else { "FAIL" };
            emit(format!("{status} ragged/{}: {}", r.name, r.detail))?;
            failed += usize::from(!r.passed);
        }
    }
    emit(format!("{failed} failed"))?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
