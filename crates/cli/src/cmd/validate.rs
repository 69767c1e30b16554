//! `rime validate FILE...`: load each graph file and check its structure.

use std::path::PathBuf;
use std::process::ExitCode;

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
        let shown = file.display();
        match rime_graph::json::load_file(file) {
            Err(e) => {
                all_ok = false;
                println!("FAIL {shown}");
                println!("  {e}");
            }
            Ok(graph) => match graph.validate() {
                Ok(()) => println!(
                    "ok  {shown} ({} nodes, {} tensors)",
                    graph.nodes().len(),
                    graph.tensors().len()
                ),
                Err(errors) => {
                    all_ok = false;
                    println!("FAIL {shown}");
                    for e in &errors.0 {
                        println!("  {shown}: {e}");
                    }
                }
            },
        }
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
