//! Headless Chromium opens rendered pages: each loads without errors, its
//! sections are in the DOM, and its screenshot is a picture (not blank,
//! with the cell image's colours in it, so the inline PNG was drawn).
//!
//! Chromium is Debian's `chromium` package, which `.ci/run` installs; a
//! run without it passes only outside CI (it says so). With
//! `TESSERA_SCREENSHOTS=DIR` the screenshots are kept there (docs/view/).

mod common;

use common::{elements, testdata};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_view::png::{decode_rgba, unbase64};
use tessera_view::{view, ViewOptions};

fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("TESSERA_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    match p.exists() {
        true => Some(p),
        false if std::env::var_os("CI").is_some() => {
            panic!(
                "{}: no Chromium (CI installs Debian's chromium)",
                p.display()
            )
        }
        false => None,
    }
}

/// Runs Chromium headless on `page` with `extra` arguments; its stdout and
/// stderr.
fn run(browser: &Path, page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("Chromium runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}: {stderr}", page.display());
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn chromium_draws_each_kind_of_page() {
    let Some(browser) = chromium() else {
        eprintln!("no Chromium: the browser test did not run");
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("view-browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pages = [
        ("dense", "tiledb-0.36.1/dense_3d_overlaps/array"),
        ("sparse", "tiledb-0.36.1/random_sparse/array"),
        ("group", "soma/experiment_dense/experiment"),
    ];
    for (kind, case) in pages {
        let page = view(
            &testdata(case),
            &ViewOptions::default(),
            (0, u64::MAX),
            None,
        )
        .unwrap();
        // Paths shown from the repository's root, as in the docs.
        let root = format!(
            "{}/",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .display()
        );
        let html = page.document().replace(&root, "");
        let file = dir.join(format!("{kind}.html"));
        std::fs::write(&file, &html).unwrap();
        let profile = dir.join(format!("profile-{kind}"));
        // Loaded: the DOM the browser built has every section.
        let (dom, log) = run(&browser, &file, &profile, &["--dump-dom"]);
        for class in ["schema", "fragments", "tiles", "cells"] {
            assert!(
                dom.contains(&format!(r#"<section class="{class}""#)),
                "{kind}: no {class} in the DOM"
            );
        }
        let errors: Vec<&str> = log
            .lines()
            .filter(|l| {
                l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Not allowed to load")
            })
            .collect();
        assert!(errors.is_empty(), "{kind}: {errors:?}");
        // Drawn: the screenshot is a picture holding the cell image's colours.
        let shot = dir.join(format!("{kind}.png"));
        run(
            &browser,
            &file,
            &profile,
            &[
                "--window-size=1100,4000",
                &format!("--screenshot={}", shot.display()),
            ],
        );
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
            .chunks(channels)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        let colours: HashSet<[u8; 3]> = pixels.iter().copied().collect();
        let inked = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
        assert!(colours.len() > 50, "{kind}: {} colours", colours.len());
        assert!(
            inked * 20 > pixels.len(),
            "{kind}: {inked} of {} pixels inked",
            pixels.len()
        );
        let img = elements(&html, "img", "cell-image").pop().unwrap();
        let ours = decode_rgba(
            &unbase64(img["src"].strip_prefix("data:image/png;base64,").unwrap()).unwrap(),
        )
        .unwrap();
        let drawn: HashSet<[u8; 3]> = ours
            .pixels
            .iter()
            .filter(|p| p[3] == 255)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        let shown = drawn.iter().filter(|c| colours.contains(*c)).count();
        assert!(
            shown * 2 >= drawn.len(),
            "{kind}: {shown} of the image's {} colours on screen",
            drawn.len()
        );
        if let Some(keep) = std::env::var_os("TESSERA_SCREENSHOTS") {
            // Kept down to the last inked row.
            let width = info.width as usize;
            let last = pixels
                .iter()
                .rposition(|p| *p != [255, 255, 255])
                .unwrap_or(0)
                / width;
            let height = (last + 24).min(info.height as usize);
            std::fs::create_dir_all(&keep).unwrap();
            let file = std::fs::File::create(Path::new(&keep).join(format!("{kind}.png"))).unwrap();
            let mut enc =
                png::Encoder::new(std::io::BufWriter::new(file), info.width, height as u32);
            enc.set_color(info.color_type);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&buf[..height * width * channels])
                .unwrap();
        }
    }
}
