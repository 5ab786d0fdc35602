//! libtiledb stores a Hilbert-ordered fragment in Hilbert order: our Hilbert
//! values must be non-decreasing along every fixture fragment's cells, and a
//! global-order read must return them in that same order.

use std::path::Path;
use std::sync::Arc;
use tessera_cells::hilbert;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession};
use tessera_storage::LocalFs;
use tessera_tile::Layout;

#[test]
fn stored_order_is_our_hilbert_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for version in std::fs::read_dir(&root).unwrap().flatten() {
        let array = version.path().join("sparse_hilbert/array");
        if !array.exists() {
            continue;
        }
        let a = Arc::new(OpenArray::open(&LocalFs, &array, 0, u64::MAX, None).unwrap());
        assert_eq!(a.schema.cell_order, Layout::Hilbert);
        assert_eq!(
            a.fragments.len(),
            1,
            "one fragment: reads keep its stored order"
        );
        let dims = &a.schema.dimensions;
        let h = hilbert::Mapping::new(dims);
        // Unordered reads of a single fragment come in stored order.
        let stored = ReadSession::new(Arc::new(LocalFs), a.clone())
            .execute(&ReadRequest::new().layout(Layout::Unordered))
            .unwrap();
        let global = ReadSession::new(Arc::new(LocalFs), a.clone())
            .execute(&ReadRequest::new().layout(Layout::GlobalOrder))
            .unwrap();
        let key = |i: usize| h.value(dims, |j| stored.columns[j].value(i));
        let keys: Vec<u64> = (0..stored.cell_count).map(key).collect();
        assert!(keys.len() > 100);
        assert!(
            keys.windows(2).all(|w| w[0] <= w[1]),
            "{}: stored cells are not in our Hilbert order",
            version.path().display()
        );
        assert!(keys.windows(2).any(|w| w[0] < w[1]));
        for c in 0..stored.columns.len() {
            assert_eq!(stored.columns[c].data, global.columns[c].data);
        }
        checked += 1;
    }
    assert!(checked >= 3, "{checked} fixtures");
}
