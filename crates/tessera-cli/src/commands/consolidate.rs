//! `tessera consolidate`: what consolidation libtiledb does, mode by mode:
//! fragments (the fragments of a timestamp window into one), commits
//! (every commit named by one consolidated commits file) and array_meta
//! (the metadata merged into one file).

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;
use tessera::query::QuerySource;
use tessera_write::consolidate::{consolidate_fragments, ConsolidateOptions, Step};

/// Consolidate the array.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// What to consolidate: fragments (the default), commits,
    /// fragment_meta or array_meta (as libtiledb's
    /// `sm.consolidation.mode`); with --recursive, every mode unless one
    /// is named.
    #[arg(long)]
    pub mode: Option<String>,
    /// Fragments: only those written inside `T1:T2` (ms), or up to `T`.
    #[arg(long)]
    pub timestamp: Option<String>,
    /// Fragments: keep every version of each cell with its timestamp, so
    /// reads at earlier times still see them (what sparse arrays get by
    /// default, as with libtiledb; refused for dense arrays).
    #[arg(long, conflicts_with = "without_timestamps")]
    pub with_timestamps: bool,
    /// Fragments: keep only the newest version of each cell (a smaller
    /// fragment; time travel into the fragments' range is lost). Refused
    /// where a delete commit falls among the fragments.
    #[arg(long)]
    pub without_timestamps: bool,
    /// Fragments: leave out the cells the delete commits among the
    /// fragments delete (libtiledb's `sm.consolidation.purge_deleted_cells`).
    #[arg(long)]
    pub purge_deleted: bool,
    /// Fragments: memory for the consolidation (e.g. 256M, 2G; default
    /// 1G): sparse cells are read in batches of a third of it and written
    /// out tile by tile; a dense box is read and written in bands of whole
    /// space tiles of about a third of it.
    #[arg(long, value_parser = parse_size)]
    pub budget: Option<u64>,
    #[command(flatten)]
    pub tree: crate::commands::tree::TreeArgs,
}

/// For the crash-safety test: `TESSERA_CRASH_AFTER=<step>` aborts the
/// process right after the first time that step of a write
/// (`FragmentWritten`: its files written, not committed), a fragment
/// consolidation (`FragmentWritten`, `Committed`, `VacuumListed`) or
/// vacuum (`IgnoreListed`, `CommitRemoved`, `FolderRemoved`,
/// `VacuumListRemoved`) completes, as a kill there would.
pub const CRASH_AFTER: &str = "TESSERA_CRASH_AFTER";

/// Aborts when `step` is the one `TESSERA_CRASH_AFTER` names.
pub fn crash_if(crash_after: &Option<String>, step: &str) {
    if crash_after.as_deref() == Some(step) {
        std::process::abort();
    }
}

impl Args {
    /// The mode given, or fragments.
    fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("fragments")
    }
}

/// Runs `tessera consolidate`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    if args.tree.recursive {
        let (root, work) = (&args.target.array, tessera::maintain::Work::Consolidate);
        return crate::commands::tree::run(
            root,
            work,
            args.mode.as_deref(),
            &args.target.key,
            &args.tree,
        );
    }
    check_mode(args.mode())?;
    let key = parse_key(&args.target.key)?;
    stores.at_location(&args.target.array, |array| {
        consolidate_in(array, &args, key)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Consolidates the local array `array` as `args` ask.
fn consolidate_in(
    array: &tessera::storage::Location,
    args: &Args,
    key: Option<tessera::filters::EncryptionKey>,
) -> Result<(), BoxError> {
    if args.mode() == "fragments" {
        let options = ConsolidateOptions {
            window: parse_timestamp(&args.timestamp)?,
            with_timestamps: match (args.with_timestamps, args.without_timestamps) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            purge_deleted: args.purge_deleted,
            key,
            budget: args.budget,
        };
        let crash_after = std::env::var(CRASH_AFTER).ok();
        let mut on_step = |step: Step| crash_if(&crash_after, &format!("{step:?}"));
        match consolidate_fragments(array, &options, &QuerySource, &mut on_step)? {
            Some(c) => eprintln!(
                "wrote __fragments/{} ({} cells), replacing {} fragments (tessera vacuum removes them)",
                c.fragment,
                c.cells,
                c.replaced.len()
            ),
            None => eprintln!("nothing to consolidate: fewer than two fragments in the window"),
        }
        return Ok(());
    }
    let (written, folder) = match args.mode() {
        "fragment_meta" => (
            tessera_write::fragment_meta::consolidate_fragment_meta(array, key)?,
            "__fragment_meta",
        ),
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
    Ok(())
}

/// The consolidation modes libtiledb has.
pub fn check_mode(mode: &str) -> Result<(), BoxError> {
    match mode {
        "fragments" | "commits" | "fragment_meta" | "array_meta" => Ok(()),
        other => Err(format!(
            "--mode {other}: expected fragments, commits, fragment_meta or array_meta"
        )
        .into()),
    }
}
