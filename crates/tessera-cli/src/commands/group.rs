//! `tessera group`: create a group, add and remove its members, as
//! libtiledb writes them (`tessera_write::group`).

use crate::args::*;
use crate::storage::Stores;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tessera_write::group::{change_members_at, create_group, MemberChange, MemberLookup};

/// Create a group, or add and remove members of one.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do to the group.
#[derive(clap::Subcommand)]
pub enum Action {
    /// Create an empty group (the folder must be absent or empty).
    Create {
        /// The new group's folder.
        group: PathBuf,
    },
    /// Add an array or a group as a member (one details file a call).
    Add {
        /// The group: a folder or a URI (`s3://bucket/path`, ...).
        group: PathBuf,
        /// The member: a path (stored as an absolute file:// URI), a URI
        /// (stored as given), or with --relative a path relative to the
        /// group (stored as given).
        member: String,
        /// The member's name in the group (default: none; listings show
        /// the last segment of its URI).
        #[arg(long)]
        name: Option<String>,
        /// Store MEMBER relative to the group, so the group can be moved.
        #[arg(long)]
        relative: bool,
        /// AES-256-GCM key of an encrypted group: 64 hex digits.
        #[arg(long)]
        key: Option<String>,
    },
    /// Remove a member, by name or (when no member has that name) by URI.
    Remove {
        /// The group.
        group: PathBuf,
        /// The member's name, or its URI.
        member: String,
        /// AES-256-GCM key of an encrypted group: 64 hex digits.
        #[arg(long)]
        key: Option<String>,
    },
}

/// Runs `tessera group`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    match args.action {
        Action::Create { group } => {
            stores.at_location(&group, |at| Ok(create_group(at)?))?;
            eprintln!("created group {}", group.display());
        }
        Action::Add {
            group,
            member,
            name,
            relative,
            key,
        } => {
            let change = MemberChange::Add {
                uri: member,
                name,
                relative,
            };
            let file = change_in(&group, change, parse_key(&key)?, stores)?;
            eprintln!("wrote __group/{file}");
        }
        Action::Remove { group, member, key } => {
            let change = MemberChange::Remove(member);
            let file = change_in(&group, change, parse_key(&key)?, stores)?;
            eprintln!("wrote __group/{file}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Applies `change` to the group at `group` (a folder or a URI), members
/// on other stores looked up through their own storage.
fn change_in(
    group: &Path,
    change: MemberChange,
    key: Option<tessera::filters::EncryptionKey>,
    stores: &Stores,
) -> Result<String, BoxError> {
    stores.at_location(group, |at| {
        let storage = |p: &Path| stores.storage(p).map_err(|e| e.to_string());
        let lookup = MemberLookup { storage: &storage };
        Ok(change_members_at(at, &lookup, &[change], key, None)?)
    })
}
