//! Random arrays written by tessera, read by libtiledb: part of `cargo
//! xtask check-writes`. A sample of what the writer's property tests
//! (`tessera-write/tests/roundtrip.rs`) cover, from fixed seeds: random
//! sparse schemas (INT8, INT64, UINT16, FLOAT64 and STRING_ASCII
//! dimensions; row-major, col-major and Hilbert orders; small capacities;
//! duplicates allowed or not, though no cell is given twice) and random dense ones (a random box of
//! integer dimensions), each with a nullable INT32, a nullable var-sized
//! UTF-8 string, a two-value UINT8 and a FLOAT64 attribute under assorted
//! filters; cells in random order, written in several batches. Beside each
//! array, `cells.jsonl` holds the cells given, in the read contract's form;
//! TileDB-Py 0.36.1 must read exactly those cells (`check_random.py`).

use crate::common::Error;
use serde_json::{json, Value as Json};
use std::path::Path;
use tessera::query::Column;
use tessera::schema::CellValNum;
use tessera::tile::Datatype;

/// splitmix64: small, seeded, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// One dimension: its JSON, and a coordinate drawn as (JSON value, bytes).
#[derive(Clone, Copy)]
enum Dim {
    Int8,
    Int64,
    UInt16,
    Float64,
    Text,
}

impl Dim {
    fn json(self, name: &str) -> Json {
        match self {
            Dim::Int8 => {
                json!({"name": name, "type": "INT8", "domain": [-100, 100], "tile_extent": 7})
            }
            Dim::Int64 => {
                json!({"name": name, "type": "INT64", "domain": [-1000, 1000000], "tile_extent": 1000})
            }
            Dim::UInt16 => {
                json!({"name": name, "type": "UINT16", "domain": [0, 500], "tile_extent": 16})
            }
            Dim::Float64 => {
                json!({"name": name, "type": "FLOAT64", "domain": [-10.0, 10.0], "tile_extent": 2.5})
            }
            Dim::Text => json!({"name": name, "type": "STRING_ASCII"}),
        }
    }

    fn draw(self, rng: &mut Rng) -> (Json, Vec<u8>) {
        let r = rng.next();
        match self {
            Dim::Int8 => {
                let v = (r % 201) as i64 - 100;
                (json!(v), vec![v as i8 as u8])
            }
            Dim::Int64 => {
                let v = (r % 1_001_001) as i64 - 1000;
                (json!(v), v.to_le_bytes().to_vec())
            }
            Dim::UInt16 => {
                let v = (r % 501) as u16;
                (json!(v), v.to_le_bytes().to_vec())
            }
            Dim::Float64 => {
                // Quarters: exact in binary, printed the same by both sides.
                let v = (r % 81) as f64 / 4.0 - 10.0;
                (json!(v), v.to_le_bytes().to_vec())
            }
            Dim::Text => {
                let v = format!("k{}", r % 37);
                (json!(v), v.clone().into_bytes())
            }
        }
    }

    fn datatype(self) -> Datatype {
        match self {
            Dim::Int8 => Datatype::Int8,
            Dim::Int64 => Datatype::Int64,
            Dim::UInt16 => Datatype::UInt16,
            Dim::Float64 => Datatype::Float64,
            Dim::Text => Datatype::StringAscii,
        }
    }
}

/// Cells collected column by column, and as contract rows.
struct Cells {
    columns: Vec<Column>,
    rows: Vec<serde_json::Map<String, Json>>,
}

impl Cells {
    fn new(fields: &[(&str, Datatype, CellValNum, bool, bool)]) -> Cells {
        let columns = fields
            .iter()
            .map(|&(name, datatype, cvn, is_dimension, nullable)| Column {
                name: name.into(),
                is_dimension,
                datatype,
                cell_val_num: cvn,
                data: Vec::new(),
                offsets: cvn.is_var().then(|| vec![0]),
                validity: nullable.then(Vec::new),
            })
            .collect();
        Cells {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds one cell: a (JSON, bytes) value per column, `None` for null.
    fn push(&mut self, values: Vec<Option<(Json, Vec<u8>)>>) {
        let mut row = serde_json::Map::new();
        for (c, v) in self.columns.iter_mut().zip(values) {
            let valid = v.is_some();
            let (j, bytes) = v.unwrap_or_else(|| {
                let fill = match c.cell_val_num {
                    CellValNum::Var => Vec::new(),
                    _ => tessera::schema::default_fill_value(c.datatype, c.cell_val_num),
                };
                (Json::Null, fill)
            });
            c.data.extend_from_slice(&bytes);
            if let Some(o) = &mut c.offsets {
                o.push(c.data.len() as u64);
            }
            if let Some(val) = &mut c.validity {
                val.push(valid as u8);
            }
            row.insert(c.name.clone(), j);
        }
        self.rows.push(row);
    }
}

/// The attributes every random array has, with filters drawn from `rng`.
fn attributes(rng: &mut Rng) -> Json {
    let f = [
        json!([]),
        json!([{"name": "zstd", "level": 1}]),
        json!([{"name": "gzip", "level": 6}]),
        json!([{"name": "byteshuffle"}, {"name": "lz4"}]),
        json!([{"name": "bitshuffle"}, {"name": "bzip2", "level": 9}]),
    ];
    json!([
        {"name": "a", "type": "INT32", "nullable": true, "filters": rng.pick(&f)},
        {"name": "s", "type": "STRING_UTF8", "cell_val_num": "var", "nullable": true, "filters": rng.pick(&f)},
        {"name": "p", "type": "UINT8", "cell_val_num": 2, "filters": rng.pick(&f)},
        {"name": "f", "type": "FLOAT64", "filters": rng.pick(&f)},
    ])
}

/// An attribute cell drawn from `rng`: a, s, p, f.
fn attribute_values(rng: &mut Rng) -> Vec<Option<(Json, Vec<u8>)>> {
    let a = (rng.next() as i32, rng.below(5) == 0);
    let s = (format!("v{}ß", rng.below(1000)), rng.below(4) == 0);
    let p = [rng.next() as u8, rng.next() as u8];
    let f = rng.below(4001) as f64 / 8.0 - 250.0;
    vec![
        (!a.1).then(|| (json!(a.0), a.0.to_le_bytes().to_vec())),
        (!s.1).then(|| (json!(s.0), s.0.clone().into_bytes())),
        Some((json!(p), p.to_vec())),
        Some((json!(f), f.to_le_bytes().to_vec())),
    ]
}

/// The attribute columns' (name, type, values a cell, dimension?, nullable).
const ATTRS: [(&str, Datatype, CellValNum, bool, bool); 4] = [
    ("a", Datatype::Int32, CellValNum::Fixed(1), false, true),
    ("s", Datatype::StringUtf8, CellValNum::Var, false, true),
    ("p", Datatype::UInt8, CellValNum::Fixed(2), false, false),
    ("f", Datatype::Float64, CellValNum::Fixed(1), false, false),
];

/// A random sparse array's schema and cells.
fn sparse(rng: &mut Rng) -> (Json, Cells) {
    let kinds = [Dim::Int8, Dim::Int64, Dim::UInt16, Dim::Float64, Dim::Text];
    let dims: Vec<Dim> = (0..1 + rng.below(3)).map(|_| *rng.pick(&kinds)).collect();
    let dups = rng.below(3) == 0;
    let names: Vec<String> = (0..dims.len()).map(|j| format!("d{j}")).collect();
    let schema = json!({
        "array_type": "sparse",
        "cell_order": rng.pick(&["row-major", "col-major", "hilbert"]),
        "tile_order": rng.pick(&["row-major", "col-major"]),
        "capacity": 1 + rng.below(20),
        "allows_duplicates": dups,
        "dimensions": dims.iter().zip(&names).map(|(d, n)| d.json(n)).collect::<Vec<_>>(),
        "attributes": attributes(rng),
    });
    let mut fields: Vec<(&str, Datatype, CellValNum, bool, bool)> = dims
        .iter()
        .zip(&names)
        .map(|(d, n)| {
            let cvn = match d {
                Dim::Text => CellValNum::Var,
                _ => CellValNum::Fixed(1),
            };
            (n.as_str(), d.datatype(), cvn, true, false)
        })
        .collect();
    fields.extend(ATTRS);
    let mut cells = Cells::new(&fields);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..rng.below(300) {
        let coords: Vec<(Json, Vec<u8>)> = dims.iter().map(|d| d.draw(rng)).collect();
        let key: Vec<Vec<u8>> = coords.iter().map(|c| c.1.clone()).collect();
        // No coordinates twice, even where duplicates are allowed: the
        // reading side takes nulls from a read keyed by coordinates, which
        // cannot tell two cells at one place apart (the property tests
        // cover duplicates, read back by tessera).
        if !seen.insert(key) {
            continue;
        }
        let mut values: Vec<Option<(Json, Vec<u8>)>> = coords.into_iter().map(Some).collect();
        values.extend(attribute_values(rng));
        cells.push(values);
    }
    (schema, cells)
}

/// A random dense array's schema and the cells of a random box of it, in
/// random order.
fn dense(rng: &mut Rng) -> (Json, Cells) {
    let n = 1 + rng.below(3) as usize;
    let mut dims = Vec::new();
    let mut boxes = Vec::new();
    // One datatype for all: libtiledb's dense arrays have no other kind.
    let (t, lo) = *rng.pick(&[("INT8", -20i64), ("INT64", -1000), ("UINT16", 0)]);
    for j in 0..n {
        let len = 1 + rng.below(12) as i64;
        let ext = 1 + rng.below(len.min(5) as u64) as i64;
        dims.push(json!({"name": format!("d{j}"), "type": t, "domain": [lo, lo + len - 1], "tile_extent": ext}));
        let (a, b) = (rng.below(len as u64) as i64, rng.below(len as u64) as i64);
        boxes.push((t, lo + a.min(b), lo + a.max(b)));
    }
    let schema = json!({
        "array_type": "dense",
        "cell_order": rng.pick(&["row-major", "col-major"]),
        "tile_order": rng.pick(&["row-major", "col-major"]),
        "dimensions": dims,
        "attributes": attributes(rng),
    });
    let mut coords: Vec<Vec<i64>> = vec![vec![]];
    for &(_, lo, hi) in &boxes {
        coords = coords
            .into_iter()
            .flat_map(|c| (lo..=hi).map(move |v| [c.clone(), vec![v]].concat()))
            .collect();
    }
    // Shuffled (Fisher-Yates).
    for i in (1..coords.len()).rev() {
        coords.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let names: Vec<String> = (0..n).map(|j| format!("d{j}")).collect();
    let datatype = |t: &str| match t {
        "INT8" => Datatype::Int8,
        "INT64" => Datatype::Int64,
        _ => Datatype::UInt16,
    };
    let mut fields: Vec<(&str, Datatype, CellValNum, bool, bool)> = boxes
        .iter()
        .zip(&names)
        .map(|(b, name)| {
            (
                name.as_str(),
                datatype(b.0),
                CellValNum::Fixed(1),
                true,
                false,
            )
        })
        .collect();
    fields.extend(ATTRS);
    let mut cells = Cells::new(&fields);
    for c in coords {
        let mut values: Vec<Option<(Json, Vec<u8>)>> = c
            .iter()
            .zip(&boxes)
            .map(|(&v, b)| {
                let w = datatype(b.0).size() as usize;
                Some((json!(v), v.to_le_bytes()[..w].to_vec()))
            })
            .collect();
        values.extend(attribute_values(rng));
        cells.push(values);
    }
    (schema, cells)
}

/// Writes `count` random arrays under `out` (`random-<seed>/array` and
/// `random-<seed>/cells.jsonl`), half sparse, half dense.
pub fn write_random_arrays(out: &Path, count: u64) -> Result<(), Error> {
    for seed in 0..count {
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
        let (schema, cells) = match seed % 2 {
            0 => sparse(&mut rng),
            _ => dense(&mut rng),
        };
        let dir = out.join(format!("random-{seed}"));
        let array = dir.join("array");
        std::fs::create_dir_all(&dir)?;
        let doc = tessera::schema::json::schema_from_json(&schema)?;
        tessera_write::create_array(&array, &doc, None, None)?;
        let mut w = tessera_write::FragmentWriter::try_new(&array, Default::default())?;
        let n = cells.rows.len();
        // In three batches.
        let cuts = [0, n / 3, 2 * n / 3, n];
        for r in cuts.windows(2) {
            let batch: Vec<Column> = cells.columns.iter().map(|c| c.slice(r[0]..r[1])).collect();
            w.write(&batch)?;
        }
        w.finish()?;
        let lines: String = cells
            .rows
            .iter()
            .map(|r| format!("{}\n", Json::Object(r.clone())))
            .collect();
        std::fs::write(dir.join("cells.jsonl"), lines)?;
        std::fs::write(
            dir.join("schema.json"),
            serde_json::to_string_pretty(&schema)?,
        )?;
    }
    Ok(())
}
