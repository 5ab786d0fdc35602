//! The tile grid: each data tile of the visible fragments placed over the
//! plane (dense fragments' space tiles, sparse fragments' MBRs), shaded by
//! its bytes on disk.

use crate::colour::ColourScale;
use crate::error::ViewError;
use crate::html::{bytes, escape, number};
use crate::plane::{numeric, Plane};
use std::collections::BTreeMap;
use std::fmt::Write;
use tessera::fragment::metadata::FileKind;
use tessera::fragment::{Field, FragmentMetadata, OpenArray, SectionWants};
use tessera::schema::Value;
use tessera::storage::Storage;
use tessera::tile::Layout;

/// The plots' width in pixels.
pub const PLOT_WIDTH: f64 = 480.0;

/// A 2-D plot's height for `width`: the axes' proportions, within reason.
pub fn plot_height(plane: &Plane, width: f64) -> f64 {
    match &plane.y {
        None => 40.0,
        Some(y) => {
            let ratio = (y.hi - y.lo + 1.0) / (plane.x.hi - plane.x.lo + 1.0);
            (width * ratio).clamp(120.0, 360.0)
        }
    }
}

/// The axes' names and ends, for a plot at (40, 4) of `w` by `h`.
pub fn axis_labels(plane: &Plane, w: f64, h: f64) -> String {
    let x = &plane.x;
    let mut o = format!(
        r#"<text x="40" y="{}">{}</text><text x="{}" y="{}" text-anchor="end">{}</text><text x="{}" y="{}" text-anchor="middle" class="axis">{} →</text>"#,
        h + 18.0,
        number(x.lo),
        40.0 + w,
        h + 18.0,
        number(x.hi),
        40.0 + w / 2.0,
        h + 34.0,
        escape(&x.name)
    );
    if let Some(y) = &plane.y {
        let _ = write!(
            o,
            r#"<text x="36" y="14" text-anchor="end">{}</text><text x="36" y="{h}" text-anchor="end">{}</text><text x="36" y="{}" text-anchor="end" class="axis">{} ↓</text>"#,
            number(y.lo),
            number(y.hi),
            h / 2.0,
            escape(&y.name)
        );
    }
    o
}

/// A tile's place and weight: per drawn axis its value range, its cells
/// and bytes (summed where fragments share a space tile).
#[derive(Debug, Clone, PartialEq)]
pub struct TileMark {
    /// Value ranges on the plane's axes, down first (as [`Plane::axes`]).
    pub ranges: Vec<(f64, f64)>,
    /// Cells.
    pub cells: u64,
    /// Bytes on disk, every field.
    pub bytes: u64,
    /// Tiles summed into this mark.
    pub tiles: u64,
}

/// The tile grid of the visible fragments over `plane`: at most
/// `max_marks` marks; beyond that, tiles are summed into bins (as they
/// come, so memory stays at the marks whatever the number of tiles).
pub fn gather(
    storage: &dyn Storage,
    array: &OpenArray,
    plane: &Plane,
    max_marks: usize,
) -> Result<TileGrid, ViewError> {
    let mut grid = TileGrid {
        marks: BTreeMap::new(),
        binned: false,
        max_marks,
        next: 0,
    };
    let axes = plane.axes();
    prefetch(storage, array);
    for f in &array.fragments {
        let sizes = tile_bytes(storage, f)?;
        if f.footer.dense {
            let Some(tiling) = DenseTiling::of(f) else {
                continue;
            };
            // The tiles the offsets hold: a count the footer's non-empty
            // domain implies is no bound (a corrupt one could imply any).
            for t in 0..sizes.len() as u64 {
                let ranges = tiling.tile(t);
                let ranges: Vec<(f64, f64)> = axes.iter().map(|a| ranges[a.dim]).collect();
                let (cells, bytes) = (f.cell_num(t), sizes.get(t as usize).copied().unwrap_or(0));
                grid.add(plane, ranges, cells, bytes, true);
            }
        } else {
            let rtree = f.rtree(storage)?;
            let dims = &f.schema.dimensions;
            for (t, mbr) in rtree.leaves().iter().enumerate() {
                let ranges: Option<Vec<(f64, f64)>> = axes
                    .iter()
                    .map(|a| {
                        let (r, d) = (mbr.get(a.dim)?, dims.get(a.dim)?);
                        let lo = numeric(&Value::decode(d.datatype, &r.lo))?;
                        Some((lo, numeric(&Value::decode(d.datatype, &r.hi))?))
                    })
                    .collect();
                if let Some(ranges) = ranges {
                    let bytes = sizes.get(t).copied().unwrap_or(0);
                    grid.add(plane, ranges, f.cell_num(t as u64), bytes, false);
                }
            }
        }
    }
    Ok(grid)
}

/// Where a mark is kept: a dense space tile by its place (fragments
/// sharing it add up), a sparse tile by its arrival, a bin by its index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum MarkKey {
    Space(Vec<(i64, i64)>),
    Tile(u64),
    Bin(Vec<u32>),
}

/// The marks of the tile grid.
#[derive(Debug, Clone)]
pub struct TileGrid {
    marks: BTreeMap<MarkKey, TileMark>,
    /// Whether tiles were summed into bins.
    pub binned: bool,
    max_marks: usize,
    next: u64,
}

impl TileGrid {
    /// The marks.
    pub fn marks(&self) -> impl Iterator<Item = &TileMark> {
        self.marks.values()
    }

    fn add(&mut self, plane: &Plane, ranges: Vec<(f64, f64)>, cells: u64, bytes: u64, space: bool) {
        let key = match (self.binned, space) {
            (true, _) => MarkKey::Bin(match bin_of(plane, &ranges) {
                Some(k) => k,
                None => return,
            }),
            (false, true) => {
                MarkKey::Space(ranges.iter().map(|r| (r.0 as i64, r.1 as i64)).collect())
            }
            (false, false) => {
                self.next += 1;
                MarkKey::Tile(self.next)
            }
        };
        let ranges = match &key {
            MarkKey::Bin(k) => bin_ranges(plane, k),
            _ => ranges,
        };
        let m = self.marks.entry(key).or_insert(TileMark {
            ranges,
            cells: 0,
            bytes: 0,
            tiles: 0,
        });
        m.cells += cells;
        m.bytes += bytes;
        m.tiles += 1;
        if !self.binned && self.marks.len() > self.max_marks {
            self.binned = true;
            for (_, m) in std::mem::take(&mut self.marks) {
                let Some(k) = bin_of(plane, &m.ranges) else {
                    continue;
                };
                let ranges = bin_ranges(plane, &k);
                let e = self.marks.entry(MarkKey::Bin(k)).or_insert(TileMark {
                    ranges,
                    cells: 0,
                    bytes: 0,
                    tiles: 0,
                });
                e.cells += m.cells;
                e.bytes += m.bytes;
                e.tiles += m.tiles;
            }
        }
    }
}

/// Bins an axis when tiles are summed.
const BINS: u32 = 64;

/// The bin of a mark's centre.
fn bin_of(plane: &Plane, ranges: &[(f64, f64)]) -> Option<Vec<u32>> {
    plane
        .axes()
        .iter()
        .zip(ranges)
        .map(|(a, r)| a.bin(((r.0 + r.1) / 2.0).clamp(a.lo, a.hi), a.bins(BINS)))
        .collect()
}

/// A bin's value ranges.
fn bin_ranges(plane: &Plane, key: &[u32]) -> Vec<(f64, f64)> {
    plane
        .axes()
        .iter()
        .zip(key)
        .map(|(a, &k)| {
            let n = a.bins(BINS) as f64;
            let w = (a.hi - a.lo + f64::from(a.integer)) / n;
            let lo = a.lo + w * k as f64;
            (lo, lo + w - f64::from(a.integer))
        })
        .collect()
}

/// On object stores, every fragment's R-tree and tile offsets in one batch
/// of requests in flight together, rather than one after another.
fn prefetch(storage: &dyn Storage, array: &OpenArray) {
    let wants: Vec<(&FragmentMetadata, SectionWants)> = array
        .fragments
        .iter()
        .map(|f| {
            let s = &f.schema;
            let fields = (0..s.attributes.len())
                .map(Field::Attribute)
                .chain((0..s.dimensions.len()).map(Field::Dimension))
                .chain([
                    Field::Coords,
                    Field::Timestamps,
                    Field::DeleteTimestamps,
                    Field::DeleteConditionIndex,
                ])
                .filter(|&x| f.field_index(x).is_some())
                .collect();
            let want = SectionWants {
                rtree: !f.footer.dense,
                tiles: fields,
                ..SectionWants::default()
            };
            (f, want)
        })
        .collect();
    FragmentMetadata::fetch_sections(storage, &wants);
}

/// Each tile's bytes over every field's files (fixed, var, validity).
fn tile_bytes(storage: &dyn Storage, f: &FragmentMetadata) -> Result<Vec<u64>, ViewError> {
    // As many tiles as the file holds offsets for (parsed against the
    // bytes present), however many the non-empty domain implies.
    let n = match f.footer.file_sizes.is_empty() {
        true => 0,
        false => f.tile_offsets(storage, 0, FileKind::Fixed)?.len(),
    };
    let n = n.min(usize::try_from(f.tile_count()).unwrap_or(usize::MAX));
    let mut sizes = vec![0u64; n];
    let footer = &f.footer;
    for field in 0..footer.file_sizes.len() {
        let kinds = [
            (FileKind::Fixed, true),
            (
                FileKind::Var,
                footer.file_var_sizes.get(field).is_some_and(|&s| s > 0),
            ),
            (
                FileKind::Validity,
                footer
                    .file_validity_sizes
                    .get(field)
                    .is_some_and(|&s| s > 0),
            ),
        ];
        for (kind, present) in kinds {
            if !present {
                continue;
            }
            let offsets = f.tile_offsets(storage, field, kind)?;
            let end = f.file_size(field, kind);
            for (t, s) in sizes.iter_mut().enumerate() {
                let (Some(&a), b) = (offsets.get(t), offsets.get(t + 1).copied().unwrap_or(end))
                else {
                    break;
                };
                *s += b.saturating_sub(a);
            }
        }
    }
    Ok(sizes)
}

/// A dense fragment's space tiles, in its tile order.
struct DenseTiling {
    /// Per dimension: the domain's start, the tile extent, the fragment's
    /// first tile and its number of tiles.
    grid: Vec<(i128, i128, i128, i128)>,
    /// Dimensions from the slowest varying to the fastest.
    order: Vec<usize>,
}

impl DenseTiling {
    fn of(f: &FragmentMetadata) -> Option<DenseTiling> {
        let dims = &f.schema.dimensions;
        let ned = f.footer.non_empty_domain.as_ref()?;
        let mut grid = Vec::new();
        for (d, r) in dims.iter().zip(ned) {
            let (lo, _) = d.domain_values()?;
            let (lo, ext) = (lo.as_int()?, d.tile_extent_value()?.as_int()?.max(1));
            let a = Value::decode(d.datatype, &r.lo).as_int()?;
            let b = Value::decode(d.datatype, &r.hi).as_int()?;
            grid.push((lo, ext, (a - lo) / ext, (b - lo) / ext - (a - lo) / ext + 1));
        }
        let order = match f.schema.tile_order {
            Layout::ColMajor => (0..dims.len()).rev().collect(),
            _ => (0..dims.len()).collect(),
        };
        Some(DenseTiling { grid, order })
    }

    /// Tile `t`'s value range per dimension.
    fn tile(&self, t: u64) -> Vec<(f64, f64)> {
        let mut rest = t as i128;
        let mut out = vec![(0.0, 0.0); self.grid.len()];
        for &j in self.order.iter().rev() {
            let (lo, ext, first, count) = self.grid[j];
            let k = rest % count.max(1);
            rest /= count.max(1);
            let start = lo + (first + k) * ext;
            out[j] = (start as f64, (start + ext - 1) as f64);
        }
        out
    }
}

/// The section: the marks drawn over the plane, shaded by bytes.
pub fn section(grid: &TileGrid, plane: &Plane, id: &str) -> String {
    let marks: Vec<&TileMark> = grid.marks().collect();
    let w = PLOT_WIDTH;
    let h = plot_height(plane, w);
    let max = marks.iter().map(|m| m.bytes).max().unwrap_or(0);
    let min = marks.iter().map(|m| m.bytes).min().unwrap_or(0);
    let scale = ColourScale::linear(min as f64, max as f64);
    let mut o = format!(
        r##"<section class="tiles" id="{id}-tiles"><h3>Tiles</h3><figure><svg class="tile-grid" width="{}" height="{}" role="img"><title>Tiles by bytes on disk</title><rect x="40" y="4" width="{w}" height="{h}" fill="#f4f4f4" stroke="#999"/>"##,
        w + 50.0,
        h + 40.0
    );
    for m in &marks {
        let (x, y) = match &plane.y {
            Some(ya) => (&m.ranges[1], Some((ya, &m.ranges[0]))),
            None => (&m.ranges[0], None),
        };
        let rx = 40.0 + plane.x.start(x.0) * w;
        let rw = ((plane.x.end(x.1) - plane.x.start(x.0)) * w).max(1.0);
        let (ry, rh) = match y {
            Some((ya, r)) => (
                4.0 + ya.start(r.0) * h,
                ((ya.end(r.1) - ya.start(r.0)) * h).max(1.0),
            ),
            None => (4.0, h),
        };
        let place: Vec<String> = plane
            .axes()
            .iter()
            .zip(&m.ranges)
            .map(|(a, r)| format!("{}: {}..{}", a.name, number(r.0), number(r.1)))
            .collect();
        let _ = write!(
            o,
            r##"<rect class="tile" data-cells="{}" data-bytes="{}" x="{rx:.2}" y="{ry:.2}" width="{rw:.2}" height="{rh:.2}" fill="{}" fill-opacity="0.85" stroke="#fff" stroke-width="0.5"><title>{}: {} cells, {}{}</title></rect>"##,
            m.cells,
            m.bytes,
            scale.css(m.bytes as f64),
            escape(&place.join(", ")),
            m.cells,
            bytes(m.bytes),
            if m.tiles > 1 {
                format!(" in {} tiles", m.tiles)
            } else {
                String::new()
            }
        );
    }
    o.push_str(&axis_labels(plane, w, h));
    o.push_str("</svg>");
    o.push_str(&scale.legend("bytes a tile on disk"));
    let _ = write!(
        o,
        "<figcaption>{} tile marks{}; dense tiles on the same place of the plane (several fragments', or along dimensions not drawn) add up.</figcaption></figure></section>",
        marks.len(),
        if grid.binned { ", tiles summed into bins" } else { "" }
    );
    o
}
