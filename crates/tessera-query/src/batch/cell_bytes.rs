//! What a cell of a read costs in memory, from the schema and the
//! fragments' tile sizes: its bytes in the result and in the tiles decoded
//! for it (the per-cell estimate pieces are cut by).

use crate::read::Read;
use crate::QueryError;
use tessera_fragment::Field;

/// Result bytes per cell over the fields a read returns: fixed sizes,
/// validity bytes, offsets, and var-sized data averaged from the
/// fragments' tile var sizes (the largest average of any fragment);
/// and the bytes of tiles decoded: those of the fields returned, less
/// those a dense read places straight from their files (as the array
/// schema stores them), and those of the attributes only a sparse read's
/// condition tests.
pub(super) fn cell_bytes<'a>(read: &Read<'a>) -> Result<(f64, f64), QueryError> {
    let schema = &read.array.schema;
    let dense = schema.is_dense();
    // A dense read places the attributes its condition tests too.
    let names = match dense {
        true => read.placed_attributes(),
        false => read.returned_attributes(),
    };
    let attribute = |n: &String| schema.attributes.iter().position(|a| &a.name == n);
    let mut fields: Vec<Field> = (names.iter().filter_map(attribute))
        .map(Field::Attribute)
        .collect();
    // A sparse read decodes the attributes its condition tests, and
    // returns them only if asked.
    let tested_only: Vec<Field> = match dense {
        true => Vec::new(),
        false => (read.request.tested_fields().iter())
            .filter(|n| !names.contains(n))
            .filter_map(attribute)
            .map(Field::Attribute)
            .collect(),
    };
    // Dense coordinates are computed, not decoded, and take no result
    // memory where a grid describes them; those only the condition tests
    // are computed too, and held until it has run.
    if !dense {
        fields.extend((0..schema.dimensions.len()).map(Field::Dimension));
    } else if !read.describes_coordinates() {
        let computed = read.request.returned_or_tested_dimensions(schema);
        fields.extend(computed.into_iter().map(Field::Dimension));
    }
    let in_place = read.places_unfiltered();
    let mut total = 0.0;
    let mut decoded = 0.0;
    let returned = fields.len();
    for (i, f) in fields.into_iter().chain(tested_only).enumerate() {
        let (result, tile) = per_cell_bytes(read, f, dense, &in_place)?;
        total += if i < returned { result } else { 0.0 };
        decoded += tile;
    }
    Ok((total.max(1.0), decoded))
}

/// One field's bytes a cell in a result and in the tiles a read decodes
/// (see [`cell_bytes`]).
fn per_cell_bytes(
    read: &Read<'_>,
    f: Field,
    dense: bool,
    in_place: &impl Fn(usize) -> bool,
) -> Result<(f64, f64), QueryError> {
    let schema = &read.array.schema;
    let (var, fixed, nullable) = match f {
        Field::Attribute(i) => {
            let a = &schema.attributes[i];
            (a.is_var(), a.cell_size(), a.nullable)
        }
        Field::Dimension(j) => {
            let d = &schema.dimensions[j];
            (d.is_var(), d.coord_size(), false)
        }
        _ => unreachable!("only attributes and dimensions"),
    };
    let validity = nullable as u8 as f64;
    if !var {
        let computed = dense && matches!(f, Field::Dimension(_));
        let decoded = !computed && !matches!(f, Field::Attribute(i) if in_place(i));
        let tile = if decoded { fixed as f64 } else { 0.0 };
        return Ok((validity + fixed as f64, validity + tile));
    }
    let mut avg: f64 = 8.0;
    for frag in &read.array.fragments {
        let own = frag.own_field(schema, f);
        let Some(idx) = own.and_then(|f| frag.field_index(f)) else {
            continue;
        };
        let cells = frag.total_cell_num();
        if cells == 0 {
            continue;
        }
        let sizes = frag.tile_var_sizes(read.storage, idx)?;
        avg = avg.max(sizes.iter().sum::<u64>() as f64 / cells as f64);
    }
    Ok((validity + 8.0 + avg, validity + 8.0 + avg))
}
