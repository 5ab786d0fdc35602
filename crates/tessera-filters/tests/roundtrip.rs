//! Forward then reverse is the identity, for every filter and every datatype
//! it accepts: empty input, one cell, lengths that are not a multiple of the
//! window or block size, several chunks per tile.

use proptest::prelude::*;
use tessera_filters::{
    ChunkTarget, Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder,
};
use tessera_tile::{Datatype, FormatVersion};

const INTS: &[Datatype] = &[
    Datatype::Int8,
    Datatype::UInt8,
    Datatype::Int16,
    Datatype::UInt16,
    Datatype::Int32,
    Datatype::UInt32,
    Datatype::Int64,
    Datatype::UInt64,
    Datatype::DatetimeNs,
];

fn lossless(t: Datatype) -> Vec<FilterKind> {
    let mut v = vec![
        FilterKind::None,
        FilterKind::Gzip { level: 6 },
        FilterKind::Zstd { level: 1 },
        FilterKind::Lz4 { level: 0 },
        FilterKind::Bzip2 { level: 9 },
        FilterKind::Rle { level: 0 },
        FilterKind::Bitshuffle,
        FilterKind::Byteshuffle,
        FilterKind::ChecksumMd5,
        FilterKind::ChecksumSha256,
        FilterKind::Xor,
        FilterKind::Aes256Gcm {
            key: Some([7; 32].into()),
        },
    ];
    if INTS.contains(&t) {
        v.extend([
            FilterKind::DoubleDelta {
                level: 0,
                reinterpret: None,
            },
            FilterKind::Delta {
                level: 0,
                reinterpret: None,
            },
            FilterKind::BitWidthReduction { max_window: 64 },
        ]);
    }
    v
}

fn roundtrip(kinds: Vec<FilterKind>, t: Datatype, cells: &[u8], chunk: u32) -> Result<(), String> {
    let p = FilterPipeline::new(
        kinds.iter().cloned().map(|k| Filter::new(k, t)).collect(),
        chunk,
    );
    // Small chunks, as libtiledb's own tests set them, to get several per tile.
    let ctx = TileContext::new(FormatVersion::new(22), t.size()).writer_chunk_size(chunk as u64);
    let tile = TileEncoder::new(&p, &ctx)
        .encode(cells)
        .map_err(|e| format!("{kinds:?} {t}: forward: {e}"))?;
    let ctx = ctx.expect_size(cells.len() as u64);
    let back = TileDecoder::new(&p, &tile, &ctx)
        .and_then(|d| d.decode())
        .map_err(|e| format!("{kinds:?} {t}: reverse: {e}"))?;
    if back != cells {
        return Err(format!(
            "{kinds:?} {t}: {} bytes came back different",
            cells.len()
        ));
    }
    // Chunk by chunk: alternately decoded straight into place and through
    // the scratch buffer, then copied.
    let mut chunked = vec![0xa5u8; cells.len()];
    let mut rest = &mut chunked[..];
    let mut n = 0;
    let targets = |r: std::ops::Range<u64>| {
        let (here, tail) = std::mem::take(&mut rest).split_at_mut((r.end - r.start) as usize);
        rest = tail;
        n += 1;
        match n % 2 {
            0 => ChunkTarget::Into(here),
            _ => ChunkTarget::Scratch(here),
        }
    };
    let place = |dst: &mut [u8], bytes: &[u8]| dst.copy_from_slice(bytes);
    TileDecoder::new(&p, &tile, &ctx)
        .and_then(|d| d.decode_chunks(targets, place))
        .map_err(|e| format!("{kinds:?} {t}: chunk by chunk: {e}"))?;
    if chunked != cells {
        return Err(format!(
            "{kinds:?} {t}: chunk by chunk, bytes came back different"
        ));
    }
    Ok(())
}

fn types() -> impl Strategy<Value = Datatype> {
    let mut all = INTS.to_vec();
    all.extend([Datatype::Float32, Datatype::Float64, Datatype::Char]);
    prop::sample::select(all)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_filter_round_trips(t in types(), cells in 0usize..700, seed in any::<u64>(), smooth in any::<bool>(), chunk in prop::sample::select(vec![64u32, 1000, 65536])) {
        let w = t.size() as usize;
        let mut x = seed;
        let mut bytes = Vec::with_capacity(cells * w);
        for i in 0..cells * w {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Smooth data exercises the narrow windows of the delta-like filters.
            bytes.push(if smooth { ((i / w) as u8).wrapping_mul((i % w == 0) as u8) } else { (x >> 56) as u8 });
        }
        for k in lossless(t) {
            match roundtrip(vec![k.clone()], t, &bytes, chunk) {
                // Like libtiledb, double delta refuses deltas beyond int64.
                Err(e) if matches!(k, FilterKind::DoubleDelta { .. }) && e.contains("forward") && e.contains("exceeds the range") => {}
                r => r.map_err(TestCaseError::fail)?,
            }
        }
        roundtrip(vec![FilterKind::Bitshuffle, FilterKind::Zstd { level: 3 }, FilterKind::ChecksumSha256], t, &bytes, chunk).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lossless_webp_round_trips_every_colour_format(format in 1u8..=4, rows in 1u16..24, width in 1u16..24, seed in any::<u64>(), chunk in prop::sample::select(vec![0u32, 64, 65536])) {
        let depth = if format < 3 { 3 } else { 4 };
        let mut x = seed;
        let pixels: Vec<u8> = (0..rows as usize * width as usize * depth)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        let webp = FilterKind::Webp { quality: 100.0, format, lossless: true, y_extent: rows, x_extent: width * depth as u16 };
        // One chunk whatever the chunk size: WebP pipelines encode whole tiles.
        roundtrip(vec![webp], Datatype::UInt8, &pixels, chunk).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn bit_width_reduction_round_trips_every_window_range(t in prop::sample::select(INTS.to_vec()), base in any::<u64>(), range in prop::sample::select(vec![126u64, 127, 128, 200, 255, 256, 32766, 32767, 32768, 65535, 65536, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32]), cells in 1usize..300, window in prop::sample::select(vec![16u32, 64, 256])) {
        // Each window holds its minimum and its maximum: the reduced width
        // is decided by the range, right at the signed and unsigned limits.
        let w = t.size() as usize;
        let bytes: Vec<u8> = (0..cells as u64)
            .flat_map(|i| base.wrapping_add(match i % 3 { 0 => 0, 1 => range, _ => range / 2 }).to_le_bytes()[..w].to_vec())
            .collect();
        roundtrip(vec![FilterKind::BitWidthReduction { max_window: window }], t, &bytes, 65536).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn positive_delta_round_trips_increasing_data(t in prop::sample::select(INTS.to_vec()), cells in 0usize..500, step in 0u64..4) {
        let w = t.size() as usize;
        let bytes: Vec<u8> = (0..cells as u64).flat_map(|i| (i * step).to_le_bytes()[..w].to_vec()).collect();
        // Values wrap at narrow widths; keep them increasing.
        let max = if w < 8 { (1u64 << (8 * w - 1)) - 1 } else { u64::MAX / 2 };
        prop_assume!(cells as u64 * step <= max);
        roundtrip(vec![FilterKind::PositiveDelta { max_window: 48 }], t, &bytes, 65536).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn float_scale_round_trips_representable_values() {
    for (t, w) in [(Datatype::Float64, 8usize), (Datatype::Float32, 4)] {
        for bw in [1u64, 2, 4, 8] {
            let (scale, offset) = (0.25, -3.0);
            let vals: Vec<f64> = (0..100)
                .map(|i| offset + scale * ((i % 100) as f64 - 50.0))
                .collect();
            let bytes: Vec<u8> = vals
                .iter()
                .flat_map(|v| {
                    if w == 8 {
                        v.to_le_bytes().to_vec()
                    } else {
                        (*v as f32).to_le_bytes().to_vec()
                    }
                })
                .collect();
            roundtrip(
                vec![FilterKind::ScaleFloat {
                    scale,
                    offset,
                    byte_width: bw,
                }],
                t,
                &bytes,
                65536,
            )
            .unwrap();
        }
    }
}

#[test]
fn wrong_key_missing_key_bad_checksum_and_truncation_are_distinct_errors() {
    let t = Datatype::Int32;
    let cells: Vec<u8> = (0..1000i32).flat_map(|v| v.to_le_bytes()).collect();
    let ctx = TileContext::new(FormatVersion::new(22), 4);
    let enc = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::Aes256Gcm {
                key: Some([1; 32].into()),
            },
            t,
        )],
        65536,
    );
    let tile = TileEncoder::new(&enc, &ctx).encode(&cells).unwrap();
    let wrong = FilterPipeline::new(
        vec![Filter::new(
            FilterKind::Aes256Gcm {
                key: Some([2; 32].into()),
            },
            t,
        )],
        65536,
    );
    let e = TileDecoder::new(&wrong, &tile, &ctx)
        .and_then(|d| d.decode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrong key"), "{e}");
    let none = FilterPipeline::new(
        vec![Filter::new(FilterKind::Aes256Gcm { key: None }, t)],
        65536,
    );
    let e = TileDecoder::new(&none, &tile, &ctx)
        .and_then(|d| d.decode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no encryption key"), "{e}");

    let sha = FilterPipeline::new(vec![Filter::new(FilterKind::ChecksumSha256, t)], 65536);
    let mut tile = TileEncoder::new(&sha, &ctx).encode(&cells).unwrap();
    let n = tile.len();
    tile[n - 1] ^= 1;
    let e = TileDecoder::new(&sha, &tile, &ctx)
        .and_then(|d| d.decode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("SHA-256 checksum mismatch in chunk 0"), "{e}");
    let e = TileDecoder::new(&sha, &tile[..n - 10], &ctx)
        .and_then(|d| d.decode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs") && e.contains("remain"), "{e}");
}

#[test]
fn withdrawn_and_unknown_filter_ids_are_clear_errors() {
    for (id, needle) in [(17u8, "withdrawn"), (99, "unknown filter type id 99")] {
        let mut b = Vec::new();
        b.extend_from_slice(&65536u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.push(id);
        b.extend_from_slice(&0u32.to_le_bytes());
        let e = FilterPipeline::parse(&b, 0, FormatVersion::new(22), Datatype::Int32)
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn webp_refuses_a_tile_that_is_not_its_image() {
    let webp = FilterKind::Webp {
        quality: 100.0,
        format: 1,
        lossless: true,
        y_extent: 4,
        x_extent: 12,
    };
    let p = FilterPipeline::new(vec![Filter::new(webp, Datatype::UInt8)], 65536);
    let ctx = TileContext::new(FormatVersion::new(22), 1);
    // 4 rows of 12 bytes is 48 bytes; 47 is not an image of that shape.
    let e = TileEncoder::new(&p, &ctx)
        .encode(&[0; 47])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an image of 4 rows of 12 bytes"), "{e}");
}
