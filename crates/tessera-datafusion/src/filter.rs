//! DataFusion filters as a tessera read takes them.
//!
//! A predicate on a dimension becomes ranges of the read's subarray: exact
//! for integer and datetime dimensions (`=`, `<`, `<=`, `>`, `>=`,
//! `BETWEEN`, `IN`), and for inclusive bounds on floats and strings; a
//! strict bound there is read inclusively and refiltered (inexact). A
//! predicate on attributes of a sparse array becomes a query condition in
//! the `--where` grammar (bound to the attributes' types by the query
//! crate), pruning tiles by their metadata. It is exact where SQL and
//! TileDB keep the same cells ([`exact_condition`]: integer attributes,
//! negation only of attributes without nulls); otherwise inexact, and
//! DataFusion filters again (a negation holds on TileDB's null cells,
//! SQL's NOT of NULL keeps nothing). A pushed condition never keeps fewer
//! cells than SQL: range comparisons of floats stay with DataFusion, as
//! SQL orders NaN beyond every number (a positive NaN above, a negative
//! one below) and TileDB's NaN passes none (both take -0 equal to 0, NaN
//! unequal to every number). On a dense array the same predicates, float
//! ranges included, prune: space tiles whose metadata shows no cell
//! passes go unread (float tiles that may hold a NaN are read), and
//! DataFusion filters the rest (inexact). Anything else stays with
//! DataFusion.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use tessera::fragment::OpenArray;
use tessera::query::{Expr as Condition, Value};
use tessera::schema::{CellValNum, Dimension};
use tessera::tile::datatype::Physical;

/// What one filter does to a scan.
#[derive(Debug, Clone)]
pub(crate) enum Effect {
    /// Keeps only cells whose dimension falls in one of these inclusive ranges.
    Ranges {
        dimension: String,
        ranges: Vec<(Value, Value)>,
        exact: bool,
    },
    /// Keeps cells satisfying this condition (text in the `--where` grammar).
    Condition { text: String, exact: bool },
    /// Leaves unread the tiles whose metadata shows no cell satisfies
    /// this condition (a dense array's); DataFusion filters what is read.
    Prune { text: String },
}

impl Effect {
    pub(crate) fn pushdown(&self) -> TableProviderFilterPushDown {
        match self {
            Effect::Ranges { exact: true, .. } | Effect::Condition { exact: true, .. } => {
                TableProviderFilterPushDown::Exact
            }
            _ => TableProviderFilterPushDown::Inexact,
        }
    }
}

/// What `filter` does to a scan of `array`, or `None` if tessera cannot
/// use it.
pub(crate) fn effect(filter: &Expr, array: &OpenArray) -> Option<Effect> {
    if let Some(e) = dimension_ranges(filter, array) {
        return Some(e);
    }
    // A dense read gives the cells failing a condition as nulls (TileDB's
    // dense semantics), not fewer cells: a filter above could not tell
    // them from real nulls, so conditions go only to sparse reads. A dense
    // read leaves unread the tiles that metadata rules out (reading float
    // tiles that may hold NaN, which SQL orders above every number).
    let dense = array.schema.is_dense();
    let text = condition_text(filter, array, dense)?;
    // Bound here, once, to know it binds: the literals fit the attributes.
    Condition::parse(&text, &array.schema).ok()?;
    Some(match dense {
        true => Effect::Prune { text },
        false => Effect::Condition {
            text,
            exact: exact_condition(filter, array),
        },
    })
}

/// Whether TileDB keeps exactly the cells SQL keeps for `filter` (one
/// [`condition_text`] accepted): comparisons of integer attributes of one
/// value a cell, joined by AND and OR, hold on the same cells in both
/// (a null cell fails every comparison in TileDB, and SQL drops a NULL
/// as it drops false, so AND and OR agree); IS [NOT] NULL agrees; a
/// negation (NOT, NOT IN) agrees only over attributes without nulls.
fn exact_condition(filter: &Expr, array: &OpenArray) -> bool {
    let integer = |name: &str| {
        array
            .schema
            .attributes
            .iter()
            .find(|a| a.name == name)
            .filter(|a| {
                matches!(a.cell_val_num, CellValNum::Fixed(1))
                    && matches!(a.datatype.physical(), Physical::Int(_) | Physical::UInt(_))
            })
    };
    match filter {
        Expr::BinaryExpr(b) if matches!(b.op, Operator::And | Operator::Or) => {
            exact_condition(&b.left, array) && exact_condition(&b.right, array)
        }
        Expr::BinaryExpr(b) => {
            column_op_literal(b).is_some_and(|(name, ..)| integer(name).is_some())
        }
        Expr::InList(list) => match &*list.expr {
            Expr::Column(c) => integer(&c.name).is_some_and(|a| !list.negated || !a.nullable),
            _ => false,
        },
        Expr::IsNull(_) | Expr::IsNotNull(_) => true,
        Expr::Not(e) => exact_condition(e, array) && !nullable_in(e, array),
        _ => false,
    }
}

/// Whether `e` names a nullable attribute.
fn nullable_in(e: &Expr, array: &OpenArray) -> bool {
    e.column_refs().iter().any(|c| {
        array
            .schema
            .attributes
            .iter()
            .any(|a| a.name == c.name && a.nullable)
    })
}

/// The column and literal of `column op literal` (or `literal op column`,
/// the operator turned round).
fn column_op_literal(b: &BinaryExpr) -> Option<(&str, Operator, &ScalarValue)> {
    match (&*b.left, &*b.right) {
        (Expr::Column(c), Expr::Literal(v, _)) => Some((c.name.as_str(), b.op, v)),
        (Expr::Literal(v, _), Expr::Column(c)) => Some((c.name.as_str(), b.op.swap()?, v)),
        _ => None,
    }
}

/// A dimension predicate as ranges.
fn dimension_ranges(filter: &Expr, array: &OpenArray) -> Option<Effect> {
    let dim_of = |name: &str| array.schema.dimensions.iter().find(|d| d.name == name);
    let (d, ranges, exact) = match filter {
        // `x = 3 OR x = 5` (DataFusion's form of a short IN list), or any
        // OR of ranges on one dimension: their union.
        Expr::BinaryExpr(b) if b.op == Operator::Or => {
            let (
                Some(Effect::Ranges {
                    dimension: l,
                    ranges: mut lr,
                    exact: le,
                }),
                Some(Effect::Ranges {
                    dimension: r,
                    ranges: rr,
                    exact: re,
                }),
            ) = (
                dimension_ranges(&b.left, array),
                dimension_ranges(&b.right, array),
            )
            else {
                return None;
            };
            if l != r {
                return None;
            }
            lr.extend(rr);
            (dim_of(&l)?, lr, le && re)
        }
        Expr::BinaryExpr(b) => {
            let (name, op, v) = column_op_literal(b)?;
            let d = dim_of(name)?;
            let k = key(v, d)?;
            let integer = k.as_int().is_some();
            let (lo, hi) = (lowest(d)?, highest(d)?);
            let (range, exact) = match op {
                Operator::Eq => ((k.clone(), k), true),
                Operator::GtEq => ((k, hi), true),
                Operator::LtEq => ((lo, k), true),
                Operator::Gt if integer => ((Value::Int(k.as_int()? + 1), hi), true),
                Operator::Lt if integer => ((lo, Value::Int(k.as_int()? - 1)), true),
                Operator::Gt => ((k, hi), false),
                Operator::Lt => ((lo, k), false),
                _ => return None,
            };
            (d, vec![range], exact)
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let Expr::Column(c) = &**expr else {
                return None;
            };
            let d = dim_of(&c.name)?;
            let (Expr::Literal(l, _), Expr::Literal(h, _)) = (&**low, &**high) else {
                return None;
            };
            (d, vec![(key(l, d)?, key(h, d)?)], true)
        }
        Expr::InList(list) if !list.negated => {
            let Expr::Column(c) = &*list.expr else {
                return None;
            };
            let d = dim_of(&c.name)?;
            let keys = list
                .list
                .iter()
                .map(|e| match e {
                    Expr::Literal(v, _) => key(v, d),
                    _ => None,
                })
                .collect::<Option<Vec<Value>>>()?;
            (d, keys.into_iter().map(|k| (k.clone(), k)).collect(), true)
        }
        _ => return None,
    };
    Some(Effect::Ranges {
        dimension: d.name.clone(),
        ranges,
        exact,
    })
}

/// The least value of a dimension's type (an unbounded range's end).
fn lowest(d: &Dimension) -> Option<Value> {
    Some(match d.datatype.physical() {
        Physical::Int(_) | Physical::UInt(_) => Value::Int(i128::MIN),
        Physical::Float(_) => Value::Float(f64::NEG_INFINITY),
        Physical::Bytes => Value::Bytes(Vec::new()),
    })
}

/// The greatest value of a dimension's type; strings have none.
fn highest(d: &Dimension) -> Option<Value> {
    match d.datatype.physical() {
        Physical::Int(_) | Physical::UInt(_) => Some(Value::Int(i128::MAX)),
        Physical::Float(_) => Some(Value::Float(f64::INFINITY)),
        Physical::Bytes => None,
    }
}

/// A literal as a bound of dimension `d`, if its type fits.
fn key(v: &ScalarValue, d: &Dimension) -> Option<Value> {
    let physical = d.datatype.physical();
    let int = |i: Option<i128>| i.map(Value::Int);
    let k = match v {
        ScalarValue::Int8(x) => int(x.map(i128::from)),
        ScalarValue::Int16(x) => int(x.map(i128::from)),
        ScalarValue::Int32(x) => int(x.map(i128::from)),
        ScalarValue::Int64(x) => int(x.map(i128::from)),
        ScalarValue::UInt8(x) => int(x.map(i128::from)),
        ScalarValue::UInt16(x) => int(x.map(i128::from)),
        ScalarValue::UInt32(x) => int(x.map(i128::from)),
        ScalarValue::UInt64(x) => int(x.map(i128::from)),
        ScalarValue::TimestampSecond(x, None)
        | ScalarValue::TimestampMillisecond(x, None)
        | ScalarValue::TimestampMicrosecond(x, None)
        | ScalarValue::TimestampNanosecond(x, None) => int(x.map(i128::from)),
        ScalarValue::Float32(x) => x.map(|f| Value::Float(f.into())),
        ScalarValue::Float64(x) => x.map(Value::Float),
        ScalarValue::Utf8(x) | ScalarValue::LargeUtf8(x) | ScalarValue::Utf8View(x) => {
            x.as_ref().map(|s| Value::Bytes(s.as_bytes().to_vec()))
        }
        _ => None,
    }?;
    // Only a literal of the dimension's kind: DataFusion has coerced it to
    // the column's type (a timestamp in the column's own unit).
    let fits = matches!(
        (&k, physical),
        (Value::Int(_), Physical::Int(_) | Physical::UInt(_))
            | (Value::Float(_), Physical::Float(_))
            | (Value::Bytes(_), Physical::Bytes)
    );
    fits.then_some(k)
}

/// An attribute predicate in the `--where` grammar, if it has one; with
/// `float_ranges`, range comparisons of floats too (for pruning, which
/// reads the tiles that may hold NaN).
fn condition_text(filter: &Expr, array: &OpenArray, float_ranges: bool) -> Option<String> {
    let attribute = |name: &str| {
        array
            .schema
            .attributes
            .iter()
            .find(|a| a.name == name)
            // Enumerated attributes are read as their values: conditions
            // on them stay with DataFusion.
            .filter(|a| a.enumeration.is_none())
    };
    Some(match filter {
        Expr::BinaryExpr(b) if matches!(b.op, Operator::And | Operator::Or) => {
            let (l, r) = (
                condition_text(&b.left, array, float_ranges)?,
                condition_text(&b.right, array, float_ranges)?,
            );
            let op = if b.op == Operator::And { "and" } else { "or" };
            format!("({l}) {op} ({r})")
        }
        Expr::BinaryExpr(b) => {
            let (name, op, v) = column_op_literal(b)?;
            let at = attribute(name)?;
            // SQL orders NaN beyond every number (a NaN is greater than 1,
            // a negative NaN less), TileDB's NaN passes no range
            // comparison: pushed down, it would drop cells SQL keeps.
            let float = matches!(at.datatype.physical(), Physical::Float(_));
            if float
                && !float_ranges
                && matches!(
                    op,
                    Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
                )
            {
                return None;
            }
            let op = match op {
                Operator::Eq => "=",
                Operator::NotEq => "!=",
                Operator::Lt => "<",
                Operator::LtEq => "<=",
                Operator::Gt => ">",
                Operator::GtEq => ">=",
                _ => return None,
            };
            format!("{name} {op} {}", literal(v)?)
        }
        Expr::InList(list) => {
            let Expr::Column(c) = &*list.expr else {
                return None;
            };
            attribute(&c.name)?;
            let items = list
                .list
                .iter()
                .map(|e| match e {
                    Expr::Literal(v, _) => literal(v),
                    _ => None,
                })
                .collect::<Option<Vec<String>>>()?;
            let not = if list.negated { "not " } else { "" };
            format!("{} {not}in [{}]", c.name, items.join(", "))
        }
        Expr::IsNull(e) | Expr::IsNotNull(e) => {
            let Expr::Column(c) = &**e else { return None };
            attribute(&c.name)?;
            let not = if matches!(filter, Expr::IsNotNull(_)) {
                "not "
            } else {
                ""
            };
            format!("{} is {not}null", c.name)
        }
        Expr::Not(e) => format!("not ({})", condition_text(e, array, float_ranges)?),
        _ => return None,
    })
}

/// A literal as the grammar writes it: numbers bare, strings quoted.
fn literal(v: &ScalarValue) -> Option<String> {
    let quoted = |s: &str| {
        if !s.contains('\'') {
            Some(format!("'{s}'"))
        } else if !s.contains('"') {
            Some(format!("\"{s}\""))
        } else {
            None
        }
    };
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => quoted(s),
        ScalarValue::Float32(Some(f)) if f.is_finite() => Some(format!("{f:?}")),
        ScalarValue::Float64(Some(f)) if f.is_finite() => Some(format!("{f:?}")),
        ScalarValue::Int8(Some(_))
        | ScalarValue::Int16(Some(_))
        | ScalarValue::Int32(Some(_))
        | ScalarValue::Int64(Some(_))
        | ScalarValue::UInt8(Some(_))
        | ScalarValue::UInt16(Some(_))
        | ScalarValue::UInt32(Some(_))
        | ScalarValue::UInt64(Some(_)) => Some(v.to_string()),
        _ => None,
    }
}
