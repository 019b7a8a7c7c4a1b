//! δ-temporal motif counting (operators.md §14, §14.5): the 36 two- and three-node three-edge
//! motifs `M_i_j` of Paranjape, Benson and Leskovec (WSDM 2017) and the five named motifs of
//! §14.2, in both tie modes, with the paper's linear-time counter structure:
//!
//! * two-node motifs: per unordered node pair, a sliding δ-window 3-counter over the pair's
//!   merged events;
//! * stars: per centre, pre/mid/post counters over its time-ordered incident events, with the
//!   same-neighbour (two-node) cases excluded per neighbour;
//! * triangles: per static triangle, the 3-counter over the triangle's merged events.
//!
//! All passes are parallel (rayon) and sum 64-bit counters, so the result is bit-identical for
//! any thread count. No triple of events is ever enumerated.
//!
//! Events are the caller's window events (`t_a <= t < t_b`, after `node_filter`); `t_end` is
//! ignored. Self loops never participate.

#![allow(clippy::needless_range_loop)] // index-heavy counter code reads best with indices

use super::{event_order, node_count, TEdge, TieMode};
use rayon::prelude::*;

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

#[derive(Clone, Copy)]
struct Ev {
    t: i64,
    src: u32,
    dst: u32,
}

fn ranked(events: &[TEdge]) -> Vec<Ev> {
    event_order(events)
        .into_iter()
        .map(|i| {
            let e = &events[i as usize];
            Ev {
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

/// The paper's sliding-window 3-counter over a labelled, `(t, eid)`-ordered sequence:
/// `c3[a][b][c] += #{x < y < z : labels (a, b, c), t_z − t_x <= delta}` (strict: times strictly
/// increasing). Updates are done per tie group so that strict mode never pairs equal times.
fn count3<const L: usize>(
    seq: &[(i64, u8)],
    delta: i64,
    strict: bool,
    c3: &mut [[[u64; L]; L]; L],
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
                for l in 0..L {
                    c2[a][l] -= c1[l];
                }
            }
            start = g2;
        }
        for e in &seq[i..gend] {
            let c = e.1 as usize;
            for a in 0..L {
                for b in 0..L {
                    c3[a][b][c] += c2[a][b];
                }
            }
        }
        for e in &seq[i..gend] {
            let c = e.1 as usize;
            for a in 0..L {
                c2[a][c] += c1[a];
            }
        }
        for e in &seq[i..gend] {
            c1[e.1 as usize] += 1;
        }
        i = gend;
    }
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

/// Events grouped by unordered node pair: `pairs[p] = (lo, hi)`, `ranks.get(p)` = the ranks of
/// the pair's events in `(t, eid)` order.
struct PairIndex {
    pairs: Vec<(u32, u32)>,
    ranks: Csr<u32>,
}

fn pair_index(ev: &[Ev]) -> PairIndex {
    let mut keyed: Vec<(u64, u32)> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| e.src != e.dst)
        .map(|(r, e)| {
            let (a, b) = if e.src < e.dst {
                (e.src, e.dst)
            } else {
                (e.dst, e.src)
            };
            (((a as u64) << 32) | b as u64, r as u32)
        })
        .collect();
    keyed.par_sort_unstable();
    let mut pairs = Vec::new();
    let mut off = vec![0usize];
    let mut items = Vec::with_capacity(keyed.len());
    for (k, (key, r)) in keyed.iter().enumerate() {
        if k == 0 || keyed[k - 1].0 != *key {
            if k > 0 {
                off.push(items.len());
            }
            pairs.push(((key >> 32) as u32, *key as u32));
        }
        items.push(*r);
    }
    if !keyed.is_empty() {
        off.push(items.len());
    }
    PairIndex {
        pairs,
        ranks: Csr { off, items },
    }
}

// ---------------------------------------------------------------------------------------------
// Two-node motifs.

fn count_pairs(ev: &[Ev], pi: &PairIndex, delta: i64, strict: bool) -> MotifMatrix {
    let c: [u64; 4] = (0..pi.pairs.len())
        .into_par_iter()
        .with_min_len(64)
        .fold(
            || ([0u64; 4], Vec::new()),
            |(mut acc, mut seq): ([u64; 4], Vec<(i64, u8)>), p| {
                let lo = pi.pairs[p].0;
                seq.clear();
                seq.extend(pi.ranks.get(p).iter().map(|&r| {
                    let e = &ev[r as usize];
                    (e.t, (e.src != lo) as u8)
                }));
                if seq.len() >= 3 {
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
        .reduce(
            || [0u64; 4],
            |mut a, b| {
                for k in 0..4 {
                    a[k] += b[k];
                }
                a
            },
        );
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

/// Incident (non-self-loop) events per node in rank order: `(t, nbr, dir)`, dir 0 = out.
fn incidence(ev: &[Ev], n: usize) -> Csr<(i64, u32, u8)> {
    let it = ev.iter().filter(|e| e.src != e.dst).flat_map(|e| {
        [
            (e.src as usize, (e.t, e.dst, 0u8)),
            (e.dst as usize, (e.t, e.src, 1u8)),
        ]
    });
    Csr::build(n, it)
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

struct StarScratch {
    nbrs: Vec<u32>,
    seq: Vec<(i64, u32, u8)>,
    st: Vec<NbState>,
}

/// Per-centre pre/mid/post counting; `out[pos][a][b][c]` accumulates exactly-two-neighbour
/// star triples (layout as in [`star_table`]).
fn star_centre(
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
    s.nbrs.clear();
    s.nbrs.extend(inc.iter().map(|e| e.1));
    s.nbrs.sort_unstable();
    s.nbrs.dedup();
    if s.nbrs.len() < 2 {
        return;
    }
    s.seq.clear();
    let nbrs = &s.nbrs;
    s.seq.extend(
        inc.iter()
            .map(|&(t, nb, d)| (t, nbrs.binary_search(&nb).unwrap() as u32, d)),
    );
    s.st.clear();
    s.st.resize(s.nbrs.len(), NbState::default());
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

fn count_stars(inc: &Csr<(i64, u32, u8)>, delta: i64, strict: bool) -> MotifMatrix {
    let raw = (0..inc.len())
        .into_par_iter()
        .with_min_len(16)
        .fold(
            || {
                (
                    [[[[0u64; 2]; 2]; 2]; 3],
                    StarScratch {
                        nbrs: Vec::new(),
                        seq: Vec::new(),
                        st: Vec::new(),
                    },
                )
            },
            |(mut acc, mut s), c| {
                star_centre(inc.get(c), delta, strict, &mut s, &mut acc);
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
fn triangle_table() -> [[(u8, u8, u8); 8]; 6] {
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

/// The 3-counter of [`count3`] specialised to one static triangle: only triples on three
/// distinct pairs are tracked, and they are accumulated straight into the 36 classes.
fn count_triangle_seq(
    seq: &[(i64, u8)],
    delta: i64,
    strict: bool,
    tab: &[[(u8, u8, u8); 8]; 6],
    acc: &mut [u64; 36],
) {
    // Labels on the other two pairs of label `l`.
    const OTHER: [[usize; 4]; 3] = [[2, 3, 4, 5], [0, 1, 4, 5], [0, 1, 2, 3]];
    let mut c1 = [0u64; 6];
    let mut c2 = [[0u64; 6]; 6];
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
                for &x in &OTHER[a / 2] {
                    c2[a][x] -= c1[x];
                }
            }
            start = g2;
        }
        for e in &seq[i..gend] {
            for &(a, b, k) in &tab[e.1 as usize] {
                acc[k as usize] += c2[a as usize][b as usize];
            }
        }
        for e in &seq[i..gend] {
            let c = e.1 as usize;
            for &a in &OTHER[c / 2] {
                c2[a][c] += c1[a];
            }
        }
        for e in &seq[i..gend] {
            c1[e.1 as usize] += 1;
        }
        i = gend;
    }
}

fn count_triangles(ev: &[Ev], pi: &PairIndex, n: usize, delta: i64, strict: bool) -> MotifMatrix {
    // Static undirected graph from the pairs.
    let adj: Csr<(u32, u32)> = Csr::build(
        n,
        pi.pairs
            .iter()
            .enumerate()
            .flat_map(|(p, &(a, b))| [(a as usize, (b, p as u32)), (b as usize, (a, p as u32))]),
    );
    // Orientation by (degree, id): keep the higher-ranked neighbours, sorted by id (the pair
    // list is sorted by (lo, hi), so each adjacency list is already sorted by neighbour id).
    let rank = |x: u32| (adj.get(x as usize).len(), x);
    let fwd: Csr<(u32, u32)> = Csr::build(
        n,
        (0..n).flat_map(|u| {
            adj.get(u)
                .iter()
                .filter(move |&&(v, _)| rank(v) > rank(u as u32))
                .map(move |&e| (u, e))
        }),
    );
    let tab = triangle_table();
    // Full class table for the single-event-per-pair fast path.
    let mut cls3 = [[[255u8; 6]; 6]; 6];
    for (c, row) in tab.iter().enumerate() {
        for &(a, b, k) in row {
            cls3[a as usize][b as usize][c] = k;
        }
    }
    // Static triangles (u, v, w) with rank(u) < rank(v) < rank(w): mark N+(u) (stamp u + 1 and
    // the pair (u,w)), then scan N+(v) for every v in N+(u). Stamps are unique per u, so a
    // scratch array serves a whole rayon job without clearing.
    let raw: [u64; 36] = (0..n)
        .into_par_iter()
        .with_min_len(64)
        .map_init(
            || (vec![0u64; n], Vec::<(i64, u8)>::new()),
            |(mark, seq), u| {
                let mut acc = [0u64; 36];
                let nu = fwd.get(u);
                if nu.len() < 2 {
                    return acc;
                }
                let stamp = (u as u64 + 1) << 32;
                for &(w, p_uw) in nu {
                    mark[w as usize] = stamp | p_uw as u64;
                }
                for &(v, p_uv) in nu {
                    for &(w, p_vw) in fwd.get(v as usize) {
                        let mk = mark[w as usize];
                        if mk & !0xFFFF_FFFF != stamp {
                            continue;
                        }
                        let p_uw = mk as u32;
                        // Triangle (A,B,C) = (u,v,w), pairs (u,v), (v,w), (u,w).
                        let lists = [
                            (pi.ranks.get(p_uv as usize), u as u32),
                            (pi.ranks.get(p_vw as usize), v),
                            (pi.ranks.get(p_uw as usize), u as u32),
                        ];
                        let label = |p: usize, r: u32| {
                            (p * 2) as u8 + (ev[r as usize].src != lists[p].1) as u8
                        };
                        if lists.iter().all(|l| l.0.len() == 1) {
                            // One event per pair: the only candidate triple.
                            let mut tr = [
                                (lists[0].0[0], 0usize),
                                (lists[1].0[0], 1),
                                (lists[2].0[0], 2),
                            ];
                            tr.sort_unstable();
                            let ts = tr.map(|(r, _)| ev[r as usize].t);
                            let ok = ts[2] - ts[0] <= delta
                                && (!strict || (ts[0] < ts[1] && ts[1] < ts[2]));
                            if ok {
                                let [a, b, c] = tr.map(|(r, p)| label(p, r) as usize);
                                acc[cls3[a][b][c] as usize] += 1;
                            }
                            continue;
                        }
                        seq.clear();
                        let mut pos = [0usize; 3];
                        loop {
                            let mut best = u32::MAX;
                            let mut bp = 3;
                            for p in 0..3 {
                                if let Some(&r) = lists[p].0.get(pos[p]) {
                                    if r < best {
                                        best = r;
                                        bp = p;
                                    }
                                }
                            }
                            if bp == 3 {
                                break;
                            }
                            pos[bp] += 1;
                            seq.push((ev[best as usize].t, label(bp, best)));
                        }
                        count_triangle_seq(seq, delta, strict, &tab, &mut acc);
                    }
                }
                acc
            },
        )
        .reduce(
            || [0u64; 36],
            |mut a, b| {
                for k in 0..36 {
                    a[k] += b[k];
                }
                a
            },
        );
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

fn matrix_parts(ev: &[Ev], n: usize, delta: i64, tie: TieMode, parts: Parts) -> MotifMatrix {
    let strict = tie == TieMode::Strict;
    let mut m = [[0u64; 6]; 6];
    let pi = if parts.pairs || parts.triangles {
        Some(pair_index(ev))
    } else {
        None
    };
    if parts.pairs {
        m = add_matrix(m, count_pairs(ev, pi.as_ref().unwrap(), delta, strict));
    }
    if parts.stars {
        let inc = incidence(ev, n);
        m = add_matrix(m, count_stars(&inc, delta, strict));
    }
    if parts.triangles {
        m = add_matrix(
            m,
            count_triangles(ev, pi.as_ref().unwrap(), n, delta, strict),
        );
    }
    m
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
    let ev = ranked(events);
    let all = Parts {
        pairs: true,
        stars: true,
        triangles: true,
    };
    matrix_parts(&ev, node_count(events), delta, tie, all)
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
    let ev = ranked(events);
    let n = node_count(events);
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
            matrix_parts(&ev, n, delta, tie, parts)[i - 1][j - 1]
        }
        Motif::Named(NamedMotif::TriangleCyclic) => {
            matrix_parts(&ev, n, delta, tie, only(false, false, true))[1][3]
        }
        Motif::Named(NamedMotif::TriangleAcyclic1) => {
            matrix_parts(&ev, n, delta, tie, only(false, false, true))[3][4]
        }
        Motif::Named(NamedMotif::Pingpong2) => {
            matrix_parts(&ev, n, delta, tie, only(true, false, false))[4][0]
        }
        Motif::Named(NamedMotif::StarOut3) => {
            let m = matrix_parts(&ev, n, delta, tie, only(true, true, false));
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
            let m = matrix_parts(&ev, n, delta, tie, only(true, true, true));
            chained_triples(&ev, n, delta, strict) - m[1][3] - m[4][2] - m[1][5] - m[4][0]
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
fn chained_triples(ev: &[Ev], n: usize, delta: i64, strict: bool) -> u64 {
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
