//! SQL over fixtures equals the same computation over TileDB-Py's reads of
//! them (the rows testdata/*/expected.json records): counts, sums, minima,
//! group-by, dimension ranges, attribute predicates, strings, NULLs,
//! enumerations, time travel, deletes, a join of two arrays; and EXPLAIN
//! shows what reached the scan.

mod common;

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::SessionContext;
use serde_json::Value;
use std::collections::BTreeMap;

fn fixture(case: &str) -> String {
    format!("../../testdata/tiledb-0.36.1/{case}/array")
}

/// The rows TileDB-Py read for `query` of `case`.
fn tiledb_py_rows(case: &str, query: &str) -> Vec<Value> {
    let path = format!("../../testdata/tiledb-0.36.1/{case}/expected.json");
    let e: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let q = e["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == query)
        .unwrap();
    q["rows"].as_array().unwrap().clone()
}

async fn context(tables: &[(&str, &str)]) -> SessionContext {
    let ctx = SessionContext::new();
    for (name, case) in tables {
        tessera_datafusion::register(&ctx, name, &fixture(case), None, None).unwrap();
    }
    ctx
}

/// The result as rows of display strings.
async fn sql(ctx: &SessionContext, q: &str) -> Vec<Vec<String>> {
    let batches: Vec<RecordBatch> = ctx.sql(q).await.unwrap().collect().await.unwrap();
    common::display_rows(&batches)
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

#[tokio::test]
async fn counts_sums_and_extremes_equal_tiledb_py() {
    let ctx = context(&[("a", "sparse_2d")]).await;
    let rows = tiledb_py_rows("sparse_2d", "all");
    let sum: i64 = rows.iter().map(|r| int(&r["i"])).sum();
    let f: Vec<f64> = rows.iter().map(|r| r["f"].as_f64().unwrap()).collect();
    let (min, max) = (
        f.iter().cloned().fold(f64::MAX, f64::min),
        f.iter().cloned().fold(f64::MIN, f64::max),
    );
    let got = sql(&ctx, "SELECT count(*), sum(i), min(f), max(f) FROM a").await;
    assert_eq!(
        got,
        [[
            rows.len().to_string(),
            sum.to_string(),
            min.to_string(),
            max.to_string()
        ]]
    );
}

#[tokio::test]
async fn group_by_equals_tiledb_py() {
    let ctx = context(&[("a", "sparse_2d")]).await;
    let mut want: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for r in tiledb_py_rows("sparse_2d", "all") {
        let e = want.entry(int(&r["x"])).or_default();
        e.0 += 1;
        e.1 += int(&r["i"]);
    }
    let want: Vec<Vec<String>> = want
        .iter()
        .map(|(x, (n, s))| vec![x.to_string(), n.to_string(), s.to_string()])
        .collect();
    let got = sql(
        &ctx,
        "SELECT x, count(*), sum(i) FROM a GROUP BY x ORDER BY x",
    )
    .await;
    assert_eq!(got, want);
}

#[tokio::test]
async fn dimension_ranges_select_what_tiledb_py_selects() {
    let ctx = context(&[("a", "sparse_2d")]).await;
    // TileDB-Py's "sub": x in [10, 40], y in [0, 50] or [70, 80].
    let want = tiledb_py_rows("sparse_2d", "sub").len();
    let q = "SELECT count(*) FROM a WHERE x BETWEEN 10 AND 40 AND (y <= 50 OR y BETWEEN 70 AND 80)";
    assert_eq!(sql(&ctx, q).await, [[want.to_string()]]);
    // Strict bounds and IN on an integer dimension, exactly.
    let rows = tiledb_py_rows("sparse_2d", "all");
    let n = rows
        .iter()
        .filter(|r| (9..41).contains(&int(&r["x"])) && int(&r["x"]) > 9)
        .count();
    assert_eq!(
        sql(&ctx, "SELECT count(*) FROM a WHERE x > 9 AND x < 41").await,
        [[n.to_string()]]
    );
    let n = rows
        .iter()
        .filter(|r| [3, 5, 7].contains(&int(&r["x"])))
        .count();
    assert_eq!(
        sql(&ctx, "SELECT count(*) FROM a WHERE x IN (3, 5, 7)").await,
        [[n.to_string()]]
    );
}

#[tokio::test]
async fn attribute_predicates_equal_tiledb_py() {
    let ctx = context(&[("a", "sparse_2d")]).await;
    let rows = tiledb_py_rows("sparse_2d", "all");
    let n = rows
        .iter()
        .filter(|r| int(&r["i"]) > 3000 || r["f"].as_f64().unwrap() < -1.0)
        .count();
    let got = sql(&ctx, "SELECT count(*) FROM a WHERE i > 3000 OR f < -1.0").await;
    assert_eq!(got, [[n.to_string()]]);
    let n = rows
        .iter()
        .filter(|r| !(int(&r["i"]) >= 100 && int(&r["i"]) <= 2000))
        .count();
    let got = sql(
        &ctx,
        "SELECT count(*) FROM a WHERE NOT (i >= 100 AND i <= 2000)",
    )
    .await;
    assert_eq!(got, [[n.to_string()]]);
}

/// Conditions on a nullable integer attribute: those the scan takes as
/// exact (DataFusion does not filter again) keep the cells SQL keeps, and
/// so do the negations it leaves DataFusion to filter again.
#[tokio::test]
async fn exact_conditions_keep_what_sql_keeps_with_nulls() {
    let ctx = context(&[("r", "random_sparse")]).await;
    let rows = tiledb_py_rows("random_sparse", "all");
    let n = |r: &Value| r["n"].as_i64();
    let a = |r: &Value| int(&r["a"]);
    assert!(rows.iter().any(|r| n(r).is_none()) && rows.iter().any(|r| n(r).is_some()));
    let mut ns: Vec<i64> = rows.iter().filter_map(n).collect();
    ns.sort();
    let mid = ns[ns.len() / 2];
    let some = ns[ns.len() / 3];
    type Keep = Box<dyn Fn(&Value) -> bool>;
    let cases: Vec<(String, Keep)> = vec![
        (
            format!("n > {mid}"),
            Box::new(move |r| n(r).is_some_and(|v| v > mid)),
        ),
        (
            format!("n != {some}"),
            Box::new(move |r| n(r).is_some_and(|v| v != some)),
        ),
        (
            format!("NOT (n > {mid})"),
            Box::new(move |r| n(r).is_some_and(|v| v <= mid)),
        ),
        (
            format!("n NOT IN ({some}, {mid})"),
            Box::new(move |r| n(r).is_some_and(|v| v != some && v != mid)),
        ),
        (
            format!("n IN ({some}, {mid})"),
            Box::new(move |r| n(r).is_some_and(|v| v == some || v == mid)),
        ),
        (
            format!("n > {mid} OR n IS NULL"),
            Box::new(move |r| n(r).is_none_or(|v| v > mid)),
        ),
        (
            format!("n < {mid} AND a > 0"),
            Box::new(move |r| n(r).is_some_and(|v| v < mid) && a(r) > 0),
        ),
        ("NOT (a > 0)".into(), Box::new(move |r| a(r) <= 0)),
    ];
    for (condition, keep) in cases {
        let want = rows.iter().filter(|r| keep(r)).count();
        let got = sql(&ctx, &format!("SELECT count(*) FROM r WHERE {condition}")).await;
        assert_eq!(got, [[want.to_string()]], "{condition}");
    }
}

/// The `x` of the rows of `table` that `WHERE p` keeps, and of those for
/// which SQL's own evaluation of `p` (a projected column, which nothing
/// pushes down) is true.
async fn kept_and_true(ctx: &SessionContext, table: &str, p: &str) -> (Vec<String>, Vec<String>) {
    let all = sql(ctx, &format!("SELECT x, {p} FROM {table} ORDER BY x")).await;
    let want = (all.iter().filter(|r| r[1] == "true"))
        .map(|r| r[0].clone())
        .collect();
    let kept = sql(ctx, &format!("SELECT x FROM {table} WHERE {p} ORDER BY x")).await;
    (kept.into_iter().map(|r| r[0].clone()).collect(), want)
}

/// Float predicates over NaN (last in some tiles, so libtiledb's tile
/// bounds are NaN), a negative NaN and -0: a WHERE clause keeps the rows
/// for which SQL's own evaluation of the predicate (a projected column,
/// which nothing pushes down) is true.
#[tokio::test]
async fn float_predicates_keep_what_sql_keeps_around_nan() {
    let ctx = context(&[("a", "sparse_float_nan")]).await;
    let predicates = [
        "v > 1.0",
        "v >= 1.0",
        "v < 2.0",
        "v <= 0.0",
        "v = 0.0",
        "v != 3.0",
        "v IN (0.0, 5.0)",
        "NOT (v > 1.0)",
        "f < 2.0",
        "f > 8.0",
        "v > 1.0 OR f < 0.0",
    ];
    for p in predicates {
        let (got, want) = kept_and_true(&ctx, "a", p).await;
        assert_eq!(got, want, "{p}");
    }
    // The NaN cells are there to be kept: a positive NaN passes `>`.
    let nan_first = sql(&ctx, "SELECT count(*) FROM a WHERE v > 100.0").await;
    assert_eq!(nan_first, [["4"]]);
}

/// On a dense array float predicates prune tiles by their metadata, and
/// keep every row SQL keeps: numbers a NaN hid from a tile's min and max,
/// a tile whose sum stopped at its bound, cells written again by a later
/// fragment, a tile never written (its NaN fill passes `>`).
#[tokio::test]
async fn dense_prunes_keep_what_sql_keeps_around_nan() {
    let ctx = context(&[("d", "dense_float_nan_tiles")]).await;
    let predicates = [
        "v < 100.0",
        "v > 500.0",
        "v >= 2.0",
        "f < 100.0",
        "f > 500.0",
        "v < 100.0 AND f > 0.0",
        "v < 5.0 OR v > 650.0",
        "v = 30.0",
        "v IN (40.0, 601.0)",
    ];
    for p in predicates {
        let (got, want) = kept_and_true(&ctx, "d", p).await;
        assert_eq!(got, want, "{p}");
        // `f` (float32) is compared cast to float64: not pushed down.
        let plan = sql(&ctx, &format!("EXPLAIN SELECT x FROM d WHERE {p}")).await;
        assert!(
            p.starts_with('f') || plan.iter().any(|r| r[1].contains("prune=")),
            "{p}: not pruned: {plan:?}"
        );
    }
    // Partitions share out only the tile rows metadata leaves to read.
    let ctx = context(&[("t", "dense_2d_types")]).await;
    for p in ["f64 > 0.5 AND i32 < 7", "i32 > 3", "u8 <= 2 OR f32 > 1.0"] {
        let own = format!("SELECT sum(CAST(({p}) AS INT)) FROM t");
        let pushed = format!("SELECT count(*) FROM t WHERE {p}");
        assert_eq!(sql(&ctx, &pushed).await, sql(&ctx, &own).await, "{p}");
    }
    let ctx = context(&[("d", "dense_float_nan_tiles")]).await;
    // `>` keeps the NaNs (x 1 and 14) and the never-written tile's NaN
    // fill (16 to 19); `<` the numbers NaN hid from the metadata: x 0
    // (1.0 before a NaN) and 15 (after a sum pinned at its bound).
    let got = sql(&ctx, "SELECT count(*) FROM d WHERE v > 500.0").await;
    assert_eq!(got, [["16"]]);
    let got = sql(&ctx, "SELECT x FROM d WHERE v < 5.0 ORDER BY x").await;
    assert_eq!(got, [["0"], ["15"]]);
}

#[tokio::test]
async fn strings_and_nulls_equal_tiledb_py() {
    let ctx = context(&[("s", "sparse_strings"), ("n", "dense_nullable_var")]).await;
    let want: Vec<Vec<String>> = tiledb_py_rows("sparse_strings", "sub")
        .iter()
        .map(|r| {
            vec![
                r["name"].as_str().unwrap().to_owned(),
                r["u"].as_str().unwrap().to_owned(),
            ]
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let got = sql(
        &ctx,
        "SELECT name, u FROM s WHERE name >= 'b' AND name <= 'e' ORDER BY name, u",
    )
    .await;
    assert_eq!(got, want);
    let rows = tiledb_py_rows("dense_nullable_var", "all");
    let nulls = rows.iter().filter(|r| r["n"].is_null()).count();
    let s_nulls = rows.iter().filter(|r| r["s"].is_null()).count();
    assert!(nulls > 0);
    let got = sql(&ctx, "SELECT count(*), count(n), count(s) FROM n").await;
    assert_eq!(
        got,
        [[
            rows.len().to_string(),
            (rows.len() - nulls).to_string(),
            (rows.len() - s_nulls).to_string()
        ]]
    );
    // On a dense array the condition stays with DataFusion (a dense read
    // would give failing cells as nulls).
    let got = sql(&ctx, "SELECT count(*) FROM n WHERE n IS NULL").await;
    assert_eq!(got, [[nulls.to_string()]]);
    let big = rows
        .iter()
        .filter(|r| r["n"].as_i64().is_some_and(|v| v > 3))
        .count();
    let got = sql(&ctx, "SELECT count(*) FROM n WHERE n > 3 OR n IS NULL").await;
    assert_eq!(got, [[(big + nulls).to_string()]]);
}

#[tokio::test]
async fn dense_arrays_hold_their_whole_domain() {
    let ctx = context(&[("d", "dense_2d_types")]).await;
    let rows = tiledb_py_rows("dense_2d_types", "all");
    let sum: i64 = rows.iter().map(|r| int(&r["i32"])).sum();
    assert_eq!(
        sql(&ctx, "SELECT count(*), sum(i32) FROM d").await,
        [[rows.len().to_string(), sum.to_string()]]
    );
    let sub = tiledb_py_rows("dense_2d_types", "sub");
    let sum: i64 = sub.iter().map(|r| int(&r["i16"])).sum();
    let q = "SELECT count(*), sum(i16) FROM d WHERE r BETWEEN 1 AND 4 AND c BETWEEN -1 AND 2";
    assert_eq!(
        sql(&ctx, q).await,
        [[sub.len().to_string(), sum.to_string()]]
    );
}

#[tokio::test]
async fn enumerations_group_by_their_values() {
    let ctx = context(&[("e", "enumerations")]).await;
    let colors = ["red", "green", "blue"];
    let mut want: BTreeMap<&str, usize> = BTreeMap::new();
    for r in tiledb_py_rows("enumerations", "all") {
        *want.entry(colors[int(&r["c"]) as usize]).or_default() += 1;
    }
    let want: Vec<Vec<String>> = want
        .iter()
        .map(|(c, n)| vec![c.to_string(), n.to_string()])
        .collect();
    let got = sql(
        &ctx,
        "SELECT CAST(c AS VARCHAR) AS c, count(*) FROM e GROUP BY 1 ORDER BY 1",
    )
    .await;
    assert_eq!(got, want);
}

#[tokio::test]
async fn time_travel_and_deletes() {
    let ctx = SessionContext::new();
    tessera_datafusion::register(
        &ctx,
        "t1",
        &fixture("dense_1d_fragments"),
        Some((0, 1)),
        None,
    )
    .unwrap();
    let sum: i64 = tiledb_py_rows("dense_1d_fragments", "at_t1")
        .iter()
        .map(|r| int(&r["a"]))
        .sum();
    assert_eq!(
        sql(&ctx, "SELECT sum(a) FROM t1").await,
        [[sum.to_string()]]
    );
    // Deleted cells are gone, and no exact count from the fragments says otherwise.
    tessera_datafusion::register(&ctx, "del", &fixture("deletes"), None, None).unwrap();
    let n = tiledb_py_rows("deletes", "all").len();
    assert_eq!(
        sql(&ctx, "SELECT count(*) FROM del").await,
        [[n.to_string()]]
    );
}

#[tokio::test]
async fn joins_of_two_arrays() {
    let ctx = context(&[("a", "sparse_2d"), ("b", "dense_1d_fragments")]).await;
    let b: BTreeMap<i64, i64> = tiledb_py_rows("dense_1d_fragments", "all")
        .iter()
        .map(|r| (int(&r["x"]), int(&r["a"])))
        .collect();
    let (mut n, mut s) = (0i64, 0i64);
    for r in tiledb_py_rows("sparse_2d", "all") {
        if let Some(v) = b.get(&int(&r["x"])) {
            n += 1;
            s += v * int(&r["i"]);
        }
    }
    let got = sql(
        &ctx,
        "SELECT count(*), sum(CAST(b.a AS BIGINT) * a.i) FROM a JOIN b ON a.x = b.x",
    )
    .await;
    assert_eq!(got, [[n.to_string(), s.to_string()]]);
}

#[tokio::test]
async fn limits_stop_the_read() {
    let ctx = context(&[("a", "sparse_2d")]).await;
    assert_eq!(sql(&ctx, "SELECT * FROM a LIMIT 7").await.len(), 7);
}

#[tokio::test]
async fn explain_shows_the_pushdowns() {
    let ctx = context(&[("a", "sparse_2d"), ("d", "dense_2d_types")]).await;
    let mut plans = Vec::new();
    for q in [
        "SELECT f FROM a WHERE x BETWEEN 10 AND 40 AND y > 5 AND i > 3000",
        "SELECT i FROM a WHERE x IN (3, 5) LIMIT 2",
        "SELECT i FROM a WHERE f > 0.5 AND i != 7",
        "SELECT count(*) FROM d WHERE r >= 2",
        "SELECT count(*) FROM d WHERE f64 > 0.5 AND i32 < 7",
        "SELECT sum(i32) FROM d",
    ] {
        let rows = sql(&ctx, &format!("EXPLAIN {q}")).await;
        let physical = rows.iter().find(|r| r[0] == "physical_plan").unwrap();
        plans.push(format!("{q}\n{}", physical[1]));
    }
    insta::assert_snapshot!(plans.join("\n\n"));
}

/// A filter no cell passes: no row, the table's columns, and aggregates
/// of nothing (a count of 0, sums and extremes NULL), on a sparse array
/// (its scan reads with the condition) and a dense one (its scan prunes
/// every tile by metadata).
#[tokio::test]
async fn filters_no_cell_passes_give_no_row_with_the_columns() {
    let ctx = context(&[("s", "sparse_2d"), ("d", "dense_2d_types")]).await;
    for (table, column, filter) in [("s", "i", "i > 1000000"), ("d", "f64", "f64 > 1e300")] {
        let q = format!("SELECT * FROM {table} WHERE {filter}");
        let batches: Vec<RecordBatch> = ctx.sql(&q).await.unwrap().collect().await.unwrap();
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 0, "{q}");
        let df = ctx.sql(&q).await.unwrap();
        let names: Vec<String> = df
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let table_names: Vec<String> = ctx
            .table(table)
            .await
            .unwrap()
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, table_names, "{q}");
        let q =
            format!("SELECT count(*), sum({column}), min({column}) FROM {table} WHERE {filter}");
        assert_eq!(sql(&ctx, &q).await, [["0", "NULL", "NULL"]], "{q}");
    }
}
