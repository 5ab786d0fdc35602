//! `tessera scheduler` and `tessera executor`: a Ballista cluster that
//! runs `tessera sql --cluster` queries (feature `sql`; see
//! `tessera_ballista`). Both run until interrupted.

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
    /// Tasks run at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub concurrent_tasks: usize,
}

/// Runs `tessera scheduler`.
pub fn scheduler(args: SchedulerArgs) -> Result<ExitCode, BoxError> {
    let bind = address("--bind", &args.bind)?;
    eprintln!("tessera scheduler: listening on {bind}");
    runtime()?.block_on(tessera_ballista::run_scheduler(bind))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `tessera executor`.
pub fn executor(args: ExecutorArgs) -> Result<ExitCode, BoxError> {
    let mut options = tessera_ballista::ExecutorOptions::new(
        address("--scheduler", &args.scheduler)?,
        address("--bind", &args.bind)?,
    );
    options.concurrent_tasks = args.concurrent_tasks;
    eprintln!(
        "tessera executor: serving on {}, working for {}",
        options.bind, options.scheduler
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
