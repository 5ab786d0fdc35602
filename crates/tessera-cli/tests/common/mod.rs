//! Helpers shared by the CLI tests: where the fixtures are.

use std::path::{Path, PathBuf};

/// The `testdata/` folder.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every `expected.json` under `testdata/tiledb-*/`.
pub fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for v in std::fs::read_dir(testdata())
        .expect("testdata exists")
        .flatten()
    {
        if !v.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for c in std::fs::read_dir(v.path())
            .expect("version folder")
            .flatten()
        {
            let e = c.path().join("expected.json");
            if e.exists() {
                out.push(e);
            }
        }
    }
    out.sort();
    out
}
