//! The fragment metadata file (`__fragment_metadata.tdb`, format 22) as
//! libtiledb writes it: generic tiles (GZIP level 1) in the order its
//! reader expects (R-tree; per field tile offsets, var offsets, var sizes,
//! validity offsets, mins, maxes, sums, null counts; the fragment summary;
//! the processed conditions), then the footer pointing at them, then the
//! footer's length. Fields are numbered attributes, the legacy coordinates
//! slot, dimensions.

use super::buffer::FieldInfo;
use super::files::FieldFiles;
use super::stats::{has_min_max, has_sum, TileStats};
use crate::create::generic_tile_pipeline;
use crate::WriteError;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_fragment::tile_metadata::{encode_bounds, encode_summary, encode_values};
use tessera_fragment::{FieldSummary, Footer, RTree};
use tessera_schema::{ArraySchema, Range1D};

/// One footer slot: a field and what was written of it, or (no field)
/// the legacy coordinates slot, which libtiledb still fills as a fixed
/// field of `coords_size` bytes a cell with zero tile bounds and sums.
pub(crate) struct Slot<'a> {
    pub field: Option<&'a FieldInfo>,
    pub files: Option<&'a FieldFiles>,
    pub stats: &'a [TileStats],
    pub summary: FieldSummary,
}

/// The legacy coordinates slot as a field: the first dimension's type.
pub(crate) fn coords_field(schema: &ArraySchema) -> FieldInfo {
    let d = &schema.dimensions[0];
    FieldInfo {
        name: "__coords".into(),
        datatype: d.datatype,
        cell_val_num: d.cell_val_num,
        nullable: false,
        is_dimension: false,
    }
}

/// The legacy coordinates slot's cell: every dimension as the first one's
/// type (`ArraySchema::cell_size("__coords")`), and that type's size.
pub(crate) fn coords_sizes(schema: &ArraySchema) -> (usize, usize) {
    let t = schema
        .dimensions
        .first()
        .map_or(0, |d| d.datatype.size() as usize);
    (t * schema.dimensions.len(), t)
}

/// What the footer says of the fragment besides its sections.
pub(crate) struct FragmentFacts {
    pub schema_name: String,
    pub non_empty_domain: Vec<Range1D>,
    pub dense: bool,
    pub tile_num: u64,
    pub last_tile_cell_num: u64,
    /// A slot of per-cell timestamps follows the dimensions' (a fragment
    /// consolidated with timestamps).
    pub has_timestamps: bool,
    /// With delete metadata (`dt`, `dci` slots after the timestamps'):
    /// the delete commits it accounts for.
    pub processed_conditions: Option<Vec<String>>,
}

/// The metadata file being assembled: generic tiles appended, their
/// offsets kept for the footer.
struct MetadataFile {
    bytes: Vec<u8>,
    schema: ArraySchema,
    key: Option<EncryptionKey>,
}

impl MetadataFile {
    /// Appends one generic tile; returns where it starts.
    fn section(&mut self, payload: &[u8]) -> Result<u64, WriteError> {
        let at = self.bytes.len() as u64;
        let tile = write_generic_tile(
            payload,
            &generic_tile_pipeline(),
            self.schema.version,
            self.key,
        )?;
        self.bytes.extend_from_slice(&tile);
        Ok(at)
    }

    /// One section per slot.
    fn per_slot(
        &mut self,
        slots: &[Slot<'_>],
        payload: impl Fn(&Slot<'_>) -> Vec<u8>,
    ) -> Result<Vec<u64>, WriteError> {
        slots.iter().map(|s| self.section(&payload(s))).collect()
    }
}

/// Tile minimums (`max`: maximums) of a slot: a cell per tile for fixed
/// sizes (zeros where a tile has none), an offset per tile into the values
/// for var sizes; nothing for fields that keep none.
fn bounds(s: &Slot<'_>, max: bool, coords: usize, tiles: usize) -> Vec<u8> {
    let Some(f) = s.field else {
        return encode_bounds(&vec![0; coords * tiles], &[]);
    };
    if !has_min_max(f) {
        return encode_bounds(&[], &[]);
    }
    let pick = |t: &TileStats| if max { t.max.clone() } else { t.min.clone() };
    if f.cell_val_num.is_var() {
        let (mut fixed, mut var) = (Vec::new(), Vec::new());
        for t in s.stats {
            fixed.extend_from_slice(&(var.len() as u64).to_le_bytes());
            var.extend(pick(t).unwrap_or_default());
        }
        encode_bounds(&fixed, &var)
    } else {
        let cs = f.cell_size() as usize;
        let mut fixed = Vec::with_capacity(cs * s.stats.len());
        for t in s.stats {
            let mut v = pick(t).unwrap_or_default();
            v.resize(cs, 0);
            fixed.extend_from_slice(&v);
        }
        encode_bounds(&fixed, &[])
    }
}

/// The metadata file's bytes.
pub(crate) fn fragment_metadata(
    schema: &ArraySchema,
    key: Option<EncryptionKey>,
    rtree: &RTree,
    slots: &[Slot<'_>],
    facts: FragmentFacts,
) -> Result<Vec<u8>, WriteError> {
    let mut m = MetadataFile {
        bytes: Vec::new(),
        schema: schema.clone(),
        key,
    };
    let tiles = facts.tile_num as usize;
    // Every slot has a value per tile, zero where the field has none.
    let per_tile = |s: &Slot<'_>, get: fn(&FieldFiles) -> &Vec<u64>| {
        let mut v = s.files.map_or(Vec::new(), |f| get(f).clone());
        v.resize(tiles, 0);
        encode_values(&v)
    };
    let (coords, _) = coords_sizes(schema);
    let rtree_offset = m.section(&rtree.encode(schema.version, &schema.dimensions))?;
    let tile_offsets = m.per_slot(slots, |s| per_tile(s, |f| &f.tile_offsets))?;
    let tile_var_offsets = m.per_slot(slots, |s| per_tile(s, |f| &f.var_offsets))?;
    let tile_var_sizes = m.per_slot(slots, |s| per_tile(s, |f| &f.var_sizes))?;
    let tile_validity_offsets = m.per_slot(slots, |s| per_tile(s, |f| &f.validity_offsets))?;
    let tile_min_offsets = m.per_slot(slots, |s| bounds(s, false, coords, tiles))?;
    let tile_max_offsets = m.per_slot(slots, |s| bounds(s, true, coords, tiles))?;
    // Sums: fields that keep them (the coordinates slot as its first
    // dimension's type, with zeros).
    let coords_field = coords_field(schema);
    let tile_sum_offsets = m.per_slot(slots, |s| {
        match has_sum(s.field.unwrap_or(&coords_field))
            && !(facts.dense && s.field.is_some_and(|f| f.is_dimension))
        {
            true => {
                let mut v: Vec<u64> = s.stats.iter().map(|t| t.sum).collect();
                v.resize(tiles, 0);
                encode_values(&v)
            }
            false => encode_values(&[]),
        }
    })?;
    // Null counts: nullable attributes only.
    let tile_null_count_offsets = m.per_slot(slots, |s| match s.field {
        Some(f) if f.nullable => {
            encode_values(&s.stats.iter().map(|t| t.null_count).collect::<Vec<_>>())
        }
        _ => encode_values(&[]),
    })?;
    let summaries: Vec<FieldSummary> = slots.iter().map(|s| s.summary.clone()).collect();
    let fragment_summary_offset = Some(m.section(&encode_summary(&summaries))?);
    // The delete commits the delete metadata accounts for (none without
    // it): a count, then each name's size and bytes.
    let processed = facts.processed_conditions.as_deref().unwrap_or(&[]);
    let processed_conditions_offset = Some(m.section(&encode_names(processed))?);
    let size_of = |s: &Slot<'_>, get: fn(&FieldFiles) -> u64| s.files.map_or(0, get);
    let footer = Footer {
        version: schema.version,
        schema_name: Some(facts.schema_name),
        dense: facts.dense,
        non_empty_domain: Some(facts.non_empty_domain),
        sparse_tile_num: if facts.dense { 0 } else { facts.tile_num },
        last_tile_cell_num: facts.last_tile_cell_num,
        has_timestamps: facts.has_timestamps,
        has_delete_meta: facts.processed_conditions.is_some(),
        file_sizes: slots.iter().map(|s| size_of(s, |f| f.fixed)).collect(),
        file_var_sizes: slots.iter().map(|s| size_of(s, |f| f.var)).collect(),
        file_validity_sizes: slots.iter().map(|s| size_of(s, |f| f.validity)).collect(),
        rtree_offset,
        tile_offsets,
        tile_var_offsets,
        tile_var_sizes,
        tile_validity_offsets,
        tile_min_offsets,
        tile_max_offsets,
        tile_sum_offsets,
        tile_null_count_offsets,
        fragment_summary_offset,
        processed_conditions_offset,
        tile_global_order_offsets: None,
        size: 0,
    };
    let encoded = footer.encode(schema);
    m.bytes.extend_from_slice(&encoded);
    m.bytes
        .extend_from_slice(&(encoded.len() as u64).to_le_bytes());
    Ok(m.bytes)
}

/// The processed conditions section's payload: the count (u64), then each
/// name's size (u64) and bytes, as `FragmentMetadata::processed_conditions`
/// reads it.
fn encode_names(names: &[String]) -> Vec<u8> {
    let mut out = (names.len() as u64).to_le_bytes().to_vec();
    for n in names {
        out.extend((n.len() as u64).to_le_bytes());
        out.extend(n.as_bytes());
    }
    out
}
