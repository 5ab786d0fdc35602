//! What the subcommands share: the cell selection (`--subarray`,
//! `--timestamp`, `--where`, `--key`), layouts and formats, and the parsers
//! of sizes, keys, timestamps and bounds.

use crate::storage::{target, Stores};
use clap::ValueEnum;
use tessera::filters::EncryptionKey;
use tessera::fragment::OpenArray;
use tessera::query::{Aggregate, Expr, ReadRequest, ReadSession, Value};
use tessera::tile::Layout;

pub use crate::error::BoxError;

#[derive(Clone, Copy, ValueEnum)]
pub enum LayoutArg {
    RowMajor,
    ColMajor,
    Global,
    Unordered,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
pub enum FormatArg {
    Jsonl,
    Csv,
    Arrow,
    Parquet,
    Null,
}

impl LayoutArg {
    /// The layout this names.
    pub fn layout(self) -> Layout {
        match self {
            LayoutArg::RowMajor => Layout::RowMajor,
            LayoutArg::ColMajor => Layout::ColMajor,
            LayoutArg::Global => Layout::GlobalOrder,
            LayoutArg::Unordered => Layout::Unordered,
        }
    }
}

/// Which cells: the array opened at a time, a subarray, a condition.
#[derive(clap::Args)]
pub struct Selection {
    /// `DIM=LO:HI[,LO:HI...]`, inclusive; repeat for several dimensions.
    #[arg(long)]
    pub subarray: Vec<String>,
    /// Open at timestamp `T`, or at the range `T1:T2` (milliseconds).
    #[arg(long)]
    pub timestamp: Option<String>,
    /// Keep cells satisfying a condition, e.g. `a > 5 and b is not null`.
    #[arg(long = "where")]
    pub condition: Option<String>,
    /// AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
}

impl Selection {
    /// Opens the array at `--timestamp` with `--key` for reads.
    pub fn session(
        &self,
        array: &std::path::Path,
        stores: &Stores,
    ) -> Result<ReadSession, BoxError> {
        let (t1, t2) = parse_timestamp(&self.timestamp)?;
        let key = parse_key(&self.key)?;
        let storage = stores.storage(array)?;
        let opened = OpenArray::open(&*storage, &target(array), t1, t2, key)?;
        Ok(ReadSession::new(storage, std::sync::Arc::new(opened)))
    }

    /// A read of `a` with `--subarray` ranges and the `--where` condition.
    pub fn request(&self, a: &OpenArray) -> Result<ReadRequest, BoxError> {
        let mut q = ReadRequest::new();
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

/// `count`, `sum(F)`, `min(F)`, `max(F)`, `null_count(F)` or `mean(F)`.
pub fn parse_aggregate(s: &str) -> Result<Aggregate, BoxError> {
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

/// `--key`'s text as a key (64 hex digits, or the 32 bytes themselves).
pub fn parse_key(k: &Option<String>) -> Result<Option<EncryptionKey>, BoxError> {
    Ok(match k {
        Some(k) => Some(EncryptionKey::parse(k).map_err(|e| format!("--{e}"))?),
        None => None,
    })
}

/// A byte count with an optional K, M or G suffix (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
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

pub fn parse_timestamp(t: &Option<String>) -> Result<(u64, u64), BoxError> {
    match t {
        None => Ok((0, u64::MAX)),
        Some(t) => match t.split_once(':') {
            Some((a, b)) => Ok((a.trim().parse()?, b.trim().parse()?)),
            None => Ok((0, t.trim().parse()?)),
        },
    }
}

pub fn parse_bound(s: &str, t: tessera::tile::Datatype) -> Result<Value, BoxError> {
    Ok(Value::parse(s, t)?)
}

/// Prints records as one pretty JSON array, or one text line each.
pub fn print_records(
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

/// The folder a subcommand works on, and its encryption key.
#[derive(clap::Args)]
pub struct Target {
    /// The array folder (for `info` and `meta`, a group's too).
    pub array: std::path::PathBuf,
    /// AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
}

impl Target {
    /// The array, opened at the latest timestamp.
    pub fn open(&self, stores: &Stores) -> Result<OpenArray, BoxError> {
        let key = parse_key(&self.key)?;
        Ok(OpenArray::open(
            &*stores.storage(&self.array)?,
            &target(&self.array),
            0,
            u64::MAX,
            key,
        )?)
    }
}

/// The arguments of the listing subcommands (`fragments`, `commits`,
/// `meta`): the folder and key, and whether to print JSON.
#[derive(clap::Args)]
pub struct Listing {
    #[command(flatten)]
    pub target: Target,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
}
