//! Serialized query conditions, as delete and update commit files store
//! them (`format_spec/delete_commit_file.md`, `format_spec/update_commit_file.md`).
//!
//! libtiledb serializes the *negation* of the condition the user gave: the
//! stored tree selects the cells to keep.

use crate::FragmentError;
use nom::combinator::cond;
use nom::multi::count as count_exact;
use serde::Serialize;
use tessera_schema::Value;
use tessera_tile::parse::{
    bytes, end, fits, parse, sized_text, text, u32_le, u64_le, u64s, u8_le, within, FieldError,
    PResult,
};
use tessera_tile::Datatype;

use tessera_tile::hex::encode as hex;

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CompareOp {
    /// `<` (0)
    Lt,
    /// `<=` (1)
    Le,
    /// `>` (2)
    Gt,
    /// `>=` (3)
    Ge,
    /// `==` (4)
    Eq,
    /// `!=` (5)
    Ne,
    /// `IN` (6)
    In,
    /// `NOT IN` (7)
    NotIn,
    /// Always true (253)
    AlwaysTrue,
    /// Always false (254)
    AlwaysFalse,
}

/// Each comparison operator's id on disk (parsing and encoding share it).
const COMPARE_OPS: [(u8, CompareOp); 10] = [
    (0, CompareOp::Lt),
    (1, CompareOp::Le),
    (2, CompareOp::Gt),
    (3, CompareOp::Ge),
    (4, CompareOp::Eq),
    (5, CompareOp::Ne),
    (6, CompareOp::In),
    (7, CompareOp::NotIn),
    (253, CompareOp::AlwaysTrue),
    (254, CompareOp::AlwaysFalse),
];

/// Combination operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CombineOp {
    /// AND (0)
    And,
    /// OR (1)
    Or,
    /// NOT (2)
    Not,
}

/// A condition tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Condition {
    /// `field op value`; an empty value with `Eq`/`Ne` tests for null.
    Compare {
        /// Field name.
        field: String,
        /// Operator.
        op: CompareOp,
        /// Value bytes (for IN sets, the concatenated members).
        value: Vec<u8>,
        /// For IN sets, the member offsets (u64 each).
        offsets: Option<Vec<u64>>,
    },
    /// Children combined by `op`.
    Combine {
        /// Operator.
        op: CombineOp,
        /// Children.
        children: Vec<Condition>,
    },
}

/// Deepest tree accepted (a corrupt file must not exhaust the stack).
pub const MAX_DEPTH: usize = 64;

/// One value an update commit sets: `field = value`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpdateValue {
    /// Field name.
    pub field: String,
    /// Value bytes, in the field's datatype.
    pub value: Vec<u8>,
}

impl Condition {
    /// Parses a serialized condition (a delete commit's tile).
    pub fn parse(bytes: &[u8]) -> Result<Condition, FragmentError> {
        let whole = |i| {
            let (i, c) = node(i, 0)?;
            end(i).map(|(i, ())| (i, c))
        };
        Ok(parse(bytes, "delete condition", 0, whole)?.0)
    }

    /// Parses an update commit's tile: the condition tree, then the number
    /// of update values (u64) and each value as (u64 field name size, name,
    /// u64 value size, value).
    pub fn parse_update(bytes: &[u8]) -> Result<(Condition, Vec<UpdateValue>), FragmentError> {
        let whole = |i| {
            let (i, c) = node(i, 0)?;
            let (i, values) = within("update values", update_values)(i)?;
            let (i, ()) = within("update values", end)(i)?;
            Ok((i, (c, values)))
        };
        Ok(parse(bytes, "update condition", 0, whole)?.0)
    }

    /// The values a comparison tests against: for IN and NOT IN, each set
    /// member (parsing checked the offsets); otherwise the one value.
    /// Empty for combinations.
    pub fn members(&self) -> Vec<&[u8]> {
        match self {
            Condition::Compare {
                value,
                offsets: Some(offs),
                ..
            } => offs
                .iter()
                .enumerate()
                .map(|(i, &o)| {
                    let end = offs.get(i + 1).map_or(value.len(), |&e| e as usize);
                    &value[o as usize..end]
                })
                .collect(),
            Condition::Compare { value, .. } => vec![value.as_slice()],
            Condition::Combine { .. } => Vec::new(),
        }
    }

    /// The condition as text, values decoded with `datatype_of(field)`
    /// (raw hex when the field is unknown), e.g. `(a <= 6 AND b IS NOT NULL)`.
    pub fn display_with(&self, datatype_of: &dyn Fn(&str) -> Option<Datatype>) -> String {
        match self {
            Condition::Compare {
                field,
                op,
                value,
                offsets,
            } => {
                let show = |v: &[u8]| match datatype_of(field) {
                    Some(t) => Value::decode(t, v).to_json().to_string(),
                    None => format!("0x{}", hex(v)),
                };
                let sym = match op {
                    CompareOp::Lt => "<",
                    CompareOp::Le => "<=",
                    CompareOp::Gt => ">",
                    CompareOp::Ge => ">=",
                    CompareOp::Eq => "==",
                    CompareOp::Ne => "!=",
                    CompareOp::In => "IN",
                    CompareOp::NotIn => "NOT IN",
                    CompareOp::AlwaysTrue => return "TRUE".into(),
                    CompareOp::AlwaysFalse => return "FALSE".into(),
                };
                match (op, offsets) {
                    (CompareOp::Eq, _) if value.is_empty() => format!("{field} IS NULL"),
                    (CompareOp::Ne, _) if value.is_empty() => format!("{field} IS NOT NULL"),
                    (_, Some(_)) => {
                        let members: Vec<String> = self.members().into_iter().map(show).collect();
                        format!("{field} {sym} [{}]", members.join(", "))
                    }
                    _ => format!("{field} {sym} {}", show(value)),
                }
            }
            Condition::Combine { op, children } => {
                let parts: Vec<String> = children
                    .iter()
                    .map(|c| c.display_with(datatype_of))
                    .collect();
                match op {
                    CombineOp::Not => format!("NOT ({})", parts.join(", ")),
                    CombineOp::And => format!("({})", parts.join(" AND ")),
                    CombineOp::Or => format!("({})", parts.join(" OR ")),
                }
            }
        }
    }

    /// The condition serialized as a delete commit stores it: the mirror of
    /// [`Condition::parse`]. A comparison is node type 1, its operator,
    /// a `u32` field name size and the name, a `u64` value size and the
    /// value, and for IN and NOT IN a `u64` offsets size and the offsets; a
    /// combination is node type 0, its operator, a `u64` number of children
    /// and the children.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Condition::Compare {
                field,
                op,
                value,
                offsets,
            } => {
                out.push(1);
                let id = COMPARE_OPS.iter().find(|(_, o)| o == op).map(|(id, _)| *id);
                out.push(id.expect("every operator has an id"));
                out.extend_from_slice(&(field.len() as u32).to_le_bytes());
                out.extend_from_slice(field.as_bytes());
                out.extend_from_slice(&(value.len() as u64).to_le_bytes());
                out.extend_from_slice(value);
                if let Some(offs) = offsets {
                    out.extend_from_slice(&(8 * offs.len() as u64).to_le_bytes());
                    offs.iter()
                        .for_each(|o| out.extend_from_slice(&o.to_le_bytes()));
                }
            }
            Condition::Combine { op, children } => {
                out.push(0);
                out.push(match op {
                    CombineOp::And => 0,
                    CombineOp::Or => 1,
                    CombineOp::Not => 2,
                });
                out.extend_from_slice(&(children.len() as u64).to_le_bytes());
                children.iter().for_each(|c| c.encode_into(out));
            }
        }
    }

    /// The same condition with every AND (OR) child of an AND (OR) merged
    /// into its parent, as libtiledb's own trees are built: libtiledb
    /// evaluates a stored tree with an OR directly under an OR (or an AND
    /// under an AND) wrongly (found by TileDB-Py reading a delete commit
    /// of `(a and b) and c`: it dropped the inner group).
    pub fn flattened(&self) -> Condition {
        match self {
            Condition::Combine { op, children } if *op != CombineOp::Not => {
                let mut merged = Vec::with_capacity(children.len());
                for child in children.iter().map(Condition::flattened) {
                    match child {
                        Condition::Combine {
                            op: inner,
                            children: grand,
                        } if inner == *op => merged.extend(grand),
                        other => merged.push(other),
                    }
                }
                Condition::Combine {
                    op: *op,
                    children: merged,
                }
            }
            Condition::Combine { op, children } => Condition::Combine {
                op: *op,
                children: children.iter().map(Condition::flattened).collect(),
            },
            compare => compare.clone(),
        }
    }

    /// The condition that holds where this one does not, as libtiledb
    /// negates a condition before storing it in a delete commit
    /// (`get_negated_tree`): each comparison's operator negated (`<` to
    /// `>=`, `==` to `!=`, IN to NOT IN, ...), AND and OR swapped over
    /// negated children, a NOT dropped.
    pub fn negated(&self) -> Condition {
        match self {
            Condition::Compare {
                field,
                op,
                value,
                offsets,
            } => Condition::Compare {
                field: field.clone(),
                op: match op {
                    CompareOp::Lt => CompareOp::Ge,
                    CompareOp::Le => CompareOp::Gt,
                    CompareOp::Gt => CompareOp::Le,
                    CompareOp::Ge => CompareOp::Lt,
                    CompareOp::Eq => CompareOp::Ne,
                    CompareOp::Ne => CompareOp::Eq,
                    CompareOp::In => CompareOp::NotIn,
                    CompareOp::NotIn => CompareOp::In,
                    CompareOp::AlwaysTrue => CompareOp::AlwaysFalse,
                    CompareOp::AlwaysFalse => CompareOp::AlwaysTrue,
                },
                value: value.clone(),
                offsets: offsets.clone(),
            },
            Condition::Combine {
                op: CombineOp::Not,
                children,
            } if children.len() == 1 => children[0].clone(),
            Condition::Combine { op, children } => Condition::Combine {
                op: match op {
                    CombineOp::And => CombineOp::Or,
                    CombineOp::Or | CombineOp::Not => CombineOp::And,
                },
                children: children.iter().map(Condition::negated).collect(),
            },
        }
    }
}

/// One node of a condition tree, `depth` below the root: a comparison
/// (node type 1) or a combination of child nodes (node type 0).
fn node(i: &[u8], depth: usize) -> PResult<'_, Condition> {
    if depth > MAX_DEPTH {
        let why = format!("condition nested deeper than {MAX_DEPTH}");
        return Err(FieldError::invalid(i, "node", why));
    }
    let (rest, t) = u8_le("node type")(i)?;
    match t {
        1 => compare(rest),
        0 => combine(rest, depth),
        t => Err(FieldError::invalid(
            i,
            "node type",
            format!("unknown node type {t}"),
        )),
    }
}

/// A comparison: the operator, the field's name (`u32` size), the value
/// (`u64` size), and for IN and NOT IN the set members' offsets.
fn compare(i: &[u8]) -> PResult<'_, Condition> {
    let (rest, id) = u8_le("op")(i)?;
    let Some(&(_, op)) = COMPARE_OPS.iter().find(|(n, _)| *n == id) else {
        return Err(FieldError::invalid(
            i,
            "op",
            format!("unknown operator {id}"),
        ));
    };
    let (i, n) = u32_le("field name size")(rest)?;
    let (i, field) = text("field name", n as u64)(i)?;
    let (i, n) = u64_le("value size")(i)?;
    let (i, value) = bytes("value", n)(i)?;
    let set = matches!(op, CompareOp::In | CompareOp::NotIn);
    let (i, offsets) = cond(set, |i| set_offsets(i, value.len() as u64))(i)?;
    let value = value.to_vec();
    Ok((
        i,
        Condition::Compare {
            field,
            op,
            value,
            offsets,
        },
    ))
}

/// The offsets of a set's members in its value (`u64` size in bytes, then
/// the offsets): they must rise and stay inside the value, so
/// [`Condition::members`] can slice it unchecked.
fn set_offsets(i: &[u8], value_len: u64) -> PResult<'_, Vec<u64>> {
    let (at, n) = u64_le("offsets size")(i)?;
    let (rest, offsets) = u64s("offsets", n / 8)(at)?;
    let mut prev = 0;
    for (k, &o) in offsets.iter().enumerate() {
        if o < prev || o > value_len {
            let why = format!(
                "set member offset {o} is below the previous one or past the {value_len}-byte value"
            );
            return Err(FieldError::invalid(&at[8 * k..], "offsets", why));
        }
        prev = o;
    }
    Ok((rest, offsets))
}

/// A combination: its operator (0 AND, 1 OR, 2 NOT), the `u64` number of
/// children, the children.
fn combine(i: &[u8], depth: usize) -> PResult<'_, Condition> {
    let (rest, o) = u8_le("combination op")(i)?;
    let op = match o {
        0 => CombineOp::And,
        1 => CombineOp::Or,
        2 => CombineOp::Not,
        o => {
            let why = format!("unknown operator {o}");
            return Err(FieldError::invalid(i, "combination op", why));
        }
    };
    let (mut i, n) = u64_le("number of children")(rest)?;
    // Each child takes at least 2 bytes: an absurd count fails here.
    let n = fits(i, "number of children", n, 2)?;
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        let (rest, child) = node(i, depth + 1)?;
        children.push(child);
        i = rest;
    }
    Ok((i, Condition::Combine { op, children }))
}

/// An update commit's values: their `u64` number, then each.
fn update_values(i: &[u8]) -> PResult<'_, Vec<UpdateValue>> {
    let (i, n) = u64_le("number of update values")(i)?;
    // Each value takes at least its two sizes.
    let n = fits(i, "number of update values", n, 16)?;
    count_exact(update_value, n)(i)
}

/// One update value: the field's name and the value, each after its
/// `u64` size.
fn update_value(i: &[u8]) -> PResult<'_, UpdateValue> {
    let (i, field) = sized_text("field name size", "field name")(i)?;
    let (i, n) = u64_le("value size")(i)?;
    let (i, value) = bytes("value", n)(i)?;
    let value = value.to_vec();
    Ok((i, UpdateValue { field, value }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_refused() {
        let mut b = Vec::new();
        for _ in 0..1000 {
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&1u64.to_le_bytes());
        }
        assert!(Condition::parse(&b).is_err());
    }

    fn compare(field: &str) -> Condition {
        Condition::Compare {
            field: field.into(),
            op: CompareOp::Eq,
            value: vec![1],
            offsets: None,
        }
    }

    fn combine(op: CombineOp, children: Vec<Condition>) -> Condition {
        Condition::Combine { op, children }
    }

    #[test]
    fn flattening_merges_groups_of_one_operator_only() {
        use CombineOp::{And, Not, Or};
        let (a, b, c, d) = (compare("a"), compare("b"), compare("c"), compare("d"));
        // (a or (b or c)) or (d and a): the inner OR merged, the AND kept.
        let tree = combine(
            Or,
            vec![
                combine(Or, vec![a.clone(), combine(Or, vec![b.clone(), c.clone()])]),
                combine(And, vec![d.clone(), a.clone()]),
            ],
        );
        let want = combine(
            Or,
            vec![
                a.clone(),
                b.clone(),
                c.clone(),
                combine(And, vec![d.clone(), a.clone()]),
            ],
        );
        assert_eq!(tree.flattened(), want);
        // A NOT keeps its one child; a NOT under a NOT is not merged.
        let not = combine(Not, vec![combine(Not, vec![a.clone()])]);
        assert_eq!(not.flattened(), not);
        // The bytes round-trip.
        assert_eq!(Condition::parse(&want.encode()).unwrap(), want);
    }
}
