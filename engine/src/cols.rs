//! Compact columns of the edge table — `vt_s`, rel, src and dst per row, 20 bytes — for
//! scans that read a few integers of millions of rows (grouped aggregation): streaming them
//! touches a fifth of the bytes of the rows and their identities.
//!
//! Invariants: a row's `vt_s` and identity never change once written (closures change
//! `tt_e`, retirement flips `alive`; callers read belief from the row), so a column entry
//! stays valid for the life of its row. Columns cover the rows `[0, covered)`; rows above
//! are read from the table by the caller. A read that finds the uncovered tail larger than
//! `covered / 8` extends the columns first; a failed batch that truncates the table below
//! `covered` drops them ([`ColCache::truncate`]). Built lazily by the first read that needs
//! them, so opening a store and ingest pay nothing.

use crate::model::Row;
use crate::tindex::{Covers, TailCache};
use rayon::prelude::*;
use std::sync::Arc;

/// The columns of edge rows `[0, len)`.
#[derive(Clone, Default)]
pub struct EdgeColumns {
    pub(crate) vt_s: Vec<i64>,
    pub(crate) rel: Vec<u32>,
    pub(crate) src: Vec<u32>,
    pub(crate) dst: Vec<u32>,
}

impl EdgeColumns {
    /// Number of rows covered (storage positions `[0, covered)`).
    pub fn covered(&self) -> usize {
        Covers::covered(self)
    }
    /// `vt_s` per storage position.
    pub fn vt_s(&self) -> &[i64] {
        &self.vt_s
    }
    /// Interned rel-type id per storage position (as [`crate::read::EdgeVersion::rel_id`]).
    pub fn rel(&self) -> &[u32] {
        &self.rel
    }
    /// Source uid id per storage position (as [`crate::read::EdgeVersion::src_id`]).
    pub fn src(&self) -> &[u32] {
        &self.src
    }
    /// Destination uid id per storage position.
    pub fn dst(&self) -> &[u32] {
        &self.dst
    }

    /// Extends the columns over `rows`; `ident(i)` is edge identity `i`'s `(rel, src, dst)`.
    fn extend(&mut self, rows: &[Row], ident: impl Fn(u32) -> [u32; 3] + Sync) {
        let from = self.vt_s.len();
        let part = &rows[from..];
        self.vt_s.par_extend(part.par_iter().map(|r| r.vt_s));
        self.rel
            .par_extend(part.par_iter().map(|r| ident(r.ident)[0]));
        self.src
            .par_extend(part.par_iter().map(|r| ident(r.ident)[1]));
        self.dst
            .par_extend(part.par_iter().map(|r| ident(r.ident)[2]));
    }
}

impl Covers for EdgeColumns {
    fn covered(&self) -> usize {
        self.vt_s.len()
    }
}

/// The lazily built, shared columns of one state's edge table.
#[derive(Default)]
pub(crate) struct ColCache(TailCache<EdgeColumns>);

impl ColCache {
    /// Columns covering all but at most an eighth of `rows`; `ident(i)` is edge identity
    /// `i`'s `(rel, src, dst)`.
    pub(crate) fn get(
        &self,
        rows: &[Row],
        ident: impl Fn(u32) -> [u32; 3] + Sync,
    ) -> Arc<EdgeColumns> {
        self.0.get(rows.len(), |prev| {
            let mut cols = prev.cloned().unwrap_or_default();
            cols.extend(rows, ident);
            cols
        })
    }

    /// See [`TailCache::truncate`]. Columns are only built between batches, so today this
    /// never fires; it keeps the invariant from depending on that.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.0.truncate(len);
    }
}
