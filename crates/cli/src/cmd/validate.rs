//! `rime validate FILE...`: load each graph file and check its structure.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rime_graph::shown_text;

use crate::json_doc::validation::{FileDoc, ValidationDoc};
use crate::json_doc::{self, ReadAsDoc};
use crate::read::{self, FormatArgs};

/// Arguments of `rime validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Graph files (rime's format or cuDNN frontend dumps; see --format).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Print a JSON document (schemas/validation.v1.schema.json) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Prints `ok  FILE (N nodes, M tensors)` for each valid file, or every error of an invalid one
/// (each naming the file and the place or tensor at fault); with `--json`, the document of them
/// all. Exit 1 when any file is invalid.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        crate::human::to_stderr();
    }
    let docs: Vec<FileDoc> = args.files.iter().map(|f| check(f, &args.format)).collect();
    if args.json {
        json_doc::print(&ValidationDoc::new(docs.clone()))?;
    } else {
        for doc in &docs {
            match (doc.nodes, doc.tensors) {
                (Some(n), Some(t)) if doc.ok => {
                    outln!("ok  {} ({n} nodes, {t} tensors)", doc.file)
                }
                _ => {
                    outln!("FAIL {}", doc.file);
                    for p in &doc.errors {
                        outln!("  {p}");
                    }
                }
            }
        }
    }
    Ok(if docs.iter().all(|d| d.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `file` holds: read, loaded and validated, or every problem found.
fn check(file: &Path, format: &FormatArgs) -> FileDoc {
    let shown = shown_text(&file.display().to_string()).to_string();
    match read::graph_file(file, format) {
        Ok(g) => {
            let errors = g.problems();
            FileDoc {
                file: shown,
                read_as: Some(ReadAsDoc::from(g.loaded.read_as)),
                ok: errors.is_empty(),
                nodes: Some(g.graph().nodes().len()),
                tensors: Some(g.graph().tensors().len()),
                errors,
            }
        }
        Err(e) => FileDoc {
            file: shown,
            read_as: None,
            ok: false,
            nodes: None,
            tensors: None,
            errors: vec![e.to_string()],
        },
    }
}
