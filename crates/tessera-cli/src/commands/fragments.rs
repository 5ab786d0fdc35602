//! `tessera fragments`: list the fragments.

use crate::args::*;
use std::process::ExitCode;

/// Its arguments: the folder, its key and `--json`.
pub use crate::args::Listing as Args;

/// Runs `tessera fragments`.
pub fn run(args: Args) -> Result<ExitCode, BoxError> {
    let Listing { target, json } = args;
    let a = target.open()?;
    let list: Vec<serde_json::Value> = a
            .fragments
            .iter()
            .map(|f| {
                let ned: Vec<serde_json::Value> = f.footer.non_empty_domain.as_ref().map_or(Vec::new(), |ned| {
                    ned.iter()
                        .zip(&f.schema.dimensions)
                        .map(|(r, d)| {
                            serde_json::json!([
                                tessera::schema::Value::decode(d.datatype, &r.lo).to_json(),
                                tessera::schema::Value::decode(d.datatype, &r.hi).to_json()
                            ])
                        })
                        .collect()
                });
                serde_json::json!({
                    "name": f.name,
                    "timestamp_range": [f.timestamp_range().0, f.timestamp_range().1],
                    "version": f.version().number(),
                    "sparse": !f.footer.dense,
                    "cell_num": f.total_cell_num(),
                    "nonempty_domain": ned,
                    "schema_name": f.footer.schema_name.clone().unwrap_or_else(|| tessera::schema::LEGACY_SCHEMA_FILE.into()),
                    "has_consolidated_metadata": a.consolidated_metadata.contains(&f.name),
                })
            })
            .collect();
    print_records(json, &list, |f| {
        format!(
            "{}  t={}  v{}  {}  cells={}  ned={}{}",
            f["name"].as_str().unwrap_or(""),
            f["timestamp_range"],
            f["version"],
            if f["sparse"].as_bool().unwrap_or(false) {
                "sparse"
            } else {
                "dense"
            },
            f["cell_num"],
            f["nonempty_domain"],
            if f["has_consolidated_metadata"].as_bool().unwrap_or(false) {
                "  (consolidated metadata)"
            } else {
                ""
            }
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
