//! The cuDNN frontend dumps of the corpus (`tests/fixtures/cudnn/`): reading one, and the case
//! of the generator it belongs to.

use std::path::Path;

use rime::graph::{json, Graph};

/// A dump's text and what the reader makes of it; errors name the file relative to the root.
pub fn read(path: &Path) -> (String, Result<Graph, json::LoadError>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let graph = json::cudnn::from_str(&text, &super::relative(path));
    (text, graph)
}

/// The generator case a dump belongs to: its file name up to the first dot
/// (`bwd_basic.build_plans.json` is case `bwd_basic`).
pub fn case_of(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.split('.').next().unwrap_or_default().to_owned()
}
