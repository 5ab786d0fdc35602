//! `tessera consolidate`: what consolidation libtiledb does, mode by mode.
//! So far the commits mode: every commit named by one consolidated commits
//! file.

use crate::args::*;
use std::process::ExitCode;

/// Consolidate the array (`--mode commits`: its commits into one file).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// What to consolidate: fragments, commits, fragment_meta or
    /// array_meta (as libtiledb's `sm.consolidation.mode`); tessera does
    /// commits so far.
    #[arg(long, default_value = "fragments")]
    pub mode: String,
}

/// Runs `tessera consolidate`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    check_mode(&args.mode)?;
    let key = parse_key(&args.target.key)?;
    match tessera_write::commits::consolidate_commits(&args.target.array, key)? {
        Some(name) => eprintln!("wrote __commits/{name}"),
        None => eprintln!("no commits: nothing written"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Only the commits mode is implemented: the others are refused by name.
pub fn check_mode(mode: &str) -> Result<(), BoxError> {
    match mode {
        "commits" => Ok(()),
        "fragments" | "fragment_meta" | "array_meta" => Err(format!(
            "--mode {mode}: not supported yet (tessera consolidates and vacuums commits: --mode commits)"
        )
        .into()),
        other => Err(format!(
            "--mode {other}: expected fragments, commits, fragment_meta or array_meta"
        )
        .into()),
    }
}
