//! Tiles whose chunks decode in parallel, read by picking cells in every
//! tile: a rayon thread waiting for the chunks of one tile runs other jobs
//! of the same read meanwhile, other tiles' among them, which must not take
//! the buffers or locks of the job that waits. With four threads, reading
//! the `sparse_big_tiles` fixture panicked ("RefCell already borrowed") in
//! about half the runs before the picking read's scratch buffers allowed it.

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession, Value};
use tessera_storage::LocalFs;

#[test]
fn picking_reads_of_large_tiles_survive_nested_jobs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/sparse_big_tiles/array");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    for round in 0..30 {
        let cells = pool.install(|| {
            let a = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, None).unwrap());
            let r = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&ReadRequest::new().range("y", Value::Int(499), Value::Int(500)))
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let int = |c: usize, i: usize| -> i64 {
                let v = r.columns[c].value(i);
                match v.len() {
                    8 => i64::from_le_bytes(v.try_into().unwrap()),
                    _ => i32::from_le_bytes(v.try_into().unwrap()) as i64,
                }
            };
            // Written as a = x * 1000 + y, two cells in each of 400 rows.
            let mut seen: Vec<(i64, i64)> = (0..r.cell_count)
                .map(|i| {
                    let (x, y, v) = (int(0, i), int(1, i), int(2, i));
                    assert_eq!(v, x * 1000 + y, "round {round}: cell ({x}, {y})");
                    (x, y)
                })
                .collect();
            seen.sort_unstable();
            seen
        });
        let want: Vec<(i64, i64)> = (0..400).flat_map(|x| [(x, 499), (x, 500)]).collect();
        assert_eq!(cells, want, "round {round}");
    }
}
