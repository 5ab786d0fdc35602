//! One result column as an Arrow array and field (the type mapping in
//! the [parent module's docs](super)).

use crate::result::Column;
use crate::{QueryError, ReadContext};
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, FixedSizeListArray, ListArray,
    PrimitiveArray, StringArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, TimeUnit};
use std::collections::HashMap;
use std::sync::Arc;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;

/// How one TileDB datatype's values are laid out in Arrow.
enum Kind {
    Primitive(DataType),
    Boolean,
    Utf8,
    Binary,
}

/// How a datatype's values are laid out; with `ascii_binary`,
/// STRING_ASCII as bytes (libtiledb keeps any byte there, UTF-8 or not).
fn kind(t: Datatype, ascii_binary: bool) -> Kind {
    use Datatype as D;
    match t {
        D::StringAscii if ascii_binary => Kind::Binary,
        D::Int8 => Kind::Primitive(DataType::Int8),
        D::UInt8 => Kind::Primitive(DataType::UInt8),
        D::Int16 => Kind::Primitive(DataType::Int16),
        D::UInt16 => Kind::Primitive(DataType::UInt16),
        D::Int32 => Kind::Primitive(DataType::Int32),
        D::UInt32 => Kind::Primitive(DataType::UInt32),
        D::Int64 => Kind::Primitive(DataType::Int64),
        D::UInt64 => Kind::Primitive(DataType::UInt64),
        D::Float32 => Kind::Primitive(DataType::Float32),
        D::Float64 => Kind::Primitive(DataType::Float64),
        D::Bool => Kind::Boolean,
        D::DatetimeSec => Kind::Primitive(DataType::Timestamp(TimeUnit::Second, None)),
        D::DatetimeMs => Kind::Primitive(DataType::Timestamp(TimeUnit::Millisecond, None)),
        D::DatetimeUs => Kind::Primitive(DataType::Timestamp(TimeUnit::Microsecond, None)),
        D::DatetimeNs => Kind::Primitive(DataType::Timestamp(TimeUnit::Nanosecond, None)),
        D::StringAscii | D::StringUtf8 => Kind::Utf8,
        t if t.size() == 8 && !t.is_string() && !t.is_blob() => Kind::Primitive(DataType::Int64),
        _ => Kind::Binary,
    }
}

/// The Arrow field a column becomes.
pub fn arrow_field(c: &Column) -> Field {
    field_of(c, false)
}

/// [`arrow_field`]; with `ascii_binary`, STRING_ASCII as Binary.
pub(super) fn field_of(c: &Column, ascii_binary: bool) -> Field {
    let value = match kind(c.datatype, ascii_binary) {
        Kind::Primitive(t) => t,
        Kind::Boolean => DataType::Boolean,
        Kind::Utf8 => DataType::Utf8,
        Kind::Binary => DataType::Binary,
    };
    let is_cell_string = matches!(kind(c.datatype, false), Kind::Utf8 | Kind::Binary);
    let data_type = match c.cell_val_num {
        _ if is_cell_string => value,
        CellValNum::Fixed(1) => value,
        CellValNum::Fixed(n) => {
            DataType::FixedSizeList(Arc::new(Field::new("item", value, false)), n as i32)
        }
        CellValNum::Var => DataType::List(Arc::new(Field::new("item", value, false))),
    };
    let mut meta = HashMap::from([("tiledb.datatype".to_owned(), c.datatype.name().to_owned())]);
    if c.is_dimension {
        meta.insert("tiledb.dimension".to_owned(), "true".to_owned());
    }
    Field::new(&c.name, data_type, c.validity.is_some()).with_metadata(meta)
}

/// A column's bytes as an Arrow buffer, moved: with `back`, a buffer that
/// gives them to that context's pool of result buffers when Arrow drops
/// its last reference to them.
fn buffer(data: Vec<u8>, back: Option<&Arc<ReadContext>>) -> Buffer {
    match back {
        None => Buffer::from_vec(data),
        Some(context) => Buffer::from(bytes::Bytes::from_owner(Returned {
            data,
            context: context.clone(),
        })),
    }
}

/// Bytes Arrow holds for a while, then gives back to a read's context.
struct Returned {
    data: Vec<u8>,
    context: Arc<ReadContext>,
}

impl AsRef<[u8]> for Returned {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        self.context.results.give(std::mem::take(&mut self.data));
    }
}

/// Typed values from little-endian bytes, moved when aligned.
fn primitive<T: ArrowPrimitiveType>(
    data: Vec<u8>,
    t: &DataType,
    back: Option<&Arc<ReadContext>>,
) -> ArrayRef {
    let n = data.len() / std::mem::size_of::<T::Native>();
    let mut buf = buffer(data, back);
    if buf.as_ptr().align_offset(std::mem::align_of::<T::Native>()) != 0 {
        buf = Buffer::from_slice_ref(buf.as_slice());
    }
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::new(buf, 0, n), None).with_data_type(t.clone()))
}

fn values(t: &DataType, data: Vec<u8>, back: Option<&Arc<ReadContext>>) -> ArrayRef {
    match t {
        DataType::Int8 => primitive::<Int8Type>(data, t, back),
        DataType::UInt8 => primitive::<UInt8Type>(data, t, back),
        DataType::Int16 => primitive::<Int16Type>(data, t, back),
        DataType::UInt16 => primitive::<UInt16Type>(data, t, back),
        DataType::Int32 => primitive::<Int32Type>(data, t, back),
        DataType::UInt32 => primitive::<UInt32Type>(data, t, back),
        DataType::Int64 => primitive::<Int64Type>(data, t, back),
        DataType::UInt64 => primitive::<UInt64Type>(data, t, back),
        DataType::Float32 => primitive::<Float32Type>(data, t, back),
        DataType::Float64 => primitive::<Float64Type>(data, t, back),
        DataType::Timestamp(TimeUnit::Second, _) => primitive::<TimestampSecondType>(data, t, back),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            primitive::<TimestampMillisecondType>(data, t, back)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            primitive::<TimestampMicrosecondType>(data, t, back)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            primitive::<TimestampNanosecondType>(data, t, back)
        }
        _ => unreachable!("kind() yields only these primitive types"),
    }
}

/// Converts one column, consuming its buffers.
pub fn arrow_array(c: Column) -> Result<ArrayRef, QueryError> {
    column_array(c, None, false)
}

/// [`arrow_array`], the value buffers given back to `back` when dropped;
/// with `ascii_binary`, STRING_ASCII as Binary.
pub(super) fn column_array(
    c: Column,
    back: Option<&Arc<ReadContext>>,
    ascii_binary: bool,
) -> Result<ArrayRef, QueryError> {
    // Strings as TileDB reads them back (the JSON output's values too).
    let c = c.with_string_values();
    let field = field_of(&c, ascii_binary);
    let too_big = || {
        QueryError::Invalid(format!(
            "column `{}`: more than 2 GiB of values in one batch; read with a smaller memory budget",
            c.name
        ))
    };
    let cells = c
        .validity
        .as_ref()
        .map(Vec::len)
        .or_else(|| c.offsets.as_ref().map(|o| o.len().saturating_sub(1)));
    let width = c.datatype.size() as usize;
    let per_cell = match c.cell_val_num {
        CellValNum::Fixed(n) => n as usize * width,
        CellValNum::Var => 0,
    };
    let n = cells.unwrap_or(c.data.len().checked_div(per_cell).unwrap_or(0));
    let nulls = c
        .validity
        .as_ref()
        .map(|v| NullBuffer::new(BooleanBuffer::from_iter(v.iter().map(|&b| b != 0))));
    // Offsets of each cell in bytes (var) or computed from the cell size.
    let byte_offsets = |c: &Column| -> Result<OffsetBuffer<i32>, QueryError> {
        let offs: Vec<i32> = match &c.offsets {
            Some(o) => o
                .iter()
                .map(|&x| i32::try_from(x).map_err(|_| too_big()))
                .collect::<Result<_, _>>()?,
            None => (0..=n)
                .map(|i| i32::try_from(i * per_cell).map_err(|_| too_big()))
                .collect::<Result<_, _>>()?,
        };
        Ok(OffsetBuffer::new(ScalarBuffer::from(offs)))
    };
    let invalid =
        |e: arrow_schema::ArrowError| QueryError::Invalid(format!("column `{}`: {e}", c.name));
    let array: ArrayRef = match kind(c.datatype, ascii_binary) {
        Kind::Utf8 => {
            let offsets = byte_offsets(&c)?;
            let ascii = c.datatype == Datatype::StringAscii;
            let text = StringArray::try_new(offsets, buffer(c.data, back), nulls);
            // libtiledb keeps any byte in ASCII cells; say how to read them.
            Arc::new(text.map_err(|e| match ascii {
                true => QueryError::Invalid(format!(
                    "column `{}` (STRING_ASCII) holds bytes that are not UTF-8, which Arrow \
                     text cannot: read it as binary (`ascii_as_binary`): {e}",
                    c.name
                )),
                false => invalid(e),
            })?)
        }
        Kind::Binary => {
            let offsets = byte_offsets(&c)?;
            Arc::new(BinaryArray::try_new(offsets, buffer(c.data, back), nulls).map_err(invalid)?)
        }
        k => {
            let element = |data: Vec<u8>| -> ArrayRef {
                match &k {
                    Kind::Primitive(t) => values(t, data, back),
                    _ => Arc::new(BooleanArray::from_iter(data.iter().map(|&b| Some(b != 0)))),
                }
            };
            let inner = match field.data_type() {
                DataType::FixedSizeList(f, _) | DataType::List(f) => f.clone(),
                _ => {
                    let v = element(c.data);
                    return Ok(match nulls {
                        Some(nb) => {
                            let d = v.to_data().into_builder().nulls(Some(nb));
                            arrow_array::make_array(d.build().map_err(invalid)?)
                        }
                        None => v,
                    });
                }
            };
            match c.cell_val_num {
                CellValNum::Fixed(m) => Arc::new(
                    FixedSizeListArray::try_new(inner, m as i32, element(c.data), nulls)
                        .map_err(invalid)?,
                ),
                CellValNum::Var => {
                    // Element offsets: byte offsets over the value width.
                    let offs: Vec<i32> = c
                        .offsets
                        .as_ref()
                        .map(|o| {
                            o.iter()
                                .map(|&x| i32::try_from(x / width as u64).map_err(|_| too_big()))
                                .collect::<Result<_, _>>()
                        })
                        .transpose()?
                        .unwrap_or_else(|| vec![0]);
                    Arc::new(
                        ListArray::try_new(
                            inner,
                            OffsetBuffer::new(ScalarBuffer::from(offs)),
                            element(c.data),
                            nulls,
                        )
                        .map_err(invalid)?,
                    )
                }
            }
        }
    };
    Ok(array)
}

#[cfg(test)]
mod tests {
    use super::{column_array, field_of};

    /// STRING_ASCII cells holding bytes that are not UTF-8: as Utf8 an
    /// error naming the column, as Binary the bytes as stored.
    #[test]
    fn ascii_cells_need_not_be_utf8() {
        use arrow_array::cast::AsArray;
        let column = crate::Column {
            name: "d".to_owned(),
            is_dimension: true,
            datatype: tessera_tile::Datatype::StringAscii,
            cell_val_num: tessera_schema::CellValNum::Var,
            data: b"a\x81bc".to_vec(),
            offsets: Some(vec![0, 1, 2, 4]),
            validity: None,
        };
        let e = column_array(column.clone(), None, false).unwrap_err();
        assert!(e.to_string().contains("column `d` (STRING_ASCII)"), "{e}");
        assert!(e.to_string().contains("ascii_as_binary"), "{e}");
        let a = column_array(column.clone(), None, true).unwrap();
        let values: Vec<&[u8]> = a.as_binary::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(values, [&b"a"[..], b"\x81", b"bc"]);
        assert_eq!(
            field_of(&column, true).data_type(),
            &arrow_schema::DataType::Binary
        );
    }
}
