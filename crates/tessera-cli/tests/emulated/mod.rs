//! What the S3, Azure and GCS tests share: the storage of an emulator's
//! bucket (`tessera_emulators` starts them), the `tessera` binary run
//! against it, and (for
//! Azure and GCS) two checks: every fixture reads through the store as it
//! reads locally (and, pushed, as it reads over the store), and writes,
//! metadata, consolidation and vacuum there leave an array that reads as
//! the same steps leave a local copy.
#![allow(dead_code)] // each test file uses its part

pub use tessera_emulators::Emulator;

use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_object_store::{ObjectStorage, WritableStorage};

/// The storage tessera makes for an emulator's bucket from its environment.
pub trait BucketStorage {
    fn storage(&self) -> ObjectStorage;
}

impl BucketStorage for Emulator {
    fn storage(&self) -> ObjectStorage {
        self.with_env(|| ObjectStorage::for_uri(&self.root).unwrap())
    }
}

/// `tessera ARGS`, against the emulator when given: success, stdout, stderr.
pub fn tessera(e: Option<&Emulator>, args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(args);
    if let Some(e) = e {
        cmd.envs(e.env().iter().map(|(k, v)| (k, v)));
    }
    let out = cmd.output().expect("tessera runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The encryption key of the fixture `case` (its folder), if it has one.
pub fn fixture_key(case: &Path) -> Option<String> {
    let expected: serde_json::Value = std::fs::read(case.join("expected.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    expected["case"]["key"].as_str().map(str::to_owned)
}

/// Uploads the files under `dir` as `uri/<path relative to dir>`.
pub fn upload(storage: &ObjectStorage, dir: &Path, uri: &str) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let key = Path::new(uri).join(p.strip_prefix(dir).unwrap());
                storage.put(&key, &std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
}

/// `SUB PATH [ARGS...] [--key K]` run on the local fixture and on its
/// copy in the store: both succeed or fail, and print the same.
fn same_output(e: &Emulator, sub: &[&str], local: &str, uri: &str, key: &Option<String>) {
    let mut rest: Vec<&str> = sub[1..].to_vec();
    if let Some(k) = key {
        rest.extend(["--key", k.as_str()]);
    }
    let (ok_l, l, err_l) = tessera(None, &[&sub[..1], &[local], &rest].concat());
    let (ok_e, got, err_e) = tessera(Some(e), &[&sub[..1], &[uri], &rest].concat());
    assert_eq!(ok_l, ok_e, "{uri}: {sub:?}: local {err_l} / store {err_e}");
    assert_eq!(got, l, "{uri}: {sub:?}");
}

/// Every fixture of the oldest and newest release, uploaded to the store,
/// reads (cells and schema) as it reads locally; the newest release's
/// unencrypted ones read pushed as over the store
/// ([`pushed_reads_equal_reads`]).
pub fn fixtures_read_as_locally(e: &Emulator) {
    let storage = e.storage();
    let mut read = 0;
    let mut newest = Vec::new();
    for release in ["tiledb-0.19.1", "tiledb-0.36.1"] {
        for case in std::fs::read_dir(testdata().join(release))
            .unwrap()
            .flatten()
        {
            let array = case.path().join("array");
            if !array.is_dir() {
                continue;
            }
            let key = fixture_key(&case.path());
            let name = case.file_name().to_string_lossy().into_owned();
            let uri = format!("{}/{release}/{name}", e.root);
            upload(&storage, &array, &uri);
            let local = array.display().to_string();
            same_output(e, &["read", "--format", "jsonl"], &local, &uri, &key);
            same_output(e, &["schema"], &local, &uri, &key);
            if release == "tiledb-0.36.1" && key.is_none() {
                newest.push(uri);
            }
            read += 1;
        }
    }
    assert!(read > 100, "only {read} arrays read");
    pushed_reads_equal_reads(e, &newest);
}

/// The push decoder, which does no I/O, with its needs answered by the
/// store awaited on a current-thread runtime (`AsyncStorage`), reads each
/// array of `uris` as the read over the storage does (the same batches,
/// or the same error), whether driven on the runtime's task or decoded on
/// rayon's pool with tiles fetched ahead (`decoded_on_pool`, as the SQL
/// scans read); and the storage starts no runtime of its own.
pub fn pushed_reads_equal_reads(e: &Emulator, uris: &[String]) {
    use futures::StreamExt;
    use std::sync::Arc;
    use tessera::query::push::{decoded_on_pool, Convert, PushDecoder};
    use tessera::query::{ReadRequest, ReadResult, ReadSession};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = e.storage().on_runtime(rt.handle().clone());
    let request = ReadRequest::new().budget(64 << 10);
    let same = |a: &ReadResult, b: &ReadResult| {
        a.cell_count == b.cell_count
            && a.columns.len() == b.columns.len()
            && a.columns.iter().zip(&b.columns).all(|(x, y)| {
                (&x.name, &x.data, &x.offsets, &x.validity)
                    == (&y.name, &y.data, &y.offsets, &y.validity)
            })
    };
    for uri in uris {
        let path = Path::new(uri);
        let session = ReadSession::open(Arc::new(e.storage()), path, None);
        let want: Vec<_> = match session.and_then(|s| s.batches(&request)) {
            Ok(batches) => batches.map(|b| b.map_err(|e| e.to_string())).collect(),
            Err(e) => vec![Err(e.to_string())],
        };
        let decoder = PushDecoder::new(path, None, request.clone());
        let got: Vec<_> = rt.block_on(decoder.stream_from(Arc::new(on.clone())).collect());
        // Decoded on rayon's pool, a dense read's next batches' tiles
        // fetched ahead, as the SQL scans read.
        let ahead = PushDecoder::new(path, None, request.clone()).ahead(1 << 20);
        let convert: Convert<ReadResult> = Arc::new(Ok);
        let pooled = decoded_on_pool(ahead, Some(Arc::new(on.clone())), convert);
        let got_pooled: Vec<_> = rt.block_on(pooled.collect());
        for (driver, got) in [("awaited", got), ("pooled, ahead", got_pooled)] {
            assert_eq!(got.len(), want.len(), "{uri} {driver}");
            for (g, w) in got.iter().zip(&want) {
                match (g, w) {
                    (Ok(g), Ok(w)) => assert!(same(g, w), "{uri} {driver}"),
                    (Err(g), Err(w)) => assert_eq!(&g.to_string(), w, "{uri} {driver}"),
                    _ => panic!("{uri} {driver}: {g:?} / {w:?}"),
                }
            }
        }
    }
    assert!(uris.len() > 50, "only {} arrays pushed", uris.len());
    assert!(!on.started_own_runtime());
}

/// A write, metadata, and every consolidation and vacuum mode, run on a
/// fixture in the store and on a local copy: after each step both read
/// the same cells and metadata and list as many fragments. Then a new
/// array created and written in the store reads as the fixture.
pub fn writes_and_maintenance_as_locally(e: &Emulator, tag: &str) {
    let storage = e.storage();
    let fixture = testdata().join("tiledb-0.36.1/random_sparse/array");
    let uri = format!("{}/maintained", e.root);
    upload(&storage, &fixture, &uri);
    let local = std::env::temp_dir().join(format!("tessera-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&local);
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(&local)
        .status();
    assert!(copied.unwrap().success());
    let local_s = local.display().to_string();
    let input = local.with_extension("arrow");
    let input_s = input.display().to_string();
    let (ok, _, err) = tessera(
        None,
        &["read", &local_s, "--format", "arrow", "-o", &input_s],
    );
    assert!(ok, "{err}");
    let steps: &[&[&str]] = &[
        &["write", "--input", &input_s, "--timestamp", "100"],
        &["meta", "--set", "a=1"],
        &["consolidate"],
        &["vacuum"],
        &["consolidate", "--mode", "commits"],
        &["vacuum", "--mode", "commits"],
        &["consolidate", "--mode", "fragment_meta"],
        &["vacuum", "--mode", "fragment_meta"],
        &["meta", "--set", "b=2"],
        &["consolidate", "--mode", "array_meta"],
        &["vacuum", "--mode", "array_meta"],
    ];
    for step in steps {
        for (at, store) in [(local_s.as_str(), None), (uri.as_str(), Some(e))] {
            let (ok, _, err) = tessera(store, &[&step[..1], &[at], &step[1..]].concat());
            assert!(ok, "{step:?} on {at}: {err}");
        }
        same_output(e, &["read", "--format", "jsonl"], &local_s, &uri, &None);
        same_output(e, &["meta", "--json"], &local_s, &uri, &None);
        let (_, l, _) = tessera(None, &["fragments", &local_s]);
        let (_, r, _) = tessera(Some(e), &["fragments", &uri]);
        assert_eq!(r.lines().count(), l.lines().count(), "after {step:?}");
    }
    let (ok, schema, err) = tessera(None, &["schema", &local_s, "--json"]);
    assert!(ok, "{err}");
    let schema_file = local.with_extension("json");
    std::fs::write(&schema_file, schema).unwrap();
    let created = format!("{}/created", e.root);
    let schema_s = schema_file.display().to_string();
    let (ok, _, err) = tessera(Some(e), &["create", &created, "--schema", &schema_s]);
    assert!(ok, "{err}");
    let (ok, _, err) = tessera(Some(e), &["write", &created, "--input", &input_s]);
    assert!(ok, "{err}");
    let sorted = |s: String| {
        let mut v: Vec<String> = s.lines().map(str::to_owned).collect();
        v.sort();
        v
    };
    let (_, want, _) = tessera(None, &["read", &local_s, "--format", "jsonl"]);
    let (ok, got, err) = tessera(Some(e), &["read", &created, "--format", "jsonl"]);
    assert!(ok, "{err}");
    assert_eq!(sorted(got), sorted(want));
    std::fs::remove_dir_all(&local).unwrap();
    std::fs::remove_file(&input).unwrap();
    std::fs::remove_file(&schema_file).unwrap();
}

/// Conditional puts on the store: a name written once is kept, a second
/// writer of it is refused (AlreadyExists) and the first bytes stay; the
/// same bytes sent again (a put whose answer was lost) are taken as done.
/// Where the emulator ignores the condition (`refuses` false), only that
/// the conditional put is taken and written.
pub fn conditional_puts_keep_the_first_writer(e: &Emulator, refuses: bool) {
    use tessera_object_store::ReadableStorage;
    let storage = e.storage();
    let name = format!(
        "{}/conditional/__commits/__1_1_{}_22.wrt",
        e.root,
        std::process::id()
    );
    let path = Path::new(&name);
    storage.put_new(path, b"first").unwrap();
    assert_eq!(storage.fresh().read_all(path).unwrap(), b"first");
    storage.put_new(path, b"first").unwrap();
    if !refuses {
        return;
    }
    let refused = storage.put_new(path, b"second").unwrap_err();
    assert_eq!(
        refused.kind(),
        tessera::storage::StorageErrorKind::AlreadyExists,
        "{refused}"
    );
    assert_eq!(storage.fresh().read_all(path).unwrap(), b"first");
}
