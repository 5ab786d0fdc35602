//! The sections of fragment metadata the footer points to, read lazily
//! and one field at a time: R-tree, tile offsets and sizes, tile
//! metadata, summaries, processed conditions.

use super::*;
use nom::multi::count as count_exact;
use tessera_tile::generic::header_sizes;
use tessera_tile::parse::{counted_u64s, fits, parse, sized_text, u64_le};

impl FragmentMetadata {
    /// The bytes of the generic tile holding a section, as stored.
    fn read_section(
        &self,
        storage: &dyn Storage,
        offset: u64,
        section: &str,
    ) -> Result<Vec<u8>, FragmentError> {
        let file = self.path.join(FRAGMENT_METADATA_FILE);
        let within = |e: FragmentError| e.within(&self.name, section);
        let end = offset
            .checked_add(BASE_SIZE)
            .filter(|e| *e <= self.metadata_file_size)
            .ok_or_else(|| {
                within(FragmentError::invalid(
                    FRAGMENT_METADATA_FILE,
                    format!(
                        "section offset {offset} is past the end of the file ({} bytes)",
                        self.metadata_file_size
                    ),
                ))
            })?;
        // Sections lie back to back: the next known section (or the footer)
        // bounds this one, so one request usually reads it whole. The
        // header read from those bytes still decides its size.
        let hint = self.section_end(offset).unwrap_or(end).max(end);
        let head = storage
            .read_range(&file, offset..hint)
            .map_err(|e| within(e.into()))?;
        let stop = self.section_stop(offset, &head, section)?;
        Ok(if stop <= hint {
            let mut head = head;
            head.truncate((stop - offset) as usize);
            head
        } else {
            storage
                .read_range(&file, offset..stop)
                .map_err(|e| within(e.into()))?
        })
    }

    /// Where the generic tile at `offset` ends, from its header (the first
    /// bytes of `head`), checked against the file's size.
    pub(super) fn section_stop(
        &self,
        offset: u64,
        head: &[u8],
        section: &str,
    ) -> Result<u64, FragmentError> {
        let within = |e: FragmentError| e.within(&self.name, section);
        let ((persisted, fp), _) = parse(head, "generic tile header", offset, header_sizes)
            .map_err(|e| within(e.into()))?;
        let fp = fp as u64;
        let total = BASE_SIZE
            .checked_add(fp)
            .and_then(|x| x.checked_add(persisted));
        total
            .and_then(|t| offset.checked_add(t))
            .filter(|s| *s <= self.metadata_file_size)
            .ok_or_else(|| {
                within(FragmentError::invalid(
                    FRAGMENT_METADATA_FILE,
                    format!("generic tile at {offset} runs past the end of the file"),
                ))
            })
    }

    /// The offset of the first section (or the footer) after `offset`, as
    /// the footer records them; the file's end if none is. `None` when
    /// neither is known (a consolidated footer leaves the file's size unasked).
    pub(super) fn section_end(&self, offset: u64) -> Option<u64> {
        let known_size = self.metadata_file_size != u64::MAX;
        self.section_offsets()
            .chain(known_size.then(|| self.metadata_file_size.saturating_sub(self.footer.size)))
            .filter(|&o| o > offset && o <= self.metadata_file_size)
            .min()
            .or(known_size.then_some(self.metadata_file_size))
    }

    /// Where the footer says each section starts.
    fn section_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        let f = &self.footer;
        let global = f
            .tile_global_order_offsets
            .iter()
            .flat_map(|(a, b)| a.iter().chain(b));
        std::iter::once(&f.rtree_offset)
            .chain(&f.tile_offsets)
            .chain(&f.tile_var_offsets)
            .chain(&f.tile_var_sizes)
            .chain(&f.tile_validity_offsets)
            .chain(&f.tile_min_offsets)
            .chain(&f.tile_max_offsets)
            .chain(&f.tile_sum_offsets)
            .chain(&f.tile_null_count_offsets)
            .chain(&f.fragment_summary_offset)
            .chain(&f.processed_conditions_offset)
            .chain(global)
            .copied()
    }

    /// Keeps, for the lazy loaders, the sections that lie whole in
    /// `bytes`, the file's bytes from `start` (the tail read for the
    /// footer, which holds a small file whole): they are not read again.
    pub(super) fn hold_sections_in(&self, start: u64, bytes: &[u8]) {
        let offsets: Vec<u64> = self.section_offsets().filter(|&o| o >= start).collect();
        for offset in offsets {
            let Some(end) = self.section_end(offset) else {
                continue;
            };
            let (a, b) = (
                (offset - start) as usize,
                end.saturating_sub(start) as usize,
            );
            if let Some(section) = bytes.get(a..b) {
                self.hold_section(offset, section.to_vec());
            }
        }
    }

    /// Drops the sections [`hold_sections_in`](Self::hold_sections_in)
    /// kept: they are read when first used.
    pub(crate) fn forget_held_sections(&self) {
        self.reads.lock().read.clear();
    }

    /// Keeps `bytes`, read from `offset` on, as the section there if its
    /// header shows they hold it whole (else the section is read on first
    /// use, and any error named then).
    pub(super) fn hold_section(&self, offset: u64, mut bytes: Vec<u8>) {
        let Ok(stop) = self.section_stop(offset, &bytes, "section read ahead") else {
            return;
        };
        let len = (stop - offset) as usize;
        if len > bytes.len() {
            return;
        }
        bytes.truncate(len);
        self.reads
            .lock()
            .read
            .entry(offset)
            .or_insert_with(|| Arc::new(bytes));
    }

    /// The value of the section at `offset`, read and decoded on first use
    /// and kept. A thread asking while another reads it waits for those
    /// bytes rather than reading them again (unless it is the reading
    /// thread itself, come back through a rayon job); threads asking at
    /// once may each decode them, and the first value is kept.
    fn lazy<'s, T>(
        &self,
        storage: &dyn Storage,
        slot: &'s OnceLock<T>,
        offset: u64,
        section: &str,
        parse: impl FnOnce(&[u8]) -> Result<T, FragmentError>,
    ) -> Result<&'s T, FragmentError> {
        if let Some(v) = slot.get() {
            return Ok(v);
        }
        let me = std::thread::current().id();
        let mut state = self.reads.lock();
        let bytes = loop {
            // Checked under the lock: the value is kept before its bytes
            // are dropped, so a thread finding neither reads them itself.
            if let Some(v) = slot.get() {
                return Ok(v);
            }
            if let Some(b) = state.read.get(&offset) {
                break b.clone();
            }
            match state.reading.get(&offset) {
                Some(t) if *t != me => {
                    state = self
                        .reads
                        .done
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
                reading => {
                    let mine = reading.is_none();
                    if mine {
                        state.reading.insert(offset, me);
                    }
                    drop(state);
                    let read = self.read_section(storage, offset, section);
                    state = self.reads.lock();
                    if mine {
                        state.reading.remove(&offset);
                    }
                    self.reads.done.notify_all();
                    let b = Arc::new(read?);
                    state.read.insert(offset, b.clone());
                    break b;
                }
            }
        };
        drop(state);
        let value = read_generic_tile(&bytes, self.key.as_ref(), offset)
            .map_err(|e| FragmentError::from(e).within(&self.name, section))
            .and_then(|tile| parse(&tile.data));
        let kept = value.map(|v| slot.get_or_init(|| v));
        self.reads.lock().read.remove(&offset);
        kept
    }

    /// The R-tree (read on first use).
    pub fn rtree(&self, storage: &dyn Storage) -> Result<&RTree, FragmentError> {
        let offset = self.footer.rtree_offset;
        self.lazy(storage, &self.rtree, offset, "R-tree", |data| {
            RTree::parse(data, self.version(), &self.schema.dimensions)
                .map_err(|e| e.within(&self.name, "R-tree"))
        })
    }

    fn u64_section(
        &self,
        storage: &dyn Storage,
        field: usize,
        which: usize,
        offsets: &[u64],
        section: &'static str,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        let slot = &self
            .offsets
            .get(field)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no field {field}")))?[which];
        if let Some(v) = slot.get() {
            // Formats before the footer fill these when the metadata loads.
            return Ok(v.clone());
        }
        let off = *offsets.get(field).ok_or_else(|| {
            FragmentError::invalid(&self.name, format!("no {section} for field {field}"))
        })?;
        self.lazy(storage, slot, off, section, |data| {
            let values = counted_u64s("number of values", "values");
            let (v, _) = parse(data, section, 0, values)
                .map_err(|e| FragmentError::from(e).within(&self.name, section))?;
            Ok(Arc::new(v))
        })
        .cloned()
    }

    /// Names of the delete and update commits already applied to this
    /// fragment (format 16 and later; read on first use).
    pub fn processed_conditions(&self, storage: &dyn Storage) -> Result<&[String], FragmentError> {
        let Some(off) = self.footer.processed_conditions_offset else {
            return Ok(self.processed.get_or_init(Vec::new));
        };
        let section = "processed conditions";
        self.lazy(storage, &self.processed, off, section, |data| {
            let names = |i| {
                let (i, n) = u64_le("number of processed conditions")(i)?;
                // Each name takes at least its 8-byte size.
                let n = fits(i, "number of processed conditions", n, 8)?;
                count_exact(sized_text("condition size", "condition"), n)(i)
            };
            parse(data, section, 0, names)
                .map(|(names, _)| names)
                .map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .map(Vec::as_slice)
    }

    /// Bytes of one value of a field's tile bounds; `None` when var-sized.
    fn bound_cell_size(&self, f: Field) -> Result<Option<u64>, FragmentError> {
        Ok(match f {
            Field::Attribute(i) => {
                let a = &self.schema.attributes[i];
                (!a.is_var()).then(|| a.cell_size())
            }
            Field::Dimension(j) => {
                let d = &self.schema.dimensions[j];
                (!d.is_var()).then(|| d.coord_size())
            }
            Field::Timestamps | Field::DeleteTimestamps | Field::DeleteConditionIndex => Some(8),
            Field::Coords => {
                return Err(FragmentError::invalid(
                    &self.name,
                    "zipped coordinates have no tile metadata",
                ))
            }
        })
    }

    fn checked_field(&self, f: Field) -> Result<usize, FragmentError> {
        self.field_index(f)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no field {f:?}")))
    }

    fn bounds_section(
        &self,
        storage: &dyn Storage,
        f: Field,
        which: usize,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        let i = self.checked_field(f)?;
        let cell_size = self.bound_cell_size(f)?;
        let (offsets, section) = if which == 0 {
            (&self.footer.tile_min_offsets, "tile mins")
        } else {
            (&self.footer.tile_max_offsets, "tile maxes")
        };
        let Some(&off) = offsets.get(i) else {
            // Before format 11 there is no tile metadata.
            return Ok(Arc::default());
        };
        self.bounds_slot(storage, &self.bounds[i][which], off, cell_size, section)
    }

    /// A section of per-tile values (mins, maxes, global order bounds) at
    /// `offset`, loaded once into `slot`.
    fn bounds_slot(
        &self,
        storage: &dyn Storage,
        slot: &OnceLock<Arc<TileBounds>>,
        offset: u64,
        cell_size: Option<u64>,
        section: &str,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.lazy(storage, slot, offset, section, |data| {
            TileBounds::parse(data, cell_size)
                .map(Arc::new)
                .map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .cloned()
    }

    /// Per-tile minimum values of a field (format 11 and later; empty before,
    /// and for fields libtiledb keeps none for). Read on first use.
    pub fn tile_mins(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.bounds_section(storage, f, 0)
    }

    /// Per-tile maximum values of a field; see [`tile_mins`](Self::tile_mins).
    pub fn tile_maxes(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.bounds_section(storage, f, 1)
    }

    /// A field's per-tile u64 section (sums, null counts); empty before
    /// format 11, which has no tile metadata.
    fn tile_counts(
        &self,
        storage: &dyn Storage,
        f: Field,
        which: usize,
        offsets: &[u64],
        section: &'static str,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        let i = self.checked_field(f)?;
        if offsets.is_empty() {
            return Ok(Arc::default());
        }
        self.u64_section(storage, i, which, offsets, section)
    }

    /// Per-tile sums of a field, as stored bits (read them with
    /// [`Sum::from_bits`](crate::tile_metadata::Sum::from_bits)); empty before format 11.
    pub fn tile_sums(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.tile_counts(storage, f, 4, &self.footer.tile_sum_offsets, "tile sums")
    }

    /// Per-tile null counts of a field; empty before format 11.
    pub fn tile_null_counts(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.tile_counts(
            storage,
            f,
            5,
            &self.footer.tile_null_count_offsets,
            "tile null counts",
        )
    }

    /// Fragment-level min, max, sum and null count of every field, in
    /// footer order (format 12 and later; empty before). Read on first use.
    pub fn fragment_summary(
        &self,
        storage: &dyn Storage,
    ) -> Result<&[FieldSummary], FragmentError> {
        let Some(off) = self.footer.fragment_summary_offset else {
            return Ok(self.summary.get_or_init(Vec::new));
        };
        let section = "fragment min max sum null count";
        self.lazy(storage, &self.summary, off, section, |data| {
            parse_summary(data, self.footer.tile_offsets.len())
                .map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .map(Vec::as_slice)
    }

    /// One field's fragment-level summary.
    pub fn field_summary(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Option<&FieldSummary>, FragmentError> {
        let i = self.checked_field(f)?;
        Ok(self.fragment_summary(storage)?.get(i))
    }

    /// The first and last coordinates in global order of each tile, for
    /// dimension `dim` (format 23 sparse fragments; `None` when absent).
    pub fn tile_global_order_bounds(
        &self,
        storage: &dyn Storage,
        dim: usize,
    ) -> Result<Option<GlobalOrderBounds>, FragmentError> {
        let Some((mins, maxes)) = &self.footer.tile_global_order_offsets else {
            return Ok(None);
        };
        let d = self
            .schema
            .dimensions
            .get(dim)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no dimension {dim}")))?;
        let cell_size = (!d.is_var()).then(|| d.coord_size());
        let load = |which: usize, offsets: &[u64], section: &'static str| {
            let off = *offsets.get(dim).ok_or_else(|| {
                FragmentError::invalid(&self.name, format!("no {section} for dimension {dim}"))
            })?;
            self.bounds_slot(
                storage,
                &self.global_order[dim][which],
                off,
                cell_size,
                section,
            )
        };
        let lo = load(0, mins, "tile global order mins")?;
        let hi = load(1, maxes, "tile global order maxes")?;
        Ok(Some((lo, hi)))
    }

    /// Offsets of the tiles of a field's file.
    pub fn tile_offsets(
        &self,
        storage: &dyn Storage,
        field: usize,
        kind: FileKind,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        match kind {
            FileKind::Fixed => {
                self.u64_section(storage, field, 0, &self.footer.tile_offsets, "tile offsets")
            }
            FileKind::Var => self.u64_section(
                storage,
                field,
                1,
                &self.footer.tile_var_offsets,
                "tile var offsets",
            ),
            FileKind::Validity => self.u64_section(
                storage,
                field,
                2,
                &self.footer.tile_validity_offsets,
                "tile validity offsets",
            ),
        }
    }

    /// Unfiltered sizes of a var-sized field's value tiles.
    pub fn tile_var_sizes(
        &self,
        storage: &dyn Storage,
        field: usize,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.u64_section(
            storage,
            field,
            3,
            &self.footer.tile_var_sizes,
            "tile var sizes",
        )
    }

    /// Size of a field's file, from the footer.
    pub fn file_size(&self, field: usize, kind: FileKind) -> u64 {
        let v = match kind {
            FileKind::Fixed => &self.footer.file_sizes,
            FileKind::Var => &self.footer.file_var_sizes,
            FileKind::Validity => &self.footer.file_validity_sizes,
        };
        v.get(field).copied().unwrap_or(0)
    }

    /// The byte range of tile `t` in a field's file.
    pub fn tile_range(
        &self,
        storage: &dyn Storage,
        field: usize,
        kind: FileKind,
        t: u64,
    ) -> Result<std::ops::Range<u64>, FragmentError> {
        let offs = self.tile_offsets(storage, field, kind)?;
        let t = t as usize;
        let start = *offs.get(t).ok_or_else(|| {
            FragmentError::invalid(
                &self.name,
                format!("tile {t} is past the {} tile offsets", offs.len()),
            )
        })?;
        let end = offs
            .get(t + 1)
            .copied()
            .unwrap_or_else(|| self.file_size(field, kind));
        if end < start {
            return Err(FragmentError::invalid(
                &self.name,
                format!("tile offsets decrease at tile {t} ({start} then {end})"),
            ));
        }
        // Readers allocate what a range spans before reading it: a range
        // no tile can fill is corruption, not a request for that memory.
        if end - start > MAX_FILTERED_TILE {
            return Err(FragmentError::invalid(
                &self.name,
                format!(
                    "tile {t} spans {} bytes on disk ({start}..{end}), more than a tile may hold",
                    end - start
                ),
            ));
        }
        Ok(start..end)
    }
}
