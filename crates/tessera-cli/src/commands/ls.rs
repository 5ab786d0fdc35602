//! `tessera ls`: list what a group holds.

use crate::args::*;
use crate::storage::Stores;
use std::path::PathBuf;
use std::process::ExitCode;
use tessera::fragment::group::{object_type, ObjectType, OpenGroup};

/// List a group's members (with --recursive, their members too): one line
/// each, `path  type`; with --json one object per line,
/// `{"path": "ms/RNA/X/data", "type": "array"}`.
#[derive(clap::Args)]
pub struct Args {
    /// The group folder.
    pub group: PathBuf,
    /// Also list the members of member groups, under their group's path.
    #[arg(long, short = 'r')]
    pub recursive: bool,
    /// One JSON object per member.
    #[arg(long)]
    pub json: bool,
    /// Open at timestamp `T`, or at the range `T1:T2` (milliseconds).
    #[arg(long)]
    pub timestamp: Option<String>,
    /// AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
}

/// Runs `tessera ls`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let (t1, t2) = parse_timestamp(&args.timestamp)?;
    let key = parse_key(&args.key)?;
    let s = &*stores.storage(&args.group)?;
    let g = match OpenGroup::open(s, &args.group, t1, t2, key) {
        Ok(g) => g,
        // Not a group: say what it is instead (a listing only on this path).
        Err(e) => {
            let what = match object_type(s, &args.group)? {
                Some(ObjectType::Group) => return Err(e.into()),
                Some(ObjectType::Array) => "an array",
                None => "neither a group nor an array",
            };
            return Err(format!("{}: {what}, not a TileDB group", args.group.display()).into());
        }
    };
    for m in g.list(s, args.recursive)? {
        if args.json {
            let line = serde_json::json!({"path": m.path, "type": m.object_type});
            println!("{line}");
        } else {
            let kind = serde_json::to_value(m.object_type)?;
            println!("{}  {}", m.path, kind.as_str().unwrap_or_default());
        }
    }
    Ok(ExitCode::SUCCESS)
}
