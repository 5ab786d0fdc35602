//! A fragment written by awaiting storage, never by blocking a thread:
//! [`AsyncFragmentWriter`] runs the same [`FragmentWriter`] over an
//! [`Outbox`], each step (cells added, the write finished) on rayon's
//! pool while the caller's task awaits it, then carries out the writes
//! the step took down over an [`AsyncWritableStorage`] on the caller's
//! runtime. The bytes written are the synchronous writer's; the commit is
//! put only after every file before it has landed.

use super::{FragmentWriter, WriteOptions};
use crate::carry::Carrier;
use crate::WriteError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_cells::Column;
use tessera_filters::EncryptionKey;
use tessera_schema::ArraySchema;
use tessera_storage::{fetched, AsyncStorage, AsyncWritableStorage, Location, Outbox};

/// Writes one fragment (or several committed together, past a budget) of
/// an array on an [`AsyncWritableStorage`], as [`FragmentWriter`] does on
/// a [`WritableStorage`](tessera_storage::WritableStorage): like arrow-rs
/// parquet's `AsyncArrowWriter`, [`write`](Self::write) batches of cells,
/// then [`finish`](Self::finish).
///
/// Files written in parts are uploaded as their parts fill; a write that
/// fails, or is dropped before it finishes, commits nothing (its uploads
/// aborted where it can still await them), so readers never see it.
///
/// ```
/// use std::sync::Arc;
/// use tessera_cells::Column;
/// use tessera_schema::json::schema_from_json;
/// use tessera_storage::LocalFs;
/// use tessera_write::{create_array, AsyncFragmentWriter, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-async-{}", std::process::id()));
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "sparse",
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
///     "attributes": [{"name": "v", "type": "INT32"}],
/// })).unwrap();
/// create_array(&dir, &doc, None, None).unwrap();
/// let column = |name: &str, t, data: Vec<u8>| Column {
///     name: name.into(), is_dimension: name == "x", datatype: t,
///     cell_val_num: tessera_schema::CellValNum::Fixed(1), data, offsets: None, validity: None,
/// };
/// let names = block_on(async {
///     let schema = tessera_write::latest_schema(&Local, &dir, None).await?;
///     let mut w = AsyncFragmentWriter::new(Arc::new(LocalFs), &dir, schema, WriteOptions::default())?;
///     w.write(vec![
///         column("x", tessera_tile::Datatype::Int64, [7i64, 3].iter().flat_map(|v| v.to_le_bytes()).collect()),
///         column("v", tessera_tile::Datatype::Int32, [70i32, 30].iter().flat_map(|v| v.to_le_bytes()).collect()),
///     ]).await?;
///     w.finish().await
/// }).unwrap();
/// let array = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert_eq!(array.fragments.len(), 1);
/// assert_eq!(names.len(), 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// // Local files answered as an asynchronous storage would (an object
/// // store's `tessera_object_store::ObjectStorage` is one).
/// struct Local;
/// impl tessera_storage::AsyncStorage for Local {
///     fn answer(&self, needs: Vec<tessera_storage::Need>) -> tessera_storage::AnswersFuture {
///         Box::pin(std::future::ready(tessera_storage::answer(&LocalFs, needs)))
///     }
/// }
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
/// #             return v;
/// #         }
/// #         std::thread::yield_now();
/// #     }
/// # }
/// ```
pub struct AsyncFragmentWriter {
    on_store: OnStore<FragmentWriter>,
}

impl AsyncFragmentWriter {
    /// A writer of a new fragment of the array at `array` in `storage`,
    /// whose latest schema is `schema` ([`latest_schema`] reads it).
    pub fn new(
        storage: Arc<dyn AsyncWritableStorage>,
        array: impl Into<PathBuf>,
        schema: Arc<ArraySchema>,
        options: WriteOptions,
    ) -> Result<AsyncFragmentWriter, WriteError> {
        let on_store = OnStore::new(storage, array.into(), |at| {
            FragmentWriter::with_schema(at, schema, options)
        })?;
        Ok(AsyncFragmentWriter { on_store })
    }

    /// Adds cells, as [`FragmentWriter::write_owned`]; files the cells
    /// complete (past the budget) are uploaded before it returns.
    pub async fn write(&mut self, columns: Vec<Column>) -> Result<(), WriteError> {
        self.on_store.step(move |w| w.write_owned(columns)).await
    }

    /// Writes a dense box of cells given without coordinates, as
    /// [`FragmentWriter::write_box`] (`bounds`: each dimension's first
    /// and last coordinate).
    pub async fn write_box(
        &mut self,
        bounds: Vec<(i128, i128)>,
        columns: Vec<Column>,
    ) -> Result<(), WriteError> {
        self.on_store
            .step(move |w| w.write_box(&bounds, columns))
            .await
    }

    /// Writes the cells held and commits the write once every file of it
    /// has landed; returns the names of its fragments (see
    /// [`FragmentWriter::finish`]).
    pub async fn finish(self) -> Result<Vec<String>, WriteError> {
        self.on_store.finish(FragmentWriter::finish).await
    }
}

/// A writer over an [`Outbox`] (a [`FragmentWriter`], or one built on it)
/// whose steps run on rayon's pool, each followed by carrying out the
/// writes it took down over an [`AsyncWritableStorage`].
pub(crate) struct OnStore<W> {
    array: PathBuf,
    /// The writer, away on the pool while a step runs.
    writer: Option<W>,
    outbox: Outbox,
    carrier: Carrier,
}

impl<W: Send + 'static> OnStore<W> {
    /// The writer `make` builds over an outbox for the array at `array`,
    /// whose writes go to `storage`.
    pub(crate) fn new(
        storage: Arc<dyn AsyncWritableStorage>,
        array: PathBuf,
        make: impl FnOnce(Location) -> Result<W, WriteError>,
    ) -> Result<OnStore<W>, WriteError> {
        let outbox = Outbox::default();
        let at = Location::new(Arc::new(outbox.clone()), &array);
        Ok(OnStore {
            array,
            writer: Some(make(at)?),
            outbox,
            carrier: Carrier::new(storage),
        })
    }

    /// Runs `work` on the writer on rayon's pool, then carries out the
    /// writes it took down.
    pub(crate) async fn step<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut W) -> Result<T, WriteError> + Send + 'static,
    ) -> Result<T, WriteError> {
        let writer = self.writer.take().ok_or_else(finished)?;
        let (writer, done) = on_pool(move || {
            let mut writer = writer;
            let done = work(&mut writer);
            (writer, done)
        })
        .await?;
        self.writer = Some(writer);
        let carried = self.carry().await;
        done.and_then(|got| carried.map(|()| got))
    }

    /// Finishes the writer with `finish` on the pool (which writes the
    /// cells held and the commit) and carries out its writes, the commit
    /// after every file before it has landed; returns the fragments'
    /// names.
    pub(crate) async fn finish(
        mut self,
        finish: impl FnOnce(W) -> Result<Vec<String>, WriteError> + Send + 'static,
    ) -> Result<Vec<String>, WriteError> {
        let writer = self.writer.take().ok_or_else(finished)?;
        // A failure drops the fragments' folders, which takes their
        // removal down: carried out below like the rest.
        let names = on_pool(move || finish(writer)).await?;
        let carried = self.carry().await;
        let names = names?;
        if let Err(e) = carried {
            // As the synchronous writer does when its commit fails: the
            // fragments' folders go (a commit that did land was answered:
            // a conditional put sent again finds its own file).
            let folders = names.iter().map(|n| self.array.join("__fragments").join(n));
            self.carrier.remove_folders(folders.collect()).await;
            return Err(e);
        }
        Ok(names)
    }

    /// Carries out what the last step took down; on a failure, gives up
    /// the uploads under way.
    async fn carry(&mut self) -> Result<(), WriteError> {
        let ops = self.outbox.take();
        self.carrier.carry_or_give_up(ops).await?;
        Ok(())
    }
}

/// The error of a writer used after it finished or failed mid-step.
fn finished() -> WriteError {
    WriteError::Input("the fragment writer has finished (or failed during a step)".into())
}

/// Runs `work` on rayon's pool; the caller's task awaits it, no thread
/// waits. A panic in it is an error, not the caller's panic.
pub(crate) async fn on_pool<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WriteError> {
    let (tx, rx) = futures_channel::oneshot::channel();
    rayon::spawn(move || {
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = tx.send(got);
    });
    match rx.await {
        Ok(Ok(got)) => Ok(got),
        _ => Err(WriteError::Input(
            "the write panicked on rayon's pool".into(),
        )),
    }
}

/// The latest schema of the array at `array`, read from an asynchronous
/// storage (its schema listing and the schema's files, awaited), with
/// `key` for an encrypted array: what [`AsyncFragmentWriter::new`] takes.
pub async fn latest_schema(
    storage: &dyn AsyncStorage,
    array: &Path,
    key: Option<EncryptionKey>,
) -> Result<Arc<ArraySchema>, WriteError> {
    let loaded = fetched(storage, |s| -> Result<ArraySchema, WriteError> {
        let files = tessera_schema::list_schemas(s, array).map_err(WriteError::read(array))?;
        let newest = tessera_schema::schema_at(&files, u64::MAX)
            .ok_or_else(|| WriteError::refused(array, "no array schema"))?;
        tessera_schema::load_schema(s, array, newest, key.as_ref()).map_err(WriteError::read(array))
    })
    .await
    .map_err(WriteError::read(array))?;
    Ok(Arc::new(loaded?))
}
