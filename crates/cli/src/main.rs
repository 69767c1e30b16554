//! The `rime` command line.

mod cmd;

use clap::{Parser, Subcommand};

/// rime: SDPA backward graphs, support checks, heuristics and engines.
#[derive(Debug, Parser)]
#[command(name = "rime", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// GPU conformance sweep of the sm120 kernels against the reference.
    Selftest(cmd::selftest::SelftestArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Selftest(args) => cmd::selftest::run(args),
    };
    match result {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
