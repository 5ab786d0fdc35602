//! Where the pictures are drawn: one or two dimensions of the array, each
//! an [`Axis`] from a low to a high value, mapped onto pixels.

use crate::error::ViewError;
use crate::options::ArrayOptions;
use tessera::fragment::OpenArray;
use tessera::schema::{Dimension, Value};

/// A dimension's value as a number: integers, datetimes and floats;
/// `None` for strings.
pub fn numeric(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Bytes(_) => None,
    }
}

/// One axis of a picture: a dimension and the values drawn along it.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The dimension's index in the schema.
    pub dim: usize,
    /// Its name.
    pub name: String,
    /// The lowest value drawn.
    pub lo: f64,
    /// The highest value drawn.
    pub hi: f64,
    /// Integer coordinates: value `v` covers `[v, v + 1)`.
    pub integer: bool,
}

impl Axis {
    /// The length drawn.
    fn span(&self) -> f64 {
        let s = if self.integer {
            self.hi - self.lo + 1.0
        } else {
            self.hi - self.lo
        };
        if s > 0.0 {
            s
        } else {
            1.0
        }
    }

    /// Where a range's start falls, from 0 to 1 of the axis.
    pub fn start(&self, v: f64) -> f64 {
        ((v - self.lo) / self.span()).clamp(0.0, 1.0)
    }

    /// Where a range ending at `v` (inclusive) ends.
    pub fn end(&self, v: f64) -> f64 {
        let v = if self.integer { v + 1.0 } else { v };
        ((v - self.lo) / self.span()).clamp(0.0, 1.0)
    }

    /// The bin of `v` among `bins` equal bins, if it is on the axis.
    pub fn bin(&self, v: f64, bins: u32) -> Option<u32> {
        if !(v >= self.lo && v <= self.hi) {
            return None;
        }
        let t = (v - self.lo) / self.span();
        Some(((t * bins as f64) as u32).min(bins.saturating_sub(1)))
    }

    /// How many bins to draw the axis in, at most `max`: one a value for
    /// integer axes shorter than that.
    pub fn bins(&self, max: u32) -> u32 {
        if self.integer {
            (self.span().min(max as f64) as u32).max(1)
        } else {
            max.max(1)
        }
    }
}

/// The dimensions drawn: `x` across the page, and for arrays of two or
/// more dimensions `y` down it (the first chosen dimension, as rows of a
/// matrix are).
#[derive(Debug, Clone, PartialEq)]
pub struct Plane {
    /// Across.
    pub x: Axis,
    /// Down, if two dimensions are drawn.
    pub y: Option<Axis>,
}

impl Plane {
    /// The plane of `array`: the dimensions `options.dims` names, else its
    /// first two numeric ones; each drawn over the subarray given for it,
    /// else the current domain (or the schema's) where the data fills a
    /// thousandth of it or more, else the array's non-empty domain. `None` when no dimension
    /// is numeric (string dimensions are listed, not drawn).
    pub fn choose(array: &OpenArray, options: &ArrayOptions) -> Result<Option<Plane>, ViewError> {
        let dims = &array.schema.dimensions;
        let picked: Vec<usize> = match &options.dims {
            Some(names) => names
                .iter()
                .map(|n| {
                    let i = dims.iter().position(|d| &d.name == n).ok_or_else(|| {
                        ViewError::Invalid(format!("the array has no dimension `{n}`"))
                    })?;
                    match dims[i].datatype.is_string() {
                        true => Err(ViewError::Invalid(format!(
                            "dimension `{n}` holds strings: it cannot be drawn"
                        ))),
                        false => Ok(i),
                    }
                })
                .collect::<Result<_, _>>()?,
            None => (0..dims.len())
                .filter(|&i| !dims[i].datatype.is_string())
                .take(2)
                .collect(),
        };
        let ned = array.non_empty_domain();
        let current = array
            .schema
            .current_domain
            .as_ref()
            .and_then(|c| c.ndrectangle.as_ref());
        let axis = |i: usize| {
            let d = &dims[i];
            // The current domain (SOMA's shape) where there is one.
            let domain = match current.and_then(|r| r.get(i)) {
                Some(r) => Some((
                    Value::decode(d.datatype, &r.lo),
                    Value::decode(d.datatype, &r.hi),
                )),
                None => d.domain_values(),
            };
            axis(d, i, domain, ned.as_ref().map(|n| &n[i]), options)
        };
        Ok(match picked[..] {
            [] => None,
            [x] => Some(Plane {
                x: axis(x),
                y: None,
            }),
            [y, x, ..] => Some(Plane {
                x: axis(x),
                y: Some(axis(y)),
            }),
        })
    }

    /// The axes, down first.
    pub fn axes(&self) -> Vec<&Axis> {
        self.y.iter().chain([&self.x]).collect()
    }
}

fn axis(
    d: &Dimension,
    i: usize,
    domain: Option<(Value, Value)>,
    ned: Option<&(Value, Value)>,
    options: &ArrayOptions,
) -> Axis {
    let integer = !d.datatype.is_float();
    let given = options
        .subarray
        .iter()
        .find(|(n, _, _)| *n == d.name)
        .and_then(|(_, a, b)| Some((numeric(a)?, numeric(b)?)));
    let data = ned.and_then(|(a, b)| Some((numeric(a)?, numeric(b)?)));
    let domain = domain.and_then(|(a, b)| Some((numeric(&a)?, numeric(&b)?)));
    let (lo, hi) = match (given, data, domain) {
        (Some(g), _, _) => g,
        (None, Some(n), Some(dm)) if (n.1 - n.0 + 1.0) * 1000.0 >= dm.1 - dm.0 + 1.0 => dm,
        (None, Some(n), _) => n,
        (None, None, Some(dm)) => dm,
        (None, None, None) => (0.0, 0.0),
    };
    Axis {
        dim: i,
        name: d.name.clone(),
        lo,
        hi,
        integer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_axes_give_each_value_a_bin() {
        let a = Axis {
            dim: 0,
            name: "r".into(),
            lo: 1.0,
            hi: 4.0,
            integer: true,
        };
        assert_eq!(a.bins(512), 4);
        assert_eq!(a.bin(1.0, 4), Some(0));
        assert_eq!(a.bin(4.0, 4), Some(3));
        assert_eq!(a.bin(5.0, 4), None);
        assert_eq!(a.start(3.0), 0.5);
        assert_eq!(a.end(4.0), 1.0);
        let wide = Axis { hi: 1000.0, ..a };
        assert_eq!(wide.bins(100), 100);
        assert_eq!(wide.bin(1000.0, 100), Some(99));
    }
}
