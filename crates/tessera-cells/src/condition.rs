//! Conditions on cells: query conditions given by users (`--where`) and the
//! delete conditions stored in the array.

use crate::grammar::Ast;
use crate::CellError;
use std::cmp::Ordering;
use tessera_fragment::condition::{CombineOp, CompareOp, Condition};
use tessera_schema::{ArraySchema, Value};
use tessera_tile::{datatype::Physical, Datatype};

mod number;
mod select;
pub use number::NumberTest;
pub use select::FieldCells;

/// Gives a field's datatype, value bytes and validity for the cell being tested.
pub type FieldLookup<'a, 'v> = dyn Fn(&str) -> Option<(Datatype, &'v [u8], bool)> + 'a;

/// What tile or fragment metadata says of one field over some cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// The least and greatest non-null value, when kept. libtiledb's float
    /// bounds are NaN for some tiles holding a NaN (on the fixtures, those
    /// whose last value is NaN): a NaN bound says nothing of the cells.
    pub min_max: Option<(Value, Value)>,
    /// (null cells, all cells), when the null count can be trusted.
    pub nulls: Option<(u64, u64)>,
}

/// Gives a field's datatype and [`Bounds`], or `None` when nothing is known.
pub type BoundsLookup<'a> = dyn Fn(&str) -> Option<(Datatype, Bounds)> + 'a;

/// Compares a cell with a value as libtiledb's conditions do: floats by
/// IEEE rules (NaN is unordered, -0 equals 0), the rest by [`Value`]'s order.
fn ieee_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    ieee_cmp_ref(&ValueRef::of(a), &ValueRef::of(b))
}

/// A [`Value`] that borrows its bytes: decoding a cell allocates nothing.
#[derive(Clone, Copy)]
enum ValueRef<'a> {
    Int(i128),
    Float(f64),
    Bytes(&'a [u8]),
}

impl<'a> ValueRef<'a> {
    fn of(k: &'a Value) -> ValueRef<'a> {
        match k {
            Value::Int(v) => ValueRef::Int(*v),
            Value::Float(v) => ValueRef::Float(*v),
            Value::Bytes(b) => ValueRef::Bytes(b),
        }
    }

    /// Decodes one value: the common widths read straight from the bytes,
    /// as this runs once per cell a condition tests.
    #[inline]
    fn decode_physical(p: Physical, b: &'a [u8]) -> ValueRef<'a> {
        macro_rules! read {
            ($t:ty) => {
                <$t>::from_le_bytes(b.try_into().expect("width checked"))
            };
        }
        match (p, b.len()) {
            (Physical::Int(8), 8) => ValueRef::Int(read!(i64) as i128),
            (Physical::Int(4), 4) => ValueRef::Int(read!(i32) as i128),
            (Physical::UInt(8), 8) => ValueRef::Int(read!(u64) as i128),
            (Physical::UInt(4), 4) => ValueRef::Int(read!(u32) as i128),
            (Physical::Float(8), 8) => ValueRef::Float(read!(f64)),
            (Physical::Float(4), 4) => ValueRef::Float(read!(f32) as f64),
            (Physical::Bytes, _) => ValueRef::Bytes(b),
            // Odd widths and lengths read as Value reads them.
            _ => match Value::decode_physical(p, b) {
                Value::Int(v) => ValueRef::Int(v),
                Value::Float(v) => ValueRef::Float(v),
                Value::Bytes(_) => unreachable!("only bytes decode to bytes"),
            },
        }
    }
}

fn ieee_cmp_ref(a: &ValueRef<'_>, b: &ValueRef<'_>) -> Option<Ordering> {
    use ValueRef as K;
    match (a, b) {
        (K::Float(x), K::Float(y)) => x.partial_cmp(y),
        (K::Float(x), K::Int(y)) => x.partial_cmp(&(*y as f64)),
        (K::Int(x), K::Float(y)) => (*x as f64).partial_cmp(y),
        (K::Int(x), K::Int(y)) => Some(x.cmp(y)),
        (K::Bytes(x), K::Bytes(y)) => Some(x.cmp(y)),
        // As [`Value`] orders them: bytes after numbers.
        (K::Bytes(_), _) => Some(Ordering::Greater),
        (_, K::Bytes(_)) => Some(Ordering::Less),
    }
}

/// Whether `op` holds between a valid cell of `dt` and the condition's
/// values (one for comparisons, the members for IN and NOT IN).
fn compare(op: CompareOp, p: Physical, cell: &[u8], values: &[Vec<u8>]) -> bool {
    let cell = ValueRef::decode_physical(p, cell);
    fn value(p: Physical, v: &[u8]) -> ValueRef<'_> {
        ValueRef::decode_physical(p, v)
    }
    let eq = |v: &Vec<u8>| ieee_cmp_ref(&cell, &value(p, v)) == Some(Ordering::Equal);
    match op {
        CompareOp::In => values.iter().any(eq),
        CompareOp::NotIn => !values.iter().any(eq),
        CompareOp::AlwaysTrue => true,
        CompareOp::AlwaysFalse => false,
        _ => match values.first() {
            Some(v) => holds(op, ieee_cmp_ref(&cell, &value(p, v))),
            None => false,
        },
    }
}

/// A condition bound to fields by position ([`Expr::compile`]): what a
/// reader tests each cell with.
#[derive(Debug, Clone)]
pub enum Compiled {
    /// Always or never.
    Const(bool),
    /// Every one holds.
    And(Vec<Compiled>),
    /// One holds.
    Or(Vec<Compiled>),
    /// It does not hold.
    Not(Box<Compiled>),
    /// The field at `at` is null (not null when `negated`).
    IsNull {
        /// The field's position.
        at: usize,
        /// `is not null`.
        negated: bool,
    },
    /// The field at `at` compared with `values`.
    Compare {
        /// The field's position.
        at: usize,
        /// The field's physical type.
        physical: Physical,
        /// The comparison.
        op: CompareOp,
        /// The values compared with (several for `in`).
        values: Vec<Vec<u8>>,
        /// The same test on the cells' own number type, where it is one.
        number: Option<NumberTest>,
    },
}

impl Compiled {
    /// The field position and number test of a condition that is one
    /// comparison of a number field with one value.
    pub fn number_test(&self) -> Option<(usize, NumberTest)> {
        match self {
            Compiled::Compare {
                at,
                number: Some(t),
                ..
            } => Some((*at, *t)),
            _ => None,
        }
    }

    /// Evaluates on one cell; `cell(at)` gives the bytes and validity of
    /// the cell's field at position `at`.
    pub fn eval<'v>(&self, cell: &impl Fn(usize) -> (&'v [u8], bool)) -> bool {
        match self {
            Compiled::Const(b) => *b,
            Compiled::And(v) => v.iter().all(|e| e.eval(cell)),
            Compiled::Or(v) => v.iter().any(|e| e.eval(cell)),
            Compiled::Not(e) => !e.eval(cell),
            Compiled::IsNull { at, negated } => cell(*at).1 == *negated,
            Compiled::Compare { at, .. } => {
                let (bytes, valid) = cell(*at);
                valid && self.compares(bytes)
            }
        }
    }

    /// Whether a valid cell's `bytes` pass a comparison (`false` for
    /// anything else): on the cells' own number type where it can be.
    #[inline]
    fn compares(&self, bytes: &[u8]) -> bool {
        match self {
            Compiled::Compare {
                physical,
                op,
                values,
                number,
                ..
            } => match number {
                Some(t) if bytes.len() == t.width => t.holds(bytes),
                _ => compare(*op, *physical, bytes, values),
            },
            _ => false,
        }
    }
}

/// Whether comparison operator `op` holds for an ordering (`None`: unordered, only `!=` holds).
fn holds(op: CompareOp, o: Option<Ordering>) -> bool {
    match (op, o) {
        (CompareOp::Ne, None) => true,
        (_, None) => false,
        (CompareOp::Lt, Some(o)) => o.is_lt(),
        (CompareOp::Le, Some(o)) => o.is_le(),
        (CompareOp::Gt, Some(o)) => o.is_gt(),
        (CompareOp::Ge, Some(o)) => o.is_ge(),
        (CompareOp::Eq, Some(o)) => o.is_eq(),
        (_, Some(o)) => o.is_ne(),
    }
}

/// A condition bound to field datatypes.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `field op value`.
    Compare {
        /// Field name.
        field: String,
        /// Operator.
        op: CompareOp,
        /// The value(s): one for comparisons, the members for IN / NOT IN.
        values: Vec<Vec<u8>>,
    },
    /// `field IS NULL` (or IS NOT NULL when `negated`).
    IsNull {
        /// Field name.
        field: String,
        /// IS NOT NULL.
        negated: bool,
    },
    /// All hold.
    And(Vec<Expr>),
    /// Any holds.
    Or(Vec<Expr>),
    /// Does not hold.
    Not(Box<Expr>),
    /// Constant.
    Const(bool),
}

impl Expr {
    /// From a stored condition tree.
    pub fn from_stored(c: &Condition) -> Expr {
        match c {
            Condition::Compare {
                op: CompareOp::AlwaysTrue,
                ..
            } => Expr::Const(true),
            Condition::Compare {
                op: CompareOp::AlwaysFalse,
                ..
            } => Expr::Const(false),
            Condition::Compare {
                field, op, value, ..
            } if value.is_empty() && matches!(op, CompareOp::Eq | CompareOp::Ne) => Expr::IsNull {
                field: field.clone(),
                negated: *op == CompareOp::Ne,
            },
            Condition::Compare { field, op, .. } => Expr::Compare {
                field: field.clone(),
                op: *op,
                values: c.members().into_iter().map(<[u8]>::to_vec).collect(),
            },
            Condition::Combine {
                op: CombineOp::And,
                children,
            } => Expr::And(children.iter().map(Expr::from_stored).collect()),
            Condition::Combine {
                op: CombineOp::Or,
                children,
            } => Expr::Or(children.iter().map(Expr::from_stored).collect()),
            Condition::Combine {
                op: CombineOp::Not,
                children,
            } => Expr::Not(Box::new(
                children
                    .first()
                    .map_or(Expr::Const(false), Expr::from_stored),
            )),
        }
    }

    /// The stored form of the condition, the mirror of
    /// [`Expr::from_stored`]: IS NULL as `==` an empty value, IN sets as
    /// their members back to back with offsets, constants as always
    /// true or false.
    pub fn to_stored(&self) -> Condition {
        let compare = |field: &str, op, value: Vec<u8>, offsets| Condition::Compare {
            field: field.to_owned(),
            op,
            value,
            offsets,
        };
        let combine = |op, children: &[Expr]| Condition::Combine {
            op,
            children: children.iter().map(Expr::to_stored).collect(),
        };
        match self {
            Expr::Const(b) => {
                let op = if *b {
                    CompareOp::AlwaysTrue
                } else {
                    CompareOp::AlwaysFalse
                };
                compare("", op, Vec::new(), None)
            }
            Expr::IsNull { field, negated } => {
                let op = if *negated {
                    CompareOp::Ne
                } else {
                    CompareOp::Eq
                };
                compare(field, op, Vec::new(), None)
            }
            Expr::Compare { field, op, values }
                if matches!(op, CompareOp::In | CompareOp::NotIn) =>
            {
                let mut offsets = Vec::with_capacity(values.len());
                let mut value = Vec::new();
                for v in values {
                    offsets.push(value.len() as u64);
                    value.extend_from_slice(v);
                }
                compare(field, *op, value, Some(offsets))
            }
            Expr::Compare { field, op, values } => compare(
                field,
                *op,
                values.first().cloned().unwrap_or_default(),
                None,
            ),
            Expr::And(children) => combine(CombineOp::And, children),
            Expr::Or(children) => combine(CombineOp::Or, children),
            Expr::Not(child) => combine(CombineOp::Not, std::slice::from_ref(child)),
        }
    }

    /// Field names the condition reads.
    pub fn fields(&self, out: &mut Vec<String>) {
        match self {
            Expr::Compare { field, .. } | Expr::IsNull { field, .. } => {
                if !out.contains(field) {
                    out.push(field.clone())
                }
            }
            Expr::And(v) | Expr::Or(v) => v.iter().for_each(|e| e.fields(out)),
            Expr::Not(e) => e.fields(out),
            Expr::Const(_) => {}
        }
    }

    /// Every comparison the condition makes, as (field, operator, values),
    /// in the order written: what a caller checks against the fields'
    /// types before anything is read.
    pub fn comparisons<'e>(&'e self, out: &mut Vec<(&'e str, CompareOp, &'e [Vec<u8>])>) {
        match self {
            Expr::Compare { field, op, values } => out.push((field, *op, values)),
            Expr::And(v) | Expr::Or(v) => v.iter().for_each(|e| e.comparisons(out)),
            Expr::Not(e) => e.comparisons(out),
            Expr::IsNull { .. } | Expr::Const(_) => {}
        }
    }

    /// Evaluates on one cell. `get` gives a field's datatype, bytes and validity.
    pub fn eval<'v>(&self, get: &FieldLookup<'_, 'v>) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::And(v) => v.iter().all(|e| e.eval(get)),
            Expr::Or(v) => v.iter().any(|e| e.eval(get)),
            Expr::Not(e) => !e.eval(get),
            Expr::IsNull { field, negated } => match get(field) {
                Some((_, _, valid)) => valid == *negated,
                None => false,
            },
            Expr::Compare { field, op, values } => match get(field) {
                Some((dt, bytes, true)) => compare(*op, dt.physical(), bytes, values),
                _ => false,
            },
        }
    }

    /// Binds the condition to the columns of a result, by name.
    pub fn compile_columns(&self, cols: &[crate::column::Column]) -> Compiled {
        self.compile(&|name| {
            let at = cols.iter().position(|col| col.name == name)?;
            Some((at, cols[at].datatype))
        })
    }

    /// Binds the condition to fields by position, for testing many cells:
    /// `field` gives a name's position and datatype (`None`: the cells do
    /// not have it, and comparisons on it fail as in [`Expr::eval`]).
    pub fn compile(&self, field: &dyn Fn(&str) -> Option<(usize, Datatype)>) -> Compiled {
        match self {
            Expr::Const(b) => Compiled::Const(*b),
            Expr::And(v) => Compiled::And(v.iter().map(|e| e.compile(field)).collect()),
            Expr::Or(v) => Compiled::Or(v.iter().map(|e| e.compile(field)).collect()),
            Expr::Not(e) => Compiled::Not(Box::new(e.compile(field))),
            Expr::IsNull { field: f, negated } => match field(f) {
                Some((at, _)) => Compiled::IsNull {
                    at,
                    negated: *negated,
                },
                None => Compiled::Const(false),
            },
            Expr::Compare {
                field: f,
                op,
                values,
            } => match field(f) {
                Some((at, dt)) => Compiled::Compare {
                    at,
                    physical: dt.physical(),
                    op: *op,
                    values: values.clone(),
                    number: NumberTest::of(*op, dt.physical(), values),
                },
                None => Compiled::Const(false),
            },
        }
    }

    /// False only when no cell described by `bounds` can satisfy the
    /// condition, so a tile or fragment with those bounds need not be read.
    /// Fields `bounds` knows nothing of (`None`) may hold anything.
    ///
    /// ```
    /// use tessera_fragment::condition::CompareOp;
    /// use tessera_cells::{Bounds, Expr};
    /// use tessera_schema::Value;
    /// use tessera_tile::Datatype;
    /// let e = Expr::Compare { field: "a".into(), op: CompareOp::Gt, values: vec![10i32.to_le_bytes().to_vec()] };
    /// let tile = Bounds { min_max: Some((Value::Int(1), Value::Int(7))), nulls: Some((0, 100)) };
    /// assert!(!e.may_match(&|_| Some((Datatype::Int32, tile.clone()))));
    /// assert!(e.may_match(&|_| None));
    /// ```
    pub fn may_match(&self, bounds: &BoundsLookup<'_>) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::And(v) => v.iter().all(|e| e.may_match(bounds)),
            Expr::Or(v) => v.iter().any(|e| e.may_match(bounds)),
            // A negation holds where its operand fails, nulls included:
            // bounds of values say nothing about that.
            Expr::Not(_) => true,
            Expr::IsNull { field, negated } => match bounds(field).and_then(|(_, b)| b.nulls) {
                Some((nulls, cells)) if *negated => nulls < cells,
                Some((nulls, _)) => nulls > 0,
                None => true,
            },
            Expr::Compare { field, op, values } => {
                let Some((dt, b)) = bounds(field) else {
                    return true;
                };
                // Comparisons never hold on nulls.
                if b.nulls.is_some_and(|(nulls, cells)| nulls == cells) {
                    return false;
                }
                let Some((lo, hi)) = &b.min_max else {
                    return true;
                };
                if lo.is_nan() || hi.is_nan() {
                    return true;
                }
                let within = |v: &Vec<u8>| {
                    let v = Value::decode(dt, v);
                    holds(CompareOp::Le, ieee_cmp(lo, &v)) && holds(CompareOp::Le, ieee_cmp(&v, hi))
                };
                let first = values.first().map(|v| Value::decode(dt, v));
                match (op, first) {
                    (CompareOp::AlwaysFalse, _) => false,
                    (CompareOp::Eq, Some(_)) => within(&values[0]),
                    (CompareOp::In, _) => values.iter().any(within),
                    (CompareOp::Lt | CompareOp::Le, Some(v)) => holds(*op, ieee_cmp(lo, &v)),
                    (CompareOp::Gt | CompareOp::Ge, Some(v)) => holds(*op, ieee_cmp(hi, &v)),
                    // Float cells may be NaN, which no bounds include and
                    // which differs from every value.
                    (CompareOp::Ne | CompareOp::NotIn, _) if matches!(lo, Value::Float(_)) => true,
                    (CompareOp::Ne | CompareOp::NotIn, _) => {
                        !(lo == hi && values.iter().any(|v| Value::decode(dt, v) == *lo))
                    }
                    _ => true,
                }
            }
        }
    }

    /// Parses a condition such as `a > 5 and (b == 'x' or c is null)`
    /// (the grammar in `grammar.rs`), binding literals to the datatypes of
    /// `schema`'s fields.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_cells::{Expr, CellError};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array");
    /// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// assert!(Expr::parse("a > 0 and (s == 'ab' or n is null)", &a.schema).is_ok());
    /// let e = Expr::parse("a > 0 and", &a.schema).unwrap_err();
    /// assert_eq!(e.to_string(), "--where: at byte 9: unexpected end");
    /// ```
    pub fn parse(text: &str, schema: &ArraySchema) -> Result<Expr, CellError> {
        let ast = crate::grammar::parse(text).map_err(|e| {
            CellError::Invalid(format!("--where: at byte {}: {}", e.offset, e.message))
        })?;
        bind(&ast, schema)
    }
}

/// The condition `ast` with its literals encoded as its fields' values.
fn bind(ast: &Ast<'_>, schema: &ArraySchema) -> Result<Expr, CellError> {
    let field_type = |f: &str| {
        schema
            .attribute(f)
            .map(|a| a.datatype)
            .or_else(|| schema.dimension(f).map(|d| d.datatype))
            .ok_or_else(|| CellError::UnknownField {
                kind: "field",
                name: f.to_owned(),
            })
    };
    let all = |v: &[Ast<'_>]| {
        v.iter()
            .map(|a| bind(a, schema))
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(match ast {
        Ast::Compare {
            field,
            op,
            literals,
        } => {
            let dt = field_type(field)?;
            Expr::Compare {
                field: (*field).to_owned(),
                op: *op,
                values: literals
                    .iter()
                    .map(|l| encode(l, dt))
                    .collect::<Result<_, _>>()?,
            }
        }
        Ast::IsNull { field, negated } => {
            field_type(field)?;
            Expr::IsNull {
                field: (*field).to_owned(),
                negated: *negated,
            }
        }
        Ast::And(v) => Expr::And(all(v)?),
        Ast::Or(v) => Expr::Or(all(v)?),
        Ast::Not(a) => Expr::Not(Box::new(bind(a, schema)?)),
    })
}

/// Encodes a literal as a value of `dt`.
pub(crate) fn encode(lit: &str, dt: Datatype) -> Result<Vec<u8>, CellError> {
    let bad = || CellError::Invalid(format!("--where: `{lit}` is not a {dt} value"));
    let unq = lit.trim_matches(|c| c == '\'' || c == '"');
    Ok(match dt.physical() {
        Physical::Int(w) | Physical::UInt(w) => {
            let v: i128 = match unq {
                "true" | "True" => 1,
                "false" | "False" => 0,
                _ => unq
                    .parse::<i128>()
                    .or_else(|_| unq.parse::<f64>().map(|f| f as i128))
                    .map_err(|_| bad())?,
            };
            v.to_le_bytes()[..w as usize].to_vec()
        }
        Physical::Float(4) => unq
            .parse::<f32>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        Physical::Float(_) => unq
            .parse::<f64>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        Physical::Bytes => unq.as_bytes().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_f64(op: CompareOp, cell: f64, lit: f64) -> bool {
        let e = Expr::Compare {
            field: "x".into(),
            op,
            values: vec![lit.to_le_bytes().to_vec()],
        };
        let b = cell.to_le_bytes();
        e.eval(&|_| Some((Datatype::Float64, &b[..], true)))
    }

    #[test]
    fn floats_compare_by_ieee_rules() {
        // NaN is unordered: only != holds; -0 equals 0.
        for op in [CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge] {
            assert!(!on_f64(op, f64::NAN, 5.0), "{op:?}");
        }
        assert!(on_f64(CompareOp::Ne, f64::NAN, 5.0));
        assert!(!on_f64(CompareOp::Eq, f64::NAN, f64::NAN));
        assert!(on_f64(CompareOp::Eq, -0.0, 0.0));
        assert!(on_f64(CompareOp::NotIn, f64::NAN, 1.0));
    }

    #[test]
    fn bounds_prune_only_what_cannot_match() {
        let int = |v: i32| v.to_le_bytes().to_vec();
        let c = |op, v: i32| Expr::Compare {
            field: "a".into(),
            op,
            values: vec![int(v)],
        };
        let b = |lo: i128, hi: i128, nulls| Bounds {
            min_max: Some((Value::Int(lo), Value::Int(hi))),
            nulls,
        };
        let may = |e: &Expr, bd: Bounds| e.may_match(&|_| Some((Datatype::Int32, bd.clone())));
        assert!(!may(&c(CompareOp::Lt, 3), b(3, 9, None)));
        assert!(may(&c(CompareOp::Le, 3), b(3, 9, None)));
        assert!(!may(&c(CompareOp::Gt, 9), b(3, 9, None)));
        assert!(may(&c(CompareOp::Ge, 9), b(3, 9, None)));
        assert!(!may(&c(CompareOp::Eq, 10), b(3, 9, None)));
        assert!(!may(&c(CompareOp::Ne, 4), b(4, 4, None)));
        assert!(may(&c(CompareOp::Ne, 4), b(4, 5, None)));
        // Every cell null: no comparison holds, but IS NULL does.
        assert!(!may(&c(CompareOp::Ge, 0), b(0, 0, Some((8, 8)))));
        let null = |negated| Expr::IsNull {
            field: "a".into(),
            negated,
        };
        assert!(may(&null(false), b(0, 0, Some((8, 8)))));
        assert!(!may(&null(true), b(0, 0, Some((8, 8)))));
        assert!(!may(&null(false), b(0, 0, Some((0, 8)))));
        // A negation may hold on nulls and on anything the bounds hide.
        assert!(may(
            &Expr::Not(Box::new(c(CompareOp::Lt, 0))),
            b(3, 9, None)
        ));
        // Float bounds leave NaN out: != and NOT IN may always hold.
        let f = Bounds {
            min_max: Some((Value::Float(1.0), Value::Float(1.0))),
            nulls: None,
        };
        let ne = Expr::Compare {
            field: "f".into(),
            op: CompareOp::Ne,
            values: vec![1.0f64.to_le_bytes().to_vec()],
        };
        assert!(ne.may_match(&|_| Some((Datatype::Float64, f.clone()))));
        // A NaN bound (libtiledb's, over a tile holding NaN) prunes nothing.
        for (lo, hi) in [(f64::NAN, f64::NAN), (1.0, f64::NAN), (f64::NAN, 1.0)] {
            let nan = Bounds {
                min_max: Some((Value::Float(lo), Value::Float(hi))),
                nulls: None,
            };
            for op in [CompareOp::Lt, CompareOp::Gt, CompareOp::Eq, CompareOp::Ge] {
                let e = Expr::Compare {
                    field: "f".into(),
                    op,
                    values: vec![5.0f64.to_le_bytes().to_vec()],
                };
                assert!(e.may_match(&|_| Some((Datatype::Float64, nan.clone()))));
            }
        }
    }
}
