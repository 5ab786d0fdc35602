//! Part of `cargo xtask check-writes`: groups changed and created by
//! tessera, listed by TileDB-Py (`xtask/fixtures/groups.py read`, members
//! recursively) as tessera expects and as tessera lists them.

use crate::common::copy_dir;
use crate::common::{root, run, venv, Error};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use tessera::fragment::group::OpenGroup;
use tessera::storage::LocalFs;
use tessera_write::group::{change_members, create_group, MemberChange};

/// Members of a copy of the release's `group_nested` removed and added
/// (relative and absolute, arrays and groups) at the group's own details
/// and format version; from 0.31.1 (format 22, which tessera creates
/// groups at), a group created by tessera too.
pub fn check_groups(release: &str) -> Result<(), Error> {
    let dir = root().join("target/check-groups").join(release);
    let _ = std::fs::remove_dir_all(&dir);
    let case = dir.join("changed");
    let group = case.join("group");
    let fixture = root().join(format!("testdata/groups/tiledb-{release}/group_nested"));
    copy_dir(&fixture.join("group"), &group)?;
    // The absolute member points into the fixture's own folder.
    copy_dir(&fixture.join("elsewhere"), &case.join("elsewhere"))?;
    let rna = group.join("ms/RNA").canonicalize()?;
    change_members(
        &group,
        &[
            MemberChange::Remove("cells".into()),
            MemberChange::Add {
                uri: "obs".into(),
                name: Some("obs_again".into()),
                relative: true,
            },
            MemberChange::Add {
                uri: rna.display().to_string(),
                name: Some("rna".into()),
                relative: false,
            },
        ],
        None,
        None,
    )?;
    let fixture_members = read_json(&fixture.join("expected.json"))?["members"].clone();
    let mut want: Vec<Value> = fixture_members
        .as_array()
        .ok_or("members")?
        .iter()
        .filter(|m| m["path"] != "cells")
        .cloned()
        .collect();
    want.push(json!({"path": "obs_again", "type": "array"}));
    for (p, t) in [
        ("rna", "group"),
        ("rna/X", "group"),
        ("rna/X/data", "array"),
        ("rna/var", "array"),
    ] {
        want.push(json!({"path": p, "type": t}));
    }
    compare(release, &case, want)?;
    if release >= "0.31" {
        let case = dir.join("created");
        let group = case.join("group");
        std::fs::create_dir_all(&case)?;
        create_group(&group)?;
        create_group(group.join("sub"))?;
        copy_dir(&fixture.join("group/obs"), &group.join("sub/cells"))?;
        let add = |g: &Path, uri: &str, name: Option<&str>, relative| {
            let change = MemberChange::Add {
                uri: uri.into(),
                name: name.map(str::to_owned),
                relative,
            };
            change_members(g, &[change], None, None)
        };
        add(&group.join("sub"), "cells", Some("cells"), true)?;
        add(&group, "sub", None, true)?;
        let elsewhere = case.join("raw");
        copy_dir(&fixture.join("elsewhere/raw_counts"), &elsewhere)?;
        add(&group, &elsewhere.display().to_string(), Some("raw"), false)?;
        let want = vec![
            json!({"path": "raw", "type": "array"}),
            json!({"path": "sub", "type": "group"}),
            json!({"path": "sub/cells", "type": "array"}),
        ];
        compare(release, &case, want)?;
    }
    eprintln!("groups changed and created by tessera: as TileDB-Py {release} lists them");
    Ok(())
}

fn read_json(path: &Path) -> Result<Value, Error> {
    Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
}

/// TileDB-Py's recursive listing of `case/group` equals `want` and
/// tessera's own.
fn compare(release: &str, case: &Path, mut want: Vec<Value>) -> Result<(), Error> {
    let out = run(Command::new(venv(release)?)
        .arg(root().join("xtask/fixtures/groups.py"))
        .arg("read")
        .arg(case))?;
    let read: Value = serde_json::from_slice(&out.stdout)?;
    want.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    let group = case.join("group");
    let ours: Vec<Value> = OpenGroup::open(&LocalFs, &group, 0, u64::MAX, None)?
        .list(&LocalFs, true)?
        .iter()
        .map(|m| json!({"path": m.path, "type": m.object_type}))
        .collect();
    if read["members"] != json!(want) || ours != want {
        return Err(format!(
            "{}: TileDB-Py {release} lists {}\n  tessera lists {}\n  expected {}",
            group.display(),
            read["members"],
            json!(ours),
            json!(want)
        )
        .into());
    }
    println!("{}: ok ({} members)", group.display(), want.len());
    Ok(())
}
