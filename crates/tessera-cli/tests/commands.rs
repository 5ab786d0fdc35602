//! `verify`, `info`, `schema` and error messages of the `tessera` command.

mod common;

use common::tessera;

use std::path::Path;

/// Replaces timestamped names (`__t1_t2_<32 hex>[_v]`), which change on regeneration.
fn redact(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    'scan: while i < b.len() {
        if b[i..].starts_with(b"__") {
            // t1, t2, uuid, then an optional version.
            let mut j = i + 2;
            for _ in 0..2 {
                let start = j;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j == start || j >= b.len() || b[j] != b'_' {
                    out.push_str("__");
                    i += 2;
                    continue 'scan;
                }
                j += 1;
            }
            if b.len() >= j + 32 && b[j..j + 32].iter().all(u8::is_ascii_hexdigit) {
                j += 32;
                if j < b.len() && b[j] == b'_' && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                out.push_str("<timestamped name>");
                i = j;
                continue;
            }
            out.push_str("__");
            i += 2;
            continue;
        }
        let ch = s[i..].chars().next().expect("char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

#[test]
fn verify_passes_on_every_fixture() {
    let mut failures = Vec::new();
    for case in common::cases() {
        let array = case.parent().unwrap().join("array");
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
        let mut args = vec!["verify".to_string(), array.display().to_string()];
        if let Some(k) = expected["case"]["key"].as_str() {
            args.push("--key".into());
            args.push(k.into());
        }
        let (ok, out, err) = tessera(&args.iter().map(String::as_str).collect::<Vec<_>>());
        if !ok {
            failures.push(format!("{}: {out}{err}", array.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (s, d) = (e.path(), to.join(e.file_name()));
        if s.is_dir() {
            copy_dir(&s, &d)
        } else {
            std::fs::copy(&s, &d).unwrap();
        }
    }
}

#[test]
fn verify_finds_corruption() {
    let src = common::testdata().join("tiledb-0.36.1/filter_sha256/array");
    let dst = std::env::temp_dir().join(format!("tessera-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    copy_dir(&src, &dst);
    let frag = std::fs::read_dir(dst.join("__fragments"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let data = frag.join("a0.tdb");
    let mut b = std::fs::read(&data).unwrap();
    let n = b.len();
    b[n - 3] ^= 0x01; // inside the last tile's payload
    std::fs::write(&data, b).unwrap();
    let (ok, out, err) = tessera(&["verify", dst.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dst);
    assert!(!ok, "verify passed a corrupted array");
    assert!(out.contains("a0.tdb") && out.contains("tile"), "{out}{err}");
}

#[test]
fn info_and_schema_snapshots() {
    let array = common::testdata().join("tiledb-0.36.1/sparse_strings/array");
    let a = array.to_str().unwrap();
    let (ok, info, _) = tessera(&["info", a]);
    assert!(ok);
    let info = info.replace(a, "ARRAY");
    let info: String = info
        .lines()
        .filter(|l| !l.starts_with("size on disk"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("info_sparse_strings", redact(&info));
    let (ok, schema, _) = tessera(&["schema", a]);
    assert!(ok);
    insta::assert_snapshot!("schema_sparse_strings", redact(&schema));
    let dense = common::testdata().join("tiledb-0.19.1/dense_2d_types/array");
    let (ok, schema, _) = tessera(&["schema", dense.to_str().unwrap()]);
    assert!(ok);
    insta::assert_snapshot!("schema_dense_2d_types_v16", redact(&schema));
    let consolidated = common::testdata().join("tiledb-0.36.1/consolidated/array");
    let (ok, frags, _) = tessera(&["fragments", consolidated.to_str().unwrap()]);
    assert!(ok);
    insta::assert_snapshot!("fragments_consolidated", redact(&frags));
}

#[test]
fn commits_snapshots() {
    // An update commit (its values reported, not applied) and two delete
    // commits, one of them served from a consolidated commits file.
    let mut all = String::new();
    for case in ["updates", "deletes", "deletes_consolidated"] {
        let array = common::testdata().join(format!("tiledb-0.36.1/{case}/array"));
        let (ok, out, err) = tessera(&["commits", array.to_str().unwrap()]);
        assert!(ok, "{err}");
        all += &format!("{case}:\n{out}");
    }
    insta::assert_snapshot!("commits", redact(&all));
    let array = common::testdata().join("tiledb-0.36.1/updates/array");
    let (ok, out, _) = tessera(&["commits", "--json", array.to_str().unwrap()]);
    assert!(ok);
    insta::assert_snapshot!("commits_json_update", redact(&out));
}

#[test]
fn aggregate_snapshots() {
    // Metadata answers the whole one-fragment array, tiles of a subarray
    // (decoding the cut ones), and nothing under a condition.
    let large = common::testdata().join("tiledb-0.36.1/sparse_large/array");
    let strings = common::testdata().join("tiledb-0.36.1/sparse_strings/array");
    let mut all = String::new();
    for args in [
        vec![
            &*large.to_string_lossy(),
            "count",
            "sum(v)",
            "min(v)",
            "max(v)",
            "mean(v)",
            "null_count(v)",
        ],
        vec![
            &*large.to_string_lossy(),
            "count",
            "sum(v)",
            "--subarray",
            "x=10:5000",
        ],
        vec![
            &*large.to_string_lossy(),
            "count",
            "max(v)",
            "--where",
            "v < 100",
        ],
        vec![
            &*strings.to_string_lossy(),
            "count",
            "min(u)",
            "max(u)",
            "null_count(n)",
            "sum(n)",
        ],
    ] {
        let mut a = vec!["aggregate", "--stats"];
        a.extend(args.iter().copied());
        let (ok, out, err) = tessera(&a);
        assert!(ok, "{err}");
        all += &format!("{}\n{out}", args[1..].join(" "));
    }
    insta::assert_snapshot!("aggregate", all);
    let (ok, _, err) = tessera(&["aggregate", &strings.to_string_lossy(), "sum(u)"]);
    assert!(!ok);
    insta::assert_snapshot!("error_aggregate_undefined", err);
}

#[test]
fn error_message_snapshots() {
    let (ok, _, err) = tessera(&["read", "/nonexistent/array"]);
    assert!(!ok);
    insta::assert_snapshot!("error_not_an_array", err);
    let array = common::testdata().join("tiledb-0.36.1/encrypted/array");
    let (ok, _, err) = tessera(&["read", array.to_str().unwrap()]);
    assert!(!ok);
    insta::assert_snapshot!(
        "error_missing_key",
        redact(&err.replace(array.to_str().unwrap(), "ARRAY"))
    );
    let (ok, _, err) = tessera(&["read", array.to_str().unwrap(), "--key", &"00".repeat(32)]);
    assert!(!ok);
    insta::assert_snapshot!(
        "error_wrong_key",
        redact(&err.replace(array.to_str().unwrap(), "ARRAY"))
    );
    let dense = common::testdata().join("tiledb-0.36.1/dense_1d_fragments/array");
    let (ok, _, err) = tessera(&["read", dense.to_str().unwrap(), "--subarray", "x=0:5"]);
    assert!(!ok);
    insta::assert_snapshot!("error_range_outside_domain", err);
}

/// Corrupts every checksummed data file of a copy at once (one flipped byte
/// in each file's last tile): verify must name each of them.
#[test]
fn verify_reports_every_corrupted_file() {
    for case in ["tiledb-0.36.1/filter_md5", "tiledb-0.36.1/filter_sha256"] {
        let src = common::testdata().join(case).join("array");
        let dst = std::env::temp_dir().join(format!(
            "tessera-verify-all-{}-{}",
            std::process::id(),
            case.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&dst);
        copy_dir(&src, &dst);
        let mut corrupted = Vec::new();
        for frag in std::fs::read_dir(dst.join("__fragments"))
            .unwrap()
            .flatten()
        {
            for f in std::fs::read_dir(frag.path()).unwrap().flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if name.starts_with("__") || !name.ends_with(".tdb") {
                    continue;
                }
                let mut b = std::fs::read(f.path()).unwrap();
                let n = b.len();
                b[n - 3] ^= 0x10;
                std::fs::write(f.path(), b).unwrap();
                corrupted.push(name);
            }
        }
        assert!(!corrupted.is_empty(), "{case}: no data file");
        let (ok, out, err) = tessera(&["verify", dst.to_str().unwrap()]);
        let _ = std::fs::remove_dir_all(&dst);
        assert!(!ok, "{case}: verify passed a corrupted array");
        for name in &corrupted {
            assert!(
                out.contains(name.as_str()),
                "{case}: {name} not reported:\n{out}{err}"
            );
        }
    }
}

/// Progress goes to stderr only on a terminal: through a pipe a successful
/// read or verify prints nothing there, even in many batches.
#[test]
fn no_progress_output_through_a_pipe() {
    let a = common::testdata().join("tiledb-0.36.1/consolidated/array");
    let a = a.to_str().unwrap();
    for args in [
        vec!["read", a, "--budget", "1"],
        vec!["read", a, "--format", "null"],
        vec!["verify", a],
    ] {
        let (ok, _, err) = tessera(&args);
        assert!(ok, "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} wrote to stderr: {err}");
    }
}

/// `--no-dims` leaves the dimension keys out of every JSON line and keeps
/// the rest of each line, in the same order, dense and sparse.
#[test]
fn no_dims_leaves_the_coordinates_out() {
    for case in [
        "dense_2d_types",
        "dense_nullable_var",
        "sparse_2d",
        "consolidated",
    ] {
        let a = common::testdata()
            .join("tiledb-0.36.1")
            .join(case)
            .join("array");
        let a = a.to_str().unwrap();
        let (ok, full, err) = tessera(&["read", a]);
        assert!(ok, "{case}: {err}");
        let (ok, bare, err) = tessera(&["read", a, "--no-dims"]);
        assert!(ok, "{case}: {err}");
        let schema = tessera::open(a, None).unwrap().schema;
        let dims: Vec<&str> = schema.dimensions.iter().map(|d| d.name.as_str()).collect();
        let full: Vec<&str> = full.lines().collect();
        let bare: Vec<&str> = bare.lines().collect();
        assert!(!full.is_empty(), "{case}: no cells");
        assert_eq!(full.len(), bare.len(), "{case}");
        for (f, b) in full.iter().zip(&bare) {
            let mut f: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(f).unwrap();
            let b: serde_json::Map<String, serde_json::Value> = serde_json::from_str(b).unwrap();
            for d in &dims {
                assert!(f.shift_remove(*d).is_some(), "{case}: no `{d}` in {f:?}");
            }
            // Key order too (the maps compare as sets).
            let pairs =
                |m: serde_json::Map<String, serde_json::Value>| m.into_iter().collect::<Vec<_>>();
            assert_eq!(pairs(f), pairs(b), "{case}");
        }
    }
}

/// CSV writes what JSONL writes, field for field: on dense arrays both
/// write coordinates from the read's grid (several ranges, both layouts),
/// on sparse arrays from columns.
#[test]
fn csv_rows_are_the_jsonl_rows() {
    for (case, extra) in [
        ("dense_2d_types", &[][..]),
        ("dense_2d_types", &["--layout", "col-major"][..]),
        ("dense_nullable_var", &[][..]),
        ("sparse_2d", &[][..]),
    ] {
        let a = common::testdata()
            .join("tiledb-0.36.1")
            .join(case)
            .join("array");
        let a = a.to_str().unwrap();
        let schema = tessera::open(a, None).unwrap().schema;
        let mut args = vec!["read", a];
        args.extend_from_slice(extra);
        let ranges;
        if schema.is_dense() {
            // Two ranges on the first dimension, the second out of order.
            let d = &schema.dimensions[0];
            let v = |x: &[u8]| {
                tessera::query::Key::decode(d.datatype, x)
                    .as_int()
                    .expect("dense dimensions are integers")
            };
            let (lo, hi) = match &d.domain {
                Some((lo, hi)) => (v(lo), v(hi)),
                None => panic!("{case}: a dense dimension has a domain"),
            };
            ranges = format!("{}={}:{},{}:{}", d.name, hi, hi, lo, lo + (hi - lo) / 2);
            args.extend(["--subarray", &ranges]);
        }
        let (ok, jsonl, err) = tessera(&args);
        assert!(ok, "{case}: {err}");
        args.extend(["--format", "csv"]);
        let (ok, csv, err) = tessera(&args);
        assert!(ok, "{case}: {err}");
        let mut csv = csv.lines();
        let header: Vec<&str> = csv.next().expect("a header").split(',').collect();
        let rows: Vec<&str> = csv.collect();
        let jsonl: Vec<&str> = jsonl.lines().collect();
        assert!(!jsonl.is_empty(), "{case}: no cells");
        assert_eq!(rows.len(), jsonl.len(), "{case}");
        for (c, j) in rows.iter().zip(&jsonl) {
            let j: serde_json::Map<String, serde_json::Value> = serde_json::from_str(j).unwrap();
            let keys: Vec<&str> = j.keys().map(String::as_str).collect();
            assert_eq!(header, keys, "{case}");
            // Up to the first string: strings may hold commas (quoted).
            let mut compared = 0;
            for (field, (k, v)) in c.split(',').zip(&j) {
                match v {
                    serde_json::Value::Number(n) if n.is_f64() => {
                        // serde_json's parse may be off by the last bit.
                        let (x, y) = (field.parse::<f64>().unwrap(), n.as_f64().unwrap());
                        assert!((x - y).abs() <= x.abs() * 1e-15, "{case} {k}: {x} {y}")
                    }
                    serde_json::Value::Number(n) => assert_eq!(field, n.to_string(), "{case} {k}"),
                    serde_json::Value::Null => assert_eq!(field, "", "{case} {k}"),
                    _ => break,
                }
                compared += 1;
            }
            assert!(compared >= schema.dimensions.len(), "{case}: {c}");
        }
    }
}

/// A reader of stdout that goes away (`tessera read A | head -1`) ends the
/// output quietly: exit 0, nothing on stderr, no panic.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let array = common::testdata().join("tiledb-0.36.1/dense_large/array");
    for sub in ["read", "info"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args([sub, &array.display().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // stdout is closed here; the process still has more to write.
        let out = child.wait_with_output().unwrap();
        assert!(!first.is_empty());
        assert!(out.status.success(), "{sub}: {:?}", out.status);
        assert!(
            out.stderr.is_empty(),
            "{sub}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `tessera schema A --json > s.json; tessera create B --schema s.json`
/// copies A's schema: B's JSON is A's (format version aside), and B reads
/// as an empty array. Mistakes in the JSON name the file and the field.
#[test]
fn create_copies_a_schema_from_its_json() {
    let dir = scratch("tessera-create-cli");
    for name in [
        "sparse_2d",
        "enumerations",
        "dense_nullable_var",
        "current_domain",
    ] {
        let a = common::testdata().join(format!("tiledb-0.36.1/{name}/array"));
        let (ok, json, err) = tessera(&["schema", a.to_str().unwrap(), "--json"]);
        assert!(ok, "{err}");
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, &json).unwrap();
        let b = dir.join(name);
        let (ok, _, err) = tessera(&[
            "create",
            b.to_str().unwrap(),
            "--schema",
            file.to_str().unwrap(),
        ]);
        assert!(ok, "{name}: {err}");
        let (ok, copied, err) = tessera(&["schema", b.to_str().unwrap(), "--json"]);
        assert!(ok, "{err}");
        let (mut a_json, b_json): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&json).unwrap(),
            serde_json::from_str(&copied).unwrap(),
        );
        a_json["format_version"] = b_json["format_version"].clone();
        assert_eq!(a_json, b_json, "{name}");
        let (ok, cells, err) = tessera(&["read", b.to_str().unwrap(), "--format", "jsonl"]);
        assert!(ok, "{err}");
        if a_json["array_type"] == "sparse" {
            assert_eq!(cells, "", "{name}");
        }
    }
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, "z"]}]}"#).unwrap();
    let (ok, _, err) = tessera(&[
        "create",
        dir.join("bad").to_str().unwrap(),
        "--schema",
        bad.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("bad.json: invalid schema: dimensions[0].domain[1]: expected a INT64 value, found \"z\""),
        "{err}"
    );
    assert!(!dir.join("bad").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera read A | tessera write B` (B created from A's schema) copies
/// A's cells: B reads the same cells. Bad input is an error naming the
/// line and the field, and leaves B as it was.
#[test]
fn write_copies_cells_and_refuses_bad_input() {
    let dir = scratch("tessera-write-cli");
    for name in [
        "sparse_2d",
        "sparse_strings",
        "validity_filters",
        "sparse_dim_types",
        "sparse_datetime_dim",
        "sparse_dups",
        "dense_2d_types",
        "dense_nullable_var",
        "dense_col_major",
        "dense_partial_fill",
    ] {
        copy_through(&dir, name, "jsonl");
    }
    let b = dir.join("sparse_2d");
    let b = b.to_str().unwrap();
    let (_, before, _) = tessera(&["read", b]);
    let cases = [
        (
            "{\"x\":1,\"y\":2,\"f\":1.5,\"i\":3}\n{\"x\":1,\"y\":2,\"f\":1.5,\"i\":3,\"zz\":1}",
            "line 2: no field `zz` in the schema",
        ),
        ("{\"x\":1,\"y\":2,\"f\":1.5}", "line 1, field `i`: missing"),
        (
            "{\"x\":1,\"y\":2,\"f\":\"a\",\"i\":3}",
            "line 1, field `f`: expected a FLOAT64 value, found \"a\"",
        ),
        (
            "{\"x\":1,\"y\":2,\"f\":1.5,\"i\":3000000000}",
            "line 1, field `i`: expected a INT32 value, found 3000000000",
        ),
        (
            "{\"x\":100,\"y\":2,\"f\":1.5,\"i\":3}",
            "cell 0: x = 100 is outside the domain [0, 99]",
        ),
        (
            "{\"x\":1,\"y\":2,\"f\":1.5,\"i\":3}\n{\"x\":1,\"y\":2,\"f\":2.5,\"i\":4}",
            "two cells at x = 1, y = 2: the array does not allow duplicates",
        ),
        ("not json", "line 1: not JSON"),
    ];
    refused(&dir, b, &before, &cases);
    // A dense write covers a box exactly once.
    let b = dir.join("dense_partial_fill");
    let b = b.to_str().unwrap();
    let (_, before, _) = tessera(&["read", b]);
    let cell = |x: i64| format!("{{\"x\":{x},\"a\":1.5,\"b\":7}}\n");
    let gap = cell(1) + &cell(3);
    let twice = cell(1) + &cell(2) + &cell(1);
    let cases = [
        (gap.as_str(), "no cell at x = 2: a dense write covers a box"),
        (
            twice.as_str(),
            "cell 2: the cell at x = 1 is written twice (first as cell 0)",
        ),
    ];
    refused(&dir, b, &before, &cases);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each of `cases` (input, error) written into `b` fails with that error,
/// and `b` still reads `before`.
fn refused(dir: &Path, b: &str, before: &str, cases: &[(&str, &str)]) {
    for (input, want) in cases {
        let f = dir.join("bad.jsonl");
        std::fs::write(&f, input).unwrap();
        let (ok, _, err) = tessera(&["write", b, "--input", f.to_str().unwrap()]);
        assert!(
            !ok && err.contains(want),
            "{input}\n got: {err}\nwant: {want}"
        );
        let (_, after, _) = tessera(&["read", b]);
        assert_eq!(after, before, "a refused write changed the array");
    }
}

/// `tessera read A --format arrow|parquet -o F; tessera write B --input F`
/// copies A's cells too: the Arrow and Parquet files a read writes are
/// input the writer takes back (format from the extension).
#[test]
fn write_takes_the_arrow_and_parquet_files_read_writes() {
    let dir = scratch("tessera-write-arrow");
    for name in [
        "sparse_strings",
        "validity_filters",
        "sparse_dim_types",
        "sparse_datetime_dim",
        "strings_nul_sparse",
        "dense_2d_types",
        "dense_nullable_var",
    ] {
        let (a, schema) = fixture_schema(&dir, name);
        let a = a.as_str();
        let (_, cells, _) = tessera(&["read", a]);
        for format in ["arrow", "parquet"] {
            let file = dir.join(format!("{name}.{format}"));
            let b = dir.join(format!("{name}-{format}"));
            let b = b.to_str().unwrap();
            assert!(tessera(&["create", b, "--schema", schema.to_str().unwrap()]).0);
            let (ok, _, err) =
                tessera(&["read", a, "--format", format, "-o", file.to_str().unwrap()]);
            assert!(ok, "{err}");
            let (ok, _, err) = tessera(&["write", b, "--input", file.to_str().unwrap()]);
            assert!(ok, "{name} {format}: {err}");
            let (_, copied, _) = tessera(&["read", b]);
            assert_eq!(
                sorted_lines(&copied),
                sorted_lines(&cells),
                "{name} {format}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera read A --format csv | tessera write B --format csv` copies A's
/// cells as CSV shows them (an empty field: null where the field is
/// nullable), and a bad field is an error naming its line and field.
#[test]
fn write_takes_the_csv_read_prints() {
    let dir = scratch("tessera-write-csv");
    for name in [
        "sparse_2d",
        "sparse_strings",
        "validity_filters",
        "sparse_dim_types",
        "multi_value",
        "dense_2d_types",
        "dense_nullable_var",
    ] {
        copy_through(&dir, name, "csv");
    }
    let b = dir.join("sparse_2d");
    let b = b.to_str().unwrap();
    let (_, before, _) = tessera(&["read", b]);
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "x,y,f,i\n1,2,1.5,3\n1,3,one,4\n").unwrap();
    let (ok, _, err) = tessera(&["write", b, "--input", bad.to_str().unwrap()]);
    assert!(
        !ok && err.contains("line 3, field `f`: expected a FLOAT64 value, found \"one\""),
        "{err}"
    );
    let (_, after, _) = tessera(&["read", b]);
    assert_eq!(after, before, "a refused write changed the array");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera write --budget` cuts a sparse write into several fragments,
/// committed together by one consolidated commits file, reading back the
/// same cells; a dense write past its budget is refused, the array
/// unchanged.
#[test]
fn write_keeps_to_its_budget() {
    let dir = scratch("tessera-write-budget");
    let (a, schema) = fixture_schema(&dir, "sparse_large");
    let b = dir.join("sparse_large");
    let b = b.to_str().unwrap();
    assert!(tessera(&["create", b, "--schema", schema.to_str().unwrap()]).0);
    let (_, cells, _) = tessera(&["read", &a]);
    let input = dir.join("cells.jsonl");
    std::fs::write(&input, &cells).unwrap();
    let args = [
        "write",
        b,
        "--input",
        input.to_str().unwrap(),
        "--budget",
        "16K",
    ];
    let (ok, _, err) = tessera(&args);
    assert!(ok && err.contains("fragments (cut by --budget)"), "{err}");
    let (_, copied, _) = tessera(&["read", b]);
    assert_eq!(sorted_lines(&copied), sorted_lines(&cells));
    let commits: Vec<String> = std::fs::read_dir(dir.join("sparse_large/__commits"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let fragments = std::fs::read_dir(dir.join("sparse_large/__fragments"))
        .unwrap()
        .count();
    assert!(fragments >= 3, "{fragments} fragments");
    assert!(
        commits.len() == 1 && commits[0].ends_with(".con"),
        "{commits:?}"
    );
    let listed =
        std::fs::read_to_string(dir.join("sparse_large/__commits").join(&commits[0])).unwrap();
    assert_eq!(listed.lines().count(), fragments, "{listed}");
    // A write failing after the budget cut fragments off leaves none.
    let c = dir.join("failing");
    let c = c.to_str().unwrap();
    assert!(tessera(&["create", c, "--schema", schema.to_str().unwrap()]).0);
    let bad = format!("{cells}{{\"x\":-5,\"y\":1,\"v\":1}}\n");
    std::fs::write(&input, bad).unwrap();
    let args = [
        "write",
        c,
        "--input",
        input.to_str().unwrap(),
        "--budget",
        "16K",
    ];
    let (ok, _, err) = tessera(&args);
    assert!(!ok && err.contains("is outside the domain"), "{err}");
    for sub in ["__commits", "__fragments"] {
        let left = std::fs::read_dir(dir.join("failing").join(sub)).map_or(0, |d| d.count());
        assert_eq!(left, 0, "{sub} after a failed write");
    }
    // Dense: refused past the budget.
    let (a, schema) = fixture_schema(&dir, "dense_2d_types");
    let d = dir.join("dense_2d_types");
    let d = d.to_str().unwrap();
    assert!(tessera(&["create", d, "--schema", schema.to_str().unwrap()]).0);
    let (_, cells, _) = tessera(&["read", &a]);
    std::fs::write(&input, &cells).unwrap();
    let args = [
        "write",
        d,
        "--input",
        input.to_str().unwrap(),
        "--budget",
        "1K",
    ];
    let (ok, _, err) = tessera(&args);
    assert!(
        !ok && err.contains("write the box as several smaller boxes"),
        "{err}"
    );
    let empty = |sub: &str| {
        std::fs::read_dir(dir.join("dense_2d_types").join(sub))
            .map_or(true, |mut d| d.next().is_none())
    };
    assert!(empty("__commits") && empty("__fragments"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera meta A --set KEY=VALUE --delete KEY [--type T]` puts and
/// deletes keys; `tessera meta A --json` reads them back. Bad values are
/// refused and write nothing.
#[test]
fn meta_puts_and_deletes_keys() {
    let dir = scratch("tessera-meta-cli");
    let a = fixture_copy(&dir, "array_metadata", "array");
    let a = a.as_str();
    let (ok, _, err) = tessera(&[
        "meta",
        a,
        "--set",
        "n=5",
        "--set",
        "f=1.5",
        "--set",
        "t=hi there",
        "--delete",
        "str",
    ]);
    assert!(ok && err.contains("3 set, 1 deleted"), "{err}");
    let (ok, _, err) = tessera(&["meta", a, "--set", "b=00ff", "--type", "BLOB"]);
    assert!(ok, "{err}");
    let files = || std::fs::read_dir(dir.join("array/__meta")).unwrap().count();
    let before = files();
    for (args, want) in [
        (
            vec!["--set", "novalue"],
            "--set novalue: expected KEY=VALUE",
        ),
        (
            vec!["--set", "x=300", "--type", "INT8"],
            "expected a INT8 value, found 300",
        ),
        (
            vec!["--set", "x=1", "--type", "INT99"],
            "--type INT99: not a TileDB datatype",
        ),
        (
            vec!["--set", "x=1", "--delete", "x"],
            "`x` is both set and deleted",
        ),
    ] {
        let (ok, _, err) = tessera(&[vec!["meta", a], args].concat());
        assert!(!ok && err.contains(want), "{err}");
    }
    assert_eq!(files(), before, "a refused change wrote a file");
    // A group's metadata too.
    let g = dir.join("group");
    copy_dir(
        &common::testdata().join("groups/tiledb-0.36.1/group_nested/group"),
        &g,
    );
    let g = g.to_str().unwrap();
    let (ok, _, err) = tessera(&["meta", g, "--set", "added=7"]);
    assert!(ok, "{err}");
    let (_, json, _) = tessera(&["meta", g, "--json"]);
    let group: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(group["added"], serde_json::json!(7));
    let (ok, json, err) = tessera(&["meta", a, "--json"]);
    assert!(ok, "{err}");
    let got: serde_json::Value = serde_json::from_str(&json).unwrap();
    let want = serde_json::json!({
        "b": "00ff", "f": 1.5, "float": 2.5, "int": -8, "ints": [1, 2, 3], "n": 5, "t": "hi there",
    });
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera evolve A --add-attribute JSON --drop-attribute NAME` writes a
/// new schema: the dropped attribute is gone from reads, the added one
/// reads its fill value in the cells written before. Bad input is refused
/// and writes no schema.
#[test]
fn evolve_adds_and_drops_attributes() {
    let dir = scratch("tessera-evolve-cli");
    let a = fixture_copy(&dir, "sparse_2d", "array");
    let a = a.as_str();
    let (_, before, _) = tessera(&["read", a]);
    let add = r#"{"name": "w", "type": "INT16", "fill_value": -7}"#;
    let (ok, _, err) = tessera(&["evolve", a, "--add-attribute", add, "--drop-attribute", "i"]);
    assert!(ok && err.contains("attributes f, w"), "{err}");
    let (_, after, _) = tessera(&["read", a]);
    let edit = |line: &str| {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("i");
        o.insert("w".into(), serde_json::json!(-7));
        v.to_string()
    };
    let want: Vec<String> = before.lines().map(edit).collect();
    let got: Vec<String> = after
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(got, want);
    let schemas = || {
        std::fs::read_dir(dir.join("array/__schema"))
            .unwrap()
            .count()
    };
    let n = schemas();
    for (args, want) in [
        (
            vec!["--drop-attribute", "nope"],
            "no attribute `nope` to drop",
        ),
        (vec!["--add-attribute", "{"], "--add-attribute {: not JSON"),
        (
            vec!["--add-attribute", r#"{"name": "w", "type": "INT8"}"#],
            "`w` is already a field",
        ),
        (
            vec!["--add-attribute", r#"{"name": "z", "type": "NOPE"}"#],
            "--add-attribute[0].type",
        ),
        (vec![], "nothing to evolve"),
    ] {
        let (ok, _, err) = tessera(&[vec!["evolve", a], args].concat());
        assert!(!ok && err.contains(want), "{err}");
    }
    assert_eq!(schemas(), n, "a refused evolution wrote a schema");
    // Enumerations extended: `tessera schema --json` lists the new values.
    let e = fixture_copy(&dir, "enumerations", "enums");
    let e = e.as_str();
    let extend = ["evolve", e, "--extend-enumeration", r#"colors=["purple"]"#];
    let (ok, _, err) = tessera(&[&extend[..], &["--extend-enumeration", "sizes=[40]"]].concat());
    assert!(ok, "{err}");
    let (_, json, _) = tessera(&["schema", e, "--json"]);
    let schema: serde_json::Value = serde_json::from_str(&json).unwrap();
    let values = |name: &str| {
        let all = schema["enumerations"].as_array().unwrap();
        all.iter().find(|x| x["name"] == name).unwrap()["values"].clone()
    };
    assert_eq!(
        values("colors"),
        serde_json::json!(["red", "green", "blue", "purple"])
    );
    assert_eq!(values("sizes"), serde_json::json!([10, 20, 30, 40]));
    let (ok, _, err) = tessera(&["evolve", e, "--extend-enumeration", "sizes=[\"x\"]"]);
    assert!(!ok && err.contains("expected a INT32 value"), "{err}");
    // A current domain expanded; a smaller one refused.
    let c = fixture_copy(&dir, "current_domain", "cd");
    let c = c.as_str();
    let (ok, _, err) = tessera(&["evolve", c, "--expand-current-domain", "[[0, 20]]"]);
    assert!(
        !ok && err.contains("[0, 20] on `d` does not hold the current [0, 49]"),
        "{err}"
    );
    let (ok, _, err) = tessera(&["evolve", c, "--expand-current-domain", "[[0, 99]]"]);
    assert!(ok, "{err}");
    let (_, json, _) = tessera(&["schema", c, "--json"]);
    let schema: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(schema["current_domain"], serde_json::json!([[0, 99]]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera delete A --where COND` deletes what the condition matches:
/// the copy reads the cells `read --where 'NOT (COND)'` read before; a
/// condition on an unknown field is refused and writes no commit.
#[test]
fn delete_removes_the_matching_cells() {
    let dir = scratch("tessera-delete-cli");
    let a = fixture_copy(&dir, "sparse_2d", "array");
    let a = a.as_str();
    let cond = "i < 0 OR f > 0.5";
    let (ok, kept, err) = tessera(&["read", a, "--where", &format!("NOT ({cond})")]);
    assert!(ok, "{err}");
    let (_, all, _) = tessera(&["read", a]);
    assert!(kept.lines().count() < all.lines().count());
    let (ok, _, err) = tessera(&["delete", a, "--where", cond]);
    assert!(ok && err.contains(".del"), "{err}");
    let (_, after, _) = tessera(&["read", a]);
    assert_eq!(sorted_lines(&after), sorted_lines(&kept));
    let commits = || {
        std::fs::read_dir(dir.join("array/__commits"))
            .unwrap()
            .count()
    };
    let n = commits();
    let (ok, _, err) = tessera(&["delete", a, "--where", "nope > 1"]);
    assert!(!ok && err.contains("nope"), "{err}");
    assert_eq!(commits(), n);
    let d = dir.join("dense");
    copy_dir(
        &common::testdata().join("tiledb-0.36.1/dense_partial_fill/array"),
        &d,
    );
    let (ok, _, err) = tessera(&["delete", d.to_str().unwrap(), "--where", "b > 1"]);
    assert!(!ok && err.contains("sparse arrays only"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera consolidate --mode commits` then `tessera vacuum --mode
/// commits` leave one consolidated commits file and the same cells; the
/// modes not implemented are refused by name.
#[test]
fn commits_consolidate_and_vacuum() {
    let dir = scratch("tessera-commits-cli");
    let a = fixture_copy(&dir, "deletes", "array");
    let a = a.as_str();
    let (_, before, _) = tessera(&["read", a]);
    let (ok, _, err) = tessera(&["consolidate", a, "--mode", "commits"]);
    assert!(ok && err.contains(".con"), "{err}");
    let (ok, _, err) = tessera(&["vacuum", a, "--mode", "commits"]);
    assert!(ok && err.contains("removed 3 files"), "{err}");
    let (_, after, _) = tessera(&["read", a]);
    assert_eq!(sorted_lines(&after), sorted_lines(&before));
    let (ok, _, err) = tessera(&["consolidate", a]);
    assert!(
        !ok && err.contains("--mode fragments: not supported yet"),
        "{err}"
    );
    let (ok, _, err) = tessera(&["vacuum", a, "--mode", "everything"]);
    assert!(!ok && err.contains("expected fragments, commits"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Copies fixture `name` into `dir/<name>`: `tessera schema --json |
/// tessera create`, then `tessera read --format F | tessera write`
/// (through a `.F` file); the copy must read the same cells in that format.
fn copy_through(dir: &Path, name: &str, format: &str) {
    let (a, schema) = fixture_schema(dir, name);
    let b = dir.join(name);
    let b = b.to_str().unwrap();
    assert!(tessera(&["create", b, "--schema", schema.to_str().unwrap()]).0);
    let (ok, cells, err) = tessera(&["read", &a, "--format", format]);
    assert!(ok, "{err}");
    let input = dir.join(format!("{name}.{format}"));
    std::fs::write(&input, &cells).unwrap();
    let (ok, _, err) = tessera(&["write", b, "--input", input.to_str().unwrap()]);
    assert!(ok, "{name}: {err}");
    let (ok, copied, err) = tessera(&["read", b, "--format", format]);
    assert!(ok, "{err}");
    assert_eq!(sorted_lines(&copied), sorted_lines(&cells), "{name}");
}

/// A copy of the 0.36.1 fixture `name`'s array as `dir/<sub>`; its path.
fn fixture_copy(dir: &Path, name: &str, sub: &str) -> String {
    let to = dir.join(sub);
    copy_dir(
        &common::testdata().join(format!("tiledb-0.36.1/{name}/array")),
        &to,
    );
    to.to_str().unwrap().to_owned()
}

/// An empty scratch folder `<tag>-<pid>` in the temporary folder.
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `s`'s lines sorted: cells compared whatever their order.
fn sorted_lines(s: &str) -> String {
    let mut v: Vec<&str> = s.lines().collect();
    v.sort();
    v.join("\n")
}

/// The 0.36.1 fixture `name`'s array path, and its schema's JSON written
/// to `dir/<name>.json`.
fn fixture_schema(dir: &Path, name: &str) -> (String, std::path::PathBuf) {
    let a = common::testdata().join(format!("tiledb-0.36.1/{name}/array"));
    let a = a.to_str().unwrap().to_owned();
    let (ok, json, err) = tessera(&["schema", &a, "--json"]);
    assert!(ok, "{err}");
    let schema = dir.join(format!("{name}.json"));
    std::fs::write(&schema, json).unwrap();
    (a, schema)
}
