//! Conditions on cells: query conditions given by users (`--where`) and the
//! delete conditions stored in the array.

use crate::key::Key;
use crate::QueryError;
use tessera_fragment::condition::{CombineOp, CompareOp, Condition};
use tessera_schema::ArraySchema;
use tessera_tile::{datatype::Physical, Datatype};

/// Gives a field's datatype, value bytes and validity for the cell being tested.
pub type FieldLookup<'a, 'v> = dyn Fn(&str) -> Option<(Datatype, &'v [u8], bool)> + 'a;

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
            Expr::Compare { field, op, values } => {
                let Some((dt, bytes, valid)) = get(field) else {
                    return false;
                };
                if !valid {
                    return false;
                }
                let cell = Key::decode(dt, bytes);
                let key = |v: &Vec<u8>| Key::decode(dt, v);
                match op {
                    CompareOp::In => values.iter().any(|v| cell == key(v)),
                    CompareOp::NotIn => values.iter().all(|v| cell != key(v)),
                    CompareOp::AlwaysTrue => true,
                    CompareOp::AlwaysFalse => false,
                    _ => {
                        let Some(v) = values.first() else {
                            return false;
                        };
                        let o = cell.cmp(&key(v));
                        match op {
                            CompareOp::Lt => o.is_lt(),
                            CompareOp::Le => o.is_le(),
                            CompareOp::Gt => o.is_gt(),
                            CompareOp::Ge => o.is_ge(),
                            CompareOp::Eq => o.is_eq(),
                            _ => o.is_ne(),
                        }
                    }
                }
            }
        }
    }

    /// Parses a condition such as `a > 5 and (b == 'x' or c is null)`,
    /// binding literals to the datatypes of `schema`'s fields.
    pub fn parse(text: &str, schema: &ArraySchema) -> Result<Expr, QueryError> {
        let tokens = tokenize(text)?;
        let mut p = Parser {
            t: tokens,
            i: 0,
            schema,
        };
        let e = p.or()?;
        if p.i != p.t.len() {
            return Err(QueryError::Invalid(format!(
                "--where: unexpected `{}`",
                p.t[p.i]
            )));
        }
        Ok(e)
    }
}

fn tokenize(s: &str) -> Result<Vec<String>, QueryError> {
    let mut out = Vec::new();
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if "()[],".contains(ch) {
            out.push(ch.to_string());
            i += 1;
        } else if "<>=!".contains(ch) {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            if ["<=", ">=", "==", "!="].contains(&two.as_str()) {
                out.push(two);
                i += 2;
            } else {
                out.push(ch.to_string());
                i += 1;
            }
        } else if ch == '\'' || ch == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != ch {
                j += 1;
            }
            if j >= c.len() {
                return Err(QueryError::Invalid("--where: unterminated string".into()));
            }
            out.push(c[i..=j].iter().collect());
            i = j + 1;
        } else {
            let mut j = i;
            while j < c.len() && !c[j].is_whitespace() && !"()[],<>=!'\"".contains(c[j]) {
                j += 1;
            }
            out.push(c[i..j].iter().collect());
            i = j;
        }
    }
    Ok(out)
}

struct Parser<'a> {
    t: Vec<String>,
    i: usize,
    schema: &'a ArraySchema,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.t.get(self.i).map(String::as_str)
    }
    fn next(&mut self) -> Result<String, QueryError> {
        let t = self
            .t
            .get(self.i)
            .cloned()
            .ok_or_else(|| QueryError::Invalid("--where: unexpected end".into()))?;
        self.i += 1;
        Ok(t)
    }
    fn kw(&self, k: &str) -> bool {
        self.peek().is_some_and(|t| t.eq_ignore_ascii_case(k))
    }
    fn or(&mut self) -> Result<Expr, QueryError> {
        let mut v = vec![self.and()?];
        while self.kw("or") || self.peek() == Some("|") {
            self.i += 1;
            v.push(self.and()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::Or(v)
        })
    }
    fn and(&mut self) -> Result<Expr, QueryError> {
        let mut v = vec![self.unary()?];
        while self.kw("and") || self.peek() == Some("&") {
            self.i += 1;
            v.push(self.unary()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::And(v)
        })
    }
    fn unary(&mut self) -> Result<Expr, QueryError> {
        if self.kw("not") {
            self.i += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.peek() == Some("(") {
            self.i += 1;
            let e = self.or()?;
            if self.next()? != ")" {
                return Err(QueryError::Invalid("--where: expected `)`".into()));
            }
            return Ok(e);
        }
        let field = self.next()?;
        let dt = self.field_type(&field)?;
        if self.kw("is") {
            self.i += 1;
            let negated = self.kw("not");
            if negated {
                self.i += 1;
            }
            if !self.kw("null") {
                return Err(QueryError::Invalid("--where: expected `null`".into()));
            }
            self.i += 1;
            return Ok(Expr::IsNull { field, negated });
        }
        let negated_in = self.kw("not");
        if negated_in {
            self.i += 1;
        }
        if self.kw("in") {
            self.i += 1;
            if self.next()? != "[" {
                return Err(QueryError::Invalid(
                    "--where: expected `[` after `in`".into(),
                ));
            }
            let mut values = Vec::new();
            loop {
                let t = self.next()?;
                if t == "]" {
                    break;
                }
                if t == "," {
                    continue;
                }
                values.push(encode(&t, dt)?);
            }
            return Ok(Expr::Compare {
                field,
                op: if negated_in {
                    CompareOp::NotIn
                } else {
                    CompareOp::In
                },
                values,
            });
        }
        let op = match self.next()?.as_str() {
            "<" => CompareOp::Lt,
            "<=" => CompareOp::Le,
            ">" => CompareOp::Gt,
            ">=" => CompareOp::Ge,
            "==" | "=" => CompareOp::Eq,
            "!=" => CompareOp::Ne,
            o => {
                return Err(QueryError::Invalid(format!(
                    "--where: unknown operator `{o}`"
                )))
            }
        };
        let lit = self.next()?;
        Ok(Expr::Compare {
            field,
            op,
            values: vec![encode(&lit, dt)?],
        })
    }
    fn field_type(&self, f: &str) -> Result<Datatype, QueryError> {
        self.schema
            .attribute(f)
            .map(|a| a.datatype)
            .or_else(|| self.schema.dimension(f).map(|d| d.datatype))
            .ok_or_else(|| QueryError::Invalid(format!("--where: the array has no field `{f}`")))
    }
}

/// Encodes a literal as a value of `dt`.
pub fn encode(lit: &str, dt: Datatype) -> Result<Vec<u8>, QueryError> {
    let bad = || QueryError::Invalid(format!("--where: `{lit}` is not a {dt} value"));
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
