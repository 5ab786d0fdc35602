//! Serialized query conditions, as delete commit files store them
//! (`format_spec/delete_commit_file.md`).

use crate::FragmentError;
use serde::Serialize;
use tessera_tile::Reader;

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

impl Condition {
    /// Parses a serialized condition.
    pub fn parse(bytes: &[u8]) -> Result<Condition, FragmentError> {
        let mut r = Reader::new(bytes, "delete condition");
        let c = Self::node(&mut r, 0)?;
        r.finish()?;
        Ok(c)
    }

    fn node(r: &mut Reader<'_>, depth: usize) -> Result<Condition, FragmentError> {
        if depth > MAX_DEPTH {
            return Err(r
                .invalid("node", format!("condition nested deeper than {MAX_DEPTH}"))
                .into());
        }
        let at = r.position();
        match r.u8("node type")? {
            1 => {
                let at = r.position();
                let op = match r.u8("op")? {
                    0 => CompareOp::Lt,
                    1 => CompareOp::Le,
                    2 => CompareOp::Gt,
                    3 => CompareOp::Ge,
                    4 => CompareOp::Eq,
                    5 => CompareOp::Ne,
                    6 => CompareOp::In,
                    7 => CompareOp::NotIn,
                    253 => CompareOp::AlwaysTrue,
                    254 => CompareOp::AlwaysFalse,
                    o => {
                        return Err(r
                            .invalid_at(at, "op", format!("unknown operator {o}"))
                            .into())
                    }
                };
                let n = r.u32("field name size")?;
                let field = r.string("field name", n as u64)?;
                let n = r.u64("value size")?;
                let value = r.bytes("value", n)?.to_vec();
                let offsets = if matches!(op, CompareOp::In | CompareOp::NotIn) {
                    let n = r.u64("offsets size")?;
                    Some(r.u64_array("offsets", n / 8)?)
                } else {
                    None
                };
                Ok(Condition::Compare {
                    field,
                    op,
                    value,
                    offsets,
                })
            }
            0 => {
                let at = r.position();
                let op = match r.u8("combination op")? {
                    0 => CombineOp::And,
                    1 => CombineOp::Or,
                    2 => CombineOp::Not,
                    o => {
                        return Err(r
                            .invalid_at(at, "combination op", format!("unknown operator {o}"))
                            .into())
                    }
                };
                let n = r.u64("number of children")?;
                let n = r.check_count("number of children", n, 2)?;
                let mut children = Vec::with_capacity(n);
                for _ in 0..n {
                    children.push(Self::node(r, depth + 1)?);
                }
                Ok(Condition::Combine { op, children })
            }
            t => Err(r
                .invalid_at(at, "node type", format!("unknown node type {t}"))
                .into()),
        }
    }
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
}
