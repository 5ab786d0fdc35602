//! What a storage lists after its own writes, and staged writes: the
//! write runs on a local copy and is published with its commit last.

use std::path::Path;
use tessera_object_store::{staged_write, ObjectStorage, ObjectStoreError, Storage};

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
    s.put(Path::new("memory://b/a/__commits/x.wrt"), vec![1])
        .unwrap();
    assert_eq!(names(&s, "memory://b"), ["a"]);
    assert_eq!(names(&s, "memory://b/a"), ["__commits"]);
    assert_eq!(names(&s, "memory://b/a/__commits"), ["x.wrt"]);
    s.delete(Path::new("memory://b/a/__commits/x.wrt")).unwrap();
    assert!(names(&s, "memory://b/a").is_empty());
}

#[test]
fn a_staged_write_publishes_what_it_added_and_nothing_on_failure() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    s.put(Path::new("memory://b/a/__schema/s1"), b"schema".to_vec())
        .unwrap();
    let uri = Path::new("memory://b/a");
    // The writer sees the schema copied down, and adds a fragment and its commit.
    let ((), uploaded) = staged_write(&s, uri, |local| {
        assert_eq!(std::fs::read(local.join("__schema/s1"))?, b"schema");
        std::fs::create_dir_all(local.join("__fragments/f"))?;
        std::fs::write(local.join("__fragments/f/a0.tdb"), b"data")?;
        std::fs::create_dir_all(local.join("__commits"))?;
        std::fs::write(local.join("__commits/f.wrt"), b"")?;
        Ok::<_, ObjectStoreError>(())
    })
    .unwrap();
    // The schema was copied, not uploaded again.
    assert_eq!(uploaded, 2);
    assert_eq!(
        names(&s, "memory://b/a"),
        ["__commits", "__fragments", "__schema"]
    );
    // A failing write uploads nothing.
    let failed = staged_write(&s, uri, |local| {
        std::fs::create_dir_all(local.join("__commits"))?;
        std::fs::write(local.join("__commits/g.wrt"), b"")?;
        Err::<(), _>(ObjectStoreError::Io(std::io::Error::other("refused")))
    });
    assert!(failed.is_err());
    assert_eq!(names(&s, "memory://b/a/__commits"), ["f.wrt"]);
}
