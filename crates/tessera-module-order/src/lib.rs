//! A test helper for every tessera crate: its modules import one way only.
//!
//! Each crate lists its top-level modules lowest first and calls [`check`]
//! from `tests/module_order.rs`. It fails when
//! - a `crate::`, `super::` or `self::` path (in code, not comments, and
//!   not in `#[cfg(test)]` code) goes from a top-level module to one that is
//!   not below it in the list (the crate root, `lib`, is the top), or names
//!   an item the root defines itself;
//! - the files import one another in a cycle, within a module too;
//! - a top-level module is missing from the list, or the list names one
//!   that is gone.
//!
//! A module's `mod` items and the bare paths in it to its own children are
//! its table of contents, not imports.
//!
//! ```
//! let src = std::env::temp_dir().join(format!("module-order-doc-{}", std::process::id()));
//! std::fs::create_dir_all(src.join("src")).unwrap();
//! std::fs::write(src.join("src/lib.rs"), "mod a;\nmod b;\n").unwrap();
//! std::fs::write(src.join("src/a.rs"), "pub fn f() {}\n").unwrap();
//! std::fs::write(src.join("src/b.rs"), "use crate::a::f;\n").unwrap();
//! let imports = tessera_module_order::check(src.to_str().unwrap(), &["a", "b"]);
//! assert_eq!(imports, 1);
//! # std::fs::remove_dir_all(&src).unwrap();
//! ```

mod graph;
mod import;
mod paths;

pub use import::{Crate, Import, ModulePath};

use graph::cycles;
use import::top;
use std::path::Path;

/// Checks the crate at `manifest_dir` against `order` (its top-level
/// modules, lowest first; the root, `lib`, is implied on top); panics
/// naming every problem. Returns how many imports it saw.
pub fn check(manifest_dir: &str, order: &[&str]) -> usize {
    let krate = Crate::read(Path::new(manifest_dir));
    let imports = krate.imports();
    let problems = problems(&krate, &imports, order);
    assert!(
        problems.is_empty(),
        "{manifest_dir}: modules import against the order:\n{}",
        problems.join("\n")
    );
    imports.len()
}

/// What is wrong with `krate`'s `imports` given `order`.
pub fn problems(krate: &Crate, imports: &[Import], order: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let rank = |m: &str| {
        if m == "lib" {
            Some(order.len())
        } else {
            order.iter().position(|x| *x == m)
        }
    };
    let tops = krate.top_level();
    for t in &tops {
        if rank(t).is_none() {
            problems.push(format!("module `{t}` is not in the order"));
        }
    }
    for o in order {
        if !tops.iter().any(|t| t == o) {
            problems.push(format!("the order names `{o}`, which is no module"));
        }
    }
    let shown = |m: &ModulePath| {
        if m.is_empty() {
            "lib".to_owned()
        } else {
            m.join("/")
        }
    };
    for i in imports {
        let (a, b) = (top(&i.from), top(&i.to));
        if i.to.is_empty() && !i.from.is_empty() {
            let name = i.text.rsplit("::").next().unwrap_or("");
            if krate.root_items.iter().any(|n| n == name) {
                problems.push(format!(
                    "{}:{}: `{}` names an item of the crate root: move it into a module",
                    shown(&i.from),
                    i.line,
                    i.text
                ));
            }
            continue;
        }
        if a == b {
            continue;
        }
        if let (Some(ra), Some(rb)) = (rank(&a), rank(&b)) {
            if rb >= ra {
                problems.push(format!(
                    "{}:{}: `{}` goes up, from `{a}` to `{b}`",
                    shown(&i.from),
                    i.line,
                    i.text
                ));
            }
        }
    }
    for cycle in cycles(imports) {
        let names: Vec<String> = cycle.iter().map(&shown).collect();
        let inside: Vec<String> = imports
            .iter()
            .filter(|i| cycle.contains(&i.from) && cycle.contains(&i.to))
            .map(|i| format!("  {}:{} uses `{}`", shown(&i.from), i.line, i.text))
            .collect();
        problems.push(format!(
            "files import one another in a cycle: {}\n{}",
            names.join(", "),
            inside.join("\n")
        ));
    }
    problems
}

/// A crate's module-order test: the top-level modules, lowest first.
/// Expands to a `#[test]` that calls [`check`] on the calling crate.
///
/// ```ignore
/// tessera_module_order::test!("error", "gates", "parse");
/// ```
#[macro_export]
macro_rules! test {
    ($($module:literal),* $(,)?) => {
        #[test]
        fn modules_import_one_way() {
            let order: &[&str] = &[$($module),*];
            let imports = $crate::check(env!("CARGO_MANIFEST_DIR"), order);
            assert!(
                imports + 1 >= order.len(),
                "only {imports} imports seen among {} modules: the scan is broken",
                order.len()
            );
        }
    };
}
