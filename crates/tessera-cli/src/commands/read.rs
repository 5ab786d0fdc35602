//! `tessera read`: read cells as JSON lines (one object per cell), CSV, Arrow IPC, Parquet, or nothing (for timing).

use crate::args::*;
use crate::storage::Stores;
use crate::{output, progress};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Read cells as JSON lines (one object per cell), CSV, Arrow IPC, Parquet, or nothing (for timing).
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: PathBuf,
    /// Attributes to read, comma-separated (default: all, in schema order).
    #[arg(long, value_delimiter = ',')]
    pub attrs: Option<Vec<String>>,
    /// Dimensions (coordinates) to read, comma-separated (default: all, in
    /// schema order; they come in schema order, before the attributes).
    #[arg(long, value_delimiter = ',', conflicts_with = "no_dims")]
    pub dims: Option<Vec<String>>,
    /// Leave the dimensions (coordinates) out: attributes only.
    #[arg(long)]
    pub no_dims: bool,
    #[command(flatten)]
    pub select: Selection,
    /// Result layout (default: row-major for dense, unordered for sparse).
    #[arg(long, value_enum)]
    pub layout: Option<LayoutArg>,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: FormatArg,
    /// Write to a file instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Memory budget: the read proceeds in batches of about this many
    /// bytes (decoded tiles plus results), e.g. `64M`, `2G`.
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub budget: u64,
    /// Enumerated attributes as the values their keys name (default: the keys).
    #[arg(long)]
    pub enum_values: bool,
}

/// Runs `tessera read`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Args {
        array,
        attrs,
        dims,
        no_dims,
        select,
        layout,
        format,
        output,
        budget,
        enum_values,
    } = args;
    let session = select.session(&array, stores)?;
    let mut q = select
        .request(session.array())?
        .enumeration_values(enum_values)
        .dimensions(!no_dims)
        // Dense coordinates are written as they are computed, not
        // built as columns first (Arrow and Parquet build them).
        .coordinate_grid(true);
    if let Some(attrs) = attrs {
        q = q.attributes(attrs);
    }
    if let Some(dims) = dims {
        q = q.dimension_names(dims);
    }
    if let Some(l) = layout {
        q = q.layout(l.layout());
    }
    // Where batches cost nothing to cut (unfiltered dense tiles
    // read in place), small ones stay in cache while written out
    // (16 MiB measured best on the int32 benchmark array, against
    // 2 to 64 MiB).
    let batches = session.batches(&q.budget(budget).recycled_batches(16 << 20))?;
    let sink: Box<dyn Write + Send> = match output {
        Some(p) => {
            Box::new(std::fs::File::create(&p).map_err(|e| format!("{}: {e}", p.display()))?)
        }
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
    Ok(ExitCode::SUCCESS)
}
