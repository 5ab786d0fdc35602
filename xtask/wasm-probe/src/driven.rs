//! A read whose I/O the host does, as a browser's would be done with
//! `fetch`: each step gives the push decoder's needs as JSON, the host
//! reads them from wherever the array is and pushes the answers back.

use crate::bytes::{take, take_bytes, take_len, take_str};
use crate::tally::Tally;
use crate::ROOT;
use serde_json::{json, Value as Json};
use std::path::Path;
use tessera_filters::EncryptionKey;
use tessera_query::push::{Answer, Data, Need, PushDecoder, Step};
use tessera_query::ReadRequest;
use tessera_storage::{DirEntry, StorageError, StorageErrorKind};

/// Status byte of an answer: the need was answered.
const ANSWERED: u8 = 0;
/// Status byte of an answer: no such file or folder.
const MISSING: u8 = 1;

/// A read of every cell of the array at [`ROOT`], driven by the host.
pub struct Driven {
    decoder: PushDecoder,
    /// What the last step asked for, in order.
    asked: Vec<Need>,
    tally: Tally,
}

impl Driven {
    /// The read, of an array encrypted with `key` if given.
    pub fn new(key: Option<EncryptionKey>) -> Driven {
        Driven {
            decoder: PushDecoder::new(Path::new(ROOT), key, ReadRequest::new()),
            asked: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Steps until the decoder needs something or the read ends:
    /// `{"needs": [{"kind", "path", ...}]}` (kinds `range` with `start`
    /// and `end`, `tail` with `max`, `size`, `list`, `exists`; paths
    /// relative to the array), `{"summary": ...}` at the end (see
    /// [`Tally`]), or `{"error": message}`.
    pub fn step(&mut self) -> Json {
        loop {
            match self.decoder.step() {
                Ok(Step::Need(needs)) => {
                    let asked = needs.iter().map(need_json).collect::<Vec<_>>();
                    self.asked = needs;
                    return json!({ "needs": asked });
                }
                Ok(Step::Batch(b)) => self.tally.add(&b),
                Ok(Step::Done) => return json!({ "summary": self.tally.to_json() }),
                Err(e) => return json!({ "error": e.to_string() }),
            }
        }
    }

    /// Pushes the answers of the needs the last step gave, from `blob`:
    /// per need, in order, a status byte (0: answered, 1: no such file or
    /// folder) and, if answered, a range's bytes (a `u64` length, then
    /// them), a tail's file size (`u64`) and bytes, a size (`u64`), a
    /// listing (a `u32` count, then each entry's name as a `u32` length
    /// and UTF-8, a byte 1 for folders, its size as a `u64`), or whether
    /// it exists (a byte); little-endian.
    pub fn push(&mut self, mut blob: &[u8]) -> Result<(), String> {
        let asked = std::mem::take(&mut self.asked);
        let mut answers: Vec<Answer> = Vec::with_capacity(asked.len());
        for need in asked {
            let [status] = take(&mut blob, "answer's status")?;
            let data = match status {
                ANSWERED => Ok(data(&need, &mut blob)?),
                MISSING => Err(StorageError::new(
                    StorageErrorKind::NotFound,
                    path_of(&need).to_string_lossy(),
                    "no such file",
                )),
                other => return Err(format!("answer status {other}")),
            };
            answers.push((need, data));
        }
        if !blob.is_empty() {
            return Err(format!("{} bytes after the last answer", blob.len()));
        }
        self.decoder.push(answers);
        Ok(())
    }
}

/// The answer to `need` taken off `blob`.
fn data(need: &Need, blob: &mut &[u8]) -> Result<Data, String> {
    Ok(match need {
        Need::Range(..) => {
            let n = take_len(blob, "range's length")?;
            Data::Bytes(take_bytes(blob, n, "range's bytes")?.to_vec())
        }
        Need::Tail(..) => {
            let size = u64::from_le_bytes(take(blob, "file's size")?);
            let n = take_len(blob, "tail's length")?;
            Data::Tail(size, take_bytes(blob, n, "tail's bytes")?.to_vec())
        }
        Need::Size(_) => Data::Size(u64::from_le_bytes(take(blob, "file's size")?)),
        Need::List(_) | Need::Relist(_) => {
            let count = u32::from_le_bytes(take(blob, "listing's count")?);
            let mut entries = Vec::new();
            for _ in 0..count {
                let name = take_str(blob, "entry's name")?;
                let [is_dir] = take(blob, "entry's kind")?;
                let size = u64::from_le_bytes(take(blob, "entry's size")?);
                let is_dir = is_dir == 1;
                let size = (!is_dir).then_some(size);
                entries.push(DirEntry { name, is_dir, size });
            }
            Data::List(entries)
        }
        Need::Exists(_) => Data::Exists(take::<1>(blob, "existence")?[0] == 1),
    })
}

/// The path `need` names.
fn path_of(need: &Need) -> &Path {
    match need {
        Need::Range(p, _) | Need::Tail(p, _) => p,
        Need::Size(p) | Need::List(p) | Need::Relist(p) | Need::Exists(p) => p,
    }
}

/// `need` as the host is given it.
fn need_json(need: &Need) -> Json {
    let path = path_of(need);
    let rel = path.strip_prefix(ROOT).unwrap_or(path).to_string_lossy();
    match need {
        Need::Range(_, r) => {
            json!({ "kind": "range", "path": rel, "start": r.start, "end": r.end })
        }
        Need::Tail(_, max) => json!({ "kind": "tail", "path": rel, "max": max }),
        Need::Size(_) => json!({ "kind": "size", "path": rel }),
        Need::List(_) | Need::Relist(_) => json!({ "kind": "list", "path": rel }),
        Need::Exists(_) => json!({ "kind": "exists", "path": rel }),
    }
}
