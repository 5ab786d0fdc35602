//! `cargo xtask check-writes`: what tessera writes, read back by real
//! libtiledb. Every fixture TileDB-Py 0.36.1 wrote has its schema printed
//! as JSON, read back and created anew by tessera (`tessera schema --json |
//! tessera create`), and a sparse fixture's cells, as tessera reads them,
//! written into the copy as one fragment (`tessera read | tessera write`);
//! TileDB-Py 0.36.1 then opens each new array and must report the schema
//! it reported for the original (`expected.json`) and read the same cells
//! from the copy as from the original.

use crate::{root, run, venv, Error};
use std::path::Path;
use std::process::Command;
use tessera::schema::json::{schema_from_json, schema_to_json};
use tessera::schema::{list_schemas, load_enumerations, load_schema, schema_at};
use tessera::tile::storage::LocalFs;

/// Creates the copies under `target/check-writes/` and has TileDB-Py check them.
pub fn check_writes() -> Result<(), Error> {
    let out = root().join("target/check-writes");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    let fixtures = root().join("testdata/tiledb-0.36.1");
    let mut cases: Vec<_> = std::fs::read_dir(&fixtures)?
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    let mut created = 0;
    for case in cases {
        let Some(copy) = copy_schema(&case, &out)? else {
            continue;
        };
        created += 1;
        eprintln!("created {}", copy.display());
    }
    let py = venv("0.36.1")?;
    let report = run(Command::new(&py)
        .arg(root().join("xtask/fixtures/check_created.py"))
        .arg(&out)
        .arg(&fixtures))?;
    print!("{}", String::from_utf8_lossy(&report.stdout));
    eprintln!("{created} arrays created by tessera, read back by TileDB-Py 0.36.1 equal");
    Ok(())
}

/// Creates `out/<case>` with the schema of the case's array; `None` for
/// cases whose schema `create` refuses (dimension labels).
fn copy_schema(case: &Path, out: &Path) -> Result<Option<std::path::PathBuf>, Error> {
    let array = case.join("array");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(case.join("expected.json"))?)?;
    let key = match expected["case"]["key"].as_str() {
        Some(hex) => {
            let b: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                .collect::<Result<_, _>>()?;
            let k: [u8; 32] = b.try_into().map_err(|_| "a key of 32 bytes")?;
            Some(tessera::filters::EncryptionKey::new(k))
        }
        None => None,
    };
    let files = list_schemas(&LocalFs, &array)?;
    let file = schema_at(&files, u64::MAX).ok_or("no schema")?;
    let schema = load_schema(&LocalFs, &array, file, key.as_ref())?;
    if !schema.dimension_labels.is_empty() {
        return Ok(None);
    }
    let enums = load_enumerations(&LocalFs, &array, &schema, key.as_ref())?;
    let doc = schema_from_json(&schema_to_json(&schema, &enums))?;
    let name = case.file_name().ok_or("a case folder")?;
    let dest = out.join(name);
    tessera_write::create_array(&dest, &doc, key, None)?;
    if schema.array_type == tessera::tile::ArrayType::Sparse {
        let opened = tessera::OpenArray::open(&LocalFs, &array, 0, u64::MAX, key)?;
        let cells = tessera::Query::new(&LocalFs, &opened).execute()?;
        let options = tessera_write::WriteOptions {
            timestamp: None,
            key,
        };
        let mut w = tessera_write::FragmentWriter::try_new(&dest, options)?;
        w.write(&cells.columns)?;
        w.finish()?;
    }
    Ok(Some(dest))
}
