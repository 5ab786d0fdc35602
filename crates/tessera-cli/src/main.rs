//! `tessera`: read, write and maintain TileDB arrays. This file parses the
//! command line and dispatches; each subcommand lives in `commands/`.

mod args;
mod arrow_file;
mod commands;
mod error;
mod format;
mod output;
mod progress;
mod storage;
mod verify;

use clap::{Parser, Subcommand};
use error::BoxError;
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "Read, write and maintain TileDB arrays (pure Rust, no libtiledb)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read cells as JSON lines (one object per cell), CSV, Arrow IPC, Parquet, or nothing (for timing).
    Read(commands::read::Args),
    /// Compute aggregates over the cells of a subarray (from fragment and
    /// tile metadata where it can), printed as one JSON object; e.g.
    /// `tessera aggregate ARRAY count 'sum(a)' 'max(b)'`.
    Aggregate(commands::aggregate::Args),
    /// Print the array schema.
    Schema(commands::schema::Args),
    /// Create an empty array from a schema in JSON (`tessera schema --json`'s form).
    Create(commands::create::Args),
    /// Write cells (JSON lines, the form `read` prints) into a new fragment: sparse cells in any order, or a dense box of cells.
    Write(commands::write::Args),
    /// Consolidate the array as libtiledb does: fragments (the default), commits, fragment_meta or array_meta.
    Consolidate(commands::consolidate::Args),
    /// Remove what consolidation replaced: fragments (the default), commits, fragment_meta or array_meta.
    Vacuum(commands::vacuum::Args),
    /// Delete the cells a condition matches (a delete commit, as libtiledb writes one).
    Delete(commands::delete::Args),
    /// Evolve the schema: add and drop attributes (a new schema file, as libtiledb's ArraySchemaEvolution writes).
    Evolve(commands::evolve::Args),
    /// List the fragments.
    Fragments(commands::fragments::Args),
    /// List the delete and update commits in force, with their conditions
    /// (as stored: the cells to keep) and, for updates, the values they set.
    Commits(commands::commits::Args),
    /// Print the array metadata; with --set KEY=VALUE and --delete KEY, put and delete keys.
    Meta(commands::meta::Args),
    /// Read every generic tile and data tile; report each problem. Exit 0 only when all is sound.
    Verify(commands::verify::Args),
    /// Show the framing of the tile at an offset (format debugging).
    DumpTile(commands::dump_tile::Args),
    /// Summarize an array or a group.
    Info(commands::info::Args),
    /// List a group's members (with --recursive, their members too).
    Ls(commands::ls::Args),
    /// Write one self-contained HTML page of an array or group: schema,
    /// fragments over time and over the domain, the tile grid, and a
    /// picture of the cells (`tessera view A -o a.html`).
    View(commands::view::Args),
    /// Create a group; add or remove its members (`tessera group add G ARRAY --name N --relative`).
    Group(commands::group::Args),
    /// Run a SQL query over arrays (DataFusion; feature `sql`).
    #[cfg(feature = "sql")]
    Sql(commands::sql::Args),
    /// Run a Ballista scheduler for `tessera sql --cluster` (feature `sql`).
    #[cfg(feature = "sql")]
    Scheduler(commands::cluster::SchedulerArgs),
    /// Run a Ballista executor working for a scheduler (feature `sql`).
    #[cfg(feature = "sql")]
    Executor(commands::cluster::ExecutorArgs),
}

impl Command {
    /// Whether the command's reads and writes run on the main thread
    /// (rather than on an async runtime's threads while it waits).
    fn reads_on_main_thread(&self) -> bool {
        match self {
            #[cfg(feature = "sql")]
            Command::Sql(_) | Command::Scheduler(_) | Command::Executor(_) => false,
            _ => true,
        }
    }

    /// Whether the command makes one read (or query) and exits: its
    /// buffers are kept in heaps backed by huge pages
    /// ([`tessera_alloc::huge_heap`]).
    fn reads_and_exits(&self) -> bool {
        match self {
            #[cfg(feature = "sql")]
            Command::Sql(_) => true,
            Command::Read(_) | Command::Aggregate(_) => true,
            _ => false,
        }
    }
}

fn run(cli: Cli, stores: &storage::Stores) -> Result<ExitCode, BoxError> {
    match cli.command {
        Command::Read(a) => commands::read::run(a, stores),
        Command::Aggregate(a) => commands::aggregate::run(a, stores),
        Command::Schema(a) => commands::schema::run(a, stores),
        Command::Create(a) => commands::create::run(a, stores),
        Command::Evolve(a) => commands::evolve::run(a, stores),
        Command::Delete(a) => commands::delete::run(a, stores),
        Command::Consolidate(a) => commands::consolidate::run(a, stores),
        Command::Vacuum(a) => commands::vacuum::run(a, stores),
        Command::Write(a) => commands::write::run(a, stores),
        Command::Fragments(a) => commands::fragments::run(a, stores),
        Command::Commits(a) => commands::commits::run(a, stores),
        Command::Meta(a) => commands::meta::run(a, stores),
        Command::Verify(a) => commands::verify::run(a, stores),
        Command::DumpTile(a) => commands::dump_tile::run(a, stores),
        Command::Info(a) => commands::info::run(a, stores),
        Command::Ls(a) => commands::ls::run(a, stores),
        Command::Group(a) => commands::group::run(a, stores),
        Command::View(a) => commands::view::run(a, stores),
        #[cfg(feature = "sql")]
        Command::Sql(a) => commands::sql::run(a),
        #[cfg(feature = "sql")]
        Command::Scheduler(a) => commands::cluster::scheduler(a),
        #[cfg(feature = "sql")]
        Command::Executor(a) => commands::cluster::executor(a),
    }
}

/// Large result buffers get transparent huge pages: see `tessera-alloc`.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

/// Set when printing failed because the reader of stdout went away.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn main() -> ExitCode {
    tessera_alloc::set_from_environment();
    // A bug must not print a backtrace at users: one line, non-zero exit.
    std::panic::set_hook(Box::new(|info| {
        // A reader that went away (`tessera info A | head -2`) is no bug:
        // the output ends quietly, as it would for any Unix tool.
        let text = info.to_string();
        if text.contains("failed printing to stdout") && text.contains("Broken pipe") {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error (please report): {text}"
        );
    }));
    let cli = Cli::parse();
    // For commands that read on the main thread, it is one of rayon's
    // threads: a read's parallel steps run on it and its helpers by work
    // stealing, instead of each being handed to the pool while it sleeps,
    // and one thread fewer is started. Built after parsing, so that
    // `--help` and `--version` start no thread. `build_global` waits until
    // the helpers run, which measured faster than not waiting (`build`): a
    // helper left queued on the main thread's CPU competes with it. On the
    // 1 % row-band read (benchmark), medians of 300 alternating runs:
    // 4.57 ms, against 4.73 with the main thread outside the pool, 5.16 not
    // waiting and 4.84 with one thread. Commands that run on an async
    // runtime (SQL, the cluster's servers) block the main thread in it: it
    // would be a pool thread that never takes work, and every read would
    // decode on the other threads alone (on two cores, one).
    if cli.command.reads_and_exits() {
        tessera_alloc::huge_heap();
    }
    let pool = rayon::ThreadPoolBuilder::new();
    let pool = match cli.command.reads_on_main_thread() {
        true => pool.use_current_thread(),
        false => pool,
    };
    let _ = pool.build_global();
    match std::panic::catch_unwind(|| run(cli, &storage::Stores::default())) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) if closed_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            let mut msg = format!("error: {e}");
            let mut src = e.source();
            while let Some(s) = src {
                // Wrappers repeat their cause in their own message: skip echoes.
                let text = s.to_string();
                if !msg.contains(&text) {
                    msg.push_str(&format!("\n  caused by: {text}"));
                }
                src = s.source();
            }
            // Not eprintln: a closed stderr must not turn into a panic here.
            let _ = writeln!(std::io::stderr(), "{msg}");
            ExitCode::FAILURE
        }
        Err(_) if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(101),
    }
}

/// Whether `e` is the reader of stdout going away (a broken pipe): the
/// output ends there, quietly, as for any Unix tool.
fn closed_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(x) = cur {
        if x.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        cur = x.source();
    }
    false
}
