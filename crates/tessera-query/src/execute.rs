//! Where a read goes: [`execute`] checks the fields it names and
//! sends it to the dense or sparse reader, then applies enumerations.

use crate::dense::DenseReader;
use crate::prefetch::{fetch_metadata, returned_attributes};
use crate::read::Read;
use crate::result::ReadResult;
use crate::sparse::SparseReader;
use crate::QueryError;

/// Runs `read`: checks the fields it names, sends it to the dense or
/// sparse reader, applies enumerations.
pub(crate) fn execute(read: Read<'_>) -> Result<ReadResult, QueryError> {
    let schema = read.array.schema.clone();
    if let Some(name) = read.unknown_dimensions.first() {
        return Err(QueryError::UnknownField {
            kind: "dimension",
            name: name.clone(),
        });
    }
    let attrs = returned_attributes(&read);
    for a in &attrs {
        if schema.attribute(a).is_none() {
            return Err(QueryError::UnknownField {
                kind: "attribute",
                name: a.clone(),
            });
        }
    }
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
