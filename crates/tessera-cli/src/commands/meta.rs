//! `tessera meta`: print the metadata of an array or a group.

use crate::args::*;
use std::process::ExitCode;
use tessera::fragment::group::{is_group, OpenGroup};
use tessera::tile::storage::LocalFs;

/// Its arguments: the folder, its key and `--json`.
pub use crate::args::Listing as Args;

/// Runs `tessera meta`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    let Listing { target, json } = args;
    // An array's metadata, or a group's (the same format).
    let m = if is_group(&LocalFs, &target.array)? {
        let key = parse_key(&target.key)?;
        OpenGroup::open(&LocalFs, &target.array, 0, u64::MAX, key)?.metadata(&LocalFs)?
    } else {
        target.open()?.metadata(&LocalFs)?
    };
    let obj: serde_json::Map<String, serde_json::Value> =
        m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&obj)?);
    } else {
        for (k, v) in &obj {
            println!("{k} = {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
