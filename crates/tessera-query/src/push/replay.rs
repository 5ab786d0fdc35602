//! The storage a [`PushDecoder`](super::PushDecoder) runs the read
//! against: it answers from what was pushed and, for anything else,
//! notes the need and fails (or, for `exists`, says no). An attempt that
//! noted a need is void whatever it returned: the decoder asks for what
//! was noted and runs the same step again once it is given, which asks
//! for exactly the same things (the read's plan depends on the array, the
//! request and these answers only).
//!
//! A replay that lets the read begin tiles ahead ([`Replay::ahead`])
//! notes the ranges begun ([`ReadableStorage::begin_batch`]) apart, as
//! ranges the read will need: they void no attempt until the read waits
//! for them, and the driver may fetch them while it works on the batch
//! before.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tessera_storage::{
    Data, DirEntry, ListableStorage, Need, PendingBatch, ReadableStorage, StorageError,
    StorageErrorKind, StorageHints, StorageResult, REOPENS,
};

/// An answer kept to be given again, so that replays fail as the
/// storage did.
type Kept = StorageResult<Data>;

/// What was pushed, and what the current attempt lacked.
#[derive(Default)]
struct Known {
    answers: HashMap<Need, Kept>,
    lacked: Vec<Need>,
    noted: HashSet<Need>,
    /// Ranges begun ahead and not pushed, in the order first begun.
    ahead: Vec<Need>,
    ahead_noted: HashSet<Need>,
    /// Ranges read since bytes were last forgotten.
    used: HashSet<Need>,
    /// Listings are asked anew ([`Need::Relist`]): a file listed was gone.
    anew: bool,
    /// How many times the read had listings asked anew.
    relisted: usize,
}

impl Known {
    /// Notes `need` as lacked by this attempt, once.
    fn lack(&mut self, need: Need) {
        if self.noted.insert(need.clone()) {
            self.lacked.push(need);
        }
    }
}

/// Pushed answers served as a storage; needs noted.
#[derive(Default)]
pub(crate) struct Replay {
    /// Shared with the batches begun ahead, which look their bytes up
    /// when the read waits for them.
    known: Arc<Mutex<Known>>,
    /// The bytes of later batches' tiles the read may begin ahead
    /// ([`StorageHints::batches_ahead`]); 0: none.
    ahead_bytes: u64,
}

/// The file or folder `need` is about.
fn key(need: &Need) -> std::borrow::Cow<'_, str> {
    match need {
        Need::Range(p, _)
        | Need::Tail(p, _)
        | Need::Size(p)
        | Need::List(p)
        | Need::Relist(p)
        | Need::Exists(p) => p.to_string_lossy(),
    }
}

/// The error an attempt meets for an answer not yet pushed.
fn not_pushed(need: &Need) -> StorageError {
    StorageError::new(
        StorageErrorKind::Other,
        key(need),
        format!("not yet pushed to the read: {need:?}"),
    )
}

/// A kept answer as the storage gave it.
fn given(kept: &Kept) -> StorageResult<Data> {
    match kept {
        Ok(data) => Ok(data.clone()),
        Err(e) => Err(e.copied()),
    }
}

/// The error for `need` answered with `data` of another kind.
fn wrong(need: &Need, data: &Data) -> StorageError {
    StorageError::new(
        StorageErrorKind::Other,
        key(need),
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

/// The shared state, locked (a panic elsewhere leaves it usable: every
/// change to it is whole).
fn lock(known: &Mutex<Known>) -> std::sync::MutexGuard<'_, Known> {
    known.lock().unwrap_or_else(|p| p.into_inner())
}

/// The answer to `need`, or `None` (noted as lacked).
fn answer(known: &Mutex<Known>, need: Need) -> Option<Kept> {
    let mut known = lock(known);
    if let Some(a) = known.answers.get(&need) {
        let a = given(a);
        if matches!(need, Need::Range(..)) {
            known.used.insert(need);
        }
        return Some(a);
    }
    known.lack(need);
    None
}

/// The bytes `range` of `path`, pushed.
fn bytes(known: &Mutex<Known>, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
    let need = Need::Range(path.to_path_buf(), range.clone());
    match answer(known, need.clone()) {
        None => Err(not_pushed(&need)),
        Some(Ok(Data::Bytes(b))) if b.len() as u64 == range.end - range.start => Ok(b),
        Some(Ok(Data::Bytes(b))) => Err(StorageError::new(
            StorageErrorKind::OutOfRange,
            key(&need),
            format!("{need:?} was answered with {} bytes", b.len()),
        )),
        Some(Ok(other)) => Err(wrong(&need, &other)),
        Some(Err(e)) => Err(e),
    }
}

/// Every request looked up (all that are lacking noted at once), then the
/// first failure returned.
fn batch(known: &Mutex<Known>, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
    let got: Vec<StorageResult<Vec<u8>>> = requests
        .iter()
        .map(|(p, r)| bytes(known, p, r.clone()))
        .collect();
    got.into_iter().collect()
}

impl Replay {
    /// A replay whose read may begin up to `bytes` of later batches'
    /// tiles ahead, noted apart ([`Replay::take_ahead`]).
    pub(crate) fn ahead(bytes: u64) -> Replay {
        Replay {
            known: Arc::default(),
            ahead_bytes: bytes,
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        lock(&self.known)
    }

    /// Keeps `answer` for the next attempts.
    pub(crate) fn push(&self, need: Need, answer: StorageResult<Data>) {
        self.known().answers.insert(need, answer);
    }

    /// What the attempt since the last call lacked, in the order first
    /// asked; `None` when it lacked nothing (its outcome stands).
    pub(crate) fn take_lacked(&self) -> Option<Vec<Need>> {
        let mut known = self.known();
        known.noted.clear();
        let lacked = std::mem::take(&mut known.lacked);
        (!lacked.is_empty()).then_some(lacked)
    }

    /// The ranges begun ahead since the last call and not pushed yet, in
    /// the order first begun.
    pub(crate) fn take_ahead(&self) -> Vec<Need> {
        let mut known = self.known();
        known.ahead_noted.clear();
        let ahead = std::mem::take(&mut known.ahead);
        ahead
            .into_iter()
            .filter(|n| !known.answers.contains_key(n))
            .collect()
    }

    /// Forgets the bytes of files read since the last call (a batch that
    /// was given out no longer needs them; what metadata they held is
    /// kept parsed by the array), keeping listings, sizes and existence,
    /// and, where tiles are begun ahead, ranges not read yet.
    pub(crate) fn forget_bytes(&self) {
        let ahead = self.ahead_bytes > 0;
        let known = &mut *self.known();
        let used = std::mem::take(&mut known.used);
        known.answers.retain(|need, _| match need {
            Need::Range(..) => ahead && !used.contains(need),
            Need::Tail(..) => false,
            _ => true,
        });
    }

    /// Forgets every answer and every need noted: the read is over.
    pub(crate) fn forget_all(&self) {
        let known = &mut *self.known();
        *known = Known::default();
    }

    /// The bytes of the answers kept: ranges, tails and the names in
    /// listings.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        let known = self.known();
        let size = |data: &Data| match data {
            Data::Bytes(b) | Data::Tail(_, b) => b.len() as u64,
            Data::List(entries) => entries.iter().map(|e| e.name.len() as u64).sum(),
            Data::Size(_) | Data::Exists(_) => 0,
        };
        known.answers.values().flatten().map(size).sum()
    }

    /// The answer to `need`, or `None` (noted as lacked).
    fn answer(&self, need: Need) -> Option<Kept> {
        answer(&self.known, need)
    }
}

impl ReadableStorage for Replay {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        bytes(&self.known, path, range)
    }

    /// Every request is looked up (all that are lacking noted at once),
    /// then the first failure returned.
    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        batch(&self.known, requests)
    }

    /// With tiles begun ahead, the ranges not pushed are noted as begun
    /// ahead, and looked up when the read waits for them (then noted as
    /// lacked if still not pushed); otherwise looked up now.
    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        if self.ahead_bytes == 0 {
            return PendingBatch::ready(self.read_batch(&requests));
        }
        {
            let known = &mut *self.known();
            for (p, r) in &requests {
                let need = Need::Range(p.clone(), r.clone());
                if !known.answers.contains_key(&need) && known.ahead_noted.insert(need.clone()) {
                    known.ahead.push(need);
                }
            }
        }
        let known = self.known.clone();
        PendingBatch::in_flight(move || batch(&known, &requests))
    }

    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        let need = Need::Tail(path.to_path_buf(), max);
        match self.answer(need.clone()) {
            None => Err(not_pushed(&need)),
            Some(Ok(Data::Tail(size, b))) => Ok((size, b)),
            Some(Ok(other)) => Err(wrong(&need, &other)),
            Some(Err(e)) => Err(e),
        }
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        let need = Need::Size(path.to_path_buf());
        match self.answer(need.clone()) {
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
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        let need = match self.known().anew {
            true => Need::Relist(path.to_path_buf()),
            false => Need::List(path.to_path_buf()),
        };
        match self.answer(need.clone()) {
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
    /// listings lists again too. At most [`REOPENS`] times over the
    /// read, as a read over storage lists at most so often in an open:
    /// each attempt replays the open, and a file that stays missing would
    /// otherwise have every attempt ask anew, forever. After that the
    /// listings stand, and the open fails as that read's does.
    fn list_anew(&self) {
        let mut known = self.known();
        if known.relisted >= REOPENS {
            return;
        }
        known.relisted += 1;
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

    /// What [`Replay::ahead`] was given; by default none (the decoder's
    /// drivers ask for the next batch's needs themselves).
    fn batches_ahead(&self) -> u64 {
        self.ahead_bytes
    }

    /// Yes: an attempt notes its needs and is run again once they are
    /// answered.
    fn notes_needs(&self) -> bool {
        true
    }

    /// Whether all of `ranges` were pushed; those not pushed are noted
    /// as lacked (the attempt is void).
    fn has_ranges(&self, ranges: &[(PathBuf, Range<u64>)]) -> bool {
        let known = &mut *self.known();
        let mut all = true;
        for (p, r) in ranges {
            let need = Need::Range(p.clone(), r.clone());
            if known.answers.contains_key(&need) {
                continue;
            }
            all = false;
            known.lack(need);
        }
        all
    }

    /// None: a step never sleeps; its driver answers the listings asked
    /// anew when it can.
    fn pause_before_listing_again(&self, _attempt: usize) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}
