//! `tessera vacuum`: removes what consolidation replaced, mode by mode; so
//! far the commits mode: commit files a consolidated commits file names.

use crate::args::*;
use crate::commands::consolidate::check_mode;
use std::process::ExitCode;

/// Vacuum the array (`--mode commits`: commit files now consolidated).
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: std::path::PathBuf,
    /// What to vacuum: fragments, commits, fragment_meta or array_meta;
    /// tessera does commits so far.
    #[arg(long, default_value = "fragments")]
    pub mode: String,
}

/// Runs `tessera vacuum`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    check_mode(&args.mode)?;
    let removed = tessera_write::commits::vacuum_commits(&args.array)?;
    eprintln!("removed {removed} files");
    Ok(ExitCode::SUCCESS)
}
