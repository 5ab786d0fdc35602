//! `tessera write`: cells into a new fragment of an existing array (sparse:
//! cells in any order; dense: cells covering a box exactly once),
//! from JSON lines or CSV (the forms `tessera read` prints), an Arrow IPC
//! file or a Parquet file (the files `tessera read --format arrow|parquet`
//! writes).

use crate::args::*;
use crate::storage::Stores;
use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;
use tessera_write::{FragmentWriter, Rows};

/// Write cells (as `tessera read` prints them: JSON lines, Arrow IPC or Parquet) into a new fragment.
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: std::path::PathBuf,
    /// Where the cells come from: a file, or `-` for stdin (JSON lines only).
    #[arg(long, default_value = "-")]
    pub input: std::path::PathBuf,
    /// Input format: jsonl, csv, arrow or parquet (default: from the file's
    /// extension, `.csv`, `.arrow`/`.ipc`/`.feather` or `.parquet`; JSON
    /// lines otherwise, and for stdin).
    #[arg(long)]
    pub format: Option<String>,
    /// The fragment's timestamp in milliseconds since the epoch (default: now).
    #[arg(long)]
    pub timestamp: Option<u64>,
    /// The array's AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
    /// Memory for the write, e.g. `512M`, `2G`. A sparse write holding
    /// more cells than a third of it writes them as a fragment and goes on:
    /// the write becomes several fragments, committed together (duplicates
    /// are then refused within each only). A dense write holds its whole
    /// box, and is refused past the budget, except from an Arrow file whose
    /// cells run row-major over the box (as `tessera read --format arrow`
    /// writes them): that one is written in bands of a third of the
    /// budget (default 256 MiB). Default: unbounded.
    #[arg(long, value_parser = parse_size)]
    pub budget: Option<u64>,
    /// Cells given twice at one coordinate of a sparse array that does not
    /// allow duplicates: refuse the write, keep them all (a read gives any
    /// of them), or drop all but the first given.
    #[arg(long, value_enum, default_value = "refuse")]
    pub duplicates: DuplicateCells,
}

/// `--duplicates` of `tessera write`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum DuplicateCells {
    Refuse,
    Keep,
    Drop,
}

impl From<DuplicateCells> for tessera_write::Duplicates {
    fn from(d: DuplicateCells) -> Self {
        match d {
            DuplicateCells::Refuse => tessera_write::Duplicates::Refuse,
            DuplicateCells::Keep => tessera_write::Duplicates::Keep,
            DuplicateCells::Drop => tessera_write::Duplicates::Drop,
        }
    }
}

/// Cells handed to the writer at a time (JSON lines).
const BATCH: usize = 1 << 16;

/// Runs `tessera write`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    // Whole columns of hundreds of MiB: huge pages' on-demand compaction
    // costs more here than the page faults it saves (measured: a 67M-cell
    // dense write 12.3 s with, 8.3 s without).
    tessera_alloc::set_huge_pages(false);
    let format = args
        .format
        .clone()
        .unwrap_or_else(|| format_of(&args.input).into());
    let options = tessera_write::WriteOptions {
        timestamp: args.timestamp,
        key: parse_key(&args.key)?,
        budget: args.budget,
        duplicates: args.duplicates.into(),
        ..Default::default()
    };
    // Text rows go to the writer in batches well inside the budget.
    let batch_bytes = args.budget.map_or(usize::MAX, |b| (b / 6).max(1) as usize);
    let source = args.input.display().to_string();
    let at = |e: BoxError| -> BoxError { format!("{source}: {e}").into() };
    let (cells, names) = stores.at_location(&args.array, |array| {
        // A dense box in an Arrow file, row-major: streamed band by band.
        if format == "arrow" {
            if let Some(done) = super::write_box::write(array, options, &args.input).map_err(at)? {
                return Ok(done);
            }
        }
        let mut writer = FragmentWriter::try_new(array, options)?;
        match format.as_str() {
            "jsonl" => write_jsonl(&mut writer, &args.input, batch_bytes)?,
            "csv" => write_csv(&mut writer, &args.input, batch_bytes)?,
            "arrow" => write_arrow(&mut writer, &args.input).map_err(at)?,
            "parquet" => write_parquet(&mut writer, &args.input).map_err(at)?,
            other => {
                return Err(
                    format!("--format {other}: expected jsonl, csv, arrow or parquet").into(),
                )
            }
        }
        let cells = writer.cells();
        // For the crash-safety test: stopped with the files written, the
        // commit not (`TESSERA_CRASH_AFTER=FragmentWritten`).
        let crash_after = std::env::var(crate::commands::consolidate::CRASH_AFTER).ok();
        let crash = &mut || crate::commands::consolidate::crash_if(&crash_after, "FragmentWritten");
        Ok((cells, writer.finish_observed(crash)?))
    })?;
    // Dropped duplicates are counted among the cells given.
    let wrote = match args.duplicates {
        DuplicateCells::Drop => format!("took {cells} cells (one written a coordinate)"),
        _ => format!("wrote {cells} cells"),
    };
    match names.as_slice() {
        [] => eprintln!("no cells: nothing written"),
        [name] => eprintln!("{wrote}: fragment {name}"),
        names => eprintln!(
            "{wrote}: {} fragments (cut by --budget), {}",
            names.len(),
            names.join(", ")
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// The input format a file's extension names.
fn format_of(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("arrow" | "ipc" | "feather") => "arrow",
        Some("parquet") => "parquet",
        Some("csv") => "csv",
        _ => "jsonl",
    }
}

/// The input, a file or `-` for stdin.
fn open_input(input: &Path) -> Result<Box<dyn BufRead>, BoxError> {
    if input.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let f = std::fs::File::open(input).map_err(|e| format!("{}: {e}", input.display()))?;
    Ok(Box::new(std::io::BufReader::new(f)))
}

/// JSON lines, in batches.
fn write_jsonl(
    writer: &mut FragmentWriter,
    input: &Path,
    batch_bytes: usize,
) -> Result<(), BoxError> {
    let mut rows = Rows::new(writer.schema());
    let lines = open_input(input)?;
    for (n, line) in lines.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let row: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("line {}: not JSON: {e}", n + 1))?;
        rows.push(&row, n + 1)?;
        if rows.len() >= BATCH || rows.bytes() >= batch_bytes {
            writer.write_owned(rows.take())?;
        }
    }
    writer.write_owned(rows.take())?;
    Ok(())
}

/// CSV as `tessera read --format csv` prints it (a header of field names,
/// RFC 4180 quoting), in batches.
fn write_csv(
    writer: &mut FragmentWriter,
    input: &Path,
    batch_bytes: usize,
) -> Result<(), BoxError> {
    let mut rows = Rows::new(writer.schema());
    let mut csv = csv::ReaderBuilder::new().from_reader(open_input(input)?);
    let header: Vec<String> = csv.headers()?.iter().map(str::to_owned).collect();
    let mut record = csv::StringRecord::new();
    loop {
        let line = csv.position().line();
        match csv.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(format!("line {line}: {e}").into()),
        }
        let fields: Vec<(&str, &str)> = header.iter().map(String::as_str).zip(&record).collect();
        rows.push_text(&fields, line as usize)?;
        if rows.len() >= BATCH || rows.bytes() >= batch_bytes {
            writer.write_owned(rows.take())?;
        }
    }
    writer.write_owned(rows.take())?;
    Ok(())
}

/// An Arrow IPC file, batch by batch, read in place; each batch's pages
/// are given back once its cells are copied into the writer's columns.
fn write_arrow(writer: &mut FragmentWriter, input: &Path) -> Result<(), BoxError> {
    let file = crate::arrow_file::MappedArrowFile::open(input)?;
    for i in 0..file.num_batches() {
        let columns = tessera_write::arrow::columns_from_batch(&file.batch(i)?, writer.schema())?;
        file.release(i);
        writer.write_owned(columns)?;
    }
    Ok(())
}

/// A Parquet file, batch by batch.
fn write_parquet(writer: &mut FragmentWriter, input: &Path) -> Result<(), BoxError> {
    let f = std::fs::File::open(input)?;
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?.build()?;
    for batch in reader {
        let columns = tessera_write::arrow::columns_from_batch(&batch?, writer.schema())?;
        writer.write_owned(columns)?;
    }
    Ok(())
}
