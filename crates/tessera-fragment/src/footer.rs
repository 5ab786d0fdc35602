//! The fragment metadata footer (`format_spec/fragment.md#footer`), for
//! format versions 3 to 23.

use crate::gates;
use crate::FragmentError;
use nom::combinator::cond;
use nom::sequence::tuple;
use serde::Serialize;
use tessera_schema::schema::{encode_ndrange, ndrange};
use tessera_schema::{ArraySchema, Range1D};
use tessera_tile::parse::{
    bytes, flag, parse, sized_text, u32_le, u64_le, u64s, within, FieldError, PResult,
};
use tessera_tile::FormatVersion;

/// Identifier of the "tile global order bounds" optional section (version 23).
pub const SECTION_TILE_GLOBAL_ORDER: u64 = 0;

/// The footer: what a fragment holds and where its sections are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Footer {
    /// Fragment format version.
    pub version: FormatVersion,
    /// Name of the schema the fragment was written with (version 10 and later).
    pub schema_name: Option<String>,
    /// Dense or sparse fragment.
    pub dense: bool,
    /// The non-empty domain, one range per dimension (`None` when null).
    pub non_empty_domain: Option<Vec<Range1D>>,
    /// Number of sparse tiles.
    pub sparse_tile_num: u64,
    /// Cells in the last tile (sparse).
    pub last_tile_cell_num: u64,
    /// The fragment stores per-cell timestamps (`t.tdb`).
    pub has_timestamps: bool,
    /// The fragment stores delete metadata (`dt.tdb`, `dci.tdb`).
    pub has_delete_meta: bool,
    /// Size of each field's (offsets) data file.
    pub file_sizes: Vec<u64>,
    /// Size of each var-sized field's values file.
    pub file_var_sizes: Vec<u64>,
    /// Size of each nullable field's validity file.
    pub file_validity_sizes: Vec<u64>,
    /// Offset of the R-tree generic tile.
    pub rtree_offset: u64,
    /// Offset of each field's tile offsets generic tile.
    pub tile_offsets: Vec<u64>,
    /// Offset of each field's var tile offsets generic tile.
    pub tile_var_offsets: Vec<u64>,
    /// Offset of each field's var tile sizes generic tile.
    pub tile_var_sizes: Vec<u64>,
    /// Offset of each field's validity tile offsets generic tile.
    pub tile_validity_offsets: Vec<u64>,
    /// Offset of each field's tile mins generic tile.
    pub tile_min_offsets: Vec<u64>,
    /// Offset of each field's tile maxes generic tile.
    pub tile_max_offsets: Vec<u64>,
    /// Offset of each field's tile sums generic tile.
    pub tile_sum_offsets: Vec<u64>,
    /// Offset of each field's tile null counts generic tile.
    pub tile_null_count_offsets: Vec<u64>,
    /// Offset of the fragment min/max/sum/null count generic tile.
    pub fragment_summary_offset: Option<u64>,
    /// Offset of the processed conditions generic tile.
    pub processed_conditions_offset: Option<u64>,
    /// Offsets of the tile global order min and max generic tiles, per dimension.
    pub tile_global_order_offsets: Option<(Vec<u64>, Vec<u64>)>,
    /// Size of the footer in bytes.
    pub size: u64,
}

/// Number of fields the footer arrays have: attributes, the legacy
/// coordinates, the dimensions (from version 5), then `t`, `dt`, `dci`.
pub fn field_count(schema: &ArraySchema, version: FormatVersion, ts: bool, del: bool) -> usize {
    let dims = if version.has(gates::SPLIT_COORDINATES) {
        schema.dimensions.len()
    } else {
        0
    };
    schema.attributes.len() + 1 + dims + ts as usize + 2 * del as usize
}

/// Reads the version and (from version 10) the schema name at the start of a footer.
pub fn peek_schema_name(bytes: &[u8]) -> Result<(FormatVersion, Option<String>), FragmentError> {
    let head = |i| {
        let (i, version) = u32_le("version number")(i)?;
        let version = FormatVersion::new(version);
        let named = version.has(gates::SCHEMA_NAME);
        let (i, name) = cond(
            named,
            sized_text("array schema name size", "array schema name"),
        )(i)?;
        Ok((i, (version, name)))
    };
    Ok(parse(bytes, "fragment metadata footer", 0, head)?.0)
}

/// The footer size of fragments whose footer does not end with its length:
/// versions before 10 whose dimensions are all fixed-sized.
pub fn computed_footer_size(schema: &ArraySchema, version: FormatVersion) -> u64 {
    let attrs = schema.attributes.len() as u64;
    let domain: u64 = schema.dimensions.iter().map(|d| 2 * d.coord_size()).sum();
    let base = 4 + 1 + 1 + domain + 8 + 8;
    if !version.has(gates::SPLIT_COORDINATES) {
        base + (attrs + 1) * 8 + attrs * 8 + 8 + (attrs + 1) * 8 + attrs * 8 + attrs * 8
    } else {
        let num = field_count(schema, version, false, false) as u64;
        let per_field = if version.has(gates::VALIDITY) { 7 } else { 5 };
        base + num * 8 * per_field + 8
    }
}

/// True when the footer ends with its own length.
pub fn has_footer_length(schema: &ArraySchema, version: FormatVersion) -> bool {
    version.has(gates::SCHEMA_NAME) || schema.dimensions.iter().any(|d| d.is_var())
}

impl Footer {
    /// Parses a footer. `bytes` must start at the footer; `schema` is the
    /// schema the fragment was written with; `file_offset` where the
    /// footer starts in its file (for errors). See [`footer`].
    pub fn parse(
        bytes: &[u8],
        schema: &ArraySchema,
        file_offset: u64,
    ) -> Result<Footer, FragmentError> {
        let (mut f, size) = parse(
            bytes,
            "fragment metadata footer",
            file_offset,
            footer(schema),
        )?;
        f.size = size as u64;
        Ok(f)
    }

    /// The footer's bytes as [`Footer::parse`] reads them: each field its
    /// version has, in order. (The footer length that ends some metadata
    /// files, [`has_footer_length`], is not part of it.)
    pub fn encode(&self, schema: &ArraySchema) -> Vec<u8> {
        let v = self.version;
        let mut out = Vec::new();
        let u64s = |out: &mut Vec<u8>, values: &[u64]| {
            values
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        };
        out.extend_from_slice(&v.number().to_le_bytes());
        if let (true, Some(name)) = (v.has(gates::SCHEMA_NAME), &self.schema_name) {
            out.extend_from_slice(&(name.len() as u64).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        out.push(self.dense as u8);
        out.push(self.non_empty_domain.is_none() as u8);
        if let Some(ned) = &self.non_empty_domain {
            encode_ndrange(ned, &schema.dimensions, &mut out);
        }
        u64s(&mut out, &[self.sparse_tile_num, self.last_tile_cell_num]);
        if v.has(gates::TIMESTAMPS) {
            out.push(self.has_timestamps as u8);
        }
        if v.has(gates::DELETE_METADATA) {
            out.push(self.has_delete_meta as u8);
        }
        u64s(&mut out, &self.file_sizes);
        u64s(&mut out, &self.file_var_sizes);
        u64s(&mut out, &self.file_validity_sizes);
        u64s(&mut out, &[self.rtree_offset]);
        u64s(&mut out, &self.tile_offsets);
        u64s(&mut out, &self.tile_var_offsets);
        u64s(&mut out, &self.tile_var_sizes);
        u64s(&mut out, &self.tile_validity_offsets);
        if v.has(gates::TILE_METADATA) {
            u64s(&mut out, &self.tile_min_offsets);
            u64s(&mut out, &self.tile_max_offsets);
            u64s(&mut out, &self.tile_sum_offsets);
            u64s(&mut out, &self.tile_null_count_offsets);
        }
        u64s(&mut out, self.fragment_summary_offset.as_slice());
        u64s(&mut out, self.processed_conditions_offset.as_slice());
        if v.has(gates::OPTIONAL_SECTIONS) {
            let sections = self.tile_global_order_offsets.iter().count() as u32;
            out.extend_from_slice(&sections.to_le_bytes());
            if let Some((mins, maxes)) = &self.tile_global_order_offsets {
                out.extend_from_slice(&SECTION_TILE_GLOBAL_ORDER.to_le_bytes());
                out.extend_from_slice(&(8 * (mins.len() + maxes.len()) as u32).to_le_bytes());
                u64s(&mut out, mins);
                u64s(&mut out, maxes);
            }
        }
        out
    }
}

/// How many entries the footer's per-field arrays have.
struct FieldCounts {
    /// Every field: attributes, coordinates, dimensions, timestamps and
    /// delete metadata (before version 5: attributes and coordinates).
    all: u64,
    /// Fields with var-sized values (before version 5: the attributes).
    var: u64,
    /// Fields with validity (version 7 and later).
    every: u64,
}

impl FieldCounts {
    fn new(schema: &ArraySchema, version: FormatVersion, ts: bool, del: bool) -> FieldCounts {
        let every = field_count(schema, version, ts, del) as u64;
        let attrs = schema.attributes.len() as u64;
        match version.has(gates::SPLIT_COORDINATES) {
            true => FieldCounts {
                all: every,
                var: every,
                every,
            },
            false => FieldCounts {
                all: attrs + 1,
                var: attrs,
                every,
            },
        }
    }
}

/// The version a footer starts with: one that has a footer.
fn footer_version(i: &[u8]) -> PResult<'_, FormatVersion> {
    let (rest, n) = u32_le("version number")(i)?;
    let version = FormatVersion::new(n);
    if !version.is_known() || !version.has(gates::FOOTER) {
        let why = format!("format version {version} has no footer or is not supported");
        return Err(FieldError::invalid(i, "version number", why));
    }
    Ok((rest, version))
}

/// The non-empty domain: before version 5 every coordinate has the size of
/// the first dimension's type (one type for all); from 5 an NDRectangle.
fn non_empty_domain<'a>(
    schema: &'a ArraySchema,
    version: FormatVersion,
) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<Range1D>> {
    move |i| {
        if version.has(gates::SPLIT_COORDINATES) {
            return ndrange(&schema.dimensions)(i);
        }
        let mut i = i;
        let mut v = Vec::new();
        for d in &schema.dimensions {
            let s = d.coord_size();
            let (j, lo) = bytes("non-empty domain", s)(i)?;
            let (j, hi) = bytes("non-empty domain", s)(j)?;
            i = j;
            v.push(Range1D {
                lo: lo.to_vec(),
                hi: hi.to_vec(),
            });
        }
        Ok((i, v))
    }
}

/// Offsets of the tile global order mins and maxes, per dimension.
type GlobalOrderOffsets = (Vec<u64>, Vec<u64>);

/// Tile mins, maxes, sums and null counts offsets, per field.
type TileMetadataOffsets = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>);

/// The optional sections (version 23): of those known, the tile global
/// order bounds offsets; unknown sections are skipped, as the spec requires.
fn optional_sections(dims: u64) -> impl Fn(&[u8]) -> PResult<'_, Option<GlobalOrderOffsets>> {
    move |i| {
        let (mut i, n) = u32_le("number of optional sections")(i)?;
        let mut global_order = None;
        for _ in 0..n {
            let (j, id) = u64_le("optional section identifier")(i)?;
            let (j, size) = u32_le("optional section data size")(j)?;
            let (j, data) = bytes("optional section data", size as u64)(j)?;
            if id == SECTION_TILE_GLOBAL_ORDER {
                global_order = Some(within("optional section", tile_global_order(dims))(data)?.1);
            }
            i = j;
        }
        Ok((i, global_order))
    }
}

/// The tile global order bounds section: mins then maxes offsets, one per
/// dimension, filling the section exactly.
fn tile_global_order(dims: u64) -> impl Fn(&[u8]) -> PResult<'_, GlobalOrderOffsets> {
    move |data| {
        if data.len() as u64 != 16 * dims {
            let why = format!("{} bytes, expected {}", data.len(), 16 * dims);
            return Err(FieldError::invalid(data, "data size", why));
        }
        let (i, mins) = u64s("global order mins offsets", dims)(data)?;
        let (i, maxes) = u64s("global order maxes offsets", dims)(i)?;
        Ok((i, (mins, maxes)))
    }
}

/// The footer as a nom parser of the schema the fragment was written with:
/// after the version, each field read where that version has it.
pub fn footer<'a>(schema: &'a ArraySchema) -> impl Fn(&'a [u8]) -> PResult<'a, Footer> {
    move |i| {
        let (i, version) = footer_version(i)?;
        let has = |g| version.has(g);
        let name = sized_text("array schema name size", "array schema name");
        let (i, schema_name) = cond(has(gates::SCHEMA_NAME), name)(i)?;
        let (i, dense) = flag("dense")(i)?;
        let (i, null_ned) = flag("null non-empty domain")(i)?;
        let (i, non_empty_domain) = cond(!null_ned, non_empty_domain(schema, version))(i)?;
        let (i, sparse_tile_num) = u64_le("number of sparse tiles")(i)?;
        let (i, last_tile_cell_num) = u64_le("last tile cell num")(i)?;
        let (i, ts) = cond(has(gates::TIMESTAMPS), flag("includes timestamps"))(i)?;
        let (i, del) = cond(
            has(gates::DELETE_METADATA),
            flag("includes delete metadata"),
        )(i)?;
        let (has_timestamps, has_delete_meta) = (ts.unwrap_or(false), del.unwrap_or(false));
        let n = FieldCounts::new(schema, version, has_timestamps, has_delete_meta);
        let validity = has(gates::VALIDITY);
        let (i, file_sizes) = u64s("file sizes", n.all)(i)?;
        let (i, file_var_sizes) = u64s("file var sizes", n.var)(i)?;
        let (i, file_validity_sizes) = cond(validity, u64s("file validity sizes", n.every))(i)?;
        let (i, rtree_offset) = u64_le("R-tree offset")(i)?;
        let (i, tile_offsets) = u64s("tile offsets offsets", n.all)(i)?;
        let (i, tile_var_offsets) = u64s("tile var offsets offsets", n.var)(i)?;
        let (i, tile_var_sizes) = u64s("tile var sizes offsets", n.var)(i)?;
        let validity_offsets = u64s("tile validity offsets offsets", n.every);
        let (i, tile_validity_offsets) = cond(validity, validity_offsets)(i)?;
        let tile_metadata = tuple((
            u64s("tile mins offsets", n.every),
            u64s("tile maxes offsets", n.every),
            u64s("tile sums offsets", n.every),
            u64s("tile null counts offsets", n.every),
        ));
        let (i, tile_metadata) = cond(has(gates::TILE_METADATA), tile_metadata)(i)?;
        let (mins, maxes, sums, nulls): TileMetadataOffsets = tile_metadata.unwrap_or_default();
        let summary = u64_le("fragment min max sum null count offset");
        let (i, fragment_summary_offset) = cond(has(gates::FRAGMENT_METADATA_SUMMARY), summary)(i)?;
        let processed = u64_le("processed conditions offset");
        let (i, processed_conditions_offset) =
            cond(has(gates::PROCESSED_CONDITIONS), processed)(i)?;
        let sections = optional_sections(schema.dimensions.len() as u64);
        let (i, tile_global_order_offsets) = cond(has(gates::OPTIONAL_SECTIONS), sections)(i)?;
        let footer = Footer {
            version,
            schema_name,
            dense,
            non_empty_domain,
            sparse_tile_num,
            last_tile_cell_num,
            has_timestamps,
            has_delete_meta,
            file_sizes,
            file_var_sizes,
            file_validity_sizes: file_validity_sizes.unwrap_or_default(),
            rtree_offset,
            tile_offsets,
            tile_var_offsets,
            tile_var_sizes,
            tile_validity_offsets: tile_validity_offsets.unwrap_or_default(),
            tile_min_offsets: mins,
            tile_max_offsets: maxes,
            tile_sum_offsets: sums,
            tile_null_count_offsets: nulls,
            fragment_summary_offset,
            processed_conditions_offset,
            tile_global_order_offsets: tile_global_order_offsets.flatten(),
            size: 0,
        };
        Ok((i, footer))
    }
}
