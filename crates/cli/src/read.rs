//! Graph files as every command reads them: within the graph-file limit ([`Limits`]), with
//! the option that raises it named when a file is over it.

use std::path::Path;

use rime_graph::{json, Graph, LoadError};

use crate::limits::Limits;

/// A load error as the command line shows it: a file over the limit names the option.
pub fn message(error: &LoadError) -> String {
    match error {
        LoadError::TooLarge { .. } => format!("{error} (--max-graph-bytes raises it)"),
        _ => error.to_string(),
    }
}

/// The text of the graph file at `path`.
///
/// # Errors
/// Unreadable, over the limit or not UTF-8, as [`message`] says.
pub fn graph_text(path: &Path) -> anyhow::Result<String> {
    json::read_text(path, Limits::get().graph_bytes).map_err(|e| anyhow::anyhow!(message(&e)))
}

/// The graph in the file at `path` (loaded, not validated).
///
/// # Errors
/// As [`graph_text`], or the load error of the text (naming the file, line and column).
pub fn graph(path: &Path) -> anyhow::Result<Graph> {
    json::load_file_limited(path, Limits::get().graph_bytes)
        .map_err(|e| anyhow::anyhow!(message(&e)))
}
