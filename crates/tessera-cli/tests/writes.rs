//! The commands that write: `create`, `write` (JSON lines, CSV, Arrow,
//! Parquet, within a budget), `meta --set/--delete`, `evolve`, `delete`,
//! `consolidate` and `vacuum`. Each copies a fixture and checks what reads
//! back, and that bad input is refused with nothing written.

mod common;

use common::{copy_dir, tessera};

use std::path::Path;

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
    // Cells twice at one coordinate, kept or one dropped when asked.
    let f = dir.join("twice.jsonl");
    let write_twice = |x: i64, how: &str| {
        let cell = |i: i64| format!("{{\"x\":{x},\"y\":2,\"f\":1.5,\"i\":{i}}}\n");
        std::fs::write(&f, cell(3) + &cell(4)).unwrap();
        let (ok, _, err) = tessera(&[
            "write",
            b,
            "--input",
            f.to_str().unwrap(),
            "--duplicates",
            how,
        ]);
        // The newest fragment's line (fragments list oldest first).
        let (_, listed, _) = tessera(&["fragments", b]);
        (
            ok,
            err,
            listed.lines().last().unwrap_or_default().to_owned(),
        )
    };
    let (ok, err, newest) = write_twice(90, "keep");
    assert!(ok && newest.contains("cells=2"), "{err}{newest}");
    let (ok, err, newest) = write_twice(91, "drop");
    assert!(ok && newest.contains("cells=1"), "{err}{newest}");
    let (_, read, _) = tessera(&["read", b, "--where", "x = 91"]);
    assert!(
        read.contains("{\"x\":91,\"y\":2,\"f\":1.5,\"i\":3}"),
        "{read}"
    );
    let (ok, err, _) = write_twice(92, "ignore");
    assert!(!ok && err.contains("refuse, keep, drop"), "{err}");
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

/// A dense Arrow file whose cells run row-major over a box is streamed
/// band by band: it copies under a budget far below its cells (which a
/// write holding the box refuses); cells in another order, and arrays
/// whose tiles are col-major, are written the general way, the same cells.
#[test]
fn dense_arrow_files_stream_in_bands_or_go_the_general_way() {
    let dir = scratch("tessera-write-dense-arrow");
    for (name, layout, budget) in [
        ("dense_large", "row-major", "64K"),
        ("dense_large", "col-major", "1G"),
        ("dense_col_major", "row-major", "1G"),
    ] {
        let (a, schema) = fixture_schema(&dir, name);
        let file = dir.join(format!("{name}-{layout}.arrow"));
        let file = file.to_str().unwrap();
        let (ok, _, err) = tessera(&[
            "read", &a, "--layout", layout, "--format", "arrow", "-o", file,
        ]);
        assert!(ok, "{err}");
        let b = dir.join(format!("{name}-{layout}"));
        let b = b.to_str().unwrap();
        assert!(tessera(&["create", b, "--schema", schema.to_str().unwrap()]).0);
        let (ok, _, err) = tessera(&["write", b, "--input", file, "--budget", budget]);
        assert!(ok, "{name} {layout}: {err}");
        let (_, cells, _) = tessera(&["read", &a]);
        let (_, copied, _) = tessera(&["read", b]);
        assert_eq!(copied, cells, "{name} {layout}");
    }
    // The general way refuses the first case's budget: it holds the box.
    let (a, schema) = fixture_schema(&dir, "dense_large");
    let (_, cells, _) = tessera(&["read", &a]);
    let input = dir.join("dense_large.jsonl");
    std::fs::write(&input, cells).unwrap();
    let b = dir.join("held");
    let b = b.to_str().unwrap();
    assert!(tessera(&["create", b, "--schema", schema.to_str().unwrap()]).0);
    let (ok, _, err) = tessera(&[
        "write",
        b,
        "--input",
        input.to_str().unwrap(),
        "--budget",
        "64K",
    ]);
    assert!(
        !ok && err.contains("write the box as several smaller boxes"),
        "{err}"
    );
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
    let d = fixture_copy(&dir, "dense_partial_fill", "dense");
    let (ok, _, err) = tessera(&["delete", &d, "--where", "b > 1"]);
    assert!(!ok && err.contains("sparse arrays only"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera consolidate --mode commits` then `tessera vacuum --mode
/// commits` leave one consolidated commits file and the same cells; a
/// mode libtiledb does not have is refused by name.
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
    let (ok, _, err) = tessera(&["vacuum", a, "--mode", "everything"]);
    assert!(!ok && err.contains("expected fragments, commits"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera consolidate --mode fragment_meta` and `tessera vacuum --mode
/// fragment_meta`: as libtiledb, the vacuum keeps every `.meta` file
/// ending at the latest time (two consolidations with nothing written
/// between both stay; after a new fragment's, only that one), and the
/// array reads the same throughout (its footers come from those files).
#[test]
fn fragment_meta_consolidate_and_vacuum() {
    let dir = scratch("tessera-fragment-meta-cli");
    let a = fixture_copy(&dir, "dense_1d_fragments", "array");
    let a = a.as_str();
    let metas = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.join("array/__fragment_meta"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let consolidate = |count: usize, want: &str| {
        let (ok, _, err) = tessera(&["consolidate", a, "--mode", "fragment_meta"]);
        assert!(ok && err.contains(".meta"), "{err}");
        assert_eq!(metas().len(), count);
        let (_, now, _) = tessera(&["read", a]);
        assert_eq!(sorted_lines(&now), sorted_lines(want));
    };
    let vacuum = |removed: &str, left: usize, want: &str| {
        let (ok, _, err) = tessera(&["vacuum", a, "--mode", "fragment_meta"]);
        assert!(ok && err.contains(removed), "{err}");
        assert_eq!(metas().len(), left);
        let (_, after, _) = tessera(&["read", a]);
        assert_eq!(sorted_lines(&after), sorted_lines(want));
    };
    let (_, before, _) = tessera(&["read", a]);
    consolidate(1, &before);
    consolidate(2, &before);
    // Both end at the latest fragment's time: libtiledb keeps both.
    vacuum("removed 0 files", 2, &before);
    // A newer fragment, its footer in a third file: the two older go.
    let cells = dir.join("cells.jsonl");
    std::fs::write(&cells, "{\"x\":5,\"a\":55}\n{\"x\":6,\"a\":66}\n").unwrap();
    let cells = cells.to_str().unwrap();
    let (ok, _, err) = tessera(&["write", a, "--input", cells, "--timestamp", "50"]);
    assert!(ok, "{err}");
    let (_, written, _) = tessera(&["read", a]);
    assert_ne!(sorted_lines(&written), sorted_lines(&before));
    consolidate(3, &written);
    vacuum("removed 2 files", 1, &written);
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
