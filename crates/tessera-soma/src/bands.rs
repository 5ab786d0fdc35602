//! A 2-D sparse array's cells (an X layer, obsm, obsp) written from a
//! matrix's rows in one fragment: the cells of a band of rows (one tile of
//! `soma_dim_0`) are gathered, sorted into the global order (space tile
//! along `soma_dim_1`, then row, then column) and handed to tessera's
//! [`SortedFragmentWriter`], which writes full tiles as they come. Memory
//! holds one band, whatever the matrix's size.

use crate::SomaError;
use tessera::query::Column;
use tessera::schema::CellValNum;
use tessera::storage::Location;
use tessera::tile::{ArrayType, Datatype, Layout};
use tessera::write::{FragmentWriter, SortedFragmentWriter, WriteOptions};

/// Writes one fragment of a 2-D sparse array with row-major tile and cell
/// orders and int64 dimensions (a SOMA SparseNDArray) from cells whose rows
/// come band after band: see the module.
///
/// ```
/// use tessera_soma::BandWriter;
/// let dir = std::env::temp_dir().join(format!("tessera-doc-bands-{}", std::process::id()));
/// let doc = tessera::schema::json::schema_from_json(&serde_json::json!({
///     "array_type": "sparse", "capacity": 4,
///     "dimensions": [
///         {"name": "soma_dim_0", "type": "INT64", "domain": [0, 99], "tile_extent": 2},
///         {"name": "soma_dim_1", "type": "INT64", "domain": [0, 99], "tile_extent": 2}],
///     "attributes": [{"name": "soma_data", "type": "FLOAT32"}],
/// })).unwrap();
/// tessera::write::create_array(&dir, &doc, None, None).unwrap();
/// let mut w = BandWriter::try_new(&dir, Default::default()).unwrap();
/// // Rows 0 to 2 of a CSR matrix; any order within a band.
/// let values: Vec<u8> = [1f32, 2., 3., 4.].iter().flat_map(|v| v.to_le_bytes()).collect();
/// w.push(&[0, 0, 1, 2], &[5, 0, 1, 3], &values).unwrap();
/// assert_eq!(w.finish().unwrap().len(), 1);
/// let session = tessera::open(&dir, None).unwrap();
/// let r = session.execute(&tessera::ReadRequest::new().layout(tessera::tile::Layout::GlobalOrder)).unwrap();
/// assert_eq!(r.cell_count, 4);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct BandWriter {
    out: SortedFragmentWriter,
    /// `soma_dim_0`'s and `soma_dim_1`'s domain starts and tile extents.
    rows: (i64, i64),
    cols: (i64, i64),
    value_type: Datatype,
    value_size: usize,
    /// The band being gathered, and its cells.
    band: Option<i64>,
    row: Vec<i64>,
    col: Vec<i64>,
    values: Vec<u8>,
    duplicates: bool,
}

/// A dimension's domain start and tile extent, if it is an int64 one.
fn int64_tiling(schema: &tessera::schema::ArraySchema, i: usize) -> Option<(i64, i64)> {
    let d = schema.dimensions.get(i)?;
    if d.datatype != Datatype::Int64 {
        return None;
    }
    let (lo, _) = d.domain_values()?;
    let extent = d.tile_extent_value()?;
    let lo = i64::try_from(lo.as_int()?).ok()?;
    let extent = i64::try_from(extent.as_int()?).ok()?;
    (extent > 0).then_some((lo, extent))
}

impl BandWriter {
    /// A writer of a new fragment of the array at `at`; refused unless the
    /// array is sparse, row-major in tiles and cells, with two int64
    /// dimensions and one attribute of fixed-size values.
    pub fn try_new(
        at: impl Into<Location>,
        options: WriteOptions,
    ) -> Result<BandWriter, SomaError> {
        let w = FragmentWriter::try_new(at, options)?;
        let s = w.schema().clone();
        let unsupported = |why: &str| Err(SomaError::Unsupported(format!("band writes: {why}")));
        if s.array_type != ArrayType::Sparse
            || s.cell_order != Layout::RowMajor
            || s.tile_order != Layout::RowMajor
        {
            return unsupported("the array is not sparse with row-major tiles and cells");
        }
        let (Some(rows), Some(cols), 2) =
            (int64_tiling(&s, 0), int64_tiling(&s, 1), s.dimensions.len())
        else {
            return unsupported("the array has not two tiled int64 dimensions");
        };
        let [a] = s.attributes.as_slice() else {
            return unsupported("the array has not one attribute");
        };
        if a.cell_val_num != CellValNum::Fixed(1) || a.nullable {
            return unsupported("the attribute is not one non-null value a cell");
        }
        let out = SortedFragmentWriter::new(w)?;
        Ok(BandWriter {
            out,
            rows,
            cols,
            value_type: a.datatype,
            value_size: a.datatype.size() as usize,
            band: None,
            row: Vec::new(),
            col: Vec::new(),
            values: Vec::new(),
            duplicates: s.allows_dups,
        })
    }

    /// Adds cells at `rows` and `cols` holding `values` (each the
    /// attribute's bytes, back to back), in any order within a band; a
    /// cell in a later band than those before writes them out, and one in
    /// an earlier band is refused.
    pub fn push(&mut self, rows: &[i64], cols: &[i64], values: &[u8]) -> Result<(), SomaError> {
        if rows.len() != cols.len() || values.len() != rows.len() * self.value_size {
            return Err(SomaError::Invalid(format!(
                "band writes: {} rows, {} columns and {} value bytes do not make cells of {} bytes",
                rows.len(),
                cols.len(),
                values.len(),
                self.value_size
            )));
        }
        let mut start = 0;
        while start < rows.len() {
            let band = (rows[start] - self.rows.0).div_euclid(self.rows.1);
            match self.band {
                Some(b) if band < b => {
                    return Err(SomaError::Invalid(format!(
                        "band writes: row {} comes after rows of a later band",
                        rows[start]
                    )))
                }
                Some(b) if band > b => self.write_band()?,
                _ => {}
            }
            self.band = Some(band);
            // The run of cells in this band.
            let mut end = start + 1;
            while end < rows.len() && (rows[end] - self.rows.0).div_euclid(self.rows.1) == band {
                end += 1;
            }
            self.row.extend_from_slice(&rows[start..end]);
            self.col.extend_from_slice(&cols[start..end]);
            let size = self.value_size;
            self.values
                .extend_from_slice(&values[start * size..end * size]);
            start = end;
        }
        Ok(())
    }

    /// Sorts the band's cells into the global order and writes them.
    fn write_band(&mut self) -> Result<(), SomaError> {
        let n = self.row.len();
        if n == 0 {
            return Ok(());
        }
        let (row, col) = (&self.row, &self.col);
        let (lo, extent) = self.cols;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by_key(|&i| {
            let i = i as usize;
            ((col[i] - lo).div_euclid(extent), row[i], col[i])
        });
        if !self.duplicates {
            if let Some(w) = order.windows(2).find(|w| {
                row[w[0] as usize] == row[w[1] as usize] && col[w[0] as usize] == col[w[1] as usize]
            }) {
                let i = w[0] as usize;
                return Err(SomaError::Invalid(format!(
                    "band writes: cell ({}, {}) is given twice",
                    row[i], col[i]
                )));
            }
        }
        let size = self.value_size;
        let mut dim0 = Vec::with_capacity(n * 8);
        let mut dim1 = Vec::with_capacity(n * 8);
        let mut data = Vec::with_capacity(n * size);
        for &i in &order {
            let i = i as usize;
            dim0.extend_from_slice(&row[i].to_le_bytes());
            dim1.extend_from_slice(&col[i].to_le_bytes());
            data.extend_from_slice(&self.values[i * size..(i + 1) * size]);
        }
        let s = self.out_schema_names();
        let columns = vec![
            Column::fixed_dimension(s[0].as_str(), Datatype::Int64, dim0),
            Column::fixed_dimension(s[1].as_str(), Datatype::Int64, dim1),
            Column::fixed(s[2].as_str(), self.value_type, data),
        ];
        self.out.write_owned(columns)?;
        self.row.clear();
        self.col.clear();
        self.values.clear();
        Ok(())
    }

    /// The schema the fragment is written with (the array's newest).
    pub fn schema(&self) -> &tessera::schema::ArraySchema {
        self.out.schema()
    }

    fn out_schema_names(&self) -> [String; 3] {
        let s = self.out.schema();
        [
            s.dimensions[0].name.clone(),
            s.dimensions[1].name.clone(),
            s.attributes[0].name.clone(),
        ]
    }

    /// Writes the last band, the fragment metadata and the commit; returns
    /// the fragment's name (none when no cell was given).
    pub fn finish(mut self) -> Result<Vec<String>, SomaError> {
        self.write_band()?;
        Ok(self.out.finish()?)
    }
}
