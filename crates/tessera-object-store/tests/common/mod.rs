#![allow(dead_code)] // Each test file uses some of these.
//! Fixtures copied into a memory store, and the requests a storage sent
//! as lines to compare.

use std::path::Path;
use tessera_object_store::{
    ListableStorage, ObjectStorage, ReadableStorage, Request, WritableStorage,
};

/// `case` of TileDB-Py 0.36.1 copied into a memory store.
pub fn stored(case: &str) -> (ObjectStorage, String) {
    stored_from("0.36.1", case)
}

/// `case` of TileDB-Py `release` copied into a memory store of its own.
pub fn stored_from(release: &str, case: &str) -> (ObjectStorage, String) {
    let storage = ObjectStorage::for_uri("memory://fixtures").unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../testdata/tiledb-{release}"))
        .join(case)
        .join("array");
    let uri = format!("memory://fixtures/{case}");
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&root).unwrap();
                let key = Path::new(&uri).join(rel);
                storage.put(&key, &std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
    (storage.fresh(), uri)
}

/// The requests as lines, `call: METHOD key range`, the storage's calls
/// numbered from 0 and sorted within each.
pub fn plan(requests: Vec<Request>) -> Vec<String> {
    let mut r = requests;
    let mut calls: Vec<usize> = r.iter().map(|q| q.call).collect();
    calls.dedup();
    r.sort_by(|a, b| (a.call, &a.key, &a.range).cmp(&(b.call, &b.key, &b.range)));
    r.iter()
        .map(|q| {
            let n = calls.iter().position(|c| *c == q.call).unwrap_or(0);
            format!("{n}: {q}")
        })
        .collect()
}

/// As [`plan`], for work that runs calls side by side, whose calls then
/// interleave in no set order: sparse fragments read from several threads
/// (`GET`), and a fragment's data files finished at once (`PUT`s of its
/// `.tdb` files but its metadata). Each run of such calls is ordered by
/// what the calls ask, not when they started; every other call (a
/// fragment's metadata, its commit, listings, deletes) keeps its place.
#[allow(dead_code)] // not every test file takes such plans
pub fn plan_side_by_side(mut requests: Vec<Request>) -> Vec<String> {
    let side_by_side = |r: &Request| {
        let data_file = r.key.contains("/__fragments/")
            && r.key.ends_with(".tdb")
            && !r.key.ends_with("/__fragment_metadata.tdb");
        r.method == "GET" || (r.method == "PUT" && data_file)
    };
    // Requests of calls in flight together interleave in the log.
    requests.sort_by_key(|r| r.call);
    let mut calls: Vec<Vec<Request>> = Vec::new();
    for r in requests {
        match calls.last_mut() {
            Some(c) if c[0].call == r.call => c.push(r),
            _ => calls.push(vec![r]),
        }
    }
    for c in &mut calls {
        c.sort_by(|a, b| (&a.key, &a.range).cmp(&(&b.key, &b.range)));
    }
    let content = |c: &Vec<Request>| -> Vec<String> { c.iter().map(|r| r.to_string()).collect() };
    let mut start = 0;
    while start < calls.len() {
        let mut end = start;
        while end < calls.len() && calls[end].iter().all(side_by_side) {
            end += 1;
        }
        calls[start..end].sort_by_key(content);
        start = end.max(start + 1);
    }
    calls
        .iter()
        .enumerate()
        .flat_map(|(n, c)| c.iter().map(move |r| format!("{n}: {r}")))
        .collect()
}

/// Every object below `folder`, by path below it (UUIDs of new names
/// replaced), with its bytes.
pub fn objects(storage: &ObjectStorage, folder: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = (files(storage, folder).into_iter())
        .map(|(name, bytes)| (without_uuids(&name), bytes))
        .collect();
    out.sort();
    out
}

/// `line` with each uuid (32 hex digits) of a file name written as
/// `<uuid>`: new fragments and commits are named with random ones.
pub fn without_uuids(line: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in line.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() {
            run.push(c);
            continue;
        }
        match run.len() {
            32 => out.push_str("<uuid>"),
            _ => out.push_str(&run),
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// Every file below `folder`, by path below it, with its bytes, sorted.
pub fn files(storage: &ObjectStorage, folder: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = Path::new(folder).join(&rel);
        for e in storage.list(&dir).unwrap() {
            let name = Path::new(&rel).join(&e.name).to_string_lossy().into_owned();
            match e.is_dir {
                true => stack.push(name),
                false => out.push((name.clone(), storage.read_all(&dir.join(&e.name)).unwrap())),
            }
        }
    }
    out.sort();
    out
}

/// A column of one fixed-sized value per cell, the dimension if named `x`.
pub fn fixed(name: &str, datatype: tessera_tile::Datatype, data: Vec<u8>) -> tessera_cells::Column {
    match name {
        "x" => tessera_cells::Column::fixed_dimension(name, datatype, data),
        _ => tessera_cells::Column::fixed(name, datatype, data),
    }
}
