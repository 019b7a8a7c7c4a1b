//! The valid-time index under the window reads of `read.rs`: per row table (nodes, edges),
//! the row ids ordered by `vt_s`, and the ids of the non-instantaneous rows
//! (`vt_e != vt_s + 1`) ordered by `vt_e`. Boundary, start and overlap queries binary-search
//! these and visit only candidate rows; the caller checks belief (`alive`, `tt`) on the row.
//!
//! Invariants that keep it correct under writes:
//! - A row's valid interval never changes once written: closures change `tt_e`, retirement
//!   flips `alive`, and both are read from the row at query time, never from the index.
//! - Rows are only appended; a failed batch truncates its table back to the count at the
//!   batch start, and [`IndexCache::truncate`] drops an index that covers removed rows.
//! - An index covers the rows `[0, covered)`; rows above (the tail, the newest writes) are
//!   candidates unconditionally. A read that finds the tail larger than `covered / 8` merges
//!   it in first, so tail scans stay a small fraction of the table.
//!
//! The index is built lazily by the first read that needs it (a parallel sort), so opening
//! a store and bulk ingest pay nothing for it.

use crate::model::Row;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

/// A `(key, row id)` entry.
type Pair = (i64, u32);

/// Row ids ordered by a key, with the keys alongside (binary search without row access).
#[derive(Default)]
pub(crate) struct Sorted {
    keys: Vec<i64>,
    ids: Vec<u32>,
}

impl Sorted {
    /// From `(key, id)` pairs; the order `(key, id)` is total, so the result does not depend
    /// on the thread count.
    fn from_pairs(mut pairs: Vec<Pair>) -> Sorted {
        pairs.par_sort_unstable();
        let (keys, ids) = pairs.into_iter().unzip();
        Sorted { keys, ids }
    }

    /// Merges two sorted sets (ids of `b` are all above those of `self`).
    fn merge(&self, b: Sorted) -> Sorted {
        let n = self.keys.len() + b.keys.len();
        let mut out = Sorted {
            keys: Vec::with_capacity(n),
            ids: Vec::with_capacity(n),
        };
        let (mut i, mut j) = (0, 0);
        while i < self.keys.len() && j < b.keys.len() {
            if (self.keys[i], self.ids[i]) <= (b.keys[j], b.ids[j]) {
                out.keys.push(self.keys[i]);
                out.ids.push(self.ids[i]);
                i += 1;
            } else {
                out.keys.push(b.keys[j]);
                out.ids.push(b.ids[j]);
                j += 1;
            }
        }
        out.keys.extend_from_slice(&self.keys[i..]);
        out.ids.extend_from_slice(&self.ids[i..]);
        out.keys.extend_from_slice(&b.keys[j..]);
        out.ids.extend_from_slice(&b.ids[j..]);
        out
    }

    /// Positions of the keys in `[lo, hi]` (inclusive; empty when `lo > hi`).
    fn pos(&self, lo: i64, hi: i64) -> Range<usize> {
        let a = self.keys.partition_point(|&k| k < lo);
        let b = self.keys.partition_point(|&k| k <= hi).max(a);
        a..b
    }

    /// Ids with key in `[lo, hi]`.
    pub(crate) fn ids_in(&self, lo: i64, hi: i64) -> &[u32] {
        &self.ids[self.pos(lo, hi)]
    }

    /// Number of ids with key in `[lo, hi]`.
    pub(crate) fn count_in(&self, lo: i64, hi: i64) -> usize {
        self.pos(lo, hi).len()
    }
}

/// True when the row's valid interval is longer than one microsecond.
pub(crate) fn is_long(r: &Row) -> bool {
    r.vt_e != r.vt_s.saturating_add(1)
}

/// The index of one row table over `[0, covered)`.
#[derive(Default)]
pub(crate) struct TableIndex {
    pub(crate) covered: usize,
    /// Every covered row by `vt_s`.
    pub(crate) by_start: Sorted,
    /// The covered long rows by `vt_e`.
    pub(crate) by_end: Sorted,
}

impl TableIndex {
    /// `(vt_s, id)` of every row and `(vt_e, id)` of the long rows; ids from `base`.
    fn pairs(rows: &[Row], base: usize) -> (Vec<Pair>, Vec<Pair>) {
        let starts: Vec<Pair> = rows
            .par_iter()
            .enumerate()
            .map(|(i, r)| (r.vt_s, (base + i) as u32))
            .collect();
        let ends: Vec<Pair> = rows
            .par_iter()
            .enumerate()
            .filter(|(_, r)| is_long(r))
            .map(|(i, r)| (r.vt_e, (base + i) as u32))
            .collect();
        (starts, ends)
    }

    fn build(rows: &[Row]) -> TableIndex {
        let (s, e) = Self::pairs(rows, 0);
        TableIndex {
            covered: rows.len(),
            by_start: Sorted::from_pairs(s),
            by_end: Sorted::from_pairs(e),
        }
    }

    /// This index plus the rows `[covered, rows.len())`.
    fn extend(&self, rows: &[Row]) -> TableIndex {
        let (s, e) = Self::pairs(&rows[self.covered..], self.covered);
        TableIndex {
            covered: rows.len(),
            by_start: self.by_start.merge(Sorted::from_pairs(s)),
            by_end: self.by_end.merge(Sorted::from_pairs(e)),
        }
    }
}

/// The covered rows that are not believed now (retired, or closed), for reads at a belief
/// state at or after every stored transaction time: there, a covered row is believed
/// exactly when it is not listed here. Valid while no covered row is closed, which the
/// state's close generation tracks.
pub(crate) struct Unbelieved {
    /// The close generation and coverage it was computed at.
    gen: u64,
    covered: usize,
    /// The largest `tt_s` or finite `tt_e` of the covered rows.
    pub(crate) max_tt: i64,
    pub(crate) ids: Vec<u32>,
}

impl Unbelieved {
    fn build(rows: &[Row], covered: usize, gen: u64) -> Unbelieved {
        let rows = &rows[..covered];
        let ids: Vec<u32> = rows
            .par_iter()
            .enumerate()
            .filter(|(_, r)| !r.believed_now())
            .map(|(i, _)| i as u32)
            .collect();
        let max_tt = rows
            .par_iter()
            .map(|r| {
                if r.tt_e == crate::time::OPEN_END {
                    r.tt_s
                } else {
                    r.tt_s.max(r.tt_e)
                }
            })
            .max()
            .unwrap_or(i64::MIN);
        Unbelieved {
            gen,
            covered,
            max_tt,
            ids,
        }
    }
}

/// Something derived from the rows `[0, covered())` of an append-only row table.
pub(crate) trait Covers {
    fn covered(&self) -> usize;
}

impl Covers for TableIndex {
    fn covered(&self) -> usize {
        self.covered
    }
}

/// A lazily built value derived from a row table, shared by every snapshot of the state.
/// A read gets a value whose uncovered tail (`len - covered`) is at most `covered / 8`: the
/// cached one, or one `update` derives from it (or from nothing). A value covering rows
/// that a rollback removed is dropped ([`TailCache::truncate`]).
pub(crate) struct TailCache<T>(Mutex<Option<Arc<T>>>);

impl<T> Default for TailCache<T> {
    fn default() -> Self {
        TailCache(Mutex::new(None))
    }
}

impl<T: Covers> TailCache<T> {
    pub(crate) fn get(&self, len: usize, update: impl FnOnce(Option<&T>) -> T) -> Arc<T> {
        // A panic while building leaves the previous (still valid) value in place.
        let mut g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let prev = g.as_deref().filter(|x| x.covered() <= len);
        if let Some(x) = prev {
            if len - x.covered() <= x.covered() / 8 {
                return Arc::clone(g.as_ref().expect("prev is Some"));
            }
        }
        let next = Arc::new(update(prev));
        *g = Some(Arc::clone(&next));
        next
    }

    /// Drops the value when it covers rows beyond `len` (rollback of a failed batch).
    pub(crate) fn truncate(&mut self, len: usize) {
        let slot = self.0.get_mut().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|x| x.covered() > len) {
            *slot = None;
        }
    }
}

/// The lazily built index of one table, shared by every snapshot of the state.
#[derive(Default)]
pub(crate) struct IndexCache {
    slot: TailCache<TableIndex>,
    unbelieved: Mutex<Option<Arc<Unbelieved>>>,
}

impl IndexCache {
    /// An index of `rows` whose tail (`rows.len() - covered`) is at most `covered / 8`.
    pub(crate) fn get(&self, rows: &[Row]) -> Arc<TableIndex> {
        self.slot.get(rows.len(), |prev| match prev {
            Some(ix) => ix.extend(rows),
            None => TableIndex::build(rows),
        })
    }

    /// The unbelieved covered rows of `ix` at close generation `gen`.
    pub(crate) fn unbelieved(&self, rows: &[Row], ix: &TableIndex, gen: u64) -> Arc<Unbelieved> {
        let mut g = self
            .unbelieved
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(u) = g.as_ref() {
            if u.gen == gen && u.covered == ix.covered {
                return u.clone();
            }
        }
        let u = Arc::new(Unbelieved::build(rows, ix.covered, gen));
        *g = Some(u.clone());
        u
    }

    /// Drops what covers rows beyond `len` (rollback of a failed batch).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.slot.truncate(len);
        let u = self
            .unbelieved
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if u.as_ref().is_some_and(|u| u.covered > len) {
            *u = None;
        }
    }
}
