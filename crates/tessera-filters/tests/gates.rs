//! Each filter gate, on both sides: the same pipeline or tile written and
//! read back at the version before the gate and at the gate's own version.
//! The snapshots show what changes at each gate.

use tessera_filters::gates;
use tessera_filters::pipeline::pipeline;
use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
use tessera_tile::parse::parse;
use tessera_tile::tile::chunk_list;
use tessera_tile::{Datatype, FormatVersion, Gate};

/// The versions on both sides of `gate`.
fn sides(gate: Gate) -> [FormatVersion; 2] {
    let from = gate.version();
    [FormatVersion::new(from.number() - 1), from]
}

/// `p` serialized at each side of `gate` and parsed back (for a field of
/// `datatype`): what each version keeps of it.
fn pipeline_sides(gate: Gate, p: &FilterPipeline, datatype: Datatype) -> String {
    sides(gate)
        .into_iter()
        .map(|v| {
            let mut bytes = Vec::new();
            p.serialize(&mut bytes, v);
            let (rest, back) = pipeline(v, datatype)(&bytes).unwrap();
            assert!(
                rest.is_empty(),
                "version {v}: {} bytes left over",
                rest.len()
            );
            let mut again = Vec::new();
            back.serialize(&mut again, v);
            assert_eq!(again, bytes, "version {v}: parse then serialize");
            format!("v{}: {:?}", v.number(), back.filters)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn delta_reinterpret_datatype() {
    let p = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::Delta {
                level: 0,
                reinterpret: Some(Datatype::Int32),
            },
            Datatype::Float32,
        )],
        65536,
    );
    let seen = pipeline_sides(gates::DELTA_REINTERPRET_DATATYPE, &p, Datatype::Float32);
    insta::assert_snapshot!(seen);
}

#[test]
fn double_delta_reinterpret_datatype() {
    let p = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::DoubleDelta {
                level: 0,
                reinterpret: Some(Datatype::Int64),
            },
            Datatype::Float64,
        )],
        65536,
    );
    let seen = pipeline_sides(
        gates::DOUBLE_DELTA_REINTERPRET_DATATYPE,
        &p,
        Datatype::Float64,
    );
    insta::assert_snapshot!(seen);
}

/// From version 20 each filter receives the previous filter's output type:
/// after float scaling, the next filter sees integers.
#[test]
fn filter_datatype_chaining() {
    let p = FilterPipeline::new(
        vec![
            Filter::new(
                FilterKind::ScaleFloat {
                    scale: 0.5,
                    offset: 0.0,
                    byte_width: 4,
                },
                Datatype::Float64,
            ),
            Filter::new(FilterKind::Zstd { level: 1 }, Datatype::Float64),
        ],
        65536,
    );
    let seen = pipeline_sides(gates::FILTER_DATATYPE_CHAINING, &p, Datatype::Float64);
    insta::assert_snapshot!(seen);
}

/// Bit width reduction and positive delta reduce datetimes from version
/// 20; before, they pass them through. Both sides read back what they
/// wrote.
#[test]
fn reduction_on_datetimes() {
    let cells: Vec<u8> = (0..64i64).flat_map(|d| (18000 + d).to_le_bytes()).collect();
    let p = FilterPipeline::new(
        vec![
            Filter::new(
                FilterKind::PositiveDelta { max_window: 256 },
                Datatype::DatetimeDay,
            ),
            Filter::new(
                FilterKind::BitWidthReduction { max_window: 256 },
                Datatype::DatetimeDay,
            ),
        ],
        65536,
    );
    let seen: Vec<String> = sides(gates::REDUCTION_ON_DATETIMES)
        .into_iter()
        .map(|v| {
            let ctx = TileContext::new(v, 8);
            let tile = TileEncoder::new(&p, &ctx).encode(&cells).unwrap();
            let back = TileDecoder::new(&p, &tile, &ctx).unwrap().decode().unwrap();
            assert_eq!(back, cells, "version {v}");
            format!(
                "v{}: {} cell bytes in a {}-byte tile",
                v.number(),
                cells.len(),
                tile.len()
            )
        })
        .collect();
    insta::assert_snapshot!(seen.join("\n"));
}

/// Whether the offsets of strings are folded into the data tile, on both
/// sides of the three gates that decide it.
#[test]
fn offsets_in_data() {
    let rle = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::Rle { level: 0 },
            Datatype::StringAscii,
        )],
        65536,
    );
    let dict = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::Dictionary { level: 0 },
            Datatype::StringAscii,
        )],
        65536,
    );
    let mut seen = Vec::new();
    for (name, gate, p, t) in [
        (
            "rle ascii",
            gates::RLE_ASCII_OFFSETS_IN_DATA,
            &rle,
            Datatype::StringAscii,
        ),
        (
            "dictionary ascii",
            gates::DICTIONARY_ASCII_OFFSETS_IN_DATA,
            &dict,
            Datatype::StringAscii,
        ),
        (
            "rle utf8",
            gates::UTF8_OFFSETS_IN_DATA,
            &rle,
            Datatype::StringUtf8,
        ),
        (
            "dictionary utf8",
            gates::UTF8_OFFSETS_IN_DATA,
            &dict,
            Datatype::StringUtf8,
        ),
    ] {
        let [before, from] = sides(gate);
        let (b, f) = (p.offsets_in_data(t, before), p.offsets_in_data(t, from));
        assert!(!b && f, "{name}");
        seen.push(format!(
            "{name}: v{} {b}, v{} {f}",
            before.number(),
            from.number()
        ));
    }
    insta::assert_snapshot!(seen.join("\n"));
}

/// The first tile chunk of `file` in a fixture of TileDB-Py `release`'s:
/// its metadata and data, as libtiledb wrote them.
fn first_chunk(release: &str, case: &str, file: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let fragments = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(format!("tiledb-{release}"))
        .join(case)
        .join("array/__fragments");
    let fragment = std::fs::read_dir(fragments).ok()?.next()?.ok()?.path();
    let bytes = std::fs::read(fragment.join(file)).ok()?;
    let (chunks, _) = parse(&bytes, "tile chunk list", 0, chunk_list).unwrap();
    let c = chunks.chunks.first()?;
    Some((
        bytes[c.metadata.clone()].to_vec(),
        bytes[c.data.clone()].to_vec(),
    ))
}

/// `parser` on `bytes` (what libtiledb wrote), checked to take them all
/// and to be what `encode` writes again; its value's summary.
fn parsed<'a, T>(
    bytes: &'a [u8],
    parser: impl Fn(&'a [u8]) -> tessera_tile::parse::PResult<'a, T>,
    encode: impl Fn(&T) -> Vec<u8>,
    summary: impl Fn(&T) -> String,
) -> String {
    let (value, used) = parse(bytes, "chunk metadata", 0, parser).unwrap();
    assert_eq!(encode(&value), bytes[..used], "encoded again");
    summary(&value)
}

/// The filter chunk metadata libtiledb wrote in the fixtures of every
/// release, parsed: each layout is the same at every format version (the
/// snapshot shows it), the parsers take every byte of it, and the encoders
/// write the same bytes again.
#[test]
fn chunk_metadata_of_every_release() {
    use tessera_filters::chunk_metadata::*;
    let mut seen = Vec::new();
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"] {
        let mut line = |case: &str, what: String| seen.push(format!("{release} {case}: {what}"));
        let chunk = |case: &str, file: &str| first_chunk(release, case, file).expect(case);
        let (m, _) = chunk("filter_zstd", "a0.tdb");
        let parts = |p: &[CompressedPart]| {
            p.iter()
                .map(|p| (p.original, p.compressed))
                .collect::<Vec<_>>()
        };
        line(
            "filter_zstd",
            parsed(&m, compression, CompressionMetadata::encode, |c| {
                format!(
                    "metadata parts {:?}, data parts {:?}",
                    parts(&c.metadata_parts),
                    parts(&c.data_parts)
                )
            }),
        );
        let (m, _) = chunk("filter_md5", "a0.tdb");
        line(
            "filter_md5",
            parsed(&m, checksum(16), ChecksumMetadata::encode, |c| {
                let covered = |s: &[Checksum]| s.iter().map(|s| s.covered).collect::<Vec<_>>();
                format!(
                    "metadata sums {:?}, data sums over {:?}",
                    covered(&c.metadata_sums),
                    covered(&c.data_sums)
                )
            }),
        );
        let (m, _) = chunk("filter_bit_width", "a0.tdb");
        line(
            "filter_bit_width",
            parsed(
                &m,
                bit_width(4),
                |b| b.encode(4),
                |b| {
                    let widths: std::collections::BTreeSet<u8> =
                        b.windows.iter().map(|w| w.bits).collect();
                    format!(
                        "input {} bytes, {} windows, bit widths {widths:?}",
                        b.input_length,
                        b.windows.len()
                    )
                },
            ),
        );
        let (m, _) = chunk("filter_positive_delta", "a0.tdb");
        line(
            "filter_positive_delta",
            parsed(
                &m,
                positive_delta(4),
                |p| p.encode(4),
                |p| {
                    let bytes: u64 = p.windows.iter().map(|w| u64::from(w.length)).sum();
                    format!("{} windows over {bytes} bytes", p.windows.len())
                },
            ),
        );
        let (_, d) = chunk("filter_double_delta", "a0.tdb");
        line(
            "filter_double_delta",
            parsed(&d, double_delta_header, DoubleDeltaHeader::encode, |h| {
                format!("{h:?}")
            }),
        );
        if let Some((m, _)) = first_chunk(release, "filter_float_scale", "a0.tdb") {
            line(
                "filter_float_scale",
                parsed(&m, part_lengths, PartLengths::encode, |p| format!("{p:?}")),
            );
        }
        if let Some((m, _)) = first_chunk(release, "filter_webp", "a0.tdb") {
            line(
                "filter_webp",
                parsed(&m, part_lengths, PartLengths::encode, |p| {
                    format!("{} parts", p.0.len())
                }),
            );
        }
        let (m, _) = chunk("filter_strings", "a0_var.tdb");
        line(
            "filter_strings rle_ascii",
            parsed(
                &m,
                string_encoding(false),
                StringEncodingMetadata::encode,
                |s| {
                    format!(
                        "{} bytes from {}, offsets {}, {:?}",
                        s.decoded, s.encoded, s.offsets, s.codes
                    )
                },
            ),
        );
        if let Some((m, _)) = first_chunk(release, "filter_strings", "a3_var.tdb") {
            line(
                "filter_strings dict_ascii",
                parsed(
                    &m,
                    string_encoding(true),
                    StringEncodingMetadata::encode,
                    |s| {
                        let StringCodes::Dictionary {
                            id_width,
                            string_length_width,
                            dictionary,
                        } = &s.codes
                        else {
                            return "not a dictionary".into();
                        };
                        format!("{} bytes, ids of {id_width} bytes, lengths of {string_length_width}, dictionary of {} bytes", s.decoded, dictionary.len())
                    },
                ),
            );
        }
        let (m, _) = chunk("encrypted", "a0.tdb");
        line(
            "encrypted",
            parsed(&m, encryption, EncryptionMetadata::encode, |e| {
                let lens = |p: &[EncryptedPart]| {
                    p.iter()
                        .map(|p| (p.plaintext, p.encrypted))
                        .collect::<Vec<_>>()
                };
                format!(
                    "metadata parts {:?}, data parts {:?}",
                    lens(&e.metadata_parts),
                    lens(&e.data_parts)
                )
            }),
        );
    }
    insta::assert_snapshot!(seen.join("\n"));
}
