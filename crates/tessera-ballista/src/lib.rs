//! Distributed SQL over TileDB arrays on [Ballista], the distributed
//! engine of the DataFusion world: a scheduler, executors, and clients
//! whose plans scan tessera arrays.
//!
//! Tessera's table and scan travel between them as plain data (the
//! array's URI, the time it was opened at and the fragments it saw, the
//! scan's columns, ranges, condition and partitions), through Ballista's
//! codecs extended by [`TesseraLogicalCodec`] and [`TesseraPhysicalCodec`].
//! Every executor opens the arrays itself, so each must reach the same
//! URIs: an object store, or a file system every machine mounts.
//!
//! The three roles, as `tessera scheduler`, `tessera executor` and
//! `tessera sql --cluster` run them:
//!
//! ```no_run
//! # async fn roles() -> Result<(), tessera_ballista::Error> {
//! let scheduler = "127.0.0.1:50050".parse().unwrap();
//! tokio::spawn(tessera_ballista::run_scheduler(scheduler));
//! tokio::spawn(tessera_ballista::run_executor(
//!     tessera_ballista::ExecutorOptions::new(scheduler, "127.0.0.1:50051".parse().unwrap()),
//! ));
//! let ctx = tessera_ballista::remote_context("127.0.0.1:50050").await?;
//! tessera_datafusion::register(&ctx, "a", "s3://bucket/array", None, None)?;
//! ctx.sql("SELECT count(*) FROM a").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! [Ballista]: https://datafusion.apache.org/ballista/

mod cluster;
mod codec;
mod distribute;
mod results;

pub use cluster::{remote_context, run_executor, run_scheduler, Error, ExecutorOptions};
pub use codec::{TesseraLogicalCodec, TesseraPhysicalCodec};
pub use distribute::DistributeScans;
pub use results::restore_dictionaries;
