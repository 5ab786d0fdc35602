//! The error every subcommand returns.

/// Printed as one line plus its causes.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
