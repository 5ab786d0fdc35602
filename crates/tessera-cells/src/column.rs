//! A column of cells: one field's values, offsets and validity, what
//! reads return and writes take.

use tessera_schema::CellValNum;
use tessera_tile::Datatype;

/// One field of a result.
#[derive(Debug, Clone)]
pub struct Column {
    /// Field name.
    pub name: String,
    /// True for dimensions.
    pub is_dimension: bool,
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// The values of every cell, concatenated.
    pub data: Vec<u8>,
    /// For var-sized fields, the start of each cell in `data` plus a final end offset.
    pub offsets: Option<Vec<u64>>,
    /// For nullable attributes, one byte per cell (0 for null).
    pub validity: Option<Vec<u8>>,
}

impl Column {
    /// An attribute's column of one fixed-sized value per cell, never
    /// null: `data` holds the values one after the other.
    ///
    /// ```
    /// use tessera_cells::Column;
    /// use tessera_tile::Datatype;
    /// let c = Column::fixed("a", Datatype::Int32, [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect());
    /// assert_eq!((c.cell_count(), c.is_dimension), (3, false));
    /// assert_eq!(c.value(2), 3i32.to_le_bytes());
    /// ```
    pub fn fixed(name: impl Into<String>, datatype: Datatype, data: Vec<u8>) -> Column {
        Column {
            name: name.into(),
            is_dimension: false,
            datatype,
            cell_val_num: CellValNum::Fixed(1),
            data,
            offsets: None,
            validity: None,
        }
    }

    /// A dimension's column: one coordinate per cell, as [`Column::fixed`].
    pub fn fixed_dimension(name: impl Into<String>, datatype: Datatype, data: Vec<u8>) -> Column {
        Column {
            is_dimension: true,
            ..Column::fixed(name, datatype, data)
        }
    }

    /// The bytes of cell `i`.
    pub fn value(&self, i: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => &self.data[o[i] as usize..o[i + 1] as usize],
            None => {
                let s = match self.cell_val_num {
                    CellValNum::Fixed(n) => n as usize * self.datatype.size() as usize,
                    CellValNum::Var => self.datatype.size() as usize,
                };
                &self.data[i * s..(i + 1) * s]
            }
        }
    }

    /// The bytes of string cell `i` as TileDB's readers give them back
    /// (TileDB-Py 0.36.1, libtiledb 2.30): a var-sized attribute's cell is
    /// its bytes, NUL bytes included, but one NUL byte alone (the default
    /// fill of a var-sized string, on disk the same as a written "\0")
    /// reads as empty; fixed-sized attribute cells and dimension
    /// coordinates drop their trailing NUL bytes, as fixed-width numpy
    /// strings do. Other types: the cell's bytes.
    pub fn string_value(&self, i: usize) -> &[u8] {
        let b = self.value(i);
        if !self.datatype.is_string() {
            return b;
        }
        if self.cell_val_num.is_var() && !self.is_dimension {
            return if b == [0] { &[] } else { b };
        }
        let end = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
        &b[..end]
    }

    /// The column with every string cell as [`Column::string_value`] gives
    /// it (values and offsets rebuilt only where a cell changes), for
    /// outputs that take whole buffers (Arrow, Parquet).
    pub fn with_string_values(self) -> Column {
        let n = self.cell_count();
        if !self.datatype.is_string()
            || (0..n).all(|i| self.string_value(i).len() == self.value(i).len())
        {
            return self;
        }
        let mut data = Vec::with_capacity(self.data.len());
        let mut offsets = Vec::with_capacity(n + 1);
        for i in 0..n {
            offsets.push(data.len() as u64);
            data.extend_from_slice(self.string_value(i));
        }
        offsets.push(data.len() as u64);
        Column {
            data,
            offsets: Some(offsets),
            cell_val_num: CellValNum::Var,
            ..self
        }
    }

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        match (&self.offsets, self.cell_val_num) {
            (Some(o), _) => o.len().saturating_sub(1),
            (None, CellValNum::Fixed(k)) => {
                let w = k as usize * self.datatype.size() as usize;
                self.data.len().checked_div(w).unwrap_or(0)
            }
            (None, CellValNum::Var) => self.data.len() / self.datatype.size().max(1) as usize,
        }
    }

    /// Whether cell `i` is non-null.
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i] != 0)
    }

    /// A copy of the cells `r` (offsets rebased to start at 0).
    ///
    /// ```
    /// # use tessera_cells::Column;
    /// # use tessera_schema::CellValNum;
    /// let c = Column {
    ///     name: "s".into(), is_dimension: false,
    ///     datatype: tessera_tile::Datatype::StringAscii, cell_val_num: CellValNum::Var,
    ///     data: b"abbccc".to_vec(), offsets: Some(vec![0, 1, 3, 6]), validity: None,
    /// };
    /// let tail = c.slice(1..3);
    /// assert_eq!((tail.value(0), tail.value(1)), (&b"bb"[..], &b"ccc"[..]));
    /// ```
    pub fn slice(&self, r: std::ops::Range<usize>) -> Column {
        let (data, offsets) = match &self.offsets {
            Some(o) => {
                let (s, e) = (o[r.start], o[r.end]);
                let rebased = o[r.start..=r.end].iter().map(|x| x - s).collect();
                (self.data[s as usize..e as usize].to_vec(), Some(rebased))
            }
            None => {
                let w = self.data.len().checked_div(self.cell_count()).unwrap_or(0);
                (self.data[r.start * w..r.end * w].to_vec(), None)
            }
        };
        Column {
            name: self.name.clone(),
            is_dimension: self.is_dimension,
            datatype: self.datatype,
            cell_val_num: self.cell_val_num,
            data,
            offsets,
            validity: self.validity.as_ref().map(|v| v[r].to_vec()),
        }
    }
}
