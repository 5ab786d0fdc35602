//! A crate's files by module, and the modules their paths name.

use crate::paths::{self, code_of, paths_in};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module's path below the crate root (`["decode", "runs"]`); the root's
/// is empty.
pub type ModulePath = Vec<String>;

/// One import: a path in `from`'s file that names module `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The module whose file has the path.
    pub from: ModulePath,
    /// The deepest module the path names.
    pub to: ModulePath,
    /// The path as written (flattened out of `{}` groups).
    pub text: String,
    /// Its line in `from`'s file.
    pub line: usize,
}

/// A crate's source files by module, and the root's re-exports.
pub struct Crate {
    files: BTreeMap<ModulePath, PathBuf>,
    /// Names the root re-exports, by the top-level module they come from.
    reexports: BTreeMap<String, String>,
    /// Items the root defines itself (not re-exported).
    pub(crate) root_items: Vec<String>,
}

impl Crate {
    /// Reads the `.rs` files under `src/` of the crate at `manifest_dir`.
    pub fn read(manifest_dir: &Path) -> Crate {
        let src = manifest_dir.join("src");
        let mut found = Vec::new();
        sources(&src, &mut found);
        let files: BTreeMap<ModulePath, PathBuf> = found
            .into_iter()
            .map(|f| (module_path(&src, &f), f))
            .collect();
        let root = files
            .get(&Vec::new())
            .map(|f| code_of(&std::fs::read_to_string(f).unwrap_or_default()))
            .unwrap_or_default();
        let reexports = paths::reexports(&root)
            .into_iter()
            .filter(|(_, m)| files.contains_key(&vec![m.clone()]))
            .collect();
        let root_items = paths::items(&root);
        Crate {
            files,
            reexports,
            root_items,
        }
    }

    /// Each source file, by the module it holds.
    pub fn files(&self) -> impl Iterator<Item = (&ModulePath, &PathBuf)> {
        self.files.iter()
    }

    /// Every import of every file, each resolved to the deepest module it
    /// names (a re-export of the root to the module it comes from).
    pub fn imports(&self) -> Vec<Import> {
        let mut out = Vec::new();
        for (me, file) in &self.files {
            let code = code_of(&std::fs::read_to_string(file).unwrap_or_default());
            for (line, text) in paths_in(&code) {
                if let Some(to) = self.resolve(me, &text) {
                    if &to != me {
                        out.push(Import {
                            from: me.clone(),
                            to,
                            text,
                            line,
                        });
                    }
                }
            }
        }
        out
    }

    /// The module `path` (written in module `me`) names.
    fn resolve(&self, me: &ModulePath, path: &str) -> Option<ModulePath> {
        let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
        let mut full: ModulePath = match *segs.peek()? {
            "crate" => Vec::new(),
            "self" => me.clone(),
            "super" => {
                let mut base = me.clone();
                while segs.peek() == Some(&"super") {
                    segs.next();
                    base.pop()?;
                }
                base
            }
            _ => return None,
        };
        if matches!(segs.peek(), Some(&"crate" | &"self")) {
            segs.next();
        }
        let base_len = full.len();
        full.extend(segs.map(str::to_owned));
        let deepest = (0..=full.len())
            .rev()
            .map(|k| full[..k].to_vec())
            .find(|p| self.files.contains_key(p))?;
        if deepest.is_empty() && full.len() > base_len {
            if let Some(m) = self.reexports.get(&full[0]) {
                return Some(vec![m.clone()]);
            }
        }
        Some(deepest)
    }

    /// The crate's top-level modules.
    pub(crate) fn top_level(&self) -> Vec<String> {
        let mut tops: Vec<String> = self.files.keys().map(top).collect();
        tops.dedup();
        tops
    }
}

/// The top-level module `m` is in; `lib` for the root.
pub(crate) fn top(m: &ModulePath) -> String {
    m.first().cloned().unwrap_or_else(|| "lib".to_owned())
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under `src` holds: `a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs` and `main.rs` the root.
fn module_path(src: &Path, file: &Path) -> ModulePath {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut m: ModulePath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod"))
        || (m.len() == 1 && matches!(m[0].as_str(), "lib" | "main"))
    {
        m.pop();
    }
    m
}
