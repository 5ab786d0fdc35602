//! Cells from Arrow record batches: the inverse of
//! `ReadResult::into_record_batch`, so that a read written as Arrow IPC or
//! Parquet writes back as it was. Columns are matched to the schema's
//! fields by name and taken by the field's TileDB type: numbers from
//! primitive arrays (byte for byte), BOOL from booleans, text and bytes from
//! string or binary arrays (fixed-sized cells padded with NUL bytes),
//! several values a cell from fixed-size lists, var-sized numbers from
//! lists; nulls from the validity bitmap; dictionary arrays give their keys.

use crate::WriteError;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use tessera_cells::Column;
use tessera_schema::{ArraySchema, CellValNum};
use tessera_tile::Datatype;

/// The columns of `batch`, one per dimension and attribute of `schema` it
/// holds (by name).
pub fn columns_from_batch(
    batch: &RecordBatch,
    schema: &ArraySchema,
) -> Result<Vec<Column>, WriteError> {
    let fields = schema
        .dimensions
        .iter()
        .map(|d| (&d.name, d.datatype, d.cell_val_num, true))
        .chain(
            schema
                .attributes
                .iter()
                .map(|a| (&a.name, a.datatype, a.cell_val_num, false)),
        );
    let mut out = Vec::new();
    for (name, t, cvn, is_dimension) in fields {
        let Some(array) = batch.column_by_name(name) else {
            continue;
        };
        let at = |why: String| WriteError::Input(format!("column `{name}`: {why}"));
        let (data, offsets) = cells(array, t, cvn).map_err(at)?;
        let validity = array
            .nulls()
            .map(|n| (0..array.len()).map(|i| n.is_valid(i) as u8).collect());
        out.push(Column {
            name: name.clone(),
            is_dimension,
            datatype: t,
            cell_val_num: cvn,
            data,
            offsets,
            validity,
        });
    }
    if let Some(f) = batch
        .schema()
        .fields()
        .iter()
        .find(|f| !out.iter().any(|c| &c.name == f.name()))
    {
        return Err(WriteError::Input(format!(
            "column `{}`: no such field in the schema",
            f.name()
        )));
    }
    Ok(out)
}

/// The bytes of every cell of `array` as values of `t`, and for var-sized
/// fields their offsets (a final end offset included).
fn cells(
    array: &ArrayRef,
    t: Datatype,
    cvn: CellValNum,
) -> Result<(Vec<u8>, Option<Vec<u64>>), String> {
    if let DataType::Dictionary(_, _) = array.data_type() {
        let keys = array.as_any_dictionary().keys();
        return cells(&keys.slice(0, keys.len()), t, cvn);
    }
    if t.is_string() || t.is_blob() || t == Datatype::Any {
        let values: Vec<&[u8]> = byte_cells(array)?;
        return Ok(match cvn {
            CellValNum::Var => pack(values),
            CellValNum::Fixed(n) => {
                let size = n as usize * t.size() as usize;
                let mut data = Vec::with_capacity(values.len() * size);
                for v in values {
                    if v.len() > size {
                        return Err(format!(
                            "a value of {} bytes does not fit a cell of {size}",
                            v.len()
                        ));
                    }
                    data.extend_from_slice(v);
                    data.resize(data.len() + size - v.len(), 0);
                }
                (data, None)
            }
        });
    }
    match (array.data_type(), cvn) {
        (DataType::Boolean, CellValNum::Fixed(1)) if t == Datatype::Bool => Ok((
            array
                .as_boolean()
                .iter()
                .map(|b| b.unwrap_or(false) as u8)
                .collect(),
            None,
        )),
        (DataType::FixedSizeList(_, n), CellValNum::Fixed(k)) if *n as u32 == k => {
            let list = array.as_fixed_size_list();
            let child = list
                .values()
                .slice(list.value_offset(0) as usize, list.len() * k as usize);
            Ok((primitive_bytes(&child, t)?, None))
        }
        (DataType::List(_), CellValNum::Var) => {
            let list = array.as_list::<i32>();
            let offsets: Vec<i64> = list.value_offsets().iter().map(|&o| o as i64).collect();
            list_cells(list.values(), &offsets, t)
        }
        (DataType::LargeList(_), CellValNum::Var) => {
            let list = array.as_list::<i64>();
            list_cells(list.values(), list.value_offsets(), t)
        }
        (_, CellValNum::Fixed(1)) => Ok((primitive_bytes(array, t)?, None)),
        (other, _) => Err(format!("{other} cannot hold {t} cells of {cvn:?} values")),
    }
}

/// Values of a list array's cells, packed, with offsets in bytes.
fn list_cells(
    values: &ArrayRef,
    offsets: &[i64],
    t: Datatype,
) -> Result<(Vec<u8>, Option<Vec<u64>>), String> {
    let (first, last) = (offsets[0] as usize, *offsets.last().unwrap_or(&0) as usize);
    let data = primitive_bytes(&values.slice(first, last - first), t)?;
    let w = t.size();
    Ok((
        data,
        Some(
            offsets
                .iter()
                .map(|o| (*o as u64 - first as u64) * w)
                .collect(),
        ),
    ))
}

/// The little-endian bytes of a primitive array whose values are `t`'s size.
fn primitive_bytes(array: &ArrayRef, t: Datatype) -> Result<Vec<u8>, String> {
    primitive_values(array, t).map(|b| b.as_slice().to_vec())
}

/// The values of a primitive array holding `t`'s values, sharing its
/// memory (nulls' slots included: the validity is apart).
pub(crate) fn primitive_values(array: &ArrayRef, t: Datatype) -> Result<Buffer, String> {
    let width = array
        .data_type()
        .primitive_width()
        .ok_or_else(|| format!("{} cannot hold {t} values", array.data_type()))?;
    let bytes = t.is_string() || t.is_blob() || t == Datatype::Any;
    if width as u64 != t.size() || matches!(array.data_type(), DataType::Boolean) || bytes {
        return Err(format!(
            "{} cannot hold {t} values ({} bytes)",
            array.data_type(),
            t.size()
        ));
    }
    let data = array.to_data();
    Ok(data.buffers()[0].slice_with_length(data.offset() * width, data.len() * width))
}

/// Each cell's bytes from a string or binary array.
fn byte_cells(array: &ArrayRef) -> Result<Vec<&[u8]>, String> {
    let n = array.len();
    Ok(match array.data_type() {
        DataType::Utf8 => (0..n)
            .map(|i| array.as_string::<i32>().value(i).as_bytes())
            .collect(),
        DataType::LargeUtf8 => (0..n)
            .map(|i| array.as_string::<i64>().value(i).as_bytes())
            .collect(),
        DataType::Utf8View => (0..n)
            .map(|i| array.as_string_view().value(i).as_bytes())
            .collect(),
        DataType::Binary => (0..n).map(|i| array.as_binary::<i32>().value(i)).collect(),
        DataType::LargeBinary => (0..n).map(|i| array.as_binary::<i64>().value(i)).collect(),
        DataType::BinaryView => (0..n).map(|i| array.as_binary_view().value(i)).collect(),
        DataType::FixedSizeBinary(_) => (0..n)
            .map(|i| array.as_fixed_size_binary().value(i))
            .collect(),
        other => return Err(format!("{other} cannot hold text or bytes")),
    })
}

/// Var-sized cells packed, with their offsets.
fn pack(values: Vec<&[u8]>) -> (Vec<u8>, Option<Vec<u64>>) {
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(values.len() + 1);
    offsets.push(0);
    for v in values {
        data.extend_from_slice(v);
        offsets.push(data.len() as u64);
    }
    (data, Some(offsets))
}
