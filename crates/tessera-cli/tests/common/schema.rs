//! `tessera schema --json` against the schema TileDB-Py reported
//! (`xtask/fixtures/read.py`'s `schema_json` and `enumerations_json`).

use serde_json::{json, Value};

/// The filter names of a pipeline (a list of filters, or an object holding one).
fn filter_names(p: &Value) -> Vec<String> {
    p.get("filters")
        .unwrap_or(p)
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// TileDB-Py's filter class names of a pipeline it reported.
fn py_names(p: &Value) -> Vec<String> {
    p["filters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// TileDB-Py's filter class for a filter as the schema JSON names it.
fn rust_to_py(kind: &str) -> &'static str {
    match kind {
        "none" => "NoOpFilter",
        "gzip" => "GzipFilter",
        "zstd" => "ZstdFilter",
        "lz4" => "LZ4Filter",
        "rle" => "RleFilter",
        "bzip2" => "Bzip2Filter",
        "double_delta" => "DoubleDeltaFilter",
        "bit_width_reduction" => "BitWidthReductionFilter",
        "bitshuffle" => "BitShuffleFilter",
        "byteshuffle" => "ByteShuffleFilter",
        "positive_delta" => "PositiveDeltaFilter",
        "checksum_md5" => "ChecksumMD5Filter",
        "checksum_sha256" => "ChecksumSHA256Filter",
        "dictionary" => "DictionaryFilter",
        "scale_float" => "FloatScaleFilter",
        "xor" => "XORFilter",
        "webp" => "WebpFilter",
        "delta" => "DeltaFilter",
        _ => "?",
    }
}

/// A pipeline of tessera's schema JSON, as TileDB-Py's class names.
fn py_pipeline(p: &Value) -> Value {
    filter_names(p)
        .iter()
        .map(|k| rust_to_py(k).to_string())
        .collect::<Vec<_>>()
        .into()
}

/// A datatype as TileDB-Py's numpy dtype names it (`None`: not compared).
fn py_dtype(t: &Value) -> Option<&'static str> {
    Some(match t.as_str()? {
        "INT8" => "int8",
        "UINT8" => "uint8",
        "INT16" => "int16",
        "UINT16" => "uint16",
        "INT32" => "int32",
        "UINT32" => "uint32",
        "INT64" => "int64",
        "UINT64" => "uint64",
        "FLOAT32" => "float32",
        "FLOAT64" => "float64",
        "BOOL" => "bool",
        "DATETIME_DAY" => "datetime64[D]",
        "DATETIME_MS" => "datetime64[ms]",
        "DATETIME_NS" => "datetime64[ns]",
        _ => return None,
    })
}

/// The differences between tessera's schema `got` and TileDB-Py's `exp`
/// (with its enumerations `enums`, by name), each prefixed by `name`.
pub fn schema_differences(name: &str, got: &Value, exp: &Value, enums: &Value) -> Vec<String> {
    let mut out = Differences {
        name,
        found: Vec::new(),
    };
    out.enumerations(got, enums);
    out.check(
        "sparse",
        Value::Bool(got["array_type"] == "sparse"),
        exp["sparse"].clone(),
    );
    if exp["sparse"] == true {
        out.check(
            "allows_duplicates",
            got["allows_duplicates"].clone(),
            exp["allows_duplicates"].clone(),
        );
    }
    out.check("capacity", got["capacity"].clone(), exp["capacity"].clone());
    out.check(
        "cell_order",
        got["cell_order"].clone(),
        exp["cell_order"].clone(),
    );
    // TileDB-Py reports no tile order under Hilbert cell order (it is unused then).
    if !exp["tile_order"].is_null() {
        out.check(
            "tile_order",
            got["tile_order"].clone(),
            exp["tile_order"].clone(),
        );
    }
    out.dimensions(got, exp);
    out.attributes(got, exp);
    for k in ["coords_filters", "offsets_filters", "validity_filters"] {
        if exp.get(k).is_some() {
            out.check(k, py_pipeline(&got[k]), py_names(&exp[k]).into());
        }
    }
    out.found
}

struct Differences<'a> {
    name: &'a str,
    found: Vec<String>,
}

impl Differences<'_> {
    fn check(&mut self, what: &str, a: Value, b: Value) {
        if a != b {
            self.found
                .push(format!("{}: {what}: tessera {a}, TileDB-Py {b}", self.name));
        }
    }

    fn enumerations(&mut self, got: &Value, enums: &Value) {
        for (ename, e) in enums.as_object().into_iter().flatten() {
            let got_e = got["enumerations"]
                .as_array()
                .and_then(|v| v.iter().find(|x| x["name"] == ename.as_str()));
            match got_e {
                None => self
                    .found
                    .push(format!("{}: enumeration {ename} missing", self.name)),
                Some(g) => self.check(
                    &format!("enumeration {ename}"),
                    json!([g["ordered"], g["values"]]),
                    json!([e["ordered"], e["values"]]),
                ),
            }
        }
    }

    /// A dimension's or attribute's name, and whether it is var-sized.
    fn name_and_var(&mut self, kind: &str, g: &Value, e: &Value) {
        self.check(
            &format!("{kind} name"),
            g["name"].clone(),
            e["name"].clone(),
        );
        self.check(
            &format!("{kind} var"),
            Value::Bool(g["cell_val_num"] == "var"),
            e["var"].clone(),
        );
    }

    fn dimensions(&mut self, got: &Value, exp: &Value) {
        let gd = got["dimensions"].as_array().cloned().unwrap_or_default();
        let ed = exp["dims"].as_array().cloned().unwrap_or_default();
        self.check("dimension count", gd.len().into(), ed.len().into());
        let num = |v: &Value| v.as_f64().map(Value::from).unwrap_or(v.clone());
        for (g, e) in gd.iter().zip(&ed) {
            let of = |what: &str| format!("{what} of {}", e["name"]);
            self.name_and_var("dimension", g, e);
            if let Some(t) = py_dtype(&g["type"]) {
                self.check(&of("dtype"), t.into(), e["dtype"].clone());
            }
            if e["var"] == false {
                let domain = |v: &Value| -> Value {
                    v.as_array()
                        .map(|a| a.iter().map(num).collect())
                        .unwrap_or_default()
                };
                self.check(&of("domain"), domain(&g["domain"]), domain(&e["domain"]));
                self.check(&of("tile"), num(&g["tile_extent"]), num(&e["tile"]));
            }
            // A dimension storing no filters (none in its JSON) takes the coords filters.
            let filters = g.get("filters").unwrap_or(&got["coords_filters"]);
            self.check(
                &of("filters"),
                py_pipeline(filters),
                py_names(&e["filters"]).into(),
            );
        }
    }

    fn attributes(&mut self, got: &Value, exp: &Value) {
        let ga = got["attributes"].as_array().cloned().unwrap_or_default();
        let ea = exp["attrs"].as_array().cloned().unwrap_or_default();
        self.check("attribute count", ga.len().into(), ea.len().into());
        for (g, e) in ga.iter().zip(&ea) {
            let of = |what: &str| format!("{what} of {}", e["name"]);
            self.name_and_var("attribute", g, e);
            self.check(
                "attribute nullable",
                g["nullable"].clone(),
                e["nullable"].clone(),
            );
            self.check(
                &of("filters"),
                py_pipeline(&g["filters"]),
                py_names(&e["filters"]).into(),
            );
            self.check(
                &of("chunk size"),
                g["filters"]
                    .get("max_chunk_size")
                    .cloned()
                    .unwrap_or(Value::from(65536)),
                e["filters"]["chunksize"].clone(),
            );
            if g["cell_val_num"] == 1 {
                if let Some(t) = py_dtype(&g["type"]) {
                    self.check(&of("dtype"), t.into(), e["dtype"].clone());
                }
                if !e["fill"].is_null() && !e["nullable"].as_bool().unwrap_or(false) {
                    self.fill(g, e);
                }
            }
        }
    }

    /// A fill value; FLOAT32 fills compared as f32 (TileDB-Py widens them).
    fn fill(&mut self, g: &Value, e: &Value) {
        let gf = g["fill_value"].clone();
        let gf = if g["type"] == "BOOL" {
            Value::Bool(gf.as_u64() == Some(1))
        } else {
            gf
        };
        let same = match (gf.as_f64(), e["fill"].as_f64()) {
            (Some(a), Some(b)) if g["type"] == "FLOAT32" => (a as f32) == (b as f32),
            _ => gf == e["fill"],
        };
        if !same {
            self.found.push(format!(
                "{}: fill of {}: tessera {gf}, TileDB-Py {}",
                self.name, e["name"], e["fill"]
            ));
        }
    }
}
