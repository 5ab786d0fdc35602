//! Fragment metadata of formats 1 and 2: one generic tile for the whole file.

use super::*;

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
        let bytes = storage
            .read_all(&file)
            .map_err(|e| FragmentError::io(&file, e))?;
        let within = |e: FragmentError| e.within(&name, "legacy fragment metadata");
        let tile = read_generic_tile(&bytes, key.as_ref(), 0).map_err(|e| within(e.into()))?;
        let mut r = Reader::new(&tile.data, "legacy fragment metadata");
        let p = |e: tessera_tile::ParseError| within(FragmentError::from(e));
        let version = FormatVersion::new(r.u32("version number").map_err(p)?);
        let dims = &schema.dimensions;
        let pair: u64 = dims.iter().map(|d| 2 * d.coord_size()).sum();
        let split = |b: &[u8]| -> Vec<tessera_schema::Range1D> {
            let mut out = Vec::new();
            let mut o = 0usize;
            for d in dims {
                let s = d.coord_size() as usize;
                out.push(tessera_schema::Range1D {
                    lo: b[o..o + s].to_vec(),
                    hi: b[o + s..o + 2 * s].to_vec(),
                });
                o += 2 * s;
            }
            out
        };
        let ned_size = r.u64("non-empty domain size").map_err(p)?;
        let ned = r.bytes("non-empty domain", ned_size).map_err(p)?;
        let non_empty_domain = if ned_size == 0 {
            None
        } else if ned_size == pair {
            Some(split(ned))
        } else {
            return Err(within(FragmentError::invalid(
                &name,
                format!("non-empty domain of {ned_size} bytes, expected {pair}"),
            )));
        };
        let n_mbrs = r.u64("number of MBRs").map_err(p)?;
        let n = r
            .check_count("number of MBRs", n_mbrs, pair.max(1))
            .map_err(p)?;
        let mut leaves = Vec::with_capacity(n);
        for _ in 0..n {
            leaves.push(split(r.bytes("MBR", pair).map_err(p)?));
        }
        let n_bounding = r.u64("number of bounding coords").map_err(p)?;
        r.skip("bounding coords", n_bounding.saturating_mul(pair))
            .map_err(p)?;
        let attrs = schema.attributes.len();
        let mut arrays = |count: usize, what: &str| -> Result<Vec<Vec<u64>>, FragmentError> {
            (0..count)
                .map(|_| {
                    let k = r.u64(what).map_err(p)?;
                    r.u64_array(what, k).map_err(p)
                })
                .collect()
        };
        let offsets = arrays(attrs + 1, "tile offsets")?;
        let var_offsets = arrays(attrs, "tile var offsets")?;
        let var_sizes = arrays(attrs, "tile var sizes")?;
        let last_tile_cell_num = r.u64("last tile cell num").map_err(p)?;
        let file_sizes = r.u64_array("file sizes", attrs as u64 + 1).map_err(p)?;
        let file_var_sizes = r.u64_array("file var sizes", attrs as u64).map_err(p)?;
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
