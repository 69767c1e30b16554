//! `rime explain [CODE]`: what a reason code checks, why, and how to fix it.

use std::process::ExitCode;

use rime_analyzer::ReasonCode;

/// Arguments of `rime explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A reason code such as BIA003; without one, every code is listed.
    pub code: Option<String>,
}

/// Prints the explanation (or the list). Exit 2 (usage) for an unknown code.
pub fn run(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let Some(code) = &args.code else {
        for c in ReasonCode::ALL {
            outln!("{}  {}", c.code(), c.summary());
        }
        return Ok(ExitCode::SUCCESS);
    };
    let Some(c) = ReasonCode::from_code(code) else {
        eprintln!("unknown reason code `{code}`; `rime explain` lists them all");
        return Ok(ExitCode::from(2));
    };
    outln!("{} ({})", c.code(), c.area().title());
    outln!("{}", c.summary());
    outln!();
    outln!("Why: {}", c.why());
    outln!("Fix: {}", c.fix());
    Ok(ExitCode::SUCCESS)
}
