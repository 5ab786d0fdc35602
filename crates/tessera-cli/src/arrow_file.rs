//! An Arrow IPC file read in place. The file is memory-mapped and each
//! record batch's buffers are views into the mapping (arrow-rs IPC
//! `FileDecoder`), so a batch costs neither a read nor a copy, and only the
//! pages a caller touches come from disk. The pages of batches a caller is
//! done with are given back ([`MappedArrowFile::release`]), so one pass
//! over a file larger than memory holds a window of it, not all of it.
//!
//! A mapped file must not shrink while it is mapped: reading a page past
//! its new end stops the process (SIGBUS). pyarrow's and DuckDB's readers
//! map input files the same way.

use crate::error::BoxError;
use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::convert::fb_to_schema;
use arrow_ipc::reader::{read_footer_length, FileDecoder};
use arrow_ipc::Block;
use memmap2::Mmap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An Arrow IPC file, mapped: see the module.
pub struct MappedArrowFile {
    path: PathBuf,
    map: Arc<Mmap>,
    /// The whole mapping, which batches' buffers are slices of.
    bytes: Buffer,
    decoder: FileDecoder,
    /// The record batches' blocks, in the footer's order.
    blocks: Vec<Block>,
}

/// Owns the mapping for the buffers that point into it.
struct Shared(Arc<Mmap>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl MappedArrowFile {
    /// Maps the file at `path` and reads its footer (schema, dictionaries
    /// and the batches' places). Errors name the file and, for a block
    /// out of bounds, its byte offset.
    pub fn open(path: &Path) -> Result<MappedArrowFile, BoxError> {
        let at =
            |e: &dyn std::fmt::Display| -> BoxError { format!("{}: {e}", path.display()).into() };
        let file = std::fs::File::open(path).map_err(|e| at(&e))?;
        // SAFETY: a read-only, shared mapping, read through `Buffer`s that
        // never write it. The one hazard, the file shrinking while mapped
        // (SIGBUS on the lost pages), is a documented condition of use.
        #[allow(unsafe_code)]
        let map = Arc::new(unsafe { Mmap::map(&file) }.map_err(|e| at(&e))?);
        let bytes = Buffer::from(bytes::Bytes::from_owner(Shared(map.clone())));
        let len = bytes.len();
        let trailer = len.checked_sub(10).ok_or_else(|| {
            at(&format!(
                "{len} bytes: too short for an Arrow IPC file's footer"
            ))
        })?;
        let footer_len = read_footer_length(bytes[trailer..].try_into().expect("10 bytes"))
            .map_err(|e| at(&e))?;
        let start = trailer.checked_sub(footer_len).ok_or_else(|| {
            at(&format!(
                "the footer's length {footer_len} (at byte {trailer}) runs past the file's start"
            ))
        })?;
        let footer = arrow_ipc::root_as_footer(&bytes[start..trailer])
            .map_err(|e| at(&format!("the footer at byte {start}: {e}")))?;
        let ipc_schema = footer
            .schema()
            .ok_or_else(|| at(&format!("the footer at byte {start} holds no schema")))?;
        if !ipc_schema.endianness().equals_to_target_endianness() {
            return Err(at(&"its byte order is not this machine's"));
        }
        let schema = Arc::new(fb_to_schema(ipc_schema));
        let mut file = MappedArrowFile {
            path: path.to_owned(),
            map,
            decoder: FileDecoder::new(schema, footer.version()),
            blocks: footer
                .recordBatches()
                .map(|b| b.iter().copied().collect())
                .unwrap_or_default(),
            bytes: bytes.clone(),
        };
        for (i, block) in footer.dictionaries().iter().flatten().enumerate() {
            let data = file.block_bytes(block, &format!("dictionary {i}"))?;
            file.decoder
                .read_dictionary(block, &data)
                .map_err(|e| at(&format!("dictionary {i} at byte {}: {e}", block.offset())))?;
        }
        Ok(file)
    }

    /// How many record batches the file holds.
    pub fn num_batches(&self) -> usize {
        self.blocks.len()
    }

    /// Record batch `i`: views into the mapping, nothing copied (a buffer
    /// the file does not align is copied by the decoder).
    pub fn batch(&self, i: usize) -> Result<RecordBatch, BoxError> {
        let what = format!("record batch {i}");
        let block = self
            .blocks
            .get(i)
            .ok_or_else(|| format!("{}: no {what}", self.path.display()))?;
        let data = self.block_bytes(block, &what)?;
        self.decoder
            .read_record_batch(block, &data)
            .map_err(|e| {
                format!(
                    "{}: {what} at byte {}: {e}",
                    self.path.display(),
                    block.offset()
                )
            })?
            .ok_or_else(|| {
                format!(
                    "{}: {what} at byte {} holds no record batch",
                    self.path.display(),
                    block.offset()
                )
                .into()
            })
    }

    /// Gives back the pages of record batch `i`: the caller holds none of
    /// its arrays any more, or reads them again from the file (the mapping
    /// is shared and read-only, so a page given back is read again on its
    /// next touch). Keeps a pass's memory to the batches it holds.
    pub fn release(&self, i: usize) {
        let Some(range) = self.blocks.get(i).and_then(|b| self.block_range(b)) else {
            return;
        };
        // SAFETY: MADV_DONTNEED on a shared read-only file mapping drops
        // the process's page table entries only; the data stays in the
        // file and the page cache, and a later read faults it back in.
        #[allow(unsafe_code)]
        let _ = unsafe {
            self.map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                range.start,
                range.len(),
            )
        };
    }

    /// A block's bytes (message and body), within the file.
    fn block_range(&self, block: &Block) -> Option<Range<usize>> {
        let start = usize::try_from(block.offset()).ok()?;
        let len = usize::try_from(block.metaDataLength())
            .ok()?
            .checked_add(usize::try_from(block.bodyLength()).ok()?)?;
        let end = start.checked_add(len)?;
        (end <= self.bytes.len()).then_some(start..end)
    }

    /// A block's bytes as a slice of the mapping; an error naming `what`
    /// and the block's offset when it lies past the file's end.
    fn block_bytes(&self, block: &Block, what: &str) -> Result<Buffer, BoxError> {
        let range = self.block_range(block).ok_or_else(|| {
            format!(
                "{}: {what} at byte {} ({} + {} bytes) lies past the file's end ({} bytes)",
                self.path.display(),
                block.offset(),
                block.metaDataLength(),
                block.bodyLength(),
                self.bytes.len()
            )
        })?;
        Ok(self.bytes.slice_with_length(range.start, range.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array};
    use arrow_ipc::writer::FileWriter;

    fn write_file(path: &Path, batches: &[RecordBatch]) {
        let f = std::fs::File::create(path).unwrap();
        let mut w = FileWriter::try_new(f, batches[0].schema_ref()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }

    fn batch(from: i32, n: i32) -> RecordBatch {
        let x = Int32Array::from_iter_values(from..from + n);
        let v = Float64Array::from_iter_values((from..from + n).map(|i| i as f64 / 2.0));
        RecordBatch::try_from_iter([("x", Arc::new(x) as _), ("v", Arc::new(v) as _)]).unwrap()
    }

    #[test]
    fn reads_what_the_ipc_writer_wrote_and_again_after_release() {
        let dir = std::env::temp_dir().join(format!("tessera-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cells.arrow");
        let written = [batch(0, 1000), batch(1000, 0), batch(1000, 77_777)];
        write_file(&path, &written);
        let file = MappedArrowFile::open(&path).unwrap();
        assert_eq!(file.num_batches(), 3);
        for (i, want) in written.iter().enumerate() {
            assert_eq!(&file.batch(i).unwrap(), want);
        }
        // A batch held across a release still reads its values.
        let held = file.batch(2).unwrap();
        file.release(2);
        assert_eq!(&held, &written[2]);
        assert_eq!(&file.batch(2).unwrap(), &written[2]);
        let err = file.batch(3).unwrap_err().to_string();
        assert!(err.contains("no record batch 3"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_the_file_and_offset_of_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("tessera-mapped-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cells.arrow");
        std::fs::write(&path, b"ARROW1").unwrap();
        let err = MappedArrowFile::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("cells.arrow") && err.contains("too short"),
            "{err}"
        );
        // A footer length past the file's start.
        let mut bytes = vec![0u8; 16];
        bytes.extend_from_slice(&1000i32.to_le_bytes());
        bytes.extend_from_slice(b"ARROW1");
        std::fs::write(&path, &bytes).unwrap();
        let err = MappedArrowFile::open(&path).err().unwrap().to_string();
        assert!(err.contains("footer's length 1000 (at byte 16)"), "{err}");
        // A batch's block moved past the end: the file cut short.
        write_file(&path, &[batch(0, 10_000)]);
        let whole = std::fs::read(&path).unwrap();
        let file = MappedArrowFile::open(&path).unwrap();
        let block = file.blocks[0];
        drop(file);
        let footer = whole.len()
            - 10
            - read_footer_length(whole[whole.len() - 10..].try_into().unwrap()).unwrap();
        // The footer kept, the batch's body cut off.
        let mut cut = whole[..block.offset() as usize + 8].to_vec();
        cut.extend_from_slice(&whole[footer..]);
        std::fs::write(&path, &cut).unwrap();
        let file = MappedArrowFile::open(&path).unwrap();
        let err = file.batch(0).unwrap_err().to_string();
        assert!(
            err.contains("record batch 0 at byte") && err.contains("past the file's end"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
