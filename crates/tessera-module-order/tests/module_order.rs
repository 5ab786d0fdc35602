//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!("paths", "import", "graph");

/// The Python bindings' order, checked from here: their library is an
/// extension module no Rust test harness links (`tessera-python` has no
/// Rust tests).
const PYTHON_ORDER: &[&str] = &[
    "error",
    "convert",
    "ranges",
    "read",
    "matrix",
    "registry",
    "view",
    "array",
    "group",
    "write",
    "files",
    "objects",
    "maintenance",
];

#[test]
fn the_python_bindings_import_one_way() {
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../tessera-python");
    let imports = tessera_module_order::check(python, PYTHON_ORDER);
    assert!(
        imports >= PYTHON_ORDER.len() - 1,
        "only {imports} imports seen"
    );
}

/// Source files of the workspace (Rust and Python, the xtask's scripts
/// too) are at most this many lines: past it a file holds more than one
/// concern.
const MOST_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            // Build output and virtual environments are not sources.
            if matches!(name.to_str(), Some("target" | ".venv" | "__pycache__")) {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "py") {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    walk(&root.join("crates"), &mut files);
    walk(&root.join("xtask"), &mut files);
    assert!(files.len() > 300, "only {} files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).ok()?.lines().count();
            (lines > MOST_LINES).then(|| format!("{} has {lines} lines", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}
