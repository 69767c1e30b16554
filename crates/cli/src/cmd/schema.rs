//! `rime schema`: print the JSON Schema of the graph format (the source of
//! `schemas/graph.v1.schema.json`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `rime schema` (none yet).
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

/// Prints the schema, pretty, with a trailing newline.
pub fn run(_args: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let text = rime_graph::json::schema_text();
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the schema to stdout")?;
    Ok(ExitCode::SUCCESS)
}
