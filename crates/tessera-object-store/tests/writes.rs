//! What a storage lists after its own writes, and how it writes: small
//! files in one PUT, large ones as multipart uploads that appear only
//! when complete.

use std::path::Path;
use tessera_object_store::{ListableStorage, ObjectStorage, ReadableStorage, WritableStorage};

fn names(storage: &ObjectStorage, folder: &str) -> Vec<String> {
    storage
        .list(Path::new(folder))
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect()
}

#[test]
fn a_write_shows_in_every_folder_listed_before_it() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    // Listed (and kept) while empty.
    assert!(names(&s, "memory://b").is_empty());
    assert!(names(&s, "memory://b/a").is_empty());
    s.put(Path::new("memory://b/a/__commits/x.wrt"), &[1])
        .unwrap();
    assert_eq!(names(&s, "memory://b"), ["a"]);
    assert_eq!(names(&s, "memory://b/a"), ["__commits"]);
    assert_eq!(names(&s, "memory://b/a/__commits"), ["x.wrt"]);
    assert!(s.delete(Path::new("memory://b/a/__commits/x.wrt")).unwrap());
    assert!(names(&s, "memory://b/a").is_empty());
    // Known absent from the kept listing: no request says otherwise.
    assert!(!s.delete(Path::new("memory://b/a/__commits/x.wrt")).unwrap());
}

/// A file under one part goes as one PUT; a larger one as a multipart
/// upload, invisible until finished; a writer dropped unfinished aborts
/// its upload and leaves nothing.
#[test]
fn streamed_files_appear_whole_when_finished() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    s.record_requests();
    let mut small = s
        .writer(Path::new("memory://b/f/__fragments/x/a0.tdb"))
        .unwrap();
    small.write(b"abc").unwrap();
    small.write(b"de").unwrap();
    assert_eq!(small.finish().unwrap(), 5);
    let methods: Vec<String> = s.requests().iter().map(|r| r.to_string()).collect();
    assert_eq!(methods, ["PUT f/__fragments/x/a0.tdb"]);

    let big: Vec<u8> = (0..20u32 << 20).map(|i| (i % 251) as u8).collect();
    let path = Path::new("memory://b/f/__fragments/x/a1.tdb");
    let mut w = s.writer(path).unwrap();
    for chunk in big.chunks(3 << 20) {
        w.write(chunk).unwrap();
    }
    assert!(!s.fresh().exists(path), "not visible before it is finished");
    assert_eq!(w.finish().unwrap(), big.len() as u64);
    assert_eq!(s.fresh().read_all(path).unwrap(), big);
    // What the writer sent (the checks above list and read too).
    let sent: Vec<String> = (s.requests().iter().skip(1))
        .filter(|r| !["LIST", "GET"].contains(&r.method))
        .map(|r| r.to_string())
        .collect();
    assert_eq!(
        sent,
        [
            "POST f/__fragments/x/a1.tdb (start multipart)",
            "PUT f/__fragments/x/a1.tdb part 1",
            "PUT f/__fragments/x/a1.tdb part 2",
            "PUT f/__fragments/x/a1.tdb part 3",
            "POST f/__fragments/x/a1.tdb (complete multipart)",
        ]
    );

    let dropped = Path::new("memory://b/f/__fragments/x/a2.tdb");
    let mut w = s.writer(dropped).unwrap();
    w.write(&big).unwrap();
    drop(w);
    assert_eq!(
        s.requests().last().unwrap().to_string(),
        "DELETE f/__fragments/x/a2.tdb (abort multipart)"
    );
    assert!(!s.fresh().exists(dropped));

    assert_eq!(
        s.delete_folder(Path::new("memory://b/f/__fragments/x"))
            .unwrap(),
        2
    );
    assert!(names(&s.fresh(), "memory://b/f").is_empty());
    assert!(names(&s, "memory://b/f").is_empty());
}

/// A conditional put writes where nothing is, keeps what another writer
/// wrote first (an error saying so), and takes its own bytes already
/// there (a put sent again after its answer was lost) as done; another
/// storage of the store, which lists afresh, sees the same.
#[test]
fn a_conditional_put_never_replaces_another_writers_file() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    let f = Path::new("memory://b/a/__commits/__1_1_x_22.wrt");
    s.put_new(f, b"mine").unwrap();
    s.put_new(f, b"mine").unwrap();
    let e = s.put_new(f, b"theirs").unwrap_err();
    assert_eq!(
        e.kind(),
        tessera_storage::StorageErrorKind::AlreadyExists,
        "{e}"
    );
    assert!(e.to_string().contains("__1_1_x_22.wrt"), "{e}");
    assert_eq!(s.fresh().read_all(f).unwrap(), b"mine");
    assert_eq!(names(&s, "memory://b/a/__commits"), ["__1_1_x_22.wrt"]);
}
