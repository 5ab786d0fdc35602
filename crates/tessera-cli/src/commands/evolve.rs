//! `tessera evolve`: schema evolution, as libtiledb's
//! `ArraySchemaEvolution`: attributes added and dropped, enumerations
//! extended, in a new schema file; fragments keep the schema they were
//! written with.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;
use tessera::schema::json::{attribute_from_json, current_domain_from_json};
use tessera::schema::load_enumerations;
use tessera_write::evolve::{enumeration_values_from_json, evolve_array, Evolution};

/// Add and drop attributes, extend enumerations: a new schema for the array.
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
    /// Values to append to an enumeration, as NAME=JSON list
    /// (`colors=["purple"]`, `sizes=[40, 50]`); repeatable.
    #[arg(long, value_name = "NAME=VALUES")]
    pub extend_enumeration: Vec<String>,
    /// A larger current domain: one `[lower, upper]` per dimension, as the
    /// schema JSON's `current_domain` (`[[0, 99]]`), holding the current one.
    #[arg(long, value_name = "JSON")]
    pub expand_current_domain: Option<String>,
    /// The new schema's timestamp in milliseconds (default: now; after the
    /// current schema's).
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera evolve`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    if args.add_attribute.is_empty()
        && args.drop_attribute.is_empty()
        && args.extend_enumeration.is_empty()
        && args.expand_current_domain.is_none()
    {
        return Err(
            "nothing to evolve: give --add-attribute, --drop-attribute, --extend-enumeration or --expand-current-domain"
                .into(),
        );
    }
    let array = args.target.open(stores)?;
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
    if let Some(text) = &args.expand_current_domain {
        let json: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("--expand-current-domain {text}: not JSON: {e}"))?;
        let cd = current_domain_from_json(Some(&json), &array.schema.dimensions)?;
        evolution.expand_current_domain = cd.ndrectangle;
    }
    let key = parse_key(&args.target.key)?;
    if !args.extend_enumeration.is_empty() {
        let current = load_enumerations(
            &*stores.storage(&args.target.array)?,
            &args.target.array,
            &array.schema,
            key.as_ref(),
        )?;
        for spec in &args.extend_enumeration {
            let (name, values) = spec
                .split_once('=')
                .ok_or_else(|| format!("--extend-enumeration {spec}: expected NAME=VALUES"))?;
            let e = current
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| format!("--extend-enumeration {spec}: no enumeration `{name}`"))?;
            let json: serde_json::Value = serde_json::from_str(values)
                .map_err(|err| format!("--extend-enumeration {spec}: not JSON: {err}"))?;
            let bytes = enumeration_values_from_json(e, &json)?;
            evolution.extend_enumerations.push((name.to_owned(), bytes));
        }
    }
    let schema = stores.at_location(&args.target.array, |at| {
        Ok(evolve_array(at, &evolution, key, args.timestamp)?)
    })?;
    let names: Vec<&str> = schema.attributes.iter().map(|a| a.name.as_str()).collect();
    eprintln!(
        "wrote __schema/{}: attributes {}",
        schema.name,
        names.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
