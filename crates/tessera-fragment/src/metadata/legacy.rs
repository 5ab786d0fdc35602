//! Fragment metadata of formats 1 and 2: one generic tile for the whole file.

use super::*;
use nom::combinator::map;
use nom::multi::count as count_exact;
use tessera_schema::{Dimension, Range1D};
use tessera_tile::parse::{
    bytes, counted_u64s, fits, parse, u32_le, u64_le, u64s, FieldError, PResult,
};

impl FragmentMetadata {
    /// Formats 1 and 2: the whole metadata file is one generic tile holding
    /// the non-empty domain, the MBRs, the bounding coordinates (unused), the
    /// tile offsets, var offsets and var sizes per attribute (the legacy
    /// coordinates last among the offsets), the last tile cell number and the
    /// file sizes.
    pub(super) fn load_v1_v2(
        storage: &dyn Storage,
        path: &Path,
        name: String,
        tn: TimestampedName,
        schema: Arc<ArraySchema>,
        key: Option<EncryptionKey>,
        dense: bool,
    ) -> Result<FragmentMetadata, FragmentError> {
        let file = path.join(FRAGMENT_METADATA_FILE);
        let bytes = storage.read_all(&file).map_err(FragmentError::from)?;
        let within = |e: FragmentError| e.within(&name, "legacy fragment metadata");
        let tile = read_generic_tile(&bytes, key.as_ref(), 0).map_err(|e| within(e.into()))?;
        let attrs = schema.attributes.len();
        let (legacy, _) = parse(
            &tile.data,
            "legacy fragment metadata",
            0,
            legacy_metadata(&schema.dimensions, attrs),
        )
        .map_err(|e| within(e.into()))?;
        let LegacyMetadata {
            version,
            non_empty_domain,
            mbrs: leaves,
            offsets,
            var_offsets,
            var_sizes,
            last_tile_cell_num,
            file_sizes,
            file_var_sizes,
        } = legacy;
        let n_mbrs = leaves.len() as u64;
        let footer = Footer {
            version,
            schema_name: None,
            dense,
            non_empty_domain,
            sparse_tile_num: if dense { 0 } else { n_mbrs },
            last_tile_cell_num,
            has_timestamps: false,
            has_delete_meta: false,
            file_sizes,
            file_var_sizes,
            file_validity_sizes: Vec::new(),
            rtree_offset: 0,
            tile_offsets: Vec::new(),
            tile_var_offsets: Vec::new(),
            tile_var_sizes: Vec::new(),
            tile_validity_offsets: Vec::new(),
            tile_min_offsets: Vec::new(),
            tile_max_offsets: Vec::new(),
            tile_sum_offsets: Vec::new(),
            tile_null_count_offsets: Vec::new(),
            fragment_summary_offset: None,
            processed_conditions_offset: None,
            tile_global_order_offsets: None,
            size: 0,
        };
        // The sections are already read: fill the lazy slots.
        let m = Self::assemble(name, path, tn, footer, schema, key, bytes.len() as u64)?;
        let slots = &m.offsets;
        for (i, o) in offsets.into_iter().enumerate() {
            let _ = slots[i][0].set(Arc::new(o));
        }
        for (i, o) in var_offsets.into_iter().enumerate() {
            let _ = slots[i][1].set(Arc::new(o));
        }
        for (i, o) in var_sizes.into_iter().enumerate() {
            let _ = slots[i][3].set(Arc::new(o));
        }
        let _ = m.rtree.set(RTree {
            fanout: 10,
            levels: vec![leaves],
        });
        Ok(m)
    }
}

/// What a format 1 or 2 metadata tile holds, in its order.
struct LegacyMetadata {
    version: FormatVersion,
    non_empty_domain: Option<Vec<Range1D>>,
    /// One per data tile.
    mbrs: Vec<Vec<Range1D>>,
    /// Per attribute, then the legacy coordinates.
    offsets: Vec<Vec<u64>>,
    var_offsets: Vec<Vec<u64>>,
    var_sizes: Vec<Vec<u64>>,
    last_tile_cell_num: u64,
    file_sizes: Vec<u64>,
    file_var_sizes: Vec<u64>,
}

/// A format 1 or 2 metadata tile as a nom parser: the version, the
/// non-empty domain (after its `u64` size: empty, or a range per dimension),
/// the MBRs (after their `u64` count), the bounding coordinates (skipped),
/// the tile offsets of each of `attrs` attributes and of the coordinates,
/// each attribute's var offsets and var sizes (each array after its `u64`
/// count), the last tile's cell count and the file sizes.
fn legacy_metadata<'a, 'd>(
    dims: &'d [Dimension],
    attrs: usize,
) -> impl Fn(&'a [u8]) -> PResult<'a, LegacyMetadata> + 'd {
    move |i| {
        let (i, version) = u32_le("version number")(i)?;
        // A range per dimension: its two coordinates, fixed-sized.
        let pair: u64 = dims.iter().map(|d| 2 * d.coord_size()).sum();
        let ranges = |b: &[u8]| -> Vec<Range1D> {
            let mut at = 0;
            dims.iter()
                .map(|d| {
                    let s = d.coord_size() as usize;
                    let r = Range1D {
                        lo: b[at..at + s].to_vec(),
                        hi: b[at + s..at + 2 * s].to_vec(),
                    };
                    at += 2 * s;
                    r
                })
                .collect()
        };
        let (rest, size) = u64_le("non-empty domain size")(i)?;
        let (rest, domain) = bytes("non-empty domain", size)(rest)?;
        let non_empty_domain = match size {
            0 => None,
            n if n == pair => Some(ranges(domain)),
            n => {
                let why = format!("{n} bytes, expected {pair}");
                return Err(FieldError::invalid(i, "non-empty domain size", why));
            }
        };
        let (i, n) = u64_le("number of MBRs")(rest)?;
        let n = fits(i, "number of MBRs", n, pair.max(1))?;
        let (i, mbrs) = count_exact(map(bytes("MBR", pair), ranges), n)(i)?;
        let (i, bounding) = u64_le("number of bounding coords")(i)?;
        let (i, _) = bytes("bounding coords", bounding.saturating_mul(pair))(i)?;
        let (i, offsets) = count_exact(counted_u64s("tile offsets", "tile offsets"), attrs + 1)(i)?;
        let (i, var_offsets) =
            count_exact(counted_u64s("tile var offsets", "tile var offsets"), attrs)(i)?;
        let (i, var_sizes) =
            count_exact(counted_u64s("tile var sizes", "tile var sizes"), attrs)(i)?;
        let (i, last_tile_cell_num) = u64_le("last tile cell num")(i)?;
        let (i, file_sizes) = u64s("file sizes", attrs as u64 + 1)(i)?;
        let (i, file_var_sizes) = u64s("file var sizes", attrs as u64)(i)?;
        let m = LegacyMetadata {
            version: FormatVersion::new(version),
            non_empty_domain,
            mbrs,
            offsets,
            var_offsets,
            var_sizes,
            last_tile_cell_num,
            file_sizes,
            file_var_sizes,
        };
        Ok((i, m))
    }
}
