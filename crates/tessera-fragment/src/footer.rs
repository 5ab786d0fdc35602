//! The fragment metadata footer (`format_spec/fragment.md#footer`), for
//! format versions 3 to 23.

use crate::gates;
use crate::FragmentError;
use serde::Serialize;
use tessera_schema::{schema::read_ndrange, ArraySchema, Range1D};
use tessera_tile::{FormatVersion, Reader};

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
    let mut r = Reader::new(bytes, "fragment metadata footer");
    let version = FormatVersion::new(r.u32("version number")?);
    let name = if version.has(gates::SCHEMA_NAME) {
        let n = r.u64("array schema name size")?;
        Some(r.string("array schema name", n)?)
    } else {
        None
    };
    Ok((version, name))
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
    /// schema the fragment was written with; `name_version` the version the
    /// fragment's folder name gives (authoritative before version 10).
    pub fn parse(
        bytes: &[u8],
        schema: &ArraySchema,
        file_offset: u64,
    ) -> Result<Footer, FragmentError> {
        let mut r = Reader::new(bytes, "fragment metadata footer").at_offset(file_offset);
        let at = r.position();
        let version = FormatVersion::new(r.u32("version number")?);
        if !version.is_known() || !version.has(gates::FOOTER) {
            return Err(r
                .invalid_at(
                    at,
                    "version number",
                    format!("format version {version} has no footer or is not supported"),
                )
                .into());
        }
        let schema_name = if version.has(gates::SCHEMA_NAME) {
            let n = r.u64("array schema name size")?;
            Some(r.string("array schema name", n)?)
        } else {
            None
        };
        let dense = r.bool("dense")?;
        let null_ned = r.bool("null non-empty domain")?;
        let non_empty_domain = if null_ned {
            None
        } else if version.has(gates::SPLIT_COORDINATES) {
            Some(read_ndrange(&mut r, &schema.dimensions)?)
        } else {
            let mut v = Vec::new();
            for d in &schema.dimensions {
                let s = d.coord_size();
                v.push(Range1D {
                    lo: r.bytes("non-empty domain", s)?.to_vec(),
                    hi: r.bytes("non-empty domain", s)?.to_vec(),
                });
            }
            Some(v)
        };
        let sparse_tile_num = r.u64("number of sparse tiles")?;
        let last_tile_cell_num = r.u64("last tile cell num")?;
        let has_timestamps = if version.has(gates::TIMESTAMPS) {
            r.bool("includes timestamps")?
        } else {
            false
        };
        let has_delete_meta = if version.has(gates::DELETE_METADATA) {
            r.bool("includes delete metadata")?
        } else {
            false
        };
        let num = field_count(schema, version, has_timestamps, has_delete_meta) as u64;
        let attrs = schema.attributes.len() as u64;
        let split = version.has(gates::SPLIT_COORDINATES);
        let file_sizes = r.u64_array("file sizes", if split { num } else { attrs + 1 })?;
        let file_var_sizes = r.u64_array("file var sizes", if split { num } else { attrs })?;
        let file_validity_sizes = if version.has(gates::VALIDITY) {
            r.u64_array("file validity sizes", num)?
        } else {
            Vec::new()
        };
        let rtree_offset = r.u64("R-tree offset")?;
        let tile_offsets =
            r.u64_array("tile offsets offsets", if split { num } else { attrs + 1 })?;
        let tile_var_offsets =
            r.u64_array("tile var offsets offsets", if split { num } else { attrs })?;
        let tile_var_sizes =
            r.u64_array("tile var sizes offsets", if split { num } else { attrs })?;
        let tile_validity_offsets = if version.has(gates::VALIDITY) {
            r.u64_array("tile validity offsets offsets", num)?
        } else {
            Vec::new()
        };
        let (mut mins, mut maxes, mut sums, mut nulls) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        if version.has(gates::TILE_METADATA) {
            mins = r.u64_array("tile mins offsets", num)?;
            maxes = r.u64_array("tile maxes offsets", num)?;
            sums = r.u64_array("tile sums offsets", num)?;
            nulls = r.u64_array("tile null counts offsets", num)?;
        }
        let fragment_summary_offset = if version.has(gates::FRAGMENT_METADATA_SUMMARY) {
            Some(r.u64("fragment min max sum null count offset")?)
        } else {
            None
        };
        let processed_conditions_offset = if version.has(gates::PROCESSED_CONDITIONS) {
            Some(r.u64("processed conditions offset")?)
        } else {
            None
        };
        let mut tile_global_order_offsets = None;
        if version.has(gates::OPTIONAL_SECTIONS) {
            let n = r.u32("number of optional sections")?;
            for _ in 0..n {
                let id = r.u64("optional section identifier")?;
                let size = r.u32("optional section data size")?;
                let mut s = r.sub("optional section data", size as u64, "optional section")?;
                if id == SECTION_TILE_GLOBAL_ORDER {
                    let dims = schema.dimensions.len() as u64;
                    if size as u64 != 16 * dims {
                        return Err(s
                            .invalid("data size", format!("{size} bytes, expected {}", 16 * dims))
                            .into());
                    }
                    tile_global_order_offsets = Some((
                        s.u64_array("global order mins offsets", dims)?,
                        s.u64_array("global order maxes offsets", dims)?,
                    ));
                }
                // Unknown sections are skipped, as the spec requires.
            }
        }
        let size = r.position() as u64;
        Ok(Footer {
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
            file_validity_sizes,
            rtree_offset,
            tile_offsets,
            tile_var_offsets,
            tile_var_sizes,
            tile_validity_offsets,
            tile_min_offsets: mins,
            tile_max_offsets: maxes,
            tile_sum_offsets: sums,
            tile_null_count_offsets: nulls,
            fragment_summary_offset,
            processed_conditions_offset,
            tile_global_order_offsets,
            size,
        })
    }
}
