//! `tessera vacuum`: removes what consolidation replaced, mode by mode:
//! fragments (those a `__commits/*.vac` file lists), commits (commit
//! files a consolidated commits file names), fragment_meta (consolidated
//! fragment metadata files but the newest) and array_meta (metadata
//! files a `.vac` file lists).

use crate::args::*;
use crate::commands::consolidate::check_mode;
use crate::storage::Stores;
use std::process::ExitCode;

/// Vacuum the array.
#[derive(clap::Args)]
pub struct Args {
    /// The array: a folder or a URI (`s3://bucket/path`, ...).
    pub array: std::path::PathBuf,
    /// What to vacuum: fragments (the default), commits, fragment_meta or
    /// array_meta, as libtiledb's `sm.vacuum.mode`; with --recursive,
    /// every mode unless one is named.
    #[arg(long)]
    pub mode: Option<String>,
    /// AES-256-GCM key of an encrypted array: 64 hex digits (checked
    /// against the array; the vacuum reads nothing encrypted).
    #[arg(long)]
    pub key: Option<String>,
    #[command(flatten)]
    pub tree: crate::commands::tree::TreeArgs,
}

/// Runs `tessera vacuum`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    if args.tree.recursive {
        let work = tessera::maintain::Work::Vacuum;
        return crate::commands::tree::run(
            &args.array,
            work,
            args.mode.as_deref(),
            &args.key,
            &args.tree,
        );
    }
    let mode = args.mode.as_deref().unwrap_or("fragments");
    check_mode(mode)?;
    let key = parse_key(&args.key)?;
    let removed = stores.at_location(&args.array, |array| {
        Ok(match mode {
            "fragments" => {
                let crash_after = std::env::var(crate::commands::consolidate::CRASH_AFTER).ok();
                tessera_write::consolidate::vacuum_fragments(array, key, &mut |step| {
                    crate::commands::consolidate::crash_if(&crash_after, &format!("{step:?}"))
                })?
            }
            "commits" => tessera_write::commits::vacuum_commits(array, key)?,
            "fragment_meta" => tessera_write::fragment_meta::vacuum_fragment_meta(array, key)?,
            _ => tessera_write::metadata::vacuum_metadata(array, key)?,
        })
    })?;
    let what = if mode == "fragments" {
        "fragments"
    } else {
        "files"
    };
    eprintln!("removed {removed} {what}");
    Ok(ExitCode::SUCCESS)
}
