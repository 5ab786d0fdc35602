//! `tessera schema`: print the array schema.

use crate::args::*;
use std::process::ExitCode;
use tessera::tile::storage::LocalFs;

/// Print the array schema.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
    /// The schema in force at this timestamp.
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera schema`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    let Args {
        target,
        json,
        timestamp,
    } = args;
    let key = parse_key(&target.key)?;
    let array = &target.array;
    let files = tessera::schema::list_schemas(&LocalFs, array)?;
    let f = tessera::schema::schema_at(&files, timestamp.unwrap_or(u64::MAX))
        .ok_or("not a TileDB array: no schema")?;
    let s = tessera::schema::load_schema(&LocalFs, array, f, key.as_ref())?;
    let enums = tessera::schema::load_enumerations(&LocalFs, array, &s, key.as_ref())?;
    if json {
        let mut v = serde_json::to_value(&s)?;
        add_typed_values(&mut v, &s);
        let loaded: Vec<serde_json::Value> = enums
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "name": e.name,
                        "datatype": e.datatype,
                        "ordered": e.ordered,
                        "values": e.values.iter().map(|x| tessera::schema::enumeration_value(e, x)).collect::<Vec<_>>(),
                    })
                })
                .collect();
        v["enumeration_values"] = loaded.into();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", tessera::schema::describe(&s));
        print!("{}", tessera::schema::describe_enumerations(&enums));
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds decoded domains, tile extents, current domain and fill values to a
/// schema's JSON (the raw fields stay as they are stored).
fn add_typed_values(v: &mut serde_json::Value, s: &tessera::schema::ArraySchema) {
    use tessera::schema::Value;
    for (j, d) in s.dimensions.iter().enumerate() {
        if let Some((lo, hi)) = d.domain_values() {
            v["dimensions"][j]["domain_values"] = serde_json::json!([lo.to_json(), hi.to_json()]);
        }
        v["dimensions"][j]["tile_extent_value"] = d
            .tile_extent_value()
            .map_or(serde_json::Value::Null, |e| e.to_json());
    }
    for (i, a) in s.attributes.iter().enumerate() {
        let vals = tessera::schema::value::values_to_json(a.datatype, &a.fill_value);
        v["attributes"][i]["fill_value_values"] = vals.into();
    }
    if let Some(rect) = s
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref())
    {
        let r: Vec<serde_json::Value> = rect
            .iter()
            .zip(&s.dimensions)
            .map(|(r, d)| {
                serde_json::json!([
                    Value::decode(d.datatype, &r.lo).to_json(),
                    Value::decode(d.datatype, &r.hi).to_json()
                ])
            })
            .collect();
        v["current_domain_values"] = r.into();
    }
}
