//! `tessera sql`: SQL over arrays with DataFusion (feature `sql`). Each
//! `--table NAME=URI` is registered as a table (`tessera_datafusion`);
//! the result is printed as an aligned table (the default on a terminal),
//! JSON lines in the read contract's value forms (the default otherwise),
//! or CSV. With `--cluster`, the query runs on a Ballista cluster
//! (`tessera scheduler`, `tessera executor`; `tessera_ballista`).

use crate::args::*;
use crate::format::{push_f32, push_f64, push_json_str};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

/// Run a SQL query over arrays.
#[derive(clap::Args)]
pub struct Args {
    /// The query, e.g. `SELECT x, sum(v) FROM a GROUP BY x`.
    pub query: String,
    /// A table: `NAME=URI` (an array folder or an object store URI); repeatable.
    #[arg(long = "table", value_name = "NAME=URI")]
    pub tables: Vec<String>,
    /// Open every table at timestamp `T`, or at the range `T1:T2` (milliseconds).
    #[arg(long)]
    pub timestamp: Option<String>,
    /// AES-256-GCM key of the arrays: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
    /// Output: an aligned table, JSON lines (one object per row) or CSV
    /// (default: table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub format: Option<SqlFormat>,
    /// Run the query on the Ballista cluster whose scheduler is at
    /// HOST:PORT (`tessera scheduler`); every executor must reach the
    /// tables' URIs (local paths are sent absolute).
    #[arg(long, value_name = "HOST:PORT")]
    pub cluster: Option<String>,
    /// Give up on the query after SECONDS, with an error (default: wait
    /// as long as it runs). On a cluster with no executor, a query
    /// waits for one until then.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
}

/// `--timeout`: a positive number of seconds.
fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}`: expected a number of seconds"))?;
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("`{s}`: expected a positive number of seconds")),
    }
}

/// `--format` of `tessera sql`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum SqlFormat {
    Table,
    Jsonl,
    Csv,
}

/// Runs `tessera sql`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    let window = match &args.timestamp {
        Some(_) => Some(parse_timestamp(&args.timestamp)?),
        None => None,
    };
    let key = parse_key(&args.key)?;
    if args.cluster.is_some() {
        super::cluster::log_to_stderr()?;
    }
    let runtime = super::cluster::runtime()?;
    let ctx = match &args.cluster {
        Some(c) => runtime
            .block_on(tessera_ballista::remote_context(c))
            .map_err(|e| format!("--cluster {c}: {e}"))?,
        // DataFusion's settings from `DATAFUSION_*` variables, as its own
        // CLI reads them (`DATAFUSION_EXECUTION_BATCH_SIZE=32768`).
        None => SessionContext::new_with_config(
            SessionConfig::from_env().map_err(|e| format!("DATAFUSION_* settings: {e}"))?,
        ),
    };
    // Tables opened in the runtime's context send their object-store
    // requests on it: one runtime for DataFusion and every table.
    let _in_runtime = runtime.enter();
    let mut tables = Vec::new();
    for t in &args.tables {
        let (name, uri) = t
            .split_once('=')
            .ok_or_else(|| format!("--table `{t}`: expected NAME=URI"))?;
        // Executors run elsewhere: a local path must not depend on our directory.
        let uri = match (&args.cluster, std::path::Path::new(uri).is_dir()) {
            (Some(_), true) => std::fs::canonicalize(uri)?.display().to_string(),
            _ => uri.to_owned(),
        };
        let table = tessera_datafusion::register(&ctx, name, &uri, window, key)
            .map_err(|e| format!("--table {name}: {e}"))?;
        tables.push(table);
    }
    let query = async {
        let df = ctx.sql(&args.query).await?;
        let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
        let batches = df.collect().await?;
        match &args.cluster {
            // Flight hands results over with dictionaries as their values.
            Some(_) => {
                let tables: Vec<&tessera_datafusion::TesseraTable> =
                    tables.iter().map(|t| t.as_ref()).collect();
                tessera_ballista::restore_dictionaries(&schema, batches, &tables)
            }
            None => Ok(batches),
        }
    };
    let batches: Vec<RecordBatch> = match args.timeout {
        None => runtime.block_on(query)?,
        Some(limit) => runtime
            .block_on(async { tokio::time::timeout(limit, query).await })
            .map_err(|_| timed_out(limit, args.cluster.as_deref()))??,
    };
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        SqlFormat::Table
    } else {
        SqlFormat::Jsonl
    });
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        SqlFormat::Table => {
            let table = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?;
            writeln!(out, "{table}")?;
        }
        SqlFormat::Jsonl => write_jsonl(&mut out, &batches)?,
        SqlFormat::Csv => write_csv(&mut out, &batches)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The error of a query `--timeout` ended.
fn timed_out(limit: Duration, cluster: Option<&str>) -> String {
    let mut e = format!("the query had not finished after --timeout {limit:?}");
    if let Some(c) = cluster {
        e.push_str(&format!(
            " on the cluster at {c}: is an executor (`tessera executor --scheduler {c}`) running and able to reach the tables?"
        ));
    }
    e
}

/// One JSON object per row, keyed by the result's column names.
fn write_jsonl(out: &mut impl Write, batches: &[RecordBatch]) -> Result<(), BoxError> {
    let mut line = String::new();
    for b in batches {
        let schema = b.schema();
        for r in 0..b.num_rows() {
            line.clear();
            line.push('{');
            for (i, (field, column)) in schema.fields().iter().zip(b.columns()).enumerate() {
                if i > 0 {
                    line.push(',');
                }
                push_json_str(&mut line, field.name());
                line.push(':');
                push_value(&mut line, column.as_ref(), r, text_bytes(field))?;
            }
            line.push_str("}\n");
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}

/// A header of column names, then each row; values as in JSON lines,
/// strings bare (quoted where CSV needs it), nulls empty.
fn write_csv(out: &mut impl Write, batches: &[RecordBatch]) -> Result<(), BoxError> {
    let mut w = csv::Writer::from_writer(out);
    let mut header_written = false;
    for b in batches {
        if !header_written {
            w.write_record(b.schema().fields().iter().map(|f| f.name().as_str()))?;
            header_written = true;
        }
        let schema = b.schema();
        for r in 0..b.num_rows() {
            let mut record = Vec::with_capacity(b.num_columns());
            for (field, c) in schema.fields().iter().zip(b.columns()) {
                let mut v = String::new();
                if !c.is_null(r) {
                    push_value(&mut v, c.as_ref(), r, text_bytes(field))?;
                    // Strings bare: the csv writer quotes where CSV needs it.
                    if v.starts_with('"') {
                        v = serde_json::from_str::<String>(&v)?;
                    }
                }
                record.push(v);
            }
            w.write_record(&record)?;
        }
    }
    w.flush()?;
    Ok(())
}

/// Whether a binary column holds text: a TileDB CHAR or UTF-16/32 string
/// column (its field says so, `tiledb.datatype`), read as text as `read`
/// does; BLOB and columns SQL made are hex.
fn text_bytes(field: &datafusion::arrow::datatypes::Field) -> bool {
    field
        .metadata()
        .get("tiledb.datatype")
        .is_some_and(|t| t == "CHAR" || t.starts_with("STRING_"))
}

/// One value of `a` at row `r` in the read contract's form: integers
/// exact, floats shortest (NaN and infinities as strings), timestamps as
/// raw integers, binary as hex (as text where `text` says the bytes are
/// TileDB text), dictionary columns (enumerated attributes) as their
/// stored keys, lists as arrays, null as null.
fn push_value(out: &mut String, a: &dyn Array, r: usize, text: bool) -> Result<(), BoxError> {
    if a.is_null(r) {
        out.push_str("null");
        return Ok(());
    }
    match a.data_type() {
        DataType::Dictionary(..) => {
            let keys = a.as_any_dictionary().keys();
            return push_value(out, keys, r, false);
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            let items = match a.data_type() {
                DataType::List(_) => a.as_list::<i32>().value(r),
                DataType::LargeList(_) => a.as_list::<i64>().value(r),
                _ => a.as_fixed_size_list().value(r),
            };
            out.push('[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push(',');
                }
                push_value(out, items.as_ref(), i, text)?;
            }
            out.push(']');
            return Ok(());
        }
        _ => {}
    }
    match ScalarValue::try_from_array(a, r)? {
        ScalarValue::Float64(Some(v)) => push_f64(out, v),
        ScalarValue::Float32(Some(v)) => push_f32(out, v),
        ScalarValue::Boolean(Some(v)) => out.push_str(if v { "true" } else { "false" }),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => push_json_str(out, &s),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b))
            if text =>
        {
            push_json_str(out, &String::from_utf8_lossy(&b))
        }
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => {
            out.push('"');
            for byte in b {
                out.push_str(&format!("{byte:02x}"));
            }
            out.push('"');
        }
        v if matches!(
            a.data_type(),
            DataType::Timestamp(
                TimeUnit::Second
                    | TimeUnit::Millisecond
                    | TimeUnit::Microsecond
                    | TimeUnit::Nanosecond,
                _
            )
        ) =>
        {
            let raw = v.cast_to(&DataType::Int64)?;
            out.push_str(&raw.to_string());
        }
        v if a.data_type().is_integer() => out.push_str(&v.to_string()),
        // Decimals, dates and the rest: their display form, as a string.
        v => push_json_str(out, &v.to_string()),
    }
    Ok(())
}
