//! `tessera schema`, `fragments` and `meta` against what TileDB-Py reported.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod common;

fn run_json(args: &[&str]) -> Result<Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// TileDB-Py's filter class name for a filter type name.
fn py_filter(name: &str) -> &str {
    match name {
        "NONE" => "NoOpFilter",
        "GZIP" => "GzipFilter",
        "ZSTD" => "ZstdFilter",
        "LZ4" => "LZ4Filter",
        "RLE" => "RleFilter",
        "BZIP2" => "Bzip2Filter",
        "DOUBLE_DELTA" => "DoubleDeltaFilter",
        "BIT_WIDTH_REDUCTION" => "BitWidthReductionFilter",
        "BITSHUFFLE" => "BitShuffleFilter",
        "BYTESHUFFLE" => "ByteShuffleFilter",
        "POSITIVE_DELTA" => "PositiveDeltaFilter",
        "CHECKSUM_MD5" => "ChecksumMD5Filter",
        "CHECKSUM_SHA256" => "ChecksumSHA256Filter",
        "DICTIONARY" => "DictionaryFilter",
        "SCALE_FLOAT" => "FloatScaleFilter",
        "XOR" => "XORFilter",
        "WEBP" => "WebpFilter",
        "DELTA" => "DeltaFilter",
        other => other,
    }
}

fn filter_names(p: &Value) -> Vec<String> {
    // A pipeline is a list of filters, or an object holding one.
    p.get("filters")
        .unwrap_or(p)
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn py_names(p: &Value) -> Vec<String> {
    p["filters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn rust_to_py(kind: &str) -> &'static str {
    // The schema JSON's filter names.
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

#[test]
fn schemas_match_tiledb_py() {
    let _ = py_filter;
    let mut failures = Vec::new();
    for path in common::cases() {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let array = path.parent().unwrap().join("array");
        let mut args = vec!["schema", array.to_str().unwrap(), "--json"];
        let key = case["case"]["key"].as_str().map(str::to_owned);
        if let Some(k) = &key {
            args.extend(["--key", k.as_str()]);
        }
        let name = path.parent().unwrap().display().to_string();
        let got = match run_json(&args) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let exp = &case["schema"];
        let mut enum_failures = Vec::new();
        let mut failures_fill: Vec<String> = Vec::new();
        if let Some(enums) = case["enumerations"].as_object() {
            for (ename, e) in enums {
                let got_e = got["enumerations"]
                    .as_array()
                    .and_then(|v| v.iter().find(|x| x["name"] == ename.as_str()));
                match got_e {
                    None => enum_failures.push(format!("{name}: enumeration {ename} missing")),
                    Some(g) => {
                        if g["values"] != e["values"] || g["ordered"] != e["ordered"] {
                            enum_failures.push(format!(
                                "{name}: enumeration {ename}: tessera {} {}, TileDB-Py {} {}",
                                g["ordered"], g["values"], e["ordered"], e["values"]
                            ));
                        }
                    }
                }
            }
        }
        let mut check = |what: &str, a: Value, b: Value| {
            if a != b {
                failures.push(format!("{name}: {what}: tessera {a}, TileDB-Py {b}"));
            }
        };
        check(
            "sparse",
            Value::Bool(got["array_type"] == "sparse"),
            exp["sparse"].clone(),
        );
        if exp["sparse"] == true {
            check(
                "allows_duplicates",
                got["allows_duplicates"].clone(),
                exp["allows_duplicates"].clone(),
            );
        }
        check("capacity", got["capacity"].clone(), exp["capacity"].clone());
        let layout = |v: &Value| v.clone();
        check(
            "cell_order",
            layout(&got["cell_order"]),
            exp["cell_order"].clone(),
        );
        // TileDB-Py reports no tile order under Hilbert cell order (it is unused then).
        if !exp["tile_order"].is_null() {
            check(
                "tile_order",
                layout(&got["tile_order"]),
                exp["tile_order"].clone(),
            );
        }
        // Datatypes, as TileDB-Py names them.
        let py_dtype = |t: &Value| -> Option<&'static str> {
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
        };
        for (g, e) in got["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .zip(exp["dims"].as_array().unwrap())
        {
            if let Some(t) = py_dtype(&g["type"]) {
                check(
                    &format!("dtype of {}", e["name"]),
                    t.into(),
                    e["dtype"].clone(),
                );
            }
            if e["var"] == false {
                let num = |v: &Value| v.as_f64().map(Value::from).unwrap_or(v.clone());
                let gdom: Vec<Value> = g["domain"]
                    .as_array()
                    .map(|a| a.iter().map(num).collect())
                    .unwrap_or_default();
                let edom: Vec<Value> = e["domain"]
                    .as_array()
                    .map(|a| a.iter().map(num).collect())
                    .unwrap_or_default();
                check(
                    &format!("domain of {}", e["name"]),
                    gdom.into(),
                    edom.into(),
                );
                check(
                    &format!("tile of {}", e["name"]),
                    num(&g["tile_extent"]),
                    num(&e["tile"]),
                );
            }
        }
        for (g, e) in got["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(exp["attrs"].as_array().unwrap())
        {
            let cvn = &g["cell_val_num"];
            if cvn == 1 {
                if let Some(t) = py_dtype(&g["type"]) {
                    check(
                        &format!("dtype of {}", e["name"]),
                        t.into(),
                        e["dtype"].clone(),
                    );
                }
                if !e["fill"].is_null() && !e["nullable"].as_bool().unwrap_or(false) {
                    let gf = g["fill_value"].clone();
                    let gf = if g["type"] == "BOOL" {
                        Value::Bool(gf.as_u64() == Some(1))
                    } else {
                        gf
                    };
                    let f32 = g["type"] == "FLOAT32";
                    let same = match (gf.as_f64(), e["fill"].as_f64()) {
                        (Some(a), Some(b)) if f32 => (a as f32) == (b as f32),
                        _ => gf == e["fill"],
                    };
                    if !same {
                        failures_fill.push(format!(
                            "{name}: fill of {}: tessera {gf}, TileDB-Py {}",
                            e["name"], e["fill"]
                        ));
                    }
                }
            }
        }
        let gd = got["dimensions"].as_array().unwrap();
        let ed = exp["dims"].as_array().unwrap();
        check("dimension count", gd.len().into(), ed.len().into());
        for (g, e) in gd.iter().zip(ed) {
            check("dimension name", g["name"].clone(), e["name"].clone());
            check(
                "dimension var",
                Value::Bool(g["cell_val_num"] == "var"),
                e["var"].clone(),
            );
            // A dimension storing no filters (none in its JSON) takes the coords filters.
            let filters = g.get("filters").unwrap_or(&got["coords_filters"]);
            let gf: Vec<String> = filter_names(filters)
                .iter()
                .map(|k| rust_to_py(k).to_string())
                .collect();
            check(
                &format!("filters of {}", e["name"]),
                gf.into(),
                py_names(&e["filters"]).into(),
            );
        }
        let ga = got["attributes"].as_array().unwrap();
        let ea = exp["attrs"].as_array().unwrap();
        check("attribute count", ga.len().into(), ea.len().into());
        for (g, e) in ga.iter().zip(ea) {
            check("attribute name", g["name"].clone(), e["name"].clone());
            check(
                "attribute var",
                Value::Bool(g["cell_val_num"] == "var"),
                e["var"].clone(),
            );
            check(
                "attribute nullable",
                g["nullable"].clone(),
                e["nullable"].clone(),
            );
            let gf: Vec<String> = filter_names(&g["filters"])
                .iter()
                .map(|k| rust_to_py(k).to_string())
                .collect();
            check(
                &format!("filters of {}", e["name"]),
                gf.into(),
                py_names(&e["filters"]).into(),
            );
            check(
                &format!("chunk size of {}", e["name"]),
                g["filters"]
                    .get("max_chunk_size")
                    .cloned()
                    .unwrap_or(Value::from(65536)),
                e["filters"]["chunksize"].clone(),
            );
        }
        for (k, pk) in [
            ("coords_filters", "coords_filters"),
            ("offsets_filters", "offsets_filters"),
            ("validity_filters", "validity_filters"),
        ] {
            if exp.get(pk).is_some() {
                let gf: Vec<String> = filter_names(&got[k])
                    .iter()
                    .map(|k| rust_to_py(k).to_string())
                    .collect();
                check(k, gf.into(), py_names(&exp[pk]).into());
            }
        }
        failures.extend(enum_failures);
        failures.extend(failures_fill);
    }
    assert!(
        failures.is_empty(),
        "{} schema differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fragments_and_metadata_match_tiledb_py() {
    let mut failures = Vec::new();
    for path in common::cases() {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let array = path.parent().unwrap().join("array");
        let name = path.parent().unwrap().display().to_string();
        let key = case["case"]["key"].as_str().map(str::to_owned);
        let with_key = |mut a: Vec<String>| {
            if let Some(k) = &key {
                a.push("--key".into());
                a.push(k.clone());
            }
            a
        };
        let a = with_key(vec![
            "fragments".into(),
            array.display().to_string(),
            "--json".into(),
        ]);
        match run_json(&a.iter().map(String::as_str).collect::<Vec<_>>()) {
            Err(e) => failures.push(format!("{name}: fragments: {e}")),
            Ok(got) => {
                let exp = case["fragments"].as_array().unwrap();
                let got = got.as_array().unwrap();
                if got.len() != exp.len() {
                    failures.push(format!(
                        "{name}: {} fragments, TileDB-Py lists {}",
                        got.len(),
                        exp.len()
                    ));
                } else {
                    for (g, e) in got.iter().zip(exp) {
                        for k in [
                            "name",
                            "timestamp_range",
                            "version",
                            "sparse",
                            "cell_num",
                            "nonempty_domain",
                            "has_consolidated_metadata",
                        ] {
                            if g[k] != e[k] {
                                failures.push(format!(
                                    "{name}: fragment {}: {k}: tessera {}, TileDB-Py {}",
                                    e["name"], g[k], e[k]
                                ));
                            }
                        }
                    }
                }
            }
        }
        let a = with_key(vec![
            "meta".into(),
            array.display().to_string(),
            "--json".into(),
        ]);
        match run_json(&a.iter().map(String::as_str).collect::<Vec<_>>()) {
            Err(e) => failures.push(format!("{name}: meta: {e}")),
            Ok(got) => {
                if got != case["metadata"] {
                    failures.push(format!(
                        "{name}: metadata {got}, TileDB-Py {}",
                        case["metadata"]
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_are_one_clear_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["read", "/nonexistent/array"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = Path::new("");
}
