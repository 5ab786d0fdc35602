//! `tessera write` of a dense array from an Arrow IPC file whose cells run
//! row-major over a box (what `tessera read --format arrow` writes): the
//! box is read off the file's first and last cells (an IPC file's batches
//! are found from its footer), then the cells are streamed band by band
//! ([`RowMajorWriter`]), holding about one band instead of every cell and
//! coordinate. Anything else, and any error on the way, goes the general
//! way (`write.rs`), which takes any order and names any fault; nothing
//! this path began is left behind (an uncommitted fragment is removed).

use crate::args::BoxError;
use arrow_ipc::reader::FileReader;
use std::fs::File;
use std::path::Path;
use tessera_write::{FragmentWriter, RowMajorWriter, Walk, WriteOptions};

/// Writes the Arrow IPC file `input` into the dense array at `array` as
/// one box streamed band by band; `None` when the file's cells are not
/// such a box (or the array is sparse): nothing was written then.
pub fn write(
    array: &tessera::tile::storage::Location,
    options: WriteOptions,
    input: &Path,
) -> Result<Option<(usize, Vec<String>)>, BoxError> {
    let schema = FragmentWriter::try_new(array, options)?.schema().clone();
    if !schema.is_dense() {
        return Ok(None);
    }
    let mut reader = FileReader::try_new(File::open(input)?, None)?;
    let Some(bounds) = corners(&mut reader, &schema)? else {
        return Ok(None);
    };
    let Ok(mut w) = RowMajorWriter::try_new(array, options, &bounds) else {
        return Ok(None);
    };
    reader.set_index(0)?;
    for batch in reader {
        match w.write(&batch?) {
            Ok(Walk::Continued) => {}
            Ok(Walk::Strayed(_)) | Err(_) => return Ok(None),
        }
    }
    let cells = w.cells() as usize;
    Ok(w.finish().ok().map(|names| (cells, names)))
}

/// The box from the first cell of the file to its last, when each of its
/// bounds is in order.
fn corners(
    reader: &mut FileReader<File>,
    schema: &tessera::schema::ArraySchema,
) -> Result<Option<Vec<(i128, i128)>>, BoxError> {
    let n = reader.num_batches();
    let mut at = |i: usize, last: bool| -> Result<Option<Vec<i128>>, BoxError> {
        reader.set_index(i)?;
        let Some(batch) = reader.next().transpose()? else {
            return Ok(None);
        };
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let row = if last { batch.num_rows() - 1 } else { 0 };
        Ok(RowMajorWriter::cell_coordinates(schema, &batch, row))
    };
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
