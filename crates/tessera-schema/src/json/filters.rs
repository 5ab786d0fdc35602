//! Filter pipelines in the schema's JSON form: a list of filters by name
//! with their options, `[{"name": "byteshuffle"}, {"name": "zstd", "level":
//! 3}]`, or `{"max_chunk_size": N, "filters": [...]}` when the chunk size
//! is not the default 64 KiB. Options left out take libtiledb's defaults
//! (compression level -1, window 256 for bit-width reduction, 1024 for
//! positive delta, scale 1 / offset 0 / 8 bytes for float scaling).

use super::fields::{invalid, Fields};
use crate::schema::retyped;
use crate::SchemaError;
use serde_json::{json, Value as Json};
use tessera_filters::pipeline::DEFAULT_MAX_CHUNK_SIZE;
use tessera_filters::{Filter, FilterKind, FilterPipeline};
use tessera_tile::{Datatype, FormatVersion};

/// The filters' JSON names, as `FilterKind` values with default options.
const NAMES: &[&str] = &[
    "none",
    "gzip",
    "zstd",
    "lz4",
    "rle",
    "bzip2",
    "double_delta",
    "bit_width_reduction",
    "bitshuffle",
    "byteshuffle",
    "positive_delta",
    "checksum_md5",
    "checksum_sha256",
    "dictionary",
    "scale_float",
    "xor",
    "webp",
    "delta",
];

/// A pipeline as JSON.
pub(crate) fn pipeline_to_json(p: &FilterPipeline) -> Json {
    let filters: Vec<Json> = p.filters.iter().map(filter_to_json).collect();
    if p.max_chunk_size == DEFAULT_MAX_CHUNK_SIZE {
        filters.into()
    } else {
        json!({ "max_chunk_size": p.max_chunk_size, "filters": filters })
    }
}

fn filter_to_json(f: &Filter) -> Json {
    use FilterKind as K;
    let name = f.filter_type().name().to_ascii_lowercase();
    let mut o = json!({ "name": name });
    let mut set = |k: &str, v: Json| o[k] = v;
    match &f.kind {
        K::Gzip { level }
        | K::Zstd { level }
        | K::Lz4 { level }
        | K::Rle { level }
        | K::Bzip2 { level }
        | K::Dictionary { level } => set("level", (*level).into()),
        K::DoubleDelta { level, reinterpret } | K::Delta { level, reinterpret } => {
            set("level", (*level).into());
            if let Some(t) = reinterpret {
                set("reinterpret_type", t.name().into());
            }
        }
        K::BitWidthReduction { max_window } | K::PositiveDelta { max_window } => {
            set("max_window", (*max_window).into())
        }
        K::ScaleFloat {
            scale,
            offset,
            byte_width,
        } => {
            set("scale", (*scale).into());
            set("offset", (*offset).into());
            set("byte_width", (*byte_width).into());
        }
        K::Webp {
            quality,
            format,
            lossless,
            y_extent,
            x_extent,
        } => {
            set("quality", f64::from(*quality).into());
            set("format", (*format).into());
            set("lossless", (*lossless).into());
            set("y_extent", (*y_extent).into());
            set("x_extent", (*x_extent).into());
        }
        _ => {}
    }
    o
}

/// A pipeline from JSON, for a field of `field_type` in a schema of
/// `version`; absent means no filters.
pub(crate) fn pipeline_from_json(
    v: Option<&Json>,
    path: &str,
    field_type: Datatype,
    version: FormatVersion,
) -> Result<FilterPipeline, SchemaError> {
    let (list, chunk, list_path) = match v {
        None => (None, DEFAULT_MAX_CHUNK_SIZE, path.to_owned()),
        Some(Json::Object(_)) => {
            let o = Fields::new(
                v.unwrap_or(&Json::Null),
                path,
                &["max_chunk_size", "filters"],
            )?;
            let chunk = o.uint("max_chunk_size", u32::MAX as u64)?;
            let chunk = chunk.unwrap_or(DEFAULT_MAX_CHUNK_SIZE as u64) as u32;
            (o.get("filters"), chunk, o.path("filters"))
        }
        Some(other) => (Some(other), DEFAULT_MAX_CHUNK_SIZE, path.to_owned()),
    };
    let items = match list {
        None => &Vec::new(),
        Some(Json::Array(items)) => items,
        Some(other) => {
            return Err(invalid(
                &list_path,
                format!("expected a list of filters, found {other}"),
            ))
        }
    };
    let filters = items
        .iter()
        .enumerate()
        .map(|(i, f)| filter_from_json(f, &format!("{list_path}[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let untyped = FilterPipeline::new(filters, chunk);
    Ok(retyped(&untyped, field_type, version))
}

/// Every option any filter takes; each filter checks it gets only its own.
const OPTIONS: &[&str] = &[
    "name",
    "level",
    "reinterpret_type",
    "max_window",
    "scale",
    "offset",
    "byte_width",
    "quality",
    "format",
    "lossless",
    "y_extent",
    "x_extent",
];

fn filter_from_json(v: &Json, path: &str) -> Result<Filter, SchemaError> {
    use FilterKind as K;
    let o = Fields::new(v, path, OPTIONS)?;
    let given = o.required_str("name")?;
    let name = given.to_ascii_lowercase();
    let allowed: &[&str] = match name.as_str() {
        "gzip" | "zstd" | "lz4" | "rle" | "bzip2" | "dictionary" => &["level"],
        "delta" | "double_delta" => &["level", "reinterpret_type"],
        "bit_width_reduction" | "positive_delta" => &["max_window"],
        "scale_float" => &["scale", "offset", "byte_width"],
        "webp" => &["quality", "format", "lossless", "y_extent", "x_extent"],
        n if NAMES.contains(&n) => &[],
        _ => {
            let known = NAMES.join(", ");
            return Err(invalid(
                &o.path("name"),
                format!("unknown filter `{given}` (known: {known})"),
            ));
        }
    };
    if let Some(k) = OPTIONS[1..]
        .iter()
        .find(|k| o.get(k).is_some() && !allowed.contains(k))
    {
        return Err(invalid(
            &o.path(k),
            format!("the {name} filter takes no option `{k}`"),
        ));
    }
    let level = o.i32("level")?.unwrap_or(-1);
    let reinterpret = o
        .str("reinterpret_type")?
        .map(|t| super::datatype_from_name(t, &o.path("reinterpret_type")))
        .transpose()?;
    let window = |default: u32| -> Result<u32, SchemaError> {
        Ok(o.uint("max_window", u32::MAX as u64)?
            .map_or(default, |w| w as u32))
    };
    let kind = match name.as_str() {
        "none" => K::None,
        "gzip" => K::Gzip { level },
        "zstd" => K::Zstd { level },
        "lz4" => K::Lz4 { level },
        "rle" => K::Rle { level },
        "bzip2" => K::Bzip2 { level },
        "dictionary" => K::Dictionary { level },
        "double_delta" => K::DoubleDelta { level, reinterpret },
        "delta" => K::Delta { level, reinterpret },
        "bit_width_reduction" => K::BitWidthReduction {
            max_window: window(256)?,
        },
        "positive_delta" => K::PositiveDelta {
            max_window: window(1024)?,
        },
        "bitshuffle" => K::Bitshuffle,
        "byteshuffle" => K::Byteshuffle,
        "checksum_md5" => K::ChecksumMd5,
        "checksum_sha256" => K::ChecksumSha256,
        "xor" => K::Xor,
        "scale_float" => K::ScaleFloat {
            scale: o.f64("scale")?.unwrap_or(1.0),
            offset: o.f64("offset")?.unwrap_or(0.0),
            byte_width: match o.uint("byte_width", 8)?.unwrap_or(8) {
                w @ (1 | 2 | 4 | 8) => w,
                w => {
                    return Err(invalid(
                        &o.path("byte_width"),
                        format!("{w} is not 1, 2, 4 or 8"),
                    ))
                }
            },
        },
        _ => K::Webp {
            quality: o.f64("quality")?.unwrap_or(100.0) as f32,
            format: o.uint("format", 4)?.unwrap_or(0) as u8,
            lossless: o.bool("lossless")?.unwrap_or(false),
            y_extent: o.uint("y_extent", u16::MAX as u64)?.unwrap_or(0) as u16,
            x_extent: o.uint("x_extent", u16::MAX as u64)?.unwrap_or(0) as u16,
        },
    };
    Ok(Filter::new(kind, Datatype::Any))
}
