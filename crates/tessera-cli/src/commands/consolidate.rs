//! `tessera consolidate`: what consolidation libtiledb does, mode by mode.
//! So far commits (every commit named by one consolidated commits file) and
//! array_meta (the metadata merged into one file).

use crate::args::*;
use std::process::ExitCode;

/// Consolidate the array (`--mode commits` or `array_meta`).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// What to consolidate: fragments, commits, fragment_meta or
    /// array_meta (as libtiledb's `sm.consolidation.mode`); tessera does
    /// commits and array_meta so far.
    #[arg(long, default_value = "fragments")]
    pub mode: String,
}

/// Runs `tessera consolidate`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    check_mode(&args.mode)?;
    let key = parse_key(&args.target.key)?;
    let array = &args.target.array;
    let (written, folder) = match args.mode.as_str() {
        "commits" => (
            tessera_write::commits::consolidate_commits(array, key)?,
            "__commits",
        ),
        _ => (
            tessera_write::metadata::consolidate_metadata(array, key)?,
            "__meta",
        ),
    };
    match written {
        Some(name) => eprintln!("wrote {folder}/{name}"),
        None => eprintln!("nothing to consolidate: nothing written"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The commits and array_meta modes are implemented: the others are
/// refused by name.
pub fn check_mode(mode: &str) -> Result<(), BoxError> {
    match mode {
        "commits" | "array_meta" => Ok(()),
        "fragments" | "fragment_meta" => Err(format!(
            "--mode {mode}: not supported yet (tessera consolidates and vacuums --mode commits and --mode array_meta)"
        )
        .into()),
        other => Err(format!(
            "--mode {other}: expected fragments, commits, fragment_meta or array_meta"
        )
        .into()),
    }
}
