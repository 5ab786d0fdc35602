//! The paths a source file's code names: comments, strings and test code
//! left out, `{}` groups flattened.

/// `text` with comments, string and char literals blanked (newlines kept,
/// so lines still count) and everything from `#[cfg(test)]` on cut.
pub fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &str| {
        out.extend(s.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        let end = if rest.starts_with("//") {
            rest.find('\n').map_or(b.len(), |n| i + n)
        } else if let Some(inside) = rest.strip_prefix("/*") {
            inside.find("*/").map_or(b.len(), |n| i + 2 + n + 2)
        } else if rest.starts_with('"') {
            string_end(b, i + 1)
        } else if let Some(hashes) = raw_string(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open = 2 + hashes;
            rest[open..]
                .find(&close)
                .map_or(b.len(), |n| i + open + n + close.len())
        } else if let Some(n) = char_literal(rest) {
            i + n
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        blank(&mut out, &text[i..end]);
        i = end;
    }
    match out.find("#[cfg(test)]") {
        Some(n) => out[..n].to_owned(),
        None => out,
    }
}

/// The end (past the closing quote) of a string whose contents start at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The `#` count of a raw string starting `rest` (`r"`, `r#"`, `br"`).
fn raw_string(rest: &str) -> Option<usize> {
    let r = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = r.len() - r.trim_start_matches('#').len();
    r[hashes..].starts_with('"').then_some(hashes)
}

/// The length of a char literal starting `rest` (`'a'`, `'\n'`,
/// `'\u{1F600}'`); `None` for a lifetime.
fn char_literal(rest: &str) -> Option<usize> {
    if !rest.starts_with('\'') {
        return None;
    }
    let mut chars = rest.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        let close = rest[2..].find('\'')?;
        return (close <= 10).then_some(2 + close + 1);
    }
    let (n, next) = chars.next()?;
    (next == '\'').then_some(n + 1)
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Each `crate::`, `super::` and `self::` path in `code`, with its line,
/// `{}` groups flattened: `crate::a::{b, c::d}` is `crate::a::b` and
/// `crate::a::c::d`.
pub fn paths_in(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        let before = code[..at].chars().next_back();
        let fresh = !before.is_some_and(|c| ident_char(c) || c == '$' || c == ':');
        if starts && fresh {
            let len = path_len(rest);
            let line = code[..at].matches('\n').count() + 1;
            for p in flatten(&rest[..len]) {
                out.push((line, p));
            }
            at += len;
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// The length of the path starting `rest`: identifiers and `::`, with
/// `{}` groups whole.
fn path_len(rest: &str) -> usize {
    let b = rest.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && ident_char(b[i] as char) {
            i += 1;
        }
        if !rest[i..].starts_with("::") {
            return i;
        }
        i += 2;
        match b.get(i) {
            Some(b'{') => {
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return i;
            }
            Some(b'*') => return i + 1,
            _ => {}
        }
    }
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`; `self` and `*`
/// in a group name the module before them; `x as y` is `x`.
pub fn flatten(path: &str) -> Vec<String> {
    let path: String = path.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = path.find('{') else {
        let p = path.split(" as ").next().unwrap_or("").replace(' ', "");
        let p = p.trim_end_matches("::*").trim_end_matches("::self");
        return vec![p.to_owned()];
    };
    let prefix = &path[..open];
    let inner = path[open + 1..]
        .trim_end()
        .strip_suffix('}')
        .unwrap_or(&path[open + 1..]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (n, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..n]);
                start = n + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .flat_map(|p| flatten(&format!("{prefix}{p}")))
        .collect()
}

/// The names the root's `use` items bring in (re-exported or not), by the
/// first segment of the path they come from.
pub fn reexports(root: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (n, _) in root.match_indices("use ") {
        let before = root[..n].chars().next_back();
        if before.is_some_and(ident_char) {
            continue;
        }
        let Some(end) = root[n..].find(';') else {
            continue;
        };
        for p in flatten(root[n + 4..n + end].trim()) {
            let whole = root[n + 4..n + end].contains(" as ");
            let segs: Vec<&str> = p.split("::").collect();
            if segs.len() < 2 || whole {
                continue;
            }
            let name = segs[segs.len() - 1].to_owned();
            out.push((name, segs[0].to_owned()));
        }
    }
    out
}

/// The names of the items `code` defines (structs, enums, functions,
/// types, consts, statics, traits, macros).
pub fn items(code: &str) -> Vec<String> {
    const KINDS: &[&str] = &[
        "struct", "enum", "fn", "type", "const", "static", "trait", "union",
    ];
    let words: Vec<&str> = code
        .split(|c: char| !ident_char(c) && c != '!')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for w in words.windows(2) {
        if KINDS.contains(&w[0]) || w[0] == "macro_rules!" {
            out.push(w[1].trim_end_matches('!').to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_tests_are_not_code() {
        let text = "use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d // \";\nlet c = '\"'; fn f<'a>() {}\n#[cfg(test)]\nuse crate::e;\n";
        let code = code_of(text);
        let names: Vec<String> = paths_in(&code).into_iter().map(|(_, p)| p).collect();
        assert_eq!(names, ["crate::a"]);
        assert_eq!(code.matches('\n').count(), 3, "lines kept up to the tests");
        assert!(code.contains("fn f<'a>()"), "lifetimes are code: {code}");
    }

    #[test]
    fn groups_flatten_and_lines_count() {
        let code = "fn x() {}\nuse crate::{\n    a::{b, c as d},\n    e::*,\n    self,\n};\nlet y = super::super::f(1);\n$crate::no;\n";
        let got = paths_in(code);
        assert_eq!(
            got,
            [
                (2, "crate::a::b".to_owned()),
                (2, "crate::a::c".to_owned()),
                (2, "crate::e".to_owned()),
                (2, "crate".to_owned()),
                (7, "super::super::f".to_owned()),
            ]
        );
    }

    #[test]
    fn root_uses_and_items() {
        let root =
            "mod a;\npub use a::{B, C};\nuse b::D as E;\npub struct Key;\npub fn parse() {}\n";
        assert_eq!(
            reexports(root),
            [("B".into(), "a".into()), ("C".into(), "a".into())]
        );
        assert_eq!(items(root), ["Key", "parse"]);
    }
}
