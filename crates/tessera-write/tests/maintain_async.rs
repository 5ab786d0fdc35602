//! Consolidation and vacuum awaited over an asynchronous storage: the
//! synchronous functions' results and files, byte for byte (less the
//! UUIDs of new names), on arrays libtiledb wrote.

mod common;

use common::{block_on, copy_dir, fixed, Local};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_storage::{AsyncLocation, LocalFs};
use tessera_write::{commits, consolidate, fragment_meta, maintain_async, metadata, WriteError};

/// One maintenance step, run both ways: what each returned, as text.
type Both = (
    fn(&Path) -> Result<String, WriteError>,
    fn(
        AsyncLocation,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, WriteError>>>>,
);

fn name(n: Option<String>) -> String {
    format!("{:?}", n.map(|n| without_uuids(&n)))
}

/// A name with each 32-hex-digit part (a UUID) replaced by `U`.
fn without_uuids(name: &str) -> String {
    let hex = |p: &str| p.len() >= 32 && p[..32].chars().all(|c| c.is_ascii_hexdigit());
    name.split('_')
        .map(|p| match hex(p) {
            true => format!("U{}", &p[32..]),
            false => p.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("_")
}

const CONSOLIDATE_COMMITS: Both = (
    |p| commits::consolidate_commits(p, None).map(name),
    |a| {
        Box::pin(async move {
            maintain_async::consolidate_commits(&a, None)
                .await
                .map(name)
        })
    },
);
const VACUUM_COMMITS: Both = (
    |p| commits::vacuum_commits(p, None).map(|n| n.to_string()),
    |a| Box::pin(async move { Ok(maintain_async::vacuum_commits(&a, None).await?.to_string()) }),
);
const CONSOLIDATE_FRAGMENT_META: Both = (
    |p| fragment_meta::consolidate_fragment_meta(p, None).map(name),
    |a| {
        Box::pin(async move {
            maintain_async::consolidate_fragment_meta(&a, None)
                .await
                .map(name)
        })
    },
);
const VACUUM_FRAGMENT_META: Both = (
    |p| fragment_meta::vacuum_fragment_meta(p, None).map(|n| n.to_string()),
    |a| {
        Box::pin(async move {
            Ok(maintain_async::vacuum_fragment_meta(&a, None)
                .await?
                .to_string())
        })
    },
);
const VACUUM_FRAGMENTS: Both = (
    |p| consolidate::vacuum_fragments(p, None, &mut |_| {}).map(|n| n.to_string()),
    |a| {
        Box::pin(async move {
            Ok(maintain_async::vacuum_fragments(&a, None, None)
                .await?
                .to_string())
        })
    },
);
const CONSOLIDATE_METADATA: Both = (
    |p| metadata::consolidate_metadata(p, None).map(name),
    |a| {
        Box::pin(async move {
            maintain_async::consolidate_metadata(&a, None)
                .await
                .map(name)
        })
    },
);
const VACUUM_METADATA: Both = (
    |p| metadata::vacuum_metadata(p, None).map(|n| n.to_string()),
    |a| Box::pin(async move { Ok(maintain_async::vacuum_metadata(&a, None).await?.to_string()) }),
);

/// Every file under `dir`: its path (UUIDs replaced) and bytes (the
/// folder's own path, in the absolute URIs of old formats' vacuum lists,
/// replaced), sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let rel = format!("{rel}/{}", without_uuids(&e.file_name().to_string_lossy()));
            match e.path().is_dir() {
                true => walk(&e.path(), &rel, out),
                false => out.push((rel, std::fs::read(e.path()).unwrap())),
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    let own = dir.display().to_string();
    for (_, bytes) in &mut out {
        if let Ok(text) = std::str::from_utf8(bytes) {
            *bytes = text.replace(&own, "ARRAY").into_bytes();
        }
    }
    out.sort();
    out
}

/// The same files under `a` and `b`, byte for byte.
fn same_files(a: &Path, b: &Path, what: &str) {
    let (a, b) = (files(a), files(b));
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "{what}");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
        assert!(
            x == y,
            "{what}: {name}: {:?} against {:?}",
            text(x),
            text(y)
        );
    }
}

/// Runs `steps` on two copies of the fixture `array`, one synchronously
/// and one awaited: the same results after each step, and the same files.
fn same_both_ways(array: &str, steps: &[Both]) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(array)
        .join("array");
    let tmp = |side: &str| -> PathBuf {
        let tag = array.replace('/', "-");
        std::env::temp_dir().join(format!("tessera-maint-{tag}-{side}-{}", std::process::id()))
    };
    let (sync_dir, async_dir) = (tmp("sync"), tmp("async"));
    copy_dir(&src, &sync_dir);
    copy_dir(&src, &async_dir);
    let at = AsyncLocation::read_and_written(Arc::new(Local), Arc::new(LocalFs), &async_dir);
    let mut results = Vec::new();
    for (i, (run, awaited)) in steps.iter().enumerate() {
        let sync = run(&sync_dir).unwrap();
        let got = block_on(awaited(at.clone())).unwrap();
        assert_eq!(got, sync, "{array}: step {i}");
        same_files(&sync_dir, &async_dir, &format!("{array}: step {i}"));
        results.push(sync);
    }
    std::fs::remove_dir_all(&sync_dir).unwrap();
    std::fs::remove_dir_all(&async_dir).unwrap();
    results
}

/// Commits and fragment metadata consolidated, then the fragments a
/// consolidation replaced, the commits and the fragment metadata vacuumed.
#[test]
fn consolidated_fragments_vacuumed_alike() {
    let steps = [
        CONSOLIDATE_COMMITS,
        CONSOLIDATE_FRAGMENT_META,
        VACUUM_FRAGMENTS,
        VACUUM_COMMITS,
        CONSOLIDATE_FRAGMENT_META,
        VACUUM_FRAGMENT_META,
    ];
    let got = same_both_ways("tiledb-0.36.1/consolidated", &steps);
    // Three fragments replaced, their three commits removed; the two
    // fragment metadata files end at the same time, so both stay.
    assert_eq!(got[2..4], ["3", "3"], "{got:?}");
    assert_eq!(got[5], "0", "{got:?}");
    let got = same_both_ways("tiledb-0.36.1/deletes_consolidated", &steps);
    assert!(got[0].starts_with("Some"), "{got:?}");
}

/// A vacuum of commits already consolidated: the commits go, the `.con`
/// stays.
#[test]
fn consolidated_commits_vacuumed_alike() {
    let got = same_both_ways(
        "tiledb-0.36.1/vacuumed",
        &[VACUUM_COMMITS, CONSOLIDATE_COMMITS],
    );
    assert_eq!(got[0], "2", "{got:?}");
}

/// Array metadata consolidated and vacuumed, at format 22 (the vacuum
/// list relative to the array) and at the format of TileDB-Py 0.19.1
/// (absolute `file://` URIs).
#[test]
fn array_metadata_consolidated_and_vacuumed_alike() {
    for array in [
        "tiledb-0.36.1/array_metadata",
        "tiledb-0.19.1/array_metadata",
    ] {
        let got = same_both_ways(array, &[CONSOLIDATE_METADATA, VACUUM_METADATA]);
        assert!(got[0].starts_with("Some"), "{array}: {got:?}");
        assert_eq!(got[1], "3", "{array}: two files and the list: {got:?}");
    }
}

/// Nothing to do is nothing done, both ways.
#[test]
fn nothing_to_vacuum_alike() {
    let got = same_both_ways(
        "tiledb-0.36.1/sparse_2d",
        &[VACUUM_FRAGMENTS, VACUUM_COMMITS, VACUUM_METADATA],
    );
    assert_eq!(got, ["0", "0", "0"]);
}

/// A failure while planning carries out nothing: a wrong key refuses the
/// vacuum before any removal.
#[test]
fn a_refused_vacuum_removes_nothing() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/encrypted_fragments/array");
    let dir = std::env::temp_dir().join(format!("tessera-maint-refused-{}", std::process::id()));
    copy_dir(&src, &dir);
    let before = files(&dir);
    let at = AsyncLocation::read_and_written(Arc::new(Local), Arc::new(LocalFs), &dir);
    let key = Some(tessera_filters::EncryptionKey::new(
        *b"0123456789abcdef0123456789abcdef",
    ));
    let err = block_on(maintain_async::vacuum_commits(&at, key)).unwrap_err();
    assert!(err.to_string().contains("key"), "{err}");
    assert!(files(&dir) == before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Files naming commits are named for the timestamps the commits span,
/// not from the first and last name in name order (`__1000_1000_…`
/// sorts before `__5_5_…`; libtiledb refuses to make a name whose start
/// is after its end), both ways.
#[test]
fn files_naming_commits_are_named_for_their_range() {
    use tessera_write::{create_array, FragmentWriter, WriteOptions};
    let dir = std::env::temp_dir().join(format!("tessera-maint-range-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let doc = tessera_schema::json::schema_from_json(&serde_json::json!({
        "array_type": "sparse",
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
        "attributes": [{"name": "v", "type": "INT32"}],
    }))
    .unwrap();
    create_array(&dir, &doc, None, None).unwrap();
    let mut fragments = Vec::new();
    for t in [1000u64, 5] {
        let options = WriteOptions {
            timestamp: Some(t),
            ..WriteOptions::default()
        };
        let mut w = FragmentWriter::try_new(&dir, options).unwrap();
        w.write_owned(vec![
            fixed(
                "x",
                tessera_tile::Datatype::Int64,
                7i64.to_le_bytes().to_vec(),
            ),
            fixed(
                "v",
                tessera_tile::Datatype::Int32,
                (t as i32).to_le_bytes().to_vec(),
            ),
        ])
        .unwrap();
        fragments.extend(w.finish().unwrap());
    }
    // Both fragments replaced, as a consolidation would list them.
    let listed: String = fragments
        .iter()
        .map(|f| format!("/__fragments/{f}\n"))
        .collect();
    std::fs::write(
        dir.join("__commits")
            .join(format!("__5_1000_{}_22.vac", "0".repeat(32))),
        listed,
    )
    .unwrap();
    let copy = dir.with_extension("async");
    copy_dir(&dir, &copy);
    let con = commits::consolidate_commits(&dir, None).unwrap().unwrap();
    consolidate::vacuum_fragments(&dir, None, &mut |_| {}).unwrap();
    let at = AsyncLocation::read_and_written(Arc::new(Local), Arc::new(LocalFs), &copy);
    let con_async = block_on(async {
        let con = maintain_async::consolidate_commits(&at, None).await?;
        maintain_async::vacuum_fragments(&at, None, None).await?;
        Ok::<_, WriteError>(con)
    })
    .unwrap()
    .unwrap();
    for (dir, con) in [(&dir, con), (&copy, con_async)] {
        assert!(con.starts_with("__5_1000_"), "{con}");
        let names: Vec<String> = std::fs::read_dir(dir.join("__commits"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let ign = names
            .iter()
            .find(|n| n.ends_with(".ign"))
            .expect("an ignore file");
        assert!(ign.starts_with("__5_1000_"), "{names:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&copy).unwrap();
}
