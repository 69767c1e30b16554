//! `rime check FILE... --target NAME`: which engine configurations can run each graph, and why
//! not.

use std::path::PathBuf;
use std::process::ExitCode;

use rime_analyzer::{render_report, report_json, EngineKind};
use rime_graph::shown_text;

use super::refusals::refusals;
use super::target_args::AnalysisArgs;

/// Arguments of `rime check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Graph files (rime's format or cuDNN frontend dumps; see --format): one report each.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    analysis: AnalysisArgs,
    /// Exit 1 unless this engine supports every node of each graph (for CI), naming the
    /// reasons on stderr.
    #[arg(long, value_parser = engine_names())]
    require_engine: Option<String>,
}

fn engine_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(EngineKind::ALL.map(EngineKind::name))
}

/// Prints the support report of each file (table, or JSON for a single file). Exit 1 when,
/// for some file, no engine supports every node, the `--require-engine` engine does not, or
/// the file cannot be read (the others are still checked).
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    if args.analysis.json && args.files.len() > 1 {
        anyhow::bail!(
            "--json prints one report document: give one file ({} given), or run check once per file",
            args.files.len()
        );
    }
    let required = match &args.require_engine {
        Some(name) => Some(
            EngineKind::from_name(name)
                .ok_or_else(|| anyhow::anyhow!("unknown engine `{}`", rime_graph::shown(name)))?,
        ),
        None => None,
    };
    let target = args.analysis.target()?;
    let several = args.files.len() > 1;
    let mut failed = false;
    for file in &args.files {
        let shown = shown_text(&file.display().to_string()).to_string();
        if several {
            outln!("== {shown}");
        }
        let report = match args.analysis.report(file, &target) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e:#}");
                failed = true;
                continue;
            }
        };
        if args.analysis.json {
            let doc = report_json::report_doc(&report);
            outln!("{}", serde_json::to_string_pretty(&doc)?);
        } else {
            out!("{}", render_report(&report));
        }
        failed |= report.supported_engines().is_empty();
        if let Some(engine) = required.filter(|&e| !report.supports(e)) {
            eprintln!(
                "error: {shown}: engine {engine} does not support the graph on target {}:",
                target.name
            );
            for line in refusals(&report, Some(engine)) {
                eprintln!("  {line}");
            }
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
