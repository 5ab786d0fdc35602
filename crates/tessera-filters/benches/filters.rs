//! Decode throughput per filter on realistic data, beside the raw codec.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tessera_filters::{
    filter_tile, unfilter_tile, Filter, FilterKind, FilterPipeline, TileContext,
};
use tessera_tile::{Datatype, FormatVersion};

fn data(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| ((i as f64 / 300.0).sin() * 1000.0 + (i % 7) as f64).to_le_bytes())
        .collect()
}

fn bench(c: &mut Criterion) {
    let cells = data(1 << 20); // 8 MiB of float64
    let ctx = TileContext::new(FormatVersion(22), 8);
    let mut g = c.benchmark_group("unfilter");
    g.throughput(Throughput::Bytes(cells.len() as u64));
    g.sample_size(10);
    let cases: Vec<(&str, Vec<FilterKind>)> = vec![
        ("none", vec![]),
        ("zstd", vec![FilterKind::Zstd { level: 3 }]),
        ("lz4", vec![FilterKind::Lz4 { level: 0 }]),
        ("gzip", vec![FilterKind::Gzip { level: 6 }]),
        (
            "byteshuffle+lz4",
            vec![FilterKind::Byteshuffle, FilterKind::Lz4 { level: 0 }],
        ),
        ("bitshuffle", vec![FilterKind::Bitshuffle]),
        (
            "xor+zstd",
            vec![FilterKind::Xor, FilterKind::Zstd { level: 3 }],
        ),
    ];
    for (name, kinds) in cases {
        let p = FilterPipeline::new(
            kinds
                .into_iter()
                .map(|k| Filter::new(k, Datatype::Float64))
                .collect(),
            64 * 1024,
        );
        let tile = filter_tile(&p, &cells, &ctx).unwrap();
        g.bench_function(name, |b| b.iter(|| unfilter_tile(&p, &tile, &ctx).unwrap()));
    }
    // Like for like with the raw codecs: one thread, 64 KiB chunks.
    let serial = TileContext {
        parallel: false,
        ..ctx.clone()
    };
    for (name, kind) in [
        ("zstd, 1 thread", FilterKind::Zstd { level: 3 }),
        ("lz4, 1 thread", FilterKind::Lz4 { level: 0 }),
    ] {
        let p = FilterPipeline::new(vec![Filter::new(kind, Datatype::Float64)], 64 * 1024);
        let tile = filter_tile(&p, &cells, &serial).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| unfilter_tile(&p, &tile, &serial).unwrap())
        });
    }
    // The raw codecs alone on the same 64 KiB chunks, one thread.
    let zframes: Vec<Vec<u8>> = cells
        .chunks(64 * 1024)
        .map(|c| zstd::bulk::compress(c, 3).unwrap())
        .collect();
    g.bench_function("raw zstd, 64 KiB frames, 1 thread", |b| {
        b.iter(|| {
            let mut out = vec![0u8; cells.len()];
            let mut d = zstd::bulk::Decompressor::new().unwrap();
            for (f, o) in zframes.iter().zip(out.chunks_mut(64 * 1024)) {
                d.decompress_to_buffer(f, o).unwrap();
            }
            out
        })
    });
    let lframes: Vec<Vec<u8>> = cells
        .chunks(64 * 1024)
        .map(|c| lz4::block::compress(c, None, false).unwrap())
        .collect();
    g.bench_function("raw lz4, 64 KiB blocks, 1 thread", |b| {
        b.iter(|| {
            let mut out = vec![0u8; cells.len()];
            for (f, o) in lframes.iter().zip(out.chunks_mut(64 * 1024)) {
                lz4::block::decompress_to_buffer(f, Some(o.len() as i32), o).unwrap();
            }
            out
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
