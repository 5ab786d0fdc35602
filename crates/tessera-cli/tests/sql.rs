//! `tessera sql` (feature `sql`): its JSON lines follow the read contract,
//! so `SELECT * ... ORDER BY` the dimensions prints what `tessera read
//! --layout row-major` prints; CSV and the table form; errors; tables on
//! S3 (moto) answer as local ones.
#![cfg(feature = "sql")]

mod common;
mod emulated;
use common::tessera;
use emulated::BucketStorage;

fn fixture(case: &str) -> String {
    format!(
        "{}/../../testdata/tiledb-0.36.1/{case}/array",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn select_star_prints_what_read_prints() {
    for (case, order) in [
        ("sparse_2d", "x, y"),
        ("dense_2d_types", "r, c"),
        ("sparse_strings", "name, t"),
        ("dense_nullable_var", "d"),
        ("multi_value", "d"),
    ] {
        let table = format!("a={}", fixture(case));
        let q = format!("SELECT * FROM a ORDER BY {order}");
        let (ok, sql, err) = tessera(&["sql", "--table", &table, "--format", "jsonl", &q]);
        assert!(ok, "{case}: {err}");
        let (ok, read, err) = tessera(&["read", &fixture(case), "--layout", "row-major"]);
        assert!(ok, "{case}: {err}");
        assert_eq!(sql, read, "{case}");
    }
}

#[test]
fn csv_and_table_forms() {
    let table = format!("a={}", fixture("sparse_2d"));
    let q = "SELECT x, count(*) AS n FROM a WHERE x < 3 GROUP BY x ORDER BY x";
    let (ok, csv, err) = tessera(&["sql", "--table", &table, "--format", "csv", q]);
    assert!(ok, "{err}");
    let (_, jsonl, _) = tessera(&["sql", "--table", &table, "--format", "jsonl", q]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "x,n");
    for (c, j) in lines[1..].iter().zip(jsonl.lines()) {
        let v: serde_json::Value = serde_json::from_str(j).unwrap();
        assert_eq!(*c, format!("{},{}", v["x"], v["n"]));
    }
    let (ok, shown, _) = tessera(&["sql", "--table", &table, "--format", "table", q]);
    assert!(
        ok && shown.contains("| x ") && shown.contains("| n "),
        "{shown}"
    );
}

#[test]
fn time_travel_and_errors() {
    let table = format!("a={}", fixture("dense_1d_fragments"));
    let (ok, out, err) = tessera(&[
        "sql",
        "--table",
        &table,
        "--timestamp",
        "1",
        "--format",
        "jsonl",
        "SELECT count(*) AS n FROM a",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), r#"{"n":20}"#);
    let (ok, _, err) = tessera(&["sql", "--table", "no_equals_sign", "SELECT 1"]);
    assert!(!ok && err.contains("NAME=URI"), "{err}");
    let (ok, _, err) = tessera(&["sql", "--table", &table, "SELECT nope FROM a"]);
    assert!(!ok && err.contains("nope"), "{err}");
}

/// Tables on `s3://` (moto, a real S3 protocol server) answer as the
/// same arrays on local disk: their requests run on the runtime `tessera
/// sql` runs DataFusion on.
#[test]
fn tables_on_s3_answer_as_local_ones() {
    let Some(m) = tessera_emulators::moto::moto() else {
        return;
    };
    let storage = m.storage();
    for (case, q) in [
        ("sparse_2d", "SELECT * FROM a ORDER BY x, y"),
        ("sparse_2d", "SELECT count(*), sum(i) FROM a WHERE x > 2"),
        ("dense_2d_types", "SELECT * FROM a ORDER BY r, c"),
        ("enumerations", "SELECT * FROM a ORDER BY d"),
    ] {
        let uri = format!("s3://{}/sql/{case}", tessera_emulators::moto::BUCKET);
        emulated::upload(&storage, fixture(case).as_ref(), &uri);
        let run = |table: &str, on: Option<&emulated::Emulator>| {
            let table = format!("a={table}");
            let args = ["sql", "--table", &table, "--format", "jsonl", q];
            let (ok, out, err) = emulated::tessera(on, &args);
            assert!(ok, "{case} {table}: {q}: {err}");
            out
        };
        assert_eq!(
            run(&uri, Some(&m)),
            run(&fixture(case), None),
            "{case}: {q}"
        );
    }
}

/// DataFusion's settings come from `DATAFUSION_*` variables, as in its own
/// CLI: with the information schema on, `SHOW` answers the batch size set;
/// an ill-formed setting fails naming the variables.
#[test]
fn datafusion_settings_from_the_environment() {
    let table = format!("a={}", fixture("sparse_2d"));
    let run = |vars: &[(&str, &str)], q: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["sql", "--table", &table, "--format", "csv", q])
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let show = "SHOW datafusion.execution.batch_size";
    let (ok, _, _) = run(&[], show);
    assert!(!ok, "SHOW without the information schema");
    let set = [
        ("DATAFUSION_CATALOG_INFORMATION_SCHEMA", "true"),
        ("DATAFUSION_EXECUTION_BATCH_SIZE", "1234"),
    ];
    let (ok, out, err) = run(&set, show);
    assert!(ok, "{err}");
    assert!(
        out.contains("datafusion.execution.batch_size,1234"),
        "{out}"
    );
    let (ok, out, err) = run(&set[1..], "SELECT count(*) AS n FROM a");
    assert!(ok && out.starts_with("n\n"), "{out}{err}");
    let (ok, _, err) = run(&[("DATAFUSION_EXECUTION_BATCH_SIZE", "many")], show);
    assert!(!ok && err.contains("DATAFUSION_* settings"), "{err}");
}
