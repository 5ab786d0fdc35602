//! Result writers: JSON lines, CSV, Arrow IPC, Parquet, or nothing, one
//! batch at a time.

use crate::args::{BoxError, FormatArg};
use crate::format;
use std::io::Write;
use tessera::query::ReadResult;

type Sink = std::io::BufWriter<Box<dyn Write + Send>>;

/// Columnar writers, created at the first batch (which fixes the schema).
enum Columnar {
    None,
    Arrow(arrow_ipc::writer::FileWriter<Sink>),
    Parquet(parquet::arrow::ArrowWriter<Sink>),
}

/// The field names of a batch, in output order: dimensions a grid
/// describes, then the columns.
fn names(r: &ReadResult) -> impl Iterator<Item = &str> {
    let grid = r
        .grid
        .iter()
        .flat_map(|g| &g.dimensions)
        .map(|d| d.name.as_str());
    grid.chain(r.columns.iter().map(|c| c.name.as_str()))
}

/// Writes a line per cell of `r`: its fields comma-separated (the
/// dimensions a grid describes first, as columns would be), as CSV values,
/// or with `keys` as a JSON object.
fn write_lines(
    w: &mut Sink,
    line: &mut String,
    r: &ReadResult,
    keys: Option<&[String]>,
) -> std::io::Result<()> {
    let mut cell = r.grid.as_ref().map(|g| g.cursor());
    for i in 0..r.cell_count {
        line.clear();
        if keys.is_some() {
            line.push('{');
        }
        let coords = cell.as_ref().map_or(&[][..], |c| c.coordinates());
        for k in 0..coords.len() + r.columns.len() {
            if k > 0 {
                line.push(',');
            }
            if let Some(keys) = keys {
                line.push_str(&keys[k]);
                line.push(':');
            }
            match (k.checked_sub(coords.len()), keys) {
                (None, _) => format::push_coordinate(line, coords[k]),
                (Some(c), Some(_)) => format::push_value(line, &r.columns[c], i),
                (Some(c), None) => format::push_csv_value(line, &r.columns[c], i),
            }
        }
        line.push_str(if keys.is_some() { "}\n" } else { "\n" });
        w.write_all(line.as_bytes())?;
        if let Some(c) = &mut cell {
            c.advance();
        }
    }
    Ok(())
}

/// About how many bytes each record batch of an Arrow IPC file holds: a
/// read's batch (up to its budget) is written as several, so that a
/// reader of the file, `tessera write` among them, can take it a batch at
/// a time (an IPC file's batches are read whole).
const ARROW_BATCH_BYTES: usize = 64 << 20;

/// `rb` cut into consecutive slices of about `bytes` each (no copy).
fn slices(rb: &arrow_array::RecordBatch, bytes: usize) -> Vec<arrow_array::RecordBatch> {
    let rows = rb.num_rows();
    let per_row = rb.get_array_memory_size() / rows.max(1);
    let step = (bytes / per_row.max(1)).max(1);
    (0..rows.max(1))
        .step_by(step)
        .map(|start| rb.slice(start, step.min(rows - start)))
        .collect()
}

/// Writes batches of one read in one format.
pub struct Writer {
    format: FormatArg,
    w: Option<Sink>,
    columnar: Columnar,
    line: String,
    started: bool,
}

impl Writer {
    pub fn new(format: FormatArg, sink: Box<dyn Write + Send>) -> Self {
        Writer {
            format,
            w: Some(std::io::BufWriter::with_capacity(1 << 20, sink)),
            columnar: Columnar::None,
            line: String::with_capacity(256),
            started: false,
        }
    }

    /// Writes the cells of one batch; hands the batch back when its
    /// buffers were only read (text formats, null), for reuse.
    pub fn write(&mut self, r: ReadResult) -> Result<Option<ReadResult>, BoxError> {
        let first = !self.started;
        self.started = true;
        if matches!(self.format, FormatArg::Arrow | FormatArg::Parquet) {
            let rb = r.into_record_batch()?;
            if first {
                let w = self.w.take().expect("the sink, until the first batch");
                self.columnar = if self.format == FormatArg::Arrow {
                    Columnar::Arrow(arrow_ipc::writer::FileWriter::try_new(w, &rb.schema())?)
                } else {
                    let props = parquet::file::properties::WriterProperties::builder()
                        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                        .build();
                    Columnar::Parquet(parquet::arrow::ArrowWriter::try_new(
                        w,
                        rb.schema(),
                        Some(props),
                    )?)
                };
            }
            match &mut self.columnar {
                Columnar::Arrow(a) => {
                    for part in slices(&rb, ARROW_BATCH_BYTES) {
                        a.write(&part)?
                    }
                }
                Columnar::Parquet(p) => p.write(&rb)?,
                Columnar::None => unreachable!("created above"),
            }
            return Ok(None);
        }
        let w = self.w.as_mut().expect("text formats keep the sink");
        match self.format {
            FormatArg::Null | FormatArg::Arrow | FormatArg::Parquet => {}
            FormatArg::Csv => {
                if first {
                    let header: Vec<&str> = names(&r).collect();
                    writeln!(w, "{}", header.join(","))?;
                }
                write_lines(w, &mut self.line, &r, None)?;
            }
            FormatArg::Jsonl => {
                let keys: Vec<String> = names(&r)
                    .map(|n| serde_json::to_string(n).expect("a string serializes"))
                    .collect();
                write_lines(w, &mut self.line, &r, Some(&keys))?;
            }
        }
        Ok(Some(r))
    }

    /// Closes columnar files and flushes, so that a failed write is an
    /// error here rather than lost when the buffer drops.
    pub fn finish(self) -> Result<(), BoxError> {
        let mut w = match self.columnar {
            Columnar::Arrow(a) => a.into_inner()?,
            Columnar::Parquet(p) => p.into_inner()?,
            Columnar::None => self.w.expect("text formats keep the sink"),
        };
        w.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use std::sync::Arc;

    /// Slices cover the batch's rows in order, each about the bytes asked.
    #[test]
    fn arrow_batches_are_cut_into_slices_of_about_the_bytes_asked() {
        let v = Int64Array::from_iter_values(0..10_000);
        let rb = RecordBatch::try_from_iter([("v", Arc::new(v) as ArrayRef)]).unwrap();
        let parts = slices(&rb, 8 * 1000);
        assert!(parts.len() >= 9 && parts.len() <= 11, "{}", parts.len());
        let rows: Vec<i64> = parts
            .iter()
            .flat_map(|p| {
                let c = p.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                c.values().to_vec()
            })
            .collect();
        assert_eq!(rows, (0..10_000).collect::<Vec<i64>>());
        let empty = rb.slice(0, 0);
        assert_eq!(slices(&empty, 1 << 20).len(), 1);
    }
}
