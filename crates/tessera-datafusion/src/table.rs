//! An array as a DataFusion table: its dimensions then its attributes as
//! columns (enumerated attributes as dictionary columns), at the time it
//! was opened.

use crate::describe::{key_hex, TableDescription};
use crate::error::external;
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::{DataFusionError, Result, Statistics};
use std::path::Path;
use std::sync::Arc;
use tessera::filters::EncryptionKey;
use tessera::fragment::OpenArray;
use tessera::query::arrow::{array_schema, Dictionaries};
use tessera::storage::{AsyncStorage, Storage};

/// A TileDB array (local or on an object store) as a table.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionContext;
/// use tessera_datafusion::TesseraTable;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let ctx = SessionContext::new();
/// ctx.register_table("a", std::sync::Arc::new(TesseraTable::open(path, None, None).unwrap())).unwrap();
/// let df = ctx.sql("SELECT count(*) AS n FROM a WHERE x BETWEEN 1 AND 10").await.unwrap();
/// let batches = df.collect().await.unwrap();
/// assert_eq!(batches[0].num_rows(), 1);
/// # });
/// ```
#[derive(Clone)]
pub struct TesseraTable {
    uri: String,
    storage: Arc<dyn Storage>,
    /// The object store awaited on DataFusion's runtime, if the array is
    /// in one and the table was opened on that runtime.
    awaited: Option<Arc<dyn AsyncStorage>>,
    array: Arc<OpenArray>,
    schema: SchemaRef,
    /// The dictionaries of enumerated attributes.
    dictionaries: Arc<Dictionaries>,
    /// From fragment metadata, on first use (summaries cost a read per fragment).
    statistics: Arc<std::sync::OnceLock<Statistics>>,
}

impl std::fmt::Debug for TesseraTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TesseraTable({})", self.uri)
    }
}

impl TesseraTable {
    /// Opens the array at `uri` (a path, or an `s3://`, `gs://`, `az://`,
    /// `http(s)://` URI) as it was at `timestamp` (`(start, end)` in
    /// milliseconds; `None`: now), with its AES-256-GCM `key`. Opened on a
    /// Tokio runtime, the table sends its requests to an object store on
    /// that runtime, which must then outlive the table's use; elsewhere,
    /// on a runtime the storage starts for itself.
    pub fn open(
        uri: &str,
        timestamp: Option<(u64, u64)>,
        key: Option<EncryptionKey>,
    ) -> Result<TesseraTable> {
        Self::open_pinned(uri, timestamp.unwrap_or((0, u64::MAX)), key, None)
    }

    /// The table `description` describes, reading exactly the fragments
    /// it lists: an error names the first of them that is gone.
    pub fn from_description(description: &TableDescription) -> Result<TesseraTable> {
        let key = description
            .key
            .as_deref()
            .map(EncryptionKey::parse)
            .transpose()
            .map_err(DataFusionError::Plan)?;
        Self::open_pinned(
            &description.uri,
            description.timestamp,
            key,
            Some(&description.fragments),
        )
    }

    /// The table as plain data another process opens it from.
    pub fn description(&self) -> TableDescription {
        let a = &self.array;
        TableDescription {
            uri: self.uri.clone(),
            timestamp: (a.timestamp_start, a.timestamp_end),
            key: a.key.as_ref().map(key_hex),
            fragments: a.fragments.iter().map(|f| f.name.clone()).collect(),
        }
    }

    fn open_pinned(
        uri: &str,
        (t1, t2): (u64, u64),
        key: Option<EncryptionKey>,
        fragments: Option<&[String]>,
    ) -> Result<TesseraTable> {
        let path = tessera::local_path(Path::new(uri)).to_path_buf();
        // Opened on a Tokio runtime (DataFusion's), the table's object-store
        // requests run on that runtime, and no other is started.
        let (storage, awaited) = match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let on = tessera::storage_on_runtime(&path, handle).map_err(external)?;
                (on.storage, on.awaited)
            }
            Err(_) => (tessera::storage_for(&path).map_err(external)?, None),
        };
        let mut array = OpenArray::open(&*storage, &path, t1, t2, key).map_err(external)?;
        if let Some(names) = fragments {
            pin(&mut array, names, uri)?;
        }
        let dictionaries =
            Dictionaries::new(&array, array.enumerations(&*storage).map_err(external)?)
                .map_err(external)?;
        let schema = Arc::new(array_schema(&array, Some(&dictionaries)));
        Ok(TesseraTable {
            uri: uri.to_owned(),
            storage,
            awaited,
            array: Arc::new(array),
            schema,
            dictionaries: Arc::new(dictionaries),
            statistics: Default::default(),
        })
    }

    /// The storage the array is read through.
    pub(crate) fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// The object store the table's reads await, where it has one.
    pub(crate) fn awaited(&self) -> Option<&Arc<dyn AsyncStorage>> {
        self.awaited.as_ref()
    }

    /// The opened array, shared.
    pub(crate) fn shared_array(&self) -> &Arc<OpenArray> {
        &self.array
    }

    /// The statistics of every column (`stats`), computed once.
    pub(crate) fn column_statistics(&self) -> &Statistics {
        self.statistics.get_or_init(|| {
            crate::stats::table_statistics(
                &self.storage,
                &self.array,
                &self.schema,
                self.row_count(),
            )
        })
    }

    /// The values of column `name`'s dictionary, when it is an enumerated
    /// attribute (a dictionary column): its enumeration's values in key order.
    pub fn dictionary_values(&self, name: &str) -> Option<ArrayRef> {
        self.dictionaries.values(name).cloned()
    }

    /// The table's columns.
    pub(crate) fn schema_ref(&self) -> &SchemaRef {
        &self.schema
    }

    /// The URI the table was opened from.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The opened array.
    pub fn array(&self) -> &OpenArray {
        &self.array
    }

    /// How many rows the table has, exactly where the fragments say so:
    /// a dense array holds every cell of its current domain; a sparse one
    /// the cells its fragments hold, when no two fragments may hold the
    /// same cell (one fragment, or duplicates allowed), no delete is in
    /// force and no fragment keeps several versions of a cell.
    pub(crate) fn row_count(&self) -> Precision<usize> {
        let a = &self.array;
        if a.schema.is_dense() {
            let Ok(extent) = tessera::query::extent(a) else {
                return Precision::Absent;
            };
            let mut n: usize = 1;
            for e in extent {
                let Some((lo, hi)) = e else {
                    return Precision::Absent;
                };
                let (Some(lo), Some(hi)) = (lo.as_int(), hi.as_int()) else {
                    return Precision::Absent;
                };
                let Some(m) = usize::try_from(hi - lo + 1)
                    .ok()
                    .and_then(|w| n.checked_mul(w))
                else {
                    return Precision::Absent;
                };
                n = m;
            }
            return Precision::Exact(n);
        }
        let cells: u64 = a.fragments.iter().map(|f| f.total_cell_num()).sum();
        let Ok(cells) = usize::try_from(cells) else {
            return Precision::Absent;
        };
        let versions = a.fragments.iter().any(|f| f.footer.has_timestamps);
        let exact = (a.fragments.len() <= 1 || a.schema.allows_dups)
            && a.delete_conditions.is_empty()
            && !versions;
        if exact {
            Precision::Exact(cells)
        } else {
            Precision::Inexact(cells)
        }
    }
}

/// Keeps only the fragments `names` lists; an error names one it lists
/// that the array no longer has (consolidated and vacuumed since).
fn pin(array: &mut OpenArray, names: &[String], uri: &str) -> Result<()> {
    // Sets: arrays may have thousands of fragments.
    let have: std::collections::HashSet<&str> =
        array.fragments.iter().map(|f| f.name.as_str()).collect();
    if let Some(gone) = names.iter().find(|n| !have.contains(n.as_str())) {
        return Err(DataFusionError::Execution(format!(
            "{uri}: fragment {gone} was read when the query was planned and is gone now \
             (consolidated and vacuumed since?); plan the query again"
        )));
    }
    let keep: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    array.fragments.retain(|f| keep.contains(f.name.as_str()));
    Ok(())
}
