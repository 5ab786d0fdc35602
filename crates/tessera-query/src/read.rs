//! One read as the readers run it: a request resolved against an opened
//! array. The readers (`dense/`, `sparse/`) sit above it; `execute::execute`
//! (in `execute.rs`, above them) sends a read to one of them.

use crate::context::ReadContext;
use crate::geometry::dense_grid;
use crate::prune::Answered;
use crate::request::ReadRequest;
use crate::result::{field_column, ReadResult};
use std::sync::Arc;
use tessera_filters::pipeline::FilterPipeline;
use tessera_fragment::{Field, OpenArray};
use tessera_schema::Value;
use tessera_storage::Storage;

use tessera_tile::Layout;

/// One read of an opened array as the readers run it: the request, its
/// ranges resolved to the array's dimensions (those of the piece a batch
/// reads), the storage and array borrowed from the session, and the
/// buffers the read reuses. The readers (`dense/`, `sparse/`) take it;
/// `execute::execute` sends it to one of them.
#[derive(Clone)]
pub(crate) struct Read<'a> {
    pub(crate) storage: &'a dyn Storage,
    pub(crate) array: &'a OpenArray,
    /// What the read returns and how it runs, checked against the array
    /// ([`ReadRequest::check`]); its ranges are `ranges`.
    pub(crate) request: &'a ReadRequest,
    /// The ranges read, per dimension (none: the whole dimension).
    pub(crate) ranges: Vec<Vec<(Value, Value)>>,
    /// Per fragment, what aggregates answered from metadata (left unread).
    pub(crate) answered: Arc<Vec<Answered>>,
    /// The buffers this read reuses.
    pub(crate) context: Arc<ReadContext>,
}

impl<'a> Read<'a> {
    /// `request` of `array`, its ranges put on the array's dimensions
    /// (the request was checked: [`ReadRequest::check`]).
    pub(crate) fn resolve(
        storage: &'a dyn Storage,
        array: &'a OpenArray,
        request: &'a ReadRequest,
        context: Arc<ReadContext>,
    ) -> Self {
        let dims = &array.schema.dimensions;
        let mut ranges = vec![Vec::new(); dims.len()];
        for (dim, lo, hi) in &request.ranges {
            if let Some(j) = dims.iter().position(|d| &d.name == dim) {
                ranges[j].push((lo.clone(), hi.clone()));
            }
        }
        Read {
            storage,
            array,
            request,
            ranges,
            answered: Arc::default(),
            context,
        }
    }

    /// The attributes the read returns: those asked for, or every one.
    pub(crate) fn returned_attributes(&self) -> Vec<String> {
        match &self.request.attributes {
            Some(a) => a.clone(),
            None => (self.array.schema.attributes.iter())
                .map(|a| a.name.clone())
                .collect(),
        }
    }

    /// The attributes a dense read places: those it returns, then those
    /// only its condition tests (placed to be tested, dropped after).
    pub(crate) fn placed_attributes(&self) -> Vec<String> {
        let mut attrs = self.returned_attributes();
        for name in self.request.tested_fields() {
            if self.array.schema.attribute(&name).is_some() && !attrs.contains(&name) {
                attrs.push(name);
            }
        }
        attrs
    }

    /// The read's result when it reads no cell: its columns (the
    /// dimensions where they are returned, then the attributes returned,
    /// in that order), each empty.
    pub(crate) fn no_cells(&self) -> ReadResult {
        let schema = &self.array.schema;
        let dims = (self.request.returned_dimensions(schema).into_iter()).map(Field::Dimension);
        let attrs = self.returned_attributes().into_iter().filter_map(|n| {
            let i = schema.attributes.iter().position(|a| a.name == n)?;
            Some(Field::Attribute(i))
        });
        ReadResult {
            columns: (dims.chain(attrs))
                .map(|f| field_column(&self.context, schema, f))
                .collect(),
            ..ReadResult::default()
        }
    }

    /// The layout asked for, or the default: row-major for dense, unordered for sparse.
    pub(crate) fn resolved_layout(&self) -> Layout {
        self.request
            .layout
            .unwrap_or(if self.array.schema.is_dense() {
                Layout::RowMajor
            } else {
                Layout::Unordered
            })
    }

    /// Whether a dense read of this query describes its coordinates by a
    /// grid instead of building them ([`ReadRequest::coordinate_grid`]).
    pub(crate) fn describes_coordinates(&self) -> bool {
        self.request.coordinate_grid
            && self.request.dimensions.is_none()
            && self.request.condition.is_none()
            && matches!(self.resolved_layout(), Layout::RowMajor | Layout::ColMajor)
    }

    /// Whether a dense read places a field stored with `filters` (nullable,
    /// var-sized as said, in tiles of `tile_bytes` cells' bytes) straight
    /// from its files ([`Tuning::direct_tile_bytes`](crate::tuning::Tuning)): fixed-sized, no
    /// validity, no filter, no encryption, tiles large enough, reads in
    /// place on, and storage that does not batch (on an object store each
    /// scatter read would be a request of its own, one after another; there
    /// such tiles are fetched in batches with the rest). Rows of cells must
    /// also be runs in tile and result alike, which the caller knows.
    pub(crate) fn reads_in_place(
        &self,
        filters: &FilterPipeline,
        nullable: bool,
        var: bool,
        tile_bytes: u64,
    ) -> bool {
        self.request.tuning.direct
            && !self.storage.prefers_batches()
            && self.array.key.is_none()
            && filters.filters.is_empty()
            && !nullable
            && !var
            && tile_bytes >= self.request.tuning.direct_tile_bytes
    }

    /// Which attributes (by index in the array schema) a dense read of this
    /// query places straight from their files, as the array schema stores
    /// them ([`Tuning::direct_tile_bytes`](crate::tuning::Tuning)); fragments written with other
    /// schemas may differ, so this serves estimates.
    pub(crate) fn places_unfiltered(&self) -> impl Fn(usize) -> bool + '_ {
        let schema = &self.array.schema;
        let layout = self.resolved_layout();
        let nd = schema.dimensions.len();
        let cells_per_tile = (0..nd)
            .map(|j| dense_grid(schema, j).map_or(0, |g| g.ext as u64))
            .fold(1u64, u64::saturating_mul);
        let selected = |a: &&tessera_schema::Attribute| {
            self.request
                .attributes
                .as_ref()
                .is_none_or(|names| names.contains(&a.name))
        };
        // Rows of boxes are runs in tile and result alike (see `dense`).
        let runs = schema.is_dense()
            && matches!(layout, Layout::RowMajor | Layout::ColMajor)
            && (nd == 1 || layout == schema.cell_order)
            && !schema
                .attributes
                .iter()
                .filter(selected)
                .any(|a| a.is_var());
        move |i| {
            schema.attributes.get(i).is_some_and(|a| {
                runs && self.reads_in_place(
                    &a.filters,
                    a.nullable,
                    a.is_var(),
                    cells_per_tile.saturating_mul(a.cell_size()),
                )
            })
        }
    }
}
