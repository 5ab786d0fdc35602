//! Errors callers match on are typed: an unknown attribute, dimension or
//! condition field, a range outside the domain, and a missing or wrong key.

use std::sync::Arc;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_query::{Expr, QueryError, ReadRequest, ReadSession, Value};
use tessera_storage::LocalFs;

fn fixture(case: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1")
        .join(case)
        .join("array")
}

#[test]
fn unknown_fields_and_ranges_outside_the_domain_are_typed() {
    let a =
        Arc::new(OpenArray::open(&LocalFs, &fixture("dense_2d_types"), 0, u64::MAX, None).unwrap());
    let e = ReadSession::new(Arc::new(LocalFs), a.clone())
        .execute(&ReadRequest::new().attributes(["nope"]))
        .unwrap_err();
    assert!(
        matches!(&e, QueryError::UnknownField { kind: "attribute", name } if name == "nope"),
        "{e:?}"
    );
    let e = ReadSession::new(Arc::new(LocalFs), a.clone())
        .execute(&ReadRequest::new().range("z", Value::Int(0), Value::Int(1)))
        .unwrap_err();
    assert!(matches!(&e, QueryError::UnknownField { kind: "dimension", name } if name == "z"));
    let e = ReadSession::new(Arc::new(LocalFs), a.clone())
        .execute(&ReadRequest::new().range("r", Value::Int(0), Value::Int(100)))
        .unwrap_err();
    match e {
        QueryError::OutOfDomain {
            dimension,
            hi,
            domain_hi,
            ..
        } => assert_eq!((dimension.as_str(), hi, domain_hi), ("r", 100, 5)),
        e => panic!("{e:?}"),
    }
    let e = QueryError::from(Expr::parse("nope > 1", &a.schema).unwrap_err());
    assert!(
        matches!(&e, QueryError::UnknownField { kind: "field", .. }),
        "{e:?}"
    );
    assert!(!e.is_key_problem());
}

#[test]
fn a_missing_or_wrong_key_is_a_key_problem() {
    let path = fixture("encrypted");
    let none = OpenArray::open(&LocalFs, &path, 0, u64::MAX, None).unwrap_err();
    assert!(none.is_key_problem(), "{none}");
    let wrong = EncryptionKey::new([7; 32]);
    let e = OpenArray::open(&LocalFs, &path, 0, u64::MAX, Some(wrong)).unwrap_err();
    assert!(e.is_key_problem(), "{e}");
    let right = EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");
    let a = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, Some(right)).unwrap());
    assert!(
        ReadSession::new(Arc::new(LocalFs), a.clone())
            .execute(&ReadRequest::new())
            .unwrap()
            .cell_count
            > 0
    );
}
