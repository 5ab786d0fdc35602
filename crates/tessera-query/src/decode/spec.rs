//! How a field of a fragment is stored, and one decoded tile of it.

use crate::context::ReadContext;
use tessera_cells::FieldCells;
use tessera_filters::FilterPipeline;
use tessera_fragment::{Field, FileKind, FragmentMetadata};
use tessera_schema::{ArraySchema, CellValNum};
use tessera_tile::Datatype;

/// How a field of a fragment is stored.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// Which field.
    pub field: Field,
    /// Its datatype.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// Its filter pipeline.
    pub filters: FilterPipeline,
    /// Whether it has a validity file.
    pub nullable: bool,
}

impl FieldSpec {
    /// The spec of the attribute or dimension `name` of the fragment's
    /// schema; `None` when the fragment lacks it (schema evolution), or
    /// has an attribute of that name with other cells than `schema`'s (the
    /// array's) says: one dropped and added back, which the fragment holds
    /// none of.
    pub fn named(frag: &FragmentMetadata, schema: &ArraySchema, name: &str) -> Option<FieldSpec> {
        let s = &frag.schema;
        if let Some(wanted) = schema.attribute(name) {
            return (frag.own_attribute(wanted)).map(|i| FieldSpec::of(frag, Field::Attribute(i)));
        }
        s.dimensions
            .iter()
            .position(|d| d.name == name)
            .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
    }

    /// The spec of an attribute, dimension or special field of the fragment's schema.
    pub fn of(frag: &FragmentMetadata, field: Field) -> FieldSpec {
        let s = &frag.schema;
        match field {
            Field::Attribute(i) => {
                let a = &s.attributes[i];
                FieldSpec {
                    field,
                    datatype: a.datatype,
                    cell_val_num: a.cell_val_num,
                    filters: a.filters.clone(),
                    nullable: a.nullable,
                }
            }
            Field::Dimension(j) => {
                let d = &s.dimensions[j];
                FieldSpec {
                    field,
                    datatype: d.datatype,
                    cell_val_num: d.cell_val_num,
                    filters: d.filters.clone(),
                    nullable: false,
                }
            }
            _ => FieldSpec {
                field,
                datatype: Datatype::UInt64,
                cell_val_num: CellValNum::Fixed(1),
                filters: s.coords_filters.clone(),
                nullable: false,
            },
        }
    }

    /// Bytes of one fixed-sized cell (of one value for var-sized fields).
    pub fn cell_size(&self) -> u64 {
        match self.cell_val_num {
            CellValNum::Fixed(n) => n as u64 * self.datatype.size(),
            CellValNum::Var => self.datatype.size(),
        }
    }
}

/// One decoded tile of one field.
#[derive(Debug, Clone, Default)]
pub struct FieldTile {
    /// Number of cells.
    pub cells: u64,
    /// Fixed-sized cells, or the values of var-sized ones.
    pub data: Vec<u8>,
    /// Start of each var-sized cell in `data`, plus a final end offset.
    pub offsets: Option<Vec<u64>>,
    /// One byte per cell, 0 for null.
    pub validity: Option<Vec<u8>>,
    /// Bytes per fixed-sized cell.
    pub cell_size: usize,
}

impl FieldTile {
    /// The bytes of cell `i`.
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => &self.data[o[i] as usize..o[i + 1] as usize],
            None => &self.data[i * self.cell_size..(i + 1) * self.cell_size],
        }
    }
    /// Whether cell `i` is valid (non-null).
    #[inline]
    pub fn valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i] != 0)
    }

    /// The tile's cells as a condition's selection reads them.
    pub fn field_cells(&self) -> FieldCells<'_> {
        let (offsets, validity) = (self.offsets.as_deref(), self.validity.as_deref());
        FieldCells::of_buffers(&self.data, offsets, self.cell_size, validity)
    }
}

/// Calls `copy(from, to)` for each run of consecutive cells in `picked`
/// (ascending), so that runs copy as one slice.
pub(super) fn for_runs(picked: &[u32], mut copy: impl FnMut(usize, usize)) {
    let mut i = 0;
    while i < picked.len() {
        let from = picked[i] as usize;
        let mut to = from + 1;
        i += 1;
        while i < picked.len() && picked[i] as usize == to {
            to += 1;
            i += 1;
        }
        copy(from, to);
    }
}

/// The cells `picked` (ascending) of fixed-sized values `data` (`w` bytes
/// each) and of their validity, as a tile of their own.
pub fn pick_fixed(data: &[u8], validity: Option<&[u8]>, w: usize, picked: &[u32]) -> FieldTile {
    let mut out = Vec::with_capacity(picked.len() * w);
    for_runs(picked, |a, b| out.extend_from_slice(&data[a * w..b * w]));
    FieldTile {
        cells: picked.len() as u64,
        data: out,
        offsets: None,
        validity: validity.map(|v| picked.iter().map(|&i| v[i as usize]).collect()),
        cell_size: w,
    }
}

impl FieldTile {
    /// The cells `picked` (ascending) of this tile, as a tile of their own.
    pub fn pick(&self, picked: &[u32]) -> FieldTile {
        let Some(o) = &self.offsets else {
            return pick_fixed(&self.data, self.validity.as_deref(), self.cell_size, picked);
        };
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(picked.len() + 1);
        offsets.push(0);
        for_runs(picked, |a, b| {
            let start = data.len() as u64;
            data.extend_from_slice(&self.data[o[a] as usize..o[b] as usize]);
            offsets.extend(o[a + 1..=b].iter().map(|x| x - o[a] + start));
        });
        FieldTile {
            cells: picked.len() as u64,
            data,
            offsets: Some(offsets),
            validity: self
                .validity
                .as_ref()
                .map(|v| picked.iter().map(|&i| v[i as usize]).collect()),
            cell_size: self.cell_size,
        }
    }
}
/// The files a field's tiles live in, in the order they are read.
pub(super) fn files_of(frag: &FragmentMetadata, spec: &FieldSpec) -> Vec<FileKind> {
    let mut kinds = Vec::with_capacity(3);
    if spec.cell_val_num.is_var() {
        kinds.push(FileKind::Var);
        if !spec
            .filters
            .offsets_in_data(spec.datatype, frag.schema.version)
        {
            kinds.push(FileKind::Fixed);
        }
    } else {
        kinds.push(FileKind::Fixed);
    }
    if spec.nullable {
        kinds.push(FileKind::Validity);
    }
    kinds
}

impl FieldTile {
    /// Hands the tile's buffers back to `ctx` for the next tiles to reuse.
    pub(crate) fn recycle(self, ctx: &ReadContext) {
        ctx.tiles.give(self.data);
        if let Some(v) = self.validity {
            ctx.tiles.give(v);
        }
    }
}
