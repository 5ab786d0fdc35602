//! Progress on stderr for long reads and verifies, only when stderr is a
//! terminal: scripts and pipes see nothing.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

fn visible() -> bool {
    std::io::stderr().is_terminal()
}

/// A spinner with a message, for work of unknown size.
pub fn spinner(prefix: &'static str) -> ProgressBar {
    if !visible() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new_spinner().with_prefix(prefix);
    b.set_style(
        ProgressStyle::with_template("{spinner} {prefix}: {msg} [{elapsed}]")
            .expect("a valid template"),
    );
    b.enable_steady_tick(Duration::from_millis(120));
    b
}

/// A bar over `len` steps.
pub fn bar(len: u64, prefix: &'static str) -> ProgressBar {
    if !visible() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len).with_prefix(prefix);
    b.set_style(
        ProgressStyle::with_template("{prefix} {bar:40} {pos}/{len} [{elapsed}]")
            .expect("a valid template"),
    );
    b
}
