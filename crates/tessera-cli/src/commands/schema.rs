//! `tessera schema`: print the array schema.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;

/// Print the array schema.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// As JSON: the form `tessera create --schema` reads (docs/SCHEMA_JSON.md).
    #[arg(long)]
    pub json: bool,
    /// The schema in force at this timestamp.
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera schema`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Args {
        target,
        json,
        timestamp,
    } = args;
    let key = parse_key(&target.key)?;
    let array = &target.array;
    let st = &*stores.storage(array)?;
    let files = tessera::schema::list_schemas(st, array)?;
    let f = tessera::schema::schema_at(&files, timestamp.unwrap_or(u64::MAX))
        .ok_or("not a TileDB array: no schema")?;
    let s = tessera::schema::load_schema(st, array, f, key.as_ref())?;
    let enums = tessera::schema::load_enumerations(st, array, &s, key.as_ref())?;
    if json {
        let doc = tessera::schema::json::schema_to_json(&s, &enums);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", tessera::schema::describe(&s));
        print!("{}", tessera::schema::describe_enumerations(&enums));
    }
    Ok(ExitCode::SUCCESS)
}
