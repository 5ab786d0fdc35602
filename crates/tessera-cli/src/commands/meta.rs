//! `tessera meta`: print the metadata of an array or a group; with `--set`
//! and `--delete`, put and delete keys of its metadata (one metadata file a
//! call, written whole).

use crate::args::*;
use crate::storage::Stores;
use std::collections::BTreeMap;
use std::process::ExitCode;
use tessera::fragment::group::{is_group, OpenGroup};
use tessera::tile::Datatype;

/// Print the array (or group) metadata; or put and delete keys.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
    /// Put KEY=VALUE (repeatable): numbers and JSON lists of numbers as
    /// INT64 or FLOAT64 (as TileDB-Py types Python values), other text as
    /// STRING_UTF8; with --type, as that datatype (hex for BLOB).
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Delete KEY (repeatable).
    #[arg(long, value_name = "KEY")]
    pub delete: Vec<String>,
    /// The datatype of the --set values, as TileDB names it (`INT32`,
    /// `FLOAT32`, `STRING_ASCII`, `BLOB`, ...).
    #[arg(long = "type", value_name = "DATATYPE")]
    pub datatype: Option<String>,
    /// The metadata file's timestamp in milliseconds (default: now).
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera meta`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    if !args.set.is_empty() || !args.delete.is_empty() {
        return change(&args, stores);
    }
    let target = &args.target;
    // An array's metadata, or a group's (the same format).
    let s = &*stores.storage(&target.array)?;
    let m = if is_group(s, &target.array)? {
        let key = parse_key(&target.key)?;
        OpenGroup::open(s, &target.array, 0, u64::MAX, key)?.metadata(s)?
    } else {
        target.open(stores)?.metadata(s)?
    };
    let obj: serde_json::Map<String, serde_json::Value> =
        m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&obj)?);
    } else {
        for (k, v) in &obj {
            println!("{k} = {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Puts and deletes keys: one metadata file.
fn change(args: &Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let datatype = match &args.datatype {
        None => None,
        Some(name) => Some(
            Datatype::named(name).ok_or_else(|| format!("--type {name}: not a TileDB datatype"))?,
        ),
    };
    let mut entries = BTreeMap::new();
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        let value = tessera_write::metadata::value_from_text(v, datatype)
            .map_err(|e| format!("--set {kv}: {e}"))?;
        entries.insert(k.to_owned(), Some(value));
    }
    for k in &args.delete {
        if entries.insert(k.clone(), None).is_some() {
            return Err(format!("`{k}` is both set and deleted").into());
        }
    }
    let key = parse_key(&args.target.key)?;
    let target = &args.target.array;
    let group = is_group(&*stores.storage(target)?, target)?;
    let name = stores.at_location(target, |at| {
        Ok(match group {
            true => tessera_write::metadata::put_group_metadata(at, &entries, key, args.timestamp)?,
            false => tessera_write::metadata::put_metadata(at, &entries, key, args.timestamp)?,
        })
    })?;
    eprintln!(
        "wrote __meta/{name}: {} set, {} deleted",
        args.set.len(),
        args.delete.len()
    );
    Ok(ExitCode::SUCCESS)
}
