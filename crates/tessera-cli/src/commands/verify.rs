//! `tessera verify`: read every generic tile and data tile; report each problem. Exit 0 only when all is sound.

use crate::args::*;
use crate::progress;
use crate::storage::Stores;
use std::process::ExitCode;

/// Its arguments: the folder and its key.
pub use crate::args::Target as Args;

/// Runs `tessera verify`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let target = args;
    let a = target.open(stores)?;
    let bar = progress::bar(a.fragments.len() as u64, "verifying fragments");
    let problems = crate::verify::verify(&*stores.storage(&a.path)?, &a, &|| bar.inc(1));
    bar.finish_and_clear();
    if problems.is_empty() {
        println!(
            "{}: {} fragment(s) verified, no problems",
            target.array.display(),
            a.fragments.len()
        );
    } else {
        for p in &problems {
            println!("{p}");
        }
        eprintln!("error: {} problem(s) found", problems.len());
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
