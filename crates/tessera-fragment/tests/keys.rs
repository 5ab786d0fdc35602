//! An encryption key never reaches `Debug` output: an array opened with
//! one prints it redacted.

use std::path::PathBuf;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_storage::LocalFs;

#[test]
fn an_open_arrays_debug_output_hides_its_key() {
    let array = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/encrypted/array");
    let bytes = *b"0123456789abcdeF0123456789abcdeF";
    let a = OpenArray::open(
        &LocalFs,
        &array,
        0,
        u64::MAX,
        Some(EncryptionKey::new(bytes)),
    )
    .unwrap();
    assert!(!a.fragments.is_empty(), "the key opened the array");
    assert_eq!(format!("{:?}", a.key), "Some(EncryptionKey(<redacted>))");
    let shown = format!("{a:?} {:?} {:?}", a.key, a.fragments);
    // Neither as text nor as the numbers a derived Debug of the bytes shows.
    assert!(!shown.contains("0123456789abcdeF"));
    let as_numbers = format!("{:?}", &bytes[..4]);
    assert!(
        !shown.contains(&as_numbers[1..as_numbers.len() - 1]),
        "{shown}"
    );
}
