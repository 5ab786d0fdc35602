#![no_main]
//! Whole array folders: one file of a real fixture replaced by the input,
//! then open (commits, vacuum, consolidated commits and fragment metadata,
//! delete conditions, footers), array metadata and a full read (every
//! metadata section, every tile). See `tessera::fuzzing` for the input form.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tessera::fuzzing::{load_fixtures, mutate, open_and_read};
use tessera::storage::Memory;

fn fixtures() -> &'static [(PathBuf, Memory)] {
    static F: OnceLock<Vec<(PathBuf, Memory)>> = OnceLock::new();
    F.get_or_init(|| {
        load_fixtures(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")).unwrap()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((path, m)) = mutate(fixtures(), data) {
        let _ = open_and_read(&path, &m);
    }
});
