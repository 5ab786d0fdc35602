//! The sparse fast paths: when nothing is deduplicated or sorted, whole
//! tiles decode straight into their place in the result ([`whole`]), or
//! the cells a subarray or condition picks are kept ([`picked`]). This
//! file sends a read to one of them ([`plan`](super::plan) decides whether
//! it may take them).
//!
//! [`whole`]: super::whole
//! [`picked`]: super::picked

use crate::read::Read;
use crate::result::ReadResult;
use crate::QueryError;
use tessera_fragment::FragmentMetadata;
use tessera_schema::ArraySchema;
use tessera_tile::Layout;

impl<'a> Read<'a> {
    /// The sparse fast path. When every cell of every tile the read touches
    /// is returned, in stored order, with nothing to deduplicate or sort,
    /// each tile decodes straight into its place in the result
    /// ([`Read::sparse_whole`]). Where the subarray cuts tiles or a
    /// condition filters cells, the cells are picked
    /// ([`Read::sparse_picked`]): the condition is a test of each cell
    /// alone here, as nothing is deduplicated. `None` when the read needs
    /// the general path.
    pub(crate) fn sparse_direct(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        layout: Layout,
    ) -> Result<Option<ReadResult>, QueryError> {
        let Some(plan) = self.direct_plan(schema, attrs, layout) else {
            return Ok(None);
        };
        let frags = &self.array.fragments;
        let mut hits: Vec<(usize, u64, bool)> = Vec::new();
        for (fi, frag) in frags.iter().enumerate() {
            // No cell shadows another here.
            let prune = self.condition.as_ref().filter(|_| self.tuning.prune);
            let mine = self.pruned_hits(fi, frag, prune.map(|c| (c, None)))?;
            // With a condition, every tile's cells are picked.
            let cond = self.condition.is_some();
            hits.extend(mine.into_iter().map(|(t, full)| (fi, t, full && !cond)));
        }
        if hits.iter().all(|h| h.2) {
            return self.sparse_whole(schema, &hits, &plan).map(Some);
        }
        // Picking cells needs the coordinates as separate tiles.
        let split = |f: &FragmentMetadata| f.version().has(crate::gates::COORDINATES_PER_DIMENSION);
        match frags.iter().all(split) {
            true => self.sparse_picked(schema, &hits, &plan).map(Some),
            false => Ok(None),
        }
    }
}
