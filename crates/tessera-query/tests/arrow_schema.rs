//! `arrow::array_schema`, computed from the schema alone, is the schema
//! every streamed read of every fixture returns (enumerations as
//! dictionaries, nullable fields, var-sized and multi-value cells).

use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_query::arrow::{array_schema, output_schema, Dictionaries};
use tessera_query::stream::{stream, stream_async};
use tessera_query::{ReadRequest, ReadSession, Value};
use tessera_storage::LocalFs;

/// Every fixture array of every release, with its encryption key.
fn fixtures() -> Vec<(PathBuf, Option<EncryptionKey>)> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
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
            out.push((case.path().join("array"), key));
        }
    }
    out
}

#[test]
fn array_schema_is_what_reads_return() {
    let mut checked = 0;
    for (path, key) in fixtures() {
        let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, key).unwrap());
        let dictionaries =
            Dictionaries::new(&array, array.enumerations(&LocalFs).unwrap()).unwrap();
        let want = array_schema(&array, Some(&dictionaries));
        let session = ReadSession::new(Arc::new(LocalFs), array);
        let read = stream(session, ReadRequest::new()).unwrap();
        assert_eq!(*read.schema(), want, "{}", path.display());
        checked += 1;
    }
    assert!(checked > 300, "{checked} arrays");
}

/// The requests each fixture is read with: the defaults, no dimensions,
/// the last dimension alone, attributes chosen and reordered, enumerations as values, every
/// version, and deleted versions with their marks.
fn requests(array: &OpenArray) -> Vec<ReadRequest> {
    let names: Vec<String> = array
        .schema
        .attributes
        .iter()
        .map(|a| a.name.clone())
        .collect();
    let mut reversed = names.clone();
    reversed.reverse();
    vec![
        ReadRequest::new(),
        ReadRequest::new().dimensions(false),
        ReadRequest::new().dimension_names(array.schema.dimensions.last().map(|d| d.name.clone())),
        ReadRequest::new().attributes(reversed),
        ReadRequest::new().attributes(names.into_iter().take(1)),
        ReadRequest::new().enumeration_values(true),
        ReadRequest::new().versions(true),
        ReadRequest::new().versions(true).delete_metadata(true),
    ]
}

/// `output_schema`, from the schema alone, is the schema of every batch
/// of every read of every fixture, for requests of every shape; a sparse
/// array opened before its first write reads as no cell, with the same
/// schema.
#[test]
fn output_schema_is_what_every_read_returns() {
    let mut checked = 0;
    for (path, key) in fixtures() {
        let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, key).unwrap());
        let enumerations = array.enumerations(&LocalFs).unwrap().to_vec();
        for request in requests(&array) {
            let want = output_schema(&array, &request, &enumerations).unwrap();
            let session = ReadSession::new(Arc::new(LocalFs), array.clone());
            let read = stream(session, request.clone().budget(1 << 20)).unwrap();
            assert_eq!(*read.schema(), want, "{} {request:?}", path.display());
            for batch in read {
                let batch = batch.unwrap_or_else(|e| panic!("{} {request:?}: {e}", path.display()));
                assert_eq!(*batch.schema(), want, "{} {request:?}", path.display());
            }
            checked += 1;
        }
        if !array.schema.is_dense() {
            let before = Arc::new(OpenArray::open(&LocalFs, &path, 0, 0, key).unwrap());
            let request = ReadRequest::new();
            let want = output_schema(&before, &request, &enumerations).unwrap();
            let read = stream(ReadSession::new(Arc::new(LocalFs), before), request).unwrap();
            assert_eq!(
                *read.schema(),
                want,
                "{} before its first write",
                path.display()
            );
            let cells: usize = read.map(|b| b.unwrap().num_rows()).sum();
            assert_eq!(cells, 0, "{}", path.display());
        }
    }
    assert!(checked > 2000, "{checked} reads");
}

/// Awaited as a [`futures::Stream`] (`stream_async`), the read of every
/// fixture returns the batches the iterator does, for requests of two
/// shapes, in batches of at most 256 KiB.
#[test]
fn awaited_batches_are_the_iterated_ones() {
    let mut reads = 0;
    for (path, key) in fixtures() {
        let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, key).unwrap());
        for request in requests(&array).into_iter().take(2) {
            let request = request.budget(256 << 10);
            let session = || ReadSession::new(Arc::new(LocalFs), array.clone());
            let read = stream(session(), request.clone()).unwrap();
            let want: Vec<_> = read.map(Result::unwrap).collect();
            let got: Vec<_> = futures::executor::block_on(async {
                let read = stream_async(session(), request.clone()).await.unwrap();
                read.map(Result::unwrap).collect().await
            });
            assert_eq!(got, want, "{} {request:?}", path.display());
            reads += 1;
        }
    }
    assert!(reads > 500, "{reads} reads");
}

/// A request naming a field the array lacks fails as the read is built,
/// naming it, before any batch: an attribute, a dimension, a condition's
/// field.
#[test]
fn unknown_fields_fail_when_the_read_is_built() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array");
    let session = ReadSession::open(Arc::new(LocalFs), &path, None).unwrap();
    let schema = session.array().schema.clone();
    let other = OpenArray::open(
        &LocalFs,
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/dense_2d_types/array"),
        0,
        u64::MAX,
        None,
    )
    .unwrap();
    let foreign = tessera_query::Expr::parse("f64 > 1.0", &other.schema).unwrap();
    for (request, name) in [
        (ReadRequest::new().attributes(["nope"]), "attribute `nope`"),
        (
            ReadRequest::new().range("z", Value::Int(0), Value::Int(1)),
            "dimension `z`",
        ),
        (ReadRequest::new().condition(foreign.clone()), "field `f64`"),
        (ReadRequest::new().prune(foreign), "field `f64`"),
    ] {
        let e = request.check(&schema).unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
        assert_eq!(session.batches(&request).err().unwrap().to_string(), e);
        assert_eq!(
            session.aggregate(&request, &[]).err().unwrap().to_string(),
            e
        );
        assert_eq!(
            stream(session.clone(), request).err().unwrap().to_string(),
            e
        );
    }
}

/// A dense array's enumerated attributes whose fill is no key (255 over
/// a few colours, -128 over a few sizes): a condition leaves cells at the
/// fill, which read as nulls, so their dictionary columns are nullable in
/// the output schema and in every batch, with nulls or without.
#[test]
fn enumerated_fills_read_as_nulls_in_every_batch() {
    let mut checked = 0;
    for (path, key) in fixtures() {
        if !path.parent().unwrap().ends_with("enumerations") {
            continue;
        }
        let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, key).unwrap());
        let enumerations = array.enumerations(&LocalFs).unwrap().to_vec();
        for condition in ["d > 2", "d >= 0"] {
            let expr = tessera_query::Expr::parse(condition, &array.schema).unwrap();
            let request = ReadRequest::new().condition(expr).budget(64);
            let want = output_schema(&array, &request, &enumerations).unwrap();
            for name in ["c", "s"] {
                assert!(want.field_with_name(name).unwrap().is_nullable(), "{name}");
            }
            let session = ReadSession::new(Arc::new(LocalFs), array.clone());
            let mut nulls = 0;
            for batch in stream(session, request).unwrap() {
                let batch = batch.unwrap();
                assert_eq!(*batch.schema(), want, "{} {condition}", path.display());
                nulls += batch.column_by_name("c").unwrap().null_count();
            }
            assert_eq!(nulls > 0, condition == "d > 2", "{condition}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "{checked} reads");
}
