//! Every file under `testdata/bad/` is a known-corrupt input; its decoder
//! must fail, without panicking, with an error containing `<case>.expect`.

use std::path::Path;
use tessera::filters::{fuzzing::pipeline_from_selectors, read_generic_tile, TileDecoder};
use tessera::fragment::{array_metadata::apply_entries, Condition};
use tessera::schema::ArraySchema;
use tessera::tile::tile::ChunkList;

fn decode(decoder: &str, data: &[u8]) -> Result<(), String> {
    use std::sync::OnceLock;
    static FIXTURES: OnceLock<Vec<(std::path::PathBuf, tessera::storage::Memory)>> =
        OnceLock::new();
    let s = |e: &dyn std::fmt::Display| e.to_string();
    match decoder {
        "array_schema" => ArraySchema::parse(data, "__1_1_0123456789abcdef0123456789abcdef")
            .map(drop)
            .map_err(|e| s(&e)),
        "generic_tile" => read_generic_tile(data, None, 0)
            .map(drop)
            .map_err(|e| s(&e)),
        "chunk_framing" => ChunkList::parse(data, 0).map(drop).map_err(|e| s(&e)),
        "filter_reverse" => {
            let (p, ctx, tile) =
                pipeline_from_selectors(data).ok_or("input shorter than the selectors")?;
            TileDecoder::new(&p, tile, &ctx)
                .and_then(|d| d.decode())
                .map(drop)
                .map_err(|e| s(&e))
        }
        "delete_condition" => Condition::parse(data).map(drop).map_err(|e| s(&e)),
        "array_metadata" => apply_entries(data, &mut Default::default()).map_err(|e| s(&e)),
        "array_folder" => {
            let fixtures = FIXTURES.get_or_init(|| {
                let t = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
                tessera::fuzzing::load_fixtures(&t).unwrap()
            });
            let (path, m) = tessera::fuzzing::mutate(fixtures, data).ok_or("input too short")?;
            tessera::fuzzing::open_and_read(&path, &m)
        }
        other => panic!("testdata/bad/{other}: no decoder is known for this folder"),
    }
}

#[test]
fn every_bad_input_fails_as_expected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/bad");
    let mut checked = 0;
    let mut problems = Vec::new();
    for dir in std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        let decoder = dir.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let p = f.path();
            if p.extension().is_some_and(|e| e == "expect") {
                continue;
            }
            let expect_path = p.with_extension("expect");
            let Ok(expect) = std::fs::read_to_string(&expect_path) else {
                problems.push(format!("{}: no .expect file", p.display()));
                continue;
            };
            let data = std::fs::read(&p).unwrap();
            checked += 1;
            match std::panic::catch_unwind(|| decode(&decoder, &data)) {
                Err(_) => problems.push(format!("{}: panicked", p.display())),
                Ok(Ok(())) => problems.push(format!("{}: decoded without error", p.display())),
                Ok(Err(e)) if !e.contains(expect.trim()) => problems.push(format!(
                    "{}: error `{e}` lacks `{}`",
                    p.display(),
                    expect.trim()
                )),
                Ok(Err(_)) => {}
            }
        }
    }
    assert!(checked >= 10, "only {checked} bad inputs");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
