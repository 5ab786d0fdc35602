//! Project tasks: `cargo xtask fixtures [--check] [--version V]... [--case C]...`
//! `cargo xtask fuzz [--time S] [--target T]...`, `cargo xtask bench` and
//! `cargo xtask dist` (the shipped binary, statically linked: `dist.rs`).
//!
//! `fixtures` regenerates `testdata/tiledb-<version>/` with the real libtiledb:
//! one Python venv per pinned TileDB-Py version under `target/tiledb-py/`,
//! `xtask/fixtures/generate.py` writes the arrays with that version, and
//! `xtask/fixtures/read.py` records what TileDB-Py reads back, both with the
//! writing version and with the newest one. The newest reader's answer is
//! the expectation; where the two disagree the case records both and why.
//! `maintained` (`maintained.rs`) records libtiledb's own maintenance
//! operations on the fixtures, for `tessera-cli`'s `tests/maintained.rs`;
//! `sequences` (`sequences.rs`) sequences of maintenance steps done by
//! tessera and libtiledb side by side, for `tests/sequences.rs`.

mod bench;
mod cases;
mod common;
mod dist;
mod fixtures;
mod floor;
mod fuzz;
mod groups;
mod maintain_async;
mod maintained;
mod maintenance;
mod random;
mod s3_maintained;
mod sequences;
mod soma;
mod write_async;
mod writes;

use common::VERSIONS;
use fixtures::{fixtures, picked_versions};
use fuzz::fuzz;

/// Large result buffers get transparent huge pages: see `tessera-alloc`.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("");
    // Benchmarks time libtiledb as users run it, with its defaults.
    if !task.starts_with("bench") && task != "floor" {
        common::without_libtiledb_tile_merge();
    }
    // The floor's buffers in heaps backed by huge pages, as `tessera read`'s.
    if task == "floor" {
        tessera_alloc::huge_heap();
    }
    let r = match args.first().map(String::as_str) {
        Some("fixtures") => fixtures(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("floor") => floor::floor(&args[1..]),
        Some("bench-write") => bench::bench_write(&args[1..]),
        Some("dist") => dist::dist(),
        Some("check-writes") => writes::check_writes(),
        Some("venvs") => common::venvs(),
        Some("check-s3-maintained") => s3_maintained::check_s3_maintained(),
        Some("write-async") => write_async::write_async(&args[1..]),
        Some("maintain-async") => maintain_async::maintain_async(&args[1..]),
        Some("consolidate-async") => maintain_async::consolidate_async(&args[1..]),
        Some("maintained") => maintained::record(&picked_versions(&args[1..])),
        Some("sequences") => sequences::record(&picked_versions(&args[1..])),
        // The maintenance sequences part of check-writes alone.
        Some("check-sequences") => sequences::check(&picked_versions(&args[1..])),
        Some("bench-consolidate") => bench::bench_consolidate(&args[1..]),
        Some("bench-s3") => bench::bench_s3(&args[1..]),
        Some("bench-ab") => bench::bench_ab(&args[1..]),
        Some("bench-s3-consolidate") => bench::bench_s3_consolidate(&args[1..]),
        Some("bench-s3-faults") => bench::bench_s3_faults(&args[1..]),
        Some("bench-dask") => bench::bench_dask(&args[1..]),
        Some("bench-python") => bench::bench_python(&args[1..]),
        Some("bench-sql") => bench::bench_sql(&args[1..]),
        Some("bench-soma") => bench::bench_soma(&args[1..]),
        Some("bench-soma-ingest") => bench::bench_soma_ingest(&args[1..]),
        // The fragment consolidation part of check-writes alone.
        Some("check-consolidation") => ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"]
            .iter()
            .try_for_each(|r| maintenance::check_fragment_consolidation(r)),
        // The maintenance part of check-writes alone.
        Some("check-maintenance") => VERSIONS
            .iter()
            .try_for_each(|r| maintenance::check_maintenance(r)),
        // The groups part of check-writes alone.
        Some("check-groups") => ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"]
            .iter()
            .try_for_each(|r| groups::check_groups(r)),
        _ => Err("usage: cargo xtask fixtures [--check | --reread] [--version V]... [--case C]... | cargo xtask fuzz [--time S] [--target T]... | cargo xtask bench [--scale S] [--rounds N] [--only TEXT] | cargo xtask bench-write [--scale S] [--rounds N] [--only TEXT] | cargo xtask bench-ab --before REV [--scale S] [--rounds N] | cargo xtask bench-consolidate [--scale S] [--rounds N] | cargo xtask bench-s3 [--scale S] [--rounds N] [--rig DIR] [--delay MS] [--mbps MB] [--only TEXT] | cargo xtask bench-s3-consolidate [--scale S] [--rounds N] [--rig DIR] | cargo xtask bench-s3-faults [--scale S] [--rounds N] [--rig DIR] [--delay MS] [--mbps MB] [--rates R,R,...] | cargo xtask bench-dask [--scale S] [--rounds N] [--cells N] | cargo xtask bench-python [--scale S] [--rounds N] | cargo xtask bench-sql [--scale S] [--rounds N] | cargo xtask bench-soma [--rounds N] [--s3 [--rig DIR] [--delay MS] [--mbps MB]] | cargo xtask bench-soma-ingest [--rounds N] [--cells N] [--large] | cargo xtask dist | cargo xtask check-writes | cargo xtask venvs | cargo xtask maintained [--version V]... | cargo xtask sequences [--version V]... | cargo xtask check-sequences [--version V]... | cargo xtask check-groups | cargo xtask check-maintenance | cargo xtask check-consolidation | cargo xtask check-s3-maintained | cargo xtask write-async URI ARROW_FILE TIMESTAMP | cargo xtask maintain-async URI | cargo xtask consolidate-async URI [--with-timestamps]".into()),
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
