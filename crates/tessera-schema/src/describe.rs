//! A stable, human-readable text form of a schema.

use crate::schema::{ArraySchema, CellValNum};
use crate::value::Value;
use std::fmt::Write;
use tessera_filters::{FilterKind, FilterPipeline};

/// A filter pipeline as text: `[zstd(level=3), ...] chunk=65536`.
pub fn pipeline_text(p: &FilterPipeline) -> String {
    let items: Vec<String> = p
        .filters
        .iter()
        .map(|f| {
            let name = f.filter_type().name();
            match &f.kind {
                FilterKind::Gzip { level }
                | FilterKind::Zstd { level }
                | FilterKind::Lz4 { level }
                | FilterKind::Bzip2 { level } => {
                    format!("{name}(level={level})")
                }
                FilterKind::BitWidthReduction { max_window }
                | FilterKind::PositiveDelta { max_window } => {
                    format!("{name}(window={max_window})")
                }
                FilterKind::ScaleFloat {
                    scale,
                    offset,
                    byte_width,
                } => format!("{name}(scale={scale:?}, offset={offset:?}, byte_width={byte_width})"),
                FilterKind::Delta { reinterpret, .. }
                | FilterKind::DoubleDelta { reinterpret, .. } => match reinterpret {
                    Some(t) => format!("{name}(reinterpret={t})"),
                    None => name.to_string(),
                },
                _ => name.to_string(),
            }
        })
        .collect();
    format!("[{}] chunk={}", items.join(", "), p.max_chunk_size)
}

/// Values per cell as text: a count, or `var`.
pub fn cell_val_num_text(c: CellValNum) -> String {
    match c {
        CellValNum::Var => "var".into(),
        CellValNum::Fixed(n) => n.to_string(),
    }
}

/// The schema as indented text, one field per line.
pub fn describe(s: &ArraySchema) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "ArraySchema {} (format version {})", s.name, s.version);
    let _ = writeln!(o, "  array type: {}", s.array_type);
    let _ = writeln!(
        o,
        "  tile order: {}, cell order: {}, capacity: {}, allows dups: {}",
        s.tile_order, s.cell_order, s.capacity, s.allows_dups
    );
    let _ = writeln!(o, "  coords filters: {}", pipeline_text(&s.coords_filters));
    let _ = writeln!(
        o,
        "  offsets filters: {}",
        pipeline_text(&s.offsets_filters)
    );
    let _ = writeln!(
        o,
        "  validity filters: {}",
        pipeline_text(&s.validity_filters)
    );
    let _ = writeln!(o, "  dimensions:");
    for d in &s.dimensions {
        let dom = d.domain_values().map_or("none".into(), |(a, b)| {
            format!("[{}, {}]", a.display(), b.display())
        });
        let ext = d.tile_extent_value().map_or("none".into(), |v| v.display());
        let _ = writeln!(
            o,
            "    {} {} x{} domain={} tile={} filters={}",
            d.name,
            d.datatype,
            cell_val_num_text(d.cell_val_num),
            dom,
            ext,
            pipeline_text(&d.filters)
        );
    }
    let _ = writeln!(o, "  attributes:");
    for a in &s.attributes {
        let fill = match a.cell_val_num {
            CellValNum::Fixed(1) => Value::decode(a.datatype, &a.fill_value).display(),
            _ => format!("{:02x?}", a.fill_value),
        };
        let _ = write!(
            o,
            "    {} {} x{} nullable={} fill={} filters={}",
            a.name,
            a.datatype,
            cell_val_num_text(a.cell_val_num),
            a.nullable,
            fill,
            pipeline_text(&a.filters)
        );
        if let Some(e) = &a.enumeration {
            let _ = write!(o, " enumeration={e}");
        }
        o.push('\n');
    }
    for l in &s.dimension_labels {
        let _ = writeln!(
            o,
            "  dimension label {} on dimension {}: {} x{} at {}",
            l.name,
            l.dimension,
            l.datatype,
            cell_val_num_text(l.cell_val_num),
            l.uri
        );
    }
    for e in &s.enumerations {
        let _ = writeln!(o, "  enumeration {} in {}", e.name, e.path);
    }
    if let Some(cd) = &s.current_domain {
        match &cd.ndrectangle {
            None => {
                let _ = writeln!(o, "  current domain: empty");
            }
            Some(r) => {
                let parts: Vec<String> = r
                    .iter()
                    .zip(&s.dimensions)
                    .map(|(r, d)| {
                        format!(
                            "{}=[{}, {}]",
                            d.name,
                            Value::decode(d.datatype, &r.lo).display(),
                            Value::decode(d.datatype, &r.hi).display()
                        )
                    })
                    .collect();
                let _ = writeln!(o, "  current domain: {}", parts.join(", "));
            }
        }
    }
    o
}

/// The values of enumerations, one line each.
pub fn describe_enumerations(enums: &[crate::Enumeration]) -> String {
    let mut o = String::new();
    for e in enums {
        let vals: Vec<String> = e
            .values
            .iter()
            .map(|v| enumeration_value(e, v).to_string())
            .collect();
        let _ = writeln!(
            o,
            "  enumeration {} ({}, {}): [{}]",
            e.name,
            e.datatype,
            if e.ordered { "ordered" } else { "unordered" },
            vals.join(", ")
        );
    }
    o
}

/// One enumeration value as JSON (strings as text, numbers decoded).
pub fn enumeration_value(e: &crate::Enumeration, v: &[u8]) -> serde_json::Value {
    crate::value::scalar_or_list(crate::value::values_to_json(e.datatype, v))
}
