//! SQL over TileDB arrays: [`TesseraTable`] is a DataFusion
//! `TableProvider` over an array read by tessera.
//!
//! An array is a table of its dimensions then its attributes (Arrow types
//! as `tessera_query::arrow` maps them; enumerated attributes as
//! dictionary columns). A dense array's table holds every cell of its
//! current domain (fill values where nothing was written), as `tessera
//! read` returns it. The scan ([`TesseraScan`]) takes what DataFusion
//! pushes down:
//!
//! - the projection: only the attributes asked for are decoded, the
//!   coordinates only if a dimension is asked for;
//! - filters: on dimensions they become the read's ranges (exact for
//!   integer and datetime dimensions), on attributes a query condition
//!   that prunes tiles by their metadata (inexact: DataFusion filters
//!   again);
//! - the limit, and the row count where the fragments make it exact;
//! - partitions cut along the first dimension where tiles end (whole space
//!   tiles of dense arrays; between a sparse array's data tiles, by their
//!   MBRs, for about as many cells each), each read streamed in bounded
//!   memory, decoded on rayon's pool with no thread of their own: an
//!   object store's requests awaited on DataFusion's runtime, a dense
//!   read's next batches' tiles fetched while one decodes.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::SessionContext;
//! let ctx = SessionContext::new();
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
//! tessera_datafusion::register(&ctx, "a", path, None, None).unwrap();
//! let rows = ctx.sql("SELECT x, sum(i) FROM a WHERE x < 5 GROUP BY x").await.unwrap().collect().await.unwrap();
//! assert!(!rows.is_empty());
//! # });
//! ```

mod describe;
mod error;
mod filter;
mod partition_read;
mod provider;
mod scan;
mod stats;
mod table;
mod tokens;

pub use describe::{Bound, ScanDescription, TableDescription};
pub use scan::TesseraScan;
pub use table::TesseraTable;

use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// Registers the array at `uri` as table `name` of `ctx`, as it was at
/// `timestamp` (`(start, end)` in milliseconds), with `key`; gives the
/// table (its enumerations restore a cluster's results:
/// `tessera_ballista::restore_dictionaries`).
pub fn register(
    ctx: &SessionContext,
    name: &str,
    uri: &str,
    timestamp: Option<(u64, u64)>,
    key: Option<tessera::filters::EncryptionKey>,
) -> datafusion::common::Result<Arc<TesseraTable>> {
    let table = Arc::new(TesseraTable::open(uri, timestamp, key)?);
    ctx.register_table(name, table.clone())?;
    Ok(table)
}
