//! The JSON documents of `--json` (`rime validate`, `rime run`, `rime selftest`): serde types
//! whose JSON Schemas are generated from them (their doc comments are the descriptions), as the
//! analyzer's report and ranking are. `rime schema NAME` prints each; the files under
//! `schemas/` are those texts, and a test fails when one is stale.
//!
//! Under `--json` stdout holds the document and nothing else ([`crate::human`] sends the lines
//! for people to stderr). User text in a document (file, tensor and node names, messages) is
//! shown as the text output shows it (`rime_graph::shown_text`: control characters escaped,
//! cut after 1024 characters).

pub mod run;
pub mod selftest;
pub mod validation;

use rime_graph::json::ReadAs;
use schemars::JsonSchema;
use serde::Serialize;

/// What a graph file was read as.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadAsDoc {
    /// `rime` (rime's own format) or `cudnn` (a cuDNN frontend dump).
    pub format: String,
    /// The format's version: `1` for rime's, `1.0` or `2.0` for the frontend's graph JSON.
    pub version: String,
    /// Both in words, e.g. `cuDNN frontend graph JSON 2.0`.
    pub description: String,
}

impl From<ReadAs> for ReadAsDoc {
    fn from(read_as: ReadAs) -> Self {
        ReadAsDoc {
            format: read_as.format().name().to_owned(),
            version: match read_as {
                ReadAs::Rime => rime_graph::json::VERSION.to_string(),
                ReadAs::Cudnn(v) => v.name().to_owned(),
            },
            description: read_as.to_string(),
        }
    }
}

/// The schema of `T`, pretty, with a trailing newline (what `schemas/*.json` hold).
fn schema_of<T: JsonSchema>() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(T)).unwrap_or_default() + "\n"
}

/// A schema `rime schema` prints: its name there (the committed file is
/// `schemas/NAME.v1.schema.json`) and its text.
pub struct Schema {
    /// The name `rime schema` takes.
    pub name: &'static str,
    /// The text.
    pub text: fn() -> String,
}

/// Every schema of rime's JSON: the graph format, the analyzer's report and ranking, and the
/// documents of this crate.
pub const SCHEMAS: [Schema; 6] = [
    Schema {
        name: "graph",
        text: rime_graph::json::schema_text,
    },
    Schema {
        name: "report",
        text: rime_analyzer::report_json::report_schema,
    },
    Schema {
        name: "ranking",
        text: rime_analyzer::report_json::ranking_schema,
    },
    Schema {
        name: "validation",
        text: schema_of::<validation::ValidationDoc>,
    },
    Schema {
        name: "run",
        text: schema_of::<run::RunDoc>,
    },
    Schema {
        name: "selftest",
        text: schema_of::<selftest::SelftestDoc>,
    },
];

/// Prints `doc` on stdout, pretty, with a trailing newline.
///
/// # Errors
/// When it cannot be serialized (a map with non-string keys; none of the documents has one).
pub fn print(doc: &impl Serialize) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string_pretty(doc)?);
    Ok(())
}
