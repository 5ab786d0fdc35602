//! The names of the columns a read adds besides the array's fields.

/// The column of each cell version's timestamp (a read of every
/// version, and a fragment consolidated with timestamps).
pub const VERSION_TIMESTAMPS: &str = "__timestamps";
/// The first column of delete metadata: when a delete commit removes
/// each cell (`u64::MAX`: none does).
pub const DELETE_TIMESTAMPS: &str = "__delete_timestamps";
/// The second column of delete metadata: the index, among the array's
/// delete conditions, of the commit that removes each cell (`u64::MAX`:
/// none does).
pub const DELETE_CONDITION_INDEX: &str = "__delete_condition_index";
