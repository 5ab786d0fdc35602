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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let storage = ObjectStorage::for_uri(uri)?.on_runtime(rt.handle().clone());
    let names = rt.block_on(async {
        let schema = latest_schema(&storage, Path::new(uri), None).await?;
        let shared = Arc::new(storage.clone());
        let mut w = AsyncFragmentWriter::new(shared, uri, schema.clone(), options)?;
        for batch in batches {
            let batch = batch.map_err(|e| tessera_write::WriteError::Input(e.to_string()))?;
            w.write(columns_from_batch(&batch, &schema)?).await?;
        }
        w.finish().await
    })?;
    if storage.started_own_runtime() {
        return Err("the storage started a runtime of its own".into());
    }
    println!("wrote {}", names.join(", "));
    Ok(())
}
