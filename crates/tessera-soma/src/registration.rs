//! The `soma_joinid` of every obs or var label an experiment holds or an
//! append brings: what `register_anndatas` and `register_h5ads` build
//! before cells are appended. Labels the experiment holds keep their
//! joinids; each new label takes the next joinid after the largest, in the
//! order the inputs give them.
//!
//! The labels live in one buffer and the hash table holds a 4-byte index
//! per label, so a registry of n labels of m bytes on average takes about
//! n × (m + 21) bytes: 10 million 20-byte cell barcodes in about 400 MiB,
//! where a pandas index of them takes twice that.

use crate::SomaError;
use hashbrown::HashTable;
use std::hash::{BuildHasher, RandomState};

/// Labels and their joinids (see the module).
///
/// ```
/// use tessera_soma::LabelRegistry;
/// let mut obs = LabelRegistry::new();
/// // Cells the experiment holds, at their joinids.
/// obs.insert("AAC", 0).unwrap();
/// obs.insert("GTT", 1).unwrap();
/// // An append's cells: a held label keeps its joinid, new ones follow.
/// assert_eq!(obs.register("TTA").unwrap(), (2, true));
/// assert_eq!(obs.register("AAC").unwrap(), (0, false));
/// assert_eq!(obs.get("TTA"), Some(2));
/// assert_eq!(obs.shape(), 3);
/// ```
#[derive(Clone, Default)]
pub struct LabelRegistry {
    /// Every label's bytes, one after another.
    bytes: Vec<u8>,
    /// Where label i ends in `bytes` (it starts where label i - 1 ends).
    ends: Vec<usize>,
    joinids: Vec<i64>,
    /// Label indices, found by the label's hash.
    table: HashTable<u32>,
    hasher: RandomState,
    /// The largest joinid plus one: the array shape these labels need.
    shape: i64,
}

impl LabelRegistry {
    /// An empty registry.
    pub fn new() -> LabelRegistry {
        LabelRegistry::default()
    }

    /// How many labels are registered.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no label is registered.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The largest joinid plus one (0 when empty): the shape an array
    /// along this axis needs.
    pub fn shape(&self) -> i64 {
        self.shape
    }

    /// Label `i`, in the order labels were registered.
    pub fn label(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        // Only whole `&str`s are ever appended, so every label is UTF-8.
        std::str::from_utf8(&self.bytes[start..self.ends[i]]).unwrap_or_default()
    }

    /// Every label with its joinid, in the order they were registered.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> + '_ {
        (0..self.len()).map(|i| (self.label(i), self.joinids[i]))
    }

    /// The joinid of `label`, if registered.
    pub fn get(&self, label: &str) -> Option<i64> {
        self.find(label).map(|i| self.joinids[i])
    }

    /// Records a label the experiment holds at `joinid`. A label held
    /// twice is an error naming it and both joinids.
    pub fn insert(&mut self, label: &str, joinid: i64) -> Result<(), SomaError> {
        if joinid < 0 {
            return Err(SomaError::Invalid(format!(
                "label `{label}` is at joinid {joinid}: joinids are not negative"
            )));
        }
        if let Some(i) = self.find(label) {
            return Err(SomaError::Invalid(format!(
                "label `{label}` is held at joinids {} and {joinid}: labels must be unique",
                self.joinids[i]
            )));
        }
        self.push(label, joinid)
    }

    /// The joinid of `label`, registering it at the next joinid if it is
    /// new; `true` when it was.
    pub fn register(&mut self, label: &str) -> Result<(i64, bool), SomaError> {
        if let Some(i) = self.find(label) {
            return Ok((self.joinids[i], false));
        }
        let joinid = self.shape;
        self.push(label, joinid)?;
        Ok((joinid, true))
    }

    /// A registry of the labels `labels` only, at their joinids here, with
    /// this one's shape (what one input's writer needs); `Err` holds the
    /// labels not registered (up to `examples` of them) and how many.
    pub fn subset<'a>(
        &self,
        labels: impl IntoIterator<Item = &'a str>,
        examples: usize,
    ) -> Result<LabelRegistry, (Vec<String>, usize)> {
        let mut out = LabelRegistry::new();
        let mut missing = (Vec::new(), 0);
        for label in labels {
            match self.get(label) {
                Some(j) if out.find(label).is_none() => {
                    // Within `u32` labels: this registry holds them.
                    let _ = out.push(label, j);
                }
                Some(_) => {}
                None => {
                    if missing.0.len() < examples {
                        missing.0.push(label.to_string());
                    }
                    missing.1 += 1;
                }
            }
        }
        if missing.1 > 0 {
            return Err(missing);
        }
        out.shape = out.shape.max(self.shape);
        Ok(out)
    }

    fn hash(&self, label: &str) -> u64 {
        self.hasher.hash_one(label.as_bytes())
    }

    fn find(&self, label: &str) -> Option<usize> {
        let h = self.hash(label);
        self.table
            .find(h, |&i| {
                self.label(i as usize).as_bytes() == label.as_bytes()
            })
            .map(|&i| i as usize)
    }

    fn push(&mut self, label: &str, joinid: i64) -> Result<(), SomaError> {
        let index = u32::try_from(self.len()).map_err(|_| {
            SomaError::Invalid("a registry holds at most 4,294,967,295 labels".into())
        })?;
        if joinid == i64::MAX {
            return Err(SomaError::Invalid(format!(
                "label `{label}`: joinid {joinid} is the largest there is"
            )));
        }
        let h = self.hash(label);
        self.bytes.extend_from_slice(label.as_bytes());
        self.ends.push(self.bytes.len());
        self.joinids.push(joinid);
        self.shape = self.shape.max(joinid.saturating_add(1));
        let (bytes, ends, hasher) = (&self.bytes, &self.ends, &self.hasher);
        let rehash = |&i: &u32| {
            let i = i as usize;
            let start = if i == 0 { 0 } else { ends[i - 1] };
            hasher.hash_one(&bytes[start..ends[i]])
        };
        self.table.insert_unique(h, index, rehash);
        Ok(())
    }
}

impl std::fmt::Debug for LabelRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LabelRegistry")
            .field("labels", &self.len())
            .field("shape", &self.shape)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::LabelRegistry;

    /// New labels follow the largest joinid in the order they come; held
    /// ones keep theirs; a subset keeps joinids and the shape.
    #[test]
    fn joinids_follow_the_largest() {
        let mut r = LabelRegistry::new();
        r.insert("a", 0).unwrap();
        r.insert("c", 7).unwrap();
        assert!(r.insert("a", 3).is_err());
        assert!(r.insert("z", -1).is_err());
        let got: Vec<_> = ["b", "a", "d", "b"]
            .iter()
            .map(|l| r.register(l).unwrap())
            .collect();
        assert_eq!(got, vec![(8, true), (0, false), (9, true), (8, false)]);
        assert_eq!(r.shape(), 10);
        let listed: Vec<_> = r.iter().collect();
        assert_eq!(listed, vec![("a", 0), ("c", 7), ("b", 8), ("d", 9)]);
        let s = r.subset(["d", "a", "d"], 4).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![("d", 9), ("a", 0)]);
        assert_eq!(s.shape(), 10);
        let (examples, n) = r.subset(["x", "a", "y", "w"], 2).unwrap_err();
        assert_eq!((examples, n), (vec!["x".to_string(), "y".to_string()], 3));
    }

    /// Many labels (the table grows and rehashes from the buffer), empty
    /// and non-ASCII ones among them.
    #[test]
    fn many_labels_are_found() {
        let mut r = LabelRegistry::new();
        let labels: Vec<String> = (0..50_000).map(|i| format!("cell-{i}-é")).collect();
        for l in &labels {
            assert!(r.register(l).unwrap().1);
        }
        assert_eq!(r.register("").unwrap(), (50_000, true));
        for (i, l) in labels.iter().enumerate() {
            assert_eq!(r.get(l), Some(i as i64));
        }
        assert_eq!(r.get(""), Some(50_000));
        assert_eq!(r.get("cell-50000-é"), None);
        assert_eq!(r.len(), 50_001);
    }
}
