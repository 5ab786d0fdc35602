//! Ballista's scheduler and executor, and a client session, each set up
//! with tessera's codecs.

use crate::codec::{TesseraLogicalCodec, TesseraPhysicalCodec};
use crate::distribute::DistributeScans;
use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::error::BallistaError;
use ballista_core::utils::default_session_builder;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::common::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::net::SocketAddr;
use std::sync::Arc;

/// What went wrong starting or reaching a cluster.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Ballista's scheduler or executor failed.
    #[error("ballista: {0}")]
    Ballista(#[from] BallistaError),
    /// Planning or running a query failed.
    #[error(transparent)]
    DataFusion(#[from] DataFusionError),
}

/// Runs a Ballista scheduler on `bind` until the process ends.
pub async fn run_scheduler(bind: SocketAddr) -> Result<(), Error> {
    let mut config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        override_logical_codec: Some(Arc::new(TesseraLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(TesseraPhysicalCodec::default())),
        // Ballista's adaptive planner plans stages with its own rules, not
        // the session's: the static planner applies `DistributeScans`.
        override_session_builder: Some(Arc::new(|c: SessionConfig| {
            let state = default_session_builder(c.with_ballista_adaptive_query_planner(false))?;
            Ok(SessionStateBuilder::new_from_existing(state)
                .with_physical_optimizer_rule(Arc::new(DistributeScans))
                .build())
        })),
        ..SchedulerConfig::default()
    };
    if !bind.ip().is_unspecified() {
        config.external_host = bind.ip().to_string();
    }
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, bind, Arc::new(config)).await?;
    Ok(())
}

/// Where an executor listens and whom it works for.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's address.
    pub scheduler: SocketAddr,
    /// Where the executor serves its results (Arrow Flight).
    pub bind: SocketAddr,
    /// Where, on `bind`'s host, the executor takes the tasks the scheduler
    /// hands it (gRPC). Executors on one host each need their own.
    pub grpc_port: u16,
    /// Tasks run at once; 0: one per core.
    pub concurrent_tasks: usize,
}

impl ExecutorOptions {
    /// An executor on `bind` working for the scheduler at `scheduler`,
    /// taking tasks on the port after `bind`'s, one task per core.
    pub fn new(scheduler: SocketAddr, bind: SocketAddr) -> ExecutorOptions {
        ExecutorOptions {
            scheduler,
            bind,
            grpc_port: bind.port().wrapping_add(1),
            concurrent_tasks: 0,
        }
    }

    /// The address the executor takes tasks on.
    pub fn grpc(&self) -> SocketAddr {
        SocketAddr::new(self.bind.ip(), self.grpc_port)
    }
}

/// Runs a Ballista executor until the process is interrupted or
/// terminated (it then tells the scheduler and finishes its tasks).
pub async fn run_executor(options: ExecutorOptions) -> Result<(), Error> {
    // Ballista's error for a port in use names neither port.
    for (what, address) in [("results", options.bind), ("tasks", options.grpc())] {
        if address.port() == 0 {
            // Others reach the executor at the ports it registers.
            return Err(BallistaError::General(format!(
                "the executor's {what} port, {address}: give a port, not 0"
            ))
            .into());
        }
        std::net::TcpListener::bind(address).map_err(|e| {
            BallistaError::General(format!("the executor's {what} port, {address}: {e}"))
        })?;
    }
    let mut config = ExecutorProcessConfig {
        bind_host: options.bind.ip().to_string(),
        port: options.bind.port(),
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler.ip().to_string(),
        scheduler_port: options.scheduler.port(),
        // Waits for a scheduler that is still starting, rather than fail.
        scheduler_connect_timeout_seconds: 60,
        override_logical_codec: Some(Arc::new(TesseraLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(TesseraPhysicalCodec::default())),
        ..ExecutorProcessConfig::default()
    };
    if !options.bind.ip().is_unspecified() {
        config.external_host = Some(options.bind.ip().to_string());
    }
    if options.concurrent_tasks > 0 {
        config.vcores = options.concurrent_tasks;
    }
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}

/// A session whose queries run on the cluster whose scheduler is at
/// `scheduler` (`HOST:PORT`); register tessera tables on it with
/// `tessera_datafusion::register`.
pub async fn remote_context(scheduler: &str) -> Result<SessionContext, Error> {
    let config: SessionConfig = SessionConfig::new_with_ballista()
        .with_ballista_logical_extension_codec(Arc::new(TesseraLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(TesseraPhysicalCodec::default()))
        // See `run_scheduler`: the static planner distributes tessera scans.
        .with_ballista_adaptive_query_planner(false);
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    Ok(SessionContext::remote_with_state(&format!("df://{scheduler}"), state).await?)
}
