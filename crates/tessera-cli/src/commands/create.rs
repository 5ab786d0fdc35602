//! `tessera create`: a new, empty array from the schema's JSON form.

use crate::args::*;
use crate::storage::Stores;
use std::io::Read;
use std::process::ExitCode;

/// Create an empty array from a schema in JSON (the form `tessera schema --json` prints).
#[derive(clap::Args)]
pub struct Args {
    /// The array folder to create (absent, or an empty folder).
    pub array: std::path::PathBuf,
    /// The schema as JSON: a file, or `-` for stdin (docs/SCHEMA_JSON.md).
    #[arg(long)]
    pub schema: std::path::PathBuf,
    /// Encrypt the array with this AES-256-GCM key: 64 hex digits (or the 32-byte key itself).
    #[arg(long)]
    pub key: Option<String>,
}

/// Runs `tessera create`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let key = parse_key(&args.key)?;
    let text = if args.schema.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        std::fs::read_to_string(&args.schema)
            .map_err(|e| format!("{}: {e}", args.schema.display()))?
    };
    let source = args.schema.display();
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{source}: not JSON: {e}"))?;
    let doc =
        tessera::schema::json::schema_from_json(&json).map_err(|e| format!("{source}: {e}"))?;
    stores.at_location(&args.array, |at| {
        Ok(tessera_write::create_array(at, &doc, key, None)?)
    })?;
    Ok(ExitCode::SUCCESS)
}
