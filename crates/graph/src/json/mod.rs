//! The JSON graph format, version 1: load, save, and its JSON Schema; the cuDNN frontend's
//! dumps ([`cudnn`]), and the reader of either with the format detected ([`from_str_any`]).
//!
//! ```
//! let text = r#"{
//!   "format": "rime.graph", "version": 1,
//!   "context": {"io_data_type": "bf16", "intermediate_data_type": "f32", "compute_data_type": "f32"},
//!   "tensors": {
//!     "Q": {"dims": [1, 2, 16, 64], "strides": [2048, 1024, 64, 1]},
//!     "K": {"dims": [1, 2, 16, 64], "strides": [2048, 1024, 64, 1]},
//!     "V": {"dims": [1, 2, 16, 64], "strides": [2048, 1024, 64, 1]}
//!   },
//!   "nodes": [{"tag": "SDPA_FWD", "name": "fwd", "inputs": {"Q": "Q", "K": "K", "V": "V"},
//!              "outputs": {"O": "Q"}}]
//! }"#;
//! let graph = rime_graph::json::from_str(text, "inline.json").unwrap();
//! assert_eq!(graph.nodes().len(), 1);
//! // Loading checks the format, not the structure: O aliasing Q is the validator's finding.
//! assert!(graph.validate().is_err());
//! let saved = rime_graph::json::to_string(&graph);
//! assert_eq!(rime_graph::json::from_str(&saved, "saved.json").unwrap(), graph);
//! ```
//!
//! The format is documented in `docs/json-format.md`; `schemas/graph.v1.schema.json` is
//! [`schema`] written out.

mod convert;
pub mod cudnn;
mod describe;
mod detect;
mod error;
mod locate;
mod maps;
mod pretty;
#[cfg(test)]
mod tests;
mod wire;

use std::io::Read;
use std::path::Path;

pub use describe::{describe, Describer};
pub use detect::{detect, from_str_any, load_file_any, Format, Loaded, ReadAs};
pub use error::{LoadError, Location};
pub use maps::{
    Finite32, FormatName, NamedMap, PortMap, TensorRef, UniqueValue, Version, FORMAT, VERSION,
};
pub use wire::{
    AlignmentName, ContextDoc, DataTypeName, GraphDoc, NodeDoc, ScalarDoc, Tag, TensorDoc,
};

use crate::Graph;

/// The largest graph file [`load_file`] reads: 256 MiB, some ten times a 20,000-node graph.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads and parses a graph file of at most [`DEFAULT_MAX_FILE_BYTES`].
///
/// # Errors
/// As [`read_text`] and [`from_str`], with the path as the source name.
pub fn load_file(path: impl AsRef<Path>) -> Result<Graph, LoadError> {
    load_file_limited(path, DEFAULT_MAX_FILE_BYTES)
}

/// Reads and parses a graph file of at most `max_bytes`.
///
/// # Errors
/// As [`read_text`] and [`from_str`], with the path as the source name.
pub fn load_file_limited(path: impl AsRef<Path>, max_bytes: u64) -> Result<Graph, LoadError> {
    let path = path.as_ref();
    let text = read_text(path, max_bytes)?;
    from_str(&text, &path.display().to_string())
}

/// The text of a file of at most `max_bytes`. The size of a regular file is checked before
/// anything is read; anything else (a pipe, `/dev/zero`) is read up to the limit and no
/// further, so no input makes the read run forever or exhaust memory.
///
/// # Errors
/// [`LoadError::Io`] when the file cannot be read, [`LoadError::TooLarge`] beyond the limit,
/// [`LoadError::Syntax`] (with the place) when the bytes are not UTF-8.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String, LoadError> {
    let io = |error| LoadError::Io {
        path: path.to_owned(),
        error,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?;
    let too_large = |size| LoadError::TooLarge {
        path: path.to_owned(),
        size,
        limit: max_bytes,
    };
    if size.is_file() && size.len() > max_bytes {
        return Err(too_large(Some(size.len())));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > max_bytes) {
        return Err(too_large(None));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = String::from_utf8_lossy(&e.as_bytes()[..valid]);
        LoadError::Syntax {
            at: locate::Lines::new(&before).location_of(valid),
            file: path.display().to_string(),
            message: "the file is not valid UTF-8".to_owned(),
        }
    })
}

/// Parses a graph from JSON text; `source` names it in errors (a file path, `<stdin>`, ...).
/// A leading UTF-8 byte-order mark is skipped (RFC 8259 lets parsers ignore it); positions
/// count from after it, as editors show them.
///
/// Only the format is checked (keys, types, tags, ports, data types, version, references);
/// call [`Graph::validate`] for the structure. Nothing is added that the text does not say.
///
/// # Errors
/// [`LoadError::Syntax`] for text that is not JSON, [`LoadError::Format`] for JSON that does
/// not follow the format, [`LoadError::UnknownTensorName`], [`LoadError::UnknownUid`] and
/// [`LoadError::AmbiguousUid`] for references that do not resolve. Each carries the source
/// name, line and column, and the JSON path where one applies.
pub fn from_str(text: &str, source: &str) -> Result<Graph, LoadError> {
    let text = without_bom(text);
    let doc: GraphDoc = parse(text, source)?;
    convert::from_doc(&doc, text, source)
}

/// `text` without a leading UTF-8 byte-order mark.
pub(crate) fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Parses JSON text into a wire document (or any wire type), mapping serde_json's errors.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    text: &str,
    source: &str,
) -> Result<T, LoadError> {
    let text = without_bom(text);
    serde_json::from_str(text).map_err(|e| serde_error(&e, text, source))
}

fn serde_error(e: &serde_json::Error, text: &str, file: &str) -> LoadError {
    let at = Location::from_parser(e.line(), e.column());
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    let file = file.to_owned();
    // serde_json calls some data errors (a wrong shape inside a value) syntax errors; whether
    // the text is JSON at all is the one test of which kind it is.
    let format = e.classify() == serde_json::error::Category::Data
        || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    if format {
        LoadError::Format {
            path: locate::path_at(text, at).to_string(),
            file,
            at,
            message,
        }
    } else {
        LoadError::Syntax { file, at, message }
    }
}

/// The canonical text of a graph: keys sorted (tensors in graph order, which is their id
/// order), optional keys only when set, pretty-printed, trailing newline. `from_str` of it
/// gives back an equal graph, and saving that again gives the same text.
///
/// A graph that fails [`Graph::validate`] may save to text that does not load (duplicate
/// tensor names become duplicate keys; a dangling id is written as `#N (dangling)`, a
/// non-finite f32 option as a string such as `"NaN"`).
pub fn to_string(graph: &Graph) -> String {
    let doc = convert::to_doc(graph);
    let pretty = serde_json::to_string_pretty(&doc).unwrap_or_default();
    pretty::canonical(&pretty)
}

/// The canonical form as a JSON value (numbers as written in the text).
pub fn to_value(graph: &Graph) -> serde_json::Value {
    serde_json::from_str(&to_string(graph)).unwrap_or_default()
}

/// [`schema`] as pretty text with a trailing newline: the content of
/// `schemas/graph.v1.schema.json`.
pub fn schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON Schema (draft 2020-12) of the format, generated from the wire types; their doc
/// comments are its descriptions.
pub fn schema() -> serde_json::Value {
    schemars::schema_for!(GraphDoc).to_value()
}
