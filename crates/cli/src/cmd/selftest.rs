//! `rime selftest`: the GPU conformance sweep (the sm120 engine through the engine API against
//! the CPU engine's f64 reference), and its other modes.

use std::io::Write;
use std::process::ExitCode;

use rime_conformance::sweep::{self, SweepOutcome};
use rime_engines::cuda::CudaDevice;

use crate::human::{self, say};
use crate::json_doc::selftest::{CaseDoc, SelftestDoc};

/// Arguments of `rime selftest`.
#[derive(Debug, clap::Args)]
pub struct SelftestArgs {
    /// Small shapes only (for compute-sanitizer runs); still reaches every kernel.
    #[arg(long)]
    pub small: bool,
    /// Run only cases whose name contains this text (the sweep's and `--determinism`'s).
    #[arg(long)]
    pub filter: Option<String>,
    /// Also write the report to this file.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Fail (exit 1) instead of skipping when no GPU is usable (also RIME_REQUIRE_GPU=1).
    #[arg(long)]
    pub require_gpu: bool,
    /// Determinism check instead of the conformance sweep: every route the analyzer approves for
    /// deterministic graphs over a table of shapes, bitwise identical over `--repeats` runs,
    /// against the atomic route and the CPU engine, with timings.
    #[arg(long)]
    pub determinism: bool,
    /// Place every output tensor and the workspace of each sweep case between 4 KiB guard zones
    /// filled with a known pattern; a case fails, naming the tensor and the first changed byte,
    /// when a guard changed.
    #[arg(long)]
    pub guards: bool,
    /// The edge-numerics cases (docs/reliability.md) on the sm120 engine against the CPU
    /// engine, one table row per case and route; cases sm120 rejects are listed with their
    /// reason codes.
    #[arg(long)]
    pub edge: bool,
    /// Out-of-memory behaviour: a graph whose two_kernel dS exceeds free memory must get relay
    /// (RTE006), and an allocation beyond free memory must fail with the needed and free bytes.
    #[arg(long)]
    pub resources: bool,
    /// Hostile ragged (THD) offsets and lengths: each must get the engine's error with every
    /// output untouched, and valid offsets must write the real tokens only.
    #[arg(long)]
    pub ragged: bool,
    /// Executions per route for `--determinism`; at least 2, so that there is a run to compare.
    #[arg(long, default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..))]
    pub repeats: usize,
    /// Print a JSON document of the sweep (schemas/selftest.v1.schema.json) on stdout; the
    /// lines go to stderr. For the conformance sweep only.
    #[arg(long, conflicts_with_all = ["determinism", "edge", "resources", "ragged"])]
    pub json: bool,
}

/// Prints `line` and appends it to the report file, when there is one (every selftest mode
/// reports this way).
///
/// # Errors
/// When the report file cannot be written.
pub(crate) fn emit(file: Option<&mut std::fs::File>, line: &str) -> std::io::Result<()> {
    say!("{line}");
    match file {
        Some(f) => writeln!(f, "{line}"),
        None => Ok(()),
    }
}

/// Runs the sweep: exit 0 when every case passed (or the run was skipped without a GPU), 1 when
/// a case failed. With `--json`, stdout holds the sweep's document (also when skipped).
///
/// # Errors
/// When the report file cannot be written, or no GPU is usable and one is required.
pub fn run(args: &SelftestArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        human::to_stderr();
    }
    let require = args.require_gpu || std::env::var("RIME_REQUIRE_GPU").is_ok_and(|v| v == "1");
    let dev = match CudaDevice::open_default(0) {
        Ok(d) => std::sync::Arc::new(d),
        Err(e) if !require => {
            say!("SKIPPED selftest: {e}");
            if args.json {
                crate::json_doc::print(&SelftestDoc::skipped(e.to_string()))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => anyhow::bail!("selftest needs a GPU: {e}"),
    };
    let p = dev.properties();
    let header = format!(
        "device {} (sm_{}{}, {} SMs, {} B smem/block opt-in, {:.1} GiB free)",
        p.name,
        p.compute_capability.0,
        p.compute_capability.1,
        p.multiprocessors,
        p.smem_per_block_optin,
        p.free_memory as f64 / (1u64 << 30) as f64
    );
    say!("{header}");
    let mut file = args.out.as_ref().map(std::fs::File::create).transpose()?;
    if let Some(f) = file.as_mut() {
        writeln!(f, "{header}")?;
    }
    if args.determinism {
        return super::determinism::run(&dev, args, file.as_mut());
    }
    if args.edge || args.resources || args.ragged {
        return super::selftest_edge::run(&dev, args, file.as_mut());
    }
    let target = rime_engines::cuda::auto_target(0)?;
    let cases: Vec<_> = sweep::cases(args.small)
        .into_iter()
        .filter(|c| {
            args.filter
                .as_ref()
                .is_none_or(|f| c.name.contains(f.as_str()))
        })
        .collect();
    let mut write_err = None;
    let mut docs = Vec::new();
    let outcomes = sweep::run(&dev, &target, &cases, args.guards, |c, o| {
        let line = match o {
            SweepOutcome::Ran(r) => {
                docs.push(CaseDoc::ran(r));
                r.line()
            }
            SweepOutcome::NotApproved(codes) => {
                docs.push(CaseDoc::not_approved(&c.name, codes));
                format!("SKIP {:<56} not approved: {}", c.name, codes.join(", "))
            }
        };
        if let Err(e) = emit(file.as_mut(), &line) {
            write_err.get_or_insert(e);
        }
    });
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let ran: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            SweepOutcome::Ran(r) => Some(r),
            SweepOutcome::NotApproved(_) => None,
        })
        .collect();
    let failed = ran.iter().filter(|r| !r.passed()).count();
    let summary = format!(
        "{} cases: {} ran, {} passed, {} failed; {} not approved by the analyzer (not run)",
        outcomes.len(),
        ran.len(),
        ran.len() - failed,
        failed,
        outcomes.len() - ran.len()
    );
    emit(file.as_mut(), &summary)?;
    if args.json {
        crate::json_doc::print(&SelftestDoc::ran(header, docs))?;
    }
    Ok(if failed == 0 && !ran.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
