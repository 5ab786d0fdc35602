//! `cargo xtask write-async URI ARROW_FILE TIMESTAMP`: the cells of an
//! Arrow IPC file written into the array at `URI` (an object store,
//! configured from the environment as the CLI's is) by tessera's
//! asynchronous fragment writer, awaited on a current-thread tokio runtime
//! with no runtime of the storage's own. check-s3-maintained runs it and
//! has TileDB-Py read the array back.

use crate::common::Error;
use std::path::Path;
use std::sync::Arc;
use tessera::object_store::ObjectStorage;
use tessera::write::arrow::columns_from_batch;
use tessera::write::{latest_schema, AsyncFragmentWriter, WriteOptions};

pub fn write_async(args: &[String]) -> Result<(), Error> {
    let [uri, file, timestamp] = args else {
        return Err("usage: cargo xtask write-async URI ARROW_FILE TIMESTAMP".into());
    };
    // Batches read one at a time, as the CLI reads them: the file's cells
    // are not held beside the writer's.
    let batches = arrow_ipc::reader::FileReader::try_new(std::fs::File::open(file)?, None)?;
    let options = WriteOptions {
        timestamp: Some(timestamp.parse()?),
        ..WriteOptions::default()
    };
    let names = on_caller_runtime(uri, |storage| async move {
        let schema = latest_schema(&storage, Path::new(uri), None).await?;
        let shared = Arc::new(storage.clone());
        let mut w = AsyncFragmentWriter::new(shared, uri, schema.clone(), options)?;
        for batch in batches {
            let batch = batch.map_err(|e| tessera_write::WriteError::Input(e.to_string()))?;
            w.write(columns_from_batch(&batch, &schema)?).await?;
        }
        Ok(w.finish().await?)
    })?;
    println!("wrote {}", names.join(", "));
    Ok(())
}

/// What `work` gives, awaited on a current-thread tokio runtime of this
/// call with the object storage of `uri` on it (as an application on its
/// own runtime would hold it); an error if the storage started a runtime
/// of its own, which the awaited paths must not need.
pub fn on_caller_runtime<T, F>(uri: &str, work: impl FnOnce(ObjectStorage) -> F) -> Result<T, Error>
where
    F: std::future::Future<Output = Result<T, Error>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let storage = ObjectStorage::for_uri(uri)?.on_runtime(rt.handle().clone());
    let done = rt.block_on(work(storage.clone()))?;
    if storage.started_own_runtime() {
        return Err("the storage started a runtime of its own".into());
    }
    Ok(done)
}
