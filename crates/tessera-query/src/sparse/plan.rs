//! Whether a sparse read takes a fast path (nothing deduplicated or
//! sorted), and what it decodes there.

use crate::request::ReadRequest;
use tessera_fragment::{Field, FragmentMetadata, OpenArray};
use tessera_tile::Layout;

/// What a read on a fast path decodes.
pub(crate) struct DirectPlan {
    /// The result's fields, in column order.
    pub(crate) wanted: Vec<Field>,
    /// Per fragment, its own fields for `wanted` (its files are numbered
    /// by the schema it was written with).
    pub(crate) own: Vec<Vec<Field>>,
    /// The fields the condition names besides dimensions.
    pub(crate) cond_fields: Vec<String>,
}

/// What the read decodes on a fast path; `None` where it needs the
/// general path: results not in stored order, fragments with
/// timestamps, deletes or (for coordinates) zipped coordinates, a
/// condition naming a field some fragment lacks (fill values stand in
/// there), or a wanted field some fragment lacks.
pub(crate) fn direct_plan(
    request: &ReadRequest,
    array: &OpenArray,
    attrs: &[String],
    layout: Layout,
) -> Option<DirectPlan> {
    let (schema, frags) = (&*array.schema, &array.fragments);
    let returned = request.returned_dimensions(schema);
    let in_stored_order = match layout {
        Layout::Unordered => frags.len() <= 1 || schema.allows_dups,
        Layout::GlobalOrder => frags.len() <= 1 && schema.cell_order != Layout::Hilbert,
        _ => false,
    };
    let plain = |f: &FragmentMetadata| {
        !f.footer.dense
            && !f.footer.has_timestamps
            && !f.footer.has_delete_meta
            && (returned.is_empty() || f.version().has(crate::gates::COORDINATES_PER_DIMENSION))
    };
    // A condition is a filter on each cell alone here (nothing to
    // deduplicate), tested while cells are picked.
    let mut cond_fields = request.tested_fields();
    cond_fields.retain(|n| schema.dimensions.iter().all(|d| &d.name != n));
    let has_cond_fields =
        |f: &FragmentMetadata| cond_fields.iter().all(|n| f.schema.attribute(n).is_some());
    if !request.tuning.direct
        || !in_stored_order
        || !array.delete_conditions.is_empty()
        || !frags.iter().all(|f| plain(f) && has_cond_fields(f))
        || cond_fields.iter().any(|n| schema.attribute(n).is_none())
    {
        return None;
    }
    let mut wanted: Vec<Field> = Vec::new();
    wanted.extend(returned.into_iter().map(Field::Dimension));
    for a in attrs {
        // An attribute the schema lacks is the general path's to refuse.
        let i = schema.attributes.iter().position(|x| &x.name == a)?;
        wanted.push(Field::Attribute(i));
    }
    let own = frags
        .iter()
        .map(|f| wanted.iter().map(|&w| f.own_field(schema, w)).collect())
        .collect::<Option<Vec<Vec<Field>>>>()?;
    Some(DirectPlan {
        wanted,
        own,
        cond_fields,
    })
}
