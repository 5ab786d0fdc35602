//! `tessera write` of a dense array from an Arrow IPC file whose cells run
//! row-major over a box (what `tessera read --format arrow` writes): the
//! box is read off the file's first and last cells (an IPC file's batches
//! are found from its footer), then the cells are streamed band by band
//! ([`RowMajorWriter`]), holding about one band instead of every cell and
//! coordinate. Anything else, and any error on the way, goes the general
//! way (`write.rs`), which takes any order and names any fault; nothing
//! this path began is left behind (an uncommitted fragment is removed).

use crate::args::BoxError;
use crate::arrow_file::MappedArrowFile;
use std::path::Path;
use tessera_write::{FragmentWriter, RowMajorWriter, Walk, WriteOptions};

/// Writes the Arrow IPC file `input` into the dense array at `array` as
/// one box streamed band by band; `None` when the file's cells are not
/// such a box (or the array is sparse): nothing was written then.
/// The file is read in place ([`MappedArrowFile`]): no copy of it is read,
/// and the pages of batches whose cells are written are given back.
pub fn write(
    array: &tessera::storage::Location,
    options: WriteOptions,
    input: &Path,
) -> Result<Option<(usize, Vec<String>)>, BoxError> {
    let schema = FragmentWriter::try_new(array, options)?.schema().clone();
    if !schema.is_dense() {
        return Ok(None);
    }
    let Ok(file) = MappedArrowFile::open(input) else {
        return Ok(None);
    };
    let Some(bounds) = corners(&file, &schema)? else {
        return Ok(None);
    };
    let Ok(mut w) = RowMajorWriter::try_new(array, options, &bounds) else {
        return Ok(None);
    };
    // Batches taken whose pages are still held: (index, cells up to its end).
    let mut held = std::collections::VecDeque::new();
    for i in 0..file.num_batches() {
        let batch = file.batch(i)?;
        match w.write(&batch) {
            Ok(Walk::Continued) => {}
            Ok(Walk::Strayed(_)) | Err(_) => return Ok(None),
        }
        held.push_back((i, w.cells_taken()));
        while let Some(&(j, end)) = held.front() {
            if end > w.cells_written() {
                break;
            }
            file.release(j);
            held.pop_front();
        }
    }
    let cells = w.cells() as usize;
    Ok(w.finish().ok().map(|names| (cells, names)))
}

/// The box from the first cell of the file to its last, when each of its
/// bounds is in order.
fn corners(
    file: &MappedArrowFile,
    schema: &tessera::schema::ArraySchema,
) -> Result<Option<Vec<(i128, i128)>>, BoxError> {
    let at = |i: usize, last: bool| -> Result<Option<Vec<i128>>, BoxError> {
        let batch = file.batch(i)?;
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let row = if last { batch.num_rows() - 1 } else { 0 };
        Ok(RowMajorWriter::cell_coordinates(schema, &batch, row))
    };
    let n = file.num_batches();
    let mut first = None;
    for i in 0..n {
        if let Some(c) = at(i, false)? {
            first = Some(c);
            break;
        }
    }
    let mut last = None;
    for i in (0..n).rev() {
        if let Some(c) = at(i, true)? {
            last = Some(c);
            break;
        }
    }
    let (Some(lo), Some(hi)) = (first, last) else {
        return Ok(None);
    };
    Ok(lo
        .iter()
        .zip(&hi)
        .all(|(l, h)| l <= h)
        .then(|| lo.into_iter().zip(hi).collect()))
}
