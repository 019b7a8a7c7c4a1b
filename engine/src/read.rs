//! The read API of `design.md` §3: a [`Snapshot`] pins the store state and answers
//! `versions_of`, `edge_scan`, `out_edges` / `in_edges`, `nodes_valid_at` and `stats`.
//! Row views derive `eid` / `vid` hex on output; nothing is stored as hex.
//!
//! Every call is served from one of two sources (`Src`): a store's base image alone, read
//! through its index chunks (point reads) and zone-pruned block scans (`rows/mapscan.rs`), never
//! decoded into memory; or that image with the delta above it (`rows.rs`, `rows/delta.rs`: the
//! decoded flush segments and the memtable, whose window reads go through the valid-time
//! indexes of `rows/tindex.rs`). A store without an image file reads over the image of no rows.
//! Both give the same answers.

use crate::canon;
use crate::format::base::{Base, BlockCols};
use crate::ident::{self, Id12};
use crate::model::{ordinal_of, Content, Disc, IdentPart, IdentRec, Row, Stats, Table, NONE};
use crate::op::Origin;
use crate::rows::mapscan;
use crate::rows::mapscan::Image;
use crate::rows::rowscan::{believed_at, Starts};
use crate::rows::Rows;
use crate::time::{clamp_tt, overlaps};
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;

mod digest;
mod src;
mod starts;
mod version;

pub(crate) use src::Src;
pub use starts::{EdgeSpan, StartEvent};
pub use version::{EdgeVersion, NodeVersion, Version};

#[cfg(test)]
mod tests;

/// A node or edge identity as callers name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Identity {
    /// A node, by its uid.
    Node(String),
    /// An edge, by the four parts its eid is derived from.
    Edge {
        /// Uid of the source endpoint.
        src: String,
        /// Uid of the destination endpoint.
        dst: String,
        /// The edge's relationship type.
        rel_type: String,
        /// The discriminator: `""` by default, `#k` for an ingested event without one.
        disc: String,
    },
}

/// How an edge must touch the incidence set of an [`EdgeScan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// src or dst in the set.
    Either,
    /// src and dst in the set.
    Both,
}

/// The arguments of the logical edge scan (`data-model.md` §5).
#[derive(Clone, Debug)]
pub struct EdgeScan<'s> {
    /// Transaction time of the read, µs: versions believed then (`tt_s <= as_of_tt < tt_e`;
    /// values from `OPEN_END` on read as `OPEN_END - 1`).
    pub as_of_tt: i64,
    /// Half-open valid-time window the versions must overlap.
    pub vt_window: Option<(i64, i64)>,
    /// Only edges of these rel types, when given (unknown types match nothing).
    pub rel_types: Option<&'s [String]>,
    /// Only edges whose endpoints touch these uids as `Touch` says, when given (unknown uids
    /// are ignored).
    pub touching: Option<(&'s [String], Touch)>,
}

impl EdgeScan<'_> {
    /// Every edge believed at `as_of_tt`.
    pub fn all(as_of_tt: i64) -> Self {
        EdgeScan {
            as_of_tt,
            vt_window: None,
            rel_types: None,
            touching: None,
        }
    }
}

/// A read view of the store at the time it was taken.
#[derive(Clone, Copy)]
pub struct Snapshot<'a> {
    pub(crate) db: &'a Rows,
    /// The process-unique number of the store handle it reads ([`Snapshot::state_token`]).
    pub(crate) instance: u64,
}

impl<'a> Snapshot<'a> {
    /// Where reads look: the image alone when nothing lies above it, else the image and the
    /// delta.
    fn src(&self) -> Src<'a> {
        let l = self.db;
        if l.delta.is_empty() {
            Src::Map(&l.base)
        } else {
            Src::Over(l)
        }
    }

    /// Statistics maintained at commit (O(1)).
    pub fn stats(&self) -> &'a Stats {
        &self.db.stats
    }

    /// A token naming the state this snapshot reads, unique within the process: the store
    /// handle's process-unique number and its count of batches (committed and failed). Every
    /// change of a store's rows is a batch, so equal tokens read equal rows; flushes and
    /// compactions rewrite files, not rows, and keep the token. Caches of results computed
    /// on a snapshot key on it (`operators/src/page_cache.rs`).
    pub fn state_token(&self) -> (u64, u64, u64) {
        let st = self.stats();
        (self.instance, st.n_batches, st.n_failed_batches)
    }

    /// True when `uid` was ever registered.
    pub fn has_uid(&self, uid: &str) -> bool {
        self.src().uid_id(uid).is_some()
    }

    /// Versions of one identity believed at `as_of_tt`, ordered by `vt_s`. O(its versions).
    pub fn versions_of(&self, id: &Identity, as_of_tt: i64) -> Vec<Version<'a>> {
        self.history_of(id)
            .into_iter()
            .filter(|v| believed_at(&v.row(), as_of_tt))
            .collect()
    }

    /// Every stored version of one identity (believed and closed), ordered by
    /// `(tt_s, vt_s)`. O(its versions).
    pub fn history_of(&self, id: &Identity) -> Vec<Version<'a>> {
        let src = self.src();
        let mut out: Vec<Version<'a>> = match id {
            Identity::Node(uid) => match src.uid_id(uid) {
                None => Vec::new(),
                Some(u) => src
                    .node_postings(u)
                    .iter()
                    .filter(|&&r| src.row_alive(Table::Nodes, r))
                    .map(|&r| Version::Node(NodeVersion { src, idx: r }))
                    .collect(),
            },
            Identity::Edge {
                src: s,
                dst,
                rel_type,
                disc,
            } => match src.lookup_edge(s, dst, rel_type, disc) {
                None => Vec::new(),
                Some(i) => src
                    .edge_postings(i)
                    .iter()
                    .filter(|&&r| src.row_alive(Table::Edges, r))
                    .map(|&r| Version::Edge(EdgeVersion { src, idx: r }))
                    .collect(),
            },
        };
        out.sort_by_cached_key(|v| {
            let r = v.row();
            (r.tt_s, r.vt_s)
        });
        out
    }

    /// Every stored edge row (believed and closed) with `src` or `dst` = `uid`, ordered by
    /// `(tt_s, vt_s, vid)`. O(degree of uid).
    pub fn edge_history_touching(&self, uid: &str) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        let Some(u) = src.uid_id(uid) else {
            return Vec::new();
        };
        let mut idx: Vec<u32> = src
            .adjacency(u, true)
            .iter()
            .chain(src.adjacency(u, false).iter())
            .copied()
            .filter(|&i| src.row_alive(Table::Edges, i))
            .collect();
        idx.sort_unstable();
        idx.dedup();
        let mut out: Vec<EdgeVersion<'a>> = idx
            .into_iter()
            .map(|i| EdgeVersion { src, idx: i })
            .collect();
        out.sort_by_cached_key(|e| (e.tt_s(), e.vt_s(), e.vid()));
        out
    }

    /// Believed edge versions matching the scan, ordered by `(vt_s, eid)`.
    pub fn edge_scan(&self, scan: &EdgeScan) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        let rels: Option<Vec<u32>> = scan
            .rel_types
            .map(|rs| rs.iter().filter_map(|r| src.string_id(r)).collect());
        let rel_ok = |i: u32| {
            rels.as_ref().is_none_or(|rs| {
                rs.contains(&src.ident_part(src.row_ident(Table::Edges, i), IdentPart::Rel))
            })
        };
        // The window is tested on the valid interval first: a mapped row's belief columns
        // are read only when it can be in the answer.
        let keep = |i: u32| {
            let (s, e) = src.row_vt(Table::Edges, i);
            scan.vt_window.is_none_or(|(a, b)| overlaps(s, e, a, b))
                && src.believed(Table::Edges, i, scan.as_of_tt)
                && rel_ok(i)
        };
        let idx: Vec<u32> = match scan.touching {
            None => self.overlapping_edge_rows(scan.vt_window, scan.as_of_tt, rels.as_deref()),
            Some((uids, mode)) => {
                let set = src.uid_set(uids);
                let member = |u: u32| set.binary_search(&u).is_ok();
                let mut v: Vec<u32> = Vec::new();
                for &u in &set {
                    // Each row is in the out-list of its one source: no duplicates.
                    v.extend(src.adjacency(u, true).iter().copied().filter(|&i| {
                        (mode == Touch::Either
                            || member(
                                src.ident_part(src.row_ident(Table::Edges, i), IdentPart::Dst),
                            ))
                            && keep(i)
                    }));
                    if mode == Touch::Either {
                        v.extend(src.adjacency(u, false).iter().copied().filter(|&i| keep(i)));
                    }
                }
                if mode == Touch::Either {
                    v.sort_unstable();
                    v.dedup();
                }
                v
            }
        };
        src.sorted_edges(idx)
    }

    /// The edge rows believed at `as_of_tt` that overlap `window` (all with `None`) and,
    /// with `rels`, have one of those relationship-type string ids; in no fixed order.
    fn overlapping_edge_rows(
        &self,
        window: Option<(i64, i64)>,
        as_of_tt: i64,
        rels: Option<&[u32]>,
    ) -> Vec<u32> {
        match self.src() {
            Src::Map(b) => mapscan::overlapping(b, Table::Edges, window, as_of_tt, rels),
            Src::Over(o) => o.window_ids(Table::Edges, window, as_of_tt, rels),
        }
    }

    /// The believed edge versions overlapping `window` (all with `None`) as spans: their
    /// endpoints' snapshot-local uid ids and valid interval, in the row order of the store
    /// (deterministic, but not the `(vt_s, eid)` order of [`Snapshot::edge_scan`]). For
    /// passes that neither order nor name versions: no eid is derived, nothing is sorted and
    /// each row's columns are read once.
    pub fn edge_spans(&self, window: Option<(i64, i64)>, as_of_tt: i64) -> Vec<EdgeSpan> {
        let src = self.src();
        if let Src::Map(b) = src {
            // Interval and identity read from each zone's sequential decode; `src` carries
            // the identity until the endpoints are looked up, a piece at a time (identities
            // are mostly dense in row order, so a piece's are decoded as one range).
            let mut spans = mapscan::overlapping_map(
                b,
                Table::Edges,
                window,
                as_of_tt,
                None,
                true,
                |_, k, j| EdgeSpan {
                    src: k.ident[j],
                    dst: 0,
                    vt_s: k.vt_s[j],
                    vt_e: k.vt_e[j],
                },
            );
            spans.par_chunks_mut(starts::EVENT_CHUNK).for_each(|c| {
                let ids: Vec<u32> = c.iter().map(|e| e.src).collect();
                let (s, d) = starts::endpoints(src, &ids);
                for (k, e) in c.iter_mut().enumerate() {
                    e.src = s[k];
                    e.dst = d[k];
                }
            });
            return spans;
        }
        self.overlapping_edge_rows(window, as_of_tt, None)
            .par_iter()
            .with_min_len(4096)
            .map(|&i| {
                let ident = src.row_ident(Table::Edges, i);
                let (vt_s, vt_e) = src.row_vt(Table::Edges, i);
                EdgeSpan {
                    src: src.ident_part(ident, IdentPart::Src),
                    dst: src.ident_part(ident, IdentPart::Dst),
                    vt_s,
                    vt_e,
                }
            })
            .collect()
    }

    fn adjacent(
        &self,
        out: bool,
        uid: &str,
        w: Option<(i64, i64)>,
        as_of: i64,
    ) -> Vec<EdgeVersion<'a>> {
        match self.src().uid_id(uid) {
            Some(u) => self.adjacent_id(out, u, w, as_of),
            None => Vec::new(),
        }
    }

    fn adjacent_id(
        &self,
        out: bool,
        u: u32,
        w: Option<(i64, i64)>,
        as_of: i64,
    ) -> Vec<EdgeVersion<'a>> {
        if u as usize >= self.uid_ids() {
            return Vec::new();
        }
        let src = self.src();
        // The window is tested on the valid interval first: a mapped row's belief columns
        // are read only when it can be in the answer, and its `vt_s` is kept as sort key.
        let keyed: Vec<(i64, u32)> = src
            .adjacency(u, out)
            .iter()
            .filter_map(|&i| {
                let (s, e) = src.row_vt(Table::Edges, i);
                (w.is_none_or(|(a, b)| overlaps(s, e, a, b))
                    && src.believed(Table::Edges, i, as_of))
                .then_some((s, i))
            })
            .collect();
        src.sorted_pairs(keyed)
    }

    /// Believed edges leaving `uid` that overlap the window, ordered by `(vt_s, eid)`.
    pub fn out_edges(
        &self,
        uid: &str,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        self.adjacent(true, uid, vt_window, as_of_tt)
    }

    /// [`Snapshot::out_edges`] of the uid with snapshot-local id `uid_id` (see
    /// [`Snapshot::uid_id`]); empty for an id no uid has.
    pub fn out_edges_of(
        &self,
        uid_id: u32,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        self.adjacent_id(true, uid_id, vt_window, as_of_tt)
    }

    /// Believed edges entering `uid` that overlap the window, ordered by `(vt_s, eid)`.
    pub fn in_edges(
        &self,
        uid: &str,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        self.adjacent(false, uid, vt_window, as_of_tt)
    }

    /// Node versions believed at `as_of_tt` and valid at `t`, ordered by uid.
    pub fn nodes_valid_at(&self, t: i64, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let mut out = self.node_scan(Some((t, t.saturating_add(1))), as_of_tt);
        // One believed version per uid is valid at `t` (I1), so the order is total.
        out.sort_by(|a, b| a.uid().cmp(b.uid()));
        out
    }

    /// Every stored node row in digest order `(uid, tt_s, vt_s, vid)`.
    pub fn all_nodes(&self) -> Vec<NodeVersion<'a>> {
        match self.src() {
            Src::Map(b) => mapscan::node_digest_order(b)
                .into_iter()
                .map(|i| NodeVersion {
                    src: Src::Map(b),
                    idx: i,
                })
                .collect(),
            Src::Over(o) => {
                let mut idx: Vec<u32> = (0..o.n_rows(Table::Nodes) as u32)
                    .filter(|&i| o.row_alive(Table::Nodes, i))
                    .collect();
                idx.sort_by_cached_key(|&i| {
                    let (vt_s, tt_s) = (o.row_vt(Table::Nodes, i).0, o.row_tt_s(Table::Nodes, i));
                    (o.uid_name(o.row_ident(Table::Nodes, i)), tt_s, vt_s)
                });
                idx.into_iter()
                    .map(|i| NodeVersion {
                        src: Src::Over(o),
                        idx: i,
                    })
                    .collect()
            }
        }
    }

    /// Every stored edge row in digest order `(eid, tt_s, vt_s, vid)`: the identities a
    /// bounded group at a time in eid order, each group's rows read in storage order
    /// (`read/digest.rs`).
    pub fn all_edges(&self) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        let mut out = Vec::with_capacity(self.edge_positions());
        src.digest_groups(|g| {
            let (_, rows) = digest::group_rows(src, g);
            out.extend(
                rows.into_iter()
                    .map(|(_, i, _)| EdgeVersion { src, idx: i }),
            )
        });
        out
    }
}

/// Cap on the bucket count of [`Snapshot::edge_start_counts`] (one counter per bucket and
/// work unit).
pub const MAX_COUNT_BUCKETS: usize = 1 << 16;

impl<'a> Snapshot<'a> {
    /// Node versions believed at `as_of_tt` whose valid interval starts or ends inside
    /// `(lo, hi]` (`lo < vt_s <= hi` or `lo < vt_e <= hi`), in storage order.
    /// O(log n + boundary rows) through the valid-time index.
    pub fn node_boundaries(&self, lo: i64, hi: i64, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let src = self.src();
        src.boundary_ids(Table::Nodes, lo, hi, as_of_tt)
            .into_iter()
            .map(|i| NodeVersion { src, idx: i })
            .collect()
    }

    /// Edge versions believed at `as_of_tt` whose valid interval starts or ends inside
    /// `(lo, hi]`, in storage order. O(log n + boundary rows) through the valid-time index.
    pub fn edge_boundaries(&self, lo: i64, hi: i64, as_of_tt: i64) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        src.boundary_ids(Table::Edges, lo, hi, as_of_tt)
            .into_iter()
            .map(|i| EdgeVersion { src, idx: i })
            .collect()
    }

    /// Edge versions believed at `as_of_tt` with `t_a <= vt_s < t_b`, in storage order.
    /// O(log n + rows starting in the window) through the valid-time index.
    pub fn edge_starts(
        &self,
        t_a: i64,
        t_b: i64,
        as_of_tt: i64,
    ) -> impl Iterator<Item = EdgeVersion<'a>> + 'a {
        self.edge_starts_list(t_a, t_b, as_of_tt).into_iter()
    }

    /// [`Snapshot::edge_starts`] as a list, gathered in parallel.
    pub fn edge_starts_list(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        self.edge_start_positions(t_a, t_b, as_of_tt)
            .into_iter()
            .map(|i| EdgeVersion { src, idx: i })
            .collect()
    }

    /// The storage positions of [`Snapshot::edge_starts`] (ascending; 4 bytes per version,
    /// for callers that keep large event lists compact). See [`Snapshot::edge_at`].
    pub fn edge_start_positions(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<u32> {
        self.edge_start_query(t_a, t_b, as_of_tt).ids()
    }

    /// [`Snapshot::edge_start_positions`] as maximal runs of consecutive positions
    /// (ascending, non-empty, separated by at least one position); their concatenation is
    /// that list. A window covering the table at the current belief state is a few long runs
    /// (gaps at the unbelieved rows), found without a per-version list.
    pub fn edge_start_runs(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<Range<u32>> {
        self.edge_start_query(t_a, t_b, as_of_tt).runs()
    }

    fn edge_start_query(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Starts {
        Starts::Runs(match self.src() {
            Src::Map(b) => mapscan::start_runs(b, t_a, t_b, as_of_tt),
            Src::Over(o) => o.start_runs(t_a, t_b, as_of_tt),
        })
    }

    /// Compact columns (`vt_s`, rel, src, dst) of the edge rows at storage positions
    /// `[0, covered())`, shared and built on first use; positions above are read with
    /// [`Snapshot::edge_at`]. Belief is not in them: pair with
    /// [`Snapshot::edge_start_positions`] or another belief-checked read.
    pub fn edge_columns(&self) -> std::sync::Arc<crate::rows::cols::EdgeColumns> {
        match self.src() {
            Src::Map(b) => mapscan::edge_columns(b),
            Src::Over(o) => mapscan::edge_columns(&o.base),
        }
    }

    /// The edge version at storage position `pos`, `None` when `pos >= edge_positions()`.
    pub fn edge_at(&self, pos: u32) -> Option<EdgeVersion<'a>> {
        let src = self.src();
        ((pos as usize) < self.edge_positions()).then_some(EdgeVersion { src, idx: pos })
    }

    /// The name of rel-type id `id` (as [`EdgeVersion::rel_id`] and
    /// [`crate::EdgeColumns::rel`] number them).
    pub fn rel_type_name(&self, id: u32) -> &'a str {
        self.src().string(id)
    }

    /// The node version at storage position `pos`, `None` when `pos >= node_positions()`.
    pub fn node_at(&self, pos: u32) -> Option<NodeVersion<'a>> {
        let src = self.src();
        ((pos as usize) < self.node_positions()).then_some(NodeVersion { src, idx: pos })
    }

    /// The number of storage positions of edge rows: the index space of
    /// [`Snapshot::edge_starts_in`] and [`Snapshot::edges_stored_in`].
    pub fn edge_positions(&self) -> usize {
        self.positions(Table::Edges)
    }

    /// The number of storage positions of node rows: the index space of
    /// [`Snapshot::nodes_stored_in`].
    pub fn node_positions(&self) -> usize {
        self.positions(Table::Nodes)
    }

    /// Storage positions of table `k`, stored rows and the dead rows of
    /// failed batches alike.
    fn positions(&self, k: Table) -> usize {
        match self.src() {
            Src::Map(b) => b.n_rows(k),
            Src::Over(o) => o.n_rows(k),
        }
    }

    /// The positions of `pos` (clamped to `0..positions(k)`) that hold a stored row.
    fn stored_in(&self, k: Table, pos: Range<usize>) -> impl Iterator<Item = u32> + 'a {
        let src = self.src();
        let start = pos.start.min(self.positions(k));
        let end = pos.end.clamp(start, self.positions(k));
        (start as u32..end as u32).filter(move |&i| src.row_alive(k, i))
    }

    /// The node versions stored at storage positions `pos`, believed and closed alike, in
    /// position order: for partitioned scans of every stored row (`tgms sql`). Over
    /// consecutive ranges covering `0..node_positions()` they are the rows of
    /// [`Snapshot::all_nodes`], in storage order instead of digest order.
    pub fn nodes_stored_in(&self, pos: Range<usize>) -> impl Iterator<Item = NodeVersion<'a>> + 'a {
        let src = self.src();
        self.stored_in(Table::Nodes, pos)
            .map(move |idx| NodeVersion { src, idx })
    }

    /// The times of the rows of table `k` at storage positions `pos`
    /// (clamped), each column decoded in one sequential pass where the rows are mapped:
    /// the unit of a columnar scan (`tgms sql`), which reads the other fields of the rows
    /// it keeps only. `stored` and `tt_e` are always decoded, the other times where `cols`
    /// asks for them (they are empty otherwise).
    pub fn row_times(&self, k: Table, pos: Range<usize>, cols: TimeCols) -> RowTimes {
        let start = pos.start.min(self.positions(k));
        let end = pos.end.clamp(start, self.positions(k));
        let mut t = RowTimes::default();
        let base_block = |b: &Base, a: usize, e: usize, t: &mut RowTimes| {
            // `as_of` i64::MIN decodes `tt_s` whatever the rows' transaction times; i64::MAX
            // leaves it out (no row starts after it).
            let as_of = if cols.tt_s { i64::MIN } else { i64::MAX };
            let want = BlockCols {
                vt_s: cols.vt_s,
                vt_e: cols.vt_e,
                ident: false,
            };
            let blk = b.row_block(k, a, e, as_of, want);
            let n = blk.tt_e.len();
            t.stored
                .extend((0..n).map(|j| blk.alive.get(j).is_none_or(|&x| x)));
            if cols.vt_s {
                t.vt_s.extend(blk.vt_s);
            }
            t.vt_e.extend(blk.vt_e);
            t.tt_s.extend(blk.tt_s);
            t.tt_e.extend(blk.tt_e);
        };
        let rows = |rows: &[Row], t: &mut RowTimes| {
            for r in rows {
                t.stored.push(r.alive);
                t.tt_e.push(r.tt_e);
            }
            let col = |on: bool, v: &mut Vec<i64>, f: fn(&Row) -> i64| {
                if on {
                    v.extend(rows.iter().map(f));
                }
            };
            col(cols.vt_s, &mut t.vt_s, |r| r.vt_s);
            col(cols.vt_e, &mut t.vt_e, |r| r.vt_e);
            col(cols.tt_s, &mut t.tt_s, |r| r.tt_s);
        };
        match self.src() {
            Src::Map(b) => base_block(b, start, end, &mut t),
            Src::Over(o) => {
                let (mid, above) = split_at_image(o, k, start, end);
                base_block(&o.base, start, mid, &mut t);
                // Image rows that a flush segment closed since.
                for (i, tt_e) in o.closed_since(k, start..mid) {
                    t.tt_e[i - start] = tt_e;
                }
                rows(above, &mut t);
            }
        }
        t
    }

    /// The props text (canonical JSON) of the rows of table `k` at storage positions `pos`
    /// (clamped; index `j` is position `start + j`), the image's content ids decoded in one
    /// sequential pass, as [`Snapshot::row_times`] does for the times. Rows that share a
    /// content share the `&str`.
    pub fn row_props(&self, k: Table, pos: Range<usize>) -> Vec<&'a str> {
        let start = pos.start.min(self.positions(k));
        let end = pos.end.clamp(start, self.positions(k));
        let src = self.src();
        let ids: Vec<u32> = match src {
            Src::Map(b) => b.row_content_range(k, start, end),
            Src::Over(o) => {
                let (mid, above) = split_at_image(o, k, start, end);
                let mut v = o.base.row_content_range(k, start, mid);
                v.extend(above.iter().map(|r| r.content));
                v
            }
        };
        // Neighbouring rows mostly share a content: its props are looked up once.
        let mut last: Option<(u32, &'a str)> = None;
        ids.into_iter()
            .map(|c| match last {
                Some((lc, p)) if lc == c => p,
                _ => {
                    let p = src.string(src.content(c).props);
                    last = Some((c, p));
                    p
                }
            })
            .collect()
    }

    /// The edge versions stored at storage positions `pos`, as
    /// [`Snapshot::nodes_stored_in`] for edges ([`Snapshot::all_edges`] in storage order).
    pub fn edges_stored_in(&self, pos: Range<usize>) -> impl Iterator<Item = EdgeVersion<'a>> + 'a {
        let src = self.src();
        self.stored_in(Table::Edges, pos)
            .map(move |idx| EdgeVersion { src, idx })
    }

    /// [`Snapshot::edge_starts`] restricted to the storage positions `pos`, for partitioned
    /// (parallel) scans: the concatenation over consecutive ranges covering
    /// `0..edge_positions()` is exactly `edge_starts`. Scans the positions (no index).
    pub fn edge_starts_in(
        &self,
        t_a: i64,
        t_b: i64,
        as_of_tt: i64,
        pos: std::ops::Range<usize>,
    ) -> impl Iterator<Item = EdgeVersion<'a>> + 'a {
        let src = self.src();
        let start = pos.start.min(self.edge_positions());
        let end = pos.end.clamp(start, self.edge_positions());
        (start as u32..end as u32).filter_map(move |i| {
            let vt_s = src.row_vt(Table::Edges, i).0;
            (t_a <= vt_s && vt_s < t_b && src.believed(Table::Edges, i, as_of_tt))
                .then_some(EdgeVersion { src, idx: i })
        })
    }

    /// Per bucket `[t_a + i·stride, t_a + (i+1)·stride) ∩ [t_a, t_b)`, the number of edge
    /// versions believed at `as_of_tt` that start in it (with `rel_type` when given), for
    /// `i < ceil((t_b − t_a) / stride)`. Counted in parallel without materializing rows;
    /// integer sums, so the result does not depend on the thread count. An empty window
    /// gives no buckets; more than [`MAX_COUNT_BUCKETS`] buckets is an `invalid` error.
    pub fn edge_start_counts(
        &self,
        t_a: i64,
        t_b: i64,
        stride: i64,
        as_of_tt: i64,
        rel_type: Option<&str>,
    ) -> crate::Result<Vec<u64>> {
        if t_a >= t_b {
            return Ok(Vec::new());
        }
        if stride < 1 {
            return Err(crate::Error::invalid(format!("stride {stride} is below 1")));
        }
        let width = (t_b as i128 - t_a as i128) as u128;
        let n = width.div_ceil(stride as u128);
        if n > MAX_COUNT_BUCKETS as u128 {
            return Err(crate::Error::invalid(format!(
                "{n} buckets exceed the cap {MAX_COUNT_BUCKETS}"
            )));
        }
        let n = n as usize;
        let src = self.src();
        let rel = match rel_type {
            None => None,
            Some(r) => match src.string_id(r) {
                Some(id) => Some(id),
                None => return Ok(vec![0; n]),
            },
        };
        Ok(match src {
            Src::Map(base) => mapscan::start_counts(base, (t_a, t_b, stride), as_of_tt, rel, n),
            Src::Over(o) => o.start_counts((t_a, t_b, stride), as_of_tt, rel, n),
        })
    }
}

/// The times of a run of rows at consecutive storage positions ([`Snapshot::row_times`]);
/// index `j` is position `start + j`. A position whose row is not stored (a failed batch's
/// row) has `stored[j] = false` and times that mean nothing. A time not asked for
/// ([`TimeCols`]) is empty.
#[derive(Clone, Debug, Default)]
pub struct RowTimes {
    /// The row is stored (not a failed batch's).
    pub stored: Vec<bool>,
    /// Valid-time start, µs.
    pub vt_s: Vec<i64>,
    /// Valid-time end, µs (`OPEN_END` when open).
    pub vt_e: Vec<i64>,
    /// Transaction-time start, µs.
    pub tt_s: Vec<i64>,
    /// Transaction-time end, µs (`OPEN_END` while believed).
    pub tt_e: Vec<i64>,
}

/// The times [`Snapshot::row_times`] decodes besides `stored` and `tt_e`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeCols {
    /// Valid-time starts.
    pub vt_s: bool,
    /// Valid-time ends.
    pub vt_e: bool,
    /// Transaction-time starts.
    pub tt_s: bool,
}

/// Positions `[start, end)` of table `k` over an image: the image's are `[start, mid)`
/// (`mid` returned), the rest are the rows above it (returned).
fn split_at_image(o: &Rows, k: Table, start: usize, end: usize) -> (usize, &[Row]) {
    let above = o.above_rows(k);
    // The first position above the image.
    let nb = o.n_rows(k) - above.len();
    let mid = nb.clamp(start, end);
    (mid, &above[mid.max(nb) - nb..end.max(nb) - nb])
}

// ---------------------------------------------------------------------------------------
// Window scans without ordering for the series operators (graph_metric_timeseries,
// burst_detection, resolve_entities), through the valid-time index.

impl<'a> Snapshot<'a> {
    /// Node versions believed at `as_of_tt` whose valid interval overlaps `vt_window`
    /// (every believed node version when `None`), in storage order.
    pub fn node_scan(&self, vt_window: Option<(i64, i64)>, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let src = self.src();
        src.window_ids(Table::Nodes, vt_window, as_of_tt)
            .into_iter()
            .map(|i| NodeVersion { src, idx: i })
            .collect()
    }

    /// Edge versions believed at `as_of_tt` whose valid interval overlaps `vt_window`
    /// (every believed edge version when `None`), in storage order.
    pub fn edge_window(
        &self,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        let src = self.src();
        src.window_ids(Table::Edges, vt_window, as_of_tt)
            .into_iter()
            .map(|i| EdgeVersion { src, idx: i })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Addition for resolve_entities and temporal_paths: uid-level access by interned uid id (the
// id space of `EdgeVersion::src_id`) and a case-insensitive uid search over a lowercase uid
// heap that the state builds once per uid set and caches (dropped when a uid is added or
// rolled back).

impl<'a> Snapshot<'a> {
    /// The snapshot-local interned id of `uid` (see [`EdgeVersion::src_id`]).
    pub fn uid_id(&self, uid: &str) -> Option<u32> {
        self.src().uid_id(uid)
    }

    /// The size of this snapshot's uid id space: every uid id it hands out
    /// ([`Snapshot::uid_id`], [`EdgeVersion::src_id`], [`EdgeVersion::dst_id`]) is below it,
    /// so per-id tables (bitsets, counters) can be sized once.
    pub fn uid_ids(&self) -> usize {
        match self.src() {
            Src::Map(b) => b.marks().uids as usize,
            Src::Over(o) => o.n_uids(),
        }
    }

    /// The uid of an interned id handed out by this snapshot.
    pub fn uid_name(&self, id: u32) -> &'a str {
        self.src().uid(id)
    }

    /// Ids of the uids whose `str::to_lowercase` form contains `needle_lower` (a lowercase
    /// needle), ascending. O(total uid bytes) after the first call on a uid set.
    pub fn uids_lowercase_containing(&self, needle_lower: &str) -> Vec<u32> {
        match self.src() {
            Src::Map(b) => mapscan::lower(b).containing(needle_lower),
            Src::Over(o) => o.uids_lowercase_containing(needle_lower),
        }
    }

    /// Node versions of the uid with id `uid_id` believed at `as_of_tt`, any valid time, in
    /// no particular order. O(versions of that uid).
    pub fn node_versions_of_uid(
        &self,
        uid_id: u32,
        as_of_tt: i64,
    ) -> impl Iterator<Item = NodeVersion<'a>> + 'a {
        let src = self.src();
        let rows = src.node_postings(uid_id);
        (0..rows.len())
            .map(move |k| rows[k])
            .filter(move |&i| src.believed(Table::Nodes, i, as_of_tt))
            .map(move |i| NodeVersion { src, idx: i })
    }
}
