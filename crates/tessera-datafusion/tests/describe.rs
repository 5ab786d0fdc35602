//! Scans and tables as plain data: a scan made again from its description
//! (as a Ballista executor makes it) reads what the original reads; a
//! fragment gone since planning is an error naming it; statistics from
//! fragment metadata equal what TileDB-Py read, and are exact only where
//! they must be.

mod common;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::stats::Precision;
use datafusion::common::ScalarValue;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::SessionContext;
use serde_json::Value;
use std::sync::Arc;
use tessera_datafusion::{ScanDescription, TableDescription, TesseraScan, TesseraTable};

fn fixture(case: &str) -> String {
    format!("../../testdata/tiledb-0.36.1/{case}/array")
}

/// The first `TesseraScan` in `plan`.
fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<&TesseraScan> {
    if let Some(s) = plan.downcast_ref::<TesseraScan>() {
        return Some(s);
    }
    plan.children().into_iter().find_map(find_scan)
}

async fn rows(plan: Arc<dyn ExecutionPlan>, ctx: &SessionContext) -> Vec<Vec<String>> {
    let batches: Vec<RecordBatch> = collect(plan, ctx.task_ctx()).await.unwrap();
    let mut out = common::display_rows(&batches);
    out.sort();
    out
}

#[tokio::test]
async fn a_scan_from_its_description_reads_the_same_cells() {
    for (case, q) in [
        (
            "sparse_2d",
            "SELECT x, i FROM a WHERE x BETWEEN 3 AND 40 AND i > 100",
        ),
        ("dense_2d_types", "SELECT * FROM a WHERE r >= 2"),
        (
            "sparse_strings",
            "SELECT name, u FROM a WHERE name >= 'b' LIMIT 3",
        ),
        ("enumerations", "SELECT * FROM a"),
        ("consolidated_versions_encrypted", "SELECT * FROM a"),
    ] {
        let ctx = SessionContext::new();
        let key = (case == "consolidated_versions_encrypted").then(|| {
            tessera::filters::EncryptionKey::parse(
                "3031323334353637383961626364654630313233343536373839616263646546",
            )
            .unwrap()
        });
        tessera_datafusion::register(&ctx, "a", &fixture(case), None, key).unwrap();
        let plan = ctx
            .sql(q)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let scan = find_scan(&plan).expect("a TesseraScan");
        let bytes = scan.description().to_bytes();
        let again =
            TesseraScan::from_description(&ScanDescription::from_bytes(&bytes).unwrap()).unwrap();
        assert_eq!(again.description(), scan.description(), "{case}");
        let original: Arc<dyn ExecutionPlan> =
            Arc::new(TesseraScan::from_description(&scan.description()).unwrap());
        let want = rows(original, &ctx).await;
        assert!(!want.is_empty(), "{case}");
        assert_eq!(rows(Arc::new(again), &ctx).await, want, "{case}");
    }
}

#[test]
fn a_table_reads_only_the_fragments_its_description_lists() {
    let table = TesseraTable::open(&fixture("dense_1d_fragments"), None, None).unwrap();
    let mut d = table.description();
    assert!(d.fragments.len() > 1);
    // Fewer fragments: the table made from it has just those.
    d.fragments.truncate(1);
    let t = TesseraTable::from_description(&d).unwrap();
    assert_eq!(t.array().fragments.len(), 1);
    assert_eq!(t.array().fragments[0].name, d.fragments[0]);
    // A fragment that is gone: an error naming it.
    d.fragments
        .push("__1_2_0123456789abcdef0123456789abcdef_22".into());
    let e = TesseraTable::from_description(&d).unwrap_err().to_string();
    assert!(
        e.contains("__1_2_0123456789abcdef") && e.contains("gone"),
        "{e}"
    );
    // Round trip through bytes, and bad bytes.
    let back = TableDescription::from_bytes(&table.description().to_bytes()).unwrap();
    assert_eq!(back, table.description());
    assert!(TableDescription::from_bytes(b"[1]").is_err());
}

/// TileDB-Py's rows of `case`'s whole read.
fn tiledb_py_all(case: &str) -> Vec<Value> {
    let path = format!("../../testdata/tiledb-0.36.1/{case}/expected.json");
    let e: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    e["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "all")
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn statistics_from_metadata_equal_tiledb_py_values() {
    use datafusion::catalog::TableProvider;
    // One fragment, or duplicates allowed: nothing shadowed, all exact.
    for case in ["sparse_dups", "sparse_large", "sparse_hilbert"] {
        let table = TesseraTable::open(&fixture(case), None, None).unwrap();
        let rows = tiledb_py_all(case);
        let s = table.statistics().unwrap();
        assert_eq!(s.num_rows, Precision::Exact(rows.len()), "{case}");
        let schema = table.schema();
        let mut checked = 0;
        for (j, field) in schema.fields().iter().enumerate() {
            if !field.data_type().is_integer() {
                continue;
            }
            let v: Vec<i64> = rows
                .iter()
                .map(|r| r[field.name()].as_i64().unwrap())
                .collect();
            let exact = |n: i64| {
                Precision::Exact(
                    ScalarValue::Int64(Some(n))
                        .cast_to(field.data_type())
                        .unwrap(),
                )
            };
            let c = &s.column_statistics[j];
            assert_eq!(
                c.min_value,
                exact(*v.iter().min().unwrap()),
                "{case} {field}"
            );
            assert_eq!(
                c.max_value,
                exact(*v.iter().max().unwrap()),
                "{case} {field}"
            );
            assert_eq!(c.null_count, Precision::Exact(0), "{case} {field}");
            checked += 1;
        }
        assert!(checked >= 2, "{case}");
    }
    // Several fragments that may shadow each other: bounds only.
    for case in ["sparse_2d", "consolidated_versions"] {
        let t = TesseraTable::open(&fixture(case), None, None).unwrap();
        let s = t.statistics().unwrap();
        assert!(!s.num_rows.is_exact().unwrap_or(false), "{case}");
        assert!(
            s.column_statistics
                .iter()
                .all(|c| !c.min_value.is_exact().unwrap_or(false)),
            "{case}"
        );
        assert!(
            s.column_statistics
                .iter()
                .any(|c| c.min_value.get_value().is_some()),
            "{case}: no bounds at all"
        );
    }
}

#[tokio::test]
async fn exact_statistics_answer_what_a_scan_answers() {
    // DataFusion answers min, max and count from exact statistics without
    // a scan: the answers must be the scan's.
    for case in [
        "sparse_big_tiles",
        "sparse_dups",
        "sparse_dim_types",
        "random_sparse",
        "consolidated_versions",
        "dense_2d_types",
        "deletes",
    ] {
        let ctx = SessionContext::new();
        tessera_datafusion::register(&ctx, "a", &fixture(case), None, None).unwrap();
        let table = TesseraTable::open(&fixture(case), None, None).unwrap();
        use datafusion::catalog::TableProvider;
        let schema = table.schema();
        for f in schema.fields() {
            if !f.data_type().is_integer() {
                continue;
            }
            let q = format!("SELECT min({0}), max({0}), count(*) FROM a", f.name());
            let fast = ctx.sql(&q).await.unwrap().collect().await.unwrap();
            // The same over every row, made to scan by a filter always true.
            let q = format!(
                "SELECT min({0}), max({0}), count(*) FROM (SELECT * FROM a WHERE {0} IS NULL OR {0} IS NOT NULL)",
                f.name()
            );
            let slow = ctx.sql(&q).await.unwrap().collect().await.unwrap();
            let show = |b: &[RecordBatch]| {
                datafusion::arrow::util::pretty::pretty_format_batches(b)
                    .unwrap()
                    .to_string()
            };
            assert_eq!(show(&fast), show(&slow), "{case}: {}", f.name());
        }
    }
}

/// The rows each partition of `plan` reads, in display form.
async fn rows_by_partition(
    plan: &Arc<dyn ExecutionPlan>,
    ctx: &SessionContext,
) -> Vec<Vec<Vec<String>>> {
    use futures::TryStreamExt;
    let n = plan.properties().output_partitioning().partition_count();
    let mut out = Vec::new();
    for p in 0..n {
        let stream = plan.execute(p, ctx.task_ctx()).unwrap();
        let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap();
        out.push(common::display_rows(&batches));
    }
    out
}

#[tokio::test]
async fn sparse_partitions_share_the_cells_and_read_each_once() {
    use datafusion::prelude::SessionConfig;
    // Five overlapping fragments (cells overwritten), Hilbert order (MBRs
    // reaching over one another), one fragment of many tiles.
    for case in ["random_sparse", "sparse_hilbert", "sparse_large"] {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
        tessera_datafusion::register(&ctx, "a", &fixture(case), None, None).unwrap();
        let plan = ctx
            .sql("SELECT * FROM a")
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let scan: Arc<dyn ExecutionPlan> = Arc::new(find_scan(&plan).unwrap().clone());
        let parts = rows_by_partition(&scan, &ctx).await;
        assert!(parts.len() > 1, "{case}: {} partitions", parts.len());
        let mut all: Vec<Vec<String>> = parts.iter().flatten().cloned().collect();
        all.sort();
        let want = tiledb_py_all(case);
        assert_eq!(all.len(), want.len(), "{case}: each cell once");
        let mut again = all.clone();
        again.dedup();
        assert_eq!(again.len(), all.len(), "{case}: a cell read twice");
        // About a share each: no partition more than twice its share.
        let share = want.len() / parts.len();
        for (p, rows) in parts.iter().enumerate() {
            assert!(
                rows.len() <= 2 * share + 16,
                "{case}: partition {p} holds {} of {}",
                rows.len(),
                want.len()
            );
        }
    }
}
