//! `tessera scheduler` and `tessera executor`: a Ballista cluster that
//! runs `tessera sql --cluster` queries (feature `sql`; see
//! `tessera_ballista`). Both run until interrupted.
//!
//! Ballista's log goes to standard error: warnings and errors, or what
//! `TESSERA_LOG` asks (`off`, `error`, `warn`, `info`, `debug`, `trace`).

use crate::args::BoxError;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;

/// Run a Ballista scheduler.
#[derive(clap::Args)]
pub struct SchedulerArgs {
    /// Where to listen for clients and executors (0.0.0.0:PORT for every interface).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50050")]
    pub bind: String,
}

/// Run a Ballista executor.
#[derive(clap::Args)]
pub struct ExecutorArgs {
    /// The scheduler to work for.
    #[arg(long, value_name = "HOST:PORT")]
    pub scheduler: String,
    /// Where to serve results to the scheduler, other executors and
    /// clients (an address they reach).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50051")]
    pub bind: String,
    /// Where, on --bind's host, to take the tasks the scheduler hands out
    /// (default: the port after --bind's). Executors on one host each need
    /// their own two ports.
    #[arg(long, value_name = "PORT")]
    pub grpc_port: Option<u16>,
    /// Tasks run at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub concurrent_tasks: usize,
}

/// Runs `tessera scheduler`.
pub fn scheduler(args: SchedulerArgs) -> Result<ExitCode, BoxError> {
    log_to_stderr()?;
    let bind = address("--bind", &args.bind)?;
    eprintln!("tessera scheduler: listening on {bind}");
    runtime()?.block_on(tessera_ballista::run_scheduler(bind))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `tessera executor`.
pub fn executor(args: ExecutorArgs) -> Result<ExitCode, BoxError> {
    log_to_stderr()?;
    let mut options = tessera_ballista::ExecutorOptions::new(
        address("--scheduler", &args.scheduler)?,
        address("--bind", &args.bind)?,
    );
    options.concurrent_tasks = args.concurrent_tasks;
    if let Some(port) = args.grpc_port {
        options.grpc_port = port;
    }
    eprintln!(
        "tessera executor: serving results on {}, taking tasks on {}, working for {}",
        options.bind,
        options.grpc(),
        options.scheduler
    );
    runtime()?.block_on(tessera_ballista::run_executor(options))?;
    Ok(ExitCode::SUCCESS)
}

/// `HOST:PORT` resolved, IPv4 first (Ballista's URLs take either).
fn address(flag: &str, text: &str) -> Result<SocketAddr, BoxError> {
    let all: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("{flag} {text}: expected HOST:PORT ({e})"))?
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| format!("{flag} {text}: no address").into())
}

/// The async runtime Ballista and DataFusion run on (`sql` too).
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// Ballista's log records on standard error, at the level `TESSERA_LOG`
/// names (warnings and errors where it is not set).
pub(crate) fn log_to_stderr() -> Result<(), BoxError> {
    let level = match std::env::var("TESSERA_LOG") {
        Ok(v) => v.parse::<log::LevelFilter>().map_err(|_| {
            format!("TESSERA_LOG={v}: expected off, error, warn, info, debug or trace")
        })?,
        Err(_) => log::LevelFilter::Warn,
    };
    // Set once a process; a second call keeps the first logger.
    if log::set_logger(&Stderr).is_ok() {
        log::set_max_level(level);
    }
    Ok(())
}

/// Writes each log record as a line: level, where from, message.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}
