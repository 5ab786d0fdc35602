//! The storage a [`PushDecoder`](super::PushDecoder) runs the read
//! against: it answers from what was pushed and, for anything else,
//! notes the need and fails (or, for `exists`, says no). An attempt that
//! noted a need is void whatever it returned: the decoder asks for what
//! was noted and runs the same step again once it is given, which asks
//! for exactly the same things (the read's plan depends on the array, the
//! request and these answers only).

use std::collections::{HashMap, HashSet};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tessera_tile::storage::{Data, DirEntry, ListableStorage, Need, ReadableStorage, StorageHints};

/// An answer kept to be given again: an error as its kind and message
/// (errors are not cloned), so that replays fail as the storage did.
type Kept = Result<Data, (io::ErrorKind, String)>;

/// What was pushed, and what the current attempt lacked.
#[derive(Default)]
struct Known {
    answers: HashMap<Need, Kept>,
    lacked: Vec<Need>,
    noted: HashSet<Need>,
    /// Listings are asked anew ([`Need::Relist`]): a file listed was gone.
    anew: bool,
}

/// Pushed answers served as a storage; needs noted.
#[derive(Default)]
pub(crate) struct Replay {
    known: Mutex<Known>,
}

/// The error an attempt meets for an answer not yet pushed.
fn not_pushed(need: &Need) -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("not yet pushed to the read: {need:?}"),
    )
}

/// A kept answer as the storage gave it.
fn given(kept: Kept) -> io::Result<Data> {
    kept.map_err(|(kind, message)| io::Error::new(kind, message))
}

/// The error for `need` answered with `data` of another kind.
fn wrong(need: &Need, data: &Data) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{need:?} was answered with {}", data_kind(data)),
    )
}

fn data_kind(data: &Data) -> &'static str {
    match data {
        Data::Bytes(_) => "bytes",
        Data::Tail(..) => "a tail",
        Data::Size(_) => "a size",
        Data::List(_) => "a listing",
        Data::Exists(_) => "an existence",
    }
}

impl Replay {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `answer` for the next attempts.
    pub(crate) fn push(&self, need: Need, answer: io::Result<Data>) {
        let kept = answer.map_err(|e| (e.kind(), e.to_string()));
        self.known().answers.insert(need, kept);
    }

    /// What the attempt since the last call lacked, in the order first
    /// asked; `None` when it lacked nothing (its outcome stands).
    pub(crate) fn take_lacked(&self) -> Option<Vec<Need>> {
        let mut known = self.known();
        known.noted.clear();
        let lacked = std::mem::take(&mut known.lacked);
        (!lacked.is_empty()).then_some(lacked)
    }

    /// Forgets the bytes of files pushed (a batch that was given out no
    /// longer needs them; what metadata they held is kept parsed by the
    /// array), keeping listings, sizes and existence.
    pub(crate) fn forget_bytes(&self) {
        self.known()
            .answers
            .retain(|need, _| !matches!(need, Need::Range(..) | Need::Tail(..)));
    }

    /// The answer to `need`, or `None` (noted as lacked).
    fn answer(&self, need: Need) -> Option<Kept> {
        let mut known = self.known();
        if let Some(a) = known.answers.get(&need) {
            return Some(a.clone());
        }
        if known.noted.insert(need.clone()) {
            known.lacked.push(need);
        }
        None
    }

    /// The bytes `range` of `path`, pushed.
    fn bytes(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        let need = Need::Range(path.to_path_buf(), range.clone());
        match self.answer(need.clone()).map(given) {
            None => Err(not_pushed(&need)),
            Some(Ok(Data::Bytes(b))) if b.len() as u64 == range.end - range.start => Ok(b),
            Some(Ok(Data::Bytes(b))) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{need:?} was answered with {} bytes", b.len()),
            )),
            Some(Ok(other)) => Err(wrong(&need, &other)),
            Some(Err(e)) => Err(e),
        }
    }
}

impl ReadableStorage for Replay {
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        self.bytes(path, range)
    }

    /// Every request is looked up (all that are lacking noted at once),
    /// then the first failure returned.
    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<Vec<Vec<u8>>> {
        let got: Vec<io::Result<Vec<u8>>> = requests
            .iter()
            .map(|(p, r)| self.bytes(p, r.clone()))
            .collect();
        got.into_iter().collect()
    }

    fn read_tail(&self, path: &Path, max: u64) -> io::Result<(u64, Vec<u8>)> {
        let need = Need::Tail(path.to_path_buf(), max);
        match self.answer(need.clone()).map(given) {
            None => Err(not_pushed(&need)),
            Some(Ok(Data::Tail(size, b))) => Ok((size, b)),
            Some(Ok(other)) => Err(wrong(&need, &other)),
            Some(Err(e)) => Err(e),
        }
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        let need = Need::Size(path.to_path_buf());
        match self.answer(need.clone()).map(given) {
            None => Err(not_pushed(&need)),
            Some(Ok(Data::Size(n))) => Ok(n),
            Some(Ok(other)) => Err(wrong(&need, &other)),
            Some(Err(e)) => Err(e),
        }
    }
}

impl ListableStorage for Replay {
    /// Unknown: empty, as a missing folder lists (the attempt is void
    /// anyway, having noted the need), so that one attempt goes on to
    /// note every folder it lists that does not depend on this one.
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let need = match self.known().anew {
            true => Need::Relist(path.to_path_buf()),
            false => Need::List(path.to_path_buf()),
        };
        match self.answer(need.clone()).map(given) {
            None => Ok(Vec::new()),
            Some(Ok(Data::List(entries))) => Ok(entries),
            Some(Ok(other)) => Err(wrong(&need, &other)),
            Some(Err(e)) => Err(e),
        }
    }

    /// Unknown: no (the attempt is void anyway, having noted the need).
    fn exists(&self, path: &Path) -> bool {
        let need = Need::Exists(path.to_path_buf());
        matches!(self.answer(need), Some(Ok(Data::Exists(true))))
    }

    /// Listings and existence are asked anew, listings as
    /// [`Need::Relist`] from now on, so that a storage that keeps its
    /// listings lists again too.
    fn list_anew(&self) {
        let mut known = self.known();
        known.anew = true;
        known
            .answers
            .retain(|need, _| !matches!(need, Need::List(_) | Need::Relist(_) | Need::Exists(_)));
    }
}

/// Every read is batched, and a batch's tiles are asked for at once: an
/// attempt notes all it lacks in one pass, so that a batch costs one
/// round of answers.
impl StorageHints for Replay {
    fn prefers_batches(&self) -> bool {
        true
    }

    fn read_ahead(&self) -> u64 {
        1 << 40
    }

    /// None: the decoder's drivers ask for the next batch's needs
    /// themselves, and a need noted voids the attempt that noted it.
    fn batches_ahead(&self) -> u64 {
        0
    }
}
