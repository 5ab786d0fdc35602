//! The schema section: dimensions, attributes and enumerations as tables.

use crate::html::escape;
use std::fmt::Write;
use tessera::schema::describe::{cell_val_num_text, enumeration_value, pipeline_text};
use tessera::schema::{ArraySchema, CellValNum, Enumeration, Value};

/// The schema as tables.
pub fn section(s: &ArraySchema, enums: &[Enumeration], id: &str) -> String {
    let mut o = format!(r#"<section class="schema" id="{id}-schema"><h3>Schema</h3>"#);
    let _ = write!(
        o,
        "<p>{} array, format version {}; tile order {}, cell order {}, capacity {}{}.</p>",
        s.array_type,
        s.version,
        s.tile_order,
        s.cell_order,
        s.capacity,
        if s.allows_dups {
            ", duplicates allowed"
        } else {
            ""
        }
    );
    o.push_str("<table class=\"dimensions\"><tr><th>dimension</th><th>type</th><th>domain</th><th>tile extent</th><th>filters</th></tr>");
    for d in &s.dimensions {
        let dom = d.domain_values().map_or("none".into(), |(a, b)| {
            format!("[{}, {}]", a.display(), b.display())
        });
        let ext = d.tile_extent_value().map_or("none".into(), |v| v.display());
        let _ = write!(
            o,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&d.name),
            d.datatype,
            escape(&dom),
            escape(&ext),
            escape(&pipeline_text(&d.filters))
        );
    }
    o.push_str("</table>");
    if let Some(r) = s
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref())
    {
        let parts: Vec<String> = r
            .iter()
            .zip(&s.dimensions)
            .map(|(r, d)| {
                let (a, b) = (
                    Value::decode(d.datatype, &r.lo),
                    Value::decode(d.datatype, &r.hi),
                );
                format!("{}: [{}, {}]", d.name, a.display(), b.display())
            })
            .collect();
        let _ = write!(o, "<p>Current domain: {}.</p>", escape(&parts.join(", ")));
    }
    o.push_str("<table class=\"attributes\"><tr><th>attribute</th><th>type</th><th>values a cell</th><th>nullable</th><th>fill value</th><th>enumeration</th><th>filters</th></tr>");
    for a in &s.attributes {
        let fill = match a.cell_val_num {
            CellValNum::Fixed(1) => Value::decode(a.datatype, &a.fill_value).display(),
            _ if a.datatype.is_string() => format!("{:?}", String::from_utf8_lossy(&a.fill_value)),
            _ => format!("{:02x?}", a.fill_value),
        };
        let _ = write!(
            o,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&a.name),
            a.datatype,
            cell_val_num_text(a.cell_val_num),
            if a.nullable { "yes" } else { "no" },
            escape(&fill),
            escape(a.enumeration.as_deref().unwrap_or("")),
            escape(&pipeline_text(&a.filters))
        );
    }
    o.push_str("</table>");
    let _ = write!(
        o,
        "<p class=\"pipelines\">Coordinates: {}; offsets: {}; validity: {}.</p>",
        escape(&pipeline_text(&s.coords_filters)),
        escape(&pipeline_text(&s.offsets_filters)),
        escape(&pipeline_text(&s.validity_filters))
    );
    if !enums.is_empty() {
        o.push_str("<table class=\"enumerations\"><tr><th>enumeration</th><th>type</th><th>ordered</th><th>values</th></tr>");
        for e in enums {
            const SHOWN: usize = 20;
            let mut vals: Vec<String> = e
                .values
                .iter()
                .take(SHOWN)
                .map(|v| enumeration_value(e, v).to_string())
                .collect();
            if e.values.len() > SHOWN {
                vals.push(format!("… ({} in all)", e.values.len()));
            }
            let _ = write!(
                o,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&e.name),
                e.datatype,
                if e.ordered { "yes" } else { "no" },
                escape(&vals.join(", "))
            );
        }
        o.push_str("</table>");
    }
    o.push_str("</section>");
    o
}
