//! Decode throughput of every filter on 64 MiB of realistic data, beside
//! the raw codec doing the same work on the same chunks, one thread each.
//!
//! Two parts: criterion groups (`unfilter/<filter>`), then a table of the
//! pipeline's overhead over the raw codec, measured interleaved (pipeline,
//! raw, pipeline, ...) so that a shared machine's drift hits both alike.
//! `cargo bench -p tessera-filters --bench filters [-- NAME]`;
//! `TESSERA_BENCH_MIB` shrinks the data for a quick run.
#![allow(missing_docs)]
use aes_gcm::{aead::AeadInPlace, Aes256Gcm, KeyInit, Nonce, Tag};
use criterion::{Criterion, Throughput};
use sha2::Digest;
use std::time::{Duration, Instant};
use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
use tessera_tile::{tile::ChunkList, Datatype, FormatVersion};

const KEY: [u8; 32] = [7; 32];

// As the CLI runs: 64 MiB outputs on huge pages, so page faults do not
// swamp what is measured.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

/// Bytes of data per case (64 MiB unless `TESSERA_BENCH_MIB` says).
fn size() -> usize {
    let mib = std::env::var("TESSERA_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64usize);
    mib << 20
}

/// A cheap deterministic noise source (xorshift), so runs compare.
fn noise(n: usize) -> impl Iterator<Item = u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n).map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

/// Sensor-like float64: a smooth signal plus small noise.
fn float64_signal(bytes: usize) -> Vec<u8> {
    noise(bytes / 8)
        .enumerate()
        .flat_map(|(i, r)| {
            let v = (i as f64 / 300.0).sin() * 1000.0 + (r % 1000) as f64 / 1000.0;
            v.to_le_bytes()
        })
        .collect()
}

/// Sorted int64 coordinates with small random gaps (delta filters' case).
fn int64_coordinates(bytes: usize) -> Vec<u8> {
    let mut at = 0i64;
    noise(bytes / 8)
        .flat_map(|r| {
            at += (r % 16) as i64;
            at.to_le_bytes()
        })
        .collect()
}

/// int32 categories in runs of 1 to 64 cells (RLE's case).
fn int32_runs(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes);
    let mut r = noise(usize::MAX);
    while out.len() < bytes {
        let x = r.next().expect("endless");
        let v = (x % 50) as i32;
        for _ in 0..1 + (x >> 32) % 64 {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.truncate(bytes);
    out
}

/// The raw codec's work on one chunk: the chunk's metadata and data in,
/// the chunk's original bytes written to `out`.
type Raw = fn(&[u8], &[u8], &mut [u8]);

/// A single-part compressor's data is the compressed frame.
fn raw_zstd(_: &[u8], data: &[u8], out: &mut [u8]) {
    thread_local! {
        static D: std::cell::RefCell<zstd::bulk::Decompressor<'static>> =
            std::cell::RefCell::new(zstd::bulk::Decompressor::new().unwrap());
    }
    D.with(|d| d.borrow_mut().decompress_to_buffer(data, out).unwrap());
}

fn raw_lz4(_: &[u8], data: &[u8], out: &mut [u8]) {
    lz4::block::decompress_to_buffer(data, Some(out.len() as i32), out).unwrap();
}

fn raw_gzip(_: &[u8], data: &[u8], out: &mut [u8]) {
    let mut d = flate2::Decompress::new(true);
    d.decompress(data, out, flate2::FlushDecompress::Finish)
        .unwrap();
}

fn raw_bzip2(_: &[u8], data: &[u8], out: &mut [u8]) {
    let mut d = bzip2::Decompress::new(false);
    d.decompress(data, out).unwrap();
}

/// The checksum's work: hash the chunk, copy it out.
fn raw_sha256(_: &[u8], data: &[u8], out: &mut [u8]) {
    std::hint::black_box(sha2::Sha256::digest(data));
    out.copy_from_slice(data);
}

fn raw_md5(_: &[u8], data: &[u8], out: &mut [u8]) {
    std::hint::black_box(md5::Md5::digest(data));
    out.copy_from_slice(data);
}

/// Decrypt in place in the output, with the IV and tag from the metadata
/// (`0, 1` part counts, then lengths, IV, tag).
fn raw_aes(meta: &[u8], data: &[u8], out: &mut [u8]) {
    let cipher = Aes256Gcm::new(&KEY.into());
    out.copy_from_slice(data);
    cipher
        .decrypt_in_place_detached(
            Nonce::from_slice(&meta[16..28]),
            b"",
            out,
            Tag::from_slice(&meta[28..44]),
        )
        .unwrap();
}

struct Case<'d> {
    name: &'static str,
    pipeline: FilterPipeline,
    cells: &'d [u8],
    raw: Option<Raw>,
}

/// The data sets, built once and shared by the cases that decode them.
struct Data {
    f64s: Vec<u8>,
    i64s: Vec<u8>,
    runs: Vec<u8>,
}

/// A case before its data is copied: name, filters, data, raw codec.
type CaseSpec<'d> = (&'static str, Vec<Filter>, &'d [u8], Option<Raw>);

fn cases(d: &Data) -> Vec<Case<'_>> {
    let (f64s, i64s, runs) = (&d.f64s[..], &d.i64s[..], &d.runs[..]);
    let one = |k: FilterKind, t: Datatype| vec![Filter::new(k, t)];
    let f = Datatype::Float64;
    let i = Datatype::Int64;
    let v: Vec<CaseSpec<'_>> = vec![
        ("none", vec![], f64s, None),
        (
            "zstd",
            one(FilterKind::Zstd { level: 3 }, f),
            f64s,
            Some(raw_zstd),
        ),
        (
            "lz4",
            one(FilterKind::Lz4 { level: 0 }, f),
            f64s,
            Some(raw_lz4),
        ),
        (
            "gzip",
            one(FilterKind::Gzip { level: 6 }, f),
            f64s,
            Some(raw_gzip),
        ),
        (
            "bzip2",
            one(FilterKind::Bzip2 { level: 1 }, f),
            f64s,
            Some(raw_bzip2),
        ),
        (
            "checksum sha256",
            one(FilterKind::ChecksumSha256, f),
            f64s,
            Some(raw_sha256),
        ),
        (
            "checksum md5",
            one(FilterKind::ChecksumMd5, f),
            f64s,
            Some(raw_md5),
        ),
        (
            "aes-256-gcm",
            one(
                FilterKind::Aes256Gcm {
                    key: Some(KEY.into()),
                },
                f,
            ),
            f64s,
            Some(raw_aes),
        ),
        ("byteshuffle", one(FilterKind::Byteshuffle, f), f64s, None),
        ("bitshuffle", one(FilterKind::Bitshuffle, f), f64s, None),
        ("xor", one(FilterKind::Xor, f), f64s, None),
        (
            "float scale (to int32)",
            one(
                FilterKind::ScaleFloat {
                    scale: 0.001,
                    offset: 0.0,
                    byte_width: 4,
                },
                f,
            ),
            f64s,
            None,
        ),
        (
            "delta",
            one(
                FilterKind::Delta {
                    level: 0,
                    reinterpret: None,
                },
                i,
            ),
            i64s,
            None,
        ),
        (
            "double delta",
            one(
                FilterKind::DoubleDelta {
                    level: 0,
                    reinterpret: None,
                },
                i,
            ),
            i64s,
            None,
        ),
        (
            "bit width reduction",
            one(FilterKind::BitWidthReduction { max_window: 256 }, i),
            i64s,
            None,
        ),
        (
            "positive delta",
            one(FilterKind::PositiveDelta { max_window: 256 }, i),
            i64s,
            None,
        ),
        (
            "rle",
            one(FilterKind::Rle { level: 0 }, Datatype::Int32),
            runs,
            None,
        ),
        (
            "byteshuffle + lz4",
            vec![
                Filter::new(FilterKind::Byteshuffle, f),
                Filter::new(FilterKind::Lz4 { level: 0 }, f),
            ],
            f64s,
            None,
        ),
        (
            "xor + zstd",
            vec![
                Filter::new(FilterKind::Xor, f),
                Filter::new(FilterKind::Zstd { level: 3 }, f),
            ],
            f64s,
            None,
        ),
    ];
    v.into_iter()
        .map(|(name, filters, cells, raw)| Case {
            name,
            pipeline: FilterPipeline::new(filters, 64 * 1024),
            cells,
            raw,
        })
        .collect()
}

/// As a read runs the pipeline: codec contexts reused from chunk to chunk.
fn context(cell_size: u64, parallel: bool) -> TileContext {
    TileContext {
        parallel,
        ..TileContext::new(FormatVersion::new(22), cell_size)
    }
    .reusing(std::sync::Arc::new(tessera_filters::Reuse::default()))
}

fn cell_size(p: &FilterPipeline) -> u64 {
    match p.filters.first().map(|f| f.input_type) {
        Some(Datatype::Int32) => 4,
        _ => 8,
    }
}

/// The raw codec over every chunk of `tile`, into a fresh output as the
/// pipeline makes one.
fn run_raw(raw: Raw, tile: &[u8]) -> Vec<u8> {
    let chunks = ChunkList::parse(tile, 0).unwrap();
    let mut out = vec![0u8; chunks.original_size() as usize];
    let mut rest: &mut [u8] = &mut out;
    for c in &chunks.chunks {
        let (dst, tail) = rest.split_at_mut(c.original_len as usize);
        raw(&tile[c.metadata.clone()], &tile[c.data.clone()], dst);
        rest = tail;
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let n = size();
    let data = Data {
        f64s: float64_signal(n),
        i64s: int64_coordinates(n),
        runs: int32_runs(n),
    };
    let cases = cases(&data);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    // `cargo bench ... -- zstd` runs only the cases whose name has "zstd".
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut table = Vec::new();
    for case in cases
        .iter()
        .filter(|c| only.as_ref().is_none_or(|o| c.name.contains(o.as_str())))
    {
        let cs = cell_size(&case.pipeline);
        let serial = context(cs, false);
        let tile = TileEncoder::new(&case.pipeline, &serial)
            .encode(case.cells)
            .unwrap();
        let back = TileDecoder::new(&case.pipeline, &tile, &serial)
            .and_then(|d| d.decode())
            .unwrap();
        // Float scaling is lossy; everything else gives the cells back.
        assert!(back == case.cells || case.name.starts_with("float scale"));
        let mut g = c.benchmark_group(format!("unfilter/{}", case.name));
        g.throughput(Throughput::Bytes(n as u64));
        g.bench_function("pipeline, 1 thread", |b| {
            b.iter(|| {
                TileDecoder::new(&case.pipeline, &tile, &serial)
                    .and_then(|d| d.decode())
                    .unwrap()
            })
        });
        g.bench_function("pipeline, parallel chunks", |b| {
            b.iter(|| {
                TileDecoder::new(&case.pipeline, &tile, &context(cs, true))
                    .and_then(|d| d.decode())
                    .unwrap()
            })
        });
        if let Some(raw) = case.raw {
            assert_eq!(run_raw(raw, &tile), case.cells);
            g.bench_function("raw codec, 1 thread", |b| b.iter(|| run_raw(raw, &tile)));
            // Interleaved: each round times both, in alternating order.
            let rounds = if case.name == "bzip2" { 5 } else { 15 };
            let (mut tp, mut tr) = (Vec::new(), Vec::new());
            for r in 0..rounds {
                let mut time_pipeline = || {
                    let t = Instant::now();
                    std::hint::black_box(
                        TileDecoder::new(&case.pipeline, &tile, &serial)
                            .and_then(|d| d.decode())
                            .unwrap(),
                    );
                    tp.push(t.elapsed());
                };
                if r % 2 == 0 {
                    time_pipeline();
                }
                let t0 = Instant::now();
                std::hint::black_box(run_raw(raw, &tile));
                tr.push(t0.elapsed());
                if r % 2 == 1 {
                    time_pipeline();
                }
            }
            table.push((case.name, median(tp), median(tr)));
        }
        g.finish();
    }
    c.final_summary();
    let gib = |d: Duration| n as f64 / d.as_secs_f64() / (1u64 << 30) as f64;
    println!(
        "\n{} MiB per case, one thread, medians of interleaved rounds:\n",
        n >> 20
    );
    println!("| filter | pipeline | raw codec | overhead |");
    println!("|---|---|---|---|");
    for (name, p, r) in table {
        println!(
            "| {name} | {:.2} GiB/s | {:.2} GiB/s | {:+.1} % |",
            gib(p),
            gib(r),
            (p.as_secs_f64() / r.as_secs_f64() - 1.0) * 100.0
        );
    }
}
