//! The read API of `design.md` §3: a [`Snapshot`] pins the store state and answers
//! `versions_of`, `edge_scan`, `out_edges` / `in_edges`, `nodes_valid_at` and `stats`.
//! Row views derive `eid` / `vid` hex on output; nothing is stored as hex.
//!
//! This is the in-memory implementation; the segment store will serve the same calls.
//! Window reads (boundaries, overlap, starts, stab, start counts) go through the valid-time
//! index of `tindex.rs` instead of filtering every row.

use crate::canon;
use crate::ident::{self, Id12};
use crate::op::Origin;
use crate::state::{Row, State, Stats, NONE};
use crate::time::{clamp_tt, overlaps};
use crate::tindex::{IndexCache, TableIndex};
use rayon::prelude::*;
use std::ops::Range;

/// A node or edge identity as callers name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Identity {
    Node(String),
    Edge {
        src: String,
        dst: String,
        rel_type: String,
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
    pub as_of_tt: i64,
    /// Half-open valid-time window the versions must overlap.
    pub vt_window: Option<(i64, i64)>,
    pub rel_types: Option<&'s [String]>,
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
    pub(crate) st: &'a State,
}

fn believed_at(r: &Row, as_of_tt: i64) -> bool {
    let a = clamp_tt(as_of_tt);
    r.alive && r.tt_s <= a && a < r.tt_e
}

fn in_window(r: &Row, w: Option<(i64, i64)>) -> bool {
    w.is_none_or(|(a, b)| overlaps(r.vt_s, r.vt_e, a, b))
}

impl<'a> Snapshot<'a> {
    /// Statistics maintained at commit (O(1)).
    pub fn stats(&self) -> &'a Stats {
        &self.st.stats
    }

    /// True when `uid` was ever registered.
    pub fn has_uid(&self, uid: &str) -> bool {
        self.st.uids.get(uid).is_some()
    }

    /// Versions of one identity believed at `as_of_tt`, ordered by `vt_s`. O(its versions).
    pub fn versions_of(&self, id: &Identity, as_of_tt: i64) -> Vec<Version<'a>> {
        self.history_of(id)
            .into_iter()
            .filter(|v| believed_at(v.row(), as_of_tt))
            .collect()
    }

    /// Every stored version of one identity (believed and closed), ordered by
    /// `(tt_s, vt_s)`. O(its versions).
    pub fn history_of(&self, id: &Identity) -> Vec<Version<'a>> {
        let st = self.st;
        let mut out: Vec<Version<'a>> = match id {
            Identity::Node(uid) => match st.uids.get(uid) {
                None => Vec::new(),
                Some(u) => st.node_postings[u as usize]
                    .iter()
                    .filter(|&&r| st.nodes[r as usize].alive)
                    .map(|&r| Version::Node(NodeVersion { st, idx: r }))
                    .collect(),
            },
            Identity::Edge {
                src,
                dst,
                rel_type,
                disc,
            } => match st.lookup_edge(src, dst, rel_type, disc) {
                None => Vec::new(),
                Some(i) => st.edge_postings[i as usize]
                    .iter()
                    .filter(|&&r| st.edges[r as usize].alive)
                    .map(|&r| Version::Edge(EdgeVersion { st, idx: r }))
                    .collect(),
            },
        };
        out.sort_by_key(|v| (v.row().tt_s, v.row().vt_s));
        out
    }

    /// Every stored edge row (believed and closed) with `src` or `dst` = `uid`, ordered by
    /// `(tt_s, vt_s, vid)`. O(degree of uid).
    pub fn edge_history_touching(&self, uid: &str) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        let Some(u) = st.uids.get(uid) else {
            return Vec::new();
        };
        let mut idx: Vec<u32> = st.out_adj[u as usize]
            .iter()
            .chain(st.in_adj[u as usize].iter())
            .copied()
            .filter(|&i| st.edges[i as usize].alive)
            .collect();
        idx.sort_unstable();
        idx.dedup();
        let mut out: Vec<EdgeVersion<'a>> = idx
            .into_iter()
            .map(|i| EdgeVersion { st, idx: i })
            .collect();
        out.sort_by_cached_key(|e| (e.tt_s(), e.vt_s(), e.vid()));
        out
    }

    /// Believed edge versions matching the scan, ordered by `(vt_s, eid)`.
    pub fn edge_scan(&self, scan: &EdgeScan) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        let rels: Option<Vec<u32>> = scan
            .rel_types
            .map(|rs| rs.iter().filter_map(|r| st.strings.get(r)).collect());
        let rel_ok = |r: &Row| {
            rels.as_ref()
                .is_none_or(|rs| rs.contains(&st.idents[r.ident as usize].rel))
        };
        let keep =
            |r: &Row| believed_at(r, scan.as_of_tt) && in_window(r, scan.vt_window) && rel_ok(r);
        let mut idx: Vec<u32> = match scan.touching {
            None => overlapping(&st.edges, &st.edge_index, scan.vt_window, keep),
            Some((uids, mode)) => {
                let mut set: Vec<u32> = uids.iter().filter_map(|u| st.uids.get(u)).collect();
                set.sort_unstable();
                set.dedup();
                let member = |u: u32| set.binary_search(&u).is_ok();
                let out = set.iter().flat_map(|&u| st.out_adj[u as usize].iter());
                let mut v: Vec<u32> = match mode {
                    // Each row is in the out-list of its one source: no duplicates.
                    Touch::Both => out
                        .copied()
                        .filter(|&i| {
                            let r = &st.edges[i as usize];
                            member(st.idents[r.ident as usize].dst) && keep(r)
                        })
                        .collect(),
                    Touch::Either => out
                        .chain(set.iter().flat_map(|&u| st.in_adj[u as usize].iter()))
                        .copied()
                        .filter(|&i| keep(&st.edges[i as usize]))
                        .collect(),
                };
                if mode == Touch::Either {
                    v.sort_unstable();
                    v.dedup();
                }
                v
            }
        };
        self.sort_edges(&mut idx);
        idx.into_iter()
            .map(|i| EdgeVersion { st, idx: i })
            .collect()
    }

    /// Sorts rows by `(vt_s, eid, tt_s)` (row id last, so the unstable sort is
    /// deterministic). Keys are gathered once: comparing through the rows would chase two
    /// pointers per comparison.
    fn sort_edges(&self, idx: &mut [u32]) {
        let st = self.st;
        let key = |i: u32| {
            let r = &st.edges[i as usize];
            (r.vt_s, *st.eid(r.ident), r.tt_s, i)
        };
        if idx.len() < 4096 {
            idx.sort_unstable_by_key(|&i| key(i));
            return;
        }
        let mut keys: Vec<(i64, Id12, i64, u32)> = idx.par_iter().map(|&i| key(i)).collect();
        keys.par_sort_unstable();
        idx.par_iter_mut()
            .zip(keys.par_iter())
            .for_each(|(slot, k)| *slot = k.3);
    }

    fn adjacent(
        &self,
        lists: &[Vec<u32>],
        uid: &str,
        w: Option<(i64, i64)>,
        as_of: i64,
    ) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        let Some(u) = st.uids.get(uid) else {
            return Vec::new();
        };
        let mut idx: Vec<u32> = lists[u as usize]
            .iter()
            .copied()
            .filter(|&i| {
                let r = &st.edges[i as usize];
                believed_at(r, as_of) && in_window(r, w)
            })
            .collect();
        self.sort_edges(&mut idx);
        idx.into_iter()
            .map(|i| EdgeVersion { st, idx: i })
            .collect()
    }

    /// Believed edges leaving `uid` that overlap the window, ordered by `(vt_s, eid)`.
    pub fn out_edges(
        &self,
        uid: &str,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        self.adjacent(&self.st.out_adj, uid, vt_window, as_of_tt)
    }

    /// Believed edges entering `uid` that overlap the window, ordered by `(vt_s, eid)`.
    pub fn in_edges(
        &self,
        uid: &str,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        self.adjacent(&self.st.in_adj, uid, vt_window, as_of_tt)
    }

    /// Node versions believed at `as_of_tt` and valid at `t`, ordered by uid.
    pub fn nodes_valid_at(&self, t: i64, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let st = self.st;
        let keep = |r: &Row| believed_at(r, as_of_tt) && r.vt_s <= t && t < r.vt_e;
        let w = Some((t, t.saturating_add(1)));
        let mut out: Vec<NodeVersion<'a>> = overlapping(&st.nodes, &st.node_index, w, keep)
            .into_iter()
            .map(|i| NodeVersion { st, idx: i })
            .collect();
        // One believed version per uid is valid at `t` (I1), so the order is total.
        out.sort_by(|a, b| a.uid().cmp(b.uid()));
        out
    }

    /// Every stored node row in digest order `(uid, tt_s, vt_s, vid)`.
    pub fn all_nodes(&self) -> Vec<NodeVersion<'a>> {
        let st = self.st;
        let mut idx: Vec<u32> = (0..st.nodes.len() as u32)
            .filter(|&i| st.nodes[i as usize].alive)
            .collect();
        idx.sort_by(|&a, &b| {
            let (ra, rb) = (&st.nodes[a as usize], &st.nodes[b as usize]);
            st.uids
                .name(ra.ident)
                .cmp(st.uids.name(rb.ident))
                .then((ra.tt_s, ra.vt_s).cmp(&(rb.tt_s, rb.vt_s)))
        });
        idx.into_iter()
            .map(|i| NodeVersion { st, idx: i })
            .collect()
    }

    /// Every stored edge row in digest order `(eid, tt_s, vt_s, vid)`. The sort runs on
    /// contiguous keys, in parallel; eids are derived once per identity.
    pub fn all_edges(&self) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        let mut keys: Vec<(Id12, i64, i64, u32)> = (0..st.edges.len() as u32)
            .into_par_iter()
            .filter(|&i| st.edges[i as usize].alive)
            .map(|i| {
                let r = &st.edges[i as usize];
                (*st.eid(r.ident), r.tt_s, r.vt_s, i)
            })
            .collect();
        // (eid, tt_s, vt_s) is unique among stored rows (I8), so the order is total.
        keys.par_sort_unstable();
        keys.into_iter()
            .map(|k| EdgeVersion { st, idx: k.3 })
            .collect()
    }

    /// The store digest of `data-model.md` §10: BLAKE3 over canonical row lines. Lines are
    /// rendered in parallel, bounded groups and hashed in order, so the result does not
    /// depend on the thread count.
    pub fn digest(&self) -> String {
        const CHUNK: usize = 16_384;
        fn feed<T: Sync>(
            h: &mut blake3::Hasher,
            rows: &[T],
            line: impl Fn(&T, &mut String) + Sync,
        ) {
            let group = CHUNK * rayon::current_num_threads().max(1) * 2;
            for g in rows.chunks(group) {
                let parts: Vec<String> = g
                    .par_chunks(CHUNK)
                    .map(|c| {
                        let mut s = String::with_capacity(c.len() * 320);
                        c.iter().for_each(|r| line(r, &mut s));
                        s
                    })
                    .collect();
                parts.iter().for_each(|p| {
                    h.update(p.as_bytes());
                });
            }
        }
        let mut h = blake3::Hasher::new();
        feed(&mut h, &self.all_nodes(), |n, s| n.write_line(s));
        feed(&mut h, &self.all_edges(), |e, s| e.write_line(s));
        h.finalize().to_hex().to_string()
    }
}

// ---------------------------------------------------------------------------------------
// Window selection through the valid-time index (`tindex.rs`). Every window read names its
// candidate rows by binary search in the index (plus the unindexed tail of newest rows),
// checks the exact predicate on each candidate in parallel chunks, and sorts the ids back
// to storage order (ids are unique, so the order does not depend on the thread count). When
// the candidates are a large share of the table, a parallel scan of the storage order is
// cheaper and yields the same list, because the predicate is exact on its own.

/// Rows per parallel work unit.
const CHUNK: usize = 16_384;

/// Cap on the bucket count of [`Snapshot::edge_start_counts`] (one counter per bucket and
/// work unit).
pub const MAX_COUNT_BUCKETS: usize = 1 << 16;

/// Storage-order ids of the rows in `range` that satisfy `keep`, scanned in parallel.
fn scan_ids(rows: &[Row], range: Range<usize>, keep: impl Fn(&Row) -> bool + Sync) -> Vec<u32> {
    let start = range.start;
    if range.len() <= CHUNK {
        // One work unit: stay on the calling thread (no pool round trip).
        return rows[range]
            .iter()
            .enumerate()
            .filter(|(_, r)| keep(r))
            .map(|(i, _)| (start + i) as u32)
            .collect();
    }
    // One list per fixed chunk, concatenated in chunk order (one allocation at the end).
    let parts: Vec<Vec<u32>> = rows[range]
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, ch)| {
            let base = start + c * CHUNK;
            ch.iter()
                .enumerate()
                .filter(|(_, r)| keep(r))
                .map(|(i, _)| (base + i) as u32)
                .collect()
        })
        .collect();
    parts.concat()
}

/// Storage-order ids of the rows satisfying `keep` among the index candidates `cands`
/// (may overlap) and the tail `[ix.covered, rows.len())`. `keep` must be exact: it alone
/// decides membership, the candidates only bound the work.
fn select(
    rows: &[Row],
    ix: &TableIndex,
    cands: &[&[u32]],
    keep: impl Fn(&Row) -> bool + Sync,
) -> Vec<u32> {
    let tail = ix.covered..rows.len();
    let n: usize = cands.iter().map(|c| c.len()).sum::<usize>() + tail.len();
    if n.saturating_mul(4) >= rows.len() {
        return scan_ids(rows, 0..rows.len(), keep);
    }
    let hit = |&i: &u32| keep(&rows[i as usize]);
    let mut ids: Vec<u32> = if n <= CHUNK {
        // One work unit: stay on the calling thread (no pool round trip).
        cands
            .iter()
            .flat_map(|c| c.iter().copied().filter(hit))
            .collect()
    } else {
        let chunks: Vec<&[u32]> = cands.iter().flat_map(|c| c.chunks(CHUNK)).collect();
        chunks
            .par_iter()
            .flat_map_iter(|c| c.iter().copied().filter(hit))
            .collect()
    };
    ids.extend(scan_ids(rows, tail, &keep));
    if ids.len() <= CHUNK {
        ids.sort_unstable();
    } else {
        ids.par_sort_unstable();
    }
    ids.dedup();
    ids
}

/// Storage-order ids of the rows overlapping `w` (every row when `None`) that satisfy
/// `keep`, which must imply the overlap.
fn overlapping(
    rows: &[Row],
    cache: &IndexCache,
    w: Option<(i64, i64)>,
    keep: impl Fn(&Row) -> bool + Sync,
) -> Vec<u32> {
    let Some((a, b)) = w else {
        return scan_ids(rows, 0..rows.len(), keep);
    };
    let ix = cache.get(rows);
    // Rows starting in [a, b) overlap; a row starting before `a` overlaps only when it
    // ends after `a`, which an instantaneous row cannot: those are long rows, found by the
    // shorter of the `vt_e > a` suffix and the `vt_s < a` prefix.
    let inside = ix.by_start.ids_in(a, b.saturating_sub(1));
    let before = if a == i64::MIN {
        &[][..]
    } else if ix.by_end.count_in(a.saturating_add(1), i64::MAX)
        <= ix.by_start.count_in(i64::MIN, a - 1)
    {
        ix.by_end.ids_in(a.saturating_add(1), i64::MAX)
    } else {
        ix.by_start.ids_in(i64::MIN, a - 1)
    };
    select(rows, &ix, &[inside, before], keep)
}

/// True when `[vt_s, vt_e)` starts or ends inside `(lo, hi]`.
fn boundary_in(r: &Row, lo: i64, hi: i64) -> bool {
    (lo < r.vt_s && r.vt_s <= hi) || (lo < r.vt_e && r.vt_e <= hi)
}

/// Storage-order ids of the rows believed at `as_of` that start or end inside `(lo, hi]`.
fn boundaries(rows: &[Row], cache: &IndexCache, lo: i64, hi: i64, as_of: i64) -> Vec<u32> {
    if lo >= hi {
        return Vec::new();
    }
    let ix = cache.get(rows);
    // A start in (lo, hi] is found by `vt_s`; an end in (lo, hi] of an instantaneous row
    // means `vt_s` in [lo, hi), of a long row it is found by `vt_e`.
    let starts = ix.by_start.ids_in(lo, hi);
    let ends = ix.by_end.ids_in(lo + 1, hi);
    select(rows, &ix, &[starts, ends], |r| {
        believed_at(r, as_of) && boundary_in(r, lo, hi)
    })
}

/// Storage-order ids of the rows believed at `as_of` with `t_a <= vt_s < t_b`; `gen` is
/// the table's close generation.
fn starts(rows: &[Row], cache: &IndexCache, gen: u64, t_a: i64, t_b: i64, as_of: i64) -> Vec<u32> {
    if t_a >= t_b {
        return Vec::new();
    }
    let ix = cache.get(rows);
    let keep = |r: &Row| believed_at(r, as_of) && t_a <= r.vt_s && r.vt_s < t_b;
    let cands = ix.by_start.ids_in(t_a, t_b - 1);
    if !cands.is_empty() && cands.len() == ix.covered {
        // Every covered row starts in the window: at a belief state after every stored
        // transaction time the covered answer is all covered rows but the unbelieved ones,
        // listed without reading a row.
        let unb = cache.unbelieved(rows, &ix, gen);
        if clamp_tt(as_of) >= unb.max_tt {
            let mut ids = Vec::with_capacity(ix.covered - unb.ids.len() + rows.len() - ix.covered);
            let mut skip = unb.ids.iter().copied().peekable();
            for i in 0..ix.covered as u32 {
                if skip.next_if_eq(&i).is_none() {
                    ids.push(i);
                }
            }
            ids.extend(scan_ids(rows, ix.covered..rows.len(), keep));
            return ids;
        }
    }
    select(rows, &ix, &[cands], keep)
}

impl<'a> Snapshot<'a> {
    /// Node versions believed at `as_of_tt` whose valid interval starts or ends inside
    /// `(lo, hi]` (`lo < vt_s <= hi` or `lo < vt_e <= hi`), in storage order.
    /// O(log n + boundary rows) through the valid-time index.
    pub fn node_boundaries(&self, lo: i64, hi: i64, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let st = self.st;
        boundaries(&st.nodes, &st.node_index, lo, hi, as_of_tt)
            .into_iter()
            .map(|i| NodeVersion { st, idx: i })
            .collect()
    }

    /// Edge versions believed at `as_of_tt` whose valid interval starts or ends inside
    /// `(lo, hi]`, in storage order. O(log n + boundary rows) through the valid-time index.
    pub fn edge_boundaries(&self, lo: i64, hi: i64, as_of_tt: i64) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        boundaries(&st.edges, &st.edge_index, lo, hi, as_of_tt)
            .into_iter()
            .map(|i| EdgeVersion { st, idx: i })
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
        let st = self.st;
        self.edge_start_positions(t_a, t_b, as_of_tt)
            .into_iter()
            .map(|i| EdgeVersion { st, idx: i })
            .collect()
    }

    /// The storage positions of [`Snapshot::edge_starts`] (ascending; 4 bytes per version,
    /// for callers that keep large event lists compact). See [`Snapshot::edge_at`].
    pub fn edge_start_positions(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<u32> {
        let st = self.st;
        starts(
            &st.edges,
            &st.edge_index,
            st.edge_close_gen,
            t_a,
            t_b,
            as_of_tt,
        )
    }

    /// Compact columns (`vt_s`, rel, src, dst) of the edge rows at storage positions
    /// `[0, covered())`, shared and built on first use; positions above are read with
    /// [`Snapshot::edge_at`]. Belief is not in them: pair with
    /// [`Snapshot::edge_start_positions`] or another belief-checked read.
    pub fn edge_columns(&self) -> std::sync::Arc<crate::cols::EdgeColumns> {
        self.st.edge_cols.get(&self.st.edges, &self.st.idents)
    }

    /// The edge version at storage position `pos`, `None` when `pos >= edge_positions()`.
    pub fn edge_at(&self, pos: u32) -> Option<EdgeVersion<'a>> {
        let st = self.st;
        ((pos as usize) < st.edges.len()).then_some(EdgeVersion { st, idx: pos })
    }

    /// The number of storage positions of edge rows: the index space of
    /// [`Snapshot::edge_starts_in`].
    pub fn edge_positions(&self) -> usize {
        self.st.edges.len()
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
        let st = self.st;
        let a = clamp_tt(as_of_tt);
        let start = pos.start.min(st.edges.len());
        let end = pos.end.clamp(start, st.edges.len());
        st.edges[start..end]
            .iter()
            .enumerate()
            .filter_map(move |(i, r)| {
                (t_a <= r.vt_s && r.vt_s < t_b && r.alive && r.tt_s <= a && a < r.tt_e).then_some(
                    EdgeVersion {
                        st,
                        idx: (start + i) as u32,
                    },
                )
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
        let st = self.st;
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
        let rel = match rel_type {
            None => None,
            Some(r) => match st.strings.get(r) {
                Some(id) => Some(id),
                None => return Ok(vec![0; n]),
            },
        };
        let rows = &st.edges;
        let keep = |r: &Row| {
            believed_at(r, as_of_tt)
                && t_a <= r.vt_s
                && r.vt_s < t_b
                && rel.is_none_or(|x| st.idents[r.ident as usize].rel == x)
        };
        let bucket = |r: &Row| ((r.vt_s as i128 - t_a as i128) / stride as i128) as usize;
        let add = |mut c: Vec<u64>, r: &Row| {
            if keep(r) {
                c[bucket(r)] += 1;
            }
            c
        };
        let sum = |mut x: Vec<u64>, y: Vec<u64>| {
            x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
            x
        };
        let ix = st.edge_index.get(rows);
        let tail = &rows[ix.covered..];
        if rel.is_none() {
            // At a belief state after every stored transaction time, a covered row is
            // believed unless it is listed as unbelieved: count keys per bucket by binary
            // search, take the unbelieved rows off, and add the (exactly checked) tail.
            let unb = st.edge_index.unbelieved(rows, &ix, st.edge_close_gen);
            if clamp_tt(as_of_tt) >= unb.max_tt {
                let mut c: Vec<u64> = (0..n as i64)
                    .map(|i| {
                        let lo = t_a + i * stride;
                        let hi = lo.saturating_add(stride).min(t_b) - 1;
                        ix.by_start.count_in(lo, hi) as u64
                    })
                    .collect();
                for &i in &unb.ids {
                    let r = &rows[i as usize];
                    if t_a <= r.vt_s && r.vt_s < t_b && !believed_at(r, as_of_tt) {
                        c[bucket(r)] -= 1;
                    }
                }
                return Ok(sum(c, tail.iter().fold(vec![0u64; n], add)));
            }
        }
        let cands = ix.by_start.ids_in(t_a, t_b - 1);
        if (cands.len() + tail.len()).saturating_mul(4) >= rows.len() {
            return Ok(rows
                .par_chunks(CHUNK)
                .map(|c| c.iter().fold(vec![0u64; n], add))
                .reduce(|| vec![0u64; n], sum));
        }
        let indexed = cands
            .par_chunks(CHUNK)
            .map(|c| {
                c.iter()
                    .fold(vec![0u64; n], |acc, &i| add(acc, &rows[i as usize]))
            })
            .reduce(|| vec![0u64; n], sum);
        Ok(sum(indexed, tail.iter().fold(vec![0u64; n], add)))
    }
}

/// A node or an edge version.
#[derive(Clone, Copy)]
pub enum Version<'a> {
    Node(NodeVersion<'a>),
    Edge(EdgeVersion<'a>),
}

impl Version<'_> {
    fn row(&self) -> &Row {
        match self {
            Version::Node(n) => n.row(),
            Version::Edge(e) => e.row(),
        }
    }

    /// The row's canonical stored-row object (the digest's row line without `\n`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut s = String::new();
        match self {
            Version::Node(n) => n.write_line(&mut s),
            Version::Edge(e) => e.write_line(&mut s),
        }
        canon::parse(s.trim_end()).unwrap_or(serde_json::Value::Null)
    }
}

/// Fields every version shares.
macro_rules! common_fields {
    ($t:ident, $rows:ident) => {
        impl<'a> $t<'a> {
            fn row(&self) -> &'a Row {
                &self.st.$rows[self.idx as usize]
            }
            /// Start of the valid interval.
            pub fn vt_s(&self) -> i64 {
                self.row().vt_s
            }
            /// End of the valid interval.
            pub fn vt_e(&self) -> i64 {
                self.row().vt_e
            }
            /// Start of the transaction interval.
            pub fn tt_s(&self) -> i64 {
                self.row().tt_s
            }
            /// End of the transaction interval as stored (uncensored).
            pub fn tt_e(&self) -> i64 {
                self.row().tt_e
            }
            /// `tt_s − vt_s`.
            pub fn ingestion_lag_us(&self) -> i64 {
                self.row().tt_s - self.row().vt_s
            }
            /// Canonical JSON text of `props`.
            pub fn props(&self) -> &'a str {
                self.st
                    .strings
                    .name(self.st.content(self.row().content).props)
            }
            /// Provenance label.
            pub fn source(&self) -> &'a str {
                self.st
                    .strings
                    .name(self.st.content(self.row().content).source)
            }
            /// Canonical JSON text of `provenance_ref`.
            pub fn provenance_ref(&self) -> &'a str {
                self.st
                    .strings
                    .name(self.st.content(self.row().content).provenance)
            }
            /// Kind of the op that wrote the row.
            pub fn origin(&self) -> Origin {
                self.row().origin
            }
            /// Reason of the op that wrote the row.
            pub fn reason(&self) -> Option<&'a str> {
                let r = self.row().reason;
                (r != NONE).then(|| self.st.strings.name(r))
            }
            /// Kind of the op that closed the row (uncensored).
            pub fn closed_by(&self) -> Option<Origin> {
                self.row().closed_by
            }
            /// Reason of the op that closed the row (uncensored).
            pub fn close_reason(&self) -> Option<&'a str> {
                let r = self.row().close_reason;
                (r != NONE).then(|| self.st.strings.name(r))
            }
            fn write_audit_tail(&self, s: &mut String) {
                // keys after "kind"... are written by the caller; this writes the shared
                // `close_reason` and `closed_by` prefix.
                s.push_str("{\"close_reason\":");
                opt_str(s, self.close_reason());
                s.push_str(",\"closed_by\":");
                opt_str(s, self.closed_by().map(Origin::as_str));
            }
        }
    };
}

/// A node version view.
#[derive(Clone, Copy)]
pub struct NodeVersion<'a> {
    st: &'a State,
    idx: u32,
}

/// An edge version view.
#[derive(Clone, Copy)]
pub struct EdgeVersion<'a> {
    st: &'a State,
    idx: u32,
}

common_fields!(NodeVersion, nodes);
common_fields!(EdgeVersion, edges);

fn opt_str(s: &mut String, v: Option<&str>) {
    match v {
        None => s.push_str("null"),
        Some(x) => canon::write_str(s, x),
    }
}

fn int(s: &mut String, k: &str, v: i64) {
    s.push_str(k);
    s.push_str(&v.to_string());
}

impl<'a> NodeVersion<'a> {
    /// The node's uid.
    pub fn uid(&self) -> &'a str {
        self.st.uids.name(self.row().ident)
    }
    /// The node's label.
    pub fn label(&self) -> &'a str {
        self.st
            .strings
            .name(self.st.content(self.row().content).label)
    }
    /// `vid(uid, tt_s, vt_s)`.
    pub fn vid(&self) -> String {
        ident::vid(self.uid(), self.tt_s(), self.vt_s())
    }

    /// Appends the canonical row line (with `\n`) of `data-model.md` §10.
    pub fn write_line(&self, s: &mut String) {
        self.write_audit_tail(s);
        s.push_str(",\"kind\":\"node\",\"label\":");
        canon::write_str(s, self.label());
        s.push_str(",\"origin\":");
        canon::write_str(s, self.origin().as_str());
        s.push_str(",\"props\":");
        s.push_str(self.props());
        s.push_str(",\"provenance_ref\":");
        s.push_str(self.provenance_ref());
        s.push_str(",\"reason\":");
        opt_str(s, self.reason());
        s.push_str(",\"source\":");
        canon::write_str(s, self.source());
        int(s, ",\"tt_e\":", self.tt_e());
        int(s, ",\"tt_s\":", self.tt_s());
        s.push_str(",\"uid\":");
        canon::write_str(s, self.uid());
        s.push_str(",\"vid\":\"");
        s.push_str(&self.vid());
        int(s, "\",\"vt_e\":", self.vt_e());
        int(s, ",\"vt_s\":", self.vt_s());
        s.push_str("}\n");
    }
}

impl<'a> EdgeVersion<'a> {
    fn ident(&self) -> &'a crate::state::EdgeIdent {
        &self.st.idents[self.row().ident as usize]
    }
    /// Snapshot-local interned ids of the source uid, destination uid and rel_type: within
    /// one snapshot, equal ids ⇔ equal strings (uids and rel_types are separate id spaces).
    /// For grouping and set membership without hashing strings; never persisted or compared
    /// across snapshots.
    pub fn src_id(&self) -> u32 {
        self.ident().src
    }
    /// See [`EdgeVersion::src_id`].
    pub fn dst_id(&self) -> u32 {
        self.ident().dst
    }
    /// See [`EdgeVersion::src_id`].
    pub fn rel_id(&self) -> u32 {
        self.ident().rel
    }
    /// Source uid.
    pub fn src(&self) -> &'a str {
        self.st.uids.name(self.ident().src)
    }
    /// Destination uid.
    pub fn dst(&self) -> &'a str {
        self.st.uids.name(self.ident().dst)
    }
    /// Relationship type.
    pub fn rel_type(&self) -> &'a str {
        self.st.strings.name(self.ident().rel)
    }
    /// Discriminator.
    pub fn disc(&self) -> String {
        self.st.disc_text(self.ident().disc)
    }
    /// Snapshot-local interned id of the edge identity (see [`EdgeVersion::src_id`]):
    /// equal ids ⇔ same `(src, dst, rel_type, disc)`.
    pub fn ident_id(&self) -> u32 {
        self.row().ident
    }
    /// The 12 eid bytes (the hex of [`EdgeVersion::eid`] orders as these bytes do).
    pub fn eid_bytes(&self) -> Id12 {
        *self.st.eid(self.row().ident)
    }
    /// The 24-hex eid.
    pub fn eid(&self) -> String {
        canon::hex(self.st.eid(self.row().ident))
    }
    /// `vid(eid, tt_s, vt_s)`.
    pub fn vid(&self) -> String {
        ident::vid(&self.eid(), self.tt_s(), self.vt_s())
    }

    /// Appends the canonical row line (with `\n`) of `data-model.md` §10.
    pub fn write_line(&self, s: &mut String) {
        let eid = self.eid();
        self.write_audit_tail(s);
        s.push_str(",\"disc\":");
        canon::write_str(s, &self.disc());
        s.push_str(",\"dst\":");
        canon::write_str(s, self.dst());
        s.push_str(",\"eid\":\"");
        s.push_str(&eid);
        s.push_str("\",\"kind\":\"edge\",\"origin\":");
        canon::write_str(s, self.origin().as_str());
        s.push_str(",\"props\":");
        s.push_str(self.props());
        s.push_str(",\"provenance_ref\":");
        s.push_str(self.provenance_ref());
        s.push_str(",\"reason\":");
        opt_str(s, self.reason());
        s.push_str(",\"rel_type\":");
        canon::write_str(s, self.rel_type());
        s.push_str(",\"source\":");
        canon::write_str(s, self.source());
        s.push_str(",\"src\":");
        canon::write_str(s, self.src());
        int(s, ",\"tt_e\":", self.tt_e());
        int(s, ",\"tt_s\":", self.tt_s());
        s.push_str(",\"vid\":\"");
        s.push_str(&ident::vid(&eid, self.tt_s(), self.vt_s()));
        int(s, "\",\"vt_e\":", self.vt_e());
        int(s, ",\"vt_s\":", self.vt_s());
        s.push_str("}\n");
    }
}

// ---------------------------------------------------------------------------------------
// Window scans without ordering for the series operators (graph_metric_timeseries,
// burst_detection, resolve_entities), through the valid-time index.

impl<'a> Snapshot<'a> {
    /// Node versions believed at `as_of_tt` whose valid interval overlaps `vt_window`
    /// (every believed node version when `None`), in storage order.
    pub fn node_scan(&self, vt_window: Option<(i64, i64)>, as_of_tt: i64) -> Vec<NodeVersion<'a>> {
        let st = self.st;
        let keep = |r: &Row| believed_at(r, as_of_tt) && in_window(r, vt_window);
        overlapping(&st.nodes, &st.node_index, vt_window, keep)
            .into_iter()
            .map(|i| NodeVersion { st, idx: i })
            .collect()
    }

    /// Edge versions believed at `as_of_tt` whose valid interval overlaps `vt_window`
    /// (every believed edge version when `None`), in storage order.
    pub fn edge_window(
        &self,
        vt_window: Option<(i64, i64)>,
        as_of_tt: i64,
    ) -> Vec<EdgeVersion<'a>> {
        let st = self.st;
        let keep = |r: &Row| believed_at(r, as_of_tt) && in_window(r, vt_window);
        overlapping(&st.edges, &st.edge_index, vt_window, keep)
            .into_iter()
            .map(|i| EdgeVersion { st, idx: i })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Addition for temporal_paths: an edge version's eid as its 12 bytes (byte order = hex
// order), without deriving the hex text.

impl EdgeVersion<'_> {
    /// The eid's 12 bytes; [`EdgeVersion::eid`] is their lowercase hex.
    pub fn eid_raw(&self) -> Id12 {
        *self.st.eid(self.row().ident)
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
        self.st.uids.get(uid)
    }

    /// The uid of an interned id handed out by this snapshot.
    pub fn uid_name(&self, id: u32) -> &'a str {
        self.st.uids.name(id)
    }

    /// Ids of the uids whose `str::to_lowercase` form contains `needle_lower` (a lowercase
    /// needle), ascending. O(total uid bytes) after the first call on a uid set.
    pub fn uids_lowercase_containing(&self, needle_lower: &str) -> Vec<u32> {
        self.st.uids.lower().containing(needle_lower)
    }

    /// Node versions of the uid with id `uid_id` believed at `as_of_tt`, any valid time, in
    /// no particular order. O(versions of that uid).
    pub fn node_versions_of_uid(
        &self,
        uid_id: u32,
        as_of_tt: i64,
    ) -> impl Iterator<Item = NodeVersion<'a>> + 'a {
        let st = self.st;
        st.node_postings[uid_id as usize]
            .iter()
            .copied()
            .filter(move |&i| believed_at(&st.nodes[i as usize], as_of_tt))
            .map(move |i| NodeVersion { st, idx: i })
    }
}

impl NodeVersion<'_> {
    /// The snapshot-local interned id of the version's uid (see [`Snapshot::uid_id`]).
    pub fn uid_id(&self) -> u32 {
        self.row().ident
    }
}
