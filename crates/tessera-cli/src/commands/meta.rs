//! `tessera meta`: print the metadata of an array or a group.

use crate::args::*;
use std::path::PathBuf;
use std::process::ExitCode;
use tessera::fragment::group::{is_group, OpenGroup};
use tessera::fragment::OpenArray;
use tessera::tile::storage::LocalFs;

/// Print the array metadata.
#[derive(clap::Args)]
pub struct Args {
    /// The array or group folder.
    pub array: PathBuf,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
    /// AES-256-GCM key.
    #[arg(long)]
    pub key: Option<String>,
}

/// Runs `tessera meta`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    let Args { array, json, key } = args;
    // An array's metadata, or a group's (the same format).
    let m = if is_group(&LocalFs, &array)? {
        OpenGroup::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?.metadata(&LocalFs)?
    } else {
        OpenArray::open(&LocalFs, &array, 0, u64::MAX, parse_key(&key)?)?.metadata(&LocalFs)?
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
