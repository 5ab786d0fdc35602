//! `tessera commits`: list the delete and update commits in force, with their conditions (as stored: the cells to keep) and, for updates, the values they set.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;

/// Its arguments: the folder, its key and `--json`.
pub use crate::args::Listing as Args;

/// Runs `tessera commits`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Listing { target, json } = args;
    let a = target.open(stores)?;
    let s = &a.schema;
    let datatype_of = |f: &str| {
        s.attribute(f)
            .map(|x| x.datatype)
            .or_else(|| s.dimension(f).map(|d| d.datatype))
    };
    let list: Vec<serde_json::Value> = a
        .delete_conditions
        .iter()
        .map(|c| {
            let values = c.update_values.as_ref().map(|vs| {
                vs.iter()
                    .map(|v| {
                        let shown = match datatype_of(&v.field) {
                            Some(t) => tessera::schema::Value::decode(t, &v.value).to_json(),
                            None => serde_json::Value::Null,
                        };
                        serde_json::json!({"field": v.field, "value": shown})
                    })
                    .collect::<Vec<_>>()
            });
            serde_json::json!({
                "name": c.name,
                "kind": if c.is_update() { "update" } else { "delete" },
                "timestamp": c.timestamp,
                "keeps": c.condition.display_with(&datatype_of),
                "update_values": values,
            })
        })
        .collect();
    print_records(json, &list, |c| {
        let mut line = format!(
            "{}  {}  t={}  keeps cells where {}",
            c["name"].as_str().unwrap_or(""),
            c["kind"].as_str().unwrap_or(""),
            c["timestamp"],
            c["keeps"].as_str().unwrap_or("")
        );
        if let Some(vs) = c["update_values"].as_array() {
            let set: Vec<String> = vs
                .iter()
                .map(|v| format!("{} = {}", v["field"].as_str().unwrap_or(""), v["value"]))
                .collect();
            // libtiledb stores update values but does not apply them on read.
            line += &format!("; sets {} (not applied on read)", set.join(", "));
        }
        line
    })?;
    Ok(ExitCode::SUCCESS)
}
