//! `rime schema [NAME]`: print a JSON Schema — the graph format's (the default, the source of
//! `schemas/graph.v1.schema.json`) or that of a JSON output (`report`, `ranking`,
//! `validation`, `run`, `selftest`): the texts of the files under `schemas/`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

use crate::json_doc::SCHEMAS;

/// Arguments of `rime schema`.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which schema: graph (the graph file format), report (`check --json`), ranking
    /// (`heuristics --json`), validation (`validate --json`), run (`run --json`) or selftest
    /// (`selftest --json`).
    #[arg(default_value = "graph", value_parser = names())]
    pub name: String,
}

fn names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(SCHEMAS.map(|s| s.name))
}

/// Prints the schema, pretty, with a trailing newline.
pub fn run(args: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let schema = SCHEMAS
        .iter()
        .find(|s| s.name == args.name)
        .with_context(|| format!("no schema is called `{}`", rime_graph::shown(&args.name)))?;
    std::io::stdout()
        .write_all((schema.text)().as_bytes())
        .context("writing the schema to stdout")?;
    Ok(ExitCode::SUCCESS)
}
