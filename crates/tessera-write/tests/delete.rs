//! Delete commits as libtiledb writes them: every `.del` file the fixture
//! releases wrote (formats 16 to 22) holds a condition tessera parses and
//! encodes again byte for byte; and the condition the fixture generator
//! gave TileDB-Py (`xtask/fixtures/generate.py`), parsed from the same
//! text by tessera's `--where` grammar and negated as libtiledb negates
//! it, is that file's payload, in a generic tile equal to libtiledb's.

use std::path::Path;
use tessera_cells::Expr;
use tessera_filters::{read_generic_tile, write_generic_tile};
use tessera_fragment::{Condition, OpenArray};
use tessera_storage::LocalFs;
use tessera_tile::FormatVersion;
use tessera_write::delete::delete_commit_payload;
use tessera_write::generic_tile_pipeline;

/// The conditions `generate.py` deleted with, by fixture.
const CONDITIONS: &[(&str, &str)] = &[
    ("deletes", "a > 14 or b < 1.0"),
    ("deletes_consolidated", "a >= 5 and a < 15"),
    ("deletes_overwritten", "a == 7"),
    ("consolidated_versions_deleted", "a == 204 or a == 105"),
];

#[test]
fn delete_commits_are_libtiledbs_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"] {
        for (case, text) in CONDITIONS {
            let array = root.join(format!("tiledb-{release}/{case}/array"));
            let Ok(files) = std::fs::read_dir(array.join("__commits")) else {
                continue;
            };
            let schema = OpenArray::open(&LocalFs, &array, 0, u64::MAX, None)
                .unwrap()
                .schema;
            for f in files
                .flatten()
                .filter(|f| f.file_name().to_string_lossy().ends_with(".del"))
            {
                let bytes = std::fs::read(f.path()).unwrap();
                let tile = read_generic_tile(&bytes, None, 0).unwrap();
                let at = format!("{release}/{case}");
                assert_eq!(
                    Condition::parse(&tile.data).unwrap().encode(),
                    tile.data,
                    "{at}: re-encoded"
                );
                let expr = Expr::parse(text, &schema).unwrap();
                assert_eq!(
                    delete_commit_payload(&expr),
                    tile.data,
                    "{at}: `{text}` negated"
                );
                let version =
                    FormatVersion::new(u32::from_le_bytes(bytes[..4].try_into().unwrap()));
                let ours = write_generic_tile(&tile.data, &generic_tile_pipeline(), version, None)
                    .unwrap();
                assert_eq!(ours, bytes, "{at}: the file");
                checked += 1;
            }
        }
    }
    assert!(checked >= 16, "{checked} delete commits");
}
