//! Graph files as every command reads them: within the graph-file limit ([`Limits`]), with
//! the option that raises it named when a file is over it, in rime's own format or as a cuDNN
//! frontend dump (`--format`, detected by default; `rime_graph::json::from_str_any`).

use std::path::Path;

use rime_graph::json::{self, Format, Loaded};
use rime_graph::{shown_text, Graph, LoadError};

use crate::limits::Limits;

/// The `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatChoice {
    /// Told from the file's top-level keys: `format` (rime) or `json_version` (cuDNN).
    Auto,
    /// rime's own format (`"format": "rime.graph"`).
    Rime,
    /// A cuDNN frontend dump (graph JSON 1.0 or 2.0).
    Cudnn,
}

/// The option every command that reads a graph file takes.
#[derive(Debug, Clone, clap::Args)]
pub struct FormatArgs {
    /// Format of the graph file: `auto` tells rime's own (a `format` key) from a cuDNN
    /// frontend dump (a `json_version` key).
    #[arg(long, value_enum, default_value_t = FormatChoice::Auto)]
    pub format: FormatChoice,
}

impl FormatArgs {
    /// The format asked for; `None` to detect it.
    pub fn format(&self) -> Option<Format> {
        match self.format {
            FormatChoice::Auto => None,
            FormatChoice::Rime => Some(Format::Rime),
            FormatChoice::Cudnn => Some(Format::Cudnn),
        }
    }
}

/// A load error as the command line shows it: a file over the limit names the option.
pub fn message(error: &LoadError) -> String {
    match error {
        LoadError::TooLarge { .. } => format!("{error} (--max-graph-bytes raises it)"),
        _ => error.to_string(),
    }
}

/// The text of the file at `path`, within the graph-file limit.
///
/// # Errors
/// Unreadable, over the limit or not UTF-8, as [`message`] says.
pub fn graph_text(path: &Path) -> anyhow::Result<String> {
    json::read_text(path, Limits::get().graph_bytes).map_err(|e| anyhow::anyhow!(message(&e)))
}

/// A graph file read: its name in messages, its text and what was read from it.
pub struct GraphFile {
    /// The path as given (for messages; `shown_text` it when printing).
    pub name: String,
    /// The file's text.
    pub text: String,
    /// The graph and what the file was read as.
    pub loaded: Loaded,
}

impl GraphFile {
    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.loaded.graph
    }

    /// Every structural error of the graph, each naming the file (and, in rime's own format,
    /// the line and column); empty when it is valid.
    pub fn problems(&self) -> Vec<String> {
        match self.graph().validate() {
            Ok(()) => Vec::new(),
            Err(errors) => {
                let describer = self.loaded.describer(&self.text, &self.name);
                errors.0.iter().map(|e| describer.describe(e)).collect()
            }
        }
    }
}

/// Reads the graph file at `path` in the format `format` asks for. A cuDNN frontend dump is
/// announced on stderr (`note: read FILE as cuDNN frontend graph JSON 2.0`); rime's own files
/// are read without a word, as ever.
///
/// # Errors
/// As [`graph_text`], or the load error of the text (naming the file, line and column).
pub fn graph_file(path: &Path, format: &FormatArgs) -> anyhow::Result<GraphFile> {
    let text = graph_text(path)?;
    let name = path.display().to_string();
    let loaded = json::from_str_any(&text, &name, format.format())
        .map_err(|e| anyhow::anyhow!(message(&e)))?;
    if loaded.read_as.format() == Format::Cudnn {
        eprintln!("note: read {} as {}", shown_text(&name), loaded.read_as);
    }
    Ok(GraphFile { name, text, loaded })
}
