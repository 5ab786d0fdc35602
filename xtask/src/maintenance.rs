//! Part of `cargo xtask check-writes`: what changes an array besides
//! writing cells (metadata put and deleted, schema evolution, deletes,
//! commits and metadata consolidated and vacuumed), done by tessera on a
//! copy of a fixture and compared, by the release that wrote the fixture,
//! with libtiledb doing the same to another copy (`xtask/fixtures/check_*.py`).

use crate::writes::copy_dir;
use crate::{root, run, venv, Error};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use tessera::schema::load_enumerations;
use tessera::tile::storage::LocalFs;
use tessera_write::evolve::{evolve_array, Evolution};

/// Every check, for one release's fixtures.
pub fn check_maintenance(release: &str) -> Result<(), Error> {
    check_metadata(release)?;
    check_evolution(release)?;
    if release >= "0.23" {
        check_extension(release)?;
    }
    if release == "0.36.1" {
        check_expansion(release)?;
    }
    check_delete(release)?;
    for case in ["deletes", "dense_1d_fragments", "sparse_dups"] {
        let consolidate = |copy: &Path| -> Result<(), Error> {
            tessera_write::commits::consolidate_commits(copy, None)?;
            tessera_write::commits::vacuum_commits(copy)?;
            Ok(())
        };
        against_libtiledb(release, case, consolidate, "check_commits.py", &[])?;
    }
    let consolidate = |copy: &Path| -> Result<(), Error> {
        tessera_write::metadata::consolidate_metadata(copy, None)?;
        tessera_write::metadata::vacuum_metadata(copy)?;
        Ok(())
    };
    against_libtiledb(
        release,
        "array_metadata",
        consolidate,
        "check_meta_consolidation.py",
        &[],
    )?;
    check_fragment_consolidation(release)?;
    for case in [
        "random_sparse",
        "random_dense",
        "dense_3d_overlaps",
        "sparse_dups",
    ] {
        let consolidate = |copy: &Path| -> Result<(), Error> {
            tessera_write::fragment_meta::consolidate_fragment_meta(copy, None)?;
            tessera_write::fragment_meta::vacuum_fragment_meta(copy)?;
            Ok(())
        };
        against_libtiledb(release, case, consolidate, "check_fragment_meta.py", &[])?;
    }
    eprintln!(
        "metadata, evolution, deletes and consolidation by tessera: as TileDB-Py {release}'s own"
    );
    Ok(())
}

/// Copies `release`'s fixture `case` to `target/check-maintenance/`,
/// changes the copy with `change`, and has that release's TileDB-Py run
/// `script` on the original, the copy and `args`, printing its report.
fn against_libtiledb(
    release: &str,
    case: &str,
    change: impl FnOnce(&Path) -> Result<(), Error>,
    script: &str,
    args: &[String],
) -> Result<(), Error> {
    let original = root().join(format!("testdata/tiledb-{release}/{case}/array"));
    let dir = root().join("target/check-maintenance").join(release);
    let copy = dir.join(format!("{case}-{}", script.trim_end_matches(".py")));
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&original, &copy)?;
    change(&copy)?;
    let report = run(Command::new(venv(release)?)
        .arg(root().join("xtask/fixtures").join(script))
        .arg(&original)
        .arg(&copy)
        .args(args))?;
    print!("{}", String::from_utf8_lossy(&report.stdout));
    Ok(())
}

/// Metadata keys put (every type TileDB-Py writes, an overwrite) and one
/// deleted, in an array and in a group: the release reads the original's
/// metadata with those changes.
fn check_metadata(release: &str) -> Result<(), Error> {
    use tessera_write::metadata::{put_group_metadata, put_metadata, value_from_text};
    let typed = |name: &str| {
        tessera::tile::Datatype::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name)
    };
    let sets = [
        ("added_int", "42", None, json!(42)),
        ("added_float", "0.25", None, json!(0.25)),
        ("ints", "[4, 5]", None, json!([4, 5])),
        ("added_str", "x, y", None, json!("x, y")),
        (
            "added_blob",
            "00ff10",
            Some("BLOB"),
            json!({"hex": "00ff10"}),
        ),
        ("added_i16", "[-3, 4]", Some("INT16"), json!([-3, 4])),
    ];
    let mut entries = std::collections::BTreeMap::new();
    let mut expected = serde_json::Map::new();
    for (key, text, datatype, value) in sets {
        entries.insert(
            key.to_owned(),
            Some(value_from_text(text, datatype.and_then(typed))?),
        );
        expected.insert(key.to_owned(), value);
    }
    entries.insert("str".to_owned(), None);
    let put = |copy: &Path| -> Result<(), Error> {
        put_metadata(copy, &entries, None, None)?;
        Ok(())
    };
    let changes = json!({"set": expected, "delete": ["str"]}).to_string();
    against_libtiledb(
        release,
        "array_metadata",
        put,
        "check_meta.py",
        std::slice::from_ref(&changes),
    )?;
    // The group of `testdata/groups/<release>/group_nested`.
    let original = root().join(format!(
        "testdata/groups/tiledb-{release}/group_nested/group"
    ));
    let copy = root()
        .join("target/check-maintenance")
        .join(release)
        .join("group-check_meta");
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&original, &copy)?;
    put_group_metadata(&copy, &entries, None, None)?;
    let report = run(Command::new(venv(release)?)
        .arg(root().join("xtask/fixtures/check_meta.py"))
        .arg(&original)
        .arg(&copy)
        .arg(changes))?;
    print!("{}", String::from_utf8_lossy(&report.stdout));
    Ok(())
}

/// `sparse_2d` evolved: INT16 `w` with fill -7 added, `i` dropped.
fn check_evolution(release: &str) -> Result<(), Error> {
    let add = json!({"name": "w", "type": "INT16", "fill_value": -7});
    let evolve = |copy: &Path| -> Result<(), Error> {
        let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, None)?;
        let attribute =
            tessera::schema::json::attribute_from_json(&add, "w", &[], opened.schema.version)?;
        let evolution = Evolution {
            add_attributes: vec![attribute],
            drop_attributes: vec!["i".into()],
            ..Default::default()
        };
        evolve_array(copy, &evolution, None, None)?;
        Ok(())
    };
    let spec = json!({"add": add, "drop": "i"}).to_string();
    against_libtiledb(release, "sparse_2d", evolve, "check_evolve.py", &[spec])
}

/// `current_domain`'s current domain expanded from [0, 49] to [0, 99].
fn check_expansion(release: &str) -> Result<(), Error> {
    let expand = json!([[0, 99]]);
    let evolve = |copy: &Path| -> Result<(), Error> {
        let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, None)?;
        let dims = &opened.schema.dimensions;
        let rect = tessera::schema::json::current_domain_from_json(Some(&expand), dims)?;
        let evolution = Evolution {
            expand_current_domain: rect.ndrectangle,
            ..Default::default()
        };
        evolve_array(copy, &evolution, None, None)?;
        Ok(())
    };
    let spec = json!({"expand": expand}).to_string();
    against_libtiledb(
        release,
        "current_domain",
        evolve,
        "check_evolve.py",
        &[spec],
    )
}

/// `enumerations`' enumerations extended (strings and numbers).
fn check_extension(release: &str) -> Result<(), Error> {
    let extend = json!({"colors": ["purple", "teal"], "sizes": [40]});
    let evolve = |copy: &Path| -> Result<(), Error> {
        let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, None)?;
        let current = load_enumerations(&LocalFs, copy, &opened.schema, None)?;
        let mut evolution = Evolution::default();
        for (name, values) in extend.as_object().ok_or("an object")? {
            let e = current
                .iter()
                .find(|e| &e.name == name)
                .ok_or("an enumeration")?;
            let bytes = tessera_write::evolve::enumeration_values_from_json(e, values)?;
            evolution.extend_enumerations.push((name.clone(), bytes));
        }
        evolve_array(copy, &evolution, None, None)?;
        Ok(())
    };
    let spec = json!({"extend": extend}).to_string();
    against_libtiledb(release, "enumerations", evolve, "check_evolve.py", &[spec])
}

/// `sparse_2d`'s cells where `i < 0 or f > 0.5` deleted.
fn check_delete(release: &str) -> Result<(), Error> {
    let cond = "i < 0 or f > 0.5";
    let delete = |copy: &Path| -> Result<(), Error> {
        let opened = tessera::OpenArray::open(&LocalFs, copy, 0, u64::MAX, None)?;
        let expr = tessera::Expr::parse(cond, &opened.schema)?;
        tessera_write::delete::delete_cells(copy, &expr, None, None)?;
        Ok(())
    };
    against_libtiledb(
        release,
        "sparse_2d",
        delete,
        "check_delete.py",
        &[cond.to_owned()],
    )
}

/// Fragments consolidated and vacuumed by tessera: read at every time as
/// after libtiledb's own consolidation (same options): at the latest
/// time, and with timestamps at every time. Dense and sparse, duplicates;
/// deletes from 0.23.5.
pub fn check_fragment_consolidation(release: &str) -> Result<(), Error> {
    use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
    let mut runs: Vec<(&str, bool, bool)> = vec![
        ("random_sparse", false, false),
        ("random_dense", false, false),
        ("dense_1d_fragments", false, false),
        ("dense_3d_overlaps", false, false),
        ("sparse_dups", false, false),
        ("random_sparse", true, false),
        ("sparse_dups", true, false),
        // The window 2..4 of five fragments (with timestamps: every time).
        ("random_sparse_window", true, false),
    ];
    if release >= "0.23" {
        runs.extend([
            ("deletes", true, false),
            ("deletes_overwritten", true, false),
            ("deletes", false, true),
            ("deletes_overwritten", false, true),
        ]);
    }
    for (case, with_timestamps, purge_deleted) in runs {
        let window = match case {
            "random_sparse_window" => (2, 4),
            _ => (0, u64::MAX),
        };
        let case = case.trim_end_matches("_window");
        let options = ConsolidateOptions {
            window,
            with_timestamps,
            purge_deleted,
            ..ConsolidateOptions::default()
        };
        let consolidate = |copy: &Path| -> Result<(), Error> {
            consolidate_fragments(copy, &options, &mut |_| {})?;
            vacuum_fragments(copy, &mut |_| {})?;
            Ok(())
        };
        let spec = json!({"with_timestamps": with_timestamps, "purge_deleted": purge_deleted,
            "window": (window.1 != u64::MAX).then_some([window.0, window.1])});
        against_libtiledb(
            release,
            case,
            consolidate,
            "check_consolidation.py",
            &[spec.to_string()],
        )?;
    }
    Ok(())
}
