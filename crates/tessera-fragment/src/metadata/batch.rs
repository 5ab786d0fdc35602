//! Sections of many fragments fetched as one batch before a read asks for
//! them, on storage where a request costs a round trip: the lazy loaders
//! then find their bytes already read instead of reading them one
//! fragment and one field at a time, each a round trip after the last.

use super::*;
use std::ops::Range;

/// The sections a read will ask of one fragment's metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SectionWants {
    /// The R-tree (sparse fragments).
    pub rtree: bool,
    /// Fields (the fragment's own numbering) whose tiles are read: their
    /// tile offsets, and var offsets, var sizes and validity offsets where
    /// the field has them.
    pub tiles: Vec<Field>,
    /// Fields whose tile metadata prunes tiles: mins, maxes, null counts
    /// (and sums, of floats).
    pub tile_metadata: Vec<Field>,
    /// The fragment summary.
    pub summary: bool,
    /// The names of the delete and update commits already applied.
    pub processed_conditions: bool,
}

impl FragmentMetadata {
    /// Reads, as one batch, the sections `wants` names of each fragment
    /// that are neither loaded nor already read, where the storage prefers
    /// batches (elsewhere each is read on first use, in parallel). Neighbouring
    /// sections of a file are one request there, and the files' requests
    /// are in flight together. A section that fails to read or whose bytes
    /// do not hold it whole is left to be read, and its error reported, on
    /// first use.
    pub fn fetch_sections(storage: &dyn Storage, wants: &[(&FragmentMetadata, SectionWants)]) {
        if !storage.prefers_batches() {
            return;
        }
        let mut wanted: Vec<(&FragmentMetadata, u64)> = Vec::new();
        let mut requests: Vec<(PathBuf, Range<u64>)> = Vec::new();
        // Before the footer, sections are loaded with the metadata.
        let footed = wants.iter().filter(|(f, _)| f.version().has(gates::FOOTER));
        for (frag, want) in footed {
            let file = frag.path.join(FRAGMENT_METADATA_FILE);
            for offset in frag.unread_sections(want) {
                // Only sections whose end the footer shows: one request
                // then holds them whole.
                let Some(end) = frag.section_end(offset) else {
                    continue;
                };
                if end > offset.saturating_add(BASE_SIZE) {
                    wanted.push((frag, offset));
                    requests.push((file.clone(), offset..end));
                }
            }
        }
        if requests.is_empty() {
            return;
        }
        let Ok(read) = storage.read_batch(&requests) else {
            return;
        };
        for ((frag, offset), bytes) in wanted.into_iter().zip(read) {
            frag.hold_section(offset, bytes);
        }
    }

    /// The offsets of the sections `want` names that are not loaded, not
    /// read and waiting, and not being read; each once.
    fn unread_sections(&self, want: &SectionWants) -> Vec<u64> {
        let f = &self.footer;
        let mut out: Vec<u64> = Vec::new();
        let mut add = |offset: Option<u64>, loaded: bool| {
            if let (Some(o), false) = (offset, loaded) {
                out.push(o);
            }
        };
        add(
            Some(f.rtree_offset),
            !want.rtree || self.rtree.get().is_some(),
        );
        add(
            f.fragment_summary_offset,
            !want.summary || self.summary.get().is_some(),
        );
        add(
            f.processed_conditions_offset,
            !want.processed_conditions || self.processed.get().is_some(),
        );
        let slot_loaded =
            |i: usize, k: usize| self.offsets.get(i).is_none_or(|s| s[k].get().is_some());
        let bound_loaded =
            |i: usize, k: usize| self.bounds.get(i).is_none_or(|s| s[k].get().is_some());
        for &field in &want.tiles {
            let Some(i) = self.field_index(field) else {
                continue;
            };
            let (var, nullable) = self.field_shape(field);
            add(f.tile_offsets.get(i).copied(), slot_loaded(i, 0));
            if var {
                add(f.tile_var_offsets.get(i).copied(), slot_loaded(i, 1));
                add(f.tile_var_sizes.get(i).copied(), slot_loaded(i, 3));
            }
            if nullable {
                add(f.tile_validity_offsets.get(i).copied(), slot_loaded(i, 2));
            }
        }
        for &field in &want.tile_metadata {
            let Some(i) = self.field_index(field) else {
                continue;
            };
            add(f.tile_min_offsets.get(i).copied(), bound_loaded(i, 0));
            add(f.tile_max_offsets.get(i).copied(), bound_loaded(i, 1));
            add(f.tile_null_count_offsets.get(i).copied(), slot_loaded(i, 5));
            // A float field's sums show which tiles may hold a NaN (whose
            // mins and maxes then say nothing).
            if self.is_float(field) {
                add(f.tile_sum_offsets.get(i).copied(), slot_loaded(i, 4));
            }
        }
        let state = self.reads.lock();
        out.retain(|o| !state.read.contains_key(o) && !state.reading.contains_key(o));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a field holds floats.
    fn is_float(&self, field: Field) -> bool {
        let t = match field {
            Field::Attribute(i) => self.schema.attributes.get(i).map(|a| a.datatype),
            Field::Dimension(j) => self.schema.dimensions.get(j).map(|d| d.datatype),
            _ => None,
        };
        let physical = t.map(tessera_tile::Datatype::physical);
        matches!(physical, Some(tessera_tile::datatype::Physical::Float(_)))
    }

    /// Whether a field's values are var-sized, and whether it is nullable.
    fn field_shape(&self, field: Field) -> (bool, bool) {
        match field {
            Field::Attribute(i) => self
                .schema
                .attributes
                .get(i)
                .map_or((false, false), |a| (a.is_var(), a.nullable)),
            Field::Dimension(j) => self
                .schema
                .dimensions
                .get(j)
                .map_or((false, false), |d| (d.is_var(), false)),
            _ => (false, false),
        }
    }
}
