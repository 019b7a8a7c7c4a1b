//! [`Interner`]: the dictionary of names (uids, strings) above a store's image, dense
//! `u32` ids in first-seen order, with the rollback a failed batch needs and the lowercase
//! search heap of the uid search.

use crate::lowercase::LowerHeap;
use std::sync::OnceLock;

/// An interning table: dense `u32` ids for strings, in first-seen order.
///
/// The lookup table holds each id with its name inline when the name is short (at most
/// [`INLINE`] bytes: SNAP and most uids), so a lookup reads the table only, not the name's
/// allocation (a cache miss per lookup fewer: a 10M-event load looks up 20M endpoint names).
#[derive(Default)]
pub(crate) struct Interner {
    ids: hashbrown::HashTable<Slot>,
    pub(crate) names: Vec<Box<str>>,
    /// Lowercase search heap over `names`, built by the first search and dropped whenever
    /// `names` changes (so it always covers exactly the current names).
    lower: OnceLock<LowerHeap>,
}

/// Longest name a [`Slot`] holds inline.
const INLINE: usize = 15;

/// One entry of [`Interner::ids`]: the id, and the name inline (`key[0]` its length, the
/// bytes after it) or `key[0] == LONG` for a longer name, read from `names`.
#[derive(Clone, Copy)]
struct Slot {
    key: [u8; INLINE + 1],
    id: u32,
}

/// `Slot::key[0]` of a name longer than [`INLINE`].
const LONG: u8 = u8::MAX;

impl Slot {
    fn new(s: &str, id: u32) -> Slot {
        let mut key = [0u8; INLINE + 1];
        match s.len() {
            n if n <= INLINE => {
                key[0] = n as u8;
                key[1..=n].copy_from_slice(s.as_bytes());
            }
            _ => key[0] = LONG,
        }
        Slot { key, id }
    }

    /// The name this slot stands for (`names` holds the long ones).
    fn name<'a>(&'a self, names: &'a [Box<str>]) -> &'a [u8] {
        match self.key[0] {
            LONG => names[self.id as usize].as_bytes(),
            n => &self.key[1..=n as usize],
        }
    }
}

fn name_hash(s: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

impl Interner {
    pub(crate) fn get(&self, s: &str) -> Option<u32> {
        let names = &self.names;
        self.ids
            .find(name_hash(s.as_bytes()), |x| x.name(names) == s.as_bytes())
            .map(|x| x.id)
    }

    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        let h = name_hash(s.as_bytes());
        let names = &self.names;
        if let Some(x) = self.ids.find(h, |x| x.name(names) == s.as_bytes()) {
            return x.id;
        }
        let id = self.names.len() as u32;
        self.names.push(s.into());
        let names = &self.names;
        self.ids
            .insert_unique(h, Slot::new(s, id), |x| name_hash(x.name(names)));
        self.lower.take();
        id
    }

    pub(crate) fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Forgets every id `>= len` (rollback of a failed batch).
    pub(crate) fn truncate(&mut self, len: usize) {
        for id in len..self.names.len() {
            let names = &self.names;
            let s = names[id].as_bytes();
            if let Ok(e) = self.ids.find_entry(name_hash(s), |x| x.name(names) == s) {
                e.remove();
            }
        }
        self.names.truncate(len);
        self.lower.take();
    }

    /// The lowercase search heap of the current names (built once, then cached).
    pub(crate) fn lower(&self) -> &LowerHeap {
        self.lower
            .get_or_init(|| LowerHeap::build(self.names.iter().map(|n| &**n)))
    }
}
