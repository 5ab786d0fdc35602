//! `arrow::array_schema`, computed from the schema alone, is the schema
//! every streamed read of every fixture returns (enumerations as
//! dictionaries, nullable fields, var-sized and multi-value cells).

use std::path::Path;
use std::sync::Arc;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_query::arrow::{array_schema, Dictionaries};
use tessera_query::stream::stream;
use tessera_query::{ReadRequest, ReadSession};
use tessera_tile::storage::LocalFs;

#[test]
fn array_schema_is_what_reads_return() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for release in std::fs::read_dir(&testdata).unwrap().flatten() {
        if !release.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for case in std::fs::read_dir(release.path()).unwrap().flatten() {
            let expected: serde_json::Value =
                serde_json::from_slice(&std::fs::read(case.path().join("expected.json")).unwrap())
                    .unwrap();
            let key = expected["case"]["key"]
                .as_str()
                .map(|k| EncryptionKey::parse(k).unwrap());
            let path = case.path().join("array");
            let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, key).unwrap());
            let dictionaries =
                Dictionaries::new(&array, array.enumerations(&LocalFs).unwrap()).unwrap();
            let want = array_schema(&array, Some(&dictionaries));
            let session = ReadSession::new(Arc::new(LocalFs), array);
            let read = stream(session, ReadRequest::new()).unwrap();
            assert_eq!(*read.schema(), want, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked} arrays");
}
