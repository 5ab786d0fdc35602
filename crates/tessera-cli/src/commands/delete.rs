//! `tessera delete`: delete the cells a condition matches, as libtiledb
//! does: a delete commit holding the condition's negation.

use crate::args::*;
use crate::storage::Stores;
use std::process::ExitCode;
use tessera::Expr;

/// Delete the cells a condition matches (a delete commit).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: Target,
    /// The cells to delete, in `read --where` syntax (`a > 14 OR b < 1.0`).
    #[arg(long = "where", value_name = "COND")]
    pub condition: String,
    /// The delete's timestamp in milliseconds (default: now): cells of
    /// fragments up to it are deleted, later writes stay.
    #[arg(long)]
    pub timestamp: Option<u64>,
}

/// Runs `tessera delete`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let array = args.target.open(stores)?;
    let condition = Expr::parse(&args.condition, &array.schema)?;
    let key = parse_key(&args.target.key)?;
    let name = stores.at_location(&args.target.array, |at| {
        Ok(tessera_write::delete::delete_cells(
            at,
            &condition,
            key,
            args.timestamp,
        )?)
    })?;
    eprintln!("wrote __commits/{name}");
    Ok(ExitCode::SUCCESS)
}
