//! A read streamed to pyarrow: the query runs on a thread of its own,
//! batch by batch within its memory budget, and hands each record batch
//! through a channel of one slot (so at most two batches are held besides
//! the one pyarrow has) to a `RecordBatchReader` that pyarrow pulls from
//! through the Arrow C stream interface.

use crate::ranges;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::arrow::Dictionaries;
use tessera::query::{Expr, Key, Query, QueryError};
use tessera::tile::storage::Storage;
use tessera::tile::Layout;

/// What a read asks for, taken from Python's arguments.
pub struct ReadSpec {
    /// Attributes, in output order (default: all).
    pub attrs: Option<Vec<String>>,
    /// Inclusive ranges, by dimension.
    pub ranges: Vec<(String, Key, Key)>,
    /// A condition in the CLI's `--where` syntax.
    pub condition: Option<String>,
    /// The result order.
    pub layout: Option<Layout>,
    /// Whether to return the dimensions.
    pub dims: bool,
    /// Memory for the read, in bytes.
    pub budget: u64,
    /// Enumerated attributes as their values rather than dictionary columns.
    pub enum_values: bool,
}

impl ReadSpec {
    /// The ranges of a Python `subarray`: `{"dim": (lo, hi)}` or
    /// `{"dim": [(lo, hi), ...]}`, or a sequence with one entry per
    /// dimension in schema order (`None` for the whole dimension).
    pub fn ranges_from(
        array: &OpenArray,
        subarray: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(String, Key, Key)>> {
        let mut out = Vec::new();
        let Some(sub) = subarray else { return Ok(out) };
        let dims = &array.schema.dimensions;
        let per_dim: Vec<(String, Bound<'_, PyAny>)> = if let Ok(d) = sub.cast::<PyDict>() {
            d.iter()
                .map(|(k, v)| Ok((k.extract::<String>()?, v)))
                .collect::<PyResult<_>>()?
        } else {
            let items: Vec<Bound<'_, PyAny>> = sub.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() > dims.len() {
                return Err(crate::error::py_msg(format!(
                    "subarray: {} entries for {} dimensions",
                    items.len(),
                    dims.len()
                )));
            }
            dims.iter().map(|d| d.name.clone()).zip(items).collect()
        };
        for (name, ranges) in per_dim {
            if ranges.is_none() {
                continue;
            }
            let d = array.schema.dimension(&name).ok_or_else(|| {
                crate::error::py_msg(format!("subarray: the array has no dimension `{name}`"))
            })?;
            // One (lo, hi) pair, or a list of them.
            let pairs: Vec<Bound<'_, PyAny>> = if is_pair(&ranges) {
                vec![ranges]
            } else {
                ranges.try_iter()?.collect::<PyResult<_>>()?
            };
            for p in pairs {
                let (lo, hi): (Bound<'_, PyAny>, Bound<'_, PyAny>) = p.extract().map_err(|_| {
                    crate::error::py_msg(format!("subarray on `{name}`: expected (lo, hi) pairs"))
                })?;
                out.push((
                    name.clone(),
                    ranges::key(&lo, d.datatype, &name)?,
                    ranges::key(&hi, d.datatype, &name)?,
                ));
            }
        }
        Ok(out)
    }

    /// The query of `array` this asks for.
    fn query<'a>(
        &self,
        storage: &'a dyn Storage,
        array: &'a OpenArray,
    ) -> Result<Query<'a>, QueryError> {
        let mut q = Query::new(storage, array)
            .dimensions(self.dims)
            .enumeration_values(self.enum_values);
        if let Some(a) = &self.attrs {
            q = q.attributes(a.clone());
        }
        for (dim, lo, hi) in &self.ranges {
            q = q.range(dim, lo.clone(), hi.clone());
        }
        if let Some(l) = self.layout {
            q = q.layout(l);
        }
        if let Some(c) = &self.condition {
            q = q.condition(Expr::parse(c, &array.schema)?);
        }
        Ok(q)
    }
}

/// A `(lo, hi)` pair rather than a list of pairs: a tuple or list of two
/// items neither of which is itself a tuple or list.
fn is_pair(v: &Bound<'_, PyAny>) -> bool {
    let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(t) = v.cast::<PyTuple>() {
        Some(t.iter().collect())
    } else if let Ok(l) = v.cast::<PyList>() {
        Some(l.iter().collect())
    } else {
        None
    };
    items.is_some_and(|i| {
        i.len() == 2
            && i.iter()
                .all(|x| x.cast::<PyTuple>().is_err() && x.cast::<PyList>().is_err())
    })
}

/// What the read thread sends: the schema first, then batches.
enum Message {
    Schema(SchemaRef),
    Batch(RecordBatch),
    Failed(String),
}

/// Starts the read of `spec` on its own thread; returns once the result's
/// schema is known (or the read failed before its first batch).
pub fn start(
    storage: Arc<dyn Storage>,
    array: Arc<OpenArray>,
    spec: ReadSpec,
) -> Result<BatchStream, String> {
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("tessera-read".into())
        .spawn(move || {
            let worker = Worker {
                tx: &tx,
                sent_schema: false,
            };
            worker.run(&*storage, &array, &spec);
        })
        .map_err(|e| format!("starting the read thread: {e}"))?;
    match rx.recv() {
        Ok(Message::Schema(schema)) => Ok(BatchStream { schema, rx }),
        Ok(Message::Failed(e)) => Err(e),
        Ok(Message::Batch(_)) | Err(_) => {
            Err("the read thread ended before its first batch".into())
        }
    }
}

/// The read thread's side of the channel.
struct Worker<'a> {
    tx: &'a SyncSender<Message>,
    sent_schema: bool,
}

impl Worker<'_> {
    /// Runs the read, sending every batch; a failure (or a panic, which
    /// would otherwise end the stream as if complete) is sent as an error.
    fn run(mut self, storage: &dyn Storage, array: &OpenArray, spec: &ReadSpec) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.batches(storage, array, spec)
        }));
        let failure = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(e)) => crate::error::message(&e),
            Err(_) => "internal error: the read thread panicked".to_owned(),
        };
        let _ = self.tx.send(Message::Failed(failure));
    }

    fn batches(
        &mut self,
        storage: &dyn Storage,
        array: &OpenArray,
        spec: &ReadSpec,
    ) -> Result<(), QueryError> {
        let query = spec.query(storage, array)?;
        // Keys are put over their enumeration's values; values read as
        // values (`enum_values`) are plain columns.
        let dictionaries = match spec.enum_values {
            true => None,
            false => Some(Dictionaries::new(array, array.enumerations(storage)?)?),
        };
        let convert = |r: tessera::ReadResult| {
            let batch = r.into_record_batch()?;
            match &dictionaries {
                Some(d) => d.apply(batch),
                None => Ok(batch),
            }
        };
        let mut batches = query.clone().batches(spec.budget)?;
        let first = match batches.next() {
            Some(b) => convert(b?)?,
            // No batch at all: the (empty) result's fields all the same.
            None => convert(query.execute()?)?,
        };
        if !self.send(first)? {
            return Ok(());
        }
        for b in batches {
            if !self.send(convert(b?)?)? {
                break;
            }
        }
        Ok(())
    }

    /// Sends a batch (after the schema, first time); `false` once the
    /// reader is gone (Python dropped it: the read stops).
    fn send(&mut self, batch: RecordBatch) -> Result<bool, QueryError> {
        if !self.sent_schema {
            self.sent_schema = true;
            if self.tx.send(Message::Schema(batch.schema())).is_err() {
                return Ok(false);
            }
        }
        Ok(self.tx.send(Message::Batch(batch)).is_ok())
    }
}

/// The reader pyarrow pulls batches from.
pub struct BatchStream {
    schema: SchemaRef,
    rx: Receiver<Message>,
}

impl Iterator for BatchStream {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rx.recv() {
            Ok(Message::Batch(b)) => Some(Ok(b)),
            Ok(Message::Failed(e)) => Some(Err(ArrowError::ExternalError(e.into()))),
            Ok(Message::Schema(_)) => Some(Err(ArrowError::ExternalError(
                "internal error: a second schema".into(),
            ))),
            Err(_) => None,
        }
    }
}

impl RecordBatchReader for BatchStream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
