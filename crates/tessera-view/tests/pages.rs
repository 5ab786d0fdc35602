//! Pages of fixtures: each section is there, the fragments' shapes are
//! their non-empty domains and timestamps, and the cell pictures' pixels
//! are the cells read directly.

mod common;

use common::{elements, fixture_key, testdata};
use std::collections::HashMap;
use std::sync::Arc;
use tessera::query::{ReadRequest, ReadSession};
use tessera::schema::Value;
use tessera::storage::LocalFs;
use tessera_view::colour::ColourScale;
use tessera_view::png::{decode_rgba, unbase64, Rgba};
use tessera_view::{view, ViewOptions};

fn page(case: &str, options: &ViewOptions, key: Option<[u8; 32]>) -> String {
    let key = key.map(tessera::filters::EncryptionKey::new);
    view(&testdata(case), options, (0, u64::MAX), key)
        .unwrap_or_else(|e| panic!("{case}: {e}"))
        .document()
}

fn session(case: &str, key: Option<[u8; 32]>) -> ReadSession {
    let key = key.map(tessera::filters::EncryptionKey::new);
    ReadSession::open(Arc::new(LocalFs), &testdata(case), key).unwrap()
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bytes(_) => panic!("a string"),
    }
}

/// Cell `i`'s coordinates on the first two dimensions.
fn cell(r: &tessera::ReadResult, i: usize) -> (f64, f64) {
    let at = |k: usize| num(&Value::decode(r.columns[k].datatype, r.columns[k].value(i)));
    (at(0), at(1))
}

/// The cell image of a page, with its attributes.
fn image(html: &str) -> (Rgba, HashMap<String, String>) {
    let img = elements(html, "img", "cell-image")
        .pop()
        .expect("a cell image");
    let b64 = img["src"].strip_prefix("data:image/png;base64,").unwrap();
    (decode_rgba(&unbase64(b64).unwrap()).expect("our PNG"), img)
}

fn scale(img: &HashMap<String, String>) -> ColourScale {
    ColourScale {
        min: img["data-min"].parse().unwrap(),
        max: img["data-max"].parse().unwrap(),
        log: img["data-log"] == "true",
    }
}

#[test]
fn array_pages_have_every_section() {
    let cases = [
        "tiledb-0.36.1/dense_2d_types/array",
        "tiledb-0.36.1/random_sparse/array",
        "tiledb-0.36.1/dense_1d_fragments/array",
        "tiledb-0.36.1/consolidated/array",
        "tiledb-0.36.1/deletes_consolidated/array",
        "tiledb-0.36.1/dense_3d_overlaps/array",
        "tiledb-0.36.1/enumerations/array",
        "tiledb-0.36.1/current_domain/array",
        "tiledb-0.19.1/dense_2d_types/array",
    ];
    for case in cases {
        let html = page(case, &ViewOptions::default(), None);
        for id in [
            "array-schema",
            "array-fragments",
            "array-tiles",
            "array-cells",
        ] {
            assert!(html.contains(&format!(r#"id="{id}""#)), "{case}: no {id}");
        }
        assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
        assert!(!html.contains("<script"), "{case}: a page has no script");
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{case}: nothing from the network"
        );
        let s = session(case, None);
        let schema = &s.array().schema;
        for a in &schema.attributes {
            assert!(
                html.contains(&format!("<td class=\"name\">{}</td>", a.name)),
                "{case}: {}",
                a.name
            );
        }
        for d in &schema.dimensions {
            assert!(
                html.contains(&format!("<td class=\"name\">{}</td>", d.name)),
                "{case}: {}",
                d.name
            );
        }
        assert_eq!(
            elements(&html, "rect", "fragment-time").len(),
            s.array().fragments.len()
                + s.array()
                    .skipped
                    .iter()
                    .filter(|f| f.reason.contains("vacuum"))
                    .count(),
            "{case}"
        );
    }
}

#[test]
fn every_fixture_of_every_release_renders() {
    let mut n = 0;
    for release in [
        "tiledb-0.19.1",
        "tiledb-0.23.5",
        "tiledb-0.25.1",
        "tiledb-0.31.1",
        "tiledb-0.36.1",
    ] {
        for e in std::fs::read_dir(testdata(release)).unwrap() {
            let case = e.unwrap().file_name().into_string().unwrap();
            let rel = format!("{release}/{case}");
            let Ok(text) = std::fs::read_to_string(testdata(&rel).join("expected.json")) else {
                continue;
            };
            let key = text.contains("\"key\"").then(|| fixture_key(&rel));
            let options = ViewOptions {
                budget: 1 << 20,
                ..ViewOptions::default()
            };
            let html = page(&format!("{rel}/array"), &options, key);
            assert!(html.contains(r#"id="array-fragments""#), "{rel}");
            n += 1;
        }
    }
    assert!(n > 300, "only {n} fixtures");
}

#[test]
fn fragment_shapes_are_their_domains_and_times() {
    for case in [
        "tiledb-0.36.1/random_sparse/array",
        "tiledb-0.36.1/dense_3d_overlaps/array",
        "tiledb-0.36.1/dense_1d_fragments/array",
    ] {
        let html = page(case, &ViewOptions::default(), None);
        let s = session(case, None);
        let a = s.array();
        let dims = &a.schema.dimensions;
        // Drawn: the first two dimensions, the first down the page.
        let drawn: Vec<usize> = (0..dims.len().min(2)).collect();
        let rects = elements(&html, "rect", "fragment-domain");
        assert_eq!(rects.len(), a.fragments.len(), "{case}");
        let times = elements(&html, "rect", "fragment-time");
        for f in &a.fragments {
            let r = rects
                .iter()
                .find(|r| r["data-fragment"] == f.name)
                .expect("drawn");
            let ned = f.footer.non_empty_domain.as_ref().unwrap();
            let bound = |i: usize, hi: bool| {
                let b = if hi { &ned[i].hi } else { &ned[i].lo };
                num(&Value::decode(dims[i].datatype, b))
            };
            let lo: Vec<f64> = r["data-lo"]
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect();
            let hi: Vec<f64> = r["data-hi"]
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect();
            assert_eq!(
                lo,
                drawn.iter().map(|&i| bound(i, false)).collect::<Vec<_>>(),
                "{case} {}",
                f.name
            );
            assert_eq!(
                hi,
                drawn.iter().map(|&i| bound(i, true)).collect::<Vec<_>>(),
                "{case} {}",
                f.name
            );
            let t = times
                .iter()
                .find(|t| t["data-fragment"] == f.name)
                .expect("on the timeline");
            let (t1, t2) = f.timestamp_range();
            assert_eq!(
                (
                    t["data-t1"].parse::<u64>().unwrap(),
                    t["data-t2"].parse::<u64>().unwrap()
                ),
                (t1, t2)
            );
        }
    }
}

#[test]
fn overlaps_and_consolidation_are_said() {
    let html = page(
        "tiledb-0.36.1/random_sparse/array",
        &ViewOptions::default(),
        None,
    );
    assert!(html.contains("would merge all 5 fragments"), "{html}");
    assert!(html.contains("pair(s) of fragments overlap"));
    // A consolidated fragment and the ones it replaced, not yet vacuumed.
    let html = page(
        "tiledb-0.36.1/consolidated/array",
        &ViewOptions::default(),
        None,
    );
    let s = session("tiledb-0.36.1/consolidated/array", None);
    let replaced: Vec<&str> = s
        .array()
        .skipped
        .iter()
        .filter(|f| f.reason.contains("vacuum"))
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(replaced.len(), 3);
    assert!(html.contains("3 fragment(s) replaced by consolidation wait for vacuum"));
    for name in replaced {
        let r = elements(&html, "rect", "fragment-domain");
        let r = r
            .iter()
            .find(|r| r["data-fragment"] == name)
            .expect("replaced ones drawn");
        assert_eq!(r["stroke-dasharray"], "4 3");
    }
    assert!(html.contains("<td>consolidated, metadata consolidated</td>"));
    // Vacuumed: nothing waits.
    let html = page(
        "tiledb-0.36.1/consolidated_versions_vacuumed/array",
        &ViewOptions::default(),
        None,
    );
    assert!(
        !html.contains("wait for vacuum") && html.contains("One fragment: nothing to consolidate.")
    );
}

#[test]
fn dense_image_pixels_are_the_cells() {
    let case = "tiledb-0.36.1/dense_2d_types/array";
    let s = session(case, None);
    let all = s.execute(&ReadRequest::new()).unwrap();
    for attr in ["i32", "u8", "f64", "dt"] {
        let options = ViewOptions {
            attribute: Some(attr.into()),
            ..ViewOptions::default()
        };
        let html = page(case, &options, None);
        let (img, attrs) = image(&html);
        let sc = scale(&attrs);
        let (ylo, xlo): (f64, f64) = (
            attrs["data-y-lo"].parse().unwrap(),
            attrs["data-x-lo"].parse().unwrap(),
        );
        let col = all.columns.iter().find(|c| c.name == attr).unwrap();
        let mut checked = 0;
        for i in 0..all.cell_count {
            let (r, c) = cell(&all, i);
            let v = num(&Value::decode(col.datatype, col.value(i)));
            let want = if v.is_nan() { [0; 4] } else { sc.rgba(v) };
            assert_eq!(
                img.get((c - xlo) as u32, (r - ylo) as u32),
                want,
                "{attr} at ({r}, {c}) = {v}"
            );
            checked += 1;
        }
        assert_eq!(
            checked as u32,
            img.width * img.height,
            "{attr}: one pixel a cell"
        );
    }
}

#[test]
fn downsampled_dense_image_is_the_mean_of_its_cells() {
    let case = "tiledb-0.36.1/dense_large/array";
    let options = ViewOptions {
        max_pixels: 7,
        budget: 64 << 10,
        ..ViewOptions::default()
    };
    let html = page(case, &options, None);
    let (img, attrs) = image(&html);
    let sc = scale(&attrs);
    let s = session(case, None);
    let a = &s.array().schema.attributes[0].name;
    let all = s
        .execute(&ReadRequest::new().attributes([a.clone()]))
        .unwrap();
    let axis = |k: &str| -> (f64, f64) {
        (
            attrs[&format!("data-{k}-lo")].parse().unwrap(),
            attrs[&format!("data-{k}-hi")].parse().unwrap(),
        )
    };
    let ((ylo, yhi), (xlo, xhi)) = (axis("y"), axis("x"));
    let bin = |v: f64, lo: f64, hi: f64, n: u32| {
        (((v - lo) / (hi - lo + 1.0) * n as f64) as u32).min(n - 1)
    };
    let mut sums = vec![(0.0, 0u64); (img.width * img.height) as usize];
    let n = all.cell_count;
    for i in 0..n {
        let (r, c) = cell(&all, i);
        let v = num(&Value::decode(
            all.columns[2].datatype,
            all.columns[2].value(i),
        ));
        let p = (bin(r, ylo, yhi, img.height) * img.width + bin(c, xlo, xhi, img.width)) as usize;
        sums[p].0 += v;
        sums[p].1 += 1;
    }
    assert!(img.width <= 7 && img.height <= 7 && n > 49, "downsampled");
    for (p, (sum, count)) in sums.iter().enumerate() {
        let (x, y) = (p as u32 % img.width, p as u32 / img.width);
        assert_eq!(
            img.get(x, y),
            sc.rgba(sum / *count as f64),
            "pixel ({x}, {y})"
        );
    }
}

#[test]
fn sparse_density_counts_the_cells() {
    let case = "tiledb-0.36.1/random_sparse/array";
    let html = page(case, &ViewOptions::default(), None);
    let (img, attrs) = image(&html);
    let sc = scale(&attrs);
    let s = session(case, None);
    let all = s
        .execute(&ReadRequest::new().attributes(Vec::<String>::new()))
        .unwrap();
    let (ylo, xlo): (f64, f64) = (
        attrs["data-y-lo"].parse().unwrap(),
        attrs["data-x-lo"].parse().unwrap(),
    );
    let mut counts = vec![0u32; (img.width * img.height) as usize];
    for i in 0..all.cell_count {
        let (r, c) = cell(&all, i);
        counts[((r - ylo) as u32 * img.width + (c - xlo) as u32) as usize] += 1;
    }
    assert_eq!(counts.iter().sum::<u32>() as usize, all.cell_count);
    for (p, &k) in counts.iter().enumerate() {
        let want = if k == 0 { [0; 4] } else { sc.rgba(k as f64) };
        assert_eq!(img.pixels[p], want, "pixel {p}: {k} cells");
    }
}

#[test]
fn group_pages_list_members_and_link_their_sections() {
    for case in [
        "groups/tiledb-0.36.1/group_nested/group",
        "soma/experiment_dense/experiment",
    ] {
        let html = page(case, &ViewOptions::default(), None);
        let g = tessera::open_group(testdata(case), None).unwrap();
        let listed = g.list(&LocalFs, true).unwrap();
        let items = elements(&html, "li", "member");
        let paths: Vec<&str> = items.iter().map(|m| m["data-path"].as_str()).collect();
        assert_eq!(
            paths,
            listed.iter().map(|m| m.path.as_str()).collect::<Vec<_>>(),
            "{case}"
        );
        for m in &listed {
            let id = format!("m-{}", tessera_view::html::slug(&m.path));
            let is_array = m.object_type == tessera::fragment::group::ObjectType::Array;
            assert_eq!(
                html.contains(&format!(r##"href="#{id}""##)),
                is_array,
                "{case} {}",
                m.path
            );
            assert_eq!(
                html.contains(&format!(r#"<section class="array" id="{id}">"#)),
                is_array
            );
            if is_array {
                assert!(html.contains(&format!(r#"id="{id}-cells""#)));
            }
        }
    }
    let html = page(
        "soma/experiment_dense/experiment",
        &ViewOptions::default(),
        None,
    );
    assert!(html.contains("<p>SOMAExperiment: "));
    let kind = |p: &str| {
        let items = elements(&html, "li", "member");
        items
            .iter()
            .find(|m| m["data-path"] == p)
            .map(|m| m["data-kind"].clone())
    };
    assert_eq!(kind("obs").as_deref(), Some("SOMADataFrame"));
    assert_eq!(kind("ms/RNA").as_deref(), Some("SOMAMeasurement"));
    assert_eq!(kind("ms/RNA/X/data").as_deref(), Some("SOMADenseNDArray"));
}

#[test]
fn encrypted_arrays_need_their_key() {
    for case in [
        "tiledb-0.36.1/encrypted",
        "tiledb-0.36.1/encrypted_fragments",
    ] {
        let key = fixture_key(case);
        let html = page(&format!("{case}/array"), &ViewOptions::default(), Some(key));
        assert!(html.contains(r#"id="array-cells""#) && html.contains("data:image/png"));
        let path = testdata(&format!("{case}/array"));
        assert!(view(&path, &ViewOptions::default(), (0, u64::MAX), None).is_err());
    }
}

#[test]
fn options_naming_what_the_array_lacks_are_refused() {
    let path = testdata("tiledb-0.36.1/dense_2d_types/array");
    let bad = [
        ViewOptions {
            attribute: Some("nope".into()),
            ..ViewOptions::default()
        },
        ViewOptions {
            attribute: Some("utf8".into()),
            ..ViewOptions::default()
        },
        ViewOptions {
            dims: Some(vec!["z".into()]),
            ..ViewOptions::default()
        },
        ViewOptions {
            subarray: vec![("r".into(), "x".into(), "2".into())],
            ..ViewOptions::default()
        },
    ];
    let said = [
        "attribute `nope`",
        "`utf8` is not one number",
        "dimension `z`",
        "subarray on `r`",
    ];
    for (o, s) in bad.iter().zip(said) {
        let e = view(&path, o, (0, u64::MAX), None).unwrap_err().to_string();
        assert!(e.contains(s), "{e}");
    }
    // A subarray narrows the picture; a dimension drawn alone is a strip.
    let o = ViewOptions {
        subarray: vec![("r".into(), "1".into(), "2".into())],
        dims: Some(vec!["c".into()]),
        ..ViewOptions::default()
    };
    let html = view(&path, &o, (0, u64::MAX), None).unwrap().document();
    let (img, attrs) = image(&html);
    assert_eq!((img.width, img.height), (6, 1));
    assert_eq!(attrs["data-x-dim"], "c");
    assert!(html.contains("at r = 1"));
}

#[test]
fn tile_marks_add_up_to_the_fragments() {
    for case in [
        "tiledb-0.36.1/dense_large/array",
        "tiledb-0.36.1/random_sparse/array",
        "tiledb-0.36.1/dense_3d_overlaps/array",
    ] {
        let s = session(case, None);
        let a = s.array();
        let cells: u64 = a
            .fragments
            .iter()
            .map(|f| (0..f.tile_count()).map(|t| f.cell_num(t)).sum::<u64>())
            .sum();
        let bytes: u64 = a
            .fragments
            .iter()
            .map(|f| {
                let ft = &f.footer;
                ft.file_sizes
                    .iter()
                    .chain(&ft.file_var_sizes)
                    .chain(&ft.file_validity_sizes)
                    .sum::<u64>()
            })
            .sum();
        for max in [4096, 3] {
            let options = ViewOptions {
                max_tile_marks: max,
                ..ViewOptions::default()
            };
            let html = page(case, &options, None);
            let marks = elements(&html, "rect", "tile");
            let sum = |k: &str| {
                marks
                    .iter()
                    .map(|m| m[k].parse::<u64>().unwrap())
                    .sum::<u64>()
            };
            assert_eq!(
                (sum("data-cells"), sum("data-bytes")),
                (cells, bytes),
                "{case}, at most {max} marks"
            );
            assert_eq!(html.contains("tiles summed into bins"), max == 3, "{case}");
        }
    }
}
