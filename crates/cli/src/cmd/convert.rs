//! `rime convert FILE -o OUT [--to rime|cudnn]`: a graph file written in rime's canonical form
//! or as the cuDNN frontend's graph JSON 2.0, through the same output rules as `rime run
//! --outputs` (never the input file, reserved before the work, written whole or not at all).

use std::path::PathBuf;
use std::process::ExitCode;

use rime_graph::json::{self, cudnn::JsonVersion, ReadAs};
use rime_graph::shown_text;

use crate::output::OutputFile;
use crate::read::{self, FormatArgs};

/// The `--to` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WriteAs {
    /// rime's own format, canonical (docs/json-format.md).
    Rime,
    /// The cuDNN frontend's graph JSON 2.0, for its `Graph::deserialize`.
    Cudnn,
}

/// Arguments of `rime convert`.
#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// Graph file to convert (rime's format or a cuDNN frontend dump; see --format).
    pub file: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Where to write the converted graph (never the input file; an existing file is replaced
    /// whole, or not at all).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Format to write.
    #[arg(long, value_enum, default_value_t = WriteAs::Rime)]
    pub to: WriteAs,
}

/// Reads and validates the graph, then writes it: exit 1, writing nothing, when it is invalid
/// (a structurally invalid graph may not survive the trip: docs/json-format.md).
pub fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let output = OutputFile::prepare(&args.output, &[("the graph", args.file.as_path())])?;
    let read = read::graph_file(&args.file, &args.format)?;
    let problems = read.problems();
    if !problems.is_empty() {
        outln!("FAIL {} (not converted)", shown_text(&read.name));
        for p in &problems {
            outln!("  {p}");
        }
        return Ok(ExitCode::FAILURE);
    }
    let graph = read.graph();
    let (text, written_as) = match args.to {
        WriteAs::Rime => (json::to_string(graph), ReadAs::Rime),
        WriteAs::Cudnn => (
            json::cudnn::to_string(graph),
            ReadAs::Cudnn(JsonVersion::V2),
        ),
    };
    let shown = output.shown().to_owned();
    output.write(|w| w.write_all(text.as_bytes()))?;
    outln!(
        "wrote {shown} as {written_as} ({} nodes, {} tensors)",
        graph.nodes().len(),
        graph.tensors().len()
    );
    Ok(ExitCode::SUCCESS)
}
