//! `cargo xtask maintain-async URI`: the array at `URI` (an object store,
//! configured from the environment as the CLI's is) maintained by
//! tessera's asynchronous maintenance, awaited on a current-thread tokio
//! runtime with no runtime of the storage's own: its fragments
//! consolidated (their cells read by the query crate's push decoder,
//! awaited), its commits, fragment metadata and array metadata
//! consolidated, then the fragments the consolidation replaced, the
//! commits, the fragment metadata and the array metadata vacuumed. check-s3-maintained runs it and has TileDB-Py
//! read the array back.
//!
//! `cargo xtask consolidate-async URI [--with-timestamps]`: the fragments
//! of the array at `URI` consolidated so, and nothing else;
//! bench-s3-consolidate times it beside `tessera consolidate`.

use crate::common::Error;
use crate::write_async::on_caller_runtime;
use std::sync::Arc;
use tessera::query::QuerySource;
use tessera::storage::AsyncLocation;
use tessera::write::consolidate::ConsolidateOptions;
use tessera::write::maintain_async as awaited;

pub fn maintain_async(args: &[String]) -> Result<(), Error> {
    let [uri] = args else {
        return Err("usage: cargo xtask maintain-async URI".into());
    };
    let said = on_caller_runtime(uri, |storage| async move {
        let at = AsyncLocation::new(Arc::new(storage), uri);
        let mut said = Vec::new();
        let options = ConsolidateOptions::default();
        let done = awaited::consolidate_fragments(&at, &options, &QuerySource).await?;
        said.push(format!("fragments consolidated: {done:?}"));
        let con = awaited::consolidate_commits(&at, None).await?;
        said.push(format!("commits consolidated: {con:?}"));
        let meta = awaited::consolidate_fragment_meta(&at, None).await?;
        said.push(format!("fragment metadata consolidated: {meta:?}"));
        let array_meta = awaited::consolidate_metadata(&at, None).await?;
        said.push(format!("array metadata consolidated: {array_meta:?}"));
        let n = awaited::vacuum_fragments(&at, None, None).await?;
        said.push(format!("fragments vacuumed: {n}"));
        let n = awaited::vacuum_commits(&at, None).await?;
        said.push(format!("commit files vacuumed: {n}"));
        let n = awaited::vacuum_fragment_meta(&at, None).await?;
        said.push(format!("fragment metadata files vacuumed: {n}"));
        let n = awaited::vacuum_metadata(&at, None).await?;
        said.push(format!("array metadata files vacuumed: {n}"));
        Ok(said)
    })?;
    println!("{}", said.join("\n"));
    Ok(())
}

pub fn consolidate_async(args: &[String]) -> Result<(), Error> {
    let flag = |a: &String| a == "--with-timestamps";
    let with_timestamps = args.iter().any(flag).then_some(true);
    let [uri] = &args.iter().filter(|a| !flag(a)).collect::<Vec<_>>()[..] else {
        return Err("usage: cargo xtask consolidate-async URI [--with-timestamps]".into());
    };
    let options = ConsolidateOptions {
        with_timestamps,
        ..ConsolidateOptions::default()
    };
    let done = on_caller_runtime(uri, |storage| async move {
        let at = AsyncLocation::new(Arc::new(storage), uri);
        Ok(awaited::consolidate_fragments(&at, &options, &QuerySource).await?)
    })?;
    let Some(done) = done else {
        return Err(format!("{uri}: fewer than two fragments to consolidate").into());
    };
    println!(
        "{} fragments consolidated into {} ({} cells)",
        done.replaced.len(),
        done.fragment,
        done.cells
    );
    Ok(())
}
