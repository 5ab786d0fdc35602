//! Every data file in `testdata/` is a run of tiles; tessera-tile must decode
//! the chunk framing of each, tile after tile, to the last byte. The
//! snapshots record, per fixture, the files, tiles, chunks and byte counts.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use tessera_tile::tile::ChunkList;

fn is_data_file(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.ends_with(".tdb")
        && name != "__fragment_metadata.tdb"
        && name != "__array_schema.tdb"
        && name != "__lock.tdb"
}

fn data_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir()
            && ![
                "__schema",
                "__meta",
                "__commits",
                "__fragment_meta",
                "__labels",
            ]
            .contains(&name.as_str())
        {
            data_files(&p, out);
        } else if is_data_file(&p) {
            out.push(p);
        }
    }
}

/// (tiles, chunks, original bytes, filtered bytes) of a data file.
fn frame(bytes: &[u8], file: &str) -> Result<(usize, usize, u64, u64), String> {
    let (mut tiles, mut chunks, mut orig, mut filt) = (0, 0, 0u64, 0u64);
    let mut at = 0;
    while at < bytes.len() {
        let l =
            ChunkList::parse(&bytes[at..], at as u64).map_err(|e| e.in_file(file).to_string())?;
        at += l.framed_len;
        tiles += 1;
        chunks += l.chunks.len();
        orig += l.original_size();
        filt += l.chunks.iter().map(|c| c.data.len() as u64).sum::<u64>();
    }
    Ok((tiles, chunks, orig, filt))
}

fn summary(version_dir: &Path) -> String {
    let mut s = String::new();
    let mut cases: Vec<_> = std::fs::read_dir(version_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    for c in cases {
        let mut files = Vec::new();
        data_files(&c.join("array"), &mut files);
        // Fragment folder names carry UUIDs: sum per case, name files by kind.
        let mut by_name =
            std::collections::BTreeMap::<String, (usize, usize, usize, u64, u64)>::new();
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let (t, ch, o, fl) = frame(&bytes, &f.display().to_string())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let e = by_name.entry(name).or_default();
            *e = (e.0 + 1, e.1 + t, e.2 + ch, e.3 + o, e.4 + fl);
        }
        let _ = writeln!(s, "{}", c.file_name().unwrap().to_string_lossy());
        for (n, (files, t, ch, o, fl)) in by_name {
            let _ = writeln!(
                s,
                "  {n}: files={files} tiles={t} chunks={ch} original={o} filtered={fl}"
            );
        }
    }
    s
}

#[test]
fn every_fixture_data_file_frames_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut versions: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tiledb-")
        })
        .collect();
    versions.sort();
    assert!(!versions.is_empty());
    for v in versions {
        let name = v.file_name().unwrap().to_string_lossy().replace('.', "_");
        insta::assert_snapshot!(format!("framing_{name}"), summary(&v));
    }
}

#[test]
fn legacy_arrays_frame_or_fail_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/legacy");
    assert!(root.exists(), "{} is absent", root.display());
    let mut files = Vec::new();
    data_files(&root, &mut files);
    let mut s = String::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        // Fragments before format 2 may zip coordinates: framing still holds.
        match frame(&bytes, &rel) {
            Ok((t, ch, o, fl)) => {
                let _ = writeln!(s, "{rel}: tiles={t} chunks={ch} original={o} filtered={fl}");
            }
            Err(e) => {
                let _ = writeln!(s, "{rel}: error: {e}");
            }
        }
    }
    insta::assert_snapshot!("framing_legacy", s);
}
