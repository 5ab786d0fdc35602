//! The query crate's modules import one way only: each `crate::` path in a
//! module's code (not its comments) names a module below it in `ORDER`, or
//! a re-export of one. A new module must be placed in `ORDER`; an import
//! against the order (a cycle in the making) fails here.
//!
//! `Query` is defined low (`read`) and the readers above add methods to
//! it; a call `self.method(` to a `Query` method defined in a module above
//! the caller is the same cycle by another road, and fails here too.

use std::path::{Path, PathBuf};

/// Lowest first: a module may use only those before it.
const ORDER: &[&str] = &[
    "error",
    "gates",
    "key",
    "grammar",
    "tuning",
    "context",
    "hilbert",
    "geometry",
    "order",
    "decode",
    "unfiltered",
    "result",
    "condition",
    "enumeration",
    "prune",
    "read",
    "prefetch",
    "sparse",
    "dense",
    "execute",
    "aggregate",
    "batch",
    "arrow",
    "stream",
    "lib",
];

/// The crate root's re-exports, by the module that defines them.
const REEXPORTS: &[(&str, &str)] = &[
    ("QueryError", "error"),
    ("Key", "key"),
    ("ReadContext", "context"),
    ("Expr", "condition"),
    ("Bounds", "condition"),
    ("BoundsLookup", "condition"),
    ("FieldLookup", "condition"),
    ("Column", "result"),
    ("ReadResult", "result"),
    ("CoordinateGrid", "result"),
    ("GridCursor", "result"),
    ("GridDimension", "result"),
    ("Query", "read"),
    ("Aggregate", "aggregate"),
    ("AggregateValue", "aggregate"),
    ("Aggregates", "aggregate"),
    ("FieldBounds", "aggregate"),
    ("Batches", "batch"),
    ("extent", "batch"),
    ("Tuning", "tuning"),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a source file belongs to: its top-level module under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// The names following `crate::` in the code of `text`, comments left out.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            }
        }
        // `use crate::{a, b}` names several.
        if let Some(i) = code.find("crate::{") {
            let inner = &code[i + "crate::{".len()..];
            for name in inner.split([',', '}', ' ']).filter(|s| !s.is_empty()) {
                let name = name.split("::").next().unwrap_or("").trim();
                let ident = name.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !name.is_empty() && ident {
                    out.push((n + 1, name.to_owned()));
                }
            }
        }
    }
    out
}

#[test]
fn modules_import_only_modules_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let rank = |m: &str| ORDER.iter().position(|x| *x == m);
    let mut problems = Vec::new();
    let mut edges = 0;
    for f in &files {
        let me = module_of(&src, f);
        let Some(mine) = rank(&me) else {
            problems.push(format!("{}: module `{me}` is not in ORDER", f.display()));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (line, name) in crate_paths(&text) {
            let target = REEXPORTS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(name.as_str(), |(_, m)| m);
            if target == me || target == "self" {
                continue;
            }
            edges += 1;
            match rank(target) {
                Some(r) if r < mine => {}
                Some(_) => problems.push(format!(
                    "{}:{line}: `{me}` uses `crate::{name}` (module `{target}`), which is not below it",
                    f.display()
                )),
                None => problems.push(format!(
                    "{}:{line}: `crate::{name}` is neither a module in ORDER nor a known re-export",
                    f.display()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(edges > 30, "only {edges} imports seen: the scan is broken");
}

/// The methods each module adds to `Query` (`fn` items inside its
/// `impl Query` blocks), by name.
fn query_methods(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("impl") {
            inside = line.contains("Query<");
        } else if line.starts_with('}') {
            inside = false;
        }
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub "))
            .unwrap_or(t);
        if let (true, Some(rest)) = (inside, t.strip_prefix("fn ")) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn query_methods_are_called_only_from_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let rank = |m: &str| ORDER.iter().position(|x| *x == m).unwrap();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut defined: Vec<(String, String)> = Vec::new();
    for (m, text) in &texts {
        defined.extend(query_methods(text).into_iter().map(|n| (n, m.clone())));
    }
    assert!(
        defined.len() > 20,
        "only {} Query methods seen",
        defined.len()
    );
    let mut problems = Vec::new();
    for (me, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (name, home) in &defined {
                if home != me && code.contains(&format!("self.{name}(")) && rank(home) > rank(me) {
                    problems.push(format!(
                        "{me}:{}: calls Query::{name}, defined in `{home}` above it",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scan_sees_imports_and_skips_comments() {
    let text = "use crate::key::Key;\nuse crate::{result::Column, tiles};\n/// [`crate::read::Query`]\nlet x = crate::geometry::f(); // crate::batch\n";
    let names: Vec<String> = crate_paths(text).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["key", "result", "tiles", "geometry"]);
}

#[test]
fn the_method_scan_sees_query_impls_only() {
    let text = "impl<'a> Query<'a> {\n    pub(crate) fn dense(&self) {}\n    fn helper() {}\n}\nimpl Other {\n    fn not_mine() {}\n}\n";
    assert_eq!(query_methods(text), ["dense", "helper"]);
}
