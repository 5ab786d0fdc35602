//! The asynchronous fragment writer: the synchronous writer's files, byte
//! for byte; nothing committed or left when its storage fails.

mod common;

use common::{block_on, copy_dir, fixed, Local};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_cells::Column;
use tessera_schema::json::schema_from_json;
use tessera_schema::CellValNum;
use tessera_storage::{
    AsyncUpload, AsyncWritableStorage, LocalFs, Pending, StorageError, StorageErrorKind,
};
use tessera_tile::Datatype;
use tessera_write::{
    create_array, latest_schema, AsyncFragmentWriter, FragmentWriter, WriteOptions,
};

fn fresh_array(name: &str, sparse: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-async-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let doc = schema_from_json(&serde_json::json!({
        "array_type": if sparse { "sparse" } else { "dense" },
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 299_999], "tile_extent": 10_000}],
        "attributes": [
            {"name": "v", "type": "FLOAT64", "filters": [{"name": "zstd", "level": 1}]},
            {"name": "s", "type": "STRING_ASCII", "cell_val_num": "var", "nullable": true},
        ],
    }))
    .unwrap();
    create_array(&dir, &doc, None, None).unwrap();
    dir
}

/// 300,000 cells: coordinates in reverse (a sparse write sorts them),
/// numbers, and strings with nulls.
fn columns() -> Vec<Column> {
    let n = 300_000i64;
    let x = (0..n).rev().flat_map(|i| i.to_le_bytes()).collect();
    let v = (0..n)
        .flat_map(|i| (i as f64 * 0.5).to_le_bytes())
        .collect();
    let (mut data, mut offsets, mut validity) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        offsets.push(data.len() as u64);
        data.extend(format!("cell {}", i % 977).bytes());
        validity.push(u8::from(i % 13 != 0));
    }
    offsets.push(data.len() as u64);
    let s = Column {
        name: "s".into(),
        is_dimension: false,
        datatype: Datatype::StringAscii,
        cell_val_num: CellValNum::Var,
        data,
        offsets: Some(offsets),
        validity: Some(validity),
    };
    vec![
        fixed("x", Datatype::Int64, x),
        fixed("v", Datatype::Float64, v),
        s,
    ]
}

/// The attributes of `columns`, for a box written without coordinates.
fn without_x(columns: Vec<Column>) -> Vec<Column> {
    columns.into_iter().filter(|c| c.name != "x").collect()
}

/// Every file of the array's one fragment, by name, and the commits'
/// names without the fragment's uuid.
fn written(dir: &Path) -> (Vec<(String, Vec<u8>)>, Vec<String>) {
    let frags: Vec<_> = std::fs::read_dir(dir.join("__fragments"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(frags.len(), 1, "{}", dir.display());
    let uuid = frags[0]
        .file_name()
        .to_string_lossy()
        .split('_')
        .nth(4)
        .unwrap()
        .to_string();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(frags[0].path())
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    let commits = std::fs::read_dir(dir.join("__commits"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().replace(&uuid, "UUID"))
        .collect();
    (files, commits)
}

/// The same cells written by the synchronous writer and, over the same
/// local files driven asynchronously, by the asynchronous one (a budget
/// cuts the sparse write into fragments committed together; the dense
/// one is given with its coordinates, and as a box without them): the
/// same files, byte for byte.
#[test]
fn the_async_writer_writes_the_sync_writers_files() {
    for (sparse, budget, boxed) in [
        (true, None, false),
        (false, None, false),
        (false, None, true),
        (true, Some(12 << 20), false),
    ] {
        let options = WriteOptions {
            timestamp: Some(1000),
            budget,
            ..WriteOptions::default()
        };
        let sync = fresh_array("sync", sparse);
        // The same schema file (its name is in the fragment metadata).
        let asynced = sync.with_file_name(format!("tessera-async-copy-{}", std::process::id()));
        copy_dir(&sync, &asynced);
        let mut w = FragmentWriter::try_new(&sync, options).unwrap();
        // Twice where a budget is set: past it, each batch is a fragment.
        let batches = if budget.is_some() { 2 } else { 1 };
        for _ in 0..batches {
            match boxed {
                true => w.write_box(&[(0, 299_999)], without_x(columns())).unwrap(),
                false => w.write_owned(columns()).unwrap(),
            }
        }
        let names = w.finish().unwrap();
        let got = block_on(async {
            let schema = latest_schema(&Local, &asynced, None).await?;
            let mut w = AsyncFragmentWriter::new(Arc::new(LocalFs), &asynced, schema, options)?;
            for _ in 0..batches {
                match boxed {
                    true => {
                        w.write_box(vec![(0, 299_999)], without_x(columns()))
                            .await?
                    }
                    false => w.write(columns()).await?,
                }
            }
            w.finish().await
        })
        .unwrap();
        assert_eq!(got.len(), names.len(), "sparse {sparse}, budget {budget:?}");
        if budget.is_none() {
            let ((want, want_commits), (got, got_commits)) = (written(&sync), written(&asynced));
            assert_eq!(got_commits, want_commits, "sparse {sparse}, box {boxed}");
            let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
                files.iter().map(|(n, _)| n.clone()).collect()
            };
            assert_eq!(names(&got), names(&want), "sparse {sparse}, box {boxed}");
            for ((name, g), (_, w)) in got.iter().zip(&want) {
                let first = g.iter().zip(w).position(|(a, b)| a != b);
                assert!(
                    g.len() == w.len() && first.is_none(),
                    "sparse {sparse}, box {boxed}: {name}: {} bytes against {}, first difference at {first:?}",
                    g.len(),
                    w.len()
                );
            }
        } else {
            assert_eq!(got.len(), 2, "the budget cuts the write: {got:?}");
            let fragments =
                tessera_fragment::OpenArray::open(&LocalFs, &asynced, 0, u64::MAX, None)
                    .unwrap()
                    .fragments;
            assert_eq!(fragments.len(), got.len());
        }
        std::fs::remove_dir_all(&sync).unwrap();
        std::fs::remove_dir_all(&asynced).unwrap();
    }
}

/// Local files whose conditional puts fail (a commit refused).
struct NoCommits;

impl AsyncWritableStorage for NoCommits {
    fn put(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        LocalFs.put(path, bytes)
    }
    fn put_new(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        if path.to_string_lossy().contains("__commits") {
            let e = StorageError::new(
                StorageErrorKind::Other,
                path.to_string_lossy(),
                "503 Slow Down",
            );
            return Box::pin(std::future::ready(Err(e)));
        }
        LocalFs.put_new(path, bytes)
    }
    fn upload(&self, path: PathBuf) -> Pending<Box<dyn AsyncUpload>> {
        LocalFs.upload(path)
    }
    fn delete(&self, path: PathBuf) -> Pending<bool> {
        AsyncWritableStorage::delete(&LocalFs, path)
    }
    fn delete_folder(&self, path: PathBuf) -> Pending<usize> {
        AsyncWritableStorage::delete_folder(&LocalFs, path)
    }
    fn create_folder(&self, path: PathBuf) -> Pending<()> {
        AsyncWritableStorage::create_folder(&LocalFs, path)
    }
}

/// A commit the storage refuses fails the write, which leaves no
/// fragment: none committed, no folder left behind.
#[test]
fn a_refused_commit_leaves_nothing() {
    let dir = fresh_array("refused", true);
    let e = block_on(async {
        let schema = latest_schema(&Local, &dir, None).await?;
        let mut w =
            AsyncFragmentWriter::new(Arc::new(NoCommits), &dir, schema, WriteOptions::default())?;
        w.write(columns()).await?;
        w.finish().await
    })
    .unwrap_err();
    assert!(e.to_string().contains("503 Slow Down"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.join("__fragments"))
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let array = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    assert!(array.fragments.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The writer's futures, and the schema read's, can be spawned on a
/// multi-thread runtime (they are `Send`).
#[test]
fn the_futures_can_be_spawned() {
    fn send<T: Send>(_: &T) {}
    let dir = fresh_array("send", true);
    let read = latest_schema(&Local, &dir, None);
    send(&read);
    let schema = block_on(read).unwrap();
    let mut w =
        AsyncFragmentWriter::new(Arc::new(LocalFs), &dir, schema, WriteOptions::default()).unwrap();
    let step = w.write(columns());
    send(&step);
    block_on(step).unwrap();
    let finish = w.finish();
    send(&finish);
    assert_eq!(block_on(finish).unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
