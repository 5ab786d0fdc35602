//! Pruning by condition: which fragments and tiles of a sparse read can hold
//! a cell satisfying the query condition, judged from the fragment summary
//! and the tile mins, maxes and null counts libtiledb writes (format 11 and
//! later), before any tile is read.

use crate::decode::FieldSpec;
use crate::QueryError;
use std::sync::Arc;
use tessera_cells::{Bounds, Expr};
use tessera_fragment::tile_metadata::{trusted, TileBounds};
use tessera_fragment::{Field, FragmentMetadata};
use tessera_schema::Value;
use tessera_schema::{ArraySchema, CellValNum};
use tessera_storage::Storage;
use tessera_tile::Datatype;

/// The metadata of one condition field in one fragment.
struct FieldMeta {
    name: String,
    datatype: Datatype,
    nullable: bool,
    var: bool,
    mins: Arc<TileBounds>,
    maxes: Arc<TileBounds>,
    nulls: Arc<Vec<u64>>,
    /// A float field's tile sums, which show the tiles holding no NaN
    /// ([`no_nan`]); empty for other fields.
    sums: Arc<Vec<u64>>,
}

impl FieldMeta {
    /// Whether the bounds of tile `i` describe its values: always, but
    /// for a float tile that may hold a NaN.
    fn bounds_hold(&self, i: usize) -> bool {
        !is_float(self.datatype) || no_nan(self.sums.get(i).copied())
    }
}

/// Whether `t` is a float type.
fn is_float(t: Datatype) -> bool {
    matches!(t.physical(), tessera_tile::datatype::Physical::Float(_))
}

/// Whether a float tile (or fragment) whose stored sum is `sum` holds no
/// NaN among its non-null values. libtiledb's min and max pass over a NaN
/// only where no number follows it: in `1, NaN, 600` the NaN makes the
/// running min NaN and 600 then replaces it, so the min says 600 and the
/// 1 is lost. Its sum adds every value (a NaN makes it NaN) unless it
/// stops at a bound, pinned at `f64::MAX` or `f64::MIN` (an infinity
/// pins it too). A sum neither NaN nor pinned shows every value was
/// added and none was NaN; a sum not kept shows nothing.
fn no_nan(sum: Option<u64>) -> bool {
    sum.map(f64::from_bits)
        .is_some_and(|s| s.is_finite() && s.abs() != f64::MAX)
}

/// The condition fields' metadata in one fragment, loaded once.
pub(crate) struct FragmentPruner<'f> {
    frag: &'f FragmentMetadata,
    fields: Vec<FieldMeta>,
}

/// A field of `frag` whose tile and fragment metadata [`trusted`] allows
/// using, as its spec; `None` for fields the fragment lacks (schema
/// evolution) or whose metadata cannot be relied on (that, or filters
/// that change the values read back).
pub(crate) fn trusted_field(
    frag: &FragmentMetadata,
    schema: &ArraySchema,
    name: &str,
) -> Option<FieldSpec> {
    let spec = FieldSpec::named(frag, schema, name)?;
    let string_fixed = !spec.cell_val_num.is_var() && is_string(spec.datatype);
    let trusted = trusted(
        frag.version(),
        frag.footer.dense,
        spec.nullable,
        string_fixed,
    );
    (trusted && !lossy(&spec)).then_some(spec)
}

/// Whether `t` is one of the string types whose metadata bounds order bytewise.
pub(crate) fn is_string(t: Datatype) -> bool {
    matches!(
        t,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    )
}

/// A condition field of `frag` whose metadata can judge the condition:
/// single numbers and var-sized strings, whose bounds order as their cells
/// do. Gives (field, datatype, nullable, var-sized).
fn usable_field(
    frag: &FragmentMetadata,
    schema: &ArraySchema,
    name: &str,
) -> Option<(Field, Datatype, bool, bool)> {
    let spec = trusted_field(frag, schema, name)?;
    let n = spec.cell_val_num;
    let ordered = n == CellValNum::Fixed(1) || (n.is_var() && is_string(spec.datatype));
    ordered.then_some((spec.field, spec.datatype, spec.nullable, n.is_var()))
}

/// Whether a field's filters change its values (float scaling, WebP): its
/// metadata describes the values written, not the ones read back.
fn lossy(spec: &FieldSpec) -> bool {
    use tessera_filters::FilterKind;
    (spec.filters.filters.iter()).any(|f| {
        matches!(
            f.kind,
            FilterKind::ScaleFloat { .. } | FilterKind::Webp { .. }
        )
    })
}

/// A field's null count as [`Bounds::nulls`]: known zero when not
/// nullable; libtiledb writes 0 for var-sized nullable fields, so only
/// fixed-sized ones' counts are taken.
fn nulls(nullable: bool, var: bool, count: Option<u64>, cells: u64) -> Option<(u64, u64)> {
    match (nullable, var) {
        (false, _) => Some((0, cells)),
        (true, false) => count.map(|n| (n, cells)),
        (true, true) => None,
    }
}

impl<'f> FragmentPruner<'f> {
    /// Loads what `cond` needs from `frag`; fields the fragment lacks
    /// (schema evolution) or keeps no usable metadata for are left unknown.
    pub fn new(
        storage: &dyn Storage,
        frag: &'f FragmentMetadata,
        schema: &ArraySchema,
        cond: &Expr,
    ) -> Result<Self, QueryError> {
        let mut names = Vec::new();
        cond.fields(&mut names);
        let mut fields = Vec::new();
        for name in names {
            let Some((field, datatype, nullable, var)) = usable_field(frag, schema, &name) else {
                continue;
            };
            fields.push(FieldMeta {
                name,
                datatype,
                nullable,
                var,
                mins: frag.tile_mins(storage, field)?,
                maxes: frag.tile_maxes(storage, field)?,
                nulls: if nullable && !var {
                    frag.tile_null_counts(storage, field)?
                } else {
                    Arc::default()
                },
                sums: if is_float(datatype) {
                    frag.tile_sums(storage, field)?
                } else {
                    Arc::default()
                },
            });
        }
        Ok(FragmentPruner { frag, fields })
    }

    /// The pruner with only single-number fields' metadata kept (others
    /// left unknown): libtiledb's mins and maxes of strings in dense
    /// fragments do not bound the cells read back.
    pub fn numbers_only(mut self) -> Self {
        self.fields.retain(|f| !f.var && !is_string(f.datatype));
        self
    }

    /// Whether tile `t` may hold a cell satisfying `cond`.
    pub fn tile_may_match(&self, cond: &Expr, t: u64) -> bool {
        let cells = self.frag.cell_num(t);
        cond.may_match(&|name| {
            let f = self.fields.iter().find(|f| f.name == name)?;
            let i = t as usize;
            let nulls = nulls(f.nullable, f.var, f.nulls.get(i).copied(), cells);
            let min_max = match (f.mins.get(i), f.maxes.get(i)) {
                _ if !f.bounds_hold(i) => None,
                (Some(lo), Some(hi)) => {
                    Some((Value::decode(f.datatype, lo), Value::decode(f.datatype, hi)))
                }
                _ => None,
            };
            Some((f.datatype, Bounds { min_max, nulls }))
        })
    }
}

/// Whether fragment `frag` may hold a cell satisfying `cond`, from its
/// fragment-level summary (format 12 and later) alone: no tile metadata read.
pub(crate) fn fragment_may_match(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    schema: &ArraySchema,
    cond: &Expr,
) -> Result<bool, QueryError> {
    if frag.footer.fragment_summary_offset.is_none() {
        return Ok(true);
    }
    let summary = frag.fragment_summary(storage)?;
    let cells = frag.total_cell_num();
    Ok(cond.may_match(&|name| {
        let (field, datatype, nullable, var) = usable_field(frag, schema, name)?;
        let sum = summary.get(frag.field_index(field)?)?;
        // An empty min is a bound not kept. A float fragment's bounds are
        // merged from its tiles', which a NaN may have spoilt, and its sum
        // from theirs, which may hide a pinned one: the tiles' own
        // sums judge them.
        let min_max = (!is_float(datatype) && !sum.min.is_empty()).then(|| {
            (
                Value::decode(datatype, &sum.min),
                Value::decode(datatype, &sum.max),
            )
        });
        let nulls = nulls(nullable, var, Some(sum.null_count), cells);
        Some((datatype, Bounds { min_max, nulls }))
    }))
}

/// Ranges per dimension, as queries hold them.
type Ranges = Vec<Vec<(Value, Value)>>;

/// Where cells can hide no other cell, so leaving them unread changes
/// nothing else: conditions apply after deduplication, so a cell failing
/// one still hides older cells at its coordinates, and aggregates taken
/// from metadata must not count cells a newer write hides. That holds
/// everywhere when the array allows duplicates, and otherwise for cells of
/// a fragment without per-cell timestamps (whose consolidated history may
/// repeat coordinates) lying where no other fragment's non-empty domain
/// reaches.
pub(crate) struct Shadows {
    dups: bool,
    /// Every fragment's non-empty domain, as one range per dimension.
    domains: Vec<Option<Ranges>>,
    dims: Vec<tessera_schema::Dimension>,
}

impl Shadows {
    pub fn new(array: &tessera_fragment::OpenArray) -> Self {
        let dims = array.schema.dimensions.clone();
        let domains = array
            .fragments
            .iter()
            .map(|f| {
                f.footer.non_empty_domain.as_ref().map(|ned| {
                    ned.iter()
                        .zip(&dims)
                        .map(|(r, d)| {
                            vec![(
                                Value::decode(d.datatype, &r.lo),
                                Value::decode(d.datatype, &r.hi),
                            )]
                        })
                        .collect()
                })
            })
            .collect();
        Shadows {
            dups: array.schema.allows_dups,
            domains,
            dims,
        }
    }

    /// Whether cells of fragment `fi` inside `mbr` (the whole fragment
    /// when `None`) can hide no other cell.
    pub fn none_in(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
        mbr: Option<&[tessera_schema::Range1D]>,
    ) -> bool {
        if self.dups {
            return true;
        }
        if frag.footer.has_timestamps {
            return false;
        }
        let Some(area) = mbr.or(frag.footer.non_empty_domain.as_deref()) else {
            return true; // no cells
        };
        self.domains.iter().enumerate().all(|(gi, other)| {
            gi == fi
                || other.as_ref().is_none_or(|o| {
                    crate::geometry::mbr_overlap(area, o, &self.dims)
                        == tessera_fragment::Overlap::None
                })
        })
    }
}

/// Which of a fragment's tiles metadata answered (an aggregate reads
/// only the rest): the read skips them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answered {
    /// None: read it as usual.
    Nothing,
    /// The whole fragment (or it holds no selected cell).
    Fragment,
    /// These tiles (sorted).
    Tiles(Vec<u64>),
}
