//! `tessera evolve`: schema evolution, as libtiledb's
//! `ArraySchemaEvolution`: attributes added and dropped in a new schema
//! file; fragments keep the schema they were written with.

use crate::args::*;
use std::process::ExitCode;
use tessera::schema::json::attribute_from_json;
use tessera_write::evolve::{evolve_array, Evolution};

/// Add and drop attributes: a new schema for the array.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// An attribute to add, as a JSON object of the schema's JSON form
    /// (`{"name": "w", "type": "FLOAT64", "fill_value": 0.5}`); repeatable.
    #[arg(long, value_name = "JSON")]
    pub add_attribute: Vec<String>,
    /// The name of an attribute to drop; repeatable.
    #[arg(long, value_name = "NAME")]
    pub drop_attribute: Vec<String>,
    /// The new schema's timestamp in milliseconds (default: now; after the
    /// current schema's).
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera evolve`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    if args.add_attribute.is_empty() && args.drop_attribute.is_empty() {
        return Err("nothing to evolve: give --add-attribute or --drop-attribute".into());
    }
    let array = args.target.open()?;
    let mut evolution = Evolution {
        drop_attributes: args.drop_attribute.clone(),
        ..Default::default()
    };
    for (i, text) in args.add_attribute.iter().enumerate() {
        let json: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("--add-attribute {text}: not JSON: {e}"))?;
        let path = format!("--add-attribute[{i}]");
        let a = attribute_from_json(&json, &path, &[], array.schema.version)?;
        evolution.add_attributes.push(a);
    }
    let key = parse_key(&args.target.key)?;
    let schema = evolve_array(&args.target.array, &evolution, key, args.timestamp)?;
    let names: Vec<&str> = schema.attributes.iter().map(|a| a.name.as_str()).collect();
    eprintln!(
        "wrote __schema/{}: attributes {}",
        schema.name,
        names.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
