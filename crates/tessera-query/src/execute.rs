//! Where a read goes: [`execute`] sends it to the dense or sparse reader,
//! then applies enumerations (the request's fields were checked as the
//! read was built: `ReadRequest::check`).

use crate::dense::DenseReader;
use crate::prefetch::fetch_metadata;
use crate::read::Read;
use crate::result::ReadResult;
use crate::sparse::SparseReader;
use crate::QueryError;
use std::ops::Range;
use std::path::PathBuf;

/// Runs `read`: sends it to the dense or sparse reader, applies
/// enumerations.
pub(crate) fn execute(read: Read<'_>) -> Result<ReadResult, QueryError> {
    let attrs = read.returned_attributes();
    fetch_metadata(&read, &attrs);
    let mut r = if read.array.schema.is_dense() {
        DenseReader::plan(&read, read.placed_attributes())?.run()?
    } else {
        SparseReader::plan(&read, attrs).run()?
    };
    r.context = Some(read.context.clone());
    if read.request.enumeration_values {
        crate::enumeration::apply(read.storage, read.array, &read.context, r)
    } else {
        Ok(r)
    }
}

/// Byte ranges of files, as a batch asks for them.
type ByteRanges = Vec<(PathBuf, Range<u64>)>;

/// The byte ranges of the tiles `read` fetches, where they are known
/// from metadata before it runs: a dense read's, on storage that prefers
/// batches ([`DenseReader::tile_requests`]); `None` for a sparse read.
pub(crate) fn tile_requests(read: &Read<'_>) -> Result<Option<ByteRanges>, QueryError> {
    if !read.array.schema.is_dense() {
        return Ok(None);
    }
    let reader = DenseReader::plan(read, read.placed_attributes())?;
    reader.tile_requests().map(Some)
}
