//! An awaited read of local files starts no thread: its steps run on
//! rayon's pool and the caller's task only awaits them. (A test binary of
//! its own, so that no other test starts threads meanwhile.)

use futures::StreamExt;
use std::sync::Arc;
use tessera_query::stream::stream_async;
use tessera_query::{ReadRequest, ReadSession};
use tessera_storage::LocalFs;

/// The names of this process's threads.
fn threads() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn an_awaited_local_read_starts_no_thread() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tiledb-0.36.1/sparse_2d/array"
    );
    let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    let request = ReadRequest::new().budget(4 << 10);
    // rayon's pool starts its threads when first used.
    rayon::broadcast(|_| ());
    let before = threads();
    let (cells, during) = futures::executor::block_on(async {
        let mut batches = stream_async(session.clone(), request.clone())
            .await
            .unwrap();
        let mut cells = batches.next().await.unwrap().unwrap().num_rows();
        let during = threads();
        while let Some(b) = batches.next().await {
            cells += b.unwrap().num_rows();
        }
        (cells, during)
    });
    assert_eq!(during, before, "threads while the read was under way");
    let want: usize = session
        .batches(&request)
        .unwrap()
        .map(|b| b.unwrap().cell_count)
        .sum();
    assert!(want > 0);
    assert_eq!(cells, want);
}
