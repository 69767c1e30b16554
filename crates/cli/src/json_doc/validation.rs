//! `rime validate --json`: one entry per file, with what it was read as and every problem.

use schemars::JsonSchema;
use serde::Serialize;

use super::ReadAsDoc;

/// Format tag of the document.
pub const FORMAT: &str = "rime.validation";
/// Version of the document's format.
pub const VERSION: u32 = 1;

/// The validation of the graph files given, in the order given.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ValidationDoc {
    /// Always `rime.validation`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// True when every file loaded and is structurally valid (the exit code is then 0).
    pub ok: bool,
    /// Per file.
    pub files: Vec<FileDoc>,
}

/// One graph file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileDoc {
    /// The path as given.
    pub file: String,
    /// What the file was read as; null when it could not be read or its format not told.
    pub read_as: Option<ReadAsDoc>,
    /// True when it loaded and is structurally valid.
    pub ok: bool,
    /// Nodes of the graph; null when it did not load.
    pub nodes: Option<usize>,
    /// Tensors of the graph; null when it did not load.
    pub tensors: Option<usize>,
    /// Every problem, as the text output prints it (each naming the file, and the line and
    /// column or the tensor or node at fault); empty when `ok`.
    pub errors: Vec<String>,
}

impl ValidationDoc {
    /// The document of `files`.
    pub fn new(files: Vec<FileDoc>) -> Self {
        ValidationDoc {
            format: FORMAT.to_owned(),
            version: VERSION,
            ok: files.iter().all(|f| f.ok),
            files,
        }
    }
}
