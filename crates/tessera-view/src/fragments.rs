//! The fragments section: each fragment's timestamps, cells, bytes and
//! non-empty domain; a timeline, the domains drawn over the plane, and
//! what consolidation would do.

use crate::colour::category;
use crate::html::{bytes, escape, number, time_ms};
use crate::plane::{numeric, Plane};
use std::fmt::Write;
use tessera::fragment::{FragmentMetadata, OpenArray};
use tessera::schema::Value;
use tessera::storage::Storage;

/// One fragment as the page shows it.
#[derive(Debug, Clone)]
pub struct FragmentEntry {
    /// Folder name.
    pub name: String,
    /// `(t1, t2)` in ms; `t1 < t2` for a fragment consolidation wrote.
    pub timestamps: (u64, u64),
    /// Format version.
    pub version: u32,
    /// Dense or sparse.
    pub dense: bool,
    /// Cells written (for dense fragments, the cells of its tiles).
    pub cells: u64,
    /// Bytes of its data files.
    pub bytes: u64,
    /// Its non-empty domain, per dimension.
    pub ned: Option<Vec<(Value, Value)>>,
    /// Consolidated into another fragment, waiting for vacuum: readers
    /// skip it.
    pub replaced: bool,
    /// Its footer is in a consolidated fragment metadata file.
    pub consolidated_metadata: bool,
}

impl FragmentEntry {
    fn from_metadata(f: &FragmentMetadata, array: &OpenArray, replaced: bool) -> FragmentEntry {
        let footer = &f.footer;
        FragmentEntry {
            name: f.name.clone(),
            timestamps: f.timestamp_range(),
            version: f.version().number(),
            dense: footer.dense,
            cells: match footer.dense {
                // A dense fragment's tiles hold more cells than it wrote.
                true => ned_cells(f).unwrap_or_else(|| f.total_cell_num()),
                false => f.total_cell_num(),
            },
            bytes: [
                &footer.file_sizes,
                &footer.file_var_sizes,
                &footer.file_validity_sizes,
            ]
            .iter()
            .flat_map(|v| v.iter())
            .sum(),
            ned: f.non_empty_domain(),
            replaced,
            consolidated_metadata: array.consolidated_metadata.contains(&f.name),
        }
    }

    /// Whether consolidation wrote it (its name spans a time range).
    pub fn consolidated(&self) -> bool {
        self.timestamps.0 < self.timestamps.1
    }

    /// Its non-empty domain on dimension `d` as numbers.
    fn span(&self, d: usize) -> Option<(f64, f64)> {
        let (a, b) = self.ned.as_ref()?.get(d)?;
        Some((numeric(a)?, numeric(b)?))
    }

    fn ned_text(&self, dims: &[String]) -> String {
        match &self.ned {
            None => "empty".into(),
            Some(n) => n
                .iter()
                .zip(dims)
                .map(|(r, d)| format!("{d}: {}..{}", r.0.display(), r.1.display()))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// The cells in a dense fragment's non-empty domain.
fn ned_cells(f: &FragmentMetadata) -> Option<u64> {
    let mut n = 1u64;
    for (lo, hi) in f.non_empty_domain()? {
        n = n.saturating_mul(u64::try_from(hi.as_int()? - lo.as_int()? + 1).ok()?);
    }
    Some(n)
}

/// The fragments of an opened array: the visible ones in write order,
/// then those consolidation replaced that vacuum has not removed.
#[derive(Debug, Clone)]
pub struct Fragments {
    /// The entries.
    pub entries: Vec<FragmentEntry>,
    dims: Vec<String>,
    deletes: usize,
}

impl Fragments {
    /// Gathers the fragments of `array` from their footers (replaced ones
    /// are read too: readers skip them, the page shows them).
    pub fn gather(storage: &dyn Storage, array: &OpenArray) -> Fragments {
        let mut entries: Vec<FragmentEntry> = array
            .fragments
            .iter()
            .map(|f| FragmentEntry::from_metadata(f, array, false))
            .collect();
        let schemas = |n: &str| array.schema_named(n);
        for s in array.skipped.iter().filter(|s| s.reason.contains("vacuum")) {
            let paths = [
                array.path.join("__fragments").join(&s.name),
                array.path.join(&s.name),
            ];
            let loaded = paths
                .iter()
                .find_map(|p| FragmentMetadata::load(storage, p, &schemas, array.key).ok());
            if let Some(f) = loaded {
                entries.push(FragmentEntry::from_metadata(&f, array, true));
            }
        }
        Fragments {
            entries,
            dims: array
                .schema
                .dimensions
                .iter()
                .map(|d| d.name.clone())
                .collect(),
            deletes: array.delete_conditions.len(),
        }
    }

    fn visible(&self) -> impl Iterator<Item = (usize, &FragmentEntry)> {
        self.entries.iter().enumerate().filter(|(_, e)| !e.replaced)
    }

    /// Pairs of visible fragments whose non-empty domains intersect.
    pub fn overlaps(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let v: Vec<(usize, &FragmentEntry)> = self.visible().collect();
        for (k, (i, a)) in v.iter().enumerate() {
            for (j, b) in &v[k + 1..] {
                let (Some(na), Some(nb)) = (&a.ned, &b.ned) else {
                    continue;
                };
                if na.iter().zip(nb).all(|(x, y)| x.0 <= y.1 && y.0 <= x.1) {
                    out.push((*i, *j));
                }
            }
        }
        out
    }

    /// What consolidating the fragments (with the default window) would
    /// do, and what vacuum would remove.
    pub fn consolidation_line(&self) -> String {
        let v: Vec<&FragmentEntry> = self.visible().map(|(_, e)| e).collect();
        let mut line = match v.len() {
            0 => "No fragments: nothing to consolidate.".to_owned(),
            1 => "One fragment: nothing to consolidate.".to_owned(),
            n => {
                let t1 = v.iter().map(|e| e.timestamps.0).min().unwrap_or(0);
                let t2 = v.iter().map(|e| e.timestamps.1).max().unwrap_or(0);
                format!(
                    "Consolidation (tessera consolidate) would merge all {n} fragments, {} cells and {} written from {} to {}, into one fragment __{t1}_{t2}_….",
                    v.iter().map(|e| e.cells).sum::<u64>(),
                    bytes(v.iter().map(|e| e.bytes).sum()),
                    time_ms(t1),
                    time_ms(t2),
                )
            }
        };
        let overlaps = self.overlaps().len();
        if overlaps > 0 {
            let _ = write!(
                line,
                " {overlaps} pair(s) of fragments overlap: reads merge them cell by cell."
            );
        }
        let replaced = self.entries.iter().filter(|e| e.replaced).count();
        if replaced > 0 {
            let _ = write!(
                line,
                " {replaced} fragment(s) replaced by consolidation wait for vacuum (tessera vacuum)."
            );
        }
        if self.deletes > 0 {
            let _ = write!(line, " {} delete or update commit(s) apply.", self.deletes);
        }
        line
    }

    /// The section: the line, the timeline, the domains and the table.
    pub fn section(&self, plane: Option<&Plane>, id: &str) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            r#"<section class="fragments" id="{id}-fragments"><h3>Fragments</h3><p class="consolidation">{}</p>"#,
            escape(&self.consolidation_line())
        );
        if !self.entries.is_empty() {
            o.push_str(&self.timeline());
            if let Some(p) = plane {
                o.push_str(&self.domains(p));
            }
        }
        o.push_str(&self.table());
        o.push_str("</section>");
        o
    }

    fn title(&self, e: &FragmentEntry) -> String {
        let state = match (e.replaced, e.consolidated()) {
            (true, _) => " (replaced: waits for vacuum)",
            (false, true) => " (consolidated)",
            _ => "",
        };
        escape(&format!(
            "{}{state}\nt = {}..{}\n{} cells, {}\n{}",
            e.name,
            e.timestamps.0,
            e.timestamps.1,
            e.cells,
            bytes(e.bytes),
            e.ned_text(&self.dims)
        ))
    }

    /// Style of fragment `i`'s shape: its colour; replaced ones dashed.
    fn style(&self, i: usize) -> String {
        let c = category(i);
        match self.entries[i].replaced {
            true => format!(r#"fill="none" stroke="{c}" stroke-dasharray="4 3""#),
            false => format!(r#"fill="{c}" fill-opacity="0.35" stroke="{c}""#),
        }
    }

    /// Each fragment a lane, a bar from t1 to t2.
    fn timeline(&self) -> String {
        let t1 = self
            .entries
            .iter()
            .map(|e| e.timestamps.0)
            .min()
            .unwrap_or(0);
        let t2 = self
            .entries
            .iter()
            .map(|e| e.timestamps.1)
            .max()
            .unwrap_or(0);
        let span = (t2 - t1).max(1) as f64;
        let (w, lane) = (640.0, 18.0);
        let h = lane * self.entries.len() as f64 + 30.0;
        let mut o = format!(
            r#"<svg class="timeline" width="{}" height="{h}" role="img"><title>Fragments by time written</title>"#,
            w + 20.0
        );
        for (i, e) in self.entries.iter().enumerate() {
            let x = 10.0 + (e.timestamps.0 - t1) as f64 / span * w;
            let bw = ((e.timestamps.1 - e.timestamps.0) as f64 / span * w).max(6.0);
            let y = 4.0 + lane * i as f64;
            let _ = write!(
                o,
                r#"<rect class="fragment-time" data-fragment="{}" data-t1="{}" data-t2="{}" x="{x:.1}" y="{y}" width="{bw:.1}" height="{}" {}><title>{}</title></rect>"#,
                escape(&e.name),
                e.timestamps.0,
                e.timestamps.1,
                lane - 4.0,
                self.style(i),
                self.title(e)
            );
        }
        let base = h - 8.0;
        let _ = write!(
            o,
            r#"<text x="10" y="{base}">{}</text><text x="{}" y="{base}" text-anchor="end">{}</text></svg>"#,
            time_ms(t1),
            w + 10.0,
            time_ms(t2)
        );
        o
    }

    /// The non-empty domains over the plane: rectangles for two
    /// dimensions, a lane per fragment for one.
    fn domains(&self, plane: &Plane) -> String {
        let w = crate::tiles::PLOT_WIDTH;
        let lane = 18.0;
        let h = match &plane.y {
            Some(_) => crate::tiles::plot_height(plane, w),
            None => lane * self.entries.len() as f64,
        };
        let mut o = format!(
            r##"<figure><svg class="domains" width="{}" height="{}" role="img"><title>Non-empty domains</title><rect x="40" y="4" width="{w}" height="{h}" fill="none" stroke="#999"/>"##,
            w + 50.0,
            h + 40.0
        );
        for (i, e) in self.entries.iter().enumerate() {
            let Some((xa, xb)) = e.span(plane.x.dim) else {
                continue;
            };
            let x = 40.0 + plane.x.start(xa) * w;
            let rw = ((plane.x.end(xb) - plane.x.start(xa)) * w).max(1.0);
            let (y, rh, lo, hi) = match &plane.y {
                Some(ya) => {
                    let Some((a, b)) = e.span(ya.dim) else {
                        continue;
                    };
                    let y = 4.0 + ya.start(a) * h;
                    let rh = ((ya.end(b) - ya.start(a)) * h).max(1.0);
                    (
                        y,
                        rh,
                        format!("{},{}", number(a), number(xa)),
                        format!("{},{}", number(b), number(xb)),
                    )
                }
                None => (
                    4.0 + lane * i as f64 + 2.0,
                    lane - 4.0,
                    number(xa),
                    number(xb),
                ),
            };
            let _ = write!(
                o,
                r#"<rect class="fragment-domain" data-fragment="{}" data-lo="{lo}" data-hi="{hi}" x="{x:.2}" y="{y:.2}" width="{rw:.2}" height="{rh:.2}" {}><title>{}</title></rect>"#,
                escape(&e.name),
                self.style(i),
                self.title(e)
            );
        }
        o.push_str(&crate::tiles::axis_labels(plane, w, h));
        let _ = write!(
            o,
            "</svg><figcaption>Non-empty domains over {}; overlapping fragments show through each other, dashed ones are replaced.</figcaption></figure>",
            plane.axes().iter().map(|a| escape(&a.name)).collect::<Vec<_>>().join(" × ")
        );
        o
    }

    fn table(&self) -> String {
        let mut o = String::from(
            "<table class=\"fragment-table\"><tr><th></th><th>fragment</th><th>t1</th><th>t2</th><th>kind</th><th>format</th><th>cells</th><th>size</th><th>non-empty domain</th><th>state</th></tr>",
        );
        for (i, e) in self.entries.iter().enumerate() {
            let mut state = Vec::new();
            if e.replaced {
                state.push("replaced, waits for vacuum");
            } else if e.consolidated() {
                state.push("consolidated");
            }
            if e.consolidated_metadata {
                state.push("metadata consolidated");
            }
            let _ = write!(
                o,
                r#"<tr><td><span class="swatch" style="background:{}"></span></td><td class="name">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                category(i),
                escape(&e.name),
                time_ms(e.timestamps.0),
                time_ms(e.timestamps.1),
                if e.dense { "dense" } else { "sparse" },
                e.version,
                e.cells,
                bytes(e.bytes),
                escape(&e.ned_text(&self.dims)),
                state.join(", ")
            );
        }
        o.push_str("</table>");
        o
    }
}
