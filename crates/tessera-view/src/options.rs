//! What a page draws: the options given, and as they apply to one array.

use crate::error::ViewError;
use tessera::schema::{ArraySchema, Value};

/// What the page draws, and with how much memory.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// The attribute drawn for dense arrays; default the first numeric one.
    pub attribute: Option<String>,
    /// Ranges the pictures are drawn over, as `(dimension, low, high)` in
    /// text (`Value::parse` reads them by the dimension's type); the dense
    /// slice's other dimensions are held at their range's low end.
    pub subarray: Vec<(String, String, String)>,
    /// The dimensions drawn (one or two, the first down the page);
    /// default the first two that are not strings.
    pub dims: Option<Vec<String>>,
    /// Bytes a batch of cells may take while the cell picture is read.
    pub budget: u64,
    /// The cell image's largest side, in pixels.
    pub max_pixels: u32,
    /// The most tiles drawn one by one; beyond, tiles are summed into bins.
    pub max_tile_marks: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            attribute: None,
            subarray: Vec::new(),
            dims: None,
            budget: 64 << 20,
            max_pixels: 400,
            max_tile_marks: 4096,
        }
    }
}

impl ViewOptions {
    /// The options as they apply to an array of `schema`. A name the
    /// array lacks is an error where `strict` (a page of that array), and
    /// left out otherwise (members of a group that lack it).
    pub fn resolve(&self, schema: &ArraySchema, strict: bool) -> Result<ArrayOptions, ViewError> {
        let missing =
            |what: &str, n: &str| ViewError::Invalid(format!("the array has no {what} `{n}`"));
        let mut subarray = Vec::new();
        for (name, lo, hi) in &self.subarray {
            let Some(d) = schema.dimension(name) else {
                match strict {
                    true => return Err(missing("dimension", name)),
                    false => continue,
                }
            };
            let parse = |t: &str| {
                Value::parse(t, d.datatype)
                    .map_err(|e| ViewError::Invalid(format!("subarray on `{name}`: {e}")))
            };
            subarray.push((name.clone(), parse(lo)?, parse(hi)?));
        }
        let attribute = match &self.attribute {
            Some(a) if schema.attribute(a).is_none() => match strict {
                true => return Err(missing("attribute", a)),
                false => None,
            },
            a => a.clone(),
        };
        let dims = match &self.dims {
            Some(ds) if ds.iter().any(|d| schema.dimension(d).is_none()) => {
                let d = ds.iter().find(|d| schema.dimension(d).is_none());
                match strict {
                    true => return Err(missing("dimension", d.map_or("", |d| d))),
                    false => None,
                }
            }
            d => d.clone(),
        };
        Ok(ArrayOptions {
            attribute,
            subarray,
            dims,
            budget: self.budget,
            max_pixels: self.max_pixels,
            max_tile_marks: self.max_tile_marks,
        })
    }
}

/// [`ViewOptions`] as they apply to one array: its subarray's bounds as
/// values of its dimensions' types.
#[derive(Debug, Clone)]
pub struct ArrayOptions {
    /// The attribute drawn (dense arrays).
    pub attribute: Option<String>,
    /// The ranges drawn over.
    pub subarray: Vec<(String, Value, Value)>,
    /// The dimensions drawn.
    pub dims: Option<Vec<String>>,
    /// Bytes a batch of cells may take.
    pub budget: u64,
    /// The cell image's largest side.
    pub max_pixels: u32,
    /// The most tiles drawn one by one.
    pub max_tile_marks: usize,
}
