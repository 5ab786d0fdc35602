//! A page: an array's sections (schema, fragments, tiles, cells), and
//! the HTML document or fragment around them.

use crate::error::ViewError;
use crate::options::{ArrayOptions, ViewOptions};
use crate::{cells, fragments, html, plane, schema, tiles};
use tessera::query::ReadSession;

/// A rendered page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// What it shows (the array's or group's path).
    pub title: String,
    /// Its sections.
    pub body: String,
}

const STYLE: &str = "
.tessera-view{font:14px/1.4 system-ui,sans-serif;color:#222;max-width:1100px}
.tessera-view h2{font-size:20px;border-bottom:1px solid #ccc;margin-top:28px}
.tessera-view h3{font-size:16px;margin:18px 0 6px}
.tessera-view table{border-collapse:collapse;margin:6px 0;font-size:13px}
.tessera-view th,.tessera-view td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
.tessera-view th{background:#f2f2f2}
.tessera-view td.name{font-family:ui-monospace,monospace}
.tessera-view svg{display:block;margin:6px 0;font-size:11px}
.tessera-view svg .axis{font-weight:600}
.tessera-view img.cell-image{image-rendering:pixelated;border:1px solid #999;background:repeating-conic-gradient(#eee 0 25%,#fff 0 50%) 0 0/16px 16px}
.tessera-view figure{margin:8px 0}
.tessera-view figcaption{color:#555;font-size:12px}
.tessera-view .swatch{display:inline-block;width:12px;height:12px;border-radius:2px}
.tessera-view ul.members{font-family:ui-monospace,monospace;font-size:13px}
.tessera-view p.consolidation{background:#f7f7e8;padding:4px 8px;border-left:3px solid #cc9}
";

impl Page {
    /// The page as an HTML fragment with its style (what a notebook shows).
    pub fn fragment(&self) -> String {
        format!(
            "<div class=\"tessera-view\"><style>{STYLE}</style>{}</div>",
            self.body
        )
    }

    /// The page as a whole HTML document.
    pub fn document(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head><body>{}</body></html>\n",
            html::escape(&self.title),
            self.fragment()
        )
    }
}

/// The sections of one array: schema, fragments, tiles, cells. `id`
/// prefixes the sections' element ids.
pub fn array_sections(
    session: &ReadSession,
    heading: &str,
    id: &str,
    options: &ArrayOptions,
) -> Result<String, ViewError> {
    let array = session.array();
    let storage = &**session.storage();
    let enums = array.enumerations(storage)?;
    let plane = plane::Plane::choose(array, options)?;
    let mut o = format!(
        r#"<section class="array" id="{id}"><h2>{}</h2>"#,
        html::escape(heading)
    );
    o.push_str(&schema::section(&array.schema, enums, id));
    o.push_str(&fragments::Fragments::gather(storage, array).section(plane.as_ref(), id));
    match &plane {
        Some(p) => {
            let grid = tiles::gather(storage, array, p, options.max_tile_marks)?;
            o.push_str(&tiles::section(&grid, p, id));
            o.push_str(&cells::section(&cells::picture(session, p, options)?, id));
        }
        None => {
            o.push_str("<p>Every dimension holds strings: the tables above say what there is.</p>")
        }
    }
    o.push_str("</section>");
    Ok(o)
}

/// The page of an opened array.
pub fn array_page(session: &ReadSession, options: &ViewOptions) -> Result<Page, ViewError> {
    let title = session.array().path.display().to_string();
    let options = options.resolve(&session.array().schema, true)?;
    Ok(Page {
        body: array_sections(session, &title, "array", &options)?,
        title,
    })
}
