//! A mapped **base image**: random access to a compacted, minor-2, 3, 4 or 6 segment
//! (`format-spec.md` §6.5) without decoding it into memory.
//!
//! [`Base::open`] verifies the header, trailer, footer and every chunk's crc32, the
//! directory layout of its minor, every column header (counts agree with the table counts,
//! lengths are exact), the UTF-8 of both string heaps and their offset columns. It then
//! keeps only the file's bytes and, per column, a few header fields and file offsets;
//! every accessor reads the values it needs straight from the bytes. Only the `tt_s` runs
//! (a few per batch) are decoded at open.
//!
//! It then checks the image's structure once ([`structure`]): ids within the dictionaries
//! and tables they name, flags and kinds in their domains, legal times, monotone offsets,
//! and the codecs' redundancy, so a file whose checksums hold but whose values a writer
//! could not have written is refused with a named error, not answered with defaults.
//! Accessors never panic: an id a caller passes out of range gives the documented default
//! (empty string, empty list, `None`, or a row / content / identity of `NONE` ids), and
//! values are read with checked slicing.
//!
//! The parts: the column codecs (`base/col.rs`), the string heaps and the writers' hash
//! tables (`base/heap.rs`), the open (`base/open.rs`), the structural checks
//! (`base/structure.rs`); this file holds the image's layout and its row accessors.

use crate::error::CorruptionKind;
use crate::format::bitmap::RoaringView;
use crate::format::mmap::SegBytes;
use crate::format::seg::{self, chunk, codec, SegErr, SEG_MINOR_TIME_INDEX};
use crate::model::{Content, Dict, Disc, IdentPart, IdentRec, Marks, PerTable, Row, Table, NONE};
use crate::op::Origin;
use crate::time::OPEN_END;
use std::cmp::Ordering;
use std::sync::OnceLock;

mod col;
mod heap;
mod open;
mod structure;

pub use open::open_image;

use heap::{Heap, HeapCaches};

use crate::format::le::{i64_at, u32_at};
use col::{Arith, Col, Dfors, Exc, ForCol};

/// The columns of one row table (nodes or edges).
#[derive(Debug, Default)]
struct Rows {
    n: usize,
    ident: Col,
    content: Col,
    vt_s: Col,
    vt_len: Col,
    tt_s: TtCol,
    /// The largest `tt_s` (`i64::MIN` without rows), found by the first caller.
    tt_max: OnceLock<i64>,
    reason: Col,
    origin: Col,
    alive: Col,
    n_close: usize,
    /// The closed rows as a set (chunks 81–82, minor 4).
    closed: Option<RoaringView>,
    close_row: Col,
    close_tt_e: Col,
    close_by: Col,
    close_reason: Col,
}

/// The `tt_s` column of a row table: runs (`format-spec.md` §6.3), or — in a minor-4 image
/// where that is smaller (rows sorted by `vt_s` from a log that arrived out of time order)
/// — a random-access integer column.
#[derive(Debug)]
enum TtCol {
    /// `(first row, tt_s)` of every run, rows ascending.
    Runs(Vec<(usize, i64)>),
    Col(Col),
}

impl Default for TtCol {
    fn default() -> Self {
        TtCol::Runs(Vec::new())
    }
}

/// The columns a [`Base::row_block`] decodes besides `tt_e`, `alive` and (by its `as_of`)
/// `tt_s`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockCols {
    pub(crate) vt_s: bool,
    pub(crate) vt_e: bool,
    pub(crate) ident: bool,
}

impl BlockCols {
    /// `vt_s`, with `vt_e` and `ident` where asked for.
    pub(crate) fn starts(vt_e: bool, ident: bool) -> BlockCols {
        BlockCols {
            vt_s: true,
            vt_e,
            ident,
        }
    }
}

/// Columns of a run of rows (see [`Base::row_block`]); `vt_s` is empty unless it or `vt_e`
/// is asked for, `vt_e` and `ident` unless asked for, `tt_s` and `alive` when they cannot
/// fail a belief test; `tt_e` always holds a value per row.
pub(crate) struct RowBlock {
    pub(crate) vt_s: Vec<i64>,
    pub(crate) vt_e: Vec<i64>,
    pub(crate) alive: Vec<bool>,
    pub(crate) tt_s: Vec<i64>,
    pub(crate) tt_e: Vec<i64>,
    pub(crate) ident: Vec<u32>,
}

impl RowBlock {
    /// Row `j` of the block is believed at `as_of` (the clamped `as_of` the block was
    /// decoded for).
    #[inline]
    pub(crate) fn believed(&self, j: usize, as_of: i64) -> bool {
        self.tt_e.get(j).is_some_and(|&e| as_of < e)
            && self.alive.get(j).is_none_or(|&x| x)
            && self.tt_s.get(j).is_none_or(|&x| x <= as_of)
    }
}

/// Caches of a base image's own decoding that the first read needing them builds; the
/// image itself never changes, so they never go stale.
#[derive(Default)]
pub(crate) struct Caches {
    /// The uid heap's decodings.
    uid_heap: HeapCaches,
    /// The string heap's decodings.
    string_heap: HeapCaches,
    /// Hash table of the content ids (`Base::find_content`), built for writers.
    content_hash: OnceLock<Vec<u64>>,
    /// Per table, a bit per row: set when the row is closed (1 bit per row), so a point
    /// read of an open row skips the search in the close rows (images before minor 4,
    /// which carry no closed-row set).
    closed: PerTable<OnceLock<Vec<u64>>>,
}

/// A grouped index: `off` (n + 1 offsets) into `vals`.
#[derive(Clone, Copy, Debug, Default)]
struct Postings {
    off: Col,
    vals: Col,
}

impl Postings {
    fn get(&self, b: &[u8], k: u32) -> Vec<u32> {
        let k = k as usize;
        if k + 1 >= self.off.len() {
            return Vec::new();
        }
        let (a, e) = self.off.pair(b, k);
        let (Ok(a), Ok(e)) = (usize::try_from(a), usize::try_from(e)) else {
            return Vec::new();
        };
        self.vals
            .range(b, a, e)
            .into_iter()
            .filter_map(|x| u32::try_from(x).ok())
            .collect()
    }
}

/// Random access to a compacted (minor-2, 3, 4 or 6, full-image) segment.
pub(crate) struct Base {
    bytes: SegBytes,
    seq: u64,
    marks: Marks,
    uids: Heap,
    strings: Heap,
    content: [Col; 4],
    /// src, dst, rel, disc tag, disc value.
    ident: [Col; 5],
    slots: Col,
    rows: PerTable<Rows>,
    node_post: Postings,
    edge_post: Postings,
    out_adj: Postings,
    in_adj: Postings,
    mapped: Col,
    /// The valid-time index of each row table (minor ≥ 3).
    time: Option<PerTable<TimeIndex>>,
    pub(crate) caches: Caches,
}

/// The valid-time index of a row table (chunks 77–80): row numbers by `(vt_s, row)`, and
/// the long rows by `(vt_e, row)`.
#[derive(Debug, Default)]
struct TimeIndex {
    by_start: Col,
    by_end: Col,
}

impl TimeIndex {
    fn col(&self, by_end: bool) -> &Col {
        if by_end {
            &self.by_end
        } else {
            &self.by_start
        }
    }
}

/// A row of `NONE` ids returned for an out-of-range row number.
fn missing_row() -> Row {
    Row::blank(NONE, Origin::Assert, false)
}

/// Values as u32 ids (`NONE` for a value out of range).
fn id_list(v: Vec<i64>) -> Vec<u32> {
    v.into_iter()
        .map(|x| u32::try_from(x).unwrap_or(NONE))
        .collect()
}

/// `vt_e` of rows from their `vt_s` and stored lengths (0 = open end).
fn vt_ends(vt_s: &[i64], len: Vec<i64>) -> Vec<i64> {
    vt_s.iter()
        .zip(len)
        .map(|(&s, l)| match l {
            0 => OPEN_END,
            l => s.saturating_add(l),
        })
        .collect()
}

fn opt_id(x: i64) -> u32 {
    match x {
        x if x > 0 && x <= u32::MAX as i64 => (x - 1) as u32,
        _ => NONE,
    }
}

impl Base {
    fn b(&self) -> &[u8] {
        self.bytes.bytes()
    }

    /// Releases the image's resident pages ([`SegBytes::release`]): compaction, which
    /// reads every column once, does so after each chunk it writes.
    pub(crate) fn release_resident(&self) {
        self.bytes.release(0, self.b().len());
    }

    /// Reads of the image from now on are at random (`true`: no readahead around a page
    /// fault) or as usual ([`SegBytes::read_at_random`]). An open without the checks reads
    /// at random (headers, then the delta's lookups into the image) until the store's open
    /// is done.
    pub(crate) fn read_at_random(&self, random: bool) {
        self.bytes.read_at_random(random);
    }

    /// The segment's sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// The table counts (the image's end marks; its base marks are zero).
    pub(crate) fn marks(&self) -> Marks {
        self.marks
    }

    /// Content `id` (all fields `NONE` when out of range).
    pub(crate) fn content(&self, id: u32) -> Content {
        let (b, i) = (self.b(), id as usize);
        let [l, p, s, v] = &self.content;
        Content {
            label: l.id(b, i),
            props: p.id(b, i),
            source: s.id(b, i),
            provenance: v.id(b, i),
        }
    }

    /// Edge identity `id` (src, dst, rel `NONE`, disc `#0`, not mapped when out of range).
    pub(crate) fn ident(&self, id: u32) -> IdentRec {
        let (b, i) = (self.b(), id as usize);
        let [src, dst, rel, tag, val] = &self.ident;
        if i >= src.len() {
            return IdentRec {
                src: NONE,
                dst: NONE,
                rel: NONE,
                disc: Disc::Ordinal(0),
                mapped: false,
            };
        }
        let t = tag.get(b, i);
        let v = val.get(b, i);
        IdentRec {
            src: src.id(b, i),
            dst: dst.id(b, i),
            rel: rel.id(b, i),
            disc: if t & 1 == 0 {
                Disc::Ordinal(v as u64)
            } else {
                Disc::Str(u32::try_from(v).unwrap_or(NONE))
            },
            mapped: t & 2 != 0,
        }
    }

    /// The identity created by ingest ordinal `k` (None when out of range or none).
    pub(crate) fn slot(&self, k: u64) -> Option<u32> {
        let i = usize::try_from(k).ok()?;
        if i >= self.slots.len() {
            return None;
        }
        let id = self.slots.id(self.b(), i);
        (id != NONE).then_some(id)
    }

    /// The explicit (mapped) identity `(src, dst, rel, disc)`, by binary search in the
    /// mapped-identity order.
    pub(crate) fn find_mapped_ident(
        &self,
        src: u32,
        dst: u32,
        rel: u32,
        disc: Disc,
    ) -> Option<u32> {
        let b = self.b();
        let (tag, val) = seg::disc_parts(disc);
        let key = (src, dst, rel, tag, val);
        let (mut lo, mut hi) = (0usize, self.mapped.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = self.mapped.id(b, mid);
            let e = self.ident(id);
            match seg::ident_key(&e).cmp(&key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return (e.mapped && e.src != NONE).then_some(id),
            }
        }
        None
    }

    /// Row `r` of table `k` with its closure applied; a row of `NONE`
    /// ids, not alive, when out of range.
    pub(crate) fn row(&self, k: Table, r: u32) -> Row {
        if r as usize >= self.rows[k].n {
            return missing_row();
        }
        let (vt_s, vt_e) = self.row_vt(k, r);
        let (tt_e, closed_by, close_reason) = self.row_close(k, r);
        Row {
            ident: self.row_ident(k, r),
            content: self.row_content(k, r),
            vt_s,
            vt_e,
            tt_s: self.row_tt_s(k, r),
            tt_e,
            reason: self.row_reason(k, r),
            close_reason,
            origin: self.row_origin(k, r),
            closed_by,
            alive: self.row_alive(k, r),
        }
    }

    // One field of row `r` of table `k`, read from its column alone (accessors that need
    // one field skip the rest of the row). Out of range: the `missing_row` value.

    pub(crate) fn row_ident(&self, k: Table, r: u32) -> u32 {
        self.rows[k].ident.id(self.b(), r as usize)
    }

    pub(crate) fn row_content(&self, k: Table, r: u32) -> u32 {
        self.rows[k].content.id(self.b(), r as usize)
    }

    /// The content ids of rows `[a, e)` of table `k` (clamped), decoded in one sequential
    /// pass.
    pub(crate) fn row_content_range(&self, k: Table, a: usize, e: usize) -> Vec<u32> {
        let e = e.min(self.rows[k].n);
        id_list(self.rows[k].content.range(self.b(), a.min(e), e))
    }

    /// `vt_s` alone (0 out of range), without reading the length column.
    pub(crate) fn row_vt_s(&self, k: Table, r: u32) -> i64 {
        let t = &self.rows[k];
        if r as usize >= t.n {
            return 0;
        }
        t.vt_s.get(self.b(), r as usize)
    }

    /// `[vt_s, vt_e)`.
    pub(crate) fn row_vt(&self, k: Table, r: u32) -> (i64, i64) {
        let (t, b, i) = (&self.rows[k], self.b(), r as usize);
        if i >= t.n {
            return (0, OPEN_END);
        }
        let vt_s = t.vt_s.get(b, i);
        let vt_e = match t.vt_len.get(b, i) {
            0 => OPEN_END,
            l => vt_s.saturating_add(l),
        };
        (vt_s, vt_e)
    }

    /// The belief and start columns of rows `[a, e)` of table `k` (clamped), each decoded in
    /// one sequential pass, closures merged in: the unit of a scan over the image.
    /// `tt_s` is decoded only when `as_of` precedes some row's `tt_s` (otherwise every row
    /// passes `tt_s <= as_of`, and `tt_s` is empty); `alive` is empty when every row of the
    /// table is alive.
    pub(crate) fn row_block(
        &self,
        k: Table,
        a: usize,
        e: usize,
        as_of: i64,
        cols: BlockCols,
    ) -> RowBlock {
        let (t, b) = (&self.rows[k], self.b());
        let e = e.min(t.n);
        let a = a.min(e);
        let len = e - a;
        let tt_s = if self.max_tt_s(k) > as_of {
            self.tt_s_range(k, a, e)
        } else {
            Vec::new()
        };
        let all_alive = matches!(t.alive, Col::For(f) if f.width == 0 && f.min == 1);
        let mut tt_e = vec![OPEN_END; len];
        let mut c = t.close_row.lower_bound(b, a as i64);
        while c < t.n_close {
            let r = t.close_row.get(b, c);
            if r < a as i64 || r >= e as i64 {
                break;
            }
            if let Some(x) = tt_e.get_mut(r as usize - a) {
                *x = t.close_tt_e.get(b, c);
            }
            c += 1;
        }
        let vt_s = if cols.vt_s || cols.vt_e {
            t.vt_s.range(b, a, e)
        } else {
            Vec::new()
        };
        let vt_e = if cols.vt_e {
            vt_ends(&vt_s, t.vt_len.range(b, a, e))
        } else {
            Vec::new()
        };
        RowBlock {
            vt_s,
            vt_e,
            alive: if all_alive {
                Vec::new()
            } else {
                t.alive.range(b, a, e).into_iter().map(|x| x == 1).collect()
            },
            tt_s,
            tt_e,
            ident: if cols.ident {
                id_list(t.ident.range(b, a, e))
            } else {
                Vec::new()
            },
        }
    }

    /// The `tt_s` column of rows `[a, e)` of table `k` (clamped), runs expanded.
    fn tt_s_range(&self, k: Table, a: usize, e: usize) -> Vec<i64> {
        let t = &self.rows[k];
        let e = e.min(t.n);
        let a = a.min(e);
        match &t.tt_s {
            TtCol::Runs(runs) => {
                let mut tt_s = Vec::with_capacity(e - a);
                let mut run = runs
                    .partition_point(|&(start, _)| start <= a)
                    .saturating_sub(1);
                for r in a..e {
                    while runs.get(run + 1).is_some_and(|&(start, _)| start <= r) {
                        run += 1;
                    }
                    tt_s.push(runs.get(run).map_or(0, |&(_, v)| v));
                }
                tt_s
            }
            TtCol::Col(c) => c.range(self.b(), a, e),
        }
    }

    /// Values `[a, e)` (clamped) of integer chunk `id` as the file stores them
    /// (`format-spec.md` §6.3, §6.5; a `tt_s` chunk's runs expanded): the dictionary
    /// columns 3–12, the row and close columns, the heap offsets and orders (64–67), the
    /// mapped-identity order (76) and the long-row end orders (78, 80). Empty for any
    /// other chunk. Compaction over the image reads it through this, a stretch of one
    /// column at a time.
    pub(crate) fn chunk_range(&self, id: u16, a: usize, e: usize) -> Vec<i64> {
        use chunk::*;
        let col = match id {
            CONTENT_LABEL..=CONTENT_PROV => match self.content.get(usize::from(id - CONTENT_LABEL))
            {
                Some(c) => c,
                None => return Vec::new(),
            },
            IDENT_SRC..=IDENT_DISC_VAL => match self.ident.get(usize::from(id - IDENT_SRC)) {
                Some(c) => c,
                None => return Vec::new(),
            },
            SLOTS => &self.slots,
            ROWS_NODE..=43 => {
                let (k, c) = if id < ROWS_EDGE {
                    (Table::Nodes, id - ROWS_NODE)
                } else {
                    (Table::Edges, id - ROWS_EDGE)
                };
                let t = &self.rows[k];
                match c {
                    IDENT => &t.ident,
                    CONTENT => &t.content,
                    VT_S => &t.vt_s,
                    VT_LEN => &t.vt_len,
                    TT_S => return self.tt_s_range(k, a, e),
                    REASON => &t.reason,
                    ORIGIN => &t.origin,
                    ALIVE => &t.alive,
                    CLOSE_ROW => &t.close_row,
                    CLOSE_TT_E => &t.close_tt_e,
                    CLOSE_BY => &t.close_by,
                    CLOSE_REASON => &t.close_reason,
                    _ => return Vec::new(),
                }
            }
            UID_OFFS => &self.uids.offs,
            STR_OFFS => &self.strings.offs,
            UID_ORDER => &self.uids.order,
            STR_ORDER => &self.strings.order,
            MAPPED_ORDER => &self.mapped,
            NODE_LONG_BY_END | EDGE_LONG_BY_END => match &self.time {
                Some(t) => &t[Table::of(id == EDGE_LONG_BY_END)].by_end,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let e = e.min(col.len());
        col.range(self.b(), a.min(e), e)
    }

    /// The number of closures of table `k`.
    pub(crate) fn n_close(&self, k: Table) -> usize {
        self.rows[k].n_close
    }

    /// The string bytes of the uid heap (`uids`) or of the string heap, back to back.
    pub(crate) fn heap_bytes(&self, uids: bool) -> &[u8] {
        let h = if uids { &self.uids } else { &self.strings };
        self.b().get(h.data..h.data + h.len).unwrap_or(&[])
    }

    /// True for an image of segment minor 4 or 6: rows in segment order (§6.1), with the
    /// valid-time index and the closed-row sets.
    pub(crate) fn is_sorted(&self) -> bool {
        self.time.is_some() && self.rows[Table::Nodes].closed.is_some()
    }

    /// `(vt_s, vt_e)` columns of rows `[a, e)` of table `k` (clamped).
    pub(crate) fn vt_cols(&self, k: Table, a: usize, e: usize) -> (Vec<i64>, Vec<i64>) {
        let (t, b) = (&self.rows[k], self.b());
        let vt_s = t.vt_s.range(b, a, e);
        let vt_e = vt_ends(&vt_s, t.vt_len.range(b, a, e));
        (vt_s, vt_e)
    }

    /// The `vt_s` column of rows `[a, e)` of table `k` (clamped).
    pub(crate) fn vt_s_col(&self, k: Table, a: usize, e: usize) -> Vec<i64> {
        self.rows[k].vt_s.range(self.b(), a, e)
    }

    /// Identity ids of edge rows (`k` = 1) or uid ids of node rows (`k` = 0) `[a, e)`
    /// (clamped).
    pub(crate) fn ident_col(&self, k: Table, a: usize, e: usize) -> Vec<u32> {
        id_list(self.rows[k].ident.range(self.b(), a, e))
    }

    /// Part `part` of edge identities `[a, e)` (clamped).
    pub(crate) fn ident_part_range(&self, part: IdentPart, a: usize, e: usize) -> Vec<u32> {
        id_list(self.ident_part_col(part).range(self.b(), a, e))
    }

    /// The number of rows of table `k`.
    pub(crate) fn n_rows(&self, k: Table) -> usize {
        self.rows[k].n
    }

    /// The largest `tt_s` or closure `tt_e` of table `k` (`i64::MIN` when it has no rows):
    /// at every belief state at or after it, a row is believed exactly when it is alive
    /// and not closed.
    pub(crate) fn max_tt(&self, k: Table) -> i64 {
        let t = &self.rows[k];
        let ends = t.close_tt_e.range(self.b(), 0, t.n_close);
        ends.into_iter().fold(self.max_tt_s(k), i64::max)
    }

    /// The largest `tt_s` of table `k` (`i64::MIN` when it has no rows).
    fn max_tt_s(&self, k: Table) -> i64 {
        let t = &self.rows[k];
        *t.tt_max.get_or_init(|| {
            match &t.tt_s {
                TtCol::Runs(runs) => runs.iter().map(|&(_, v)| v).max(),
                TtCol::Col(c) => c.range(self.b(), 0, t.n).into_iter().max(),
            }
            .unwrap_or(i64::MIN)
        })
    }

    /// True when the image holds the valid-time index (segment minor ≥ 3).
    pub(crate) fn has_time_index(&self) -> bool {
        self.time.is_some()
    }

    /// In the valid-time index of table `k`: the number of rows with `vt_s < t` (`by_end`:
    /// of long rows with `vt_e < t`), by binary search through the rows' columns; 0
    /// without an index.
    pub(crate) fn time_rank(&self, k: Table, by_end: bool, t: i64) -> usize {
        let Some(ti) = &self.time else { return 0 };
        let (c, b) = (ti[k].col(by_end), self.b());
        // The key of the row an entry names (an entry out of u32 reads as a missing row);
        // a start is read without the length column.
        let key = |row: i64| {
            let r = u32::try_from(row).unwrap_or(NONE);
            if by_end {
                self.row_vt(k, r).1
            } else {
                self.row_vt_s(k, r)
            }
        };
        c.first_not_below_by(b, |row| key(row) < t)
    }

    /// Entries `[a, e)` of the valid-time index of table `k` (`by_end`: the long rows by
    /// `vt_e`), as row numbers.
    pub(crate) fn time_rows(&self, k: Table, by_end: bool, a: usize, e: usize) -> Vec<u32> {
        match &self.time {
            None => Vec::new(),
            Some(ti) => id_list(ti[k].col(by_end).range(self.b(), a, e)),
        }
    }

    /// Entry `i` of the long-row end order of table `k` (chunk 78 or 80), a row number;
    /// `NONE` when out of range or without the index.
    pub(crate) fn long_row(&self, k: Table, i: usize) -> u32 {
        match &self.time {
            Some(t) => t[k].by_end.id(self.b(), i),
            None => NONE,
        }
    }

    /// The number of long rows of table `k` in the valid-time index.
    pub(crate) fn n_long(&self, k: Table) -> usize {
        self.time.as_ref().map_or(0, |t| t[k].by_end.len())
    }

    /// The `i`-th uid id in uid byte order (`NONE` when out of range).
    pub(crate) fn uid_by_rank(&self, i: usize) -> u32 {
        self.uids.order.id(self.b(), i)
    }

    pub(crate) fn row_tt_s(&self, k: Table, r: u32) -> i64 {
        match &self.rows[k].tt_s {
            TtCol::Runs(runs) => {
                let run = runs.partition_point(|&(start, _)| start <= r as usize);
                run.checked_sub(1)
                    .and_then(|k| runs.get(k))
                    .map_or(0, |&(_, v)| v)
            }
            TtCol::Col(c) => c.get(self.b(), r as usize),
        }
    }

    /// `(tt_e, closed_by, close_reason)`: the closure of the row, by search in the
    /// (strictly ascending) close rows; `(OPEN_END, None, NONE)` for an open row. The
    /// image's closed-row set (minor 4; else a bitset built at first use) answers first,
    /// and a table without closures has nothing to test.
    pub(crate) fn row_close(&self, k: Table, r: u32) -> (i64, Option<Origin>, u32) {
        let (t, b) = (&self.rows[k], self.b());
        let closed = t.n_close > 0
            && match t.closed {
                Some(set) => set.contains(b, r),
                None => {
                    let bits = self.caches.closed[k].get_or_init(|| {
                        let mut bits = vec![0u64; t.n.div_ceil(64)];
                        for x in t.close_row.range(b, 0, t.n_close) {
                            let w = usize::try_from(x).ok().and_then(|x| bits.get_mut(x / 64));
                            if let Some(w) = w {
                                *w |= 1 << (x % 64);
                            }
                        }
                        bits
                    });
                    bits.get(r as usize / 64)
                        .is_some_and(|w| w & (1 << (r % 64)) != 0)
                }
            };
        if !closed {
            return (OPEN_END, None, NONE);
        }
        let c = t.close_row.lower_bound(b, i64::from(r));
        if c >= t.n_close || t.close_row.get(b, c) != i64::from(r) {
            return (OPEN_END, None, NONE);
        }
        let by = u8::try_from(t.close_by.get(b, c))
            .ok()
            .and_then(Origin::from_u8)
            .unwrap_or(Origin::Assert);
        (
            t.close_tt_e.get(b, c),
            Some(by),
            opt_id(t.close_reason.get(b, c)),
        )
    }

    pub(crate) fn row_reason(&self, k: Table, r: u32) -> u32 {
        opt_id(self.rows[k].reason.get(self.b(), r as usize))
    }

    pub(crate) fn row_origin(&self, k: Table, r: u32) -> Origin {
        u8::try_from(self.rows[k].origin.get(self.b(), r as usize))
            .ok()
            .and_then(Origin::from_u8)
            .unwrap_or(Origin::Assert)
    }

    pub(crate) fn row_alive(&self, k: Table, r: u32) -> bool {
        (r as usize) < self.rows[k].n && self.rows[k].alive.get(self.b(), r as usize) == 1
    }

    /// Part `part` of edge identity `id`; `NONE` when out of range.
    pub(crate) fn ident_part(&self, id: u32, part: IdentPart) -> u32 {
        self.ident_part_col(part).id(self.b(), id as usize)
    }

    /// The identity column of part `part`.
    fn ident_part_col(&self, part: IdentPart) -> &Col {
        let [src, dst, rel, ..] = &self.ident;
        match part {
            IdentPart::Src => src,
            IdentPart::Dst => dst,
            IdentPart::Rel => rel,
        }
    }

    /// Node rows of uid `uid`, ascending (every row, alive or not); empty when out of range.
    pub(crate) fn node_postings(&self, uid: u32) -> Vec<u32> {
        self.node_post.get(self.b(), uid)
    }

    /// Edge rows of identity `ident`, ascending.
    pub(crate) fn edge_postings(&self, ident: u32) -> Vec<u32> {
        self.edge_post.get(self.b(), ident)
    }

    /// Edge rows whose identity has src `uid`, ascending.
    pub(crate) fn out_adj(&self, uid: u32) -> Vec<u32> {
        self.out_adj.get(self.b(), uid)
    }

    /// Edge rows whose identity has dst `uid`, ascending.
    pub(crate) fn in_adj(&self, uid: u32) -> Vec<u32> {
        self.in_adj.get(self.b(), uid)
    }
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod structure_timing {
    /// Manual measurement: `TGMS_BASE_SEG=path TGMS_RUNS=n cargo test --release -p
    /// tgms-engine --lib structure_timing -- --ignored --nocapture` opens a compacted image
    /// and runs its structural pass `n` more times (CPU time: `perf stat`).
    #[test]
    #[ignore]
    fn structure_timing() {
        use super::*;
        let Ok(p) = std::env::var("TGMS_BASE_SEG") else {
            return;
        };
        let runs: usize = std::env::var("TGMS_RUNS").map_or(5, |v| v.parse().unwrap());
        let bytes =
            SegBytes::open(std::path::Path::new(&p), crate::format::mmap::IoMode::Mmap).unwrap();
        let base = Base::open(bytes).unwrap();
        let t = std::time::Instant::now();
        for _ in 0..runs {
            base.check_structure(&|id, w| (u64::from(id), w)).unwrap();
        }
        eprintln!("{runs} structural passes: {:?}", t.elapsed());
    }
}
