//! δ-temporal motif counting (operators.md §14, §14.5): the 36 two- and three-node three-edge
//! motifs `M_i_j` of Paranjape, Benson and Leskovec (WSDM 2017) and the five named motifs of
//! §14.2, in both tie modes, with the paper's linear-time counter structure:
//!
//! * two-node motifs: per unordered node pair, a sliding δ-window 3-counter over the pair's
//!   merged events;
//! * stars: per centre, pre/mid/post counters over its time-ordered incident events, with the
//!   same-neighbour (two-node) cases excluded per neighbour;
//! * triangles: per static triangle, the 3-counter over the triangle's merged events — or,
//!   when δ is short against the events' spread, per δ-wedge (the private `wedges` module).
//!
//! All passes are parallel (rayon) and sum 64-bit counters, so the result is bit-identical for
//! any thread count. No triple of events is ever enumerated.
//!
//! Events are the caller's window events (`t_a <= t < t_b`, after `node_filter`); `t_end` is
//! ignored. Self loops never participate.

#![allow(clippy::needless_range_loop)] // index-heavy counter code reads best with indices

use super::{event_order, node_count, TEdge, TieMode};
use rayon::prelude::*;

mod wedges;

/// `m[i-1][j-1]` = count of `M_i_j`.
pub type MotifMatrix = [[u64; 6]; 6];

/// The five named motifs of §14.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedMotif {
    /// `M_2node_pingpong`: u→v, v→u, u→v.
    Pingpong2,
    /// `M_path_3`: u→v, v→w, w→x (four distinct nodes).
    Path3,
    /// `M_star_out_3`: u→a, u→b, u→c (four distinct nodes).
    StarOut3,
    /// `M_triangle_acyclic_1`: u→v, u→w, v→w.
    TriangleAcyclic1,
    /// `M_triangle_cyclic`: u→v, v→w, w→u.
    TriangleCyclic,
}

impl NamedMotif {
    /// The spec name.
    pub fn name(self) -> &'static str {
        match self {
            NamedMotif::Pingpong2 => "M_2node_pingpong",
            NamedMotif::Path3 => "M_path_3",
            NamedMotif::StarOut3 => "M_star_out_3",
            NamedMotif::TriangleAcyclic1 => "M_triangle_acyclic_1",
            NamedMotif::TriangleCyclic => "M_triangle_cyclic",
        }
    }
}

/// Any single motif of §14 / §14.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motif {
    /// One of the five named motifs of §14.2 (`M_2node_pingpong`, …).
    Named(NamedMotif),
    /// `M_i_j`, `i`, `j` in `1..=6`.
    Catalogue(u8, u8),
}

impl Motif {
    /// Parses `"M_i_j"` or a named motif.
    pub fn parse(s: &str) -> Option<Motif> {
        Some(match s {
            "M_2node_pingpong" => Motif::Named(NamedMotif::Pingpong2),
            "M_path_3" => Motif::Named(NamedMotif::Path3),
            "M_star_out_3" => Motif::Named(NamedMotif::StarOut3),
            "M_triangle_acyclic_1" => Motif::Named(NamedMotif::TriangleAcyclic1),
            "M_triangle_cyclic" => Motif::Named(NamedMotif::TriangleCyclic),
            _ => {
                let b = s.as_bytes();
                if b.len() == 5
                    && &b[..2] == b"M_"
                    && b[3] == b'_'
                    && (b'1'..=b'6').contains(&b[2])
                    && (b'1'..=b'6').contains(&b[4])
                {
                    Motif::Catalogue(b[2] - b'0', b[4] - b'0')
                } else {
                    return None;
                }
            }
        })
    }
}

/// The catalogue class `(i, j)` (1-based) of an ordered triple of events given as
/// `(src, dst)`, per §14.5; `None` when a self loop participates or the triple touches fewer
/// than two or more than three nodes.
pub fn classify(e: [(u32, u32); 3]) -> Option<(usize, usize)> {
    if e.iter().any(|&(s, d)| s == d) {
        return None;
    }
    let (n0, n1) = e[0];
    let mut n2: Option<u32> = None;
    let mut lab = |x: u32| -> Option<u8> {
        if x == n0 {
            Some(0)
        } else if x == n1 {
            Some(1)
        } else {
            match n2 {
                None => {
                    n2 = Some(x);
                    Some(2)
                }
                Some(y) if y == x => Some(2),
                Some(_) => None,
            }
        }
    };
    let e2 = (lab(e[1].0)?, lab(e[1].1)?);
    let e3 = (lab(e[2].0)?, lab(e[2].1)?);
    let i = match e2 {
        (2, 1) => 1,
        (1, 2) => 2,
        (2, 0) => 3,
        (0, 2) => 4,
        (1, 0) => 5,
        (0, 1) => 6,
        _ => return None,
    };
    let j = match e3 {
        (0, 1) => 1,
        (1, 0) => 2,
        (0, 2) => 3,
        (2, 0) => 4,
        (1, 2) => 5,
        (2, 1) => 6,
        _ => return None,
    };
    Some((i, j))
}

/// Is `M_i_j` a two-node motif?
pub fn is_two_node(i: usize, j: usize) -> bool {
    matches!((i, j), (5, 1) | (5, 2) | (6, 1) | (6, 2))
}

/// Is `M_i_j` a triangle?
pub fn is_triangle(i: usize, j: usize) -> bool {
    matches!(
        (i, j),
        (1, 3) | (1, 4) | (2, 3) | (2, 4) | (3, 5) | (3, 6) | (4, 5) | (4, 6)
    )
}

// ---------------------------------------------------------------------------------------------
// Shared machinery.

/// One motif event over dense node ids; a slice of them passed to the `*_ordered` entry points
/// must be in the total `(t, eid)` order of §14.1 (the slice position is the event's rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MotifEvent {
    /// The event's time (`vt_s`), µs.
    pub t: i64,
    /// Dense id of the source node.
    pub src: u32,
    /// Dense id of the destination node.
    pub dst: u32,
}

/// The most events one count takes: ranks are kept in 31 bits (see `PEv`).
pub const MAX_EVENTS: usize = (1 << 31) - 1;

fn ranked(events: &[TEdge]) -> Vec<MotifEvent> {
    ranked_by(events, &event_order(events))
}

/// `events` as motif events in the given order (a permutation of their indices, e.g.
/// [`event_order`]'s): position `k` is `events[order[k]]`.
pub(crate) fn ranked_by(events: &[TEdge], order: &[u32]) -> Vec<MotifEvent> {
    order
        .iter()
        .map(|&i| {
            let e = &events[i as usize];
            MotifEvent {
                t: e.t,
                src: e.src,
                dst: e.dst,
            }
        })
        .collect()
}

/// End of the tie group starting at `k` (bounded by `limit`): in strict mode events of equal
/// time form one group, in ordered mode every event is its own group.
#[inline]
fn group_end<T>(seq: &[T], k: usize, limit: usize, strict: bool, t: impl Fn(&T) -> i64) -> usize {
    let mut g = k + 1;
    if strict {
        let tk = t(&seq[k]);
        while g < limit && t(&seq[g]) == tk {
            g += 1;
        }
    }
    g
}

/// The paper's sliding window over a labelled, `(t, eid)`-ordered sequence, updated per tie
/// group so that strict mode never pairs equal times: `c1[a]` counts window events of label
/// `a`, `c2[a][b]` the window pairs `x < y` with labels `(a, b)` and `t_y − t_x <= delta`.
/// Only pairs with `b ∈ partners(a)` are tracked (`partners` is symmetric); `close(c, c2)`
/// is called for each event of label `c` before it joins the window, with the pairs it
/// completes to triples.
fn slide<const L: usize>(
    seq: &[(i64, u8)],
    delta: i64,
    strict: bool,
    partners: impl Fn(usize) -> &'static [usize],
    mut close: impl FnMut(usize, &[[u64; L]; L]),
) {
    let mut c1 = [0u64; L];
    let mut c2 = [[0u64; L]; L];
    let n = seq.len();
    let tf = |e: &(i64, u8)| e.0;
    let mut start = 0;
    let mut i = 0;
    while i < n {
        let t = seq[i].0;
        let gend = group_end(seq, i, n, strict, tf);
        let lo = t.saturating_sub(delta);
        while start < i && seq[start].0 < lo {
            let g2 = group_end(seq, start, i, strict, tf);
            for e in &seq[start..g2] {
                c1[e.1 as usize] -= 1;
            }
            for e in &seq[start..g2] {
                let a = e.1 as usize;
                for &x in partners(a) {
                    c2[a][x] -= c1[x];
                }
            }
            start = g2;
        }
        for e in &seq[i..gend] {
            close(e.1 as usize, &c2);
        }
        for e in &seq[i..gend] {
            let c = e.1 as usize;
            for &a in partners(c) {
                c2[a][c] += c1[a];
            }
        }
        for e in &seq[i..gend] {
            c1[e.1 as usize] += 1;
        }
        i = gend;
    }
}

/// Every label `0..L` (the partners of any label in [`count3`]).
static ALL_LABELS: [usize; 6] = [0, 1, 2, 3, 4, 5];

/// The paper's sliding-window 3-counter: `c3[a][b][c] += #{x < y < z : labels (a, b, c),
/// t_z − t_x <= delta}` (strict: times strictly increasing).
fn count3<const L: usize>(
    seq: &[(i64, u8)],
    delta: i64,
    strict: bool,
    c3: &mut [[[u64; L]; L]; L],
) {
    slide::<L>(
        seq,
        delta,
        strict,
        |_| &ALL_LABELS[..L],
        |c, c2| {
            for a in 0..L {
                for b in 0..L {
                    c3[a][b][c] += c2[a][b];
                }
            }
        },
    );
}

fn add_matrix(mut a: MotifMatrix, b: MotifMatrix) -> MotifMatrix {
    for i in 0..6 {
        for j in 0..6 {
            a[i][j] += b[i][j];
        }
    }
    a
}

/// Compressed lists: `off[k]..off[k+1]` indexes `items`.
struct Csr<T> {
    off: Vec<usize>,
    items: Vec<T>,
}

impl<T: Copy + Default> Csr<T> {
    fn build(n: usize, entries: impl Iterator<Item = (usize, T)> + Clone) -> Csr<T> {
        let mut off = vec![0usize; n + 1];
        for (k, _) in entries.clone() {
            off[k + 1] += 1;
        }
        for k in 0..n {
            off[k + 1] += off[k];
        }
        let mut pos = off.clone();
        let mut items = vec![T::default(); off[n]];
        for (k, v) in entries {
            items[pos[k]] = v;
            pos[k] += 1;
        }
        Csr { off, items }
    }
    #[inline]
    fn get(&self, k: usize) -> &[T] {
        &self.items[self.off[k]..self.off[k + 1]]
    }
    fn len(&self) -> usize {
        self.off.len() - 1
    }
}

/// One non-self-loop event filed under its unordered node pair `(lo, hi)`: `r = rank << 1 |
/// (src != lo)`, so ordering by `r` is the `(t, eid)` order.
#[derive(Clone, Copy, Default)]
struct PEv {
    t: i64,
    hi: u32,
    r: u32,
}

impl PEv {
    /// Direction bit: 1 iff the event runs `hi → lo`.
    #[inline]
    fn dir(&self) -> u8 {
        (self.r & 1) as u8
    }
}

/// Events grouped by unordered node pair, pairs sorted by `(lo, hi)`: pair `p` is
/// `(lo[p], hi[p])` and its events, in rank order, are `items[off[p]..off[p + 1]]`.
struct PairIndex {
    lo: Vec<u32>,
    hi: Vec<u32>,
    off: Vec<usize>,
    items: Vec<PEv>,
}

impl PairIndex {
    #[inline]
    fn events(&self, p: usize) -> &[PEv] {
        &self.items[self.off[p]..self.off[p + 1]]
    }
    fn len(&self) -> usize {
        self.lo.len()
    }
}

/// Counting sort of the events by `lo` (a rank-ordered scatter), then a parallel sort of each
/// `lo` bucket by `(hi, rank)`; no hashing and no global comparison sort.
fn pair_index(ev: &[MotifEvent], n: usize) -> PairIndex {
    let mut bucket = vec![0usize; n + 1];
    for e in ev.iter().filter(|e| e.src != e.dst) {
        bucket[e.src.min(e.dst) as usize + 1] += 1;
    }
    for k in 0..n {
        bucket[k + 1] += bucket[k];
    }
    let mut pos = bucket.clone();
    let mut items = vec![PEv::default(); bucket[n]];
    for (rank, e) in ev.iter().enumerate() {
        if e.src == e.dst {
            continue;
        }
        let (lo, hi) = (e.src.min(e.dst), e.src.max(e.dst));
        let slot = &mut pos[lo as usize];
        items[*slot] = PEv {
            t: e.t,
            hi,
            r: ((rank as u32) << 1) | (e.src != lo) as u32,
        };
        *slot += 1;
    }
    let mut slices: Vec<&mut [PEv]> = Vec::with_capacity(n);
    let mut rest = items.as_mut_slice();
    for k in 0..n {
        let (head, tail) = rest.split_at_mut(bucket[k + 1] - bucket[k]);
        slices.push(head);
        rest = tail;
    }
    slices
        .par_iter_mut()
        .with_min_len(64)
        .for_each(|s| s.sort_unstable_by_key(|e| ((e.hi as u64) << 32) | e.r as u64));
    let (mut lo, mut hi, mut off) = (Vec::new(), Vec::new(), Vec::new());
    for u in 0..n {
        for k in bucket[u]..bucket[u + 1] {
            if k == bucket[u] || items[k - 1].hi != items[k].hi {
                lo.push(u as u32);
                hi.push(items[k].hi);
                off.push(k);
            }
        }
    }
    off.push(items.len());
    PairIndex { lo, hi, off, items }
}

// ---------------------------------------------------------------------------------------------
// Two-node motifs.

fn count_pairs(pi: &PairIndex, delta: i64, strict: bool) -> MotifMatrix {
    let c: [u64; 4] = (0..pi.len())
        .into_par_iter()
        .with_min_len(256)
        .fold(
            || ([0u64; 4], Vec::new()),
            |(mut acc, mut seq): ([u64; 4], Vec<(i64, u8)>), p| {
                let evs = pi.events(p);
                if evs.len() >= 3 {
                    seq.clear();
                    seq.extend(evs.iter().map(|e| (e.t, e.dir())));
                    let mut c3 = [[[0u64; 2]; 2]; 2];
                    count3::<2>(&seq, delta, strict, &mut c3);
                    for a in 0..2 {
                        for b in 0..2 {
                            for cc in 0..2 {
                                // index: (e2 reversed?, e3 reversed?)
                                acc[(((a != b) as usize) << 1) | (a != cc) as usize] +=
                                    c3[a][b][cc];
                            }
                        }
                    }
                }
                (acc, seq)
            },
        )
        .map(|(a, _)| a)
        .reduce(|| [0u64; 4], add_counts);
    let mut m = [[0u64; 6]; 6];
    // (same, same) = M_6_1, (same, rev) = M_6_2, (rev, same) = M_5_1, (rev, rev) = M_5_2.
    m[5][0] = c[0];
    m[5][1] = c[1];
    m[4][0] = c[2];
    m[4][1] = c[3];
    m
}

// ---------------------------------------------------------------------------------------------
// Stars.

#[derive(Clone, Copy, Default)]
struct NbState {
    pre: [u64; 2],
    post: [u64; 2],
    pre_pair: [[u64; 2]; 2],
    post_pair: [[u64; 2]; 2],
    mid_pair: [[u64; 2]; 2],
}

/// Incident (non-self-loop) events per centre node `c0..c1` (list `k` = node `c0 + k`) in
/// rank order: `(t, nbr, dir)`, dir 0 = out.
fn incidence(ev: &[MotifEvent], (c0, c1): (usize, usize)) -> Csr<(i64, u32, u8)> {
    let n = c1 - c0;
    let local = |x: u32| (x as usize).checked_sub(c0).filter(|&k| k < n);
    let mut off = vec![0usize; n + 1];
    for e in ev.iter().filter(|e| e.src != e.dst) {
        for k in [local(e.src), local(e.dst)].into_iter().flatten() {
            off[k + 1] += 1;
        }
    }
    for k in 0..n {
        off[k + 1] += off[k];
    }
    let mut pos = off.clone();
    let mut items = vec![(0i64, 0u32, 0u8); off[n]];
    for e in ev.iter().filter(|e| e.src != e.dst) {
        if let Some(s) = local(e.src) {
            items[pos[s]] = (e.t, e.dst, 0);
            pos[s] += 1;
        }
        if let Some(d) = local(e.dst) {
            items[pos[d]] = (e.t, e.src, 1);
            pos[d] += 1;
        }
    }
    Csr { off, items }
}

/// Incidence entries (16 bytes each) the star pass holds at once: centres are taken in
/// consecutive ranges of at most this many entries (a range of one centre may exceed it).
const STAR_CHUNK_ENTRIES: usize = 4 << 20;

/// The star pass over centre ranges of bounded incidence (each range's lists built by one
/// pass over the events), summed: integer sums per centre, so the result equals one pass
/// over all centres. Memory: one range's incidence instead of two entries per event.
fn count_stars_chunked(
    ev: &[MotifEvent],
    n: usize,
    delta: i64,
    strict: bool,
    cap: usize,
) -> MotifMatrix {
    let mut deg = vec![0usize; n];
    for e in ev.iter().filter(|e| e.src != e.dst) {
        deg[e.src as usize] += 1;
        deg[e.dst as usize] += 1;
    }
    let mut m = [[0u64; 6]; 6];
    let mut c0 = 0;
    while c0 < n {
        let (mut c1, mut size) = (c0, 0);
        while c1 < n && (c1 == c0 || size + deg[c1] <= cap) {
            size += deg[c1];
            c1 += 1;
        }
        m = add_matrix(m, count_stars(&incidence(ev, (c0, c1)), n, delta, strict));
        c0 = c1;
    }
    m
}

/// `tab[pos][a][b][c]` = the class of a star triple with centre `C`: pos 0 (pre) = events
/// (X,a),(X,b),(Y,c); pos 1 (mid) = (X,a),(Y,b),(X,c); pos 2 (post) = (Y,a),(X,b),(X,c);
/// dir 0 = centre→nbr.
type StarTable = [[[[(usize, usize); 2]; 2]; 2]; 3];
type StarCounts = [[[[u64; 2]; 2]; 2]; 3];

fn star_table() -> StarTable {
    let (c, x, y) = (100u32, 101u32, 102u32);
    let ed = |nb: u32, d: usize| if d == 0 { (c, nb) } else { (nb, c) };
    let mut tab = [[[[(0, 0); 2]; 2]; 2]; 3];
    for a in 0..2 {
        for b in 0..2 {
            for cc in 0..2 {
                let trip = [
                    [ed(x, a), ed(x, b), ed(y, cc)],
                    [ed(x, a), ed(y, b), ed(x, cc)],
                    [ed(y, a), ed(x, b), ed(x, cc)],
                ];
                for (pos, t) in trip.iter().enumerate() {
                    tab[pos][a][b][cc] = classify(*t).expect("star triple classifies");
                }
            }
        }
    }
    tab
}

/// Per-job scratch of the star pass. `local[x]` = `(centre + 1) << 32 | index` maps neighbour
/// `x` of the current centre to its dense local index; the centre stamp makes stale entries
/// of earlier centres invalid without clearing.
struct StarScratch {
    local: Vec<u64>,
    seq: Vec<(i64, u32, u8)>,
    st: Vec<NbState>,
}

/// Per-centre pre/mid/post counting; `out[pos][a][b][c]` accumulates exactly-two-neighbour
/// star triples (layout as in [`star_table`]).
fn star_centre(
    centre: usize,
    inc: &[(i64, u32, u8)],
    delta: i64,
    strict: bool,
    s: &mut StarScratch,
    out: &mut StarCounts,
) {
    let n = inc.len();
    if n < 3 {
        return;
    }
    let stamp = (centre as u64 + 1) << 32;
    let mut n_nbrs = 0u64;
    s.seq.clear();
    for &(t, nb, d) in inc {
        let l = &mut s.local[nb as usize];
        if *l & !0xFFFF_FFFF != stamp {
            *l = stamp | n_nbrs;
            n_nbrs += 1;
        }
        s.seq.push((t, *l as u32, d));
    }
    if n_nbrs < 2 {
        return;
    }
    s.st.clear();
    s.st.resize(n_nbrs as usize, NbState::default());
    let seq = &s.seq;
    let st = &mut s.st;
    let tf = |e: &(i64, u32, u8)| e.0;
    let mut pre_sum = [[0u64; 2]; 2];
    let mut post_sum = [[0u64; 2]; 2];
    let mut mid_sum = [[0u64; 2]; 2];
    let (mut start, mut end, mut i) = (0usize, 0usize, 0usize);
    while i < n {
        let t = seq[i].0;
        let gend = group_end(seq, i, n, strict, tf);
        let lo = t.saturating_sub(delta);
        let hi = t.saturating_add(delta);
        // Pop pre: events with t < t_i − δ.
        while start < i && seq[start].0 < lo {
            let g2 = group_end(seq, start, i, strict, tf);
            for &(_, nb, d) in &seq[start..g2] {
                st[nb as usize].pre[d as usize] -= 1;
            }
            for &(_, nb, d) in &seq[start..g2] {
                let s = &mut st[nb as usize];
                for x in 0..2 {
                    pre_sum[d as usize][x] -= s.pre[x];
                    s.pre_pair[d as usize][x] -= s.pre[x];
                }
            }
            start = g2;
        }
        // Push post: events with t <= t_i + δ.
        while end < n && seq[end].0 <= hi {
            let g2 = group_end(seq, end, n, strict, tf);
            for &(_, nb, d) in &seq[end..g2] {
                let s = &mut st[nb as usize];
                for x in 0..2 {
                    post_sum[x][d as usize] += s.post[x];
                    s.post_pair[x][d as usize] += s.post[x];
                }
            }
            for &(_, nb, d) in &seq[end..g2] {
                st[nb as usize].post[d as usize] += 1;
            }
            end = g2;
        }
        // Pop the current group from post.
        for &(_, nb, d) in &seq[i..gend] {
            st[nb as usize].post[d as usize] -= 1;
        }
        for &(_, nb, d) in &seq[i..gend] {
            let s = &mut st[nb as usize];
            for x in 0..2 {
                post_sum[d as usize][x] -= s.post[x];
                s.post_pair[d as usize][x] -= s.post[x];
            }
        }
        // Mid pairs (a, b) ending at the current group leave.
        for &(_, nb, d) in &seq[i..gend] {
            let s = &mut st[nb as usize];
            for x in 0..2 {
                mid_sum[x][d as usize] -= s.pre[x];
                s.mid_pair[x][d as usize] -= s.pre[x];
            }
        }
        // Count.
        for &(_, nb, d) in &seq[i..gend] {
            let s = &st[nb as usize];
            let d = d as usize;
            for a in 0..2 {
                for b in 0..2 {
                    out[0][a][b][d] += pre_sum[a][b] - s.pre_pair[a][b];
                    out[1][a][d][b] += mid_sum[a][b] - s.mid_pair[a][b];
                    out[2][d][a][b] += post_sum[a][b] - s.post_pair[a][b];
                }
            }
        }
        // Mid pairs starting at the current group enter.
        for &(_, nb, d) in &seq[i..gend] {
            let s = &mut st[nb as usize];
            for x in 0..2 {
                mid_sum[d as usize][x] += s.post[x];
                s.mid_pair[d as usize][x] += s.post[x];
            }
        }
        // Push the current group to pre.
        for &(_, nb, d) in &seq[i..gend] {
            let s = &mut st[nb as usize];
            for x in 0..2 {
                pre_sum[x][d as usize] += s.pre[x];
                s.pre_pair[x][d as usize] += s.pre[x];
            }
        }
        for &(_, nb, d) in &seq[i..gend] {
            st[nb as usize].pre[d as usize] += 1;
        }
        i = gend;
    }
}

/// Star counts of the centres of `inc` (any range of centres; neighbour ids below `n`).
fn count_stars(inc: &Csr<(i64, u32, u8)>, n: usize, delta: i64, strict: bool) -> MotifMatrix {
    let raw = (0..inc.len())
        .into_par_iter()
        .with_min_len(64)
        .fold(
            || {
                (
                    [[[[0u64; 2]; 2]; 2]; 3],
                    StarScratch {
                        local: vec![0; n],
                        seq: Vec::new(),
                        st: Vec::new(),
                    },
                )
            },
            |(mut acc, mut s), c| {
                star_centre(c, inc.get(c), delta, strict, &mut s, &mut acc);
                (acc, s)
            },
        )
        .map(|(a, _)| a)
        .reduce(
            || [[[[0u64; 2]; 2]; 2]; 3],
            |mut a, b| {
                for p in 0..3 {
                    for x in 0..2 {
                        for y in 0..2 {
                            for z in 0..2 {
                                a[p][x][y][z] += b[p][x][y][z];
                            }
                        }
                    }
                }
                a
            },
        );
    let tab = star_table();
    let mut m = [[0u64; 6]; 6];
    for p in 0..3 {
        for x in 0..2 {
            for y in 0..2 {
                for z in 0..2 {
                    let (i, j) = tab[p][x][y][z];
                    m[i - 1][j - 1] += raw[p][x][y][z];
                }
            }
        }
    }
    m
}

// ---------------------------------------------------------------------------------------------
// Triangles.

/// Label `l` of a triangle event: pair `l / 2` (0 = (A,B), 1 = (B,C), 2 = (A,C)), reversed iff
/// `l` is odd. For every label `c` (as e3), `tab[c]` lists the 8 `(a, b, class)` with `a`, `b`,
/// `c` on three distinct pairs, class = `(i−1)·6 + (j−1)` of the triple `(a, b, c)`.
fn triangle_table() -> TriTable {
    let (a, b, c) = (0u32, 1u32, 2u32);
    let ed = |l: usize| match l {
        0 => (a, b),
        1 => (b, a),
        2 => (b, c),
        3 => (c, b),
        4 => (a, c),
        _ => (c, a),
    };
    let mut tab = [[(0u8, 0u8, 0u8); 8]; 6];
    for z in 0..6 {
        let mut k = 0;
        for x in 0..6 {
            for y in 0..6 {
                if x / 2 != y / 2 && y / 2 != z / 2 && x / 2 != z / 2 {
                    let (i, j) = classify([ed(x), ed(y), ed(z)]).expect("triangle classifies");
                    tab[z][k] = (x as u8, y as u8, ((i - 1) * 6 + (j - 1)) as u8);
                    k += 1;
                }
            }
        }
        assert_eq!(k, 8);
    }
    tab
}

/// Labels on the other two pairs of pair `p` (a label `l` lies on pair `l / 2`).
static OTHER: [[usize; 4]; 3] = [[2, 3, 4, 5], [0, 1, 4, 5], [0, 1, 2, 3]];

/// The 3-counter of [`count3`] specialised to one static triangle: only triples on three
/// distinct pairs are tracked, and they are accumulated straight into the 36 classes.
fn count_triangle_seq(
    seq: &[(i64, u8)],
    delta: i64,
    strict: bool,
    tab: &TriTable,
    acc: &mut [u64; 36],
) {
    slide::<6>(
        seq,
        delta,
        strict,
        |a| &OTHER[a / 2],
        |c, c2| {
            for &(a, b, k) in &tab[c] {
                acc[k as usize] += c2[a as usize][b as usize];
            }
        },
    );
}

type TriTable = [[(u8, u8, u8); 8]; 6];

/// Window-free triangle counts in pair-major layout. For a pair `R` with other pairs `P < Q`,
/// slot `j = o·4 + da·2 + db` names the event pair `(a, b)` with `a` first: `o = 0` puts `a`
/// on `P` and `b` on `Q`, `o = 1` the reverse; `da`, `db` are the direction bits. The
/// per-triangle state `d[R][j]` = #(a, b) pairs so far; `t[c][j]` sums `d[c / 2][j]` over
/// the events of label `c`, i.e. counts triples `(a, b, c)`. Integer sums, mapped to the 36
/// classes once by [`WideTri::classes`].
struct WideTri {
    t: [[u64; 8]; 6],
}

/// The slot `(a, b)` of [`WideTri`] for pair `r`, slot `j`.
fn wide_slot(r: usize, j: usize) -> (usize, usize) {
    let (p, q) = match r {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let (first, second) = if j / 4 == 0 { (p, q) } else { (q, p) };
    (first * 2 + (j >> 1 & 1), second * 2 + (j & 1))
}

/// The per-triangle state of the [`WideTri`] counter over a rank-ordered event stream:
/// `c1[l]` = events of label `l` in the window, `d[R][j]` = pairs in the window at slot `j`
/// of pair `R`.
#[derive(Default)]
struct WideState {
    c1: [u64; 6],
    d: [[u64; 8]; 3],
}

impl WideState {
    /// The two pairs other than `q`, ascending.
    #[inline]
    fn others(q: usize) -> [usize; 2] {
        [(q == 0) as usize, 2 - (q == 2) as usize]
    }

    /// A new (latest) event of label `c`: counts the triples it closes into `wide`, then
    /// records the pairs `(a, c)` for `a` on each other pair `x`, slots `o·4 + da·2 + dir`
    /// of the remaining pair `3 − q − x`.
    #[inline]
    fn push(&mut self, c: usize, wide: &mut WideTri) {
        let (q, dir) = (c / 2, c & 1);
        let (dq, tc) = (&self.d[q], &mut wide.t[c]);
        for j in 0..8 {
            tc[j] += dq[j];
        }
        for x in Self::others(q) {
            let (r, o) = (3 - q - x, (x > q) as usize);
            self.d[r][o * 4 + dir] += self.c1[2 * x];
            self.d[r][o * 4 + 2 + dir] += self.c1[2 * x + 1];
        }
        self.c1[c] += 1;
    }

    /// The oldest event in the window, of label `a`, leaves: so do the pairs `(a, x)` it
    /// starts (every event in the window is later than it).
    #[inline]
    fn pop(&mut self, a: usize) {
        let (p, da) = (a / 2, a & 1);
        self.c1[a] -= 1;
        for x in Self::others(p) {
            let (r, o) = (3 - p - x, (p > x) as usize);
            self.d[r][o * 4 + da * 2] -= self.c1[2 * x];
            self.d[r][o * 4 + da * 2 + 1] -= self.c1[2 * x + 1];
        }
    }
}

impl WideTri {
    fn new() -> WideTri {
        WideTri { t: [[0; 8]; 6] }
    }

    /// Adds the counts to `acc` by class.
    fn classes(&self, tab: &TriTable, acc: &mut [u64; 36]) {
        for c in 0..6 {
            for j in 0..8 {
                let (a, b) = wide_slot(c / 2, j);
                let &(_, _, k) = tab[c]
                    .iter()
                    .find(|&&(x, y, _)| (x as usize, y as usize) == (a, b))
                    .expect("every wide slot is a triangle triple");
                acc[k as usize] += self.t[c][j];
            }
        }
    }
}

/// The rank-ordered events of one static triangle `(A, B, C)`: `r[k]` holds the rank keys
/// (`rank << 1 | dir`) of the events of pair `k` (0 = (A,B), 1 = (B,C), 2 = (A,C)), direction
/// bits relative to the pair's first node (A, B, A), so that an event's label is `2k + dir`,
/// followed by the sentinel `u32::MAX` (ranks are below 2^31, so `r < u32::MAX` for every
/// event); `t[k]` their times (no sentinel).
struct Triangle<'a> {
    r: [&'a [u32]; 3],
    t: [&'a [i64]; 3],
}

impl Triangle<'_> {
    /// Calls `f(k, i, label)` for the triangle's events (event `i` of list `k`) in rank order.
    #[inline]
    fn merge(&self, mut f: impl FnMut(usize, usize, usize)) {
        let mut pos = [0usize; 3];
        let mut h = [self.r[0][0], self.r[1][0], self.r[2][0]];
        let total = self.t.iter().map(|l| l.len()).sum::<usize>();
        for _ in 0..total {
            let k01 = (h[1] < h[0]) as usize;
            let k = if h[2] < h[k01] { 2 } else { k01 };
            f(k, pos[k], k * 2 + (h[k] & 1) as usize);
            pos[k] += 1;
            h[k] = self.r[k][pos[k]];
        }
    }

    /// Adds the triangle's δ-instances to `acc` (by class) or `wide`; `all_within` = every
    /// event pair of the whole input lies within δ.
    #[allow(clippy::too_many_arguments)]
    fn count(
        &self,
        delta: i64,
        strict: bool,
        all_within: bool,
        tabs: &(TriTable, [[[u8; 6]; 6]; 6]),
        seq: &mut Vec<(i64, u8)>,
        acc: &mut [u64; 36],
        wide: &mut WideTri,
    ) {
        let (tab, cls3) = tabs;
        let (r, t) = (&self.r, &self.t);
        if t.iter().all(|l| l.len() == 1) {
            // One event per pair: the only candidate triple.
            let mut tr = [(r[0][0], 0usize), (r[1][0], 1), (r[2][0], 2)];
            // Three-element sorting network (rank keys are distinct).
            for (x, y) in [(0, 1), (1, 2), (0, 1)] {
                if tr[y].0 < tr[x].0 {
                    tr.swap(x, y);
                }
            }
            let ts = tr.map(|(_, k)| t[k][0]);
            if ts[2] - ts[0] <= delta && (!strict || (ts[0] < ts[1] && ts[1] < ts[2])) {
                let [a, b, c] = tr.map(|(x, k)| k * 2 + (x & 1) as usize);
                acc[cls3[a][b][c] as usize] += 1;
            }
            return;
        }
        let within = all_within || {
            let first = t.iter().map(|l| l[0]).min().unwrap_or(0);
            let last = t.iter().map(|l| l[l.len() - 1]).max().unwrap_or(0);
            last - first <= delta
        };
        if !strict && within {
            // Every triple lies inside δ: a window-free 3-counter fused with the merge.
            let mut st = WideState::default();
            self.merge(|_, _, c| st.push(c, wide));
            return;
        }
        if !strict {
            // Ordered ties: one event per tie group, so the window pops event by event.
            seq.clear();
            self.merge(|k, i, c| seq.push((t[k][i], c as u8)));
            let mut st = WideState::default();
            let mut start = 0;
            for &(ti, c) in seq.iter() {
                // Stops at the current event at the latest (δ ≥ 1).
                let lo = ti.saturating_sub(delta);
                while seq[start].0 < lo {
                    st.pop(seq[start].1 as usize);
                    start += 1;
                }
                st.push(c as usize, wide);
            }
            return;
        }
        seq.clear();
        self.merge(|k, i, c| seq.push((t[k][i], c as u8)));
        count_triangle_seq(seq, delta, strict, tab, acc);
    }
}

/// A neighbour in the static graph: node `w` and the span `items[s..e]` of the pair's events.
#[derive(Clone, Copy, Default)]
struct Nb {
    w: u32,
    s: u32,
    e: u32,
}

/// Breadth-first order of the static graph (restarting at the lowest unvisited id), ids
/// assigned at enqueue time: `order[k]` = the node at position `k`. Neighbourhoods, and so
/// communities, get nearby positions, which is what the triangle pass's memory access needs
/// (counts do not depend on the numbering).
fn bfs_order(adj: &Csr<Nb>) -> Vec<u32> {
    let n = adj.len();
    let mut seen = vec![false; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut head = 0;
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        order.push(root as u32);
        while head < order.len() {
            let x = order[head] as usize;
            head += 1;
            for nb in adj.get(x) {
                if !seen[nb.w as usize] {
                    seen[nb.w as usize] = true;
                    order.push(nb.w);
                }
            }
        }
    }
    order
}

/// The triangle pass's static graph, in [`bfs_order`] positions. Position `x`'s forward
/// neighbours (higher-ranked in the (degree, id) orientation) are `w[off[x]..off[x + 1]]`,
/// with their pairs' events at `span[..]` in `r` (rank keys, direction bits relative to `x`,
/// each list followed by a `u32::MAX` sentinel) and `t`, copied into `x`'s block. Split arrays keep the probe scan and the per-triangle
/// merge on dense data.
struct TriGraph {
    off: Vec<usize>,
    w: Vec<u32>,
    span: Vec<(u32, u32)>,
    r: Vec<u32>,
    t: Vec<i64>,
}

impl TriGraph {
    #[inline]
    fn range(&self, x: usize) -> std::ops::Range<usize> {
        self.off[x]..self.off[x + 1]
    }

    /// The rank keys with their sentinel, and the times, of the events at `(s, e)`.
    #[inline]
    fn events(&self, (s, e): (u32, u32)) -> (&[u32], &[i64]) {
        (
            &self.r[s as usize..=e as usize],
            &self.t[s as usize..e as usize],
        )
    }
}

fn tri_graph(pi: &PairIndex, n: usize) -> TriGraph {
    // Static undirected graph from the pairs (counting sort by endpoint).
    let mut off = vec![0usize; n + 1];
    for p in 0..pi.len() {
        off[pi.lo[p] as usize + 1] += 1;
        off[pi.hi[p] as usize + 1] += 1;
    }
    for k in 0..n {
        off[k + 1] += off[k];
    }
    let mut fill = off.clone();
    let mut nbs = vec![Nb::default(); off[n]];
    for p in 0..pi.len() {
        let (a, b) = (pi.lo[p] as usize, pi.hi[p] as usize);
        let (s, e) = (pi.off[p] as u32, pi.off[p + 1] as u32);
        nbs[fill[a]] = Nb { w: b as u32, s, e };
        fill[a] += 1;
        nbs[fill[b]] = Nb { w: a as u32, s, e };
        fill[b] += 1;
    }
    let adj = Csr { off, items: nbs };
    let deg: Vec<u32> = (0..n).map(|x| adj.get(x).len() as u32).collect();
    let order = bfs_order(&adj);
    let mut pos = vec![0u32; n];
    for (k, &x) in order.iter().enumerate() {
        pos[x as usize] = k as u32;
    }
    // Orientation by (degree, id): keep the higher-ranked neighbours. First their positions
    // and pair spans (the static graph is then dropped), then their events copied in.
    let rank = |x: u32| ((deg[x as usize] as u64) << 32) | x as u64;
    let mut off = Vec::with_capacity(n + 1);
    off.push(0);
    let mut w = Vec::with_capacity(pi.len());
    // The pair's event span, its start's top bit set when x is the pair's hi node (the
    // stored direction, relative to lo, is then flipped). Event offsets stay below 2^31:
    // `PEv::r` already holds `rank << 1` in a u32.
    let mut span: Vec<(u32, u32)> = Vec::with_capacity(pi.len());
    for &x in &order {
        for nb in adj.get(x as usize).iter().filter(|nb| rank(nb.w) > rank(x)) {
            w.push(pos[nb.w as usize]);
            span.push((nb.s | u32::from(x > nb.w) << 31, nb.e));
        }
        off.push(w.len());
    }
    drop((adj, deg, order, pos));
    let mut r = Vec::with_capacity(pi.items.len() + pi.len());
    let mut t = Vec::with_capacity(pi.items.len() + pi.len());
    for sp in span.iter_mut() {
        let (flip, s, e) = (sp.0 >> 31, (sp.0 & !(1 << 31)) as usize, sp.1 as usize);
        let at = r.len() as u32;
        let evs = &pi.items[s..e];
        r.extend(evs.iter().map(|e| e.r ^ flip));
        r.push(u32::MAX);
        t.extend(evs.iter().map(|e| e.t));
        t.push(i64::MAX);
        *sp = (at, r.len() as u32 - 1);
    }
    TriGraph { off, w, span, r, t }
}

/// Takes the pair index, which is dropped once the triangle graph holds its events.
fn count_triangles(pi: PairIndex, n: usize, delta: i64, strict: bool) -> MotifMatrix {
    let all_within = match (
        pi.items.iter().map(|e| e.t).min(),
        pi.items.iter().map(|e| e.t).max(),
    ) {
        (Some(lo), Some(hi)) => hi - lo <= delta,
        _ => true,
    };
    let g = tri_graph(&pi, n);
    drop(pi);
    let tab = triangle_table();
    // Full class table for the single-event-per-pair fast path.
    let mut cls3 = [[[255u8; 6]; 6]; 6];
    for (c, row) in tab.iter().enumerate() {
        for &(a, b, k) in row {
            cls3[a as usize][b as usize][c] = k;
        }
    }
    let tabs = (tab, cls3);
    // Static triangles (u, v, w) with rank(u) < rank(v) < rank(w): set N+(u) in a bitmap (an
    // L1-resident membership test) with each member's pair span in `span_of`, then scan N+(v)
    // for every v in N+(u); the bits are cleared again before the next u.
    let raw: [u64; 36] = (0..n)
        .into_par_iter()
        .with_min_len(64)
        .fold(
            || {
                (
                    [0u64; 36],
                    vec![0u64; n / 64 + 1],
                    vec![(0u32, 0u32); n],
                    Vec::<(i64, u8)>::new(),
                    WideTri::new(),
                )
            },
            |(mut acc, mut bits, mut span_of, mut seq, mut wide), u| {
                let nu = g.range(u);
                if nu.len() < 2 {
                    return (acc, bits, span_of, seq, wide);
                }
                for k in nu.clone() {
                    let x = g.w[k] as usize;
                    bits[x / 64] |= 1 << (x % 64);
                    span_of[x] = g.span[k];
                }
                for kv in nu.clone() {
                    let (r_uv, t_uv) = g.events(g.span[kv]);
                    for kw in g.range(g.w[kv] as usize) {
                        let x = g.w[kw] as usize;
                        if bits[x / 64] & (1 << (x % 64)) == 0 {
                            continue;
                        }
                        let (r_vw, t_vw) = g.events(g.span[kw]);
                        let (r_uw, t_uw) = g.events(span_of[x]);
                        let tri = Triangle {
                            r: [r_uv, r_vw, r_uw],
                            t: [t_uv, t_vw, t_uw],
                        };
                        tri.count(
                            delta, strict, all_within, &tabs, &mut seq, &mut acc, &mut wide,
                        );
                    }
                }
                for k in nu {
                    bits[g.w[k] as usize / 64] = 0;
                }
                (acc, bits, span_of, seq, wide)
            },
        )
        .map(|(mut acc, _, _, _, wide)| {
            wide.classes(&tabs.0, &mut acc);
            acc
        })
        .reduce(|| [0u64; 36], add_counts);
    class_matrix(raw)
}

/// Element-wise sum of two count arrays (the reduce step of the parallel passes).
fn add_counts<const N: usize>(mut a: [u64; N], b: [u64; N]) -> [u64; N] {
    for k in 0..N {
        a[k] += b[k];
    }
    a
}

/// Class counts indexed `(i − 1)·6 + (j − 1)` as the matrix `m[i − 1][j − 1]`.
fn class_matrix(raw: [u64; 36]) -> MotifMatrix {
    let mut m = [[0u64; 6]; 6];
    for k in 0..36 {
        m[k / 6][k % 6] = raw[k];
    }
    m
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

#[derive(Clone, Copy)]
struct Parts {
    pairs: bool,
    stars: bool,
    triangles: bool,
}

fn matrix_parts(
    ev: &[MotifEvent],
    n: usize,
    delta: i64,
    tie: TieMode,
    parts: Parts,
) -> MotifMatrix {
    let strict = tie == TieMode::Strict;
    let stars = || {
        if parts.stars {
            count_stars_chunked(ev, n, delta, strict, STAR_CHUNK_ENTRIES)
        } else {
            [[0u64; 6]; 6]
        }
    };
    let rest = || {
        let mut m = [[0u64; 6]; 6];
        if parts.pairs || parts.triangles {
            let pi = pair_index(ev, n);
            if parts.pairs {
                m = add_matrix(m, count_pairs(&pi, delta, strict));
            }
            if parts.triangles {
                let by_wedges = wedges::count_triangles_by_wedges(
                    ev,
                    &pi,
                    n,
                    delta,
                    strict,
                    wedges::WEDGES_PER_EVENT,
                );
                let tri = by_wedges.unwrap_or_else(|| count_triangles(pi, n, delta, strict));
                m = add_matrix(m, tri);
            }
        }
        m
    };
    // The star pass and the pair/triangle passes share nothing but the events: run them side
    // by side so that the sequential index builds of one overlap the parallel loops of the
    // other (the sums are the same for any schedule). The star pass holds one bounded range
    // of centres at a time, so running it alongside adds little to the pair pass's memory.
    let (stars, rest) = rayon::join(stars, rest);
    add_matrix(stars, rest)
}

/// The motif events of §14.1: edges whose `t` (= `vt_s`) lies in `[t_a, t_b)` and, with a
/// node filter (not `None`), whose both endpoints are in it (`Some(&[])` keeps none). The
/// filter is a membership predicate over dense ids, e.g. a bitmap lookup.
pub fn select_events(
    edges: &[TEdge],
    t_a: i64,
    t_b: i64,
    filter: Option<&dyn Fn(u32) -> bool>,
) -> Vec<TEdge> {
    edges
        .iter()
        .filter(|e| t_a <= e.t && e.t < t_b)
        .filter(|e| filter.is_none_or(|f| f(e.src) && f(e.dst)))
        .copied()
        .collect()
}

/// All 36 counts `M_i_j` (`m[i-1][j-1]`) in one pass over the events (any order; sorted
/// internally by `(t, eid)`).
pub fn count_all(events: &[TEdge], delta: i64, tie: TieMode) -> MotifMatrix {
    count_all_ordered(&ranked(events), node_count(events), delta, tie)
}

/// [`count_all`] over events already in `(t, eid)` order, node ids below `n`.
pub fn count_all_ordered(ev: &[MotifEvent], n: usize, delta: i64, tie: TieMode) -> MotifMatrix {
    let all = Parts {
        pairs: true,
        stars: true,
        triangles: true,
    };
    matrix_parts(ev, n, delta, tie, all)
}

/// Sum of the matrix (the `count` of `motif: "all"`).
pub fn matrix_total(m: &MotifMatrix) -> u64 {
    m.iter().flatten().sum()
}

/// Count of one motif. Catalogue motifs run only the pass of their class; the named motifs map
/// to catalogue entries (`M_triangle_cyclic` = `M_2_4`, `M_triangle_acyclic_1` = `M_4_5`,
/// `M_2node_pingpong` = `M_5_1`) or are derived by inclusion–exclusion from linear-time totals:
/// `M_star_out_3` = out-triples per centre − `M_4_1` − `M_4_3` − `M_6_3` − `M_6_1`, and
/// `M_path_3` = chained triples (dst(e1) = src(e2), dst(e2) = src(e3)) − `M_2_4` − `M_5_3` −
/// `M_2_6` − `M_5_1`.
pub fn count_motif(events: &[TEdge], delta: i64, tie: TieMode, motif: Motif) -> u64 {
    count_motif_ordered(&ranked(events), node_count(events), delta, tie, motif)
}

/// [`count_motif`] over events already in `(t, eid)` order, node ids below `n`.
pub fn count_motif_ordered(
    ev: &[MotifEvent],
    n: usize,
    delta: i64,
    tie: TieMode,
    motif: Motif,
) -> u64 {
    let strict = tie == TieMode::Strict;
    let only = |pairs, stars, triangles| Parts {
        pairs,
        stars,
        triangles,
    };
    match motif {
        Motif::Catalogue(i, j) => {
            let (i, j) = (i as usize, j as usize);
            assert!(
                (1..=6).contains(&i) && (1..=6).contains(&j),
                "M_i_j out of range"
            );
            let parts = if is_two_node(i, j) {
                only(true, false, false)
            } else if is_triangle(i, j) {
                only(false, false, true)
            } else {
                only(false, true, false)
            };
            matrix_parts(ev, n, delta, tie, parts)[i - 1][j - 1]
        }
        Motif::Named(NamedMotif::TriangleCyclic) => {
            matrix_parts(ev, n, delta, tie, only(false, false, true))[1][3]
        }
        Motif::Named(NamedMotif::TriangleAcyclic1) => {
            matrix_parts(ev, n, delta, tie, only(false, false, true))[3][4]
        }
        Motif::Named(NamedMotif::Pingpong2) => {
            matrix_parts(ev, n, delta, tie, only(true, false, false))[4][0]
        }
        Motif::Named(NamedMotif::StarOut3) => {
            let m = matrix_parts(ev, n, delta, tie, only(true, true, false));
            let out = Csr::build(
                n,
                ev.iter()
                    .filter(|e| e.src != e.dst)
                    .map(|e| (e.src as usize, (e.t, 0u8))),
            );
            let total: u64 = (0..n)
                .into_par_iter()
                .with_min_len(64)
                .map(|u| {
                    let mut c3 = [[[0u64; 1]; 1]; 1];
                    count3::<1>(out.get(u), delta, strict, &mut c3);
                    c3[0][0][0]
                })
                .sum();
            total - m[3][0] - m[3][2] - m[5][2] - m[5][0]
        }
        Motif::Named(NamedMotif::Path3) => {
            let m = matrix_parts(ev, n, delta, tie, only(true, true, true));
            chained_triples(ev, n, delta, strict) - m[1][3] - m[4][2] - m[1][5] - m[4][0]
        }
    }
}

/// Counts the five named motifs at once (order of [`NamedMotif`] variants as listed in §14:
/// pingpong, path_3, star_out_3, triangle_acyclic_1, triangle_cyclic).
pub fn count_named_all(events: &[TEdge], delta: i64, tie: TieMode) -> [u64; 5] {
    [
        NamedMotif::Pingpong2,
        NamedMotif::Path3,
        NamedMotif::StarOut3,
        NamedMotif::TriangleAcyclic1,
        NamedMotif::TriangleCyclic,
    ]
    .map(|nm| count_motif(events, delta, tie, Motif::Named(nm)))
}

/// `#{(e1, e2, e3) : e1 < e2 < e3, dst(e1) = src(e2), dst(e2) = src(e3), no self loop,
/// t3 − t1 <= δ}`: per middle event, a two-pointer count over the in-events of its source and
/// the out-events of its destination inside its δ-neighbourhood.
fn chained_triples(ev: &[MotifEvent], n: usize, delta: i64, strict: bool) -> u64 {
    let nl = || ev.iter().enumerate().filter(|(_, e)| e.src != e.dst);
    let out: Csr<u32> = Csr::build(n, nl().map(|(r, e)| (e.src as usize, r as u32)));
    let inn: Csr<u32> = Csr::build(n, nl().map(|(r, e)| (e.dst as usize, r as u32)));
    (0..ev.len())
        .into_par_iter()
        .with_min_len(256)
        .map(|r2| {
            let e2 = ev[r2];
            if e2.src == e2.dst {
                return 0u64;
            }
            let t2 = e2.t;
            let a_list = inn.get(e2.src as usize);
            let b_list = out.get(e2.dst as usize);
            // e1: rank < r2 (strict: t < t2), t >= t2 − δ.
            let a_hi = if strict {
                a_list.partition_point(|&r| ev[r as usize].t < t2)
            } else {
                a_list.partition_point(|&r| (r as usize) < r2)
            };
            let lo = t2.saturating_sub(delta);
            let a_lo = a_list[..a_hi].partition_point(|&r| ev[r as usize].t < lo);
            // e3: rank > r2 (strict: t > t2), t <= t2 + δ.
            let b_lo = if strict {
                b_list.partition_point(|&r| ev[r as usize].t <= t2)
            } else {
                b_list.partition_point(|&r| (r as usize) <= r2)
            };
            let hi = t2.saturating_add(delta);
            let b_hi = b_lo + b_list[b_lo..].partition_point(|&r| ev[r as usize].t <= hi);
            let bs = &b_list[b_lo..b_hi];
            let mut j = 0usize;
            let mut cnt = 0u64;
            for &ra in &a_list[a_lo..a_hi] {
                let lim = ev[ra as usize].t.saturating_add(delta);
                while j < bs.len() && ev[bs[j] as usize].t <= lim {
                    j += 1;
                }
                cnt += j as u64;
            }
            cnt
        })
        .sum()
}

/// `m` random events over `n` nodes with times in `[0, t_max)` — ties and self loops
/// included — in time order (so a position is a rank), for unit tests.
#[cfg(test)]
pub(crate) fn random_ranked(
    r: &mut tgms_testkit::Rng,
    n: usize,
    m: usize,
    t_max: u64,
) -> Vec<MotifEvent> {
    let mut ev: Vec<MotifEvent> = (0..m)
        .map(|_| MotifEvent {
            t: r.below(t_max) as i64,
            src: r.below(n as u64) as u32,
            dst: r.below(n as u64) as u32,
        })
        .collect();
    ev.sort_by_key(|e| e.t);
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The star pass over centre ranges of any size equals one pass over every centre.
    #[test]
    fn chunked_star_pass_equals_one_pass() {
        let mut r = tgms_testkit::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut non_zero = 0;
        for round in 0..20 {
            let n = 2 + r.below(40u64) as usize;
            let m = r.below(400u64) as usize;
            let ev = random_ranked(&mut r, n, m, 200);
            for strict in [false, true] {
                let delta = r.below(30u64) as i64;
                let whole = count_stars(&incidence(&ev, (0, n)), n, delta, strict);
                for cap in [0, 1, 5, 17, 100, usize::MAX] {
                    let got = count_stars_chunked(&ev, n, delta, strict, cap);
                    assert_eq!(got, whole, "round {round} cap {cap} strict {strict}");
                }
                non_zero += usize::from(matrix_total(&whole) > 0);
            }
        }
        assert!(non_zero >= 20, "only {non_zero} non-zero star counts");
    }
}
