#![no_main]
//! Each filter's reverse path on arbitrary chunks: the first bytes pick the
//! version, the datatype and a pipeline; the rest is the tile.
use tessera_filters::{unfilter_tile, unfilter_var_string_tile, Filter, FilterKind, FilterPipeline, TileContext};
use tessera_tile::{Datatype, FormatVersion};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let version = FormatVersion(1 + data[0] as u32 % 23);
    let dt = Datatype::from_id(data[1] % 44).unwrap_or(Datatype::Int32);
    let kind = |b: u8| match b % 19 {
        0 => FilterKind::Gzip { level: 1 },
        1 => FilterKind::Zstd { level: 1 },
        2 => FilterKind::Lz4 { level: 1 },
        3 => FilterKind::Rle { level: 1 },
        4 => FilterKind::Bzip2 { level: 1 },
        5 => FilterKind::DoubleDelta { level: 0, reinterpret: None },
        6 => FilterKind::BitWidthReduction { max_window: 256 },
        7 => FilterKind::Bitshuffle,
        8 => FilterKind::Byteshuffle,
        9 => FilterKind::PositiveDelta { max_window: 256 },
        10 => FilterKind::ChecksumMd5,
        11 => FilterKind::ChecksumSha256,
        12 => FilterKind::Dictionary { level: 0 },
        13 => FilterKind::ScaleFloat { scale: 0.5, offset: 1.0, byte_width: 1 << (b % 4) },
        14 => FilterKind::Xor,
        15 => FilterKind::Delta { level: 0, reinterpret: None },
        16 => FilterKind::Aes256Gcm { key: Some([1; 32]) },
        17 => FilterKind::Webp { quality: 50.0, format: 1, lossless: true, y_extent: 4, x_extent: 4 },
        _ => FilterKind::None,
    };
    let p = FilterPipeline::new(vec![Filter::new(kind(data[2]), dt), Filter::new(kind(data[3]), dt)], 65536);
    let ctx = TileContext::new(version, dt.size());
    let _ = unfilter_tile(&p, &data[4..], &ctx);
    let _ = unfilter_var_string_tile(&p, &data[4..], &ctx);
});
