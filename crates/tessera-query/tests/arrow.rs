//! Every fixture read converts to an Arrow RecordBatch holding the same
//! cells: values, nulls, multi-value and var-sized cells.
#![cfg(feature = "arrow")]

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{Column, ReadRequest, ReadSession};
use tessera_storage::LocalFs;

/// The bytes of cell `i` of a primitive, fixed-size-list or list array.
fn cell_bytes(a: &ArrayRef, i: usize) -> Vec<u8> {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes().to_vec(),
        DataType::Binary => a.as_binary::<i32>().value(i).to_vec(),
        DataType::Boolean => vec![a.as_boolean().value(i) as u8],
        DataType::FixedSizeList(..) => raw(&a.as_fixed_size_list().value(i)),
        DataType::List(_) => raw(&a.as_list::<i32>().value(i)),
        _ => raw(&a.slice(i, 1)),
    }
}

/// The value bytes of a primitive or boolean array.
fn raw(a: &ArrayRef) -> Vec<u8> {
    if let DataType::Boolean = a.data_type() {
        return (0..a.len())
            .map(|i| a.as_boolean().value(i) as u8)
            .collect();
    }
    let d = a.to_data();
    let w = d.data_type().primitive_width().unwrap();
    d.buffers()[0].as_slice()[d.offset() * w..(d.offset() + d.len()) * w].to_vec()
}

#[test]
fn every_fixture_converts_cell_for_cell() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut columns = 0;
    let mut problems = Vec::new();
    for version in std::fs::read_dir(&root).unwrap().flatten() {
        if !version.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for case in std::fs::read_dir(version.path()).unwrap().flatten() {
            let Ok(array) =
                OpenArray::open(&LocalFs, &case.path().join("array"), 0, u64::MAX, None)
            else {
                continue;
            };
            let array = Arc::new(array);
            let Ok(r) =
                ReadSession::new(Arc::new(LocalFs), array.clone()).execute(&ReadRequest::new())
            else {
                continue;
            };
            let expect: Vec<Column> = r.columns.clone();
            let rb = match r.into_record_batch() {
                Ok(rb) => rb,
                Err(e) => {
                    problems.push(format!("{}: {e}", case.path().display()));
                    continue;
                }
            };
            for (k, col) in expect.iter().enumerate() {
                columns += 1;
                let a = rb.column(k);
                assert_eq!(rb.schema().field(k).name(), &col.name);
                let n = a.len();
                let bad = (0..n).find(|&i| {
                    a.is_null(i) == col.is_valid(i)
                        || (col.is_valid(i) && cell_bytes(a, i) != col.string_value(i))
                });
                if let Some(i) = bad {
                    problems.push(format!(
                        "{} `{}` ({:?}) cell {i}: {:?} vs {:?}",
                        case.path().display(),
                        col.name,
                        a.data_type(),
                        cell_bytes(a, i),
                        col.string_value(i)
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(columns > 500, "only {columns} columns compared");
}

/// A dense read whose coordinates a grid describes converts to the same
/// record batch (dimension columns built) and announces that schema.
#[test]
fn described_coordinates_convert_as_columns() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1");
    let mut compared = 0;
    for case in std::fs::read_dir(&root).unwrap().flatten() {
        let Ok(array) = OpenArray::open(&LocalFs, &case.path().join("array"), 0, u64::MAX, None)
        else {
            continue;
        };
        if !array.schema.is_dense() {
            continue;
        }
        let array = Arc::new(array);
        let (Ok(plain), Ok(described)) = (
            ReadSession::new(Arc::new(LocalFs), array.clone()).execute(&ReadRequest::new()),
            ReadSession::new(Arc::new(LocalFs), array.clone())
                .execute(&ReadRequest::new().coordinate_grid(true)),
        ) else {
            continue;
        };
        assert!(described.grid.is_some(), "{}", case.path().display());
        assert_eq!(
            described.arrow_schema(),
            plain.arrow_schema(),
            "{}",
            case.path().display()
        );
        assert_eq!(
            described.into_record_batch().unwrap(),
            plain.into_record_batch().unwrap(),
            "{}",
            case.path().display()
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} dense arrays compared");
}
