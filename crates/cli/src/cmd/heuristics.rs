//! `rime heuristics FILE --target NAME`: the supported configurations, ranked.

use std::process::ExitCode;

use anyhow::bail;
use rime_analyzer::{
    heuristics, render_candidates, report_json, HeuristicsMode, HeuristicsOptions, Selector,
};

use super::target_args::AnalysisArgs;

/// Arguments of `rime heuristics`.
#[derive(Debug, clap::Args)]
pub struct HeuristicsArgs {
    /// Graph file (rime's format or a cuDNN frontend dump; see --format).
    file: std::path::PathBuf,
    #[command(flatten)]
    analysis: AnalysisArgs,
    /// Ranking mode: a (fastest), b (smallest workspace), fallback (fixed order).
    #[arg(long, default_value = "a", value_parser = ["a", "b", "fallback"])]
    mode: String,
    /// Drop configurations: an engine (`sm120`) or `engine/route` (`sm120/atomic`). Repeatable.
    #[arg(long, value_parser = clap::value_parser!(Selector))]
    deselect: Vec<Selector>,
    /// Keep only this configuration (an engine or `engine/route`).
    #[arg(long, value_parser = clap::value_parser!(Selector))]
    pin: Option<Selector>,
}

/// Prints the ranking. Exit 1 when some node has no candidate left.
pub fn run(args: &HeuristicsArgs) -> anyhow::Result<ExitCode> {
    let Some(mode) = HeuristicsMode::from_name(&args.mode) else {
        bail!("unknown mode `{}`; use a, b or fallback", args.mode);
    };
    let options = HeuristicsOptions {
        mode,
        deselect: args.deselect.clone(),
        pin: args.pin,
    };
    let target = args.analysis.target()?;
    let report = args.analysis.report(&args.file, &target)?;
    let candidates = heuristics(&report, &options);
    if args.analysis.json {
        let doc = report_json::ranking_doc(&report, mode, &candidates);
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", render_candidates(&report, &candidates));
    }
    let every_node = report
        .nodes
        .iter()
        .all(|n| candidates.iter().any(|c| c.node == n.node));
    Ok(if every_node && !report.nodes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
