//! On a pool of one thread, a read decoded on the pool with its needs
//! awaited (as an object store's are) finishes, and reads what the read
//! over storage does: a sparse read's fragments, read side by side where
//! requests cost a round trip, run as jobs of the pool, not on threads of
//! their own waiting for decoding queued behind the pool's one thread.
//! (Its own test binary: the pool is the process's.)

mod common;

use common::{assert_same_outcome, AwaitedLocal};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tessera_query::push::{decoded_on_pool, Convert, PushDecoder};
use tessera_query::{ReadRequest, ReadResult, ReadSession};
use tessera_storage::LocalFs;

#[test]
fn sparse_fragments_read_side_by_side_on_a_pool_of_one_thread() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1");
    for case in ["random_sparse", "consolidated", "sparse_2d"] {
        let path = std::path::Path::new(root).join(case).join("array");
        let session = ReadSession::open(Arc::new(LocalFs), &path, None).unwrap();
        assert!(session.array().fragments.len() > 2, "{case}");
        let request = ReadRequest::new().budget(64 << 10);
        // Every batch read over storage (an error there fails the test).
        let want: Vec<_> = (session.batches(&request).unwrap())
            .map(|b| Ok(b.unwrap()))
            .collect();
        let decoder = PushDecoder::for_array(session.array().clone(), request);
        let convert: Convert<ReadResult> = Arc::new(Ok);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let batches = decoded_on_pool(decoder, Some(Arc::new(AwaitedLocal)), convert);
            let _ = tx.send(futures::executor::block_on(batches.collect::<Vec<_>>()));
        });
        let got = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{case}: the read did not finish in 120 s"));
        assert_eq!(got.len(), want.len(), "{case}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_same_outcome(&format!("{case}: batch {i}"), g, w);
        }
    }
}
