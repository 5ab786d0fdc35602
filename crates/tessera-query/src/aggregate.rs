//! Aggregates: count, sum, min, max, null count and mean over the cells a
//! query selects, answered from fragment and tile metadata wherever the
//! data allow it, decoding only the tiles they must.
//!
//! In a sparse array a fragment's summary (format 12 and later) answers for
//! the whole fragment, and a tile's mins, maxes, sums and null counts
//! (format 11 and later) for the whole tile, when no cell of it can be
//! dropped or shadowed: the subarray covers it (its non-empty domain, or
//! its MBR), no query condition is set, no delete or update commit applies
//! to it, it keeps no per-cell timestamps, and either the array allows
//! duplicates or no other fragment's non-empty domain meets its own. The
//! rest is read and decoded in batches. Dense arrays count the fill
//! values of unwritten cells as libtiledb does, which tile metadata leaves
//! out, so they are always decoded.
//!
//! Values follow libtiledb: sums of signed integers are `i64`, of unsigned
//! `u64`, of floats `f64`, saturating on overflow; min and max are of
//! single-valued fields and strings; nulls take no part, and a field whose
//! every selected cell is null has a null sum, min, max and mean. NaN takes
//! no part either, as in the tile metadata libtiledb writes.

use crate::batch::Batches;
use crate::context::ReadContext;
use crate::geometry::{mbr_overlap, MbrTest};
use crate::prune::Answered;
use crate::read::Read;
use crate::request::ReadRequest;
use crate::result::ReadResult;
use crate::QueryError;
use std::sync::Arc;
use tessera_fragment::tile_metadata::{compare_cells as order, Sum};
use tessera_fragment::{Field, FragmentMetadata, OpenArray, Overlap};
use tessera_schema::{ArraySchema, CellValNum, Range1D, Value};
use tessera_storage::Storage;
use tessera_tile::Datatype;

/// An aggregate over the cells a query selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aggregate {
    /// Number of cells.
    Count,
    /// Sum of a numeric single-valued field.
    Sum(String),
    /// Least value of a single-valued field or a string.
    Min(String),
    /// Greatest value.
    Max(String),
    /// Null cells of a field (0 for a field that is not nullable).
    NullCount(String),
    /// Mean of a numeric single-valued field.
    Mean(String),
}

impl Aggregate {
    fn field(&self) -> Option<&str> {
        match self {
            Aggregate::Count => None,
            Aggregate::Sum(f)
            | Aggregate::Min(f)
            | Aggregate::Max(f)
            | Aggregate::NullCount(f)
            | Aggregate::Mean(f) => Some(f),
        }
    }
}

impl std::fmt::Display for Aggregate {
    /// As the CLI spells it: `count`, `sum(a)`, `null_count(a)`...
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self {
            Aggregate::Count => return f.write_str("count"),
            Aggregate::Sum(_) => "sum",
            Aggregate::Min(_) => "min",
            Aggregate::Max(_) => "max",
            Aggregate::NullCount(_) => "null_count",
            Aggregate::Mean(_) => "mean",
        };
        write!(f, "{op}({})", self.field().unwrap_or_default())
    }
}

/// What fragment metadata says of one field ([`ReadSession::field_bounds`](crate::ReadSession::field_bounds)).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldBounds {
    /// The field's datatype: `min` and `max` are one value of it, as stored.
    pub datatype: Datatype,
    /// The least value (`None`: every cell is null, or there is none).
    pub min: Option<Vec<u8>>,
    /// The greatest value.
    pub max: Option<Vec<u8>>,
    /// Null cells.
    pub null_count: u64,
    /// Whether these are the values of exactly the cells a read returns.
    pub exact: bool,
}

/// The value of one aggregate.
#[derive(Debug, Clone, PartialEq)]
pub enum AggregateValue {
    /// Counts, and sums of unsigned integers.
    UInt(u64),
    /// Sums of signed integers.
    Int(i64),
    /// Sums of floats, and means.
    Float(f64),
    /// A min or max: one value of the field's datatype, as stored.
    Value(Datatype, Vec<u8>),
    /// Every selected cell was null (or none was selected).
    Null,
}

impl AggregateValue {
    /// As JSON: numbers (NaN and infinities as strings), strings for
    /// string values, `null`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            AggregateValue::UInt(v) => Value::Int(*v as i128).to_json(),
            AggregateValue::Int(v) => Value::Int(*v as i128).to_json(),
            AggregateValue::Float(v) => Value::Float(*v).to_json(),
            AggregateValue::Value(t, b) => Value::decode(*t, b).to_json(),
            AggregateValue::Null => serde_json::Value::Null,
        }
    }
}

/// Aggregate values, with how they were reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregates {
    /// One value per aggregate asked, in order.
    pub values: Vec<AggregateValue>,
    /// Fragments answered whole from their summary.
    pub fragments_from_metadata: u64,
    /// Tiles answered from tile metadata.
    pub tiles_from_metadata: u64,
    /// Cells read and decoded.
    pub cells_decoded: u64,
}

/// The running state of one field.
#[derive(Debug, Clone)]
struct FieldAcc {
    datatype: Datatype,
    cell_val_num: CellValNum,
    nullable: bool,
    /// A single number libtiledb sums.
    summable: bool,
    nulls: u64,
    /// Non-null, non-NaN values summed.
    summed: u64,
    /// Their exact sum, saturated only when reported.
    sum: Option<Exact>,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
}

/// A running sum, wide enough that adding `u64` cells or tile sums cannot
/// overflow it in any array that fits in storage.
#[derive(Debug, Clone, Copy)]
enum Exact {
    Int(i128),
    Float(f64),
}

impl Exact {
    fn of(s: Sum) -> Exact {
        match s {
            Sum::Int(v) => Exact::Int(v as i128),
            Sum::UInt(v) => Exact::Int(v as i128),
            Sum::Float(v) => Exact::Float(v),
        }
    }

    fn add(self, s: Sum) -> Exact {
        match (self, Exact::of(s)) {
            (Exact::Int(a), Exact::Int(b)) => Exact::Int(a.saturating_add(b)),
            (Exact::Float(a), Exact::Float(b)) => Exact::Float(a + b),
            (a, _) => a,
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Exact::Int(v) => v as f64,
            Exact::Float(v) => v,
        }
    }
}

/// Stored sum bits of a field of type `t` as metadata can use them:
/// `Some(None)` for types libtiledb does not sum, `None` (metadata cannot
/// answer) when the sum is missing or saturated, which no longer gives the
/// mean (nor the sum, once added to others).
fn usable_sum(t: Datatype, bits: Option<u64>) -> Option<Option<u64>> {
    if Sum::from_bits(t, 0).is_none() {
        return Some(None);
    }
    let bits = bits?;
    match Sum::from_bits(t, bits)? {
        Sum::Int(v) if v == i64::MIN || v == i64::MAX => None,
        Sum::UInt(u64::MAX) => None,
        // A NaN cell made the sum NaN (the cells' sum leaves NaN out), or
        // the sum stopped pinned at its bound, perhaps before a NaN; either
        // way the tile's min and max may have lost numbers too.
        Sum::Float(v) if v.is_nan() || v.abs() == f64::MAX => None,
        _ => Some(Some(bits)),
    }
}

impl FieldAcc {
    fn new(datatype: Datatype, cell_val_num: CellValNum, nullable: bool) -> Self {
        FieldAcc {
            datatype,
            cell_val_num,
            nullable,
            summable: cell_val_num == CellValNum::Fixed(1) && Sum::from_bits(datatype, 0).is_some(),
            nulls: 0,
            summed: 0,
            sum: None,
            min: None,
            max: None,
        }
    }

    fn bound(&mut self, v: &[u8]) {
        let (t, n) = (self.datatype, self.cell_val_num);
        if self
            .min
            .as_deref()
            .is_none_or(|m| order(t, n, v, m).is_lt())
        {
            self.min = Some(v.to_vec());
        }
        if self
            .max
            .as_deref()
            .is_none_or(|m| order(t, n, v, m).is_gt())
        {
            self.max = Some(v.to_vec());
        }
    }

    fn cell(&mut self, v: &[u8], valid: bool) {
        if !valid {
            self.nulls += 1;
            return;
        }
        let value = Value::decode(self.datatype, v);
        if self.cell_val_num == CellValNum::Fixed(1) && value.is_nan() {
            return;
        }
        self.bound(v);
        if self.summable {
            let s = match value {
                Value::Int(x)
                    if matches!(
                        self.datatype.physical(),
                        tessera_tile::datatype::Physical::UInt(_)
                    ) =>
                {
                    Sum::UInt(x as u64)
                }
                Value::Int(x) => Sum::Int(x as i64),
                Value::Float(x) => Sum::Float(x),
                _ => return,
            };
            self.sum = Some(self.sum.map_or(Exact::of(s), |a| a.add(s)));
            self.summed = self.summed.saturating_add(1);
        }
    }

    /// Adds metadata: `nulls` of `cells`, the stored sum bits, min and max.
    fn metadata(&mut self, cells: u64, nulls: u64, sum: Option<u64>, (lo, hi): (&[u8], &[u8])) {
        self.nulls = self.nulls.saturating_add(nulls);
        if nulls >= cells {
            return; // all null: the stored bounds are zeros, not values
        }
        self.bound(lo);
        self.bound(hi);
        if let Some(s) = sum.and_then(|b| Sum::from_bits(self.datatype, b)) {
            self.sum = Some(self.sum.map_or(Exact::of(s), |a| a.add(s)));
            self.summed = self.summed.saturating_add(cells - nulls);
        }
    }
}

/// What one tile or fragment's metadata holds for one field.
struct FieldMetadata<'m> {
    nulls: u64,
    sum: Option<u64>,
    bounds: (&'m [u8], &'m [u8]),
}

/// The aggregates of the cells `request` selects (its ranges and
/// condition; attributes and layout play no part), from metadata where
/// it can; what it must decode it reads in the request's batches.
pub(crate) fn aggregate(
    storage: &Arc<dyn Storage>,
    array: &Arc<OpenArray>,
    context: Arc<ReadContext>,
    request: &ReadRequest,
    aggs: &[Aggregate],
) -> Result<Aggregates, QueryError> {
    let read = Read::resolve(&**storage, array, request, context.clone());
    let schema = array.schema.clone();
    let mut tally = Tally::new(&schema, aggs)?;
    let mut out = Aggregates {
        values: Vec::new(),
        fragments_from_metadata: 0,
        tiles_from_metadata: 0,
        cells_decoded: 0,
    };
    // Metadata first: what it answers is left out of the decoding read.
    let answered = match !schema.is_dense() && read.request.condition.is_none() {
        true => answer_from_metadata(&read, &schema, &mut tally, &mut out)?,
        false => vec![Answered::Nothing; array.fragments.len()],
    };
    // The rest: decode.
    let dense_condition = schema
        .is_dense()
        .then(|| read.request.condition.clone())
        .flatten();
    let mut read_fields = tally.names.clone();
    if let Some(c) = &dense_condition {
        c.fields(&mut read_fields);
    }
    let attrs: Vec<String> = read_fields
        .iter()
        .filter(|f| schema.attribute(f).is_some())
        .cloned()
        .collect();
    let mut decoding = request
        .clone()
        .attributes(attrs)
        .dimensions(true)
        .enumeration_values(false);
    if dense_condition.is_some() {
        // Cells failing a condition read as fill values in dense reads:
        // read without it and test each cell here.
        decoding.condition = None;
    }
    if answered.iter().all(|a| *a == Answered::Fragment) && !schema.is_dense() {
        // Nothing left to read.
    } else {
        let answered = Arc::new(answered);
        let batches = Batches::start(storage.clone(), array.clone(), decoding, context, answered)?;
        for batch in batches {
            let batch = batch?;
            let names = &tally.names;
            tally.count += fold(&batch, names, &mut tally.accs, dense_condition.as_ref());
            out.cells_decoded += batch.cell_count as u64;
        }
    }
    out.values = aggs.iter().map(|a| tally.value(a)).collect();
    Ok(out)
}

/// Answers from fragment and tile metadata what it can: fragments the
/// subarray covers whole (from their summaries), and tiles it covers
/// whole (from their metadata), where no cell of theirs can be dropped
/// or shadowed. Returns, per fragment, what was answered.
fn answer_from_metadata<'a>(
    read: &Read<'a>,
    schema: &ArraySchema,
    tally: &mut Tally,
    out: &mut Aggregates,
) -> Result<Vec<Answered>, QueryError> {
    let mut answered = vec![Answered::Nothing; read.array.fragments.len()];
    let shadows = crate::prune::Shadows::new(read.array);
    let dims = &schema.dimensions;
    let ranges = &read.ranges;
    for (fi, frag) in read.array.fragments.iter().enumerate() {
        if !metadata_may_answer(read, fi, frag, &shadows)? {
            continue;
        }
        let Some(ned) = &frag.footer.non_empty_domain else {
            continue;
        };
        let overlap = mbr_overlap(ned, ranges, dims);
        if overlap == Overlap::None {
            answered[fi] = Answered::Fragment;
            continue;
        }
        if overlap == Overlap::Full {
            let summary = frag.fragment_summary(read.storage)?;
            let cells = frag.total_cell_num();
            if let Some(m) = tally
                .names
                .iter()
                .map(|f| fragment_field(frag, schema, f, summary, cells))
                .collect::<Option<Vec<_>>>()
            {
                tally.add_metadata(cells, m);
                answered[fi] = Answered::Fragment;
                out.fragments_from_metadata += 1;
                continue;
            }
        }
        // Tiles the subarray covers whole.
        let test = MbrTest::new(ranges, dims);
        let full: Vec<u64> = frag
            .rtree(read.storage)?
            .tiles_overlapping(&|mbr: &[Range1D]| test.overlap(mbr))
            .into_iter()
            .filter(|&(_, full)| full)
            .map(|(t, _)| t)
            .collect();
        if full.is_empty() {
            continue;
        }
        let meta = tally
            .names
            .iter()
            .map(|f| TileFieldMeta::load(read.storage, frag, &read.array.schema, f))
            .collect::<Result<Option<Vec<_>>, QueryError>>()?;
        let Some(meta) = meta else { continue };
        let mut done = Vec::new();
        for t in full {
            let Some(m) = meta
                .iter()
                .map(|m| m.get(t as usize))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            tally.add_metadata(frag.cell_num(t), m);
            done.push(t);
        }
        out.tiles_from_metadata += done.len() as u64;
        done.sort_unstable();
        answered[fi] = Answered::Tiles(done);
    }
    Ok(answered)
}

/// What fragment metadata says of the single-valued field `name`
/// ([`ReadSession::field_bounds`](crate::ReadSession::field_bounds)).
pub(crate) fn field_bounds<'a>(
    read: &Read<'a>,
    name: &str,
) -> Result<Option<FieldBounds>, QueryError> {
    let schema = &read.array.schema;
    let Some(spec) = schema.attribute(name) else {
        return Ok(None);
    };
    if schema.is_dense() || spec.cell_val_num != CellValNum::Fixed(1) {
        return Ok(None);
    }
    let shadows = crate::prune::Shadows::new(read.array);
    let mut out = FieldBounds {
        datatype: spec.datatype,
        min: None,
        max: None,
        null_count: 0,
        exact: true,
    };
    for (fi, frag) in read.array.fragments.iter().enumerate() {
        let cells = frag.total_cell_num();
        let summary = frag.fragment_summary(read.storage)?;
        let Some(m) = fragment_field(frag, schema, name, summary, cells) else {
            return Ok(None);
        };
        out.exact &= metadata_may_answer(read, fi, frag, &shadows)?;
        out.null_count += m.nulls;
        if m.nulls < cells {
            let (lo, hi) = m.bounds;
            let t = spec.datatype;
            let one = CellValNum::Fixed(1);
            if out
                .min
                .as_deref()
                .is_none_or(|have| order(t, one, lo, have).is_lt())
            {
                out.min = Some(lo.to_vec());
            }
            if out
                .max
                .as_deref()
                .is_none_or(|have| order(t, one, hi, have).is_gt())
            {
                out.max = Some(hi.to_vec());
            }
        }
    }
    Ok(Some(out))
}

/// Whether no cell of fragment `fi` can be dropped or shadowed by
/// anything but the subarray, so its metadata speaks for its cells.
fn metadata_may_answer<'a>(
    read: &Read<'a>,
    fi: usize,
    frag: &FragmentMetadata,
    shadows: &crate::prune::Shadows,
) -> Result<bool, QueryError> {
    if frag.footer.dense || frag.footer.has_timestamps || frag.footer.has_delete_meta {
        return Ok(false);
    }
    let (written, _) = frag.timestamp_range();
    let processed = frag.processed_conditions(read.storage)?;
    if read
        .array
        .delete_conditions
        .iter()
        .any(|d| written < d.timestamp && !processed.contains(&d.name))
    {
        return Ok(false);
    }
    Ok(shadows.none_in(fi, frag, None))
}

/// A field of `frag` its metadata can speak for: (field, datatype,
/// nullable). Not var-sized nullable fields, whose null counts libtiledb
/// writes as 0.
fn metadata_field(
    frag: &FragmentMetadata,
    schema: &ArraySchema,
    name: &str,
) -> Option<(Field, Datatype, bool)> {
    let spec = crate::prune::trusted_field(frag, schema, name)?;
    (!(spec.nullable && spec.cell_val_num.is_var())).then_some((
        spec.field,
        spec.datatype,
        spec.nullable,
    ))
}

/// A field's fragment summary as metadata, when kept.
fn fragment_field<'m>(
    frag: &FragmentMetadata,
    schema: &ArraySchema,
    name: &str,
    summary: &'m [tessera_fragment::FieldSummary],
    cells: u64,
) -> Option<FieldMetadata<'m>> {
    let (field, t, nullable) = metadata_field(frag, schema, name)?;
    let s = summary.get(frag.field_index(field)?)?;
    let nulls = if nullable { s.null_count } else { 0 };
    if (s.min.is_empty() && nulls < cells) || nan_bound(t, &s.min, &s.max) {
        return None;
    }
    Some(FieldMetadata {
        nulls,
        sum: usable_sum(t, Some(s.sum))?,
        bounds: (&s.min, &s.max),
    })
}

/// One field's tile metadata in one fragment.
struct TileFieldMeta {
    datatype: Datatype,
    nullable: bool,
    mins: std::sync::Arc<tessera_fragment::TileBounds>,
    maxes: std::sync::Arc<tessera_fragment::TileBounds>,
    sums: std::sync::Arc<Vec<u64>>,
    nulls: std::sync::Arc<Vec<u64>>,
}

impl TileFieldMeta {
    fn load(
        storage: &dyn tessera_storage::Storage,
        frag: &FragmentMetadata,
        schema: &ArraySchema,
        name: &str,
    ) -> Result<Option<TileFieldMeta>, QueryError> {
        let Some((field, datatype, nullable)) = metadata_field(frag, schema, name) else {
            return Ok(None);
        };
        let m = TileFieldMeta {
            datatype,
            nullable,
            mins: frag.tile_mins(storage, field)?,
            maxes: frag.tile_maxes(storage, field)?,
            sums: frag.tile_sums(storage, field)?,
            nulls: if nullable {
                frag.tile_null_counts(storage, field)?
            } else {
                Default::default()
            },
        };
        Ok((!m.mins.is_empty()).then_some(m))
    }

    fn get(&self, t: usize) -> Option<FieldMetadata<'_>> {
        let nulls = if self.nullable {
            *self.nulls.get(t)?
        } else {
            0
        };
        let bounds = (self.mins.get(t)?, self.maxes.get(t)?);
        if nan_bound(self.datatype, bounds.0, bounds.1) {
            return None;
        }
        Some(FieldMetadata {
            nulls,
            sum: usable_sum(self.datatype, self.sums.get(t).copied())?,
            bounds,
        })
    }
}

/// Whether float bounds are NaN: libtiledb's are for some tiles holding
/// a NaN (on the fixtures, those whose last value is NaN), and then say
/// nothing of the other cells (the cells' aggregates leave NaN out).
fn nan_bound(t: Datatype, lo: &[u8], hi: &[u8]) -> bool {
    let nan = |b: &[u8]| !b.is_empty() && Value::decode(t, b).is_nan();
    nan(lo) || nan(hi)
}

/// Adds the cells of a decoded batch (those passing `cond`, when given);
/// returns how many were counted.
fn fold(
    batch: &ReadResult,
    names: &[String],
    accs: &mut [FieldAcc],
    cond: Option<&crate::Expr>,
) -> u64 {
    let cols: Vec<_> = names.iter().map(|n| batch.column(n)).collect();
    let pass = cond.map(|c| {
        c.compile_columns(&batch.columns)
            .select_columns(&batch.columns, batch.cell_count)
    });
    let mut counted = 0;
    for i in 0..batch.cell_count {
        if pass.as_ref().is_some_and(|p| !p[i]) {
            continue;
        }
        counted += 1;
        for (acc, col) in accs.iter_mut().zip(&cols) {
            if let Some(col) = col {
                acc.cell(col.value(i), col.is_valid(i));
            }
        }
    }
    counted
}

/// The running state of an aggregation: the cells counted, and per field
/// aggregated (each once), its state.
struct Tally {
    names: Vec<String>,
    accs: Vec<FieldAcc>,
    count: u64,
}

impl Tally {
    /// The state for `aggs` over `schema`'s fields; an aggregate naming a
    /// field the array lacks, or one not defined on its field, is an error.
    fn new(schema: &ArraySchema, aggs: &[Aggregate]) -> Result<Tally, QueryError> {
        let mut names: Vec<String> = Vec::new();
        let mut accs: Vec<FieldAcc> = Vec::new();
        for a in aggs {
            let Some(f) = a.field() else { continue };
            let (t, n, nullable) = if let Some(at) = schema.attribute(f) {
                (at.datatype, at.cell_val_num, at.nullable)
            } else if let Some(d) = schema.dimension(f) {
                (d.datatype, d.cell_val_num, false)
            } else {
                return Err(QueryError::Invalid(format!(
                    "an aggregate names `{f}`, which the array does not have"
                )));
            };
            let numeric = n == CellValNum::Fixed(1) && Sum::from_bits(t, 0).is_some();
            let string = crate::prune::is_string(t);
            let ok = match a {
                Aggregate::Sum(_) | Aggregate::Mean(_) => numeric,
                Aggregate::Min(_) | Aggregate::Max(_) => string || n == CellValNum::Fixed(1),
                _ => true,
            };
            if !ok {
                return Err(QueryError::Invalid(format!(
                    "{a} is not defined on `{f}` ({t}, {n:?} values per cell): sum and mean take single numbers, min and max single values or strings"
                )));
            }
            if !names.iter().any(|x| x == f) {
                names.push(f.to_owned());
                accs.push(FieldAcc::new(t, n, nullable));
            }
        }
        Ok(Tally {
            names,
            accs,
            count: 0,
        })
    }

    /// Adds `cells` cells known from metadata, one entry per field.
    fn add_metadata(&mut self, cells: u64, metas: Vec<FieldMetadata<'_>>) {
        self.count = self.count.saturating_add(cells);
        for (acc, m) in self.accs.iter_mut().zip(metas) {
            acc.metadata(cells, m.nulls, m.sum, m.bounds);
        }
    }

    /// The value of aggregate `a`.
    fn value(&self, a: &Aggregate) -> AggregateValue {
        let acc = a
            .field()
            .and_then(|f| self.names.iter().position(|n| n == f))
            .map(|i| &self.accs[i]);
        match (a, acc) {
            (Aggregate::Count, _) => AggregateValue::UInt(self.count),
            (Aggregate::NullCount(_), Some(acc)) => AggregateValue::UInt(acc.nulls),
            (Aggregate::Sum(_), Some(acc)) => acc.sum_value(),
            (Aggregate::Mean(_), Some(acc)) if acc.summed > 0 => {
                AggregateValue::Float(acc.sum.map_or(0.0, Exact::as_f64) / acc.summed as f64)
            }
            (Aggregate::Mean(_), _) => AggregateValue::Null,
            (Aggregate::Min(_), Some(acc)) => acc.min.clone().map_or(AggregateValue::Null, |v| {
                AggregateValue::Value(acc.datatype, v)
            }),
            (Aggregate::Max(_), Some(acc)) => acc.max.clone().map_or(AggregateValue::Null, |v| {
                AggregateValue::Value(acc.datatype, v)
            }),
            _ => AggregateValue::Null,
        }
    }
}

impl FieldAcc {
    /// The sum, saturating at the bounds of its type as libtiledb's; with
    /// no value, 0 for a field that cannot be null, as libtiledb.
    fn sum_value(&self) -> AggregateValue {
        match (self.sum, Sum::from_bits(self.datatype, 0)) {
            (Some(Exact::Int(v)), Some(Sum::UInt(_))) => {
                AggregateValue::UInt(v.clamp(0, u64::MAX as i128) as u64)
            }
            (Some(Exact::Int(v)), _) => {
                AggregateValue::Int(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
            }
            (Some(Exact::Float(v)), _) => AggregateValue::Float(v),
            (None, Some(Sum::Int(_))) if !self.nullable => AggregateValue::Int(0),
            (None, Some(Sum::UInt(_))) if !self.nullable => AggregateValue::UInt(0),
            (None, _) if !self.nullable => AggregateValue::Float(0.0),
            (None, _) => AggregateValue::Null,
        }
    }
}
