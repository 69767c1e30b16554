//! Shared helpers of the fixture-driven integration tests.

#![allow(dead_code)] // each test binary uses its own subset

pub mod cudnn;
pub mod edits;
pub mod math;

use std::path::{Path, PathBuf};

use rime::graph::{json, Graph};

/// The repository root (the root package's manifest directory).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `path` relative to the repository root, with forward slashes (stable in snapshots).
pub fn relative(path: &Path) -> String {
    let rel = path.strip_prefix(root()).unwrap_or(path);
    rel.to_string_lossy().replace('\\', "/")
}

/// Every `*.json` file of `tests/fixtures/<kind>`, sorted.
pub fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = root().join("tests/fixtures").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Loads and validates a fixture; the error is what `rime validate` would report, one problem
/// a line, each naming the file and the place or tensor at fault.
pub fn load_and_validate(path: &Path) -> Result<Graph, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file = relative(path);
    let graph = json::from_str(&text, &file).map_err(|e| e.to_string())?;
    graph.validate().map_err(|errors| {
        let describer = json::Describer::new(&text, &file, &graph);
        errors
            .0
            .iter()
            .map(|e| describer.describe(e))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(graph)
}
