//! Compact columns of the edge table — `vt_s`, rel, src and dst per row, 20 bytes — for
//! scans that read a few integers of millions of rows (grouped aggregation): streaming them
//! touches a fifth of the bytes of the rows and their identities.
//!
//! Invariants: a row's `vt_s` and identity never change once written (closures change
//! `tt_e`, retirement flips `alive`; callers read belief from the row), so a column entry
//! stays valid for the life of its row. Columns cover the image's rows `[0, covered)`
//! (`mapscan::edge_columns`, built zone by zone by the first read that needs them); rows
//! above are read by the caller.

use crate::rows::tindex::Covers;

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
}

impl Covers for EdgeColumns {
    fn covered(&self) -> usize {
        self.vt_s.len()
    }
}
