//! The flush segments published after a store's base image, decoded
//! (`format-spec.md` §9.4): their dictionaries, rows and closures, numbered on from the
//! image's counts, with the postings, adjacency and valid-time indexes the read path needs.
//! The image stays mapped and is never decoded: the read path ([`crate::rows`]) answers each
//! read from the image and from here, and the closures that the flush segments record for
//! image rows are kept apart and applied over the image's own.
//!
//! Memory is that of the flush segments' rows (as an eager open holds them), not the image's.
//!
//! A writer, and a reader that replays a log tail, append above the segments here too (the
//! memtable: everything at or above [`Delta::sealed`]), through the write rules of
//! `apply.rs` (`rows/write.rs`). A failed batch, and a flush that renumbers the memtable into
//! segment order, cut the delta back to earlier counts ([`Delta::truncate`]).

use crate::error::CorruptionKind;
use crate::format::base::Base;
use crate::ident::{self, Id12};
use crate::model::{
    Content, Disc, IdentPart, IdentRec, Marks, PerTable, Row, SegData, Table, NONE,
};
use crate::op::Origin;
use crate::rows::bulk_edges::BulkEdges;
use crate::rows::interner::Interner;
use crate::rows::tindex::IndexCache;
use crate::time::OPEN_END;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::OnceLock;

/// A closure of an image row recorded by a flush segment: `(tt_e, closed_by, close_reason)`.
pub(crate) type Close = (i64, Option<Origin>, u32);

/// Everything above the image: ids from `base` on are this delta's.
pub(crate) struct Delta {
    /// The image's counts (its `end` marks).
    pub(crate) base: Marks,
    pub(crate) uids: Interner,
    pub(crate) strings: Interner,
    pub(crate) contents: Vec<Content>,
    /// Content lookup of `contents` (store ids), so writes add no duplicate.
    pub(crate) content_ids: FxHashMap<Content, u32>,
    pub(crate) idents: Vec<IdentRec>,
    eids: Vec<OnceLock<Id12>>,
    /// Explicit (mapped) identities created above the image.
    pub(crate) mapped: FxHashMap<(u32, u32, u32, Disc), u32>,
    pub(crate) slots: Vec<u32>,
    /// `rows[k][i]` is row `base + i` of table `k` (`Table as usize`), closures applied.
    pub(crate) rows: PerTable<Vec<Row>>,
    /// Image rows of table `k` that a flush segment closed.
    pub(crate) closed: PerTable<FxHashMap<u32, Close>>,
    /// The closed image edge rows' `(vt_s, identity, tt_s, tt_e, row)`, read from the image
    /// once (per-bucket start counts take them off the image's counts on every call).
    pub(crate) closed_edges: Vec<(i64, u32, i64, i64, u32)>,
    /// Per uid: its node rows above the image.
    node_postings: Lists,
    /// Per edge identity: its rows above the image.
    edge_postings: Lists,
    /// Per uid: edge rows above the image with that src (`[0]`) / dst (`[1]`).
    adj: [Lists; 2],
    /// Valid-time indexes of `rows` (local row numbers).
    pub(crate) index: PerTable<IndexCache>,
    /// Bumped whenever a row above the image is closed or removed: the valid-time indexes'
    /// caches of unbelieved rows compare it.
    pub(crate) close_gen: u64,
    /// What the published segments hold: everything at or above is the memtable.
    pub(crate) sealed: Marks,
    /// Sealed rows (of the image or above it) closed since the last flush, `(is_edge, row)`.
    pub(crate) pending: Vec<(bool, u32)>,
    /// Rows below the current batch's start that it closed, `(is_edge, row)`.
    pub(crate) batch_closes: Vec<(bool, u32)>,
    /// Alive out-degree of the uids written since the open (statistics, §11).
    pub(crate) degree: FxHashMap<u32, u64>,
    /// During a bulk build (`store/bulk.rs`): its edges and their identities, above `rows`
    /// and `idents` (which hold none of them; [`Delta::row_above`], [`Delta::ident_above`]).
    pub(crate) bulk: Option<BulkEdges>,
}

/// Row lists by key as two parallel arrays sorted by `(key, row)` once a load ends: the rows
/// of a key are one ascending slice, found by binary search (no allocation per key, which
/// a million new identities would otherwise cost). Rows the memtable appends (all above
/// the loaded ones) wait in `extra` until a flush loads them as a segment; those of keys at
/// or above `dense_from` (the uids or identities the memtable creates, numbered densely from
/// the count at its start) wait in `dense`, indexed by `key - dense_from`, with no hashing.
struct Lists {
    keys: Vec<u32>,
    rows: Vec<u32>,
    extra: FxHashMap<u32, SmallVec<[u32; 2]>>,
    dense_from: u32,
    dense: Vec<SmallVec<[u32; 2]>>,
}

impl Default for Lists {
    /// Lists with every memtable row in `extra` (no dense keys).
    fn default() -> Lists {
        Lists {
            keys: Vec::new(),
            rows: Vec::new(),
            extra: FxHashMap::default(),
            dense_from: u32::MAX,
            dense: Vec::new(),
        }
    }
}

impl Lists {
    /// Appends a memtable row to `key`'s list.
    fn add(&mut self, key: u32, row: u32) {
        match key.checked_sub(self.dense_from) {
            Some(i) => {
                let i = i as usize;
                if self.dense.len() <= i {
                    self.dense.resize_with(i + 1, SmallVec::new);
                }
                self.dense[i].push(row);
            }
            None => self.extra.entry(key).or_default().push(row),
        }
    }

    /// The memtable rows of `key`.
    fn memtable(&self, key: u32) -> &[u32] {
        match key.checked_sub(self.dense_from) {
            Some(i) => self.dense.get(i as usize).map_or(&[], |v| v.as_slice()),
            None => self.extra.get(&key).map_or(&[], |v| v.as_slice()),
        }
    }

    /// Appends `key`'s rows, ascending, to `out`.
    fn extend_into(&self, key: u32, out: &mut Vec<u32>) {
        out.extend_from_slice(self.get(key));
        out.extend_from_slice(self.memtable(key));
    }

    /// Forgets the memtable rows at or above `row`.
    fn truncate(&mut self, row: u32) {
        self.extra.retain(|_, v| {
            v.retain(|r| *r < row);
            !v.is_empty()
        });
        self.dense.iter_mut().for_each(|v| v.retain(|r| *r < row));
        while self.dense.last().is_some_and(|v| v.is_empty()) {
            self.dense.pop();
        }
    }

    /// Lists whose keys at or above `from` are dense.
    fn dense_from(from: u64) -> Lists {
        Lists {
            dense_from: from as u32,
            ..Lists::default()
        }
    }

    /// Makes the keys at or above `from` dense (the memtable holds no row: `dense` is
    /// empty).
    fn start_dense(&mut self, from: u32) {
        debug_assert!(self.dense.is_empty());
        self.dense_from = from;
    }

    fn push(&mut self, key: u32, row: u32) {
        self.keys.push(key);
        self.rows.push(row);
    }

    /// Restores the `(key, row)` order after pushes.
    fn sort(&mut self) {
        if self.keys.is_sorted() {
            return; // rows are pushed ascending, so equal keys already are
        }
        let mut pairs: Vec<(u32, u32)> = self
            .keys
            .iter()
            .copied()
            .zip(self.rows.iter().copied())
            .collect();
        pairs.sort_unstable();
        (self.keys, self.rows) = pairs.into_iter().unzip();
    }

    fn get(&self, key: u32) -> &[u32] {
        let lo = self.keys.partition_point(|&k| k < key);
        let hi = lo + self.keys[lo..].partition_point(|&k| k == key);
        &self.rows[lo..hi]
    }
}

impl Delta {
    /// An empty delta over an image whose counts are `base`.
    pub(crate) fn new(base: Marks) -> Delta {
        Delta {
            base,
            uids: Interner::default(),
            strings: Interner::default(),
            contents: Vec::new(),
            content_ids: FxHashMap::default(),
            idents: Vec::new(),
            eids: Vec::new(),
            mapped: FxHashMap::default(),
            slots: Vec::new(),
            rows: PerTable::default(),
            closed: PerTable::default(),
            closed_edges: Vec::new(),
            node_postings: Lists::dense_from(base.uids),
            edge_postings: Lists::dense_from(base.idents),
            adj: [Lists::dense_from(base.uids), Lists::dense_from(base.uids)],
            index: PerTable::default(),
            close_gen: 0,
            sealed: base,
            pending: Vec::new(),
            batch_closes: Vec::new(),
            degree: FxHashMap::default(),
            bulk: None,
        }
    }

    /// True when nothing lies above the image: no row, no dictionary entry and no closure
    /// of an image row (a flush segment may hold closures only: a retraction).
    pub(crate) fn is_empty(&self) -> bool {
        self.end() == self.base && self.closed.iter().all(|c| c.is_empty())
    }

    /// The counts of the image and the loaded segments together.
    pub(crate) fn end(&self) -> Marks {
        self.base.plus([
            self.uids.len(),
            self.strings.len(),
            self.contents.len(),
            self.n_idents_above(),
            self.n_slots_above(),
            self.n_above(Table::Nodes),
            self.n_above(Table::Edges),
        ])
    }

    /// The rows of table `k` above the image (a bulk build's edges included).
    #[inline]
    pub(crate) fn n_above(&self, k: Table) -> usize {
        self.rows[k].len() + self.bulk_edges(k).len()
    }

    /// Row `j` above the image of table `k` (`j < n_above(k)`), from `rows` or a bulk
    /// build's edges.
    #[inline]
    pub(crate) fn row_above(&self, k: Table, j: usize) -> Row {
        match self.rows[k].get(j) {
            Some(r) => *r,
            None => (self.bulk_edges(k)).row(self.first_bulk_ident(), j - self.rows[k].len()),
        }
    }

    /// The stored value of row column `c` (`format::seg::row_value`) of row `j` above the
    /// image of table `k`, reading only what it needs of a bulk build's edge.
    #[inline]
    pub(crate) fn value_above(&self, k: Table, c: u16, j: usize) -> i64 {
        match self.rows[k].get(j) {
            Some(r) => crate::format::seg::row_value(c, r),
            None => {
                let i = j - self.rows[k].len();
                (self.bulk_edges(k)).value(c, self.first_bulk_ident(), i)
            }
        }
    }

    /// [`Delta::value_above`] of rows `js` of column `c`, appended to `out`: a bulk build's
    /// edges (the decoded rows empty) through [`BulkEdges::values`], a block at a time.
    pub(crate) fn values_above(
        &self,
        k: Table,
        c: u16,
        js: impl Iterator<Item = usize>,
        out: &mut Vec<i64>,
    ) {
        if self.rows[k].is_empty() {
            self.bulk_edges(k)
                .values(c, self.first_bulk_ident(), js, out);
        } else {
            out.extend(js.map(|j| self.value_above(k, c, j)));
        }
    }

    /// The key a row sorts by in segment order, `(vt_s, identity, tt_s)`, of row `j` above
    /// the image of table `k` ([`Delta::row_above`] without building the row).
    #[inline]
    pub(crate) fn key_above(&self, k: Table, j: usize) -> (i64, u32, i64) {
        match self.rows[k].get(j) {
            Some(r) => (r.vt_s, r.ident, r.tt_s),
            None => {
                let (b, i) = (self.bulk_edges(k), j - self.rows[k].len());
                (b.vt_s(i), self.first_bulk_ident() + i as u32, b.tt_s(i))
            }
        }
    }

    /// The identities above the image (a bulk build's included).
    #[inline]
    pub(crate) fn n_idents_above(&self) -> usize {
        self.idents.len() + self.bulk_edges(Table::Edges).len()
    }

    /// Identity `j` above the image (`j < n_idents_above()`).
    #[inline]
    pub(crate) fn ident_above(&self, j: usize) -> IdentRec {
        match self.idents.get(j) {
            Some(e) => *e,
            None => self.bulk_edges(Table::Edges).ident(j - self.idents.len()),
        }
    }

    /// The ingest ordinals with a slot above the image's (a bulk build's included).
    #[inline]
    pub(crate) fn n_slots_above(&self) -> usize {
        self.slots.len() + self.bulk_edges(Table::Edges).len()
    }

    /// Slot `i` above the image's (`i < n_slots_above()`): a bulk build's edges hold the
    /// slots after the decoded ones (none), each its own identity's.
    #[inline]
    pub(crate) fn slot_above(&self, i: usize) -> u32 {
        match self.slots.get(i) {
            Some(&s) => s,
            None => self.first_bulk_ident() + (i - self.slots.len()) as u32,
        }
    }

    /// A bulk build's edges when `k` is the edge table, else none (an index past the
    /// decoded rows then fails as a slice index does).
    #[inline]
    fn bulk_edges(&self, k: Table) -> &BulkEdges {
        static NONE_HELD: BulkEdges = BulkEdges::EMPTY;
        match (&self.bulk, k) {
            (Some(b), Table::Edges) => b,
            _ => &NONE_HELD,
        }
    }

    /// The identity of a bulk build's first edge: its identities follow the decoded ones.
    #[inline]
    fn first_bulk_ident(&self) -> u32 {
        (self.base.idents as usize + self.idents.len()) as u32
    }

    /// Turns a bulk build's edges into decoded rows and identities (the same ones), for a
    /// build that ends without merging them into an image.
    pub(crate) fn unbulk(&mut self) {
        let Some(b) = self.bulk.take() else {
            return;
        };
        let first = self.first_bulk_ident();
        for j in 0..b.len() {
            self.push_ident(b.ident(j));
            self.rows[Table::Edges].push(b.row(first, j));
            self.slots.push(first + j as u32);
        }
    }

    /// Image rows of table `k`, as a count.
    pub(crate) fn base_rows(&self, k: Table) -> u64 {
        u64::from(self.n_base(k))
    }

    /// Appends an identity created above the image.
    pub(crate) fn push_ident(&mut self, e: IdentRec) {
        self.idents.push(e);
        self.eids.push(OnceLock::new());
    }

    /// Image rows of table `k`.
    #[inline]
    pub(crate) fn n_base(&self, k: Table) -> u32 {
        self.base.rows(k) as u32
    }

    /// Appends one flush segment's content (as `State::load_seg` appends it to a decoded
    /// state, with the same checks); `b` is the image. `Err(kind)` names the first
    /// inconsistency.
    pub(crate) fn load(&mut self, d: SegData, b: &Base) -> Result<(), CorruptionKind> {
        d.check_at(self.end())?;
        for u in &d.uids {
            let before = self.uids.len();
            if b.uid_id(u).is_some() || self.uids.intern(u) as usize != before {
                return Err("duplicate uid in the uid heap".into());
            }
        }
        for s in &d.strings {
            let before = self.strings.len();
            if b.string_id(s).is_some() || self.strings.intern(s) as usize != before {
                return Err("duplicate string in the string heap".into());
            }
        }
        // Content records are not checked for duplicates of the image's: the image keeps no
        // content lookup, and a duplicate changes no read (`tgms check` decodes and checks all).
        for c in d.contents {
            let id = self.base.contents as u32 + self.contents.len() as u32;
            self.content_ids.entry(c).or_insert(id);
            self.contents.push(c);
        }
        for e in d.idents {
            let id = (self.base.idents + self.idents.len() as u64) as u32;
            if e.mapped {
                let key = (e.src, e.dst, e.rel, e.disc);
                if b.find_mapped_ident(e.src, e.dst, e.rel, e.disc).is_some()
                    || self.mapped.insert(key, id).is_some()
                {
                    return Err("duplicate edge identity".into());
                }
            }
            self.idents.push(e);
            self.eids.push(OnceLock::new());
        }
        self.slots.extend(d.slots);
        for (k, rows) in Table::BOTH.into_iter().zip([d.nodes, d.edges]) {
            for row in rows {
                let idx = self.n_base(k) + self.rows[k].len() as u32;
                if k == Table::Nodes {
                    self.node_postings.push(row.ident, idx);
                } else {
                    self.edge_postings.push(row.ident, idx);
                    let ends =
                        [IdentPart::Src, IdentPart::Dst].map(|p| self.ident_part(b, row.ident, p));
                    self.adj[0].push(ends[0], idx);
                    self.adj[1].push(ends[1], idx);
                }
                self.rows[k].push(row);
            }
        }
        for (k, closes) in Table::BOTH.into_iter().zip(d.closes.iter()) {
            let nb = self.n_base(k);
            for c in closes {
                let close = (c.tt_e, Some(c.closed_by), c.close_reason);
                if c.row < nb {
                    let open = b.row_alive(k, c.row)
                        && b.row_close(k, c.row).0 == OPEN_END
                        && c.tt_e > b.row_tt_s(k, c.row);
                    if !open || self.closed[k].insert(c.row, close).is_some() {
                        return Err(format!("closure of row {} is inconsistent", c.row).into());
                    }
                    if k == Table::Edges {
                        self.close_image_edge(b, c.row, c.tt_e);
                    }
                    continue;
                }
                let Some(row) = self.rows[k].get_mut((c.row - nb) as usize) else {
                    return Err(format!("closure of row {} that does not exist", c.row).into());
                };
                if row.tt_e != OPEN_END || !row.alive || c.tt_e <= row.tt_s {
                    return Err(format!("closure of row {} is inconsistent", c.row).into());
                }
                (row.tt_e, row.closed_by, row.close_reason) = close;
            }
        }
        for l in [&mut self.node_postings, &mut self.edge_postings]
            .into_iter()
            .chain(&mut self.adj)
        {
            l.sort();
        }
        self.close_gen += 1;
        self.sealed = self.end();
        self.pending.clear();
        // The memtable starts empty: the uids and identities it creates are numbered from here.
        self.edge_postings.start_dense(self.sealed.idents as u32);
        let uids = self.sealed.uids as u32;
        for l in [&mut self.node_postings].into_iter().chain(&mut self.adj) {
            l.start_dense(uids);
        }
        Ok(())
    }

    /// Records image edge row `row`, closed at `tt_e`, for the start counts.
    pub(crate) fn close_image_edge(&mut self, b: &Base, row: u32, tt_e: i64) {
        let (vt_s, ident) = (
            b.row_vt(Table::Edges, row).0,
            b.row_ident(Table::Edges, row),
        );
        self.closed_edges
            .push((vt_s, ident, b.row_tt_s(Table::Edges, row), tt_e, row));
    }

    /// Appends a memtable row (store number `n_base + rows.len()`) to table `k`, with its
    /// postings and, for an edge, the adjacency of its ends `(src, dst)`.
    pub(crate) fn push_row(&mut self, k: Table, row: Row, ends: (u32, u32)) {
        let idx = self.n_base(k) + self.rows[k].len() as u32;
        if k == Table::Nodes {
            self.node_postings.add(row.ident, idx);
        } else {
            self.edge_postings.add(row.ident, idx);
            self.adj[0].add(ends.0, idx);
            self.adj[1].add(ends.1, idx);
        }
        self.rows[k].push(row);
    }

    /// Cuts the delta back to the counts `to` (at or above the sealed marks): every row, dictionary entry and identity
    /// at or above `to` is forgotten, and the closures `reopen` names, `(is_edge, row)` of
    /// rows below `to`, are undone. A failed batch cuts back to its start; a flush cuts the
    /// memtable off before it loads the segment it wrote.
    pub(crate) fn truncate(&mut self, to: Marks, reopen: &[(bool, u32)]) {
        let b = self.base;
        let local = |end: u64, base: u64| (end - base) as usize;
        for &(is_edge, r) in reopen.iter().rev() {
            let k = Table::of(is_edge);
            match r.checked_sub(self.n_base(k)) {
                None => {
                    self.closed[k].remove(&r);
                }
                Some(j) => {
                    let row = &mut self.rows[k][j as usize];
                    (row.tt_e, row.closed_by, row.close_reason) = (OPEN_END, None, NONE);
                }
            }
        }
        if reopen
            .iter()
            .any(|&(e, r)| e && r < self.n_base(Table::Edges))
        {
            let closed = &self.closed[Table::Edges];
            self.closed_edges.retain(|x| closed.contains_key(&x.4));
        }
        // A bulk build's edges and identities follow the decoded ones (`rows/bulk_edges.rs`):
        // what is cut beyond the decoded ones is cut from the build.
        let decoded_edges = self.rows[Table::Edges].len();
        if let Some(bulk) = self.bulk.as_mut() {
            bulk.truncate(local(to.edges, b.edges).saturating_sub(decoded_edges));
        }
        for k in Table::BOTH {
            let n = local(to.rows(k), b.rows(k));
            self.rows[k].truncate(n);
            self.index[k].truncate(n);
        }
        let (nr, er) = (to.nodes as u32, to.edges as u32);
        self.node_postings.truncate(nr);
        self.edge_postings.truncate(er);
        self.adj.iter_mut().for_each(|l| l.truncate(er));
        self.uids.truncate(local(to.uids, b.uids));
        self.strings.truncate(local(to.strings, b.strings));
        for (i, c) in self
            .contents
            .iter()
            .enumerate()
            .skip(local(to.contents, b.contents))
        {
            let id = b.contents as u32 + i as u32;
            if self.content_ids.get(c) == Some(&id) {
                self.content_ids.remove(c);
            }
        }
        self.contents.truncate(local(to.contents, b.contents));
        let kept_idents = local(to.idents, b.idents).min(self.idents.len());
        for e in self.idents.drain(kept_idents..) {
            if e.mapped {
                self.mapped.remove(&(e.src, e.dst, e.rel, e.disc));
            }
        }
        self.eids.truncate(self.idents.len());
        self.slots.truncate(local(to.slots, b.slots));
        self.close_gen += 1;
    }

    /// Part `part` of identity `id`, from the image or from here.
    #[inline]
    pub(crate) fn ident_part(&self, b: &Base, id: u32, part: IdentPart) -> u32 {
        match id.checked_sub(self.base.idents as u32) {
            None => b.ident_part(id, part),
            Some(i) => match self.idents.get(i as usize) {
                Some(e) => part.of(e),
                None => {
                    (self.bulk_edges(Table::Edges)).ident_part(i as usize - self.idents.len(), part)
                }
            },
        }
    }

    /// Part `part` of each identity of `ids` ([`Delta::ident_part`]), where `image` holds
    /// that part of every identity of the image; [`NONE`] for an id past the last. One
    /// short loop, with a bulk build's parts read straight from their column, so rows out
    /// of identity order wait on their cache misses together.
    pub(crate) fn ident_parts(&self, image: &[u32], ids: &[u32], part: IdentPart) -> Vec<u32> {
        let decoded = &self.idents;
        let first_bulk = image.len() + decoded.len();
        let bulk = self.bulk_edges(Table::Edges).part_column(part);
        ids.iter()
            .map(|&i| {
                let i = i as usize;
                match i.checked_sub(first_bulk) {
                    Some(j) => bulk.get(j).copied().unwrap_or(NONE),
                    None => match image.get(i) {
                        Some(&u) => u,
                        None => part.of(&decoded[i - image.len()]),
                    },
                }
            })
            .collect()
    }

    /// Identity `id` (≥ the image's identities).
    #[inline]
    pub(crate) fn ident(&self, id: u32) -> IdentRec {
        self.ident_above((id - self.base.idents as u32) as usize)
    }

    /// Content `id` (≥ the image's contents).
    #[inline]
    pub(crate) fn content(&self, id: u32) -> Content {
        self.contents[(id - self.base.contents as u32) as usize]
    }

    /// The identity of ingest ordinal `k` (≥ the image's slots), `None` when none.
    pub(crate) fn slot(&self, k: u64) -> Option<u32> {
        let i = usize::try_from(k.checked_sub(self.base.slots)?).ok()?;
        (i < self.n_slots_above())
            .then(|| self.slot_above(i))
            .filter(|&s| s != NONE)
    }

    /// The explicit identity created above the image, if any.
    pub(crate) fn find_mapped_ident(
        &self,
        src: u32,
        dst: u32,
        rel: u32,
        disc: Disc,
    ) -> Option<u32> {
        self.mapped.get(&(src, dst, rel, disc)).copied()
    }

    /// The eid of identity `id` (≥ the image's identities), derived once from its parts.
    pub(crate) fn eid(&self, id: u32, parts: impl FnOnce() -> [String; 4]) -> Id12 {
        *self.eids[(id - self.base.idents as u32) as usize].get_or_init(|| {
            let [s, d, r, x] = parts();
            ident::eid_bytes(&s, &d, &r, &x)
        })
    }

    /// Appends the node rows of uid `uid` above the image to `out`.
    pub(crate) fn node_postings(&self, uid: u32, out: &mut Vec<u32>) {
        self.node_postings.extend_into(uid, out)
    }

    /// Appends the rows of edge identity `id` above the image to `out`.
    pub(crate) fn edge_postings(&self, id: u32, out: &mut Vec<u32>) {
        self.edge_postings.extend_into(id, out)
    }

    /// Appends the edge rows above the image leaving (`out`) or entering uid `uid`.
    pub(crate) fn adjacency(&self, uid: u32, out: bool, v: &mut Vec<u32>) {
        self.adj[usize::from(!out)].extend_into(uid, v)
    }
}
