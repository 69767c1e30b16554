//! `rime check FILE --target NAME`: which engine configurations can run the graph, and why not.

use std::process::ExitCode;

use rime_analyzer::{render_report, report_json};

use super::target_args::AnalysisArgs;

/// Arguments of `rime check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    analysis: AnalysisArgs,
}

/// Prints the support report (table or JSON). Exit 1 when no engine supports every node.
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let report = args.analysis.report()?;
    if args.analysis.json {
        let doc = report_json::report_doc(&report);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", render_report(&report));
    }
    Ok(if report.supported_engines().is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
