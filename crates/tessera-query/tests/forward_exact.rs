//! Forward filtering is bit-exact with libtiledb: every fixed-sized tile,
//! offsets tile and var-sized values tile of every fixture, unfiltered and
//! filtered again by tessera, gives back the bytes libtiledb wrote, as the
//! libtiledb release that wrote the fixture would write them.
//!
//! Compressors included: gzip and LZ4 run zlib's and liblz4's own code, and
//! zstd matches the libzstd of libtiledb 2.17 to 2.30. libtiledb 2.13 linked
//! an older libzstd whose bytes differ for a few tiles; there the zstd
//! frames are decompressed and what went into them must be equal. Left out:
//! AES-256-GCM (a random IV; encrypted fixtures are not opened here) and
//! WebP (libwebp's encoder; tessera encodes through image-webp).

mod common;

use std::collections::BTreeMap;
use tessera_filters::gates::LibtiledbRelease;
use tessera_filters::{FilterPipeline, FilterType, TileContext, TileDecoder, TileEncoder};
use tessera_fragment::{Field, FileKind, FragmentMetadata};
use tessera_query::FieldSpec;
use tessera_storage::{LocalFs, ReadableStorage};
use tessera_tile::tile::ChunkList;

/// The first libtiledb release whose libzstd writes the frames ours does.
const SAME_LIBZSTD: LibtiledbRelease = LibtiledbRelease::new(2, 17);

/// How closely tessera's forward output of a filter must match.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Match {
    /// Byte for byte.
    Exact,
    /// The compressed frames may differ; what went into them may not.
    SameInput,
    /// Not compared.
    Unchecked,
}

fn expected_match(t: FilterType, writer: LibtiledbRelease) -> Match {
    match t {
        FilterType::Aes256Gcm | FilterType::Webp => Match::Unchecked,
        FilterType::Zstd if writer < SAME_LIBZSTD => Match::SameInput,
        _ => Match::Exact,
    }
}

/// The weakest match any filter of the pipeline allows; a zstd that is not
/// the last filter hides the input of those after it, so it is unchecked.
fn pipeline_match(p: &FilterPipeline, writer: LibtiledbRelease) -> Match {
    let n = p.filters.len();
    let mut m = Match::Exact;
    for (i, f) in p.filters.iter().enumerate() {
        match expected_match(f.filter_type(), writer) {
            Match::Unchecked => return Match::Unchecked,
            Match::SameInput if i + 1 < n => return Match::Unchecked,
            Match::SameInput => m = Match::SameInput,
            Match::Exact => {}
        }
    }
    m
}

/// The zstd frames of every chunk of a tile whose last filter is zstd,
/// decompressed, with the chunk framing and part table before them.
fn zstd_input(tile: &[u8]) -> Vec<(u32, Vec<Vec<u8>>)> {
    let chunks = ChunkList::parse(tile, 0).unwrap();
    chunks
        .chunks
        .iter()
        .map(|c| {
            let meta = &tile[c.metadata.clone()];
            let mut data = &tile[c.data.clone()];
            let u = |i: usize| u32::from_le_bytes(meta[i..i + 4].try_into().unwrap()) as usize;
            let parts = (0..u(0) + u(4))
                .map(|i| {
                    let (frame, rest) = data.split_at(u(12 + 8 * i));
                    data = rest;
                    zstd::bulk::decompress(frame, u(8 + 8 * i)).unwrap()
                })
                .collect();
            (c.original_len, parts)
        })
        .collect()
}

/// Tiles compared per pipeline (and version): how many, how many differed.
type Checked = BTreeMap<String, (usize, usize)>;

/// Records one comparison of a tile as libtiledb `writer` wrote it (`raw`)
/// with tessera's refiltering (`again`), and fails the test on a difference
/// the pipeline's filters do not allow.
fn compare(
    checked: &mut Checked,
    failures: &mut Vec<String>,
    (pipeline, what): (&FilterPipeline, &str),
    (version, writer): (u32, LibtiledbRelease),
    at: String,
    raw: &[u8],
    again: &[u8],
) {
    let names: Vec<&str> = pipeline
        .filters
        .iter()
        .map(|x| x.filter_type().name())
        .collect();
    let e = checked
        .entry(format!("{what}{} v{version}", names.join("+")))
        .or_default();
    e.0 += 1;
    if again != raw {
        e.1 += 1;
        let allowed = match pipeline_match(pipeline, writer) {
            Match::Exact => false,
            Match::SameInput => zstd_input(raw) == zstd_input(again),
            Match::Unchecked => true,
        };
        if !allowed {
            failures.push(format!(
                "{at} [{}]: {} bytes refiltered to {}",
                names.join(", "),
                raw.len(),
                again.len()
            ));
        }
    }
}

/// The bytes of tile `t` of a field's file.
fn tile_bytes(frag: &FragmentMetadata, f: Field, idx: usize, kind: FileKind, t: u64) -> Vec<u8> {
    let range = frag.tile_range(&LocalFs, idx, kind, t).unwrap();
    LocalFs.read_range(&frag.data_file(f, kind), range).unwrap()
}

#[test]
fn pipelines_refilter_to_the_bytes_libtiledb_wrote() {
    let mut checked = Checked::new();
    let mut failures = Vec::new();
    for (path, array) in common::fixture_arrays() {
        let writer = writer_of(&path);
        for frag in &array.fragments {
            let s = &frag.schema;
            let v = frag.version();
            let fields = (0..s.attributes.len())
                .map(Field::Attribute)
                // Dense fragments store no coordinates.
                .chain(
                    (0..s.dimensions.len())
                        .filter(|_| !frag.footer.dense)
                        .map(Field::Dimension),
                );
            for f in fields {
                let spec = FieldSpec::of(frag, f);
                let Some(idx) = frag.field_index(f) else {
                    continue;
                };
                // Fixed-sized cells, and the offsets and values of var-sized ones.
                let var = spec.cell_val_num.is_var();
                if var && spec.filters.offsets_in_data(spec.datatype, s.version) {
                    continue;
                }
                let (pipeline, cell_size) = if var {
                    (&s.offsets_filters, 8)
                } else {
                    (&spec.filters, spec.cell_size())
                };
                for t in 0..frag.tile_count() {
                    let at = |what: &str| format!("{} {f:?} {what}tile {t}", path.display());
                    let raw = tile_bytes(frag, f, idx, FileKind::Fixed, t);
                    let ctx = TileContext::new(v, cell_size).writer(writer);
                    let cells = TileDecoder::new(pipeline, &raw, &ctx)
                        .and_then(|d| d.decode())
                        .unwrap();
                    let again = TileEncoder::new(pipeline, &ctx).encode(&cells).unwrap();
                    compare(
                        &mut checked,
                        &mut failures,
                        (pipeline, ""),
                        (v.number(), writer),
                        at(""),
                        &raw,
                        &again,
                    );
                    if var {
                        // The values tile, cut into chunks at cell boundaries.
                        let offsets: Vec<u64> = cells
                            .chunks_exact(8)
                            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                            .collect();
                        let raw = tile_bytes(frag, f, idx, FileKind::Var, t);
                        let ctx = TileContext::new(v, spec.datatype.size()).writer(writer);
                        let values = TileDecoder::new(&spec.filters, &raw, &ctx)
                            .and_then(|d| d.decode())
                            .unwrap();
                        let again = TileEncoder::new(&spec.filters, &ctx)
                            .encode_var(&values, &offsets)
                            .unwrap();
                        let p = (&spec.filters, "var values: ");
                        compare(
                            &mut checked,
                            &mut failures,
                            p,
                            (v.number(), writer),
                            at("var "),
                            &raw,
                            &again,
                        );
                    }
                }
            }
        }
    }
    for (k, (n, bad)) in &checked {
        eprintln!("{k}: {n} tiles, {bad} differ");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every filter the fixtures use but WebP was held to its bytes.
    for f in [
        "GZIP",
        "ZSTD",
        "LZ4",
        "BZIP2",
        "DELTA",
        "XOR",
        "CHECKSUM_SHA256",
        "BITSHUFFLE",
        "BYTESHUFFLE",
        "BIT_WIDTH_REDUCTION",
        "POSITIVE_DELTA",
        "DOUBLE_DELTA",
        "RLE",
        "CHECKSUM_MD5",
        "SCALE_FLOAT",
        "NONE",
    ] {
        let exact: usize = checked
            .iter()
            .filter(|(k, _)| {
                let names = k.trim_start_matches("var values: ").split(' ').next();
                names.is_some_and(|n| n.split('+').any(|x| x == f))
            })
            .map(|(_, (n, _))| n)
            .sum();
        assert!(exact > 0, "no tile of a {f} pipeline was checked");
    }
    let var: usize = checked
        .iter()
        .filter(|(k, _)| k.starts_with("var values:  v"))
        .map(|(_, (n, _))| n)
        .sum();
    assert!(var > 0, "no unfiltered var-sized tile was checked");
}

/// The libtiledb release that wrote a fixture, from its `expected.json`.
fn writer_of(array: &std::path::Path) -> LibtiledbRelease {
    let text = std::fs::read_to_string(array.with_file_name("expected.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Cases the newest TileDB-Py wrote name no separate writer.
    let release = v["writer"]["libtiledb"]
        .as_str()
        .or(v["libtiledb"].as_str());
    LibtiledbRelease::parse(release.unwrap()).unwrap()
}
