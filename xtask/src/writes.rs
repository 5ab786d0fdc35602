//! `cargo xtask check-writes`: what tessera writes, read back by real
//! libtiledb. Every fixture TileDB-Py 0.36.1 wrote has its schema printed
//! as JSON, read back and created anew by tessera (`tessera schema --json |
//! tessera create`), and the fixture's cells, as tessera reads them (a
//! dense array's whole domain), written into the copy as one fragment
//! (`tessera read | tessera write`);
//! TileDB-Py 0.36.1 then opens each new array and must report the schema
//! it reported for the original (`expected.json`) and read the same cells
//! from the copy as from the original.
//!
//! Streamed dense writes: dense fixtures' cells, read row-major over their
//! non-empty domain as Arrow batches, go through `RowMajorWriter` (what
//! `tessera write` streams a dense Arrow file with) under a small budget,
//! so the box is written in several bands; TileDB-Py reads the copies.
//!
//! Appends: each fixture of the older releases (formats 16 to 22,
//! TileDB-Py 0.19.1 to 0.31.1) is copied, and tessera appends to the copy
//! a fragment of the cells it reads from it, at the array's own format
//! version and newer than every other fragment; the release that wrote the
//! fixture then reads the copy, and must read what it reads from the
//! original (every cell now comes from tessera's fragment, which shadows
//! the older ones). Arrays allowing duplicates are left out (the copy has
//! every cell twice), and arrays the release crashes reading (as
//! `expected.json` records).

use crate::common::{copy_dir, root, run, venv, Error};
use std::path::Path;
use std::process::Command;
use tessera::schema::json::{schema_from_json, schema_to_json};
use tessera::schema::{list_schemas, load_enumerations, load_schema, schema_at};
use tessera::storage::LocalFs;

/// Creates the copies under `target/check-writes/` and has TileDB-Py check them.
///
/// The recorded sequences (`sequences.rs`) run beside the other checks:
/// each side is one Python process at a time, so on two cores the two
/// take about the time of the longer.
pub fn check_writes() -> Result<(), Error> {
    // Made before the two sides start, which share them.
    for release in crate::VERSIONS {
        venv(release)?;
    }
    crate::sequences::tessera_binary()?;
    let sequences =
        std::thread::spawn(|| crate::sequences::check(crate::VERSIONS).map_err(|e| e.to_string()));
    let rest = check_copies_and_maintenance();
    let sequences = sequences
        .join()
        .map_err(|_| "the sequences check panicked")?;
    rest?;
    sequences?;
    crate::s3_maintained::check_s3_maintained()
}

/// Copies, budgets, row-major streams, random arrays, appends, maintenance
/// and groups, each read back by libtiledb.
fn check_copies_and_maintenance() -> Result<(), Error> {
    let out = fresh_dir("target/check-writes")?;
    let fixtures = root().join("testdata/tiledb-0.36.1");
    let cases = cases_of(&fixtures)?;
    let mut created = 0;
    for case in &cases {
        let copy = copy_schema(case, &out, None)?;
        created += 1;
        eprintln!("created {}", copy.display());
    }
    let py = venv("0.36.1")?;
    read_back_equal(&py, &out, &fixtures, &[])?;
    eprintln!("{created} arrays created by tessera, read back by TileDB-Py 0.36.1 equal");
    check_budget(&fixtures, &py)?;
    check_row_major(&cases, &fixtures, &py)?;
    check_random(&py)?;
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1"] {
        check_appends(release)?;
    }
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"] {
        crate::maintenance::check_maintenance(release)?;
        crate::groups::check_groups(release)?;
    }
    Ok(())
}

/// Random arrays tessera wrote (`random.rs`), read by TileDB-Py 0.36.1.
fn check_random(py: &Path) -> Result<(), Error> {
    let out = fresh_dir("target/check-random")?;
    crate::random::write_random_arrays(&out, RANDOM_ARRAYS)?;
    let report = run(Command::new(py)
        .arg(root().join("xtask/fixtures/check_random.py"))
        .arg(&out))?;
    print!("{}", String::from_utf8_lossy(&report.stdout));
    eprintln!(
        "{RANDOM_ARRAYS} random arrays written by tessera, read back by TileDB-Py 0.36.1 equal"
    );
    Ok(())
}

/// How many random arrays `check_random` writes.
const RANDOM_ARRAYS: u64 = 24;

/// The case folders of `fixtures`, sorted.
fn cases_of(fixtures: &Path) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut cases: Vec<_> = std::fs::read_dir(fixtures)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("array").is_dir())
        .collect();
    cases.sort();
    Ok(cases)
}

/// `path` (under the project root) emptied and made again.
fn fresh_dir(path: &str) -> Result<std::path::PathBuf, Error> {
    let out = root().join(path);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    Ok(out)
}

/// Has TileDB-Py (`py`) check the arrays tessera made in `out` against
/// `fixtures` (`check_created.py`, with `args`), printing its report; an
/// error if any differs.
fn read_back_equal(py: &Path, out: &Path, fixtures: &Path, args: &[&str]) -> Result<(), Error> {
    let report = run(Command::new(py)
        .arg(root().join("xtask/fixtures/check_created.py"))
        .arg(out)
        .arg(fixtures)
        .args(args))?;
    print!("{}", String::from_utf8_lossy(&report.stdout));
    Ok(())
}

/// Dense fixtures' cells streamed row-major through `RowMajorWriter` in
/// small batches and bands, read back by TileDB-Py 0.36.1 equal.
fn check_row_major(cases: &[std::path::PathBuf], fixtures: &Path, py: &Path) -> Result<(), Error> {
    let out = fresh_dir("target/check-row-major")?;
    let mut written = 0;
    for case in cases {
        let key = case_key(case)?;
        let source = tessera::OpenArray::open(&LocalFs, &case.join("array"), 0, u64::MAX, key)?;
        let s = &source.schema;
        let unsupported = s.array_type != tessera::tile::ArrayType::Dense
            || source.fragments.is_empty()
            || s.tile_order != tessera::tile::Layout::RowMajor;
        if unsupported {
            continue;
        }
        let bounds: Vec<(i128, i128)> = dense_box(&source)
            .iter()
            .map(|(lo, hi)| Some((lo.as_int()?, hi.as_int()?)))
            .collect::<Option<_>>()
            .ok_or("integer bounds")?;
        let request = non_empty_domain(&source).layout(tessera::tile::Layout::RowMajor);
        let cells = local_session(source)
            .execute(&request)?
            .into_record_batch()?;
        let dest = copy_schema_only(case, &out)?;
        // A budget of a few KiB: the box goes in several bands.
        let options = tessera_write::WriteOptions {
            key,
            budget: Some(16 << 10),
            ..Default::default()
        };
        let mut w = tessera_write::RowMajorWriter::try_new(&dest, options, &bounds)?;
        let n = cells.num_rows();
        for start in (0..n).step_by(37) {
            let batch = cells.slice(start, 37.min(n - start));
            if w.write(&batch)? != tessera_write::Walk::Continued {
                return Err(format!("{}: cells out of row-major turn", case.display()).into());
            }
        }
        w.finish()?;
        written += 1;
    }
    read_back_equal(py, &out, fixtures, &[])?;
    eprintln!(
        "{written} dense arrays streamed row-major by tessera, read back by TileDB-Py 0.36.1 equal"
    );
    Ok(())
}

/// Copies sparse fixtures with a write budget small enough to cut each
/// write into several fragments (committed by one consolidated commits
/// file) and has TileDB-Py 0.36.1 read them.
fn check_budget(fixtures: &Path, py: &Path) -> Result<(), Error> {
    let out = fresh_dir("target/check-budget")?;
    let budgets = [
        ("sparse_large", 6 << 10),
        ("sparse_long_strings", 64 << 10),
        ("random_sparse", 4 << 10),
        ("sparse_hilbert", 2 << 10),
    ];
    for (name, budget) in budgets {
        let case = fixtures.join(name);
        let dest = copy_schema(&case, &out, Some(budget))?;
        let fragments = std::fs::read_dir(dest.join("__fragments"))?.count();
        if fragments < 2 {
            return Err(format!("{name}: the budget cut no fragment off").into());
        }
        eprintln!("{name}: {fragments} fragments under a budget of {budget} bytes");
    }
    read_back_equal(py, &out, fixtures, &[])?;
    eprintln!(
        "4 arrays written in several fragments under a budget, read back by TileDB-Py 0.36.1 equal"
    );
    Ok(())
}

/// Appends a tessera fragment to copies of `release`'s fixtures
/// and has that release's TileDB-Py read them.
fn check_appends(release: &str) -> Result<(), Error> {
    let fixtures = root().join(format!("testdata/tiledb-{release}"));
    let out = fresh_dir(&format!("target/check-appends/{release}"))?;
    let cases = cases_of(&fixtures)?;
    let mut appended = 0;
    for case in cases.iter().filter(|c| c.join("array/__schema").is_dir()) {
        let key = case_key(case)?;
        let array = case.join("array");
        let opened = tessera::OpenArray::open(&LocalFs, &array, 0, u64::MAX, key)?;
        if opened.schema.allows_dups {
            continue;
        }
        if writer_crashed(case)? {
            eprintln!(
                "{}: left out, TileDB-Py {release} crashes reading the original",
                case.display()
            );
            continue;
        }
        let dest = out.join(case.file_name().ok_or("a case folder")?);
        copy_dir(&array, &dest)?;
        write_cells_of(opened, &dest, key, None)?;
        appended += 1;
    }
    let py = venv(release)?;
    read_back_equal(&py, &out, &fixtures, &["--cells-only"])?;
    eprintln!(
        "{appended} arrays of TileDB-Py {release} appended to by tessera, read back by it equal"
    );
    Ok(())
}

/// Whether the fixture's own TileDB-Py crashed reading it (recorded by
/// `cargo xtask fixtures` in `expected.json`): then it cannot read a copy
/// to compare with either.
fn writer_crashed(case: &Path) -> Result<bool, Error> {
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(case.join("expected.json"))?)?;
    let crashed = expected["disagreements"].as_array().is_some_and(|ds| {
        ds.iter().any(|d| {
            d["writer_error"]
                .as_str()
                .is_some_and(|e| e.contains("crashed"))
        })
    });
    Ok(crashed)
}

/// The key of an encrypted fixture, from its `expected.json`.
fn case_key(case: &Path) -> Result<Option<tessera::filters::EncryptionKey>, Error> {
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(case.join("expected.json"))?)?;
    let Some(hex) = expected["case"]["key"].as_str() else {
        return Ok(None);
    };
    let b = tessera::tile::hex::decode(hex)?;
    let k: [u8; 32] = b.try_into().map_err(|_| "a key of 32 bytes")?;
    Ok(Some(tessera::filters::EncryptionKey::new(k)))
}

/// Creates `out/<case>` with the schema of the case's array and its cells
/// (and its dimension labels' arrays with theirs).
fn copy_schema(case: &Path, out: &Path, budget: Option<u64>) -> Result<std::path::PathBuf, Error> {
    let dest = copy_schema_only(case, out)?;
    let key = case_key(case)?;
    let opened = tessera::OpenArray::open(&LocalFs, &case.join("array"), 0, u64::MAX, key)?;
    let labels: Vec<String> = opened
        .schema
        .dimension_labels
        .iter()
        .map(|l| l.uri.clone())
        .collect();
    write_cells_of(opened, &dest, key, budget)?;
    for uri in labels {
        let label =
            tessera::OpenArray::open(&LocalFs, &case.join("array").join(&uri), 0, u64::MAX, key)?;
        if !label.fragments.is_empty() {
            write_cells_of(label, &dest.join(&uri), key, budget)?;
        }
    }
    Ok(dest)
}

/// A new array in `out` with `case`'s schema (enumerations and dimension
/// labels too) and no fragment.
fn copy_schema_only(case: &Path, out: &Path) -> Result<std::path::PathBuf, Error> {
    let array = case.join("array");
    let key = case_key(case)?;
    let files = list_schemas(&LocalFs, &array)?;
    let file = schema_at(&files, u64::MAX).ok_or("no schema")?;
    let schema = load_schema(&LocalFs, &array, file, key.as_ref())?;
    let enums = load_enumerations(&LocalFs, &array, &schema, key.as_ref())?;
    let doc = schema_from_json(&schema_to_json(&schema, &enums))?;
    let name = case.file_name().ok_or("a case folder")?;
    let dest = out.join(name);
    tessera_write::create_array(&dest, &doc, key, None)?;
    Ok(dest)
}

/// `columns` in batches of `n` cells.
fn batches(columns: &[tessera::Column], n: usize) -> Vec<Vec<tessera::Column>> {
    let cells = columns.first().map_or(0, tessera::Column::cell_count);
    (0..cells)
        .step_by(n.max(1))
        .map(|s| {
            columns
                .iter()
                .map(|c| c.slice(s..(s + n).min(cells)))
                .collect()
        })
        .collect()
}

/// A read of `array`'s non-empty domain (the union of its fragments'): a
/// dense array's cells outside it are fill values no write put there.
fn non_empty_domain(array: &tessera::OpenArray) -> tessera::ReadRequest {
    let mut q = tessera::ReadRequest::new();
    if array.schema.array_type == tessera::tile::ArrayType::Sparse {
        return q;
    }
    for (d, (lo, hi)) in array.schema.dimensions.iter().zip(dense_box(array)) {
        q = q.range(&d.name, lo, hi);
    }
    q
}

/// Reads of `array` from the local filesystem.
fn local_session(array: tessera::OpenArray) -> tessera::ReadSession {
    tessera::ReadSession::new(std::sync::Arc::new(LocalFs), std::sync::Arc::new(array))
}

/// A dense array's non-empty domain (the union of its fragments'), per dimension.
fn dense_box(array: &tessera::OpenArray) -> Vec<(tessera::Value, tessera::Value)> {
    let neds: Vec<_> = array
        .fragments
        .iter()
        .filter_map(|f| f.footer.non_empty_domain.as_ref())
        .collect();
    let mut out = Vec::new();
    for (j, d) in array.schema.dimensions.iter().enumerate() {
        let value = |b: &[u8]| tessera::schema::Value::decode(d.datatype, b);
        let lo = neds
            .iter()
            .map(|n| &n[j].lo)
            .min_by(|a, b| value(a).cmp(&value(b)));
        let hi = neds
            .iter()
            .map(|n| &n[j].hi)
            .max_by(|a, b| value(a).cmp(&value(b)));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let key = |b: &[u8]| tessera::Value::decode(d.datatype, b);
            out.push((key(lo), key(hi)));
        }
    }
    out
}

/// Writes every cell tessera reads from `source` (a dense array's
/// non-empty domain) into a new fragment of
/// the array at `dest` (`tessera read | tessera write`).
fn write_cells_of(
    source: tessera::OpenArray,
    dest: &Path,
    key: Option<tessera::filters::EncryptionKey>,
    budget: Option<u64>,
) -> Result<(), Error> {
    let request = non_empty_domain(&source);
    let cells = local_session(source).execute(&request)?;
    let options = tessera_write::WriteOptions {
        key,
        budget,
        ..Default::default()
    };
    let mut w = tessera_write::FragmentWriter::try_new(dest, options)?;
    // In batches of 64 cells, so a budget cuts the write as a stream of
    // input would.
    for batch in batches(&cells.columns, 64) {
        w.write(&batch)?;
    }
    w.finish()?;
    Ok(())
}
