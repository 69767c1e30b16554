//! The `rime` command line. Exit codes: 0 success, 1 a verdict of failure (e.g. an invalid
//! graph), 2 usage errors (clap's).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod stdout;
mod cmd;
mod human;
mod json_doc;
mod limits;
mod output;
mod read;
mod tensor_file;

/// SDPA graphs in the style of the cuDNN frontend: validate, check support, rank engines, run.
#[derive(Debug, Parser)]
#[command(name = "rime", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    limits: limits::LimitArgs,
}

/// The subcommands; each lives in its own file under `cmd/`.
#[derive(Debug, Subcommand)]
enum Command {
    /// Load graph files and check their structure.
    Validate(cmd::validate::ValidateArgs),
    /// Print a JSON Schema: the graph format (default), or a JSON output's.
    Schema(cmd::schema::SchemaArgs),
    /// Run a graph: analyze, plan, execute on generated or given inputs, write outputs.
    Run(cmd::run::RunArgs),
    /// Which engine configurations can run a graph on a target, and why not.
    Check(cmd::check::CheckArgs),
    /// Write a graph file in rime's format or as a cuDNN frontend dump (graph JSON 2.0).
    Convert(cmd::convert::ConvertArgs),
    /// The supported engine configurations of a graph, ranked.
    Heuristics(cmd::heuristics::HeuristicsArgs),
    /// Explain a reason code.
    Explain(cmd::explain::ExplainArgs),
    /// GPU conformance sweep: sm120 kernels against the reference (skips without a GPU).
    Selftest(cmd::selftest::SelftestArgs),
    /// Time the sm120 backward on a named suite (JSON and a table under --out; needs a GPU).
    Bench(cmd::bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    limits::Limits::set(&cli.limits);
    let result = match &cli.command {
        Command::Validate(args) => cmd::validate::run(args),
        Command::Schema(args) => cmd::schema::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Check(args) => cmd::check::run(args),
        Command::Convert(args) => cmd::convert::run(args),
        Command::Heuristics(args) => cmd::heuristics::run(args),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Selftest(args) => cmd::selftest::run(args),
        Command::Bench(args) => cmd::bench::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
