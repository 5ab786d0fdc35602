//! The writer against libtiledb's own fragments: each single fragment a
//! TileDB-Py release wrote into a fixture is read back (sparse: in global
//! order; dense: its non-empty domain) and written again by tessera into a copy of the array's
//! schema; every file tessera writes must be byte for byte the file
//! libtiledb wrote: the data files (tiles cut at the capacity, filtered),
//! and the fragment metadata (R-tree, tile offsets, tile mins, maxes, sums
//! and null counts, the fragment summary, the footer), filtered as the
//! release that wrote the fixture filters (formats 16 to 22, libtiledb 2.13
//! to 2.30). libtiledb 2.13 linked an older libzstd whose frames differ for
//! some tiles: for its fixtures the fragment is compared by content instead
//! (the cells read back, and every metadata section but the tile offsets
//! and file sizes those frames move). Encrypted fixtures are left out
//! (random IVs): they are read back in `cargo xtask check-writes`.

mod common;

use common::copy_dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_filters::gates::LibtiledbRelease;
use tessera_fragment::{Field, OpenArray};
use tessera_query::{ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::LocalFs;
use tessera_tile::{ArrayType, Layout};
use tessera_write::{FragmentWriter, WriteOptions};

/// The fixtures of every TileDB-Py release: formats 16 (libtiledb 2.13)
/// to 22 (2.30).
fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut v: Vec<PathBuf> = ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"]
        .iter()
        .flat_map(|r| {
            std::fs::read_dir(root.join(format!("tiledb-{r}")))
                .unwrap()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| p.join("array/__schema").is_dir())
        .collect();
    v.sort();
    v
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The first libtiledb release whose libzstd writes the frames ours does.
const SAME_LIBZSTD: LibtiledbRelease = LibtiledbRelease::new(2, 17);

fn kind(dense: bool) -> &'static str {
    if dense {
        " dense"
    } else {
        ""
    }
}

/// How a rewritten fragment is compared with libtiledb's.
#[derive(Clone, Copy)]
enum Compare {
    /// Every file byte for byte.
    Bytes,
    /// The cells read back, and every metadata section that compressed
    /// sizes do not move (libtiledb 2.13's libzstd frames some tiles
    /// otherwise): R-tree, summary, tile mins, maxes, sums, null counts
    /// and var sizes, of the fields `metadata` says.
    Content {
        metadata: fn(&OpenArray, Field) -> bool,
    },
}

fn every_field(_: &OpenArray, _: Field) -> bool {
    true
}

fn no_field(_: &OpenArray, _: Field) -> bool {
    false
}

/// Fields other than var-sized attributes.
fn fixed_fields(a: &OpenArray, f: Field) -> bool {
    match f {
        Field::Attribute(i) => !a.schema.attributes[i].is_var(),
        _ => true,
    }
}

/// How fragment `frag` of `array` (written by `release`) can be compared.
fn comparison(array: &OpenArray, frag: usize, release: LibtiledbRelease) -> Compare {
    use tessera_filters::FilterType as F;
    let f = &array.fragments[frag];
    let (t1, t2) = f.timestamp_range();
    let lossy = array
        .schema
        .attributes
        .iter()
        .any(|a| a.filters.has(F::ScaleFloat) || a.filters.has(F::Webp));
    let reordered = f.footer.dense
        && array.schema.dimensions.len() > 1
        && array.schema.cell_order != Layout::RowMajor;
    let folded = f.footer.dense
        && array
            .schema
            .attributes
            .iter()
            .any(|a| a.is_var() && a.filters.offsets_in_data(a.datatype, array.schema.version));
    if lossy || (f.footer.dense && t1 != t2) {
        // FLOAT_SCALE: libtiledb's tile metadata is of the values before
        // scaling, which the fragment no longer holds; WEBP: tessera's
        // encoder is lossless, libwebp's bytes are its own; a dense
        // fragment consolidation wrote pads its tiles with fill values,
        // where a write pads with zeros. The cells must still read the same.
        Compare::Content { metadata: no_field }
    } else if reordered || folded {
        // Cells written row-major into col-major tiles, or strings whose
        // filters take their offsets: libtiledb's var-sized tile maximums
        // after the first tile there are zeros, not the cells' maximums.
        Compare::Content {
            metadata: fixed_fields,
        }
    } else if release < SAME_LIBZSTD {
        Compare::Content {
            metadata: every_field,
        }
    } else {
        Compare::Bytes
    }
}

/// How the fragment of `ours` (one fragment) differs from the one of
/// `theirs` in content: the cells it reads back (against `cells`, read
/// from theirs) and the metadata sections `metadata` selects.
fn content_differences(
    name: &str,
    (ours, theirs): (&Arc<OpenArray>, &OpenArray),
    cells: &tessera_query::ReadResult,
    metadata: fn(&OpenArray, Field) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let back = cells_of(ours);
    for (a, b) in back.columns.iter().zip(&cells.columns) {
        if (&a.data, &a.offsets, &a.validity) != (&b.data, &b.offsets, &b.validity) {
            out.push(format!("{name}: field {} reads back other cells", a.name));
        }
    }
    let (o, t) = (&ours.fragments[0], &theirs.fragments[0]);
    let s = &LocalFs;
    if o.rtree(s).unwrap() != t.rtree(s).unwrap() {
        out.push(format!("{name}: R-tree differs"));
    }
    let fields: Vec<Field> = (0..o.schema.attributes.len())
        .map(Field::Attribute)
        .chain((0..o.schema.dimensions.len()).map(Field::Dimension))
        .collect();
    let all = fields.iter().all(|&f| metadata(theirs, f));
    if all && o.fragment_summary(s).unwrap() != t.fragment_summary(s).unwrap() {
        out.push(format!("{name}: fragment summary differs"));
    }
    for f in fields.into_iter().filter(|&f| metadata(theirs, f)) {
        let same = o.tile_mins(s, f).unwrap() == t.tile_mins(s, f).unwrap()
            && o.tile_maxes(s, f).unwrap() == t.tile_maxes(s, f).unwrap()
            && o.tile_sums(s, f).unwrap() == t.tile_sums(s, f).unwrap()
            && o.tile_null_counts(s, f).unwrap() == t.tile_null_counts(s, f).unwrap();
        let idx = o.field_index(f).unwrap();
        if !same || o.tile_var_sizes(s, idx).unwrap() != t.tile_var_sizes(s, idx).unwrap() {
            out.push(format!("{name}: tile metadata of {f:?} differs"));
        }
    }
    out
}

/// A read of the cells of `array`'s one fragment: in global order
/// (sparse), or its non-empty domain (dense, whose writer takes any order).
fn cells_of(array: &Arc<OpenArray>) -> ReadResult {
    let frag = &array.fragments[0];
    let q = ReadRequest::new();
    let q = if !frag.footer.dense {
        q.layout(Layout::GlobalOrder)
    } else {
        let ned = frag.footer.non_empty_domain.as_ref().unwrap();
        let dims = array.schema.dimensions.iter().zip(ned);
        dims.fold(q.layout(Layout::RowMajor), |q, (d, r)| {
            let key = |b: &[u8]| Value::decode(d.datatype, b);
            q.range(&d.name, key(&r.lo), key(&r.hi))
        })
    };
    let session = ReadSession::new(Arc::new(LocalFs), array.clone());
    session.execute(&q).unwrap()
}

/// How the cells go to the writer.
#[derive(Clone, Copy)]
enum Via {
    /// Every field, dimensions too ([`FragmentWriter::write`]).
    Coordinates,
    /// The attributes of the non-empty domain's box, row-major
    /// ([`FragmentWriter::write_box`]).
    Box,
}

impl Via {
    fn suffix(self) -> &'static str {
        match self {
            Via::Coordinates => "",
            Via::Box => " box",
        }
    }

    fn write(self, w: &mut FragmentWriter, at: &OpenArray, cells: &tessera_query::ReadResult) {
        match self {
            Via::Coordinates => w.write(&cells.columns).unwrap(),
            Via::Box => {
                let ned = at.fragments[0].footer.non_empty_domain.as_ref().unwrap();
                let bounds: Vec<(i128, i128)> = ned
                    .iter()
                    .zip(&at.schema.dimensions)
                    .map(|(r, d)| {
                        let int = |b: &[u8]| Value::decode(d.datatype, b).as_int().unwrap();
                        (int(&r.lo), int(&r.hi))
                    })
                    .collect();
                let attrs = cells.columns.iter().filter(|c| !c.is_dimension).cloned();
                w.write_box(&bounds, attrs.collect()).unwrap();
            }
        }
    }
}

/// The libtiledb release that wrote a fixture.
fn release_of(case: &Path) -> LibtiledbRelease {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
            .unwrap();
    let v = expected["writer"]["libtiledb"]
        .as_str()
        .or(expected["libtiledb"].as_str())
        .unwrap();
    LibtiledbRelease::parse(v).unwrap()
}

#[test]
fn rewritten_fragments_are_libtiledbs_bytes() {
    let scratch = std::env::temp_dir().join(format!("tessera-rewrite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for case in fixtures() {
        let release = case
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let name = format!("{release}/{}", case.file_name().unwrap().to_string_lossy());
        let array = case.join("array");
        let Ok(opened) = OpenArray::open(&LocalFs, &array, 0, u64::MAX, None) else {
            continue; // encrypted
        };
        // Fragments of the latest schema, each alone at its timestamps.
        let updates = opened.delete_conditions.len();
        if updates != 0 {
            continue;
        }
        let dense = opened.schema.array_type == ArrayType::Dense;
        for frag in &opened.fragments {
            let (t1, t2) = frag.timestamp_range();
            let alone = opened
                .fragments
                .iter()
                .filter(|f| f.timestamp_range() == (t1, t2))
                .count()
                == 1;
            let latest = frag.footer.schema_name.as_deref() == Some(opened.schema.name.as_str());
            let special = frag.footer.has_timestamps || frag.footer.has_delete_meta;
            if !alone || !latest || special || frag.footer.dense != dense {
                continue;
            }
            let at = Arc::new(OpenArray::open(&LocalFs, &array, t1, t2, None).unwrap());
            let result = cells_of(&at);
            // Dense fragments both with coordinates and as a box.
            let ways: &[Via] = if dense {
                &[Via::Coordinates, Via::Box]
            } else {
                &[Via::Coordinates]
            };
            for via in ways {
                let out = scratch.join(format!("{name}-{t1}{}", via.suffix()));
                copy_dir(&array.join("__schema"), &out.join("__schema"));
                let options = WriteOptions {
                    libtiledb: Some(release_of(&case)),
                    ..Default::default()
                };
                let mut w = FragmentWriter::try_new(&out, options).unwrap();
                via.write(&mut w, &at, &result);
                let written = match w.finish() {
                    Ok(names) => names.into_iter().next().unwrap(),
                    Err(e) => {
                        failures.push(format!("{name}@{t1}: {e}"));
                        continue;
                    }
                };
                let theirs = files(&array.join("__fragments").join(&frag.name));
                let ours = files(&out.join("__fragments").join(&written));
                let names =
                    |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                if names(&theirs) != names(&ours) {
                    failures.push(format!(
                        "{name}: files {:?}, libtiledb's {:?}",
                        names(&ours),
                        names(&theirs)
                    ));
                    continue;
                }
                let index = opened
                    .fragments
                    .iter()
                    .position(|f| f.name == frag.name)
                    .unwrap();
                if let Compare::Content { metadata } = comparison(&opened, index, release_of(&case))
                {
                    let ours_at = OpenArray::open(&LocalFs, &out, 0, u64::MAX, None).unwrap();
                    let pair = (&Arc::new(ours_at), &*at);
                    failures.extend(content_differences(&name, pair, &result, metadata));
                    checked.push(format!(
                        "{name}@{t1}{} (content{})",
                        via.suffix(),
                        kind(dense)
                    ));
                    continue;
                }
                for ((file, a), (_, b)) in ours.iter().zip(&theirs) {
                    if a != b {
                        let at = a
                            .iter()
                            .zip(b)
                            .position(|(x, y)| x != y)
                            .unwrap_or(a.len().min(b.len()));
                        failures.push(format!(
                            "{name}-{t1}/{file}: {} bytes, libtiledb's {}; first difference at {at}",
                            a.len(),
                            b.len()
                        ));
                    }
                }
                checked.push(format!("{name}@{t1}{}{}", via.suffix(), kind(dense)));
            }
        }
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    assert!(
        failures.is_empty(),
        "checked {checked:?}\n{}",
        failures.join("\n")
    );
    let dense = checked
        .iter()
        .filter(|c| c.ends_with("dense") || c.ends_with("dense)"))
        .count();
    let content = checked.iter().filter(|c| c.contains("(content")).count();
    eprintln!(
        "{} fragments, {dense} dense, {content} compared by content",
        checked.len()
    );
    assert!(
        dense >= 50 && checked.len() - dense >= 100,
        "{} fragments: {checked:?}",
        checked.len()
    );
}
