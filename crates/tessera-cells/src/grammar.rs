//! The grammar of query conditions (`--where`), as nom parsers: text to an
//! untyped tree of field names, operators and literal texts. Binding the
//! literals to the fields' datatypes is `condition.rs`'s step.
//!
//! ```text
//! or        := and (("or" | "|") and)*
//! and       := unary (("and" | "&") unary)*
//! unary     := "not" unary | "(" or ")" | predicate
//! predicate := field "is" ["not"] "null"
//!            | field ["not"] "in" "[" [literal ("," literal)*] [","] "]"
//!            | field op literal
//! field     := `text` | bare
//! op        := "<" | "<=" | ">" | ">=" | "==" | "=" | "!="
//! literal   := 'text' | "text" | bare
//! ```
//!
//! Keywords are case-insensitive; a field or bare literal is a run of
//! characters other than white space and `` ()[],<>=!'"` ``. A field whose
//! name holds any of those (a space, a dot) is written between backticks.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_till, take_while1};
use nom::character::complete::{char, multispace0};
use nom::combinator::{cut, opt, recognize};
use nom::multi::{many0, separated_list0};
use nom::sequence::{delimited, preceded, terminated};
use nom::IResult;
use tessera_fragment::condition::CompareOp;

/// A parsed condition, literals still text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ast<'a> {
    /// `field op literal`, or `field [not] in [literals]`.
    Compare {
        field: &'a str,
        op: CompareOp,
        literals: Vec<&'a str>,
    },
    /// `field is [not] null`.
    IsNull { field: &'a str, negated: bool },
    /// All hold.
    And(Vec<Ast<'a>>),
    /// Any holds.
    Or(Vec<Ast<'a>>),
    /// Does not hold.
    Not(Box<Ast<'a>>),
}

/// Why a condition does not parse: the byte offset where it stopped, and
/// what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

/// Parses a whole condition.
pub(crate) fn parse(text: &str) -> Result<Ast<'_>, SyntaxError> {
    let at = |rest: &str| text.len() - rest.len();
    match or_expr(text) {
        Ok((rest, ast)) => {
            let rest_trimmed = rest.trim_start();
            if rest_trimmed.is_empty() {
                Ok(ast)
            } else {
                Err(SyntaxError {
                    offset: at(rest_trimmed),
                    message: format!("unexpected `{}`", snippet(rest_trimmed)),
                })
            }
        }
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            let rest = e.input.trim_start();
            let message = if rest.is_empty() {
                "unexpected end".to_owned()
            } else if rest.starts_with(['\'', '"']) {
                "unterminated string".to_owned()
            } else {
                format!("cannot parse `{}`", snippet(rest))
            };
            Err(SyntaxError {
                offset: at(rest),
                message,
            })
        }
        Err(nom::Err::Incomplete(_)) => Err(SyntaxError {
            offset: text.len(),
            message: "unexpected end".to_owned(),
        }),
    }
}

/// The start of `rest`, for messages.
fn snippet(rest: &str) -> &str {
    let end = rest.char_indices().nth(20).map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

type Res<'a, T> = IResult<&'a str, T>;

/// A field name or bare literal.
fn bare(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| !c.is_whitespace() && !"()[],<>=!'\"`".contains(c))(i)
}

/// A field name: between backticks (any characters but a backtick), or bare.
fn field(i: &str) -> Res<'_, &str> {
    ws(alt((
        delimited(char('`'), take_till(|c| c == '`'), char('`')),
        bare,
    )))(i)
}

/// `p` with white space around it.
fn ws<'a, T>(p: impl FnMut(&'a str) -> Res<'a, T>) -> impl FnMut(&'a str) -> Res<'a, T> {
    delimited(multispace0, p, multispace0)
}

/// A keyword: a whole bare word equal to `k`, any case.
fn keyword(k: &'static str) -> impl Fn(&str) -> Res<'_, &str> {
    move |i| {
        let (rest, word) = ws(bare)(i)?;
        if word.eq_ignore_ascii_case(k) {
            Ok((rest, word))
        } else {
            Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::Tag,
            )))
        }
    }
}

/// A quoted string, quotes kept (binding strips them).
fn quoted(i: &str) -> Res<'_, &str> {
    alt((
        recognize(delimited(char('\''), take_till(|c| c == '\''), char('\''))),
        recognize(delimited(char('"'), take_till(|c| c == '"'), char('"'))),
    ))(i)
}

fn literal(i: &str) -> Res<'_, &str> {
    ws(alt((quoted, bare)))(i)
}

fn operator(i: &str) -> Res<'_, CompareOp> {
    let (rest, op) = ws(alt((
        tag("<="),
        tag(">="),
        tag("=="),
        tag("!="),
        tag("<"),
        tag(">"),
        tag("="),
    )))(i)?;
    let op = match op {
        "<" => CompareOp::Lt,
        "<=" => CompareOp::Le,
        ">" => CompareOp::Gt,
        ">=" => CompareOp::Ge,
        "!=" => CompareOp::Ne,
        _ => CompareOp::Eq,
    };
    Ok((rest, op))
}

/// `or` and `and` lists: one item alone is itself.
fn joined<'a>(
    item: fn(&'a str) -> Res<'a, Ast<'a>>,
    words: [&'static str; 2],
    make: fn(Vec<Ast<'a>>) -> Ast<'a>,
) -> impl FnMut(&'a str) -> Res<'a, Ast<'a>> {
    move |i| {
        let (i, first) = item(i)?;
        // After a connective, an item must follow.
        let connective = alt((keyword(words[0]), keyword(words[1])));
        let (i, mut rest) = many0(preceded(connective, cut(item)))(i)?;
        if rest.is_empty() {
            return Ok((i, first));
        }
        rest.insert(0, first);
        Ok((i, make(rest)))
    }
}

fn or_expr(i: &str) -> Res<'_, Ast<'_>> {
    joined(and_expr, ["or", "|"], Ast::Or)(i)
}

fn and_expr(i: &str) -> Res<'_, Ast<'_>> {
    joined(unary, ["and", "&"], Ast::And)(i)
}

fn unary(i: &str) -> Res<'_, Ast<'_>> {
    if let Ok((rest, _)) = keyword("not")(i) {
        let (rest, inner) = cut(unary)(rest)?;
        return Ok((rest, Ast::Not(Box::new(inner))));
    }
    // Past an opening parenthesis (or a field name) the parser is
    // committed: errors are reported where they are, not backtracked.
    if let Ok((rest, _)) = ws(char('('))(i) {
        let (rest, inner) = cut(or_expr)(rest)?;
        let (rest, _) = cut(ws(char(')')))(rest)?;
        return Ok((rest, inner));
    }
    predicate(i)
}

fn predicate(i: &str) -> Res<'_, Ast<'_>> {
    let (i, field) = field(i)?;
    if let Ok((rest, _)) = keyword("is")(i) {
        let (rest, not) = opt(keyword("not"))(rest)?;
        let (rest, _) = keyword("null")(rest)?;
        let negated = not.is_some();
        return Ok((rest, Ast::IsNull { field, negated }));
    }
    let (after_not, not) = opt(keyword("not"))(i)?;
    if let Ok((rest, _)) = keyword("in")(after_not) {
        let items = separated_list0(ws(char(',')), literal);
        let (rest, literals) = cut(delimited(
            ws(char('[')),
            terminated(items, opt(ws(char(',')))),
            ws(char(']')),
        ))(rest)?;
        let op = if not.is_some() {
            CompareOp::NotIn
        } else {
            CompareOp::In
        };
        return Ok((
            rest,
            Ast::Compare {
                field,
                op,
                literals,
            },
        ));
    }
    let (rest, op) = cut(operator)(i)?;
    let (rest, lit) = cut(literal)(rest)?;
    Ok((
        rest,
        Ast::Compare {
            field,
            op,
            literals: vec![lit],
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp<'a>(field: &'a str, op: CompareOp, lits: &[&'a str]) -> Ast<'a> {
        Ast::Compare {
            field,
            op,
            literals: lits.to_vec(),
        }
    }

    #[test]
    fn backticks_quote_field_names() {
        assert_eq!(
            parse("`attr with spaces` == 'v' and `a.b` in [1]").unwrap(),
            Ast::And(vec![
                cmp("attr with spaces", CompareOp::Eq, &["'v'"]),
                cmp("a.b", CompareOp::In, &["1"]),
            ])
        );
        assert!(parse("`unclosed == 1").is_err());
    }

    #[test]
    fn precedence_keywords_and_literals() {
        let a = parse("a > 5 AND (b == 'x y' or c is not null) | not d in [1, 2,]").unwrap();
        let want = Ast::Or(vec![
            Ast::And(vec![
                cmp("a", CompareOp::Gt, &["5"]),
                Ast::Or(vec![
                    cmp("b", CompareOp::Eq, &["'x y'"]),
                    Ast::IsNull {
                        field: "c",
                        negated: true,
                    },
                ]),
            ]),
            Ast::Not(Box::new(cmp("d", CompareOp::In, &["1", "2"]))),
        ]);
        assert_eq!(a, want);
        assert_eq!(
            parse("s not in [\"a\"]").unwrap(),
            cmp("s", CompareOp::NotIn, &["\"a\""])
        );
        assert_eq!(
            parse("x<=-1.5").unwrap(),
            cmp("x", CompareOp::Le, &["-1.5"])
        );
        // A field named like a keyword's start is a field.
        assert_eq!(
            parse("order = 1").unwrap(),
            cmp("order", CompareOp::Eq, &["1"])
        );
    }

    #[test]
    fn errors_name_the_byte_offset() {
        let e = parse("a > 'x").unwrap_err();
        assert_eq!((e.offset, e.message.as_str()), (4, "unterminated string"));
        let e = parse("a > 1 b").unwrap_err();
        assert_eq!(e.offset, 6);
        let e = parse("(a > 1").unwrap_err();
        assert_eq!(e.message, "unexpected end");
        let e = parse("a ~ 1").unwrap_err();
        assert_eq!(e.offset, 2, "{e:?}");
    }
}
