//! Where a read goes: [`execute`] sends it to the dense or sparse reader,
//! then applies enumerations (the request's fields were checked as the
//! read was built: `ReadRequest::check`).

use crate::dense::DenseReader;
use crate::prefetch::{fetch_metadata, returned_attributes};
use crate::read::Read;
use crate::result::ReadResult;
use crate::sparse::SparseReader;
use crate::QueryError;

/// Runs `read`: sends it to the dense or sparse reader, applies
/// enumerations.
pub(crate) fn execute(read: Read<'_>) -> Result<ReadResult, QueryError> {
    let schema = read.array.schema.clone();
    let attrs = returned_attributes(&read);
    fetch_metadata(&read, &attrs);
    let layout = read.resolved_layout();
    let mut r = if schema.is_dense() {
        DenseReader::new(&read).run(&schema, &attrs, layout)?
    } else {
        SparseReader::new(&read).run(&schema, &attrs, layout)?
    };
    r.context = Some(read.context.clone());
    if read.enumeration_values {
        crate::enumeration::apply(read.storage, read.array, &read.context, r)
    } else {
        Ok(r)
    }
}
