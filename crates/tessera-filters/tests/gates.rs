//! Each filter gate, on both sides: the same pipeline or tile written and
//! read back at the version before the gate and at the gate's own version.
//! The snapshots show what changes at each gate.

use tessera_filters::gates;
use tessera_filters::pipeline::pipeline;
use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
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
