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

impl Location {
    /// A parser's position (serde_json's): line 1-based, column 0 before the first byte of a
    /// line (at the end of an empty input or right after a newline), shown as column 1.
    pub fn from_parser(line: usize, column: usize) -> Location {
        Location {
            line,
            column: if line == 0 { 0 } else { column.max(1) },
        }
    }
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
    #[error("{}: cannot read: {error}", crate::shown_text(&path.display().to_string()))]
    Io {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// The file is larger than the limit on graph files (a regular file's size is known before
    /// reading; a pipe or device is read up to the limit).
    #[error("{}: {} the limit of {limit} bytes for graph files", crate::shown_text(&path.display().to_string()), size.map_or_else(|| "is larger than".to_owned(), |s| format!("is {s} bytes, over")))]
    TooLarge {
        /// The path given.
        path: PathBuf,
        /// The file's size, when it is a regular file.
        size: Option<u64>,
        /// The limit.
        limit: u64,
    },
    /// The text is not JSON (unbalanced brackets, trailing commas, bad literals, cut short).
    #[error("{file_}{at}: JSON syntax error: {message_}", file_ = crate::shown_text(.file), message_ = crate::shown_text(.message))]
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
    #[error("{file_}{at}: at `{path_}`: {message_}", file_ = crate::shown_text(.file), path_ = crate::shown_text(.path), message_ = crate::shown_text(.message))]
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
    #[error("{file_}{at}: at `{path_}`: no tensor named `{name_}` in `tensors`", file_ = crate::shown_text(.file), path_ = crate::shown_text(.path), name_ = crate::shown(.name))]
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
    #[error("{file_}{at}: at `{path_}`: no tensor has uid {uid}", file_ = crate::shown_text(.file), path_ = crate::shown_text(.path))]
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
    #[error("{file_}{at}: at `{path_}`: uid {uid} is shared by tensors {}; refer by name or make uids unique", crate::shown_list(.tensors), file_ = crate::shown_text(.file), path_ = crate::shown_text(.path))]
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
            LoadError::Io { .. } | LoadError::TooLarge { .. } => None,
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
