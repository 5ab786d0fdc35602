//! A sparse fragment written as its cells come, already in the array's
//! global order (a consolidation reads them so, batch after batch): each
//! tile is filtered and appended to the field's files as soon as it is
//! full, so only the cells of one batch and of the tile being filled are
//! held, with the tile metadata (offsets, MBRs, statistics) of the tiles
//! written. The metadata file and the commit come at the end, as for a
//! fragment written whole.

use super::appended::{AppendedFragment, Facts};
use super::{FragmentWriter, RTREE_FANOUT};
use crate::WriteError;
use std::ops::Range;
use tessera_cells::Column;
use tessera_fragment::RTree;
use tessera_schema::Range1D;
use tessera_tile::ArrayType;

/// Writes one sparse fragment from cells given in global order; see the
/// module. Built from a [`FragmentWriter`] (its array, schema, fields and
/// options), which holds the cells not yet in a tile.
///
/// Memory holds one batch and one tile, however many cells the fragment
/// gets. The cells must come in the array's global order, without
/// duplicates where the schema allows none: the caller sorts them (a
/// caller that cannot writes with [`FragmentWriter`], which sorts). Each
/// batch's first cell is checked against the previous batch's last.
///
/// ```
/// use tessera_cells::Column;
/// use tessera_schema::json::schema_from_json;
/// use tessera_write::{create_array, FragmentWriter, SortedFragmentWriter, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-sorted-{}", std::process::id()));
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "sparse", "capacity": 2,
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
///     "attributes": [{"name": "v", "type": "INT32"}],
/// })).unwrap();
/// create_array(&dir, &doc, None, None).unwrap();
/// let column = |name: &str, t, data: Vec<u8>| Column {
///     name: name.into(), is_dimension: name == "x", datatype: t,
///     cell_val_num: tessera_schema::CellValNum::Fixed(1), data, offsets: None, validity: None,
/// };
/// let bytes = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
/// let mut w = SortedFragmentWriter::new(FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap()).unwrap();
/// for batch in [[1i64, 4, 5], [7, 30, 31]] {
///     w.write_owned(vec![
///         column("x", tessera_tile::Datatype::Int64, bytes(&batch)),
///         column("v", tessera_tile::Datatype::Int32, batch.iter().flat_map(|x| (*x as i32).to_le_bytes()).collect()),
///     ]).unwrap();
/// }
/// // A batch starting before the last cell written is refused.
/// let late = vec![column("x", tessera_tile::Datatype::Int64, bytes(&[2])),
///                 column("v", tessera_tile::Datatype::Int32, 2i32.to_le_bytes().to_vec())];
/// assert!(w.write_owned(late).is_err());
/// assert_eq!(w.finish().unwrap().len(), 1);
/// let array = tessera_fragment::OpenArray::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert_eq!(array.fragments[0].total_cell_num(), 6);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct SortedFragmentWriter {
    w: FragmentWriter,
    out: AppendedFragment,
    mbrs: Vec<Vec<Range1D>>,
    /// The last cell added: its coordinate on each dimension.
    last: Option<Vec<Vec<u8>>>,
}

impl SortedFragmentWriter {
    /// The fragment's folder and data files, created now (invisible until
    /// committed).
    pub fn new(w: FragmentWriter) -> Result<SortedFragmentWriter, WriteError> {
        if w.schema.array_type != ArrayType::Sparse {
            return Err(WriteError::Input(
                "cells in global order are written into sparse fragments only".into(),
            ));
        }
        let out = AppendedFragment::create(&w, |_| true)?;
        Ok(SortedFragmentWriter {
            w,
            out,
            mbrs: Vec::new(),
            last: None,
        })
    }

    /// Adds cells that follow, in global order, those added before; every
    /// full tile is written out. A batch whose first cell comes before the
    /// last cell added is refused, and nothing of it is added.
    pub fn write_owned(&mut self, columns: Vec<Column>) -> Result<(), WriteError> {
        let dims: Vec<&Column> = self
            .w
            .schema
            .dimensions
            .iter()
            .filter_map(|d| columns.iter().find(|c| c.name == d.name))
            .collect();
        let n = dims.first().map_or(0, |c| c.cell_count());
        if n == 0 {
            return Ok(());
        }
        if dims.len() == self.w.schema.dimensions.len() {
            let order = tessera_cells::order::GlobalOrder::new(&self.w.schema);
            if let Some(last) = &self.last {
                let first = |j: usize| dims[j].value(0);
                let before = |j: usize| last[j].as_slice();
                if order.compare(&first, &before) == std::cmp::Ordering::Less {
                    return Err(WriteError::Input(
                        "cells must come in the array's global order: a batch starts before the last cell written".into(),
                    ));
                }
            }
            self.last = Some(dims.iter().map(|c| c.value(n - 1).to_vec()).collect());
        }
        self.w.write_owned(columns)?;
        self.flush(false)
    }

    /// The schema the fragment is written with (the array's newest).
    pub fn schema(&self) -> &tessera_schema::ArraySchema {
        self.w.schema()
    }

    /// Writes the last tile, the fragment metadata and the commit; returns
    /// the fragment's name (none when no cell was written).
    pub fn finish(self) -> Result<Vec<String>, WriteError> {
        self.finish_observed(&mut || {})
    }

    /// Writes out the full tiles held (with `all`, the last partial one too).
    fn flush(&mut self, all: bool) -> Result<(), WriteError> {
        let capacity = self.w.schema.capacity.max(1) as usize;
        let held = self.w.cells;
        let whole = match all {
            true => held,
            false => held / capacity * capacity,
        };
        if whole == 0 {
            return Ok(());
        }
        self.w.check_domain()?;
        let tiles: Vec<Range<usize>> = (0..whole)
            .step_by(capacity)
            .map(|s| s..(s + capacity).min(whole))
            .collect();
        let w = &self.w;
        self.out.append(w, &w.buffers, &tiles)?;
        let dims = w.schema.dimensions.len();
        for r in &tiles {
            self.mbrs.push(w.mbr(&w.buffers[..dims], r.clone()));
        }
        let sizes: Vec<usize> = w.fields.iter().map(|f| f.cell_size() as usize).collect();
        for (b, cs) in self.w.buffers.iter_mut().zip(sizes) {
            b.drain_front(whole, cs);
        }
        self.w.cells -= whole;
        self.w.written += whole;
        Ok(())
    }

    /// Writes the last tile and the fragment metadata, calls `written`,
    /// then commits the fragment; returns its name (none when no cell was
    /// written).
    pub(crate) fn finish_observed(
        mut self,
        written: &mut dyn FnMut(),
    ) -> Result<Vec<String>, WriteError> {
        self.flush(true)?;
        if self.w.written == 0 {
            return Ok(Vec::new());
        }
        let rtree = RTree::build(self.mbrs, RTREE_FANOUT, &self.w.schema.dimensions);
        let facts = Facts {
            non_empty_domain: rtree.root_mbr(),
            dense: false,
            last_tile_cell_num: self.out.last_tile_cells(),
        };
        self.out.finish(&self.w, &rtree, facts, written)
    }
}
