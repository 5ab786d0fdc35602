//! On a pool of one thread, a read decoded on the pool with its needs
//! awaited (as an object store's are) finishes, and reads what the read
//! over storage does: a sparse read's fragments, read side by side where
//! requests cost a round trip, run as jobs of the pool, not on threads of
//! their own waiting for decoding queued behind the pool's one thread.
//! (Its own test binary: the pool is the process's.)

use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tessera_query::push::{answer, decoded_on_pool, Convert, PushDecoder};
use tessera_query::{ReadRequest, ReadResult, ReadSession};
use tessera_tile::storage::{AnswersFuture, AsyncStorage, LocalFs, Need};

/// Local files answered as an object store answers.
struct AwaitedLocal;

impl AsyncStorage for AwaitedLocal {
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
        Box::pin(async move { answer(&LocalFs, needs) })
    }
}

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
        let want: Vec<ReadResult> = (session.batches(&request).unwrap())
            .map(Result::unwrap)
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
        for (i, (g, w)) in got.into_iter().zip(&want).enumerate() {
            let g = g.unwrap();
            assert_eq!(g.cell_count, w.cell_count, "{case}: batch {i}");
            let same = (g.columns.iter().zip(&w.columns)).all(|(a, b)| {
                (&a.name, &a.data, &a.offsets, &a.validity)
                    == (&b.name, &b.data, &b.offsets, &b.validity)
            });
            assert!(same, "{case}: batch {i}");
        }
    }
}
