//! The one runtime form of a store's rows (`format-spec.md` §6.5, §9.4): a base image and
//! the delta above it. When the published generation starts with a full-image segment with
//! indexes, an open maps the image, checks it and decodes only the segments after it
//! ([`Delta`]); otherwise (no segment yet, segments without indexes, or
//! [`crate::Options::eager`]) the image is the image of no rows and every segment is
//! decoded into the delta. The log after the segments is applied to the delta
//! (`rows/write.rs`; a writer's commits go there too), and every read is answered from the
//! two: point reads through the image's indexes and the delta's postings, scans and window
//! reads through zone-pruned block decodes of the image (`rows/mapscan.rs`) and the delta's
//! valid-time indexes. A mapped image is never decoded, so a reader's memory is the pages it
//! touches, the delta's rows and each answer's working set.
//!
//! Numbering: the delta's ids continue the image's (uids, strings, contents, identities,
//! slots, rows), exactly as decoding the image into the delta numbers them, so answers, ids
//! and orders are the same either way. A flush segment may close image rows; those closures
//! are applied over the image's own (an image row is open in the image when a later segment
//! closes it).
//!
//! The parts: the delta (`rows/delta.rs`) and its name dictionaries (`rows/interner.rs`)
//! and valid-time indexes (`rows/tindex.rs`), the write primitives over image and delta
//! (`rows/write.rs`), the image as the read path holds it and its zone scans
//! (`rows/mapscan.rs`), the image's compact edge columns (`rows/cols.rs`), and the
//! index-assisted scans of decoded rows (`rows/rowscan.rs`).

pub(crate) mod bulk_edges;
pub(crate) mod cols;
pub(crate) mod delta;
pub(crate) mod interner;
pub(crate) mod mapscan;
pub(crate) mod rowscan;
pub(crate) mod tindex;
mod write;

use crate::ident::Id12;
use crate::model::{ordinal_text, Content, Disc, IdentPart, IdentRec, Row, Stats, Table};
use crate::op::Origin;
use crate::rows::delta::Delta;
use crate::rows::mapscan::Image;
use crate::rows::rowscan::{believed_at, in_window};
use crate::time::clamp_tt;
use std::ops::Range;

/// A store's base image, the decoded flush segments and memtable above it, and the
/// statistics (the manifest's for the newest segment, plus the memtable's).
///
/// Every store is read and written in this one form: a store without an image (new, never
/// compacted, or opened with [`crate::Options::eager`]) has the image of no rows, encoded
/// in memory ([`Rows::empty`]), and every row in the delta.
pub(crate) struct Rows {
    pub(crate) base: Image,
    pub(crate) delta: Delta,
    pub(crate) stats: Stats,
    /// The observation trace of export (`eventlog.rs`), while one is being recorded.
    pub(crate) trace: Option<crate::apply::Trace>,
}

/// Single fields of row `i` of table `k`: from the delta's row when it lies above the
/// image, else the same-named image accessor (fields no closure changes).
macro_rules! row_fields {
    ($($name:ident -> $t:ty = |$r:ident| $field:expr;)*) => {
        impl Rows {
            $(
                #[inline]
                pub(crate) fn $name(&self, k: Table, i: u32) -> $t {
                    match self.above(k, i) {
                        Some($r) => $field,
                        None => self.base.$name(k, i),
                    }
                }
            )*
        }
    };
}

row_fields! {
    row_ident -> u32 = |r| r.ident;
    row_content -> u32 = |r| r.content;
    row_vt -> (i64, i64) = |r| (r.vt_s, r.vt_e);
    row_vt_s -> i64 = |r| r.vt_s;
    row_tt_s -> i64 = |r| r.tt_s;
    row_origin -> Origin = |r| r.origin;
    row_reason -> u32 = |r| r.reason;
    row_alive -> bool = |r| r.alive;
}

impl Rows {
    /// A store of no rows (no file: the image of no rows, encoded in memory) with the
    /// statistics `stats`.
    pub(crate) fn empty(stats: Stats) -> Rows {
        Rows::over(Image::empty(), stats)
    }

    /// `base` with nothing above it yet, and the statistics `stats`.
    pub(crate) fn over(base: Image, stats: Stats) -> Rows {
        Rows {
            delta: Delta::new(base.marks()),
            base,
            stats,
            trace: None,
        }
    }

    /// True when the image is a published segment file (mapped or read), not the image of
    /// no rows that a store without one reads over. Segment files are numbered from 1; the
    /// image of no rows has sequence number 0.
    pub(crate) fn has_image(&self) -> bool {
        self.base.seq() != 0
    }

    /// Row `i` of table `k` when it lies above the image.
    #[inline]
    fn above(&self, k: Table, i: u32) -> Option<&Row> {
        let j = i.checked_sub(self.delta.n_base(k))?;
        self.delta.rows[k].get(j as usize)
    }

    /// `(tt_e, closed_by, close_reason)`: a flush segment's closure of an image row wins
    /// over the image (where the row is open).
    #[inline]
    pub(crate) fn row_close(&self, k: Table, i: u32) -> (i64, Option<Origin>, u32) {
        match self.above(k, i) {
            Some(r) => (r.tt_e, r.closed_by, r.close_reason),
            None => match self.delta.closed[k].get(&i) {
                Some(&c) => c,
                None => self.base.row_close(k, i),
            },
        }
    }

    /// The rows of table `k` above the image (flush segments and memtable), in position
    /// order from position `n_rows(k) - above_rows(k).len()`.
    pub(crate) fn above_rows(&self, k: Table) -> &[Row] {
        &self.delta.rows[k]
    }

    /// `(position, tt_e)` of the image rows at `pos` that a flush segment closed since the
    /// image was written, in no particular order.
    pub(crate) fn closed_since(&self, k: Table, pos: std::ops::Range<usize>) -> Vec<(usize, i64)> {
        let closed = &self.delta.closed[k];
        if closed.len() <= pos.len() {
            closed
                .iter()
                .map(|(&i, c)| (i as usize, c.0))
                .filter(|(i, _)| pos.contains(i))
                .collect()
        } else {
            pos.filter_map(|i| closed.get(&(i as u32)).map(|c| (i, c.0)))
                .collect()
        }
    }

    /// Row `i` of table `k` with its closure applied.
    pub(crate) fn row(&self, k: Table, i: u32) -> Row {
        if let Some(r) = self.above(k, i) {
            return *r;
        }
        let mut r = self.base.row(k, i);
        if let Some(&(tt_e, by, reason)) = self.delta.closed[k].get(&i) {
            (r.tt_e, r.closed_by, r.close_reason) = (tt_e, by, reason);
        }
        r
    }

    #[inline]
    pub(crate) fn ident_part(&self, id: u32, part: IdentPart) -> u32 {
        self.delta.ident_part(&self.base, id, part)
    }

    pub(crate) fn ident(&self, id: u32) -> IdentRec {
        if u64::from(id) < self.delta.base.idents {
            self.base.ident(id)
        } else {
            self.delta.ident(id)
        }
    }

    pub(crate) fn content(&self, id: u32) -> Content {
        if u64::from(id) < self.delta.base.contents {
            self.base.content(id)
        } else {
            self.delta.content(id)
        }
    }

    #[inline]
    pub(crate) fn string(&self, id: u32) -> &str {
        match id.checked_sub(self.delta.base.strings as u32) {
            None => self.base.string(id),
            Some(j) => self.delta.strings.name(j),
        }
    }

    #[inline]
    pub(crate) fn uid_name(&self, id: u32) -> &str {
        match id.checked_sub(self.delta.base.uids as u32) {
            None => self.base.uid_name(id),
            Some(j) => self.delta.uids.name(j),
        }
    }

    pub(crate) fn string_id(&self, s: &str) -> Option<u32> {
        self.base.string_id(s).or_else(|| {
            self.delta
                .strings
                .get(s)
                .map(|j| j + self.delta.base.strings as u32)
        })
    }

    pub(crate) fn uid_id(&self, s: &str) -> Option<u32> {
        self.base.uid_id(s).or_else(|| {
            self.delta
                .uids
                .get(s)
                .map(|j| j + self.delta.base.uids as u32)
        })
    }

    /// The size of the uid id space.
    pub(crate) fn n_uids(&self) -> usize {
        self.delta.end().uids as usize
    }

    /// Rows of table `k`, image and above.
    pub(crate) fn n_rows(&self, k: Table) -> usize {
        self.delta.n_base(k) as usize + self.delta.rows[k].len()
    }

    /// The identity `(src, dst, rel, disc)` names, if it exists.
    pub(crate) fn find_ident(&self, src: u32, dst: u32, rel: u32, disc: Disc) -> Option<u32> {
        if let Disc::Ordinal(k) = disc {
            let slot = if k < self.delta.base.slots {
                self.base.slot(k)
            } else {
                self.delta.slot(k)
            };
            if let Some(id) = slot {
                let e = self.ident(id);
                if (e.src, e.dst, e.rel) == (src, dst, rel) {
                    return Some(id);
                }
            }
        }
        self.base
            .find_mapped_ident(src, dst, rel, disc)
            .or_else(|| self.delta.find_mapped_ident(src, dst, rel, disc))
    }

    /// The 12 eid bytes of identity `id` (derived; cached for identities above the image).
    pub(crate) fn eid(&self, id: u32) -> Id12 {
        if u64::from(id) < self.delta.base.idents {
            return mapscan::eid(&self.base, id);
        }
        self.delta.eid(id, || {
            let e = self.delta.ident(id);
            let mut buf = [0u8; 21];
            let disc = match e.disc {
                Disc::Ordinal(k) => ordinal_text(k, &mut buf).to_string(),
                Disc::Str(s) => self.string(s).to_string(),
            };
            [
                self.uid_name(e.src).to_string(),
                self.uid_name(e.dst).to_string(),
                self.string(e.rel).to_string(),
                disc,
            ]
        })
    }

    pub(crate) fn node_postings(&self, uid: u32) -> Vec<u32> {
        let mut v = if u64::from(uid) < self.delta.base.uids {
            self.base.node_postings(uid)
        } else {
            Vec::new()
        };
        self.delta.node_postings(uid, &mut v);
        v
    }

    pub(crate) fn edge_postings(&self, id: u32) -> Vec<u32> {
        let mut v = if u64::from(id) < self.delta.base.idents {
            self.base.edge_postings(id)
        } else {
            Vec::new()
        };
        self.delta.edge_postings(id, &mut v);
        v
    }

    /// Edge rows with `src` (`out`) or `dst` (`!out`) = `uid`, ascending.
    pub(crate) fn adjacency(&self, uid: u32, out: bool) -> Vec<u32> {
        let mut v = match (u64::from(uid) < self.delta.base.uids, out) {
            (false, _) => Vec::new(),
            (true, true) => self.base.out_adj(uid),
            (true, false) => self.base.in_adj(uid),
        };
        self.delta.adjacency(uid, out, &mut v);
        v
    }

    /// True when image row `i` of table `k`, believed at `as_of` in the image, is still
    /// believed then under the closures above the image.
    #[inline]
    fn still_believed(&self, k: Table, i: u32, as_of: i64) -> bool {
        self.delta.closed[k]
            .get(&i)
            .is_none_or(|c| clamp_tt(as_of) < c.0)
    }

    /// Drops the image rows of an image answer (ascending ids believed at `as_of` in the
    /// image) that a flush segment closed at or before `as_of`.
    fn without_closed<T>(
        &self,
        k: Table,
        mut v: Vec<T>,
        as_of: i64,
        row: impl Fn(&T) -> u32,
    ) -> Vec<T> {
        if !self.delta.closed[k].is_empty() {
            v.retain(|x| self.still_believed(k, row(x), as_of));
        }
        v
    }

    /// The rows above the image that `pick` selects from the delta's rows and valid-time
    /// index (by their local numbers), as store row numbers.
    fn above_ids(
        &self,
        k: Table,
        pick: impl FnOnce(&[Row], &crate::rows::tindex::IndexCache) -> Vec<u32>,
    ) -> Vec<u32> {
        let nb = self.delta.n_base(k);
        pick(&self.delta.rows[k], &self.delta.index[k])
            .into_iter()
            .map(|i| i + nb)
            .collect()
    }

    /// Ascending rows of table `k` believed at `as_of` that overlap `w` (all when `None`),
    /// of an identity with a rel id in `rels` when given (edges only).
    pub(crate) fn window_ids(
        &self,
        k: Table,
        w: Option<(i64, i64)>,
        as_of: i64,
        rels: Option<&[u32]>,
    ) -> Vec<u32> {
        let mut ids = self.without_closed(
            k,
            mapscan::overlapping(&self.base, k, w, as_of, rels),
            as_of,
            |&i| i,
        );
        let rel_ok =
            |r: &Row| rels.is_none_or(|rs| rs.contains(&self.ident_part(r.ident, IdentPart::Rel)));
        ids.extend(self.above_ids(k, |rows, ix| {
            rowscan::overlapping(rows, ix, w, |r| {
                believed_at(r, as_of) && in_window(r, w) && rel_ok(r)
            })
        }));
        ids
    }

    /// Ascending rows of table `k` believed at `as_of` that start or end inside `(lo, hi]`.
    pub(crate) fn boundary_ids(&self, k: Table, lo: i64, hi: i64, as_of: i64) -> Vec<u32> {
        let mut ids = self.without_closed(
            k,
            mapscan::boundaries(&self.base, k, lo, hi, as_of),
            as_of,
            |&i| i,
        );
        ids.extend(self.above_ids(k, |rows, ix| rowscan::boundaries(rows, ix, lo, hi, as_of)));
        ids
    }

    /// Ascending edge rows believed at `as_of` with `t_a <= vt_s < t_b`, as maximal runs.
    pub(crate) fn start_runs(&self, t_a: i64, t_b: i64, as_of: i64) -> Vec<Range<u32>> {
        let mut runs: Vec<Range<u32>> = Vec::new();
        let mut add = |r: Range<u32>| match runs.last_mut() {
            _ if r.is_empty() => {}
            Some(last) if last.end == r.start => last.end = r.end,
            _ => runs.push(r),
        };
        // Image runs, cut at the image rows closed above it.
        let mut cut: Vec<u32> = self.delta.closed[Table::Edges]
            .iter()
            .filter(|(_, c)| clamp_tt(as_of) >= c.0)
            .map(|(&i, _)| i)
            .collect();
        cut.sort_unstable();
        for r in mapscan::start_runs(&self.base, t_a, t_b, as_of) {
            let mut from = r.start;
            let lo = cut.partition_point(|&c| c < r.start);
            for &c in cut[lo..].iter().take_while(|&&c| c < r.end) {
                add(from..c);
                from = c + 1;
            }
            add(from..r.end);
        }
        let above = self.above_ids(Table::Edges, |rows, ix| {
            rowscan::starts(rows, ix, self.delta.close_gen, t_a, t_b, as_of).ids()
        });
        above.into_iter().for_each(|i| add(i..i + 1));
        runs
    }

    /// `(vt_s, row, identity)` of the edge rows believed at `as_of` with
    /// `t_a <= vt_s < t_b`, in ascending row order.
    pub(crate) fn start_rows(&self, t_a: i64, t_b: i64, as_of: i64) -> Vec<(i64, u32, u32)> {
        let mut v = self.without_closed(
            Table::Edges,
            mapscan::start_rows(&self.base, t_a, t_b, as_of),
            as_of,
            |x| x.1,
        );
        let above = self.above_ids(Table::Edges, |rows, ix| {
            rowscan::starts(rows, ix, self.delta.close_gen, t_a, t_b, as_of).ids()
        });
        v.extend(above.into_iter().map(|i| {
            let r = self.above(Table::Edges, i).expect("row above the image");
            (r.vt_s, i, r.ident)
        }));
        v
    }

    /// Per bucket of `(t_a, t_b, stride)`, the edge rows believed at `as_of` that start in
    /// it (with rel id `rel` when given): the image's counts, less its rows closed above it
    /// by then, plus the rows above it.
    pub(crate) fn start_counts(
        &self,
        (t_a, t_b, stride): (i64, i64, i64),
        as_of: i64,
        rel: Option<u32>,
        n: usize,
    ) -> Vec<u64> {
        let mut c = mapscan::start_counts(&self.base, (t_a, t_b, stride), as_of, rel, n);
        let a = clamp_tt(as_of);
        let bucket = |vt_s: i64| ((vt_s as i128 - t_a as i128) / stride as i128) as usize;
        let counted = |vt_s: i64, ident: u32| {
            t_a <= vt_s
                && vt_s < t_b
                && rel.is_none_or(|x| self.ident_part(ident, IdentPart::Rel) == x)
        };
        for &(vt_s, ident, tt_s, tt_e, _) in &self.delta.closed_edges {
            // Counted by the image (alive and open there, begun by `as_of`) but closed since.
            if a >= tt_e && tt_s <= a && counted(vt_s, ident) {
                c[bucket(vt_s)] -= 1;
            }
        }
        for r in &self.delta.rows[Table::Edges] {
            if believed_at(r, as_of) && counted(r.vt_s, r.ident) {
                c[bucket(r.vt_s)] += 1;
            }
        }
        c
    }

    /// Ids of the uids whose `str::to_lowercase` form contains `needle_lower`, ascending.
    pub(crate) fn uids_lowercase_containing(&self, needle_lower: &str) -> Vec<u32> {
        let mut ids = mapscan::lower(&self.base).containing(needle_lower);
        // The delta's uids through their own cached lowercase heap (local ids).
        let bu = self.delta.base.uids as u32;
        ids.extend(
            self.delta
                .uids
                .lower()
                .containing(needle_lower)
                .into_iter()
                .map(|j| j + bu),
        );
        ids
    }
}
