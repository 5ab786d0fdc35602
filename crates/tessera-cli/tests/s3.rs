//! Every fixture read through `s3://` from a real S3 protocol server
//! (moto, on loopback) equals the local read; groups and single-cell
//! experiments list the same; a write through `s3://` reads back;
//! consolidation, vacuum and group changes through `s3://` leave what
//! they leave locally; the push decoder reads through `s3://` awaited on
//! the caller's runtime as the read over the storage does
//! (`emulated::pushed_reads_equal_reads`).
//!
//! The server: `TESSERA_MOTO_SERVER` names the `moto_server` program
//! (`.ci/run` installs it from PyPI); the test starts it on a free port.
//! Without it the test says so and passes, except under CI (`CI=true`),
//! where a missing server fails it.

mod emulated;

use emulated::{tessera, testdata, BucketStorage, Emulator};
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_emulators::moto::{moto, BUCKET};
use tessera_object_store::{
    ListableStorage, ObjectStorage, ReadableStorage, Storage, WritableStorage,
};

/// Uploads every file under `dir` to the bucket under its path relative
/// to testdata.
fn upload(storage: &ObjectStorage, dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            upload(storage, &p);
        } else {
            let rel = p.strip_prefix(testdata()).unwrap();
            let uri = Path::new(&format!("s3://{BUCKET}")).join(rel);
            storage.put(&uri, &std::fs::read(&p).unwrap()).unwrap();
        }
    }
}

/// The arrays of the release folders, with their keys.
fn fixture_arrays() -> Vec<(PathBuf, Option<String>)> {
    let mut out = Vec::new();
    for release in std::fs::read_dir(testdata()).unwrap().flatten() {
        if !release.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for case in std::fs::read_dir(release.path()).unwrap().flatten() {
            let array = case.path().join("array");
            if !array.is_dir() {
                continue;
            }
            let key = emulated::fixture_key(&case.path());
            out.push((array.strip_prefix(testdata()).unwrap().to_path_buf(), key));
        }
    }
    out.sort();
    out
}

/// `SUB ARRAY [--key K]`.
fn with_key<'a>(sub: &'a str, array: &'a str, key: &'a Option<String>) -> Vec<&'a str> {
    let mut v = vec![sub, array];
    if let Some(k) = key {
        v.extend(["--key", k.as_str()]);
    }
    v
}

#[test]
fn fixtures_read_through_s3_as_locally() {
    let Some(m) = moto() else { return };
    let storage = m.storage();
    for dir in [
        "tiledb-0.19.1",
        "tiledb-0.31.1",
        "tiledb-0.36.1",
        "groups",
        "soma",
    ] {
        upload(&storage, &testdata().join(dir));
    }
    let arrays = fixture_arrays();
    let mut read = 0;
    for (rel, key) in &arrays {
        let release = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if !["tiledb-0.19.1", "tiledb-0.31.1", "tiledb-0.36.1"].contains(&release.as_ref()) {
            continue;
        }
        let local = testdata().join(rel).display().to_string();
        let uri = format!("s3://{BUCKET}/{}", rel.display());
        let mut args = vec!["read", "--format", "jsonl"];
        if let Some(k) = key {
            args.extend(["--key", k.as_str()]);
        }
        let (ok_l, want, err_l) =
            tessera(None, &[&args[..1], &[local.as_str()], &args[1..]].concat());
        let (ok_s, got, err_s) = tessera(
            Some(&m),
            &[&args[..1], &[uri.as_str()], &args[1..]].concat(),
        );
        assert_eq!(ok_l, ok_s, "{uri}: local {err_l} / s3 {err_s}");
        assert_eq!(got, want, "{uri}");
        for sub in ["fragments", "schema"] {
            let (_, l, _) = tessera(None, &with_key(sub, &local, key));
            let (_, s, _) = tessera(Some(&m), &with_key(sub, &uri, key));
            if sub == "schema" {
                assert_eq!(s, l, "{uri}: {sub}");
            } else {
                // Fragment listings name the array's own location.
                assert_eq!(s.lines().count(), l.lines().count(), "{uri}: {sub}");
            }
        }
        read += 1;
    }
    assert!(read > 150, "only {read} arrays read");
    let newest = arrays
        .iter()
        .filter(|(rel, key)| key.is_none() && rel.starts_with("tiledb-0.36.1"));
    let uris: Vec<String> = newest
        .map(|(rel, _)| format!("s3://{BUCKET}/{}", rel.display()))
        .collect();
    emulated::pushed_reads_equal_reads(&m, &uris);
    // Groups and experiments list the same through s3://.
    for group in [
        "groups/tiledb-0.36.1/group_nested/group",
        "soma/experiment_appended/experiment",
    ] {
        let local = testdata().join(group).display().to_string();
        let uri = format!("s3://{BUCKET}/{group}");
        let (ok, want, err) = tessera(None, &["ls", &local, "--recursive", "--json"]);
        assert!(ok, "{err}");
        let (ok, got, err) = tessera(Some(&m), &["ls", &uri, "--recursive", "--json"]);
        assert!(ok, "{uri}: {err}");
        assert_eq!(got, want, "{uri}");
    }
    // `info` (sizes from the listings) and `dump-tile` read the same.
    for case in [
        "tiledb-0.36.1/dense_1d_fragments",
        "tiledb-0.19.1/sparse_2d",
    ] {
        let local = testdata().join(case).join("array");
        let uri = format!("s3://{BUCKET}/{case}/array");
        let (ok_l, l, err_l) = tessera(None, &["info", &local.display().to_string()]);
        let (ok_s, s, err_s) = tessera(Some(&m), &["info", &uri]);
        assert!(ok_l && ok_s, "{case}: {err_l} {err_s}");
        // The first line names the array where it is.
        assert_eq!(
            s.lines().skip(1).collect::<Vec<_>>(),
            l.lines().skip(1).collect::<Vec<_>>(),
            "{case}"
        );
        let fragments = local.join("__fragments");
        let first = std::fs::read_dir(&fragments)
            .unwrap()
            .flatten()
            .next()
            .unwrap();
        let file = first.path().join("a0.tdb");
        let rel = file.strip_prefix(&local).unwrap().display().to_string();
        let (ok_l, l, err_l) = tessera(None, &["dump-tile", &file.display().to_string()]);
        let (ok_s, s, err_s) = tessera(Some(&m), &["dump-tile", &format!("{uri}/{rel}")]);
        assert!(ok_l && ok_s, "{case}: {err_l} {err_s}");
        assert_eq!(s, l, "{case}");
    }
    // A missing object is an error naming it.
    let (ok, _, err) = tessera(Some(&m), &["read", &format!("s3://{BUCKET}/nothing/here")]);
    assert!(!ok && err.contains("s3://fixtures/nothing/here"), "{err}");
}

#[test]
fn writes_through_s3_read_back() {
    let Some(m) = moto() else { return };
    let local = testdata().join("tiledb-0.36.1/random_sparse/array");
    let local = local.display().to_string();
    let uri = format!("s3://{BUCKET}/written/array");
    let (ok, schema, err) = tessera(None, &["schema", &local, "--json"]);
    assert!(ok, "{err}");
    let dir = std::env::temp_dir().join(format!("tessera-s3-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("schema.json"), schema).unwrap();
    let (ok, cells, err) = tessera(None, &["read", &local, "--format", "jsonl"]);
    assert!(ok, "{err}");
    std::fs::write(dir.join("cells.jsonl"), &cells).unwrap();
    let schema = dir.join("schema.json").display().to_string();
    let input = dir.join("cells.jsonl").display().to_string();
    let (ok, _, err) = tessera(Some(&m), &["create", &uri, "--schema", &schema]);
    assert!(ok, "{err}");
    let (ok, _, err) = tessera(
        Some(&m),
        &["write", &uri, "--input", &input, "--timestamp", "5"],
    );
    assert!(ok && err.contains("wrote 310 cells"), "{err}");
    let (ok, _, err) = tessera(Some(&m), &["meta", &uri, "--set", "k=7"]);
    assert!(ok, "{err}");
    let (ok, got, err) = tessera(Some(&m), &["read", &uri, "--format", "jsonl"]);
    assert!(ok, "{err}");
    let sorted = |s: &str| {
        let mut v: Vec<&str> = s.lines().collect();
        v.sort();
        v.join("\n")
    };
    assert_eq!(sorted(&got), sorted(&cells));
    let (ok, meta, err) = tessera(Some(&m), &["meta", &uri, "--json"]);
    assert!(ok && meta.contains("\"k\""), "{meta} {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Copies the folder `from` to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        match p.is_dir() {
            true => copy_dir(&p, &to.join(e.file_name())),
            false => drop(std::fs::copy(&p, to.join(e.file_name())).unwrap()),
        }
    }
}

/// The files under `dir` of a storage, relative to it, counted by their
/// first folder (a fragment's new name differs from copy to copy).
fn shape(storage: &dyn Storage, dir: &Path) -> Vec<(String, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(f) = folders.pop() {
        for e in storage.list(&dir.join(&f)).unwrap() {
            let rel = f.join(&e.name);
            match e.is_dir {
                true => folders.push(rel),
                false => {
                    let top = rel.components().next().unwrap().as_os_str();
                    *counts
                        .entry(top.to_string_lossy().into_owned())
                        .or_insert(0) += 1;
                }
            }
        }
    }
    counts.into_iter().collect()
}

/// Every consolidation and vacuum mode through `s3://` leaves an array
/// that reads, lists and is laid out as the same steps leave a local
/// copy, for a format before 19 (vacuum lists name the fragments by
/// absolute URI: the array's, not the local copy's) and the newest.
#[test]
fn maintenance_through_s3_as_locally() {
    let Some(m) = moto() else { return };
    let storage = m.storage();
    let steps: &[&[&str]] = &[
        &["consolidate"],
        &["vacuum"],
        &["consolidate", "--mode", "commits"],
        &["vacuum", "--mode", "commits"],
        &["consolidate", "--mode", "fragment_meta"],
        &["vacuum", "--mode", "fragment_meta"],
        &["meta", "--set", "a=1"],
        &["meta", "--set", "b=2"],
        &["consolidate", "--mode", "array_meta"],
        &["vacuum", "--mode", "array_meta"],
    ];
    for release in ["tiledb-0.19.1", "tiledb-0.36.1"] {
        let fixture = testdata().join(release).join("random_sparse/array");
        upload(&storage, &fixture);
        let uri = format!("s3://{BUCKET}/{release}/random_sparse/array");
        let local =
            std::env::temp_dir().join(format!("tessera-s3-maint-{}-{release}", std::process::id()));
        let _ = std::fs::remove_dir_all(&local);
        copy_dir(&fixture, &local);
        let local_s = local.display().to_string();
        for step in steps {
            let run = |m: Option<&Emulator>, at: &str| {
                let (ok, _, err) = tessera(m, &[&step[..1], &[at], &step[1..]].concat());
                assert!(ok, "{release}: {step:?} on {at}: {err}");
                err
            };
            run(None, &local_s);
            let said = run(Some(&m), &uri);
            // Straight on the store: nothing copied down or staged.
            assert!(!said.contains("copied"), "{release}: {step:?}: {said}");
            if step[0] == "consolidate" && step.len() == 1 {
                // The vacuum list names fragments where the array is.
                let vac = storage.list(&Path::new(&uri).join("__commits")).unwrap();
                let vac = vac
                    .iter()
                    .find(|e| e.name.ends_with(".vac"))
                    .expect("a .vac");
                let text = storage
                    .read_all(&Path::new(&uri).join("__commits").join(&vac.name))
                    .unwrap();
                let text = String::from_utf8_lossy(&text);
                assert!(!text.contains("file://"), "{release}: {text}");
                if release == "tiledb-0.19.1" {
                    assert!(
                        text.contains(&format!("{uri}/__fragments/")),
                        "{release}: {text}"
                    );
                }
            }
            for what in [
                &["read", "--format", "jsonl"][..],
                &["fragments"],
                &["meta", "--json"],
            ] {
                let (ok_l, l, err_l) = tessera(
                    None,
                    &[&what[..1], &[local_s.as_str()], &what[1..]].concat(),
                );
                let (ok_s, s, err_s) = tessera(
                    Some(&m),
                    &[&what[..1], &[uri.as_str()], &what[1..]].concat(),
                );
                assert!(
                    ok_l && ok_s,
                    "{release}: {what:?} after {step:?}: {err_l} {err_s}"
                );
                match what[0] {
                    // Fragment listings name the array's own location.
                    "fragments" => assert_eq!(
                        s.lines().count(),
                        l.lines().count(),
                        "{release}: after {step:?}"
                    ),
                    _ => assert_eq!(s, l, "{release}: {what:?} after {step:?}"),
                }
            }
            let fresh = ObjectStorage::for_uri(&format!("s3://{BUCKET}")).unwrap();
            assert_eq!(
                shape(&fresh, Path::new(&uri)),
                shape(&tessera::storage::LocalFs, &local),
                "{release}: files after {step:?}"
            );
        }
        std::fs::remove_dir_all(&local).unwrap();
    }
}

/// The process aborted (as a kill would stop it) after each step of a
/// write, a consolidation and a vacuum on `s3://`: the array reads as
/// before or as after, and finishing the work afterwards leaves it reading
/// as it would have.
#[test]
fn a_kill_after_any_step_on_s3_leaves_the_array_readable() {
    let Some(m) = moto() else { return };
    let storage = m.storage();
    let fixture = testdata().join("tiledb-0.36.1/random_sparse/array");
    let local = fixture.display().to_string();
    let (ok, want, err) = tessera(None, &["read", &local, "--format", "jsonl"]);
    assert!(ok, "{err}");
    let dir = std::env::temp_dir().join(format!("tessera-s3-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("cells.jsonl");
    std::fs::write(&input, &want).unwrap();
    let input = input.display().to_string();
    let sorted = |s: &str| {
        let mut v: Vec<String> = s.lines().map(str::to_owned).collect();
        v.sort();
        v
    };
    let reads = |uri: &str| {
        let (ok, got, err) = tessera(Some(&m), &["read", uri, "--format", "jsonl"]);
        assert!(ok, "{uri}: {err}");
        sorted(&got)
    };
    let killed = |args: &[&str], step: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(args)
            .envs(m.env().iter().map(|(k, v)| (k, v)))
            .env("TESSERA_CRASH_AFTER", step)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} not stopped after {step}");
    };
    let run = |args: &[&str]| {
        let (ok, _, err) = tessera(Some(&m), args);
        assert!(ok, "{args:?}: {err}");
    };
    // The fixture uploaded anew under `kill/<case>`.
    let fresh = |case: &str| {
        let uri = format!("s3://{BUCKET}/kill/{case}");
        let mut stack = vec![fixture.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let key = Path::new(&uri).join(p.strip_prefix(&fixture).unwrap());
                    storage.put(&key, &std::fs::read(&p).unwrap()).unwrap();
                }
            }
        }
        uri
    };
    let original = sorted(&want);
    // A write stopped with its files uploaded, its commit not: invisible.
    let uri = fresh("write");
    killed(
        &["write", &uri, "--input", &input, "--timestamp", "50"],
        "FragmentWritten",
    );
    assert_eq!(reads(&uri), original, "write stopped before its commit");
    let (ok, listed, _) = tessera(Some(&m), &["fragments", &uri]);
    assert!(ok && listed.lines().count() > 0);
    for step in ["FragmentWritten", "Committed", "VacuumListed"] {
        let uri = fresh(&format!("c-{step}"));
        killed(&["consolidate", &uri], step);
        assert_eq!(reads(&uri), original, "consolidation stopped after {step}");
        if step == "FragmentWritten" {
            run(&["consolidate", &uri]);
        }
        run(&["vacuum", &uri]);
        assert_eq!(reads(&uri), original, "{step}, then finished");
    }
    for step in ["CommitRemoved", "FolderRemoved", "VacuumListRemoved"] {
        let uri = fresh(&format!("v-{step}"));
        run(&["consolidate", &uri]);
        killed(&["vacuum", &uri], step);
        assert_eq!(reads(&uri), original, "vacuum stopped after {step}");
        run(&["vacuum", &uri]);
        assert_eq!(reads(&uri), original, "{step}, then vacuumed");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Members added to and removed from a group on `s3://`, relative to it
/// and by URI, list as they do in a local group.
#[test]
fn group_members_change_through_s3() {
    let Some(m) = moto() else { return };
    let storage = m.storage();
    let array = testdata().join("tiledb-0.36.1/dense_1d_fragments/array");
    upload(&storage, &array);
    let member = format!("s3://{BUCKET}/tiledb-0.36.1/dense_1d_fragments/array");
    let group = format!("s3://{BUCKET}/g");
    let ok = |args: &[&str]| {
        let (ok, out, err) = tessera(Some(&m), args);
        assert!(ok, "{args:?}: {err}");
        out
    };
    ok(&["group", "create", &group]);
    ok(&["group", "create", &format!("{group}/inner")]);
    ok(&[
        "group",
        "add",
        &group,
        "inner",
        "--relative",
        "--name",
        "in",
    ]);
    ok(&["group", "add", &group, &member, "--name", "arr"]);
    let listed = ok(&["ls", &group, "--json"]);
    assert!(
        listed.contains("\"in\"") && listed.contains("\"arr\""),
        "{listed}"
    );
    // Stored as libtiledb stores them: relative as given, a URI as is.
    let read = m.storage();
    let opened =
        tessera::fragment::group::OpenGroup::open(&read, Path::new(&group), 0, u64::MAX, None)
            .unwrap();
    let mut stored: Vec<(String, bool)> = opened
        .members
        .iter()
        .map(|m| (m.uri.clone(), m.relative))
        .collect();
    stored.sort();
    assert_eq!(
        stored,
        [("inner".to_owned(), true), (member.clone(), false)]
    );
    // Neither an array nor a group: refused, naming it.
    let missing = format!("s3://{BUCKET}/none");
    let (fine, _, err) = tessera(Some(&m), &["group", "add", &group, &missing]);
    assert!(
        !fine && err.contains("neither a TileDB array nor a group"),
        "{err}"
    );
    ok(&["group", "remove", &group, "arr"]);
    let listed = ok(&["ls", &group, "--json"]);
    assert!(
        listed.contains("\"in\"") && !listed.contains("\"arr\""),
        "{listed}"
    );
}

#[test]
fn conditional_puts_keep_the_first_writer() {
    let Some(m) = moto() else { return };
    emulated::conditional_puts_keep_the_first_writer(&m, true);
}
