//! `verify`, `info`, `schema` and error messages of the `tessera` command.

mod common;

use common::{copy_dir, tessera};

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

/// `--no-dims` leaves the dimension keys out of every JSON line, and
/// `--dims` all but those it names; the rest of each line is kept, in the
/// same order, dense and sparse. A name the array lacks fails naming it.
#[test]
fn dims_and_no_dims_leave_coordinates_out() {
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
        let schema = tessera::open(a, None).unwrap().array().schema.clone();
        let dims: Vec<&str> = schema.dimensions.iter().map(|d| d.name.as_str()).collect();
        let last = *dims.last().unwrap();
        for (flags, kept) in [
            (vec!["--no-dims"], None),
            (vec!["--dims", last], Some(last)),
        ] {
            let (ok, bare, err) = tessera(&[&["read", a][..], &flags].concat());
            assert!(ok, "{case} {flags:?}: {err}");
            let full: Vec<&str> = full.lines().collect();
            let bare: Vec<&str> = bare.lines().collect();
            assert!(!full.is_empty(), "{case}: no cells");
            assert_eq!(full.len(), bare.len(), "{case} {flags:?}");
            for (f, b) in full.iter().zip(&bare) {
                let mut f: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(f).unwrap();
                let b: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(b).unwrap();
                for d in dims.iter().filter(|d| Some(**d) != kept) {
                    assert!(f.shift_remove(*d).is_some(), "{case}: no `{d}` in {f:?}");
                }
                // Value order too (the maps compare as sets).
                let pairs = |m: serde_json::Map<String, serde_json::Value>| {
                    m.into_iter().collect::<Vec<_>>()
                };
                assert_eq!(pairs(f), pairs(b), "{case} {flags:?}");
            }
        }
        let (ok, _, err) = tessera(&["read", a, "--dims", "no_such_dim"]);
        assert!(!ok && err.contains("no_such_dim"), "{case}: {err}");
        let (ok, _, err) = tessera(&["read", a, "--dims", last, "--no-dims"]);
        assert!(!ok && err.contains("--no-dims"), "{case}: {err}");
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
        let schema = tessera::open(a, None).unwrap().array().schema.clone();
        let mut args = vec!["read", a];
        args.extend_from_slice(extra);
        let ranges;
        if schema.is_dense() {
            // Two ranges on the first dimension, the second out of order.
            let d = &schema.dimensions[0];
            let v = |x: &[u8]| {
                tessera::query::Value::decode(d.datatype, x)
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
