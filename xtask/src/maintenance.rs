//! Part of `cargo xtask check-writes`: what changes an array besides
//! writing cells (metadata put and deleted, schema evolution, deletes,
//! commits, metadata and fragments consolidated and vacuumed), done by
//! tessera on a copy of a fixture and compared, by the release that wrote
//! the fixture, with libtiledb doing the same to another copy
//! (`xtask/fixtures/check_*.py`). The operations are those `cargo xtask
//! maintained` records (`maintained::operations`), so the live check and
//! the committed records cover the same ground.

use crate::common::copy_dir;
use crate::common::{root, run, venv, Error, NEWEST};
use crate::maintained::operations;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use tessera::filters::EncryptionKey;
use tessera::schema::load_enumerations;
use tessera::storage::LocalFs;
use tessera_write::evolve::{evolve_array, Evolution};

/// Every check, for one release's fixtures.
pub fn check_maintenance(release: &str) -> Result<(), Error> {
    for spec in operations(release) {
        check_operation(release, &spec)?;
    }
    eprintln!(
        "metadata, evolution, deletes and consolidation by tessera: as TileDB-Py {release}'s own, read by it and by {NEWEST}"
    );
    Ok(())
}

/// The fragment consolidations alone (`cargo xtask check-consolidation`).
pub fn check_fragment_consolidation(release: &str) -> Result<(), Error> {
    operations(release)
        .iter()
        .filter(|spec| spec["mode"] == "fragments")
        .try_for_each(|spec| check_operation(release, spec))
}

/// Copies the fixture of `spec` to `target/check-maintenance/`, applies
/// `spec` to the copy with tessera, and has `release`'s TileDB-Py, and
/// the newest for an older release, compare it with the original (and
/// their own operation), printing their reports.
fn check_operation(release: &str, spec: &Value) -> Result<(), Error> {
    let original = root()
        .join("testdata")
        .join(spec["path"].as_str().ok_or("a path")?);
    if !original.is_dir() {
        return Ok(());
    }
    let str_of = |key: &str| spec[key].as_str().ok_or(format!("{spec}: no {key}"));
    let (script, args) = match (str_of("kind")?, spec["mode"].as_str()) {
        ("meta", _) => ("check_meta.py", vec![spec.to_string()]),
        ("evolve", _) => ("check_evolve.py", vec![spec.to_string()]),
        ("delete", _) => ("check_delete.py", vec![spec.to_string()]),
        (_, Some("commits")) => ("check_commits.py", vec![spec.to_string()]),
        (_, Some("array_meta")) => ("check_meta_consolidation.py", vec![]),
        (_, Some("fragment_meta")) => ("check_fragment_meta.py", vec![spec.to_string()]),
        (_, Some("fragments")) => ("check_consolidation.py", vec![spec.to_string()]),
        _ => return Err(format!("unknown operation {spec}").into()),
    };
    let copy = root()
        .join("target/check-maintenance")
        .join(release)
        .join(str_of("id")?);
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&original, &copy)?;
    apply(spec, &copy)?;
    // The release that wrote the array, and libtiledb 2.30 (TileDB-Py
    // 0.36.1) for older arrays: both read tessera's result as their own.
    let mut readers = vec![release];
    if release != NEWEST {
        readers.push(NEWEST);
    }
    for reader in readers {
        let newer = if reader == release { "0" } else { "1" };
        let report = run(Command::new(venv(reader)?)
            .env("TESSERA_CHECK_NEWER_READER", newer)
            .arg(root().join("xtask/fixtures").join(script))
            .arg(&original)
            .arg(&copy)
            .args(&args))?;
        print!("[{reader}] {}", String::from_utf8_lossy(&report.stdout));
    }
    Ok(())
}

/// The encryption key of the spec's array, if it has one.
fn key_of(spec: &Value) -> Result<Option<EncryptionKey>, Error> {
    Ok(spec["key"].as_str().map(EncryptionKey::parse).transpose()?)
}

/// Applies the operation `spec` to the array (or group) `copy` with tessera.
fn apply(spec: &Value, copy: &Path) -> Result<(), Error> {
    match (spec["kind"].as_str(), spec["mode"].as_str()) {
        (Some("meta"), _) => put_metadata(spec, copy),
        (Some("evolve"), _) => evolve(spec, copy),
        (Some("delete"), _) => {
            let key = key_of(spec)?;
            let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, key)?;
            let cond = spec["cond"].as_str().ok_or("a condition")?;
            let expr = tessera::Expr::parse(cond, &opened.schema)?;
            tessera_write::delete::delete_cells(copy, &expr, key, None)?;
            Ok(())
        }
        (_, Some("commits")) => {
            tessera_write::commits::consolidate_commits(copy, key_of(spec)?)?;
            tessera_write::commits::vacuum_commits(copy, key_of(spec)?)?;
            Ok(())
        }
        (_, Some("array_meta")) => {
            tessera_write::metadata::consolidate_metadata(copy, key_of(spec)?)?;
            tessera_write::metadata::vacuum_metadata(copy, key_of(spec)?)?;
            Ok(())
        }
        (_, Some("fragment_meta")) => {
            tessera_write::fragment_meta::consolidate_fragment_meta(copy, key_of(spec)?)?;
            tessera_write::fragment_meta::vacuum_fragment_meta(copy, key_of(spec)?)?;
            Ok(())
        }
        (_, Some("fragments")) => consolidate_fragments(spec, copy),
        _ => Err(format!("unknown operation {spec}").into()),
    }
}

/// A `meta` operation: every value put (as `tessera meta --set` parses
/// its text), then the deletions, in one metadata file.
fn put_metadata(spec: &Value, copy: &Path) -> Result<(), Error> {
    use tessera_write::metadata::{put_group_metadata, value_from_text};
    let typed = |name: &str| {
        tessera::tile::Datatype::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name)
    };
    let mut entries = std::collections::BTreeMap::new();
    for entry in spec["set"].as_array().ok_or("values to set")? {
        let key = entry["key"].as_str().ok_or("a key")?;
        let text = entry["text"].as_str().ok_or("a text")?;
        let datatype = entry["type"].as_str().and_then(typed);
        entries.insert(key.to_owned(), Some(value_from_text(text, datatype)?));
    }
    for key in spec["delete"].as_array().into_iter().flatten() {
        entries.insert(key.as_str().ok_or("a key")?.to_owned(), None);
    }
    if copy.join(tessera::fragment::group::GROUP_FILE).exists() {
        put_group_metadata(copy, &entries, None, None)?;
    } else {
        tessera_write::metadata::put_metadata(copy, &entries, key_of(spec)?, None)?;
    }
    Ok(())
}

/// An `evolve` operation: attributes added and dropped, enumerations
/// extended, the current domain expanded.
fn evolve(spec: &Value, copy: &Path) -> Result<(), Error> {
    let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, None)?;
    let mut evolution = Evolution::default();
    if let Some(add) = spec.get("add") {
        let name = add["name"].as_str().ok_or("an attribute name")?;
        evolution
            .add_attributes
            .push(tessera::schema::json::attribute_from_json(
                add,
                name,
                &[],
                opened.schema.version,
            )?);
    }
    if let Some(drop) = spec["drop"].as_str() {
        evolution.drop_attributes.push(drop.to_owned());
    }
    if let Some(expand) = spec.get("expand") {
        let dims = &opened.schema.dimensions;
        let rect = tessera::schema::json::current_domain_from_json(Some(expand), dims)?;
        evolution.expand_current_domain = rect.ndrectangle;
    }
    if let Some(extend) = spec["extend"].as_object() {
        let current = load_enumerations(&LocalFs, copy, &opened.schema, None)?;
        for (name, values) in extend {
            let e = current
                .iter()
                .find(|e| &e.name == name)
                .ok_or(format!("no enumeration {name}"))?;
            let bytes = tessera_write::evolve::enumeration_values_from_json(e, values)?;
            evolution.extend_enumerations.push((name.clone(), bytes));
        }
    }
    evolve_array(copy, &evolution, None, None)?;
    Ok(())
}

/// A fragment consolidation with the options of `spec`, then a vacuum.
fn consolidate_fragments(spec: &Value, copy: &Path) -> Result<(), Error> {
    use tessera::query::QuerySource;
    use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
    let window = match spec["window"].as_array().map(Vec::as_slice) {
        Some([start, end]) => (
            start.as_u64().ok_or("a window start")?,
            end.as_u64().ok_or("a window end")?,
        ),
        _ => (0, u64::MAX),
    };
    let options = ConsolidateOptions {
        window,
        with_timestamps: spec["with_timestamps"].as_bool().filter(|&keep| keep),
        purge_deleted: spec["purge_deleted"] == true,
        key: key_of(spec)?,
        ..ConsolidateOptions::default()
    };
    consolidate_fragments(copy, &options, &QuerySource, &mut |_| {})?;
    vacuum_fragments(copy, options.key, &mut |_| {})?;
    Ok(())
}
