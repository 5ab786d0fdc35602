//! `tessera info`: summarize an array.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;
use tessera::fragment::group::{is_group, ObjectType, OpenGroup};
use tessera_view::folder_size;

/// Its arguments: the folder and its key.
pub use crate::args::Target as Args;

/// Runs `tessera info`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let target = args;
    let array = &target.array;
    if is_group(&*stores.storage(array)?, array)? {
        return group_info(array, &target.key, stores);
    }
    let a = target.open(stores)?;
    let s = &a.schema;
    let mut versions: Vec<u32> = a.fragments.iter().map(|f| f.version().number()).collect();
    versions.sort_unstable();
    versions.dedup();
    println!("array: {}", array.display());
    println!("type: {}", s.array_type);
    println!(
        "schema: {} (format version {}), {} schema file(s)",
        s.name,
        s.version,
        a.schema_files.len()
    );
    let fields = |f: &mut dyn Iterator<Item = (&String, tessera::tile::Datatype)>| {
        f.map(|(n, t)| format!("{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let dims = &mut s.dimensions.iter().map(|d| (&d.name, d.datatype));
    println!("dimensions: {}", fields(dims));
    let attrs = &mut s.attributes.iter().map(|a| (&a.name, a.datatype));
    println!("attributes: {}", fields(attrs));
    println!(
        "fragments: {} (format versions {:?})",
        a.fragments.len(),
        versions
    );
    println!(
        "cells written: {}",
        a.fragments.iter().map(|f| f.total_cell_num()).sum::<u64>()
    );
    println!(
        "size on disk: {} bytes",
        folder_size(&*stores.storage(&a.path)?, &a.path)
    );
    Ok(ExitCode::SUCCESS)
}

/// `tessera info` on a group: its members by kind and its metadata keys.
fn group_info(
    path: &std::path::Path,
    key: &Option<String>,
    stores: &Stores,
) -> Result<ExitCode, BoxError> {
    let g = OpenGroup::open(&*stores.storage(path)?, path, 0, u64::MAX, parse_key(key)?)?;
    let count = |t: ObjectType| g.members.iter().filter(|m| m.object_type == t).count();
    let meta = g.metadata(&*stores.storage(path)?)?;
    println!("group: {}", path.display());
    println!(
        "members: {} ({} arrays, {} groups; `tessera ls --recursive` lists them)",
        g.members.len(),
        count(ObjectType::Array),
        count(ObjectType::Group)
    );
    let keys: Vec<&str> = meta.keys().map(String::as_str).collect();
    println!("metadata: {}", keys.join(", "));
    println!(
        "size on disk: {} bytes",
        folder_size(&*stores.storage(path)?, path)
    );
    Ok(ExitCode::SUCCESS)
}
