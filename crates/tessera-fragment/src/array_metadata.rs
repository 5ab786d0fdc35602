//! Array metadata (`format_spec/metadata.md`): key-value entries in generic
//! tiles under `__meta/`, merged in timestamp order, deletions applied.

use crate::FragmentError;
use serde::Serialize;
use std::collections::BTreeMap;
use tessera_tile::{Datatype, Reader};

/// One metadata value: its datatype and raw bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetadataValue {
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Number of values.
    pub count: u32,
    /// The value bytes.
    pub bytes: Vec<u8>,
}

/// Applies the entries of one metadata file to `map`.
pub fn apply_entries(
    payload: &[u8],
    map: &mut BTreeMap<String, MetadataValue>,
) -> Result<(), FragmentError> {
    let mut r = Reader::new(payload, "array metadata");
    while !r.is_empty() {
        let n = r.u32("key length")?;
        let key = String::from_utf8_lossy(r.bytes("key", n as u64)?).into_owned();
        if r.bool("deletion")? {
            map.remove(&key);
            continue;
        }
        let at = r.position();
        let id = r.u8("value type")?;
        let datatype = Datatype::from_id(id)
            .ok_or_else(|| r.invalid_at(at, "value type", format!("unknown datatype id {id}")))?;
        let count = r.u32("number of values")?;
        let len = (count as u64)
            .checked_mul(datatype.size())
            .ok_or_else(|| r.invalid("number of values", "too large"))?;
        let bytes = r.bytes("value", len)?.to_vec();
        map.insert(
            key,
            MetadataValue {
                datatype,
                count,
                bytes,
            },
        );
    }
    Ok(())
}

impl MetadataValue {
    /// As JSON: numbers (a list when more than one), strings for text types, hex for blobs.
    pub fn to_json(&self) -> serde_json::Value {
        if self.datatype.is_blob() || matches!(self.datatype, Datatype::Any) {
            return self
                .bytes
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
                .into();
        }
        use tessera_schema::value::{scalar_or_list, values_to_json};
        scalar_or_list(values_to_json(self.datatype, &self.bytes))
    }
}
