//! A group's page: its member tree (kind, shape, size), then a section
//! per member array.

use crate::error::ViewError;
use crate::html::{bytes, escape, slug};
use crate::options::ViewOptions;
use crate::page::{array_sections, Page};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;
use tessera::fragment::array_metadata::MetadataValue;
use tessera::fragment::group::{ListedMember, ObjectType, OpenGroup};
use tessera::fragment::OpenArray;
use tessera::query::ReadSession;
use tessera::schema::Value;
use tessera::storage::Storage;

/// The storage serving a member: the group's where it is on the same store.
fn member_storage(
    group: &Arc<dyn Storage>,
    group_path: &Path,
    location: &Path,
) -> Result<Arc<dyn Storage>, ViewError> {
    match tessera::store_of(group_path) == tessera::store_of(location) {
        true => Ok(group.clone()),
        false => Ok(tessera::storage_for(location)?),
    }
}

/// `soma_object_type` and other SOMA kinds, from metadata.
fn soma_kind(meta: &BTreeMap<String, MetadataValue>) -> Option<String> {
    let v = meta.get("soma_object_type")?.to_json();
    v.as_str().map(str::to_owned)
}

/// An array's shape: per dimension its current domain (SOMA's shape)
/// where it has one, else its non-empty domain.
fn shape(a: &OpenArray) -> String {
    let dims = &a.schema.dimensions;
    let current = a
        .schema
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref());
    let ned = a.non_empty_domain();
    let parts: Vec<String> = dims
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let range = match (current.and_then(|r| r.get(i)), &ned) {
                (Some(r), _) => Some((
                    Value::decode(d.datatype, &r.lo),
                    Value::decode(d.datatype, &r.hi),
                )),
                (None, Some(n)) => Some(n[i].clone()),
                (None, None) => None,
            };
            match range {
                Some((lo, hi)) => format!("{} {}..{}", d.name, lo.display(), hi.display()),
                None => format!("{} (empty)", d.name),
            }
        })
        .collect();
    parts.join(" × ")
}

/// A member, opened.
struct Member {
    listed: ListedMember,
    kind: String,
    shape: String,
    size: u64,
    session: Option<ReadSession>,
}

impl Member {
    fn open(
        storage: &Arc<dyn Storage>,
        group: &OpenGroup,
        listed: ListedMember,
    ) -> Result<Member, ViewError> {
        let st = member_storage(storage, &group.path, &listed.location)?;
        let size = folder_size(&*st, &listed.location);
        let (t1, t2) = (group.timestamp_start, group.timestamp_end);
        if listed.object_type == ObjectType::Group {
            let g = OpenGroup::open(&*st, &listed.location, t1, t2, group.key().copied())?;
            let kind = soma_kind(&g.metadata(&*st)?).unwrap_or_else(|| "group".into());
            return Ok(Member {
                shape: format!("{} members", g.members.len()),
                listed,
                kind,
                size,
                session: None,
            });
        }
        let a = OpenArray::open(&*st, &listed.location, t1, t2, group.key().copied())?;
        let kind = soma_kind(&a.metadata(&*st)?)
            .unwrap_or_else(|| format!("{} array", a.schema.array_type));
        Ok(Member {
            shape: shape(&a),
            listed,
            kind,
            size,
            session: Some(ReadSession::new(st, Arc::new(a))),
        })
    }

    fn id(&self) -> String {
        format!("m-{}", slug(&self.listed.path))
    }
}

/// The page of an opened group: its members (recursively) as a tree, and
/// a section per member array.
pub fn group_page(
    storage: &Arc<dyn Storage>,
    group: &OpenGroup,
    options: &ViewOptions,
) -> Result<Page, ViewError> {
    let title = group.path.display().to_string();
    let meta = group.metadata(&**storage)?;
    let members: Vec<Member> = group
        .list(&**storage, true)?
        .into_iter()
        .map(|m| Member::open(storage, group, m))
        .collect::<Result<_, _>>()?;
    let mut o = format!(
        r#"<section class="group" id="group"><h2>{}</h2><p>{}: {} members.</p><ul class="members">"#,
        escape(&title),
        escape(&soma_kind(&meta).unwrap_or_else(|| "group".into())),
        members.len()
    );
    // A nested list: each member under its group, by path.
    let mut depth = 0;
    for m in &members {
        let level = m.listed.path.matches('/').count();
        while depth < level {
            o.push_str("<ul>");
            depth += 1;
        }
        while depth > level {
            o.push_str("</ul>");
            depth -= 1;
        }
        let name = m.listed.path.rsplit('/').next().unwrap_or(&m.listed.path);
        let label = match m.session {
            Some(_) => format!(r##"<a href="#{}">{}</a>"##, m.id(), escape(name)),
            None => format!("<b>{}</b>", escape(name)),
        };
        let _ = write!(
            o,
            r#"<li class="member" data-path="{}" data-kind="{}">{label} — {}, {}, {}</li>"#,
            escape(&m.listed.path),
            escape(&m.kind),
            escape(&m.kind),
            escape(&m.shape),
            bytes(m.size)
        );
    }
    for _ in 0..depth {
        o.push_str("</ul>");
    }
    o.push_str("</ul></section>");
    for m in &members {
        if let Some(s) = &m.session {
            let options = options.resolve(&s.array().schema, false)?;
            o.push_str(&array_sections(s, &m.listed.path, &m.id(), &options)?);
        }
    }
    Ok(Page { title, body: o })
}

/// The bytes of every file under `path`: sizes from the listings where the
/// storage gives them (object stores), else asked file by file.
pub fn folder_size(storage: &dyn Storage, path: &Path) -> u64 {
    storage.list(path).map_or(0, |entries| {
        entries
            .into_iter()
            .map(|e| {
                let q = path.join(&e.name);
                match (e.is_dir, e.size) {
                    (true, _) => folder_size(storage, &q),
                    (false, Some(n)) => n,
                    (false, None) => storage.size(&q).unwrap_or(0),
                }
            })
            .sum()
    })
}
