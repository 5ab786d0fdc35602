//! The query crate's modules import one way only: each `crate::` path in a
//! module's code (not its comments) names a module below it in `ORDER`, or
//! a re-export of one, and no files import one another in a cycle
//! (`tessera_module_order::check`). A new module must be placed in `ORDER`.
//!
//! `Read` (one read as the readers run it) is defined low (`read`) and the
//! readers above add methods to it; a call `self.method(` to a `Read`
//! method defined in a module above the caller is the same cycle by another
//! road, and fails here too.

use std::path::Path;

/// Lowest first: a module may use only those before it.
const ORDER: &[&str] = &[
    "error",
    "gates",
    "tuning",
    "request",
    "context",
    "geometry",
    "decode",
    "unfiltered",
    "result",
    "enumeration",
    "prune",
    "read",
    "prefetch",
    "sparse",
    "dense",
    "execute",
    "batch",
    "partition",
    "aggregate",
    "session",
    "arrow",
    "push",
    "source",
    "stream",
];

#[test]
fn modules_import_only_modules_below_them() {
    let imports = tessera_module_order::check(env!("CARGO_MANIFEST_DIR"), ORDER);
    assert!(
        imports > 30,
        "only {imports} imports seen: the scan is broken"
    );
}

/// The methods each module adds to `Read` (`fn` items inside its
/// `impl Read` blocks), by name.
fn read_methods(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("impl") {
            inside = line.contains("Read<");
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
fn read_methods_are_called_only_from_above() {
    let krate = tessera_module_order::Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    // The root, `lib`, is above every module.
    let rank = |m: &str| ORDER.iter().position(|x| *x == m).unwrap_or(ORDER.len());
    let texts: Vec<(String, String)> = krate
        .files()
        .map(|(m, f)| {
            let top = m.first().cloned().unwrap_or_else(|| "lib".into());
            (top, std::fs::read_to_string(f).unwrap())
        })
        .collect();
    let mut defined: Vec<(String, String)> = Vec::new();
    for (m, text) in &texts {
        defined.extend(read_methods(text).into_iter().map(|n| (n, m.clone())));
    }
    assert!(
        defined.len() > 3,
        "only {} Read methods seen",
        defined.len()
    );
    let mut problems = Vec::new();
    for (me, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (name, home) in &defined {
                if home != me && code.contains(&format!("self.{name}(")) && rank(home) > rank(me) {
                    problems.push(format!(
                        "{me}:{}: calls Read::{name}, defined in `{home}` above it",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_method_scan_sees_read_impls_only() {
    let text = "impl<'a> Read<'a> {\n    pub(crate) fn dense(&self) {}\n    fn helper() {}\n}\nimpl Other {\n    fn not_mine() {}\n}\n";
    assert_eq!(read_methods(text), ["dense", "helper"]);
}

/// The executors and the resolved read each keep their methods in one
/// `impl` block, in one file: what a read does is read in one place.
#[test]
fn each_executor_has_one_impl_block() {
    let krate = tessera_module_order::Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    for ty in [
        "Read<",
        "SparseReader<",
        "DenseReader<",
        "ReadSession ",
        "Batches ",
    ] {
        let blocks: Vec<String> = krate
            .files()
            .flat_map(|(_, f)| {
                let text = std::fs::read_to_string(f).unwrap();
                let name = f.display().to_string();
                text.lines()
                    .filter(|l| {
                        l.starts_with("impl")
                            && l.contains(&format!(" {ty}"))
                            && !l.contains(" for ")
                    })
                    .map(|l| format!("{name}: {l}"))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(blocks.len(), 1, "`{ty}` impl blocks: {blocks:#?}");
    }
}
