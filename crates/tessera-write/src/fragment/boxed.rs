//! Dense writes given as a box and its cells in row-major order, without
//! coordinates: what libtiledb's dense writes take (a subarray and one
//! buffer per attribute), and what a dense consolidation reads back. No
//! coordinate is held, checked or sorted; the box alone places the cells.

use super::FragmentWriter;
use crate::WriteError;
use tessera_cells::Column;
use tessera_schema::Value;
use tessera_tile::ArrayType;

impl FragmentWriter {
    /// Adds the cells of a dense write given as a box: `bounds` holds the
    /// first and last coordinate of each dimension (inclusive, in the
    /// schema's order), `columns` one column per attribute (by name; a
    /// nullable one left out is null) with the box's cells in row-major
    /// order. A box write is the writer's only write; the box must lie in
    /// the domain (and in the current domain where one is set).
    ///
    /// ```
    /// use tessera_cells::Column;
    /// use tessera_schema::Value;
    /// use tessera_schema::json::schema_from_json;
    /// use tessera_write::{create_array, FragmentWriter, WriteOptions};
    /// let dir = std::env::temp_dir().join(format!("tessera-doc-box-{}", std::process::id()));
    /// let doc = schema_from_json(&serde_json::json!({
    ///     "array_type": "dense",
    ///     "dimensions": [
    ///         {"name": "r", "type": "INT32", "domain": [1, 4], "tile_extent": 2},
    ///         {"name": "c", "type": "INT32", "domain": [1, 4], "tile_extent": 2},
    ///     ],
    ///     "attributes": [{"name": "v", "type": "FLOAT64"}],
    /// })).unwrap();
    /// create_array(&dir, &doc, None, None).unwrap();
    /// // Rows 2 and 3, columns 1 to 3: six cells, row by row.
    /// let v = Column {
    ///     name: "v".into(), is_dimension: false, datatype: tessera_tile::Datatype::Float64,
    ///     cell_val_num: tessera_schema::CellValNum::Fixed(1),
    ///     data: [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|x| x.to_le_bytes()).collect(),
    ///     offsets: None, validity: None,
    /// };
    /// let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
    /// w.write_box(&[(2, 3), (1, 3)], vec![v]).unwrap();
    /// w.finish().unwrap();
    /// let array = tessera_fragment::OpenArray::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
    /// let box_written = vec![(Value::Int(2), Value::Int(3)), (Value::Int(1), Value::Int(3))];
    /// assert_eq!(array.non_empty_domain(), Some(box_written));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn write_box(
        &mut self,
        bounds: &[(i128, i128)],
        mut columns: Vec<Column>,
    ) -> Result<(), WriteError> {
        if self.schema.array_type != ArrayType::Dense {
            return Err(WriteError::Input(
                "a box of cells is written to dense arrays only".into(),
            ));
        }
        if self.cells > 0 || !self.parts.is_empty() || self.dense_box.is_some() {
            return Err(WriteError::Input(
                "a box write is the only write of its fragment writer".into(),
            ));
        }
        if let Some(c) = columns.iter().find(|c| self.is_dimension(&c.name)) {
            return Err(WriteError::Input(format!(
                "column `{}`: the box gives the coordinates, dimensions take no column",
                c.name
            )));
        }
        let axes = super::dense::box_axes(&self.schema, bounds)?;
        let n = self.check_fields(&columns, false)?;
        if super::dense::box_cells(&axes) != n as u64 {
            return Err(WriteError::Input(format!(
                "the box {bounds:?} does not hold the {n} cells of the columns"
            )));
        }
        self.check_box_in_current_domain(bounds)?;
        for (f, buf) in self.fields.iter().zip(&mut self.buffers) {
            if f.is_dimension {
                continue;
            }
            match columns.iter().position(|c| c.name == f.name) {
                Some(i) => buf.append_owned(columns.swap_remove(i), n),
                None => buf.append(&super::null_column(f, n), n),
            }
        }
        self.cells = n;
        self.dense_box = Some(bounds.to_vec());
        self.keep_to_budget()
    }

    fn is_dimension(&self, name: &str) -> bool {
        self.schema.dimensions.iter().any(|d| d.name == name)
    }

    /// libtiledb refuses a write outside the current domain.
    pub(super) fn check_box_in_current_domain(
        &self,
        bounds: &[(i128, i128)],
    ) -> Result<(), WriteError> {
        let Some(rect) = self.current_domain() else {
            return Ok(());
        };
        for ((d, r), &(lo, hi)) in self.schema.dimensions.iter().zip(rect).zip(bounds) {
            let int = |b: &[u8]| Value::decode(d.datatype, b).as_int();
            let (Some(a), Some(b)) = (int(&r.lo), int(&r.hi)) else {
                continue;
            };
            if lo < a || hi > b {
                return Err(WriteError::Input(format!(
                    "dimension `{}`: the box [{lo}, {hi}] is outside the current domain [{a}, {b}]",
                    d.name
                )));
            }
        }
        Ok(())
    }
}
