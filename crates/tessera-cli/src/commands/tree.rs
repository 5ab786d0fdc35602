//! `tessera consolidate GROUP --recursive` and `tessera vacuum GROUP
//! --recursive`: every array below a group, in every mode (or the one
//! given), arrays side by side within the memory budget, a line of
//! progress per array on stderr.

use crate::args::*;
use std::process::ExitCode;
use tessera::maintain::{maintain_tree, Mode, Progress, TreeMaintenance, Work};

/// Options of a recursive run.
#[derive(clap::Args)]
pub struct TreeArgs {
    /// Every array below the group (a group tree such as a SOMA
    /// experiment), in every mode unless --mode names one, in libtiledb's
    /// order; steps with nothing to do are passed over, so a run
    /// interrupted is finished by running it again.
    #[arg(long)]
    pub recursive: bool,
    /// With --recursive: arrays done side by side.
    #[arg(long, default_value_t = 2, requires = "recursive")]
    pub jobs: usize,
    /// With --recursive: memory for all arrays in flight (e.g. 1G), each
    /// fragment consolidation getting its share.
    #[arg(long, value_parser = parse_size, requires = "recursive")]
    pub memory_budget: Option<u64>,
}

/// Runs `work` on every array below `root`, in `mode` (all when `None`).
pub fn run(
    root: &std::path::Path,
    work: Work,
    mode: Option<&str>,
    key: &Option<String>,
    tree: &TreeArgs,
) -> Result<ExitCode, BoxError> {
    let mut m = TreeMaintenance::new(work);
    if let Some(mode) = mode {
        m.modes = vec![Mode::parse(mode).ok_or_else(|| {
            format!("--mode {mode}: expected fragments, commits, fragment_meta or array_meta")
        })?];
    }
    m.jobs = tree.jobs.max(1);
    if let Some(b) = tree.memory_budget {
        m.budget = b;
    }
    m.key = parse_key(key)?;
    let progress = |p: Progress<'_>| match p {
        Progress::Listed { arrays } => eprintln!("{arrays} arrays"),
        Progress::Started { .. } => {}
        Progress::Done { index, of, done } => {
            let name = if done.member.is_empty() {
                "."
            } else {
                &done.member
            };
            let steps: Vec<String> = done
                .steps
                .iter()
                .map(|(mode, did)| format!("{}: {did}", mode.name()))
                .collect();
            let mut line = format!(
                "[{}/{of}] {name} ({:.1} s): {}",
                index + 1,
                done.seconds,
                steps.join("; ")
            );
            if let Some(e) = &done.error {
                line.push_str(&format!("; FAILED: {e}"));
            }
            eprintln!("{line}");
        }
    };
    let done = maintain_tree(root, &m, &progress)?;
    let failed: Vec<&str> = done
        .iter()
        .filter(|a| a.error.is_some())
        .map(|a| a.member.as_str())
        .collect();
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    Err(format!(
        "{} of {} arrays failed ({}); run again to finish them",
        failed.len(),
        done.len(),
        failed.join(", ")
    )
    .into())
}
