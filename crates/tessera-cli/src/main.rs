//! `tessera`: inspect and read TileDB arrays.

mod format;
mod output;
mod progress;
mod verify;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tessera::filters::EncryptionKey;
use tessera::fragment::OpenArray;
use tessera::query::{Aggregate, Expr, Key, Query};
use tessera::tile::storage::LocalFs;
use tessera::tile::{datatype::Physical, Layout};

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "Inspect and read TileDB arrays (pure Rust, no libtiledb)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum LayoutArg {
    RowMajor,
    ColMajor,
    Global,
    Unordered,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum FormatArg {
    Jsonl,
    Csv,
    Arrow,
    Parquet,
    Null,
}

/// Which cells: the array opened at a time, a subarray, a condition.
#[derive(clap::Args)]
struct Selection {
    /// `DIM=LO:HI[,LO:HI...]`, inclusive; repeat for several dimensions.
    #[arg(long)]
    subarray: Vec<String>,
    /// Open at timestamp `T`, or at the range `T1:T2` (milliseconds).
    #[arg(long)]
    timestamp: Option<String>,
    /// Keep cells satisfying a condition, e.g. `a > 5 and b is not null`.
    #[arg(long = "where")]
    condition: Option<String>,
    /// AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    key: Option<String>,
}

impl Selection {
    /// Opens the array at `--timestamp` with `--key`.
    fn open(&self, array: &std::path::Path) -> Result<OpenArray, BoxError> {
        let (t1, t2) = parse_timestamp(&self.timestamp)?;
        let key = parse_key(&self.key)?;
        Ok(OpenArray::open(&LocalFs, array, t1, t2, key)?)
    }

    /// A query of `a` with `--subarray` ranges and the `--where` condition.
    fn query<'a>(&self, a: &'a OpenArray) -> Result<Query<'a>, BoxError> {
        let mut q = Query::new(&LocalFs, a);
        for s in &self.subarray {
            let (dim, ranges) = s
                .split_once('=')
                .ok_or_else(|| format!("--subarray `{s}`: expected DIM=LO:HI"))?;
            let d = a
                .schema
                .dimension(dim)
                .ok_or_else(|| format!("--subarray: the array has no dimension `{dim}`"))?;
            for r in ranges.split(',') {
                let (lo, hi) = r
                    .split_once(':')
                    .ok_or_else(|| format!("--subarray `{s}`: expected LO:HI"))?;
                q = q.range(
                    dim,
                    parse_bound(lo, d.datatype)?,
                    parse_bound(hi, d.datatype)?,
                );
            }
        }
        if let Some(c) = &self.condition {
            q = q.condition(Expr::parse(c, &a.schema)?);
        }
        Ok(q)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Read cells as JSON lines (one object per cell), CSV, Arrow IPC, Parquet, or nothing (for timing).
    Read {
        /// The array folder.
        array: PathBuf,
        /// Attributes to read, comma-separated (default: all, in schema order).
        #[arg(long, value_delimiter = ',')]
        attrs: Option<Vec<String>>,
        /// Leave the dimensions (coordinates) out: attributes only.
        #[arg(long)]
        no_dims: bool,
        #[command(flatten)]
        select: Selection,
        /// Result layout (default: row-major for dense, unordered for sparse).
        #[arg(long, value_enum)]
        layout: Option<LayoutArg>,
        /// Output format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: FormatArg,
        /// Write to a file instead of stdout.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Memory budget: the read proceeds in batches of about this many
        /// bytes (decoded tiles plus results), e.g. `64M`, `2G`.
        #[arg(long, default_value = "1G", value_parser = parse_size)]
        budget: u64,
        /// Enumerated attributes as the values their keys name (default: the keys).
        #[arg(long)]
        enum_values: bool,
    },
    /// Compute aggregates over the cells of a subarray (from fragment and
    /// tile metadata where it can), printed as one JSON object; e.g.
    /// `tessera aggregate ARRAY count 'sum(a)' 'max(b)'`.
    Aggregate {
        /// The array folder.
        array: PathBuf,
        /// `count`, `sum(F)`, `min(F)`, `max(F)`, `null_count(F)`, `mean(F)`.
        #[arg(required = true)]
        aggregates: Vec<String>,
        #[command(flatten)]
        select: Selection,
        /// Memory budget for the tiles that must be decoded.
        #[arg(long, default_value = "1G", value_parser = parse_size)]
        budget: u64,
        /// Also print how the values were reached (fragments and tiles
        /// answered from metadata, cells decoded).
        #[arg(long)]
        stats: bool,
    },
    /// Print the array schema.
    Schema {
        /// The array folder.
        array: PathBuf,
        /// As JSON.
        #[arg(long)]
        json: bool,
        /// The schema in force at this timestamp.
        #[arg(long)]
        timestamp: Option<u64>,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
    /// List the fragments.
    Fragments {
        /// The array folder.
        array: PathBuf,
        /// As JSON.
        #[arg(long)]
        json: bool,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
    /// List the delete and update commits in force, with their conditions
    /// (as stored: the cells to keep) and, for updates, the values they set.
    Commits {
        /// The array folder.
        array: PathBuf,
        /// As JSON.
        #[arg(long)]
        json: bool,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
    /// Print the array metadata.
    Meta {
        /// The array folder.
        array: PathBuf,
        /// As JSON.
        #[arg(long)]
        json: bool,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
    /// Read every generic tile and data tile; report each problem. Exit 0 only when all is sound.
    Verify {
        /// The array folder.
        array: PathBuf,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
    /// Show the framing of the tile at an offset (format debugging).
    DumpTile {
        /// A data file, or a generic tile file with --generic.
        file: PathBuf,
        /// Byte offset of the tile.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// The tile is a generic tile (schema, metadata, fragment metadata section).
        #[arg(long)]
        generic: bool,
        /// AES-256-GCM key, for encrypted generic tiles.
        #[arg(long)]
        key: Option<String>,
    },
    /// Summarize an array.
    Info {
        /// The array folder.
        array: PathBuf,
        /// AES-256-GCM key.
        #[arg(long)]
        key: Option<String>,
    },
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `count`, `sum(F)`, `min(F)`, `max(F)`, `null_count(F)` or `mean(F)`.
fn parse_aggregate(s: &str) -> Result<Aggregate, BoxError> {
    if s.trim().eq_ignore_ascii_case("count") {
        return Ok(Aggregate::Count);
    }
    let (op, field) = s
        .trim()
        .strip_suffix(')')
        .and_then(|x| x.split_once('('))
        .ok_or_else(|| format!("aggregate `{s}`: expected count or OP(FIELD)"))?;
    let field = field.trim().to_owned();
    Ok(match op.trim().to_ascii_lowercase().as_str() {
        "sum" => Aggregate::Sum(field),
        "min" => Aggregate::Min(field),
        "max" => Aggregate::Max(field),
        "null_count" => Aggregate::NullCount(field),
        "mean" => Aggregate::Mean(field),
        o => return Err(format!("aggregate `{s}`: unknown operation `{o}`").into()),
    })
}

fn parse_key(k: &Option<String>) -> Result<Option<EncryptionKey>, BoxError> {
    let Some(k) = k else { return Ok(None) };
    let mut out = [0u8; 32];
    if k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()) {
        for i in 0..32 {
            out[i] = u8::from_str_radix(&k[2 * i..2 * i + 2], 16)?;
        }
    } else if k.len() == 32 {
        out.copy_from_slice(k.as_bytes());
    } else {
        return Err("--key: expected 64 hex digits (32 bytes)".into());
    }
    Ok(Some(EncryptionKey::new(out)))
}

/// A byte count with an optional K, M or G suffix (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{s}` is not a size (e.g. 4096, 64M, 2G)"))
}

fn parse_timestamp(t: &Option<String>) -> Result<(u64, u64), BoxError> {
    match t {
        None => Ok((0, u64::MAX)),
        Some(t) => match t.split_once(':') {
            Some((a, b)) => Ok((a.trim().parse()?, b.trim().parse()?)),
            None => Ok((0, t.trim().parse()?)),
        },
    }
}

fn parse_bound(s: &str, t: tessera::tile::Datatype) -> Result<Key, BoxError> {
    Ok(match t.physical() {
        Physical::Int(_) | Physical::UInt(_) => Key::Int(
            s.trim()
                .parse::<i128>()
                .map_err(|_| format!("`{s}` is not an integer"))?,
        ),
        Physical::Float(_) => Key::Float(
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("`{s}` is not a number"))?,
        ),
        Physical::Bytes => Key::Bytes(s.as_bytes().to_vec()),
    })
}

/// Prints records as one pretty JSON array, or one text line each.
fn print_records(
    json: bool,
    list: &[serde_json::Value],
    line: impl Fn(&serde_json::Value) -> String,
) -> Result<(), BoxError> {
    if json {
        println!("{}", serde_json::to_string_pretty(list)?);
    } else {
        for r in list {
            println!("{}", line(r));
        }
    }
    Ok(())
}

fn run(cli: Cli) -> Result<ExitCode, BoxError> {
    match cli.command {
        Command::Read {
            array,
            attrs,
            no_dims,
            select,
            layout,
            format,
            output,
            budget,
            enum_values,
        } => {
            let a = select.open(&array)?;
            let mut q = select
                .query(&a)?
                .enumeration_values(enum_values)
                .dimensions(!no_dims)
                // Dense coordinates are written as they are computed, not
                // built as columns first (Arrow and Parquet build them).
                .coordinate_grid(true);
            if let Some(attrs) = attrs {
                q = q.attributes(attrs);
            }
            if let Some(l) = layout {
                q = q.layout(match l {
                    LayoutArg::RowMajor => Layout::RowMajor,
                    LayoutArg::ColMajor => Layout::ColMajor,
                    LayoutArg::Global => Layout::GlobalOrder,
                    LayoutArg::Unordered => Layout::Unordered,
                });
            }
            // Where batches cost nothing to cut (unfiltered dense tiles
            // read in place), small ones stay in cache while written out
            // (16 MiB measured best on the int32 benchmark array, against
            // 2 to 64 MiB).
            let batches = q.batches(budget)?.free_cut_bytes(16 << 20);
            let sink: Box<dyn Write + Send> = match output {
                Some(p) => Box::new(
                    std::fs::File::create(&p).map_err(|e| format!("{}: {e}", p.display()))?,
                ),
                None => Box::new(std::io::stdout()),
            };
            let mut out = output::Writer::new(format, sink);
            let bar = progress::spinner("reading");
            let mut cells = 0u64;
            for (n, batch) in batches.enumerate() {
                let batch = batch?;
                cells += batch.cell_count as u64;
                bar.set_message(format!("{cells} cells, {} batch(es)", n + 1));
                if let Some(done) = out.write(batch)? {
                    done.recycle();
                }
            }
            bar.finish_and_clear();
            out.finish()?;
        }
        Command::Aggregate {
            array,
            aggregates,
            select,
            budget,
            stats,
        } => {
            let a = select.open(&array)?;
            let q = select.query(&a)?;
            let aggs = aggregates
                .iter()
                .map(|s| parse_aggregate(s))
                .collect::<Result<Vec<_>, _>>()?;
            let r = q.aggregate(&aggs, budget)?;
            let mut obj = serde_json::Map::new();
            for (name, v) in aggregates.iter().zip(&r.values) {
                obj.insert(name.clone(), v.to_json());
            }
            if stats {
                obj.insert(
                    "fragments_from_metadata".into(),
                    r.fragments_from_metadata.into(),
                );
                obj.insert("tiles_from_metadata".into(), r.tiles_from_metadata.into());
                obj.insert("cells_decoded".into(), r.cells_decoded.into());
            }
            println!("{}", serde_json::Value::Object(obj));
        }
        Command::Schema {
            array,
            json,
            timestamp,
            key,
        } => {
            let key = parse_key(&key)?;
            let files = tessera::schema::list_schemas(&LocalFs, &array)?;
            let f = tessera::schema::schema_at(&files, timestamp.unwrap_or(u64::MAX))
                .ok_or("not a TileDB array: no schema")?;
            let s = tessera::schema::load_schema(&LocalFs, &array, f, key.as_ref())?;
            let enums = tessera::schema::load_enumerations(&LocalFs, &array, &s, key.as_ref())?;
            if json {
                let mut v = serde_json::to_value(&s)?;
                add_typed_values(&mut v, &s);
                let loaded: Vec<serde_json::Value> = enums
                    .iter()
                    .map(|e| {
                        serde_json::json!({
                            "name": e.name,
                            "datatype": e.datatype,
                            "ordered": e.ordered,
                            "values": e.values.iter().map(|x| tessera::schema::enumeration_value(e, x)).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                v["enumeration_values"] = loaded.into();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{}", tessera::schema::describe(&s));
                print!("{}", tessera::schema::describe_enumerations(&enums));
            }
        }
        Command::Fragments { array, json, key } => {
            let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?;
            let list: Vec<serde_json::Value> = a
                .fragments
                .iter()
                .map(|f| {
                    let ned: Vec<serde_json::Value> = f.footer.non_empty_domain.as_ref().map_or(Vec::new(), |ned| {
                        ned.iter()
                            .zip(&f.schema.dimensions)
                            .map(|(r, d)| {
                                serde_json::json!([
                                    tessera::schema::Value::decode(d.datatype, &r.lo).to_json(),
                                    tessera::schema::Value::decode(d.datatype, &r.hi).to_json()
                                ])
                            })
                            .collect()
                    });
                    serde_json::json!({
                        "name": f.name,
                        "timestamp_range": [f.timestamp_range().0, f.timestamp_range().1],
                        "version": f.version().0,
                        "sparse": !f.footer.dense,
                        "cell_num": f.total_cell_num(),
                        "nonempty_domain": ned,
                        "schema_name": f.footer.schema_name.clone().unwrap_or_else(|| tessera::schema::LEGACY_SCHEMA_FILE.into()),
                        "has_consolidated_metadata": a.consolidated_metadata.contains(&f.name),
                    })
                })
                .collect();
            print_records(json, &list, |f| {
                format!(
                    "{}  t={}  v{}  {}  cells={}  ned={}{}",
                    f["name"].as_str().unwrap_or(""),
                    f["timestamp_range"],
                    f["version"],
                    if f["sparse"].as_bool().unwrap_or(false) {
                        "sparse"
                    } else {
                        "dense"
                    },
                    f["cell_num"],
                    f["nonempty_domain"],
                    if f["has_consolidated_metadata"].as_bool().unwrap_or(false) {
                        "  (consolidated metadata)"
                    } else {
                        ""
                    }
                )
            })?;
        }
        Command::Commits { array, json, key } => {
            let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?;
            let s = &a.schema;
            let datatype_of = |f: &str| {
                s.attribute(f)
                    .map(|x| x.datatype)
                    .or_else(|| s.dimension(f).map(|d| d.datatype))
            };
            let list: Vec<serde_json::Value> = a
                .delete_conditions
                .iter()
                .map(|c| {
                    let values = c.update_values.as_ref().map(|vs| {
                        vs.iter()
                            .map(|v| {
                                let shown = match datatype_of(&v.field) {
                                    Some(t) => {
                                        tessera::schema::Value::decode(t, &v.value).to_json()
                                    }
                                    None => serde_json::Value::Null,
                                };
                                serde_json::json!({"field": v.field, "value": shown})
                            })
                            .collect::<Vec<_>>()
                    });
                    serde_json::json!({
                        "name": c.name,
                        "kind": if c.is_update() { "update" } else { "delete" },
                        "timestamp": c.timestamp,
                        "keeps": c.condition.display_with(&datatype_of),
                        "update_values": values,
                    })
                })
                .collect();
            print_records(json, &list, |c| {
                let mut line = format!(
                    "{}  {}  t={}  keeps cells where {}",
                    c["name"].as_str().unwrap_or(""),
                    c["kind"].as_str().unwrap_or(""),
                    c["timestamp"],
                    c["keeps"].as_str().unwrap_or("")
                );
                if let Some(vs) = c["update_values"].as_array() {
                    let set: Vec<String> = vs
                        .iter()
                        .map(|v| format!("{} = {}", v["field"].as_str().unwrap_or(""), v["value"]))
                        .collect();
                    // libtiledb stores update values but does not apply them on read.
                    line += &format!("; sets {} (not applied on read)", set.join(", "));
                }
                line
            })?;
        }
        Command::Meta { array, json, key } => {
            let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?;
            let m = a.metadata(&LocalFs)?;
            let obj: serde_json::Map<String, serde_json::Value> =
                m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&obj)?);
            } else {
                for (k, v) in &obj {
                    println!("{k} = {v}");
                }
            }
        }
        Command::Verify { array, key } => {
            let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?;
            let bar = progress::bar(a.fragments.len() as u64, "verifying fragments");
            let problems = verify::verify(&LocalFs, &a, &|| bar.inc(1));
            bar.finish_and_clear();
            if problems.is_empty() {
                println!(
                    "{}: {} fragment(s) verified, no problems",
                    array.display(),
                    a.fragments.len()
                );
            } else {
                for p in &problems {
                    println!("{p}");
                }
                eprintln!("error: {} problem(s) found", problems.len());
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::DumpTile {
            file,
            offset,
            generic,
            key,
        } => {
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let start = usize::try_from(offset)
                .ok()
                .filter(|o| *o <= bytes.len())
                .ok_or_else(|| {
                    format!(
                        "offset {offset} is past the end of {} ({} bytes)",
                        file.display(),
                        bytes.len()
                    )
                })?;
            let tail = &bytes[start..];
            let mut r = tessera::tile::Reader::new(tail, "tile").at_offset(offset);
            if generic {
                let h = tessera::tile::generic::GenericTileHeader::parse(&mut r)?;
                println!("generic tile header: version {} persisted {} tile size {} datatype {} cell size {} encryption {:?} pipeline {} bytes", h.version, h.persisted_size, h.tile_size, h.datatype, h.cell_size, h.encryption, h.filter_pipeline.len());
                let dt = tessera::tile::Datatype::from_id(h.datatype)
                    .unwrap_or(tessera::tile::Datatype::Any);
                let p = tessera::filters::FilterPipeline::parse(
                    &mut tessera::tile::Reader::new(&h.filter_pipeline, "filter pipeline"),
                    h.version,
                    dt,
                )?;
                println!(
                    "filters: {:?} (max chunk {})",
                    p.filters
                        .iter()
                        .map(|f| f.filter_type().name())
                        .collect::<Vec<_>>(),
                    p.max_chunk_size
                );
            }
            let at = r.file_offset();
            let chunks = tessera::tile::tile::ChunkList::parse(&mut r)?;
            println!(
                "tile at {at}: {} chunk(s), {} bytes unfiltered, {} bytes framed",
                chunks.chunks.len(),
                chunks.original_size(),
                chunks.framed_len
            );
            let base = (at - offset) as usize;
            for (i, c) in chunks.chunks.iter().enumerate() {
                println!(
                    "  chunk {i}: original {} filtered {} metadata {}",
                    c.original_len,
                    c.data.len(),
                    c.metadata.len()
                );
            }
            if generic {
                let t =
                    tessera::filters::read_generic_tile(tail, parse_key(&key)?.as_ref(), offset)?;
                println!("decoded ({} bytes): {}", t.data.len(), hex_preview(&t.data));
            } else if let Some(c) = chunks.chunks.first() {
                let d = &tail[base + c.data.start..base + c.data.end];
                println!("chunk 0 filtered data: {}", hex_preview(d));
            }
        }
        Command::Info { array, key } => {
            let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?;
            let s = &a.schema;
            let mut versions: Vec<u32> = a.fragments.iter().map(|f| f.version().0).collect();
            versions.sort_unstable();
            versions.dedup();
            println!("array: {}", array.display());
            println!("type: {}", s.array_type);
            println!(
                "schema: {} (format version {}), {} schema file(s)",
                s.name,
                s.version,
                a.schema_files.len()
            );
            println!(
                "dimensions: {}",
                s.dimensions
                    .iter()
                    .map(|d| format!("{} {}", d.name, d.datatype))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            println!(
                "attributes: {}",
                s.attributes
                    .iter()
                    .map(|d| format!("{} {}", d.name, d.datatype))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            println!(
                "fragments: {} (format versions {:?})",
                a.fragments.len(),
                versions
            );
            println!(
                "cells written: {}",
                a.fragments.iter().map(|f| f.total_cell_num()).sum::<u64>()
            );
            println!("size on disk: {} bytes", dir_size(&array));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds decoded domains, tile extents, current domain and fill values to a
/// schema's JSON (the raw fields stay as they are stored).
fn add_typed_values(v: &mut serde_json::Value, s: &tessera::schema::ArraySchema) {
    use tessera::schema::Value;
    for (j, d) in s.dimensions.iter().enumerate() {
        if let Some((lo, hi)) = d.domain_values() {
            v["dimensions"][j]["domain_values"] = serde_json::json!([lo.to_json(), hi.to_json()]);
        }
        v["dimensions"][j]["tile_extent_value"] = d
            .tile_extent_value()
            .map_or(serde_json::Value::Null, |e| e.to_json());
    }
    for (i, a) in s.attributes.iter().enumerate() {
        let vals = tessera::schema::value::values_to_json(a.datatype, &a.fill_value);
        v["attributes"][i]["fill_value_values"] = vals.into();
    }
    if let Some(rect) = s
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref())
    {
        let r: Vec<serde_json::Value> = rect
            .iter()
            .zip(&s.dimensions)
            .map(|(r, d)| {
                serde_json::json!([
                    Value::decode(d.datatype, &r.lo).to_json(),
                    Value::decode(d.datatype, &r.hi).to_json()
                ])
            })
            .collect();
        v["current_domain_values"] = r.into();
    }
}

/// The first 64 bytes as hex, for `dump-tile`.
fn hex_preview(b: &[u8]) -> String {
    let head: Vec<String> = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    format!(
        "{}{}",
        head.join(" "),
        if b.len() > 64 { " ..." } else { "" }
    )
}

fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p).map_or(0, |rd| {
        rd.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => dir_size(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

/// Large result buffers get transparent huge pages: see `tessera-alloc`.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

fn main() -> ExitCode {
    // A bug must not print a backtrace at users: one line, non-zero exit.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error (please report): {info}");
    }));
    let cli = Cli::parse();
    // The main thread is one of rayon's threads: a read's parallel steps run
    // on it and its helpers by work stealing, instead of each being handed
    // to the pool while it sleeps, and one thread fewer is started. Built
    // after parsing, so that `--help` and `--version` start no thread.
    // `build_global` waits until the helpers run, which measured faster
    // than not waiting (`build`): a helper left queued on the main thread's
    // CPU competes with it. On the 1 % row-band read (benchmark), medians of
    // 300 alternating runs: 4.57 ms, against 4.73 with the main thread
    // outside the pool, 5.16 not waiting and 4.84 with one thread.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            let mut msg = format!("error: {e}");
            let mut src = e.source();
            while let Some(s) = src {
                // Wrappers repeat their cause in their own message: skip echoes.
                let text = s.to_string();
                if !msg.contains(&text) {
                    msg.push_str(&format!("\n  caused by: {text}"));
                }
                src = s.source();
            }
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
        Err(_) => ExitCode::from(101),
    }
}
