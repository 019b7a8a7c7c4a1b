//! Writes over a mapped base image (`format-spec.md` §9.4): the primitives of the write
//! rules ([`Tables`]) on [`Rows`], so a writer, or a reader replaying the log after the
//! newest segment, appends to the delta above the image and never decodes the image. New
//! rows, dictionary entries and identities continue the delta's numbering; closing an image
//! row records its closure in the delta. A batch is atomic: a failed one cuts the delta back
//! to its start ([`Delta::truncate`]). A flush writes the memtable as the next segment in
//! segment order and then reloads it from that segment, so the writer's row numbers are the
//! ones every later open gives.
//!
//! [`Delta::truncate`]: crate::rows::delta::Delta::truncate

use crate::apply::{self, Ctx, EdgeKey, Tables, Trace};
use crate::error::{CorruptionKind, Result};
use crate::model::{
    closure_of, open_row, permute_from, Content, IdentPart, IdentRec, Row, SegData, NONE,
};
use crate::model::{Dict, PerTable, Table};
use crate::op::Op;
use crate::rows::interner::NOT_FOUND;
use crate::rows::Rows;
use crate::time::OPEN_END;

impl Rows {
    /// The delta's dictionary `k` and the id of its first entry.
    fn names(&mut self, k: Dict) -> (&mut crate::rows::interner::Interner, u32) {
        let d = &mut self.delta;
        match k {
            Dict::Uids => (&mut d.uids, d.base.uids as u32),
            Dict::Strings => (&mut d.strings, d.base.strings as u32),
        }
    }

    /// A writer's lookup of name `s` in dictionary `k`: the image's through its hash table
    /// (`Base::find_hashed`), then the delta's.
    fn find_name(&self, k: Dict, s: &str) -> Option<u32> {
        self.base.find_hashed(k, s).or_else(|| {
            let d = &self.delta;
            let (names, first) = match k {
                Dict::Uids => (&d.uids, d.base.uids),
                Dict::Strings => (&d.strings, d.base.strings),
            };
            names.get(s).map(|j| j + first as u32)
        })
    }

    /// [`Rows::find_name`] of each of `names` in the uid dictionary, in order, into `out`
    /// ([`NOT_FOUND`] for a name that is in neither), the delta's reads overlapped
    /// ([`Interner::get_many`]).
    ///
    /// [`Interner::get_many`]: crate::rows::interner::Interner::get_many
    pub(crate) fn find_uids<'a>(
        &self,
        names: impl Iterator<Item = &'a str> + Clone,
        out: &mut Vec<u32>,
    ) {
        let first = self.delta.base.uids as u32;
        self.delta.uids.get_many(names.clone(), out);
        for (o, s) in out.iter_mut().zip(names) {
            if *o != NOT_FOUND {
                *o += first;
            } else if first > 0 {
                *o = self.base.find_hashed(Dict::Uids, s).unwrap_or(NOT_FOUND);
            }
        }
    }

    /// [`Rows::find_name`], adding `s` to the delta when it is new.
    fn add_name(&mut self, k: Dict, s: &str) -> u32 {
        match self.base.find_hashed(k, s) {
            Some(id) => id,
            None => {
                let (names, first) = self.names(k);
                first + names.intern(s)
            }
        }
    }
}

impl Tables for Rows {
    fn register(&mut self, uid: &str) -> u32 {
        self.add_name(Dict::Uids, uid)
    }

    fn uid_id(&self, uid: &str) -> Option<u32> {
        self.find_name(Dict::Uids, uid)
    }

    fn uid_name(&self, id: u32) -> &str {
        Rows::uid_name(self, id)
    }

    fn intern(&mut self, s: &str) -> u32 {
        self.add_name(Dict::Strings, s)
    }

    fn string_id(&self, s: &str) -> Option<u32> {
        self.find_name(Dict::Strings, s)
    }

    fn string(&self, id: u32) -> &str {
        Rows::string(self, id)
    }

    fn content_id(&mut self, c: Content) -> u32 {
        if let Some(&id) = self.delta.content_ids.get(&c) {
            return id;
        }
        if let Some(id) = self.base.find_content(c) {
            return id;
        }
        let id = self.delta.base.contents as u32 + self.delta.contents.len() as u32;
        self.delta.contents.push(c);
        self.delta.content_ids.insert(c, id);
        id
    }

    fn content(&self, id: u32) -> Content {
        Rows::content(self, id)
    }

    fn find_ident(&self, key: EdgeKey) -> Option<u32> {
        Rows::find_ident(self, key.src, key.dst, key.rel, key.disc)
    }

    fn find_mapped(&self, key: EdgeKey) -> Option<u32> {
        let (s, d, r, x) = (key.src, key.dst, key.rel, key.disc);
        self.base
            .find_mapped_ident(s, d, r, x)
            .or_else(|| self.delta.find_mapped_ident(s, d, r, x))
    }

    fn new_ident(&mut self, key: EdgeKey, mapped: bool) -> u32 {
        let id = self.delta.base.idents as u32 + self.delta.idents.len() as u32;
        self.delta.push_ident(IdentRec {
            src: key.src,
            dst: key.dst,
            rel: key.rel,
            disc: key.disc,
            mapped,
        });
        if mapped {
            self.delta
                .mapped
                .insert((key.src, key.dst, key.rel, key.disc), id);
        }
        id
    }

    fn set_slot(&mut self, k: u64, id: u32) {
        // Ordinals only grow, and the image's slots end at or below its ordinal counter, so
        // an ordinal below them is never set again (its slot stays as the image has it).
        let Some(i) = k.checked_sub(self.delta.base.slots) else {
            return;
        };
        let i = i as usize;
        let slots = &mut self.delta.slots;
        if slots.len() <= i {
            slots.resize(i + 1, NONE);
        }
        if slots[i] == NONE {
            slots[i] = id;
        }
    }

    fn row(&self, kind: Table, r: u32) -> Row {
        Rows::row(self, kind, r)
    }

    fn postings(&self, kind: Table, ident: u32) -> Vec<u32> {
        match kind {
            Table::Nodes => self.node_postings(ident),
            Table::Edges => self.edge_postings(ident),
        }
    }

    /// Two fields of each row (`alive`, `tt_e`) instead of the whole row the default
    /// decodes from the image's columns.
    fn has_believed_node(&self, uid: u32) -> bool {
        self.node_postings(uid).into_iter().any(|r| {
            self.row_alive(Table::Nodes, r) && self.row_close(Table::Nodes, r).0 == OPEN_END
        })
    }

    fn supersede(&mut self, kind: Table, r: u32, cx: Ctx) {
        let k = kind;
        let is_edge = kind == Table::Edges;
        let d = &mut self.delta;
        match r.checked_sub(d.n_base(k)) {
            // An image row is of an earlier batch.
            None => {
                d.closed[k].insert(r, (cx.tt, Some(cx.kind), cx.reason));
                if is_edge {
                    d.close_image_edge(&self.base, r, cx.tt);
                }
                d.batch_closes.push((is_edge, r));
            }
            Some(j) => {
                let row = &mut d.rows[k][j as usize];
                if row.tt_s != cx.tt {
                    (row.tt_e, row.closed_by, row.close_reason) = (cx.tt, Some(cx.kind), cx.reason);
                    d.batch_closes.push((is_edge, r));
                } else {
                    // A row of this batch: it never existed (the batch's truncation on
                    // failure removes it either way).
                    row.alive = false;
                }
                d.close_gen += 1;
            }
        }
    }

    fn insert(&mut self, kind: Table, ident: u32, content: u32, s: i64, e: i64, cx: Ctx) {
        let row = cx.row(ident, content, s, e);
        let ends = match kind {
            Table::Nodes => (0, 0),
            Table::Edges => (
                self.ident_part(ident, IdentPart::Src),
                self.ident_part(ident, IdentPart::Dst),
            ),
        };
        self.delta.push_row(kind, row, ends);
    }

    fn ordinal(&mut self) -> &mut u64 {
        &mut self.stats.ingest_ordinal
    }

    fn trace(&mut self) -> Option<&mut Trace> {
        self.trace.as_mut()
    }
}

impl Rows {
    /// Applies one batch at `tt` (the write rules of `apply.rs`); on error the delta is cut back
    /// to where the batch began. `paranoid` re-checks invariant I1 for what it touched.
    pub(crate) fn apply_batch(&mut self, tt: i64, ops: &[Op], paranoid: bool) -> Result<()> {
        let start = self.delta.end();
        let ordinal = self.stats.ingest_ordinal;
        self.delta.batch_closes.clear();
        let mut result = ops.iter().try_for_each(|op| apply::apply_op(self, tt, op));
        if result.is_ok() && paranoid {
            let touched: Vec<(Table, u32)> = Table::BOTH
                .into_iter()
                .flat_map(|kind| {
                    let n = start.rows(kind) - self.delta.base_rows(kind);
                    self.delta.rows[kind][n as usize..]
                        .iter()
                        .map(move |r| (kind, r.ident))
                })
                .collect();
            result = apply::check_disjoint(self, touched, |i| crate::canon::hex(&self.eid(i)));
        }
        self.stats.n_batches += 1;
        self.stats.first_tt.get_or_insert(tt);
        self.stats.last_tt = Some(tt);
        match result {
            Ok(()) => {
                self.commit_stats(start);
                Ok(())
            }
            Err(e) => {
                let closes = std::mem::take(&mut self.delta.batch_closes);
                self.delta.truncate(start, &closes);
                self.stats.ingest_ordinal = ordinal;
                self.stats.n_failed_batches += 1;
                Err(e)
            }
        }
    }

    /// Folds a committed batch (everything above `start`) into the statistics (§11) and
    /// the pending close run; O(batch size), plus each newly touched source's degree once.
    fn commit_stats(&mut self, start: crate::model::Marks) {
        let sealed = [self.delta.sealed.nodes, self.delta.sealed.edges];
        for c in std::mem::take(&mut self.delta.batch_closes) {
            if u64::from(c.1) < sealed[usize::from(c.0)] {
                self.delta.pending.push(c);
            }
        }
        self.stats.n_entities = self.delta.end().uids;
        let first = |k: Table, at: u64| (at - self.delta.base_rows(k)) as usize;
        self.stats.n_node_versions += self.delta.rows[Table::Nodes]
            [first(Table::Nodes, start.nodes)..]
            .iter()
            .filter(|r| r.alive)
            .count() as u64;
        let from = first(Table::Edges, start.edges);
        // Counted by rel id, named once per rel type after the loop (not a string per row).
        let mut per_rel: rustc_hash::FxHashMap<u32, u64> = Default::default();
        for j in from..self.delta.rows[Table::Edges].len() {
            let r = self.delta.rows[Table::Edges][j];
            if !r.alive {
                continue;
            }
            self.stats.count_edge_version(r.vt_s, r.vt_e);
            let (src, rel) = (
                self.ident_part(r.ident, IdentPart::Src),
                self.ident_part(r.ident, IdentPart::Rel),
            );
            *per_rel.entry(rel).or_insert(0) += 1;
            let d = match self.delta.degree.get(&src) {
                Some(&d) => d,
                None => self.out_degree_below(src, start.edges as u32),
            } + 1;
            self.delta.degree.insert(src, d);
            self.stats.max_out_degree = self.stats.max_out_degree.max(d);
        }
        for (rel, n) in per_rel {
            let rel = self.string(rel).to_string();
            *self.stats.rel_type_counts.entry(rel).or_insert(0) += n;
        }
    }

    /// Alive edge rows below row `limit` with source `uid`.
    fn out_degree_below(&self, uid: u32, limit: u32) -> u64 {
        self.adjacency(uid, true)
            .into_iter()
            .filter(|&r| r < limit && self.row_alive(Table::Edges, r))
            .count() as u64
    }

    /// Rows added and sealed rows closed since the last flush.
    pub(crate) fn memtable_rows(&self) -> u64 {
        let (m, s) = (self.delta.end(), self.delta.sealed);
        (m.nodes - s.nodes) + (m.edges - s.edges) + self.delta.pending.len() as u64
    }

    /// The next flush segment: everything at or above the sealed marks, the rows in segment
    /// order (`format-spec.md` §6.1) with their closures renumbered to match, and the
    /// pending close run of sealed rows.
    pub(crate) fn flush_data(&self) -> SegData {
        let d = &self.delta;
        let (from, b) = (d.sealed, d.base);
        let at = |x: u64, y: u64| (x - y) as usize;
        let mut closes: PerTable<Vec<_>> = PerTable::default();
        for &(is_edge, r) in &d.pending {
            let k = Table::of(is_edge);
            closes[k].extend(closure_of(r, &self.row(k, r)));
        }
        let mut rows: PerTable<Vec<Row>> = PerTable::default();
        for k in Table::BOTH {
            let (f, nb) = (from.rows(k), b.rows(k));
            for (j, r) in d.rows[k].iter().enumerate().skip(at(f, nb)) {
                closes[k].extend(closure_of((nb as usize + j) as u32, r));
                rows[k].push(open_row(r));
            }
            closes[k].sort_unstable_by_key(|c| c.row);
            permute_from(&mut rows[k], &mut closes[k], f as u32);
        }
        let PerTable { nodes, edges } = rows;
        SegData {
            base: from,
            uids: d.uids.names[at(from.uids, b.uids)..]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            strings: d.strings.names[at(from.strings, b.strings)..]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            contents: d.contents[at(from.contents, b.contents)..].to_vec(),
            idents: d.idents[at(from.idents, b.idents)..].to_vec(),
            slots: d.slots[at(from.slots, b.slots)..].to_vec(),
            nodes,
            edges,
            closes,
        }
    }

    /// After `data` (from [`Rows::flush_data`]) was published: the memtable is replaced by
    /// the segment's content, so rows take the numbers the segment gives them.
    pub(crate) fn reseal(&mut self, data: SegData) -> std::result::Result<(), CorruptionKind> {
        let pending = std::mem::take(&mut self.delta.pending);
        self.delta.truncate(self.delta.sealed, &pending);
        self.delta.load(data, &self.base)
    }
}
