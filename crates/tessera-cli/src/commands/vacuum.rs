//! `tessera vacuum`: removes what consolidation replaced, mode by mode; so
//! far commits (commit files a consolidated commits file names) and
//! array_meta (metadata files a `.vac` file lists).

use crate::args::*;
use crate::commands::consolidate::check_mode;
use std::process::ExitCode;

/// Vacuum the array (`--mode commits` or `array_meta`).
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: std::path::PathBuf,
    /// What to vacuum: fragments, commits, fragment_meta or array_meta;
    /// tessera does commits and array_meta so far.
    #[arg(long, default_value = "fragments")]
    pub mode: String,
}

/// Runs `tessera vacuum`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    check_mode(&args.mode)?;
    let removed = match args.mode.as_str() {
        "commits" => tessera_write::commits::vacuum_commits(&args.array)?,
        _ => tessera_write::metadata::vacuum_metadata(&args.array)?,
    };
    eprintln!("removed {removed} files");
    Ok(ExitCode::SUCCESS)
}
