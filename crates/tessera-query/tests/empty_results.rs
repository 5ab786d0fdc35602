//! A read that rules out every cell is a result like any other: no cell,
//! the read's output schema, through every way of reading. For every
//! fixture array of every release, a condition above the greatest value
//! of an attribute (sparse arrays: the cells are filtered by it) or a
//! prune condition above the greatest value of an integer attribute
//! (dense arrays: every tile is left unread by its metadata) reads no cell
//! in one batch, in batches, streamed on a thread and awaited on rayon's
//! pool, from the push decoder, and as aggregates; so does a read of an
//! array with no cell. Read in batches, each gives at least one batch.

mod common;

use common::{fixture_arrays, local};
use futures::StreamExt;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::arrow::output_schema;
use tessera_query::push::PushDecoder;
use tessera_query::stream::{stream, stream_async};
use tessera_query::{Aggregate, AggregateValue, CompareOp, Expr, ReadRequest, ReadResult, Value};
use tessera_schema::CellValNum;
use tessera_storage::LocalFs;
use tessera_tile::datatype::Physical;

/// The first single-valued number attribute of `array` (integers only
/// where `integers`), and the bytes of its greatest valid value in `whole`.
fn greatest_of(array: &OpenArray, whole: &ReadResult, integers: bool) -> Option<(String, Vec<u8>)> {
    let column = whole.columns.iter().find(|c| {
        let number = match c.datatype.physical() {
            Physical::Int(_) | Physical::UInt(_) => true,
            Physical::Float(_) => !integers,
            Physical::Bytes => false,
        };
        !c.is_dimension
            && number
            && c.cell_val_num == CellValNum::Fixed(1)
            && array
                .schema
                .attribute(&c.name)
                .is_some_and(|a| a.enumeration.is_none())
    })?;
    let greatest = (0..whole.cell_count)
        .filter(|&i| column.is_valid(i))
        .map(|i| column.value(i))
        .filter(|v| !matches!(Value::decode(column.datatype, v), Value::Float(f) if f.is_nan()))
        .max_by(|a, b| {
            let (a, b) = (
                Value::decode(column.datatype, a),
                Value::decode(column.datatype, b),
            );
            a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)
        })?;
    Some((column.name.clone(), greatest.to_vec()))
}

/// The request of `array` that rules out every cell, if it has a field to
/// rule them out by, and the condition it rules them out with.
fn ruling_out_every_cell(array: &OpenArray, whole: &ReadResult) -> Option<(ReadRequest, Expr)> {
    let dense = array.schema.is_dense();
    // Dense reads prune tiles but return every cell of those they read;
    // deletes and updates have them read as usual.
    if dense && !array.delete_conditions.is_empty() {
        return None;
    }
    let (field, greatest) = greatest_of(array, whole, dense)?;
    let above = Expr::Compare {
        field,
        op: CompareOp::Gt,
        values: vec![greatest],
    };
    let request = ReadRequest::new().budget(64 << 10);
    let request = match dense {
        true => request.prune(above.clone()),
        false => request.condition(above.clone()),
    };
    Some((request, above))
}

/// Fails with `what` unless every read of `request` of `array` is empty
/// with the read's output schema, in at least one batch, and aggregates
/// under `condition` (the cells a prune leaves to its caller to filter)
/// count none.
fn assert_empty(
    what: &str,
    path: &std::path::Path,
    array: &Arc<OpenArray>,
    request: &ReadRequest,
    condition: Option<Expr>,
) {
    let enumerations = array.enumerations(&LocalFs).unwrap();
    let schema = output_schema(array, request, enumerations).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();

    let one = local(array).execute(request).unwrap();
    assert_eq!(one.cell_count, 0, "{what}: in one batch");
    let columns: Vec<&str> = one.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, names, "{what}: in one batch");

    let batches: Vec<ReadResult> = local(array)
        .batches(request)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        !batches.is_empty() && batches.iter().all(|b| b.cell_count == 0),
        "{what}: in batches"
    );

    let streamed = stream(local(array), request.clone()).unwrap();
    assert_eq!(*streamed.schema(), schema, "{what}: streamed");
    let rows: Vec<usize> = streamed.map(|b| b.unwrap().num_rows()).collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|&n| n == 0),
        "{what}: streamed"
    );

    futures::executor::block_on(async {
        let awaited = stream_async(local(array), request.clone()).await.unwrap();
        assert_eq!(*awaited.schema(), schema, "{what}: awaited");
        let batches: Vec<_> = awaited.collect().await;
        assert!(
            !batches.is_empty() && batches.iter().all(|b| b.as_ref().unwrap().num_rows() == 0),
            "{what}: awaited"
        );
    });

    let pushed = PushDecoder::new(path, None, request.clone()).read_from(&LocalFs);
    for b in pushed {
        assert_eq!(b.unwrap().cell_count, 0, "{what}: pushed");
    }

    let Some(condition) = condition else {
        let got = local(array)
            .aggregate(request, &[Aggregate::Count])
            .unwrap();
        assert!(
            matches!(got.values[..], [AggregateValue::UInt(0)]),
            "{what}"
        );
        return;
    };
    let mut fields = Vec::new();
    condition.fields(&mut fields);
    let aggregates = [Aggregate::Count, Aggregate::Min(fields.remove(0))];
    let request = ReadRequest::new().condition(condition);
    let got = local(array).aggregate(&request, &aggregates).unwrap();
    assert!(
        matches!(
            got.values[..],
            [AggregateValue::UInt(0), AggregateValue::Null]
        ),
        "{what}: {:?}",
        got.values
    );
}

#[test]
fn reads_that_rule_out_every_cell_are_empty_with_their_schema() {
    let (mut sparse, mut dense, mut nothing_written) = (0, 0, 0);
    for (path, array) in fixture_arrays() {
        let what = path.display().to_string();
        if what.contains("_large") {
            continue; // hundreds of batches; the same code as the rest
        }
        let whole = local(&array).execute(&ReadRequest::new()).unwrap();
        if whole.cell_count == 0 {
            // Arrays with no cell: a read of everything is empty too.
            let request = ReadRequest::new().budget(64 << 10);
            assert_empty(&what, &path, &array, &request, None);
            nothing_written += 1;
            continue;
        }
        let Some((request, condition)) = ruling_out_every_cell(&array, &whole) else {
            continue;
        };
        // Tiles whose metadata cannot rule them out (no min and max kept,
        // as for WebP-filtered tiles) are read: the read is not empty.
        if array.schema.is_dense() && local(&array).execute(&request).unwrap().cell_count > 0 {
            continue;
        }
        assert_empty(&what, &path, &array, &request, Some(condition));
        match array.schema.is_dense() {
            true => dense += 1,
            false => sparse += 1,
        }
    }
    assert!(
        sparse > 50 && dense > 20 && nothing_written > 0,
        "{sparse} sparse, {dense} dense and {nothing_written} empty arrays read"
    );
    println!("{sparse} sparse, {dense} dense and {nothing_written} empty arrays read");
}

/// A request naming a field the array lacks, or comparing a field with a
/// value that is not of its width, fails as the read is built, naming the
/// field, on every way of reading.
#[test]
fn ill_formed_requests_fail_as_the_read_is_built() {
    use tessera_query::QueryError;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tiledb-0.36.1/sparse_2d/array"
    );
    let array = Arc::new(OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap());
    let compare = |field: &str, value: Vec<u8>| Expr::Compare {
        field: field.into(),
        op: CompareOp::Lt,
        values: vec![value],
    };
    let cases = [
        (
            "unknown field",
            ReadRequest::new().condition(compare("nope", vec![0; 4])),
            "nope",
        ),
        (
            "wide value",
            ReadRequest::new().condition(compare("i", vec![0; 8])),
            "i",
        ),
        (
            "narrow value",
            ReadRequest::new().prune(compare("f", vec![0; 4])),
            "f",
        ),
        (
            "string range",
            ReadRequest::new().range("y", Value::Bytes(b"a".to_vec()), Value::Int(3)),
            "y",
        ),
    ];
    for (what, request, field) in cases {
        let named = |e: QueryError| match e {
            QueryError::UnknownField { name, .. } => name == field,
            QueryError::IllTyped { field: f, .. } => f == field,
            _ => false,
        };
        let enumerations = array.enumerations(&LocalFs).unwrap();
        assert!(
            named(output_schema(&array, &request, enumerations).unwrap_err()),
            "{what}"
        );
        assert!(
            named(local(&array).batches(&request).err().unwrap()),
            "{what}"
        );
        assert!(
            named(local(&array).execute(&request).unwrap_err()),
            "{what}"
        );
        assert!(
            named(stream(local(&array), request.clone()).err().unwrap()),
            "{what}"
        );
        let awaited = futures::executor::block_on(stream_async(local(&array), request.clone()));
        assert!(named(awaited.err().unwrap()), "{what}");
        let aggregated = local(&array).aggregate(&request, &[Aggregate::Count]);
        assert!(named(aggregated.unwrap_err()), "{what}");
        let mut pushed = PushDecoder::new(path.as_ref(), None, request.clone()).read_from(&LocalFs);
        assert!(named(pushed.next().unwrap().unwrap_err()), "{what}");
    }
}
