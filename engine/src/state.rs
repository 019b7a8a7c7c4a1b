//! The in-memory store state (the memtable): entity dictionary, version rows, identity
//! postings, adjacency and incrementally maintained statistics, the primitives the write
//! rules of `apply.rs` run on, and an undo journal that makes every batch atomic.

use crate::apply::{self, Ctx, EdgeKey, Hits, Kind, Tables, Trace};
use crate::error::{CorruptionKind, Result};
use crate::ident::{self, Id12};
use crate::lowercase::LowerHeap;
use crate::model::{
    closure_of, move_rows, open_row, permute_from, segment_order, Closure, Content, Disc, IdentRec,
    Marks, Row, SegData, Stats, NONE,
};
use crate::op::Op;
use crate::time::{overlaps, OPEN_END};
use crate::tindex::IndexCache;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
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

/// An edge identity: `(src, dst, rel_type, disc)`; `eid` is derived lazily.
pub(crate) struct EdgeIdent {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) rel: u32,
    pub(crate) disc: Disc,
    /// True when the identity is in the explicit-identity map (created by `ident_for`);
    /// false for identities created by a default ingest disc, found through their slot.
    pub(crate) mapped: bool,
    eid: OnceLock<Id12>,
}

type Postings = SmallVec<[u32; 4]>;

/// Everything a failed batch must undo.
#[derive(Default)]
struct Undo {
    node_len: usize,
    edge_len: usize,
    uid_len: usize,
    string_len: usize,
    content_len: usize,
    ident_len: usize,
    slot_len: usize,
    ordinal: u64,
    closed: Vec<(bool, u32)>,
    retired: Vec<(bool, u32)>,
    node_push: Vec<u32>,
    edge_push: Vec<u32>,
    adj_push: Vec<(u32, u32)>,
    keys_added: Vec<EdgeKey>,
}

/// The in-memory state of a store.
#[derive(Default)]
pub struct State {
    pub(crate) uids: Interner,
    pub(crate) strings: Interner,
    pub(crate) contents: Vec<Content>,
    content_ids: FxHashMap<Content, u32>,
    pub(crate) nodes: Vec<Row>,
    pub(crate) edges: Vec<Row>,
    pub(crate) idents: Vec<EdgeIdent>,
    /// Identity lookup for identities not created through a default ingest disc.
    ident_map: FxHashMap<EdgeKey, u32>,
    /// `ordinal_slots[k]` = identity created by the ingest event with default disc `#k`.
    pub(crate) ordinal_slots: Vec<u32>,
    /// Per uid: its node rows.
    pub(crate) node_postings: Vec<Postings>,
    /// Per edge identity: its rows.
    pub(crate) edge_postings: Vec<Postings>,
    /// Per uid: edge rows with that src / dst.
    pub(crate) out_adj: Vec<Vec<u32>>,
    pub(crate) in_adj: Vec<Vec<u32>>,
    out_degree: Vec<u64>,
    rel_counts: FxHashMap<u32, u64>,
    pub(crate) stats: Stats,
    undo: Undo,
    /// Re-check invariant I1 after every batch for touched identities (§6.1 paranoid mode).
    pub(crate) paranoid: bool,
    /// When set, records what applied ops did that TGMS would not (JSONL export, §13.3).
    /// Observation only: apply semantics are the same with or without it.
    pub(crate) trace: Option<Trace>,
    /// What the published segments already hold (`format-spec.md` §6): everything below
    /// these counts is sealed; the rest is the memtable.
    pub(crate) sealed: Marks,
    /// Sealed rows closed since the last flush, `(is_edge, row)`, in close order: the
    /// close run the next flush writes.
    pub(crate) pending_closes: Vec<(bool, u32)>,
    /// Valid-time indexes of `nodes` / `edges`, built by reads (see `tindex.rs`).
    pub(crate) node_index: IndexCache,
    pub(crate) edge_index: IndexCache,
    /// Compact per-row edge columns for large scans (`cols.rs`), built lazily.
    pub(crate) edge_cols: crate::cols::ColCache,
    /// Bumped whenever an edge row's `tt_e` is closed (never lowered, also not by a
    /// rollback): caches of believed-now facts about edge rows compare it.
    pub(crate) edge_close_gen: u64,
}

impl State {
    pub(crate) fn content(&self, id: u32) -> &Content {
        &self.contents[id as usize]
    }

    fn content_id(&mut self, c: Content) -> u32 {
        if let Some(&id) = self.content_ids.get(&c) {
            return id;
        }
        let id = self.contents.len() as u32;
        self.contents.push(c);
        self.content_ids.insert(c, id);
        id
    }

    /// The 12 eid bytes of an edge identity (computed once, on first use).
    pub(crate) fn eid(&self, ident: u32) -> &Id12 {
        let e = &self.idents[ident as usize];
        e.eid.get_or_init(|| {
            ident::eid_bytes(
                self.uids.name(e.src),
                self.uids.name(e.dst),
                self.strings.name(e.rel),
                &self.disc_text(e.disc),
            )
        })
    }

    pub(crate) fn disc_text(&self, d: Disc) -> String {
        match d {
            Disc::Ordinal(k) => format!("#{k}"),
            Disc::Str(id) => self.strings.name(id).to_string(),
        }
    }

    fn register(&mut self, uid: &str) -> u32 {
        let before = self.uids.len();
        let id = self.uids.intern(uid);
        if self.uids.len() > before {
            self.node_postings.push(Postings::new());
            self.out_adj.push(Vec::new());
            self.in_adj.push(Vec::new());
            self.out_degree.push(0);
        }
        id
    }

    /// Looks up an edge identity without creating anything.
    fn find_ident(&self, key: EdgeKey) -> Option<u32> {
        if let Disc::Ordinal(k) = key.disc {
            if let Some(&id) = self.ordinal_slots.get(k as usize) {
                if id != NONE {
                    let e = &self.idents[id as usize];
                    if e.src == key.src && e.dst == key.dst && e.rel == key.rel {
                        return Some(id);
                    }
                }
            }
        }
        self.ident_map.get(&key).copied()
    }

    fn new_ident(&mut self, key: EdgeKey) -> u32 {
        let id = self.idents.len() as u32;
        self.idents.push(EdgeIdent {
            src: key.src,
            dst: key.dst,
            rel: key.rel,
            disc: key.disc,
            mapped: false,
            eid: OnceLock::new(),
        });
        self.edge_postings.push(Postings::new());
        id
    }

    /// The identity `(src, dst, rel_type, disc)` names, if it exists. O(1).
    pub(crate) fn lookup_edge(&self, src: &str, dst: &str, rel: &str, disc: &str) -> Option<u32> {
        apply::lookup_edge(self, src, dst, rel, disc)
    }

    /// Table `k` of the read path: 0 nodes, 1 edges.
    #[inline]
    pub(crate) fn table(&self, k: usize) -> &[Row] {
        if k == 0 {
            &self.nodes
        } else {
            &self.edges
        }
    }

    /// The valid-time index cache of table `k` (as [`State::table`]).
    pub(crate) fn index(&self, k: usize) -> &IndexCache {
        if k == 0 {
            &self.node_index
        } else {
            &self.edge_index
        }
    }

    fn rows(&self, kind: Kind) -> &Vec<Row> {
        match kind {
            Kind::Node => &self.nodes,
            Kind::Edge => &self.edges,
        }
    }

    fn posting_list(&self, kind: Kind, ident: u32) -> &Postings {
        match kind {
            Kind::Node => &self.node_postings[ident as usize],
            Kind::Edge => &self.edge_postings[ident as usize],
        }
    }

    /// Currently believed rows of an identity that overlap `[s, e)`, by `vt_s`.
    pub(crate) fn apply_batch(&mut self, tt: i64, ops: &[Op]) -> Result<()> {
        self.undo = Undo {
            node_len: self.nodes.len(),
            edge_len: self.edges.len(),
            uid_len: self.uids.len(),
            string_len: self.strings.len(),
            content_len: self.contents.len(),
            ident_len: self.idents.len(),
            slot_len: self.ordinal_slots.len(),
            ordinal: self.stats.ingest_ordinal,
            ..Undo::default()
        };
        let mut result = ops.iter().try_for_each(|op| apply::apply_op(self, tt, op));
        if result.is_ok() && self.paranoid {
            result = self.check_disjoint_touched();
        }
        self.stats.n_batches += 1;
        self.stats.first_tt.get_or_insert(tt);
        self.stats.last_tt = Some(tt);
        match result {
            Ok(()) => {
                self.commit_stats();
                Ok(())
            }
            Err(e) => {
                self.rollback();
                self.stats.n_failed_batches += 1;
                Err(e)
            }
        }
    }

    fn rollback(&mut self) {
        let u = std::mem::take(&mut self.undo);
        for &(is_edge, r) in u.retired.iter().rev() {
            let rows = if is_edge {
                &mut self.edges
            } else {
                &mut self.nodes
            };
            rows[r as usize].alive = true;
        }
        for &(is_edge, r) in u.closed.iter().rev() {
            let rows = if is_edge {
                &mut self.edges
            } else {
                &mut self.nodes
            };
            let row = &mut rows[r as usize];
            row.tt_e = OPEN_END;
            row.closed_by = None;
            row.close_reason = NONE;
        }
        for &id in u.node_push.iter().rev() {
            if let Some(p) = self.node_postings.get_mut(id as usize) {
                p.pop();
            }
        }
        for &id in u.edge_push.iter().rev() {
            if let Some(p) = self.edge_postings.get_mut(id as usize) {
                p.pop();
            }
        }
        for &(s, d) in u.adj_push.iter().rev() {
            self.out_adj[s as usize].pop();
            self.in_adj[d as usize].pop();
        }
        for k in &u.keys_added {
            self.ident_map.remove(k);
        }
        self.nodes.truncate(u.node_len);
        self.edges.truncate(u.edge_len);
        self.node_index.truncate(u.node_len);
        self.edge_index.truncate(u.edge_len);
        self.edge_cols.truncate(u.edge_len);
        self.idents.truncate(u.ident_len);
        self.edge_postings.truncate(u.ident_len);
        // Slots below `slot_len` belong to earlier batches' ordinals and are never written
        // again (ordinals only grow), so truncation restores them exactly.
        self.ordinal_slots.truncate(u.slot_len);
        self.uids.truncate(u.uid_len);
        // Strings and contents a failed batch interned go too, as the mapped writer's delta
        // drops them (`Delta::truncate`): both writers then hold the same dictionaries and
        // compact to the same bytes.
        self.strings.truncate(u.string_len);
        for c in self.contents.drain(u.content_len..) {
            self.content_ids.remove(&c);
        }
        self.node_postings.truncate(u.uid_len);
        self.out_adj.truncate(u.uid_len);
        self.in_adj.truncate(u.uid_len);
        self.out_degree.truncate(u.uid_len);
        self.stats.ingest_ordinal = u.ordinal;
    }

    /// Folds the batch's surviving new rows into the statistics (§11); O(batch size).
    fn commit_stats(&mut self) {
        let u = std::mem::take(&mut self.undo);
        for &(is_edge, r) in &u.closed {
            let sealed = if is_edge {
                self.sealed.edges
            } else {
                self.sealed.nodes
            };
            if (r as u64) < sealed {
                self.pending_closes.push((is_edge, r));
            }
        }
        self.stats.n_entities = self.uids.len() as u64;
        for r in &self.nodes[u.node_len..] {
            if r.alive {
                self.stats.n_node_versions += 1;
            }
        }
        for r in &self.edges[u.edge_len..] {
            if !r.alive {
                continue;
            }
            let id = &self.idents[r.ident as usize];
            self.stats.count_edge_version(r.vt_s, r.vt_e);
            *self.rel_counts.entry(id.rel).or_insert(0) += 1;
            let d = &mut self.out_degree[id.src as usize];
            *d += 1;
            self.stats.max_out_degree = self.stats.max_out_degree.max(*d);
        }
        // Only rel types this batch touched can have changed.
        let mut touched: Vec<u32> = self.edges[u.edge_len..]
            .iter()
            .filter(|r| r.alive)
            .map(|r| self.idents[r.ident as usize].rel)
            .collect();
        touched.sort_unstable();
        touched.dedup();
        for rel in touched {
            self.stats
                .rel_type_counts
                .insert(self.strings.name(rel).to_string(), self.rel_counts[&rel]);
        }
        // Keep the journal's buffers for the next batch.
        self.undo = Undo {
            closed: reuse(u.closed),
            retired: reuse(u.retired),
            node_push: reuse(u.node_push),
            edge_push: reuse(u.edge_push),
            adj_push: reuse(u.adj_push),
            keys_added: reuse(u.keys_added),
            ..Undo::default()
        };
    }

    /// Paranoid mode: I1 for every identity this batch touched.
    fn check_disjoint_touched(&self) -> Result<()> {
        let touched = (self.undo.node_push.iter().map(|&u| (Kind::Node, u)))
            .chain(self.undo.edge_push.iter().map(|&i| (Kind::Edge, i)));
        apply::check_disjoint(self, touched, |i| crate::canon::hex(self.eid(i)))
    }
}

impl Tables for State {
    fn register(&mut self, uid: &str) -> u32 {
        State::register(self, uid)
    }

    fn uid_id(&self, uid: &str) -> Option<u32> {
        self.uids.get(uid)
    }

    fn uid_name(&self, id: u32) -> &str {
        self.uids.name(id)
    }

    fn intern(&mut self, s: &str) -> u32 {
        self.strings.intern(s)
    }

    fn string_id(&self, s: &str) -> Option<u32> {
        self.strings.get(s)
    }

    fn string(&self, id: u32) -> &str {
        self.strings.name(id)
    }

    fn content_id(&mut self, c: Content) -> u32 {
        State::content_id(self, c)
    }

    fn content(&self, id: u32) -> Content {
        self.contents[id as usize]
    }

    fn find_ident(&self, key: EdgeKey) -> Option<u32> {
        State::find_ident(self, key)
    }

    fn find_mapped(&self, key: EdgeKey) -> Option<u32> {
        self.ident_map.get(&key).copied()
    }

    fn new_ident(&mut self, key: EdgeKey, mapped: bool) -> u32 {
        let id = State::new_ident(self, key);
        if mapped {
            self.idents[id as usize].mapped = true;
            self.ident_map.insert(key, id);
            self.undo.keys_added.push(key);
        }
        id
    }

    fn set_slot(&mut self, k: u64, id: u32) {
        let k = k as usize;
        if self.ordinal_slots.len() <= k {
            self.ordinal_slots.resize(k + 1, NONE);
        }
        if self.ordinal_slots[k] == NONE {
            self.ordinal_slots[k] = id;
        }
    }

    fn row(&self, kind: Kind, r: u32) -> Row {
        self.rows(kind)[r as usize]
    }

    fn postings(&self, kind: Kind, ident: u32) -> Vec<u32> {
        self.posting_list(kind, ident).to_vec()
    }

    fn insert(&mut self, kind: Kind, ident: u32, content: u32, s: i64, e: i64, cx: Ctx) {
        let row = cx.row(ident, content, s, e);
        match kind {
            Kind::Node => {
                let idx = self.nodes.len() as u32;
                self.nodes.push(row);
                self.node_postings[ident as usize].push(idx);
                self.undo.node_push.push(ident);
            }
            Kind::Edge => {
                let idx = self.edges.len() as u32;
                self.edges.push(row);
                self.edge_postings[ident as usize].push(idx);
                self.undo.edge_push.push(ident);
                let (src, dst) = {
                    let i = &self.idents[ident as usize];
                    (i.src, i.dst)
                };
                self.out_adj[src as usize].push(idx);
                self.in_adj[dst as usize].push(idx);
                self.undo.adj_push.push((src, dst));
            }
        }
    }

    /// Supersede (§6.2): close rows of earlier batches, retire rows of this batch.
    fn supersede(&mut self, kind: Kind, r: u32, cx: Ctx) {
        let is_edge = kind == Kind::Edge;
        let row = match kind {
            Kind::Node => &mut self.nodes[r as usize],
            Kind::Edge => &mut self.edges[r as usize],
        };
        if row.tt_s != cx.tt {
            self.edge_close_gen += u64::from(is_edge);
            row.tt_e = cx.tt;
            row.closed_by = Some(cx.kind);
            row.close_reason = cx.reason;
            self.undo.closed.push((is_edge, r));
        } else {
            row.alive = false;
            self.undo.retired.push((is_edge, r));
        }
    }

    fn ordinal(&mut self) -> &mut u64 {
        &mut self.stats.ingest_ordinal
    }

    fn trace(&mut self) -> Option<&mut Trace> {
        self.trace.as_mut()
    }

    fn hits(&self, kind: Kind, ident: u32, s: i64, e: i64) -> Hits {
        let rows = self.rows(kind);
        let mut h: Hits = self
            .posting_list(kind, ident)
            .iter()
            .copied()
            .filter(|&r| {
                let row = &rows[r as usize];
                row.believed_now() && overlaps(row.vt_s, row.vt_e, s, e)
            })
            .collect();
        // Believed rows of one identity are disjoint (I1), so vt_s orders them totally.
        h.sort_unstable_by_key(|&r| rows[r as usize].vt_s);
        h
    }

    fn has_believed_node(&self, uid: u32) -> bool {
        self.node_postings[uid as usize]
            .iter()
            .any(|&r| self.nodes[r as usize].believed_now())
    }
}

fn reuse<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}

/// Puts `table[base..]` in segment order; returns `new_of` (by offset from `base`) when
/// rows moved.
fn sort_tail(table: &mut [Row], base: usize) -> Option<Vec<u32>> {
    let new_of = segment_order(&table[base..])?;
    move_rows(&mut table[base..], &mut new_of.clone());
    Some(new_of)
}

/// Renumbers the entries of a row list that are at or above `base` (by `new_of`, offsets
/// from `base`) and sorts the list again.
fn renumber(list: &mut [u32], base: usize, new_of: &[u32]) {
    for x in list.iter_mut().filter(|x| **x as usize >= base) {
        *x = (base + new_of[*x as usize - base] as usize) as u32;
    }
    list.sort_unstable();
}

impl State {
    /// The current counts of every table.
    pub(crate) fn marks(&self) -> Marks {
        Marks {
            uids: self.uids.len() as u64,
            strings: self.strings.len() as u64,
            contents: self.contents.len() as u64,
            idents: self.idents.len() as u64,
            slots: self.ordinal_slots.len() as u64,
            nodes: self.nodes.len() as u64,
            edges: self.edges.len() as u64,
        }
    }

    /// Rows added and sealed rows closed since the last flush.
    pub(crate) fn memtable_rows(&self) -> u64 {
        let m = self.marks();
        (m.nodes - self.sealed.nodes)
            + (m.edges - self.sealed.edges)
            + self.pending_closes.len() as u64
    }

    /// The segment content for everything at or above `from`, with the closures of rows
    /// at or above `from` and, when `from` is the sealed mark, the pending close run of
    /// sealed rows. `from = Marks::default()` gives a full image (compaction).
    pub(crate) fn seg_data(&self, from: Marks) -> SegData {
        let m = self.marks();
        let r = |a: u64, b: u64| a as usize..b as usize;
        let mut closes: [Vec<Closure>; 2] = [Vec::new(), Vec::new()];
        for (k, rows, base) in [
            (0usize, &self.nodes, from.nodes),
            (1, &self.edges, from.edges),
        ] {
            for (i, row) in rows.iter().enumerate().skip(base as usize) {
                if let Some(c) = closure_of(i as u32, row) {
                    closes[k].push(c);
                }
            }
        }
        if from != Marks::default() {
            for &(is_edge, row) in &self.pending_closes {
                let rows = if is_edge { &self.edges } else { &self.nodes };
                if let Some(c) = closure_of(row, &rows[row as usize]) {
                    closes[is_edge as usize].push(c);
                }
            }
        }
        closes
            .iter_mut()
            .for_each(|c| c.sort_unstable_by_key(|c| c.row));
        SegData {
            base: from,
            uids: self.uids.names[r(from.uids, m.uids)]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            strings: self.strings.names[r(from.strings, m.strings)]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            contents: self.contents[r(from.contents, m.contents)].to_vec(),
            idents: self.idents[r(from.idents, m.idents)]
                .iter()
                .map(|e| IdentRec {
                    src: e.src,
                    dst: e.dst,
                    rel: e.rel,
                    disc: e.disc,
                    mapped: e.mapped,
                })
                .collect(),
            slots: self.ordinal_slots[r(from.slots, m.slots)].to_vec(),
            nodes: self.nodes[r(from.nodes, m.nodes)]
                .iter()
                .map(open_row)
                .collect(),
            edges: self.edges[r(from.edges, m.edges)]
                .iter()
                .map(open_row)
                .collect(),
            closes,
        }
    }

    /// The full image that compaction writes (`format-spec.md` §6.1, segment minor 4): every
    /// table from 0, each row table in segment order `(vt_s, ident, tt_s, row)`, and the
    /// closures renumbered to match. The rows get new numbers; a writer
    /// that publishes the image reloads its state from it ([`Store::compact`]).
    ///
    /// [`Store::compact`]: crate::Store::compact
    pub(crate) fn sorted_image(&self) -> SegData {
        let mut d = self.seg_data(Marks::default());
        let [node_closes, edge_closes] = &mut d.closes;
        permute_from(&mut d.nodes, node_closes, 0);
        permute_from(&mut d.edges, edge_closes, 0);
        d
    }

    /// Puts the memtable's rows (those above the sealed marks) in segment order before a
    /// flush writes them (`format-spec.md` §6.1): the rows move, every identity posting and
    /// adjacency list naming one is renumbered, and the read caches over them are dropped.
    /// Closures travel with their rows; the pending close run names sealed rows only.
    pub(crate) fn sort_memtable(&mut self) {
        let nb = self.sealed.nodes as usize;
        if let Some(new_of) = sort_tail(&mut self.nodes, nb) {
            let mut uids: Vec<u32> = self.nodes[nb..].iter().map(|r| r.ident).collect();
            uids.sort_unstable();
            uids.dedup();
            for u in uids {
                renumber(&mut self.node_postings[u as usize], nb, &new_of);
            }
            self.node_index.truncate(nb);
        }
        let eb = self.sealed.edges as usize;
        if let Some(new_of) = sort_tail(&mut self.edges, eb) {
            let mut ids: Vec<u32> = self.edges[eb..].iter().map(|r| r.ident).collect();
            ids.sort_unstable();
            ids.dedup();
            let mut ends: Vec<u32> = Vec::with_capacity(2 * ids.len());
            for &i in &ids {
                renumber(&mut self.edge_postings[i as usize], eb, &new_of);
                let e = &self.idents[i as usize];
                ends.extend([e.src, e.dst]);
            }
            ends.sort_unstable();
            ends.dedup();
            for u in ends {
                renumber(&mut self.out_adj[u as usize], eb, &new_of);
                renumber(&mut self.in_adj[u as usize], eb, &new_of);
            }
            self.edge_index.truncate(eb);
            self.edge_cols.truncate(eb);
            self.edge_close_gen += 1;
        }
    }

    /// Appends one segment's content. `Err(kind)` names the first inconsistency; the
    /// caller turns it into a corruption error naming the file.
    pub(crate) fn load_seg(&mut self, d: SegData) -> std::result::Result<(), CorruptionKind> {
        d.check_at(self.marks())?;
        let n_uids = self.uids.len() + d.uids.len();
        for u in &d.uids {
            self.register(u);
        }
        if self.uids.len() != n_uids {
            return Err("duplicate uid in the uid heap".into());
        }
        let n_strings = self.strings.len() + d.strings.len();
        for s in &d.strings {
            self.strings.intern(s);
        }
        if self.strings.len() != n_strings {
            return Err("duplicate string in the string heap".into());
        }
        let nu = self.uids.len() as u32;
        for c in d.contents {
            let before = self.contents.len();
            if self.content_id(c) as usize != before {
                return Err("duplicate content record".into());
            }
        }
        self.idents.reserve(d.idents.len());
        self.edge_postings.reserve(d.idents.len());
        self.ordinal_slots.reserve(d.slots.len());
        for e in d.idents {
            let key = EdgeKey {
                src: e.src,
                dst: e.dst,
                rel: e.rel,
                disc: e.disc,
            };
            let id = self.new_ident(key);
            self.idents[id as usize].mapped = e.mapped;
            if e.mapped && self.ident_map.insert(key, id).is_some() {
                return Err("duplicate edge identity".into());
            }
        }
        self.ordinal_slots.extend(d.slots);
        // Size every adjacency list once: a segment can hold millions of rows.
        let mut deg = vec![[0u32; 2]; nu as usize];
        for r in &d.edges {
            if let Some(i) = self.idents.get(r.ident as usize) {
                deg[i.src as usize][0] += 1;
                deg[i.dst as usize][1] += 1;
            }
        }
        for (u, [o, i]) in deg.into_iter().enumerate() {
            self.out_adj[u].reserve(o as usize);
            self.in_adj[u].reserve(i as usize);
        }
        // The segment's rows become the tables' tail as they are (moved, not copied, when a
        // table is empty: a full image is loaded without a second copy of its rows); then
        // each appended row is checked and indexed.
        for (kind, rows) in [(Kind::Node, d.nodes), (Kind::Edge, d.edges)] {
            let table = match kind {
                Kind::Node => &mut self.nodes,
                Kind::Edge => &mut self.edges,
            };
            let first = table.len();
            if first == 0 {
                *table = rows;
            } else {
                table.extend(rows);
            }
            for idx in first..table.len() {
                let row = match kind {
                    Kind::Node => self.nodes[idx],
                    Kind::Edge => self.edges[idx],
                };
                let idx = idx as u32;
                match kind {
                    Kind::Node => self.node_postings[row.ident as usize].push(idx),
                    Kind::Edge => {
                        self.edge_postings[row.ident as usize].push(idx);
                        let (src, rel) = {
                            let i = &self.idents[row.ident as usize];
                            self.out_adj[i.src as usize].push(idx);
                            self.in_adj[i.dst as usize].push(idx);
                            (i.src, i.rel)
                        };
                        if row.alive {
                            self.out_degree[src as usize] += 1;
                            *self.rel_counts.entry(rel).or_insert(0) += 1;
                        }
                    }
                }
            }
        }
        for (k, closes) in d.closes.iter().enumerate() {
            let rows = if k == 0 {
                &mut self.nodes
            } else {
                &mut self.edges
            };
            for c in closes {
                let Some(row) = rows.get_mut(c.row as usize) else {
                    return Err(format!("closure of row {} that does not exist", c.row).into());
                };
                if row.tt_e != OPEN_END || !row.alive || c.tt_e <= row.tt_s {
                    return Err(format!("closure of row {} is inconsistent", c.row).into());
                }
                row.tt_e = c.tt_e;
                row.closed_by = Some(c.closed_by);
                row.close_reason = c.close_reason;
            }
        }
        self.sealed = self.marks();
        Ok(())
    }

    /// After loading segments: installs the statistics the manifest recorded and checks
    /// them against what the rows imply (invariant S3 of `format-spec.md`).
    pub(crate) fn finish_load(&mut self, stats: Stats) -> std::result::Result<(), CorruptionKind> {
        let max_deg = self.out_degree.iter().copied().max().unwrap_or(0);
        let n_edges = self.edges.iter().filter(|r| r.alive).count() as u64;
        let n_nodes = self.nodes.iter().filter(|r| r.alive).count() as u64;
        if stats.max_out_degree != max_deg
            || stats.n_edge_versions != n_edges
            || stats.n_node_versions != n_nodes
            || stats.n_entities != self.uids.len() as u64
        {
            return Err(format!(
                "manifest statistics disagree with the segments (edges {} vs {n_edges}, nodes {} vs {n_nodes}, max degree {} vs {max_deg})",
                stats.n_edge_versions, stats.n_node_versions, stats.max_out_degree
            ).into());
        }
        for (&rel, &n) in &self.rel_counts {
            if stats.rel_type_counts.get(self.strings.name(rel)) != Some(&n) {
                return Err(format!(
                    "manifest statistics disagree with the segments on rel type {:?}",
                    self.strings.name(rel)
                )
                .into());
            }
        }
        if stats.rel_type_counts.len() != self.rel_counts.len() {
            return Err("manifest statistics list rel types the segments lack".into());
        }
        self.stats = stats;
        self.pending_closes.clear();
        self.sealed = self.marks();
        Ok(())
    }

    /// Marks everything as sealed (after a flush published it).
    pub(crate) fn seal(&mut self) {
        self.sealed = self.marks();
        self.pending_closes.clear();
    }
}
