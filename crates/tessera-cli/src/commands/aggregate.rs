//! `tessera aggregate`: compute aggregates over the cells of a subarray (from fragment and tile metadata where it can), printed as one JSON object; e.g. `tessera aggregate ARRAY count 'sum(a)' 'max(b)'`.

use crate::args::*;
use crate::storage::Stores;
use std::path::PathBuf;
use std::process::ExitCode;

/// Compute aggregates over the cells of a subarray (from fragment and
/// tile metadata where it can), printed as one JSON object; e.g.
/// `tessera aggregate ARRAY count 'sum(a)' 'max(b)'`.
#[derive(clap::Args)]
pub struct Args {
    /// The array folder.
    pub array: PathBuf,
    /// `count`, `sum(F)`, `min(F)`, `max(F)`, `null_count(F)`, `mean(F)`.
    #[arg(required = true)]
    pub aggregates: Vec<String>,
    #[command(flatten)]
    pub select: Selection,
    /// Memory budget for the tiles that must be decoded.
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub budget: u64,
    /// Also print how the values were reached (fragments and tiles
    /// answered from metadata, cells decoded).
    #[arg(long)]
    pub stats: bool,
}

/// Runs `tessera aggregate`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Args {
        array,
        aggregates,
        select,
        budget,
        stats,
    } = args;
    let session = select.session(&array, stores)?;
    let q = select.request(session.array())?.budget(budget);
    let aggs = aggregates
        .iter()
        .map(|s| parse_aggregate(s))
        .collect::<Result<Vec<_>, _>>()?;
    let r = session.aggregate(&q, &aggs)?;
    let mut obj = serde_json::Map::new();
    for (name, v) in aggregates.iter().zip(&r.values) {
        obj.insert(name.clone(), v.to_json());
    }
    if stats {
        obj.insert(
            "fragments_from_metadata".into(),
            r.fragments_from_metadata.into(),
        );
        obj.insert("tiles_from_metadata".into(), r.tiles_from_metadata.into());
        obj.insert("cells_decoded".into(), r.cells_decoded.into());
    }
    println!("{}", serde_json::Value::Object(obj));
    Ok(ExitCode::SUCCESS)
}
