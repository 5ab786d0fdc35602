//! Results as Arrow `RecordBatch`es (feature `arrow`, on by default).
//!
//! Each column becomes one Arrow field, named as in the array, with the
//! TileDB datatype in the field metadata (`tiledb.datatype`) and
//! `tiledb.dimension` set on dimensions:
//!
//! | TileDB | Arrow |
//! |---|---|
//! | INT8 ... UINT64, FLOAT32, FLOAT64 | the same primitive |
//! | BOOL | Boolean |
//! | DATETIME_SEC/MS/US/NS | Timestamp (no time zone) |
//! | other DATETIME_*, TIME_* | Int64 (raw, as in the JSONL contract) |
//! | STRING_ASCII, STRING_UTF8 | Utf8, one string per cell (STRING_ASCII as Binary with [`ReadRequest::ascii_as_binary`]) |
//! | CHAR, BLOB, GEOM_*, STRING_UTF16/32, STRING_UCS2/4 | Binary, one value per cell |
//! | multi-value numeric cells | FixedSizeList |
//! | var-sized numeric cells | List |
//!
//! Nullable attributes carry a validity bitmap. Buffers of fixed-sized
//! numeric columns are moved, not copied, when their allocation is aligned.
//! [`ReadResult::into_record_batch_returning`] makes batches whose value
//! buffers go back to the read's [`ReadContext`] once Arrow drops them,
//! for the read's next batches to fill.

mod column;

pub use column::{arrow_array, arrow_field};

use crate::result::{Column, ReadResult};
use crate::{QueryError, ReadRequest};
use crate::{DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, VERSION_TIMESTAMPS};
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use column::{column_array, field_of};
use std::collections::HashMap;
use std::sync::Arc;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;

impl ReadResult {
    /// The cells as an Arrow `RecordBatch`, one field per column (see the
    /// [module docs](crate::arrow) for the type mapping). Consumes the
    /// result; fixed-sized numeric buffers move without copying.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// for batch in session.batches(&ReadRequest::new().budget(64 << 20)).unwrap() {
    ///     let rb = batch.unwrap().into_record_batch().unwrap();
    ///     println!("{} rows, schema {:?}", rb.num_rows(), rb.schema());
    /// }
    /// ```
    pub fn into_record_batch(self) -> Result<RecordBatch, QueryError> {
        self.record_batch(false, false)
    }

    /// [`into_record_batch`](Self::into_record_batch), whose value buffers
    /// go back to the context of the read that made them (the session's)
    /// when Arrow drops them, for its next batches to fill instead of fresh
    /// memory (which the kernel must clear page by page). For callers that
    /// drop each batch soon, such as a SQL engine's scan; the context keeps
    /// what it is given up to its bounds, so a context of the read's own
    /// ([`ReadContext::with_budget`]) frees them with the read.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::{ReadContext, ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let context = Arc::new(ReadContext::with_budget(64 << 20));
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap().context(context.clone());
    /// let batch = session.execute(&ReadRequest::new()).unwrap().into_record_batch_returning().unwrap();
    /// assert_eq!(batch.num_rows(), 36);
    /// drop(batch); // its buffers are now `context`'s, for the next read
    /// ```
    pub fn into_record_batch_returning(self) -> Result<RecordBatch, QueryError> {
        self.record_batch(true, false)
    }

    /// The record batch: buffers `returning` to the read's context,
    /// STRING_ASCII as Binary with `ascii_binary`.
    pub(crate) fn record_batch(
        mut self,
        returning: bool,
        ascii_binary: bool,
    ) -> Result<RecordBatch, QueryError> {
        // Arrow has no column described by a grid.
        self.materialize_coordinates();
        let n = self.cell_count;
        let back = self.context.take().filter(|_| returning);
        let fields: Vec<Field> = (self.columns.iter())
            .map(|c| field_of(c, ascii_binary))
            .collect();
        let arrays = self
            .columns
            .into_iter()
            .map(|c| column_array(c, back.as_ref(), ascii_binary))
            .collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
            .map_err(|e| QueryError::Invalid(format!("building the record batch: {e}")))
    }

    /// The Arrow schema [`into_record_batch`](Self::into_record_batch) produces.
    pub fn arrow_schema(&self) -> Schema {
        // Dimensions a grid describes: their fields, from columns of no cells.
        let described = self.grid.iter().flat_map(|g| &g.dimensions).map(|d| {
            arrow_field(&crate::Column {
                name: d.name.clone(),
                is_dimension: true,
                datatype: d.datatype,
                cell_val_num: tessera_schema::CellValNum::Fixed(1),
                data: Vec::new(),
                offsets: None,
                validity: None,
            })
        });
        Schema::new(
            described
                .chain(self.columns.iter().map(arrow_field))
                .collect::<Vec<_>>(),
        )
    }
}

/// Enumerated attributes as Arrow dictionary columns: the values of each
/// enumeration an attribute names, built once, put over the key columns
/// of every batch of a read ([`ReadResult::into_record_batch`] gives the
/// stored keys). The field keeps its metadata and gains
/// `tiledb.enumeration`.
///
/// ```
/// use tessera_query::{arrow::Dictionaries, ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/enumerations/array");
/// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let array = session.array();
/// let dictionaries = Dictionaries::new(array, array.enumerations(&LocalFs).unwrap()).unwrap();
/// let batch = session.execute(&ReadRequest::new()).unwrap().into_record_batch().unwrap();
/// let batch = dictionaries.apply(batch).unwrap();
/// assert!(batch.schema().fields().iter().any(|f| matches!(f.data_type(), arrow_schema::DataType::Dictionary(..))));
/// ```
pub struct Dictionaries {
    /// The enumeration's values by attribute name.
    values: HashMap<String, Dictionary>,
}

/// One enumerated attribute's dictionary.
struct Dictionary {
    /// The enumeration's values, in key order.
    values: ArrayRef,
    /// The enumeration's name.
    enumeration: String,
    /// Whether the enumeration's values are ordered (Arrow's ordered
    /// dictionaries, pandas' ordered categoricals).
    ordered: bool,
    /// The attribute's fill value: a dense cell that was never written, or
    /// that a condition left out, holds it, and it need not be a key.
    fill: Vec<u8>,
}

impl Dictionaries {
    /// The dictionaries of `array`'s enumerated attributes, from its
    /// enumerations (`OpenArray::enumerations`).
    pub fn new(
        array: &tessera_fragment::OpenArray,
        enumerations: &[tessera_schema::Enumeration],
    ) -> Result<Dictionaries, QueryError> {
        let mut values = HashMap::new();
        for a in &array.schema.attributes {
            let Some(name) = &a.enumeration else { continue };
            let e = enumerations
                .iter()
                .find(|e| &e.name == name)
                .ok_or_else(|| {
                    QueryError::Invalid(format!(
                        "attribute `{}` names enumeration `{name}`, which the schema does not list",
                        a.name
                    ))
                })?;
            let offsets = matches!(e.cell_val_num, CellValNum::Var).then(|| {
                let mut o = Vec::with_capacity(e.values.len() + 1);
                let mut at = 0u64;
                o.push(0);
                for v in &e.values {
                    at += v.len() as u64;
                    o.push(at);
                }
                o
            });
            let column = Column {
                name: e.name.clone(),
                is_dimension: false,
                datatype: e.datatype,
                cell_val_num: e.cell_val_num,
                data: e.values.concat(),
                offsets,
                validity: None,
            };
            let dictionary = Dictionary {
                values: arrow_array(column)?,
                enumeration: e.name.clone(),
                ordered: e.ordered,
                fill: a.fill_value.clone(),
            };
            values.insert(a.name.clone(), dictionary);
        }
        Ok(Dictionaries { values })
    }

    /// The values of enumerated attribute `attribute`'s dictionary: its
    /// enumeration's values, in key order.
    pub fn values(&self, attribute: &str) -> Option<&ArrayRef> {
        self.values.get(attribute).map(|d| &d.values)
    }

    /// Whether any attribute is enumerated.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `batch` with each enumerated attribute's key column made a
    /// dictionary column; a key past the end of its enumeration is an
    /// error naming the attribute.
    pub fn apply(&self, batch: RecordBatch) -> Result<RecordBatch, QueryError> {
        if self.is_empty() {
            return Ok(batch);
        }
        let schema = batch.schema();
        let mut fields = Vec::with_capacity(schema.fields().len());
        let mut columns = Vec::with_capacity(schema.fields().len());
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let enumerated = self
                .values
                .get(field.name())
                .filter(|_| !field.metadata().contains_key("tiledb.dimension"));
            let Some(d) = enumerated else {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
                continue;
            };
            let dictionary = dictionary(column, d.values.clone(), &d.fill).map_err(|e| {
                QueryError::Invalid(format!(
                    "attribute `{}` (enumeration `{}`): {e}",
                    field.name(),
                    d.enumeration
                ))
            })?;
            fields.push(dictionary_field(field, d));
            columns.push(dictionary);
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
            .map_err(|e| QueryError::Invalid(format!("building the record batch: {e}")))
    }
}

/// The field of an enumerated attribute's dictionary column over `keys`
/// (the field of its keys): nullable as the attribute is, or where its
/// fill reads as a null.
fn dictionary_field(keys: &Field, d: &Dictionary) -> Field {
    let mut meta = keys.metadata().clone();
    meta.insert("tiledb.enumeration".to_owned(), d.enumeration.clone());
    let data_type = DataType::Dictionary(
        Box::new(keys.data_type().clone()),
        Box::new(d.values.data_type().clone()),
    );
    let nullable = keys.is_nullable() || fill_is_null(keys.data_type(), d);
    Field::new(keys.name(), data_type, nullable)
        .with_dict_is_ordered(d.ordered)
        .with_metadata(meta)
}

/// The Arrow schema of `array`'s cells as a streamed read returns them
/// (`ReadRequest::new`'s defaults): every dimension then every attribute,
/// enumerated attributes as dictionary columns unless
/// `enumeration_values`. Known before anything is read, as a SQL table's
/// schema must be.
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::arrow::{array_schema, Dictionaries};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// let d = Dictionaries::new(&a, a.enumerations(&LocalFs).unwrap()).unwrap();
/// let names: Vec<_> = array_schema(&a, Some(&d)).fields().iter().map(|f| f.name().clone()).collect();
/// assert_eq!(names, ["x", "y", "f", "i"]);
/// ```
pub fn array_schema(
    array: &tessera_fragment::OpenArray,
    dictionaries: Option<&Dictionaries>,
) -> Schema {
    fields_schema(array, &ReadRequest::new(), dictionaries, &[])
}

/// The Arrow schema of the record batches a read of `request` returns
/// (every batch of a streamed read, an empty result's too), from the
/// schema and the array's `enumerations` alone, before any tile is read;
/// the request is checked against the schema first ([`ReadRequest::check`]).
/// Enumerated attributes are dictionary columns over their values, or,
/// with [`ReadRequest::enumeration_values`], columns of the values.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::arrow::output_schema;
/// use tessera_query::stream::stream;
/// use tessera_query::{ReadRequest, ReadSession, Value};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let array = session.array();
/// // No cell lies this far out: the result is empty, with its schema.
/// let request = ReadRequest::new().attributes(["i"]).range("x", Value::Int(-9), Value::Int(-1));
/// let schema = output_schema(array, &request, array.enumerations(&LocalFs).unwrap()).unwrap();
/// let names: Vec<_> = schema.fields().iter().map(|f| f.name().as_str()).collect();
/// assert_eq!(names, ["x", "y", "i"]);
/// let batches = stream(session, request).unwrap();
/// assert_eq!(*batches.schema(), schema);
/// assert_eq!(batches.map(|b| b.unwrap().num_rows()).sum::<usize>(), 0);
/// ```
pub fn output_schema(
    array: &tessera_fragment::OpenArray,
    request: &ReadRequest,
    enumerations: &[tessera_schema::Enumeration],
) -> Result<Schema, QueryError> {
    Ok(schema_and_dictionaries(array, request, enumerations)?.0)
}

/// [`output_schema`] and the dictionaries its enumerated attributes' keys
/// are put over (none where the request reads values): the request
/// checked once, the dictionaries built once.
pub(crate) fn schema_and_dictionaries(
    array: &tessera_fragment::OpenArray,
    request: &ReadRequest,
    enumerations: &[tessera_schema::Enumeration],
) -> Result<(Schema, Option<Dictionaries>), QueryError> {
    request.check(&array.schema)?;
    let dictionaries = match request.reads_enumeration_values() {
        true => None,
        false => Some(Dictionaries::new(array, enumerations)?),
    };
    let schema = fields_schema(array, request, dictionaries.as_ref(), enumerations);
    Ok((schema, dictionaries))
}

/// [`output_schema`] of a checked request: enumerated attributes over
/// `dictionaries`, else as the values of `enumerations` where the request
/// reads values, else as keys.
fn fields_schema(
    array: &tessera_fragment::OpenArray,
    request: &ReadRequest,
    dictionaries: Option<&Dictionaries>,
    enumerations: &[tessera_schema::Enumeration],
) -> Schema {
    let empty = |name: &str, is_dimension, datatype, cell_val_num, nullable: bool| Column {
        name: name.to_owned(),
        is_dimension,
        datatype,
        cell_val_num,
        data: Vec::new(),
        offsets: None,
        validity: nullable.then(Vec::new),
    };
    let schema = &array.schema;
    let field = |c: &Column| field_of(c, request.ascii_as_binary);
    let dims = (schema.dimensions.iter())
        .filter(|d| request.returns_dimension(&d.name))
        .map(|d| field(&empty(&d.name, true, d.datatype, d.cell_val_num, false)));
    let selected: Vec<&tessera_schema::Attribute> = match request.selected_attributes() {
        Some(names) => names.iter().filter_map(|n| schema.attribute(n)).collect(),
        None => schema.attributes.iter().collect(),
    };
    let attrs = selected.into_iter().map(|a| {
        let values = a
            .enumeration
            .as_ref()
            .filter(|_| request.reads_enumeration_values())
            .and_then(|name| enumerations.iter().find(|e| &e.name == name));
        if let Some(e) = values {
            return field(&empty(
                &a.name,
                false,
                e.datatype,
                e.cell_val_num,
                a.nullable,
            ));
        }
        let keys = field(&empty(
            &a.name,
            false,
            a.datatype,
            a.cell_val_num,
            a.nullable,
        ));
        match dictionaries.and_then(|d| d.values.get(&a.name)) {
            Some(d) => dictionary_field(&keys, d),
            None => keys,
        }
    });
    // Versions are a sparse array's (a dense one's cells read as without).
    let versions = request.reads_versions() && !schema.is_dense();
    let mut extra = Vec::new();
    if versions {
        extra.push(VERSION_TIMESTAMPS);
        if request.reads_delete_metadata() {
            extra.extend([DELETE_TIMESTAMPS, DELETE_CONDITION_INDEX]);
        }
    }
    let extra = extra.into_iter().map(|name| {
        arrow_field(&empty(
            name,
            false,
            Datatype::UInt64,
            CellValNum::Fixed(1),
            false,
        ))
    });
    Schema::new(dims.chain(attrs).chain(extra).collect::<Vec<_>>())
}

/// Runs `$f::<K>($args)` for the dictionary key type `K` that the Arrow
/// integer type `$t` is; `$other` for any other type.
macro_rules! by_key_type {
    ($t:expr, $f:ident($($arg:expr),*), $other:expr) => {
        match $t {
            DataType::Int8 => $f::<Int8Type>($($arg),*),
            DataType::Int16 => $f::<Int16Type>($($arg),*),
            DataType::Int32 => $f::<Int32Type>($($arg),*),
            DataType::Int64 => $f::<Int64Type>($($arg),*),
            DataType::UInt8 => $f::<UInt8Type>($($arg),*),
            DataType::UInt16 => $f::<UInt16Type>($($arg),*),
            DataType::UInt32 => $f::<UInt32Type>($($arg),*),
            DataType::UInt64 => $f::<UInt64Type>($($arg),*),
            _ => $other,
        }
    };
}

/// The attribute's `fill` as a key of type `K` where it lies past `n`
/// values: such a key reads as a null.
fn null_key<K: arrow_array::types::ArrowDictionaryKeyType>(
    fill: &[u8],
    n: usize,
) -> Option<K::Native> {
    use arrow_buffer::ArrowNativeType;
    let f = (fill.len() == std::mem::size_of::<K::Native>())
        .then(|| ScalarBuffer::<K::Native>::from(Buffer::from(fill))[0])?;
    f.to_isize()
        .is_none_or(|k| k < 0 || k as usize >= n)
        .then_some(f)
}

/// Whether an enumerated attribute's fill value reads as a null (a key
/// past its values, see [`dictionary`]): its column is then nullable in
/// every batch, whether or not the batch holds the fill, so that every
/// batch of a read has the read's schema.
fn fill_is_null(keys: &DataType, d: &Dictionary) -> bool {
    fn typed<K: arrow_array::types::ArrowDictionaryKeyType>(d: &Dictionary) -> bool {
        null_key::<K>(&d.fill, d.values.len()).is_some()
    }
    by_key_type!(keys, typed(d), false)
}

/// `keys` over `values`: a key equal to the attribute's `fill` and past
/// the values is a null (a dense cell nothing wrote, or a condition left
/// out); any other key past the values is an error.
fn dictionary(
    keys: &ArrayRef,
    values: ArrayRef,
    fill: &[u8],
) -> Result<ArrayRef, arrow_schema::ArrowError> {
    use arrow_array::cast::AsArray;
    use arrow_array::DictionaryArray;
    fn typed<K: arrow_array::types::ArrowDictionaryKeyType>(
        keys: &ArrayRef,
        values: ArrayRef,
        fill: &[u8],
    ) -> Result<ArrayRef, arrow_schema::ArrowError> {
        let keys = keys.as_primitive::<K>();
        let keys = match null_key::<K>(fill, values.len()) {
            Some(f) if keys.values().contains(&f) => {
                let kept = NullBuffer::from_iter(keys.values().iter().map(|&k| k != f));
                let nulls = NullBuffer::union(keys.nulls(), Some(&kept));
                arrow_array::PrimitiveArray::<K>::new(keys.values().clone(), nulls)
            }
            _ => keys.clone(),
        };
        Ok(Arc::new(DictionaryArray::<K>::try_new(keys, values)?))
    }
    by_key_type!(
        keys.data_type(),
        typed(keys, values, fill),
        Err(arrow_schema::ArrowError::InvalidArgumentError(format!(
            "keys of type {} cannot index a dictionary",
            keys.data_type()
        )))
    )
}

#[cfg(test)]
mod tests {
    use crate::{ReadContext, ReadRequest, ReadSession};
    use std::sync::Arc;
    use tessera_storage::LocalFs;

    fn session(context: &Arc<ReadContext>) -> ReadSession {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/tiledb-0.36.1/dense_2d_types/array"
        );
        ReadSession::open(Arc::new(LocalFs), path.as_ref(), None)
            .unwrap()
            .context(context.clone())
    }

    /// A dense cell holding the fill value reads as a null key; any other
    /// key past the enumeration stays an error.
    #[test]
    fn fill_keys_past_the_values_are_nulls() {
        use arrow_array::{Array, ArrayRef, Int32Array, StringArray};
        let values: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
        let fill = i32::MIN.to_le_bytes();
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![0, i32::MIN, 1]));
        let d = super::dictionary(&keys, values.clone(), &fill).unwrap();
        assert_eq!(d.null_count(), 1);
        assert!(d.is_null(1));
        let bad: ArrayRef = Arc::new(Int32Array::from(vec![0, 5]));
        assert!(super::dictionary(&bad, values, &fill).is_err());
    }

    /// A batch's buffers reach the context only once Arrow drops every
    /// reference (a slice too), and the next read takes them; plain batches
    /// give nothing back.
    #[test]
    fn returned_buffers_come_back_when_arrow_drops_them() {
        let context = Arc::new(ReadContext::with_budget(64 << 20));
        let request = ReadRequest::new().attributes(["f64", "utf8"]);
        let plain = session(&context).execute(&request).unwrap();
        drop(plain.into_record_batch().unwrap());
        assert_eq!(context.results.held(), 0);

        let r = session(&context).execute(&request).unwrap();
        let want = r.column("f64").unwrap().data.clone();
        let batch = r.into_record_batch_returning().unwrap();
        let slice = batch.slice(3, 4);
        drop(batch);
        assert_eq!(context.results.held(), 0, "a slice still holds them");
        drop(slice);
        let held = context.results.held();
        assert!(held > 0);

        // The next read fills the returned buffers, with its own values.
        let again = session(&context).execute(&request).unwrap();
        assert!(context.results.held() < held);
        assert_eq!(again.column("f64").unwrap().data, want);
    }
}
