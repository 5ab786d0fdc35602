//! The cells section: for a dense array an attribute over a 2-D slice as
//! an image, for a sparse array the density of its cells over the plane.
//! Cells are read through the normal read path in batches of the
//! options' budget and summed into the image's pixels as they come, so
//! memory is the budget and the image, whatever the array's size.

use crate::colour::ColourScale;
use crate::error::ViewError;
use crate::html::{escape, number};
use crate::options::ArrayOptions;
use crate::plane::{numeric, Axis, Plane};
use crate::png::{base64, encode_rgba, Rgba};
use std::fmt::Write;
use tessera::query::{ReadRequest, ReadResult, ReadSession};
use tessera::schema::{CellValNum, Value};
use tessera::tile::{ArrayType, Layout};

/// A picture of cells: per pixel a value (an attribute's mean, or a cell
/// count), drawn on a colour scale.
#[derive(Debug, Clone)]
pub struct CellPicture {
    /// What a pixel's value is.
    pub label: String,
    /// The image, one pixel a bin of the plane's axes (`y` down).
    pub image: Rgba,
    /// The values' scale.
    pub scale: ColourScale,
    /// The axes the image spans, down first.
    pub axes: Vec<Axis>,
    /// Dimensions held at one value (dense slices), with it.
    pub fixed: Vec<(String, i128)>,
    /// Cells read.
    pub cells: u64,
}

/// Sums of values per pixel.
struct Bins {
    width: u32,
    height: u32,
    sum: Vec<f64>,
    count: Vec<u64>,
}

impl Bins {
    fn new(plane: &Plane, max: u32) -> Bins {
        let width = plane.x.bins(max);
        let height = plane.y.as_ref().map_or(1, |y| y.bins(max));
        let n = width as usize * height as usize;
        Bins {
            width,
            height,
            sum: vec![0.0; n],
            count: vec![0; n],
        }
    }

    /// The pixel of a cell at `coords` (schema order), if on the plane.
    fn pixel(&self, plane: &Plane, coords: &[f64]) -> Option<usize> {
        let x = plane.x.bin(coords[plane.x.dim], self.width)?;
        let y = match &plane.y {
            Some(a) => a.bin(coords[a.dim], self.height)?,
            None => 0,
        };
        Some(y as usize * self.width as usize + x as usize)
    }

    /// The image: each pixel's mean (or count) on a scale over their
    /// range; pixels with no cells transparent.
    fn draw(&self, mean: bool) -> (Rgba, ColourScale) {
        let value = |i: usize| match mean {
            true => self.sum[i] / self.count[i] as f64,
            false => self.count[i] as f64,
        };
        let filled = || {
            (0..self.count.len())
                .filter(|&i| self.count[i] > 0)
                .map(value)
        };
        let min = filled().fold(f64::INFINITY, f64::min);
        let max = filled().fold(f64::NEG_INFINITY, f64::max);
        // Counts spanning orders of magnitude are placed by their logarithm.
        let scale = match min.is_finite() {
            true if !mean && max > 100.0 * min => ColourScale {
                min,
                max,
                log: true,
            },
            true => ColourScale::linear(min, max),
            false => ColourScale::linear(0.0, 0.0),
        };
        let mut image = Rgba::new(self.width, self.height);
        for (i, p) in image.pixels.iter_mut().enumerate() {
            if self.count[i] > 0 {
                *p = scale.rgba(value(i));
            }
        }
        (image, scale)
    }
}

/// The coordinates of each cell of a batch, as numbers, schema order.
struct Coordinates<'a> {
    batch: &'a ReadResult,
    datatypes: Vec<tessera::tile::Datatype>,
}

impl Coordinates<'_> {
    fn visit(&self, mut f: impl FnMut(usize, &[f64])) {
        let n = self.datatypes.len();
        let mut c = vec![0.0; n];
        if let Some(grid) = &self.batch.grid {
            let mut cursor = grid.cursor();
            for i in 0..self.batch.cell_count {
                for (x, v) in c.iter_mut().zip(cursor.coordinates()) {
                    *x = *v as f64;
                }
                f(i, &c);
                cursor.advance();
            }
            return;
        }
        for i in 0..self.batch.cell_count {
            for (j, x) in c.iter_mut().enumerate() {
                let v = Value::decode(self.datatypes[j], self.batch.columns[j].value(i));
                *x = numeric(&v).unwrap_or(f64::NAN);
            }
            f(i, &c);
        }
    }
}

/// The picture of the array's cells over `plane`, or why there is
/// nothing to draw.
pub fn picture(
    session: &ReadSession,
    plane: &Plane,
    options: &ArrayOptions,
) -> Result<Result<CellPicture, String>, ViewError> {
    match session.array().schema.array_type {
        ArrayType::Dense => dense_slice(session, plane, options),
        ArrayType::Sparse => Ok(Ok(density(session, plane, options)?)),
    }
}

/// The attribute drawn: the one asked for, else the first numeric one.
fn attribute(session: &ReadSession, options: &ArrayOptions) -> Result<Option<String>, ViewError> {
    let attrs = &session.array().schema.attributes;
    let drawable = |a: &tessera::schema::Attribute| {
        a.cell_val_num == CellValNum::Fixed(1) && !a.datatype.is_string() && !a.datatype.is_blob()
    };
    match &options.attribute {
        Some(name) => {
            let a = attrs.iter().find(|a| &a.name == name).ok_or_else(|| {
                ViewError::Invalid(format!("the array has no attribute `{name}`"))
            })?;
            match drawable(a) {
                true => Ok(Some(name.clone())),
                false => Err(ViewError::Invalid(format!(
                    "attribute `{name}` is not one number a cell: it cannot be drawn"
                ))),
            }
        }
        None => Ok(attrs.iter().find(|a| drawable(a)).map(|a| a.name.clone())),
    }
}

/// A dense array's attribute over the plane, the other dimensions held at
/// the low end of their subarray (or non-empty domain). Only written
/// cells count: those in some fragment's non-empty domain, and not null.
fn dense_slice(
    session: &ReadSession,
    plane: &Plane,
    options: &ArrayOptions,
) -> Result<Result<CellPicture, String>, ViewError> {
    let array = session.array();
    let Some(attr) = attribute(session, options)? else {
        return Ok(Err(
            "No attribute holds one number a cell: nothing to draw.".into(),
        ));
    };
    let Some(ned) = array.non_empty_domain() else {
        return Ok(Err("No cells written.".into()));
    };
    let dims = &array.schema.dimensions;
    let mut ranges = Vec::new();
    let mut fixed = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        let (Some(lo), Some(hi)) = (ned[i].0.as_int(), ned[i].1.as_int()) else {
            return Ok(Err(format!("dimension `{}` is not an integer", d.name)));
        };
        let given = options.subarray.iter().find(|(n, _, _)| *n == d.name);
        let given = given.and_then(|(_, a, b)| Some((a.as_int()?, b.as_int()?)));
        let on_plane = plane.axes().iter().find(|a| a.dim == i).copied();
        let (a, b) = match (on_plane, given) {
            (Some(ax), _) => ((ax.lo as i128).max(lo), (ax.hi as i128).min(hi)),
            (None, Some((a, _))) => (a, a),
            (None, None) => (lo, lo),
        };
        if a > b {
            return Ok(Err(format!(
                "no cells written in the slice on `{}`",
                d.name
            )));
        }
        if on_plane.is_none() {
            fixed.push((d.name.clone(), a));
        }
        ranges.push((d.name.clone(), Value::Int(a), Value::Int(b)));
    }
    let written: Vec<Vec<(i128, i128)>> = array
        .fragments
        .iter()
        .filter_map(|f| {
            let ned = f.non_empty_domain()?;
            ned.iter()
                .map(|(a, b)| Some((a.as_int()?, b.as_int()?)))
                .collect()
        })
        .collect();
    let request = ReadRequest::new()
        .attributes([attr.clone()])
        .with_ranges(ranges)
        .layout(Layout::RowMajor)
        .coordinate_grid(true)
        .budget(options.budget);
    let mut bins = Bins::new(plane, options.max_pixels);
    let datatype = array.schema.attribute(&attr).map(|a| a.datatype);
    let mut cells = 0;
    for batch in session.batches(&request)? {
        let batch = batch?;
        let col = batch
            .columns
            .iter()
            .find(|c| c.name == attr)
            .ok_or_else(|| ViewError::Invalid(format!("the read returned no `{attr}`")))?;
        let coords = Coordinates {
            batch: &batch,
            datatypes: dims.iter().map(|d| d.datatype).collect(),
        };
        coords.visit(|i, c| {
            cells += 1;
            let is_written = written.iter().any(|w| {
                w.iter()
                    .zip(c)
                    .all(|(r, &v)| v >= r.0 as f64 && v <= r.1 as f64)
            });
            if !is_written || !col.is_valid(i) {
                return;
            }
            let Some(v) = datatype.and_then(|t| numeric(&Value::decode(t, col.value(i)))) else {
                return;
            };
            if let (Some(p), false) = (bins.pixel(plane, c), v.is_nan()) {
                bins.sum[p] += v;
                bins.count[p] += 1;
            }
        });
    }
    let (image, scale) = bins.draw(true);
    Ok(Ok(CellPicture {
        label: match bins_per_pixel(plane, &bins) {
            true => format!("mean of {attr} a pixel"),
            false => attr,
        },
        image,
        scale,
        axes: plane.axes().into_iter().cloned().collect(),
        fixed,
        cells,
    }))
}

fn bins_per_pixel(plane: &Plane, bins: &Bins) -> bool {
    let wide = |a: &Axis, n: u32| !a.integer || a.hi - a.lo + 1.0 > n as f64;
    wide(&plane.x, bins.width) || plane.y.as_ref().is_some_and(|y| wide(y, bins.height))
}

/// A sparse array's cells counted per pixel of the plane (within the
/// subarray, if one is given).
fn density(
    session: &ReadSession,
    plane: &Plane,
    options: &ArrayOptions,
) -> Result<CellPicture, ViewError> {
    let dims = &session.array().schema.dimensions;
    let request = ReadRequest::new()
        .attributes(Vec::<String>::new())
        .with_ranges(options.subarray.clone())
        .budget(options.budget);
    let mut bins = Bins::new(plane, options.max_pixels);
    let mut cells = 0;
    for batch in session.batches(&request)? {
        let batch = batch?;
        let coords = Coordinates {
            batch: &batch,
            datatypes: dims.iter().map(|d| d.datatype).collect(),
        };
        coords.visit(|_, c| {
            cells += 1;
            if let Some(p) = bins.pixel(plane, c) {
                bins.count[p] += 1;
            }
        });
    }
    let (image, scale) = bins.draw(false);
    Ok(CellPicture {
        label: "cells a pixel".into(),
        image,
        scale,
        axes: plane.axes().into_iter().cloned().collect(),
        fixed: Vec::new(),
        cells,
    })
}

/// The section: the image at a readable size, its legend and caption.
pub fn section(picture: &Result<CellPicture, String>, id: &str) -> String {
    let mut o = format!(r#"<section class="cells" id="{id}-cells"><h3>Cells</h3>"#);
    let p = match picture {
        Ok(p) => p,
        Err(why) => {
            let _ = write!(o, "<p>{}</p></section>", escape(why));
            return o;
        }
    };
    let (w, h) = (p.image.width, p.image.height);
    // Small images are scaled up whole pixels at a time to about 480 px.
    let zoom = (480 / w.max(h).max(1)).max(1);
    let axis_attrs: String = ["y", "x"]
        .iter()
        .skip(2 - p.axes.len())
        .zip(&p.axes)
        .map(|(k, a)| {
            format!(
                r#" data-{k}-dim="{}" data-{k}-lo="{}" data-{k}-hi="{}""#,
                escape(&a.name),
                a.lo,
                a.hi
            )
        })
        .collect();
    let _ = write!(
        o,
        r#"<figure><img class="cell-image" alt="{}" src="data:image/png;base64,{}" width="{}" height="{}" data-min="{}" data-max="{}" data-log="{}"{axis_attrs}>"#,
        escape(&p.label),
        base64(&encode_rgba(&p.image)),
        w * zoom,
        (h * zoom).max(if h == 1 { 40 } else { 0 }),
        p.scale.min,
        p.scale.max,
        p.scale.log,
    );
    o.push_str(&p.scale.legend(&p.label));
    let place: Vec<String> = p
        .axes
        .iter()
        .map(|a| format!("{} {}..{}", a.name, number(a.lo), number(a.hi)))
        .collect();
    let fixed: Vec<String> = p.fixed.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    let _ = write!(
        o,
        "<figcaption>{}: {} ({}×{} pixels{}); {} cells read; empty pixels are clear.</figcaption></figure></section>",
        escape(&p.label),
        escape(&place.join(", ")),
        w,
        h,
        match fixed.is_empty() {
            true => String::new(),
            false => format!(", at {}", escape(&fixed.join(", "))),
        },
        p.cells
    );
    o
}
