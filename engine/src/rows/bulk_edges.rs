//! [`BulkEdges`]: the edge rows and identities a bulk build (`store/bulk.rs`) holds above the
//! image, as columns: 36 bytes an edge, where a decoded row and identity take 88. The
//! compaction (`store/compact.rs`) reads them through [`crate::rows::delta::Delta::row_above`]
//! and [`crate::rows::delta::Delta::ident_above`] as the rows and identities they stand for,
//! so the image written is the same, byte for byte; a build that cannot merge turns them
//! into decoded rows first ([`crate::rows::delta::Delta::unbulk`]).
//!
//! Why columns suffice. A bulk build appends only ingest events without discriminator, one
//! new identity and one row per event, both numbered on from the image's counts in the same
//! order: edge row `j` above the image is of identity `j` above the image, whose
//! discriminator is the ordinal `first_ordinal + j`, not mapped; the row was written by its
//! batch at the batch's transaction time, by an ingest, without reason, and is believed.
//! What varies is the identity's ends and rel, the row's content and valid interval, and
//! its batch.

use crate::format::seg;
use crate::model::{Disc, IdentPart, IdentRec, Row};
use crate::op::Origin;

/// The edges of a bulk build, column by column ([`BulkEdges::push`] appends one).
pub(crate) struct BulkEdges {
    /// The ordinal of the first edge (those after it follow on).
    first_ordinal: u64,
    src: Vec<u32>,
    dst: Vec<u32>,
    rel: Vec<u32>,
    content: Vec<u32>,
    vt_s: Vec<i64>,
    vt_e: Vec<i64>,
    /// Per edge: its batch, an index into `tts`.
    batch: Vec<u32>,
    /// Per batch: its transaction time (µs).
    tts: Vec<i64>,
}

impl BulkEdges {
    /// No edges.
    pub(crate) const EMPTY: BulkEdges = BulkEdges::new(0);

    /// No edges yet; the first will have ordinal `first_ordinal`.
    pub(crate) const fn new(first_ordinal: u64) -> BulkEdges {
        BulkEdges {
            first_ordinal,
            src: Vec::new(),
            dst: Vec::new(),
            rel: Vec::new(),
            content: Vec::new(),
            vt_s: Vec::new(),
            vt_e: Vec::new(),
            batch: Vec::new(),
            tts: Vec::new(),
        }
    }

    /// The edges held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.src.len()
    }

    /// The ordinal the next edge gets.
    pub(crate) fn next_ordinal(&self) -> u64 {
        self.first_ordinal + self.len() as u64
    }

    /// Starts a batch of `n` edges written at `tt` (room is made for all of them at once).
    pub(crate) fn begin_batch(&mut self, tt: i64, n: usize) {
        self.tts.push(tt);
        let (ids, times) = self.columns();
        ids.into_iter().for_each(|v| v.reserve(n));
        times.into_iter().for_each(|v| v.reserve(n));
    }

    /// Every per-edge column: the `u32` ones, then the times.
    fn columns(&mut self) -> ([&mut Vec<u32>; 5], [&mut Vec<i64>; 2]) {
        (
            [
                &mut self.src,
                &mut self.dst,
                &mut self.rel,
                &mut self.content,
                &mut self.batch,
            ],
            [&mut self.vt_s, &mut self.vt_e],
        )
    }

    /// Keeps the first `n` edges (`n <= len`): the undoing of a batch whose log record could
    /// not be written (`store/bulk.rs`). The batches after the last edge kept are forgotten
    /// too (a batch of no edges has no edge to read its time).
    pub(crate) fn truncate(&mut self, n: usize) {
        let (ids, times) = self.columns();
        ids.into_iter().for_each(|v| v.truncate(n));
        times.into_iter().for_each(|v| v.truncate(n));
        let batches = self.batch.last().map_or(0, |&b| b as usize + 1);
        self.tts.truncate(batches);
    }

    /// Appends an edge of the current batch: a new identity `(src, dst, rel)` and its row.
    pub(crate) fn push(
        &mut self,
        src: u32,
        dst: u32,
        rel: u32,
        content: u32,
        vt_s: i64,
        vt_e: i64,
    ) {
        self.src.push(src);
        self.dst.push(dst);
        self.rel.push(rel);
        self.content.push(content);
        self.vt_s.push(vt_s);
        self.vt_e.push(vt_e);
        self.batch.push(self.tts.len().saturating_sub(1) as u32);
    }

    /// Identity `j` of the build (`j < len`).
    #[inline]
    pub(crate) fn ident(&self, j: usize) -> IdentRec {
        IdentRec {
            src: self.src[j],
            dst: self.dst[j],
            rel: self.rel[j],
            disc: Disc::Ordinal(self.first_ordinal + j as u64),
            mapped: false,
        }
    }

    /// Part `part` of identity `j` (`IdentPart::of` of [`BulkEdges::ident`], reading only
    /// that part's column).
    #[inline]
    pub(crate) fn ident_part(&self, j: usize, part: IdentPart) -> u32 {
        self.part_column(part)[j]
    }

    /// Part `part` of every identity, by edge.
    #[inline]
    pub(crate) fn part_column(&self, part: IdentPart) -> &[u32] {
        match part {
            IdentPart::Src => &self.src,
            IdentPart::Dst => &self.dst,
            IdentPart::Rel => &self.rel,
        }
    }

    /// Row `j` of the build, of identity `first_ident + j` (as `apply::Ctx::row` writes an
    /// ingest's row).
    #[inline]
    pub(crate) fn row(&self, first_ident: u32, j: usize) -> Row {
        Row {
            content: self.content[j],
            vt_s: self.vt_s[j],
            vt_e: self.vt_e[j],
            tt_s: self.tt_s(j),
            ..ingest_row(first_ident + j as u32)
        }
    }

    /// The stored value of row column `c` of row `j` ([`seg::row_value`] of
    /// [`BulkEdges::row`]), reading only the columns it needs: the merge reads a column at a
    /// time, in segment order, which for rows out of time order is a cache miss per column
    /// read.
    #[inline]
    pub(crate) fn value(&self, c: u16, first_ident: u32, j: usize) -> i64 {
        use crate::format::seg::chunk::{CONTENT, TT_S, VT_LEN, VT_S};
        let mut r = ingest_row(first_ident + j as u32);
        match c {
            CONTENT => r.content = self.content[j],
            VT_S | VT_LEN => (r.vt_s, r.vt_e) = (self.vt_s[j], self.vt_e[j]),
            TT_S => r.tt_s = self.tt_s(j),
            _ => {}
        }
        seg::row_value(c, &r)
    }

    /// [`BulkEdges::value`] of rows `js` of column `c`, appended to `out`. The column is
    /// resolved once per call, not per row, so the merge's block of reads is a plain gather
    /// of the one array it needs (or none): rows out of time order then wait on their cache
    /// misses together rather than one at a time.
    pub(crate) fn values(
        &self,
        c: u16,
        first_ident: u32,
        js: impl Iterator<Item = usize>,
        out: &mut Vec<i64>,
    ) {
        use crate::format::seg::chunk::{CONTENT, IDENT, TT_S, VT_LEN, VT_S};
        // Each arm calls `value` with its column as a constant, which folds its match.
        match c {
            IDENT => out.extend(js.map(|j| self.value(IDENT, first_ident, j))),
            CONTENT => out.extend(js.map(|j| self.value(CONTENT, first_ident, j))),
            VT_S => out.extend(js.map(|j| self.value(VT_S, first_ident, j))),
            VT_LEN => out.extend(js.map(|j| self.value(VT_LEN, first_ident, j))),
            TT_S => out.extend(js.map(|j| self.value(TT_S, first_ident, j))),
            // The rest of a row (origin, alive, reason) is the same for every edge.
            _ => {
                let x = seg::row_value(c, &ingest_row(first_ident));
                out.extend(js.map(|_| x));
            }
        }
    }

    /// The transaction time of row `j`.
    #[inline]
    pub(crate) fn tt_s(&self, j: usize) -> i64 {
        self.tts[self.batch[j] as usize]
    }

    /// The start of row `j`'s valid interval.
    #[inline]
    pub(crate) fn vt_s(&self, j: usize) -> i64 {
        self.vt_s[j]
    }
}

/// A believed row of `ident` written by an ingest, without reason (what every edge of a
/// build shares); its content, valid interval and transaction time are set apart.
#[inline]
fn ingest_row(ident: u32) -> Row {
    Row::blank(ident, Origin::Ingest, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::seg::chunk::ALIVE;
    use crate::model::NONE;
    use crate::time::OPEN_END;

    /// What the merge reads of an edge column by column is what the row it stands for
    /// stores: every row column's value, every identity part.
    #[test]
    fn values_and_parts_are_those_of_the_whole_row_and_identity() {
        let mut b = BulkEdges::new(40);
        b.begin_batch(1_000, 2);
        b.push(3, 4, 5, 6, 100, 101);
        b.push(7, 3, 5, NONE, 200, OPEN_END);
        b.begin_batch(2_000, 1);
        b.push(4, 4, 9, 6, 150, 400);
        assert_eq!((b.len(), b.next_ordinal()), (3, 43));
        for j in 0..b.len() {
            let row = b.row(10, j);
            assert_eq!(row.tt_s, [1_000, 1_000, 2_000][j]);
            assert_eq!(row.ident, 10 + j as u32);
            for c in 0..=ALIVE {
                assert_eq!(
                    b.value(c, 10, j),
                    seg::row_value(c, &row),
                    "row {j} column {c}"
                );
            }
            let e = b.ident(j);
            assert_eq!(e.disc, Disc::Ordinal(40 + j as u64));
            for part in [IdentPart::Src, IdentPart::Dst, IdentPart::Rel] {
                assert_eq!(b.ident_part(j, part), part.of(&e));
            }
        }
        // A block of rows out of order and repeated, read a column at a time, after what
        // `out` already holds.
        let js = [2usize, 0, 2, 1];
        for c in 0..=ALIVE {
            let mut out = vec![-7];
            b.values(c, 10, js.iter().copied(), &mut out);
            let want: Vec<i64> = std::iter::once(-7)
                .chain(js.iter().map(|&j| seg::row_value(c, &b.row(10, j))))
                .collect();
            assert_eq!(out, want, "column {c}");
        }
    }
}
