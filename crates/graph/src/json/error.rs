//! Errors of loading a JSON graph file: each names the file, the place in it and what was
//! expected there.

use std::fmt;
use std::path::PathBuf;

use super::locate::{locate_nearest, JsonPath};

/// A place in a JSON document: 1-based line and column (in bytes, as serde_json counts them);
/// 0 when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// 1-based column, 0 when unknown.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            Ok(())
        } else {
            write!(f, ":{}:{}", self.line, self.column)
        }
    }
}

/// Why a JSON graph file could not be loaded. Structural problems of a well-formed file (bad
/// ranks, shapes, data types, cycles) are not load errors: [`Graph::validate`](crate::Graph::validate)
/// reports them.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read. (The OS error is part of the message, not a `source()`, so
    /// that error chains print it once.)
    #[error("{}: cannot read: {error}", path.display())]
    Io {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// The text is not JSON (unbalanced brackets, trailing commas, bad literals, cut short).
    #[error("{file}{at}: JSON syntax error: {message}")]
    Syntax {
        /// Source name (file path).
        file: String,
        /// Where the parser stopped.
        at: Location,
        /// serde_json's description of what it expected.
        message: String,
    },
    /// Well-formed JSON that does not follow the format: a wrong type, an unknown or duplicate
    /// key, a missing key, an unknown tag, port or data type, an unsupported version.
    #[error("{file}{at}: at `{path}`: {message}")]
    Format {
        /// Source name (file path).
        file: String,
        /// Where the offending value ends (serde_json's position).
        at: Location,
        /// JSON path of the innermost value containing that position, e.g. `tensors.Q.dims`.
        path: String,
        /// What was found and what was expected.
        message: String,
    },
    /// A port or ragged offset names a tensor that the `tensors` object does not have.
    #[error("{file}{at}: at `{path}`: no tensor named `{name}` in `tensors`")]
    UnknownTensorName {
        /// Source name (file path).
        file: String,
        /// Where the reference is.
        at: Location,
        /// JSON path of the reference, e.g. `nodes[0].inputs.Q`.
        path: String,
        /// The name referred to.
        name: String,
    },
    /// A port or ragged offset gives a uid that no tensor has.
    #[error("{file}{at}: at `{path}`: no tensor has uid {uid}")]
    UnknownUid {
        /// Source name (file path).
        file: String,
        /// Where the reference is.
        at: Location,
        /// JSON path of the reference.
        path: String,
        /// The uid referred to.
        uid: i64,
    },
    /// A port or ragged offset gives a uid that several tensors have.
    #[error("{file}{at}: at `{path}`: uid {uid} is shared by tensors {tensors:?}; refer by name or make uids unique")]
    AmbiguousUid {
        /// Source name (file path).
        file: String,
        /// Where the reference is.
        at: Location,
        /// JSON path of the reference.
        path: String,
        /// The uid referred to.
        uid: i64,
        /// Names of the tensors that share it.
        tensors: Vec<String>,
    },
}

impl LoadError {
    /// Where in the file the error is, when known.
    pub fn location(&self) -> Option<Location> {
        match self {
            LoadError::Io { .. } => None,
            LoadError::Syntax { at, .. }
            | LoadError::Format { at, .. }
            | LoadError::UnknownTensorName { at, .. }
            | LoadError::UnknownUid { at, .. }
            | LoadError::AmbiguousUid { at, .. } => Some(*at).filter(|a| a.line > 0),
        }
    }
}

impl LoadError {
    /// A [`LoadError::Format`] about the value at `path` in `text`, placed where that value is
    /// (or at the nearest enclosing value the text has).
    pub(crate) fn format_at(
        text: &str,
        file: &str,
        path: &JsonPath,
        message: impl Into<String>,
    ) -> LoadError {
        let at = locate_nearest(text, path).map_or_else(Location::default, |(_, at)| at);
        LoadError::Format {
            file: file.to_owned(),
            at,
            path: path.to_string(),
            message: message.into(),
        }
    }
}
