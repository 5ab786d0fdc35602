//! `tessera fragments`: list the fragments.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;

/// Its arguments: the folder, its key and `--json`.
pub use crate::args::Listing as Args;

/// Runs `tessera fragments`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Listing { target, json } = args;
    let a = target.open(stores)?;
    let list = a.fragment_info();
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
