//! Shared arguments of `rime check` and `rime heuristics`: the graph file's format and the
//! target.

use std::path::Path;

use anyhow::{bail, Context as _};
use rime_analyzer::{analyze, SupportReport, Target};

/// The `--target` values: every profile and `auto`.
pub fn target_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(Target::NAMES.into_iter().chain(["auto"]))
}

/// How to read the graph, and the target to analyse it for.
#[derive(Debug, clap::Args)]
pub struct AnalysisArgs {
    #[command(flatten)]
    pub format: crate::read::FormatArgs,
    /// Target profile, or `auto` (device 0's properties and free memory, read now; the CPU
    /// when there is no usable GPU).
    #[arg(long, short, default_value = "rtx-pro-6000", value_parser = target_names())]
    pub target: String,
    /// Free device memory in bytes (K, M, G, T suffixes; default: a fixed fraction of the
    /// profile's total).
    #[arg(long, value_parser = crate::limits::parse_bytes)]
    pub free_memory: Option<u64>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl AnalysisArgs {
    /// The target named by `--target`, with `--free-memory` applied. `auto` is device 0 when
    /// CUDA is usable, else the `cpu` target (saying why on stderr).
    pub fn target(&self) -> anyhow::Result<Target> {
        let target = if self.target == "auto" {
            match rime_engines::cuda::auto_target(0) {
                Ok(target) => target,
                Err(why) => {
                    eprintln!("note: target `auto`: {why}; analysing for the `cpu` target");
                    Target::by_name("cpu").context("the `cpu` target profile is missing")?
                }
            }
        } else {
            let Some(target) = Target::by_name(&self.target) else {
                bail!(
                    "unknown target `{}`; known targets: {}",
                    self.target,
                    Target::NAMES.join(", ")
                );
            };
            target
        };
        Ok(match self.free_memory {
            Some(bytes) => target.with_free_memory(bytes),
            None => target,
        })
    }

    /// Loads the graph in `file` and analyses it for `target`.
    pub fn report(&self, file: &Path, target: &Target) -> anyhow::Result<SupportReport> {
        // Every load error starts with the file's name already.
        let graph = crate::read::graph_file(file, &self.format)?;
        Ok(analyze(graph.graph(), target))
    }
}
