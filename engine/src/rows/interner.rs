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
///
/// Names that are one stem and a number (`n42`, `n7`: the uids of every SNAP load) are
/// looked up in [`Numbered`], pages of ids indexed by the number, and not in the table: a
/// 10M-event load over 1M uids looks its names up in 4 MB instead of a 40 MB table (a cache
/// miss per lookup fewer: 0.5 of the lookup time alone).
#[derive(Default)]
pub(crate) struct Interner {
    ids: hashbrown::HashTable<Slot>,
    numbered: Option<Numbered>,
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

/// The ids of the names `stem` + a number below [`NUMBERED_LIMIT`] written in canonical
/// decimal (no sign, no leading zero), by number, in pages of [`PAGE`] numbers allocated
/// as names reach them: a few large numbers (a small delta above an image, read at open)
/// cost a page each, not an array as long as the largest.
/// The stem is the first such name's (its digits cut off); a name with another stem, or a
/// number written otherwise (`n007`) or too large, goes to the table, so each name has
/// exactly one place.
struct Numbered {
    stem: Box<str>,
    pages: Vec<Option<Box<[u32]>>>,
}

/// Bits of a number that index within its page of [`Numbered`].
const PAGE_BITS: usize = 12;
/// Numbers a page of [`Numbered`] holds (16 KB of ids).
const PAGE: usize = 1 << PAGE_BITS;

/// [`Interner::get_many`]'s entry for a name that is not interned (no name has this id:
/// the pages store an id + 1 in a `u32`).
pub(crate) const NOT_FOUND: u32 = u32::MAX;

/// Numbers from here on go to the table: the pages stay within 32 MB whatever the names.
const NUMBERED_LIMIT: usize = 1 << 23;

/// An entry of a [`Numbered`] page that no name holds (an entry is its name's id + 1, so a
/// page starts as zeroed memory).
const NO_ID: u32 = 0;

/// `s` as a stem and a number of [`Numbered`]: the number is its trailing digits, in
/// canonical decimal and below [`NUMBERED_LIMIT`].
fn stem_and_number(s: &str) -> Option<(&str, usize)> {
    let b = s.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 7 || (digits > 1 && b[b.len() - digits] == b'0') {
        return None;
    }
    let (stem, number) = s.split_at(s.len() - digits);
    let n = number
        .bytes()
        .fold(0usize, |n, c| n * 10 + usize::from(c - b'0'));
    (n < NUMBERED_LIMIT).then_some((stem, n))
}

impl Numbered {
    /// The id of the name numbered `n`, when one is interned.
    #[inline]
    fn id(&self, n: usize) -> Option<u32> {
        let page = self.pages.get(n >> PAGE_BITS)?.as_ref()?;
        page.get(n % PAGE)
            .copied()
            .filter(|&e| e != NO_ID)
            .map(|e| e - 1)
    }

    /// The number of `s` when `s` belongs here.
    #[inline]
    fn number(&self, s: &str) -> Option<usize> {
        let rest = s.strip_prefix(&*self.stem)?;
        // The stem never ends with a digit: the rest is the name's whole digit run or
        // not a number.
        match stem_and_number(rest)? {
            ("", n) => Some(n),
            _ => None,
        }
    }
}

fn name_hash(s: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

impl Interner {
    pub(crate) fn get(&self, s: &str) -> Option<u32> {
        if let Some(d) = &self.numbered {
            if let Some(n) = d.number(s) {
                return d.id(n);
            }
        }
        let names = &self.names;
        self.ids
            .find(name_hash(s.as_bytes()), |x| x.name(names) == s.as_bytes())
            .map(|x| x.id)
    }

    /// [`Interner::get`] of each of `names`, in order, into `out` (`None` as
    /// [`NOT_FOUND`]). The numbered names' pages are read in a pass of their own, whose
    /// reads do not depend on each other, so the CPU overlaps their cache misses: looked up
    /// one event at a time, between the rest of the event's work, the endpoints of a
    /// 10M-event load waited for memory a third of the writer's time.
    pub(crate) fn get_many<'a>(
        &self,
        names: impl Iterator<Item = &'a str> + Clone,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        let Some(d) = &self.numbered else {
            out.extend(names.map(|s| self.get(s).unwrap_or(NOT_FOUND)));
            return;
        };
        // First each name's number (`NOT_FOUND` for the table's names), then the reads.
        out.extend(
            names
                .clone()
                .map(|s| d.number(s).map_or(NOT_FOUND, |n| n as u32)),
        );
        for (o, s) in out.iter_mut().zip(names) {
            let id = match *o {
                NOT_FOUND => self.get(s),
                n => d.id(n as usize),
            };
            *o = id.unwrap_or(NOT_FOUND);
        }
    }

    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if self.numbered.is_none() {
            if let Some((stem, _)) = stem_and_number(s) {
                self.numbered = Some(Numbered {
                    stem: stem.into(),
                    pages: Vec::new(),
                });
            }
        }
        if let Some(d) = &mut self.numbered {
            if let Some(n) = d.number(s) {
                let p = n >> PAGE_BITS;
                if p >= d.pages.len() {
                    d.pages.resize(p + 1, None);
                }
                let page = d.pages[p].get_or_insert_with(|| vec![NO_ID; PAGE].into());
                let e = &mut page[n % PAGE];
                if *e == NO_ID {
                    *e = self.names.len() as u32 + 1;
                    self.names.push(s.into());
                    self.lower.take();
                }
                return *e - 1;
            }
        }
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
            if let Some(d) = &mut self.numbered {
                if let Some(n) = d.number(&names[id]) {
                    if let Some(page) = d.pages.get_mut(n >> PAGE_BITS).and_then(Option::as_mut) {
                        page[n % PAGE] = NO_ID;
                    }
                    continue;
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are in first-seen order and every lookup agrees, whichever place a name has
    /// (array or table: numbered names, other stems, leading zeros, long and large numbers,
    /// a bare number), before and after a rollback.
    #[test]
    fn numbered_and_other_names_intern_alike() {
        let names = [
            "n5",
            "n0",
            "x7",
            "n05",
            "n",
            "n12345678",
            "n8388607",
            "n8388608",
            "5",
            "n5",
            "nn3",
            "m12",
            "n0",
            "a-very-long-name-beyond-inline-15",
            "n42",
            "x7",
        ];
        let mut t = Interner::default();
        let mut want: Vec<&str> = Vec::new();
        for s in names {
            let id = t.intern(s);
            let at = want.iter().position(|w| *w == s).unwrap_or_else(|| {
                want.push(s);
                want.len() - 1
            });
            assert_eq!(id as usize, at, "{s}");
        }
        for (i, s) in want.iter().enumerate() {
            assert_eq!(t.get(s), Some(i as u32), "{s}");
            assert_eq!(t.name(i as u32), *s);
        }
        assert!(t.numbered.as_ref().is_some_and(|d| &*d.stem == "n"));
        for s in ["n6", "n1", "n005", "x8", "6"] {
            assert_eq!(t.get(s), None, "{s}");
        }
        // The lookup of many names at once agrees with one at a time, found or not (a
        // number beyond the pages, one in a page with no name).
        let asked = [
            "n5", "n6", "x7", "n8388607", "n4096000", "n4095", "n42", "nn3", "n0",
        ];
        let mut got = Vec::new();
        t.get_many(asked.into_iter(), &mut got);
        let want_ids: Vec<u32> = asked
            .iter()
            .map(|s| t.get(s).unwrap_or(NOT_FOUND))
            .collect();
        assert_eq!(got, want_ids);
        assert!(got.contains(&NOT_FOUND) && got.iter().any(|&id| id != NOT_FOUND));
        Interner::default().get_many(asked.into_iter(), &mut got);
        assert!(got.iter().all(|&id| id == NOT_FOUND));
        t.truncate(3);
        assert_eq!(t.len(), 3);
        for s in &want[3..] {
            assert_eq!(t.get(s), None, "{s} after the rollback");
        }
        assert_eq!(t.intern("n42"), 3);
        assert_eq!(t.get("n5"), Some(0));
    }
}
