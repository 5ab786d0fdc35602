//! `tessera write`: cells from JSON lines (the form `tessera read` prints)
//! into a new fragment of an existing sparse array.

use crate::args::*;
use std::io::BufRead;
use std::process::ExitCode;

/// Write cells (JSON lines, as `tessera read` prints them) into a new fragment.
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: std::path::PathBuf,
    /// Where the cells come from: a file, or `-` for stdin.
    #[arg(long, default_value = "-")]
    pub input: std::path::PathBuf,
    /// Input format (only `jsonl` so far).
    #[arg(long, default_value = "jsonl")]
    pub format: String,
    /// The fragment's timestamp in milliseconds since the epoch (default: now).
    #[arg(long)]
    pub timestamp: Option<u64>,
    /// The array's AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
}

/// Cells handed to the writer at a time.
const BATCH: usize = 1 << 16;

/// Runs `tessera write`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    if args.format != "jsonl" {
        return Err(format!(
            "--format {}: only jsonl input is supported so far",
            args.format
        )
        .into());
    }
    let options = tessera_write::WriteOptions {
        timestamp: args.timestamp,
        key: parse_key(&args.key)?,
        ..Default::default()
    };
    let mut writer = tessera_write::FragmentWriter::try_new(&args.array, options)?;
    let mut rows = tessera_write::Rows::new(writer.schema());
    let input: Box<dyn BufRead> = if args.input.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(&args.input)
            .map_err(|e| format!("{}: {e}", args.input.display()))?;
        Box::new(std::io::BufReader::new(f))
    };
    for (n, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let row: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("line {}: not JSON: {e}", n + 1))?;
        rows.push(&row, n + 1)?;
        if rows.len() >= BATCH {
            writer.write(&rows.take())?;
        }
    }
    writer.write(&rows.take())?;
    let cells = writer.cells();
    match writer.finish()? {
        Some(name) => eprintln!("wrote {cells} cells: fragment {name}"),
        None => eprintln!("no cells: nothing written"),
    }
    Ok(ExitCode::SUCCESS)
}
