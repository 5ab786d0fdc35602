//! Where a read goes: `Read::execute` checks the fields it names and
//! sends it to the dense or sparse reader, then applies enumerations.

use crate::read::Read;
use crate::result::ReadResult;
use crate::QueryError;

impl<'a> Read<'a> {
    /// Runs the read.
    pub(crate) fn execute(self) -> Result<ReadResult, QueryError> {
        let schema = self.array.schema.clone();
        if let Some(name) = self.unknown_dimensions.first() {
            return Err(QueryError::UnknownField {
                kind: "dimension",
                name: name.clone(),
            });
        }
        let attrs = self.returned_attributes();
        for a in &attrs {
            if schema.attribute(a).is_none() {
                return Err(QueryError::UnknownField {
                    kind: "attribute",
                    name: a.clone(),
                });
            }
        }
        self.fetch_metadata(&attrs);
        let layout = self.resolved_layout();
        let mut r = if schema.is_dense() {
            self.dense(&schema, &attrs, layout)?
        } else {
            self.sparse(&schema, &attrs, layout)?
        };
        r.context = Some(self.context.clone());
        if self.enumeration_values {
            crate::enumeration::apply(self.storage, self.array, &self.context, r)
        } else {
            Ok(r)
        }
    }
}
