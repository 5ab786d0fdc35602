//! Result writers: JSON lines, CSV, or nothing, one batch at a time.

use crate::{format, FormatArg};
use std::io::Write;
use tessera::query::ReadResult;

/// Writes batches of one read in one format.
pub struct Writer<'w> {
    format: FormatArg,
    w: std::io::BufWriter<Box<dyn Write + 'w>>,
    line: String,
    started: bool,
}

impl<'w> Writer<'w> {
    pub fn new(format: FormatArg, sink: Box<dyn Write + 'w>) -> Self {
        Writer {
            format,
            w: std::io::BufWriter::with_capacity(1 << 20, sink),
            line: String::with_capacity(256),
            started: false,
        }
    }

    /// Writes the cells of one batch.
    pub fn write(&mut self, r: &ReadResult) -> std::io::Result<()> {
        let first = !self.started;
        self.started = true;
        match self.format {
            FormatArg::Null => Ok(()),
            FormatArg::Csv => {
                if first {
                    let header: Vec<&str> = r.columns.iter().map(|c| c.name.as_str()).collect();
                    writeln!(self.w, "{}", header.join(","))?;
                }
                for i in 0..r.cell_count {
                    self.line.clear();
                    for (k, c) in r.columns.iter().enumerate() {
                        if k > 0 {
                            self.line.push(',');
                        }
                        format::push_csv_value(&mut self.line, c, i);
                    }
                    self.line.push('\n');
                    self.w.write_all(self.line.as_bytes())?;
                }
                Ok(())
            }
            FormatArg::Jsonl | FormatArg::Arrow | FormatArg::Parquet => {
                let keys: Vec<String> = r
                    .columns
                    .iter()
                    .map(|c| serde_json::to_string(&c.name).expect("a string serializes"))
                    .collect();
                for i in 0..r.cell_count {
                    self.line.clear();
                    self.line.push('{');
                    for (k, c) in r.columns.iter().enumerate() {
                        if k > 0 {
                            self.line.push(',');
                        }
                        self.line.push_str(&keys[k]);
                        self.line.push(':');
                        format::push_value(&mut self.line, c, i);
                    }
                    self.line.push_str("}\n");
                    self.w.write_all(self.line.as_bytes())?;
                }
                Ok(())
            }
        }
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}
