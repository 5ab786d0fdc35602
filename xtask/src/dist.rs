//! `cargo xtask dist`: the `tessera` binary as shipped, which is also the
//! one `cargo xtask bench` times.
//!
//! On Linux with glibc it is linked statically (a static-pie: still loaded
//! at a random address). Why: a dynamically linked `tessera` spends about
//! 0.5 ms of every process in the dynamic loader and in the constructors of
//! the shared libraries it maps (libgcc_s probes the CPU with `cpuid`, which
//! traps to the hypervisor on a virtual machine): measured with `tessera
//! --version`, medians of 150 alternating runs, 2.0 ms dynamic against
//! 1.45 ms static, a Rust hello world 1.25 ms. For a small read that is a
//! tenth of the process. The static binary also runs on Linux systems with
//! an older glibc than the one it was built with. It uses no part of glibc
//! that static linking disables (name services, `dlopen`).
//!
//! `crt-static` is passed for the target only (`--target` with `RUSTFLAGS`):
//! proc-macro crates, built for the host, must stay dynamic libraries.

use crate::common::{root, Error};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The triple `rustc` builds for by default.
fn host_triple() -> Result<String, Error> {
    let out = Command::new("rustc").arg("-vV").output()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "`rustc -vV` names no host".into())
}

/// The cargo profile a build uses.
#[derive(Clone, Copy)]
pub enum Profile {
    /// As shipped: stripped (`release`).
    Release,
    /// The same code with symbols and line tables (`profiling`), so that
    /// `perf` names functions in a benchmark's binary.
    Profiling,
}

impl Profile {
    fn name(self) -> &'static str {
        match self {
            Profile::Release => "release",
            Profile::Profiling => "profiling",
        }
    }
}

/// Builds `packages` with cargo `features` (`tessera-cli/sql`) in
/// `profile`, statically linked where the host is glibc Linux, and returns
/// the directory holding their binaries.
pub fn build(packages: &[&str], features: &[&str], profile: Profile) -> Result<PathBuf, Error> {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    build_at(&root(), &target_dir, packages, features, profile.name())
}

/// [`build`] of the workspace at `workspace` (another revision's, for an
/// A/B run) into `target_dir`, in the cargo profile named `profile`.
pub fn build_at(
    workspace: &Path,
    target_dir: &Path,
    packages: &[&str],
    features: &[&str],
    profile: &str,
) -> Result<PathBuf, Error> {
    let host = host_triple()?;
    let mut cmd = Command::new("cargo");
    cmd.current_dir(workspace)
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["build", "--profile", profile]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let dir = if host.ends_with("-linux-gnu") {
        let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        cmd.args(["--target", &host]).env(
            "RUSTFLAGS",
            format!("{flags} -C target-feature=+crt-static").trim(),
        );
        target_dir.join(&host).join(profile)
    } else {
        target_dir.join(profile)
    };
    if !cmd.status()?.success() {
        return Err(format!("{cmd:?} failed").into());
    }
    Ok(dir)
}

/// `cargo xtask dist`: builds the shipped `tessera` (with `tessera sql`)
/// and prints its path.
pub fn dist() -> Result<(), Error> {
    let bin = build(&["tessera-cli"], &["tessera-cli/sql"], Profile::Release)?.join("tessera");
    println!("{}", bin.display());
    Ok(())
}
