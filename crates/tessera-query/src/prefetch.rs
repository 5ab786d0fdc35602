//! The fragment metadata a read will need, fetched as one batch before it
//! starts where a request costs a round trip (object stores): the R-trees,
//! tile offsets and tile metadata of every fragment the subarray meets,
//! instead of one section after another, fragment after fragment.

use crate::geometry::mbr_overlap;
use crate::prune::Answered;
use crate::read::Read;
use tessera_cells::Expr;
use tessera_fragment::{Field, FragmentMetadata, Overlap, SectionWants};
use tessera_schema::Value;

/// Fetches ahead the metadata sections of a read of `attrs` (and the
/// fields its condition and the delete commits name), on storage that
/// prefers batches; a no-op elsewhere.
pub(crate) fn fetch_metadata<'a>(read: &Read<'a>, attrs: &[String]) {
    if !read.storage.prefers_batches() {
        return;
    }
    let mut fields = attrs.to_vec();
    if let Some(c) = &read.request.condition {
        c.fields(&mut fields);
    }
    for d in &read.array.delete_conditions {
        Expr::from_stored(&d.condition).fields(&mut fields);
    }
    // The attributes a pruning condition reads tile metadata of.
    let pruned: Option<Vec<String>> = read
        .request
        .condition
        .as_ref()
        .filter(|_| read.request.tuning.prune)
        .map(|c| {
            let mut named = Vec::new();
            c.fields(&mut named);
            named
        });
    let (fields, pruned) = (&fields, pruned.as_deref());
    let deletes = !read.array.delete_conditions.is_empty();
    let wants: Vec<(&FragmentMetadata, SectionWants)> = read
        .array
        .fragments
        .iter()
        .enumerate()
        .filter(|&(fi, frag)| may_read(&read.answered, &read.ranges, fi, frag))
        .map(|(_, frag)| (frag, wants_of(frag, fields, pruned, deletes)))
        .collect();
    FragmentMetadata::fetch_sections(read.storage, &wants);
}

/// Whether a read of `ranges` may touch fragment `fi`: not answered
/// already (`answered`, per fragment), and its non-empty domain meets the
/// ranges.
fn may_read(
    answered: &[Answered],
    ranges: &[Vec<(Value, Value)>],
    fi: usize,
    frag: &FragmentMetadata,
) -> bool {
    if answered.get(fi) == Some(&Answered::Fragment) {
        return false;
    }
    frag.footer
        .non_empty_domain
        .as_ref()
        .is_none_or(|ned| mbr_overlap(ned, ranges, &frag.schema.dimensions) != Overlap::None)
}

/// The sections of `frag` a read of `fields` asks for, with the tile
/// metadata and summary a pruning condition reads (`pruned`: the
/// fields it names), and the processed delete conditions where the array
/// has `deletes`.
fn wants_of(
    frag: &FragmentMetadata,
    fields: &[String],
    pruned: Option<&[String]>,
    deletes: bool,
) -> SectionWants {
    let schema = &frag.schema;
    let sparse = !frag.footer.dense;
    let mut tiles: Vec<Field> = fields
        .iter()
        .filter_map(|name| {
            let a = schema.attributes.iter().position(|a| &a.name == name);
            a.map(Field::Attribute)
        })
        .collect();
    if sparse
        && frag
            .version()
            .has(tessera_fragment::gates::SPLIT_COORDINATES)
    {
        tiles.extend((0..schema.dimensions.len()).map(Field::Dimension));
    } else if sparse {
        tiles.push(Field::Coords);
    }
    if frag.footer.has_timestamps {
        tiles.push(Field::Timestamps);
    }
    if frag.footer.has_delete_meta {
        tiles.extend([Field::DeleteTimestamps, Field::DeleteConditionIndex]);
    }
    let tile_metadata = pruned
        .unwrap_or_default()
        .iter()
        .filter_map(|n| schema.attributes.iter().position(|a| &a.name == n))
        .map(Field::Attribute)
        .collect();
    SectionWants {
        rtree: sparse,
        summary: pruned.is_some(),
        processed_conditions: deletes,
        tiles,
        tile_metadata,
    }
}
