//! `rime validate FILE...`: load each graph file and check its structure.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rime_graph::{json, shown_text, Graph};

/// Arguments of `rime validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Graph files (JSON, format rime.graph v1).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Prints `ok  FILE (N nodes, M tensors)` for each valid file, or every error of an invalid one
/// (each naming the file and the place or tensor at fault). Exit 1 when any file is invalid.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut all_ok = true;
    for file in &args.files {
        let shown = shown_text(&file.display().to_string()).to_string();
        match check(file) {
            Ok(graph) => println!(
                "ok  {shown} ({} nodes, {} tensors)",
                graph.nodes().len(),
                graph.tensors().len()
            ),
            Err(problems) => {
                all_ok = false;
                println!("FAIL {shown}");
                for p in problems {
                    println!("  {p}");
                }
            }
        }
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The graph in `file` if it loads and is structurally valid, else every problem found.
fn check(file: &Path) -> Result<Graph, Vec<String>> {
    let name = file.display().to_string();
    let text = crate::read::graph_text(file).map_err(|e| vec![e.to_string()])?;
    let graph = json::from_str(&text, &name).map_err(|e| vec![e.to_string()])?;
    match graph.validate() {
        Ok(()) => Ok(graph),
        Err(errors) => {
            let describer = json::Describer::new(&text, &name, &graph);
            Err(errors.0.iter().map(|e| describer.describe(e)).collect())
        }
    }
}
