//! `rime validate FILE...`: load each graph file and check its structure.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rime_graph::{json, Graph};

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
        match check(file) {
            Ok(graph) => println!(
                "ok  {} ({} nodes, {} tensors)",
                file.display(),
                graph.nodes().len(),
                graph.tensors().len()
            ),
            Err(problems) => {
                all_ok = false;
                println!("FAIL {}", file.display());
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
    let shown = file.display().to_string();
    let (graph, text) = match std::fs::read_to_string(file) {
        Ok(text) => (json::from_str(&text, &shown), text),
        // Unreadable or not UTF-8: load_file says which, with the place.
        Err(_) => (json::load_file(file), String::new()),
    };
    let graph = graph.map_err(|e| vec![e.to_string()])?;
    match graph.validate() {
        Ok(()) => Ok(graph),
        Err(errors) => Err(errors
            .0
            .iter()
            .map(|e| json::describe(&text, &shown, &graph, e))
            .collect()),
    }
}
