//! Temporal reachability (operators.md §12, D-O1).
//!
//! * `Out` without a wait cap: earliest arrival = least fixpoint of `τ = max(a, vt_s)`. When
//!   every candidate edge is instantaneous: one pass over the time-ordered edge stream (each
//!   equal-time group closed by a worklist, since consecutive edges may share an instant).
//!   With interval edges a single scan is not exact (an edge valid over `[s, e)` may be used
//!   at an arrival produced later in the stream), so the search is label-setting instead
//!   (Dijkstra order on arrival time; a traversal never decreases the label, so the first
//!   settled label of a node is its minimum; arcs already over are skipped).
//! * `In` without a wait cap: the mirror image, latest departure with
//!   `τ = min(d, vt_e − 1)` (scan by decreasing time, or settled in decreasing label order).
//! * With `max_wait = D`: exact breadth-first search over the distinct `(node, label)` states
//!   (no dominance pruning, TV6), waiting free only from the start state; each examination of
//!   a candidate edge from a dequeued state is one budget unit.
//! * `Both`: both searches, budgets summed.
//!
//! Many sources: [`reachability_many`] runs one search per source in parallel (rayon) and
//! returns the results in source order; each search is sequential, so results do not depend
//! on the thread count.

use super::radix_heap::{key_of, time_of, RadixHeap};
use super::{BudgetExceeded, Span};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{HashSet, VecDeque};
use std::sync::OnceLock;

/// Search direction (§12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Forward: the earliest arrival at every node reachable from the source.
    Out,
    /// Backward: the latest departure from every node that can reach the source.
    In,
    /// Both searches, their budgets summed.
    Both,
}

#[derive(Clone, Copy, Debug)]
struct Arc {
    other: u32,
    s: i64,
    e: i64,
}

impl Arc {
    /// The arc of edge `e` to `other`.
    fn of(other: u32, e: &Span) -> Arc {
        Arc {
            other,
            s: e.t,
            e: e.t_end,
        }
    }
}

/// The candidate edges of one window (`vt_e > t_a` and `vt_s < t_b`). Build once, query
/// many sources: each search builds, on first use, only the form it reads — the time-ordered
/// scan lists for the uncapped searches over instantaneous edges, the out- and in-adjacency
/// for the others (at 10M edges the adjacency alone is about a gigabyte of fresh memory).
pub struct ReachIndex<'e> {
    t_a: i64,
    t_b: i64,
    n: usize,
    edges: &'e [Span],
    /// Every candidate edge is instantaneous (`vt_e = vt_s + 1`): the uncapped searches are
    /// one-pass scans.
    instant: bool,
    /// Out-arcs by `vt_e` and in-arcs by `vt_s` per node, so that the label-setting and
    /// capped searches skip the arcs that are over (forward: `vt_e <= a`) or not yet open
    /// (backward: `vt_s > d`).
    out_arcs: OnceLock<Csr>,
    in_arcs: OnceLock<Csr>,
    /// The candidate edges as `(t, src, dst)` and as `(t, dst, src)`, each sorted, for the
    /// one-pass scans of the uncapped searches (when `instant`).
    scan_fwd: OnceLock<Vec<(i64, u32, u32)>>,
    scan_bwd: OnceLock<Vec<(i64, u32, u32)>>,
}

/// Arcs grouped by node, in pieces of consecutive nodes (one per worker, so that they are
/// built in parallel): node `u` is node `j = u − lo` of piece `u / per_piece` (whose first
/// node is `lo`), and its arcs are the piece's `arcs[off[j]..off[j + 1]]`.
struct Csr {
    per_piece: usize,
    pieces: Vec<CsrPiece>,
}

struct CsrPiece {
    off: Vec<usize>,
    arcs: Vec<Arc>,
}

impl Csr {
    /// The arcs of `items` (node, arc) for nodes `0..n`, each node's sorted by `key`. Each
    /// piece reads every item twice (a count, then a fill) and keeps its own nodes': no list
    /// of every pair is held, and no two workers write the same memory. Each node's list is
    /// sorted whole, so the arcs do not depend on the number of pieces.
    fn new<K: Ord>(
        n: usize,
        items: impl Iterator<Item = (u32, Arc)> + Clone + Sync,
        key: impl Fn(&Arc) -> K + Sync,
    ) -> Csr {
        let per_piece = n.div_ceil(rayon::current_num_threads().max(1)).max(1);
        let pieces = (0..n.div_ceil(per_piece))
            .into_par_iter()
            .map(|p| {
                let (lo, hi) = (p * per_piece, ((p + 1) * per_piece).min(n));
                let mine = |k: u32| (k as usize).checked_sub(lo).filter(|&j| j < hi - lo);
                let mut off = vec![0usize; hi - lo + 1];
                for (k, _) in items.clone() {
                    if let Some(j) = mine(k) {
                        off[j + 1] += 1;
                    }
                }
                for j in 0..hi - lo {
                    off[j + 1] += off[j];
                }
                let mut pos = off.clone();
                let mut arcs = vec![
                    Arc {
                        other: 0,
                        s: 0,
                        e: 0
                    };
                    off[hi - lo]
                ];
                for (k, a) in items.clone() {
                    if let Some(j) = mine(k) {
                        arcs[pos[j]] = a;
                        pos[j] += 1;
                    }
                }
                for j in 0..hi - lo {
                    arcs[off[j]..off[j + 1]].sort_unstable_by_key(&key);
                }
                CsrPiece { off, arcs }
            })
            .collect();
        Csr { per_piece, pieces }
    }

    fn of(&self, u: u32) -> &[Arc] {
        let (p, j) = (u as usize / self.per_piece, u as usize % self.per_piece);
        let piece = &self.pieces[p];
        &piece.arcs[piece.off[j]..piece.off[j + 1]]
    }
}

impl<'e> ReachIndex<'e> {
    /// `n` = number of dense node ids (at least max id + 1 of the edges and of every source).
    pub fn new(edges: &'e [Span], n: usize, t_a: i64, t_b: i64) -> ReachIndex<'e> {
        let mut ix = ReachIndex {
            t_a,
            t_b,
            n,
            edges,
            instant: false,
            out_arcs: OnceLock::new(),
            in_arcs: OnceLock::new(),
            scan_fwd: OnceLock::new(),
            scan_bwd: OnceLock::new(),
        };
        let instant = ix.candidates().all(|e| e.t_end == e.t + 1);
        ix.instant = instant;
        ix
    }

    fn candidates(&self) -> impl Iterator<Item = &'e Span> + Clone + '_ {
        self.edges
            .iter()
            .filter(|e| e.t_end > self.t_a && e.t < self.t_b)
    }

    /// The scan list of the forward (`(t, src, dst)`) or backward (`(t, dst, src)`) scan,
    /// sorted; `None` unless every candidate edge is instantaneous.
    fn scan(&self, backward: bool) -> Option<&[(i64, u32, u32)]> {
        if !self.instant {
            return None;
        }
        let cell = if backward {
            &self.scan_bwd
        } else {
            &self.scan_fwd
        };
        Some(cell.get_or_init(|| {
            let mut v: Vec<(i64, u32, u32)> = self
                .candidates()
                .map(|e| {
                    if backward {
                        (e.t, e.dst, e.src)
                    } else {
                        (e.t, e.src, e.dst)
                    }
                })
                .collect();
            // Distinct-or-equal tuples: any sort gives the same list.
            sort_scan_list(&mut v);
            v
        }))
    }

    fn out_csr(&self) -> &Csr {
        self.out_arcs.get_or_init(|| {
            let items = self.candidates().map(|e| (e.src, Arc::of(e.dst, e)));
            Csr::new(self.n, items, |a| (a.e, a.s, a.other))
        })
    }

    fn in_csr(&self) -> &Csr {
        self.in_arcs.get_or_init(|| {
            let items = self.candidates().map(|e| (e.dst, Arc::of(e.src, e)));
            Csr::new(self.n, items, |a| (a.s, a.e, a.other))
        })
    }

    fn outs(&self, u: u32) -> &[Arc] {
        self.out_csr().of(u)
    }

    fn ins(&self, u: u32) -> &[Arc] {
        self.in_csr().of(u)
    }

    /// Builds the forms the searches of `dir` read. [`reachability_many`] calls it before
    /// its parallel searches: the forms are built in parallel, and a form built inside a
    /// rayon task could be asked for again by a search that the waiting thread steals (a
    /// re-entered `OnceLock` initialisation deadlocks).
    fn prepare(&self, dir: Direction, max_wait: Option<i64>) {
        let (fwd, bwd) = match dir {
            Direction::Out => (true, false),
            Direction::In => (false, true),
            Direction::Both => (true, true),
        };
        if fwd && (max_wait.is_some() || self.scan(false).is_none()) {
            self.out_csr();
        }
        if bwd && (max_wait.is_some() || self.scan(true).is_none()) {
            self.in_csr();
        }
    }

    /// Number of candidate out-edges of `u` (one budget unit each per dequeued state).
    pub fn out_degree(&self, u: u32) -> usize {
        self.outs(u).len()
    }
}

/// Result of one search. `units`: with a wait cap, the §7.5 count (every candidate edge of
/// every dequeued state); without one, the arcs the label-setting search actually examined
/// (informational; the spec budgets only the capped search).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ReachResult {
    /// `(node, earliest_arrival)` for every node reached forward except `src`, ordered by
    /// `(earliest_arrival, node)`. Empty for `In`.
    pub forward: Vec<(u32, i64)>,
    /// `(node, latest_departure)` for every node that reaches `src` except `src`, ordered by
    /// `(latest_departure descending, node)`. Empty for `Out`.
    pub backward: Vec<(u32, i64)>,
    /// Budget units spent (edge examinations), summed over both searches for `Both`.
    pub units: u64,
}

impl ReachResult {
    /// The `"both"` rows of §12: `(node, earliest_arrival, latest_departure)`; forward-reached
    /// nodes first by `(earliest_arrival, node)`, then the others by
    /// `(latest_departure descending, node)`. Also valid for `Out`/`In` results.
    pub fn both_rows(&self) -> Vec<(u32, Option<i64>, Option<i64>)> {
        let bw: std::collections::HashMap<u32, i64> = self.backward.iter().copied().collect();
        let fw: HashSet<u32> = self.forward.iter().map(|x| x.0).collect();
        let mut rows: Vec<(u32, Option<i64>, Option<i64>)> = self
            .forward
            .iter()
            .map(|&(v, a)| (v, Some(a), bw.get(&v).copied()))
            .collect();
        rows.extend(
            self.backward
                .iter()
                .filter(|(v, _)| !fw.contains(v))
                .map(|&(v, d)| (v, None, Some(d))),
        );
        rows
    }
}

struct Budget {
    units: u64,
    limit: Option<u64>,
}

impl Budget {
    #[inline]
    fn spend(&mut self, k: usize) -> Result<(), BudgetExceeded> {
        self.units += k as u64;
        match self.limit {
            Some(l) if self.units > l => Err(BudgetExceeded { units: l + 1 }),
            _ => Ok(()),
        }
    }
}

/// Sorts a scan list `(t, from, to)`. The edges of a mapped image come in segment order,
/// by time first: then only each run of equal times is sorted (a pass instead of a sort of
/// 10^7 entries at 10^8 events); any other list is sorted whole. Both give the one sorted
/// list.
fn sort_scan_list(v: &mut [(i64, u32, u32)]) {
    if !v.windows(2).all(|w| w[0].0 <= w[1].0) {
        v.par_sort_unstable();
        return;
    }
    for run in v.chunk_by_mut(|a, b| a.0 == b.0) {
        run.sort_unstable();
    }
}

/// One pass over the time-ordered stream of instantaneous edges. Forward (`desc = false`,
/// edges `(t, from, to)` = `(t, src, dst)`): `to` is reached at `t` iff `from` was reached at
/// or before `t`. Backward (`desc = true`, edges `(t, dst, src)` scanned by decreasing `t`):
/// `src` can leave at `t` iff `dst` can still leave at or after `t`. Equal-time edges chain
/// (consecutive edges may share an instant): a worklist closes each time group.
fn scan_pass(
    ix: &ReachIndex,
    es: &[(i64, u32, u32)],
    src: u32,
    start: i64,
    desc: bool,
    b: &mut Budget,
) -> Result<Vec<i64>, BudgetExceeded> {
    let n = ix.n;
    let none = if desc { i64::MIN } else { i64::MAX };
    let mut lab = vec![none; n];
    lab[src as usize] = start;
    // `reached(l, t)`: label `l` allows using an edge at `t`; `better(l, t)`: `t` improves `l`.
    let reached = |l: i64, t: i64| if desc { l != none && l >= t } else { l <= t };
    let better = |l: i64, t: i64| if desc { l < t } else { l > t };
    let mut stack = Vec::new();
    // Nothing happens before src's first out-edge (forward) or after its last in-edge
    // (backward): only src holds a label until then. Those are the scan list's entries
    // with `from == src`.
    let own = es.iter().filter(|e| e.1 == src).map(|e| e.0);
    let (first, last) = if desc {
        match own.max() {
            None => return Ok(lab),
            Some(t_last) => (0, es.partition_point(|e| e.0 <= t_last)),
        }
    } else {
        match own.min() {
            None => return Ok(lab),
            Some(t_first) => (es.partition_point(|e| e.0 < t_first), es.len()),
        }
    };
    // The equal-time groups of `es[first..last]`, in scan order.
    let mut at = if desc { last } else { first };
    while (desc && at > first) || (!desc && at < last) {
        let (mut lo, mut hi) = (at, at);
        if desc {
            let t = es[at - 1].0;
            while lo > first && es[lo - 1].0 == t {
                lo -= 1;
            }
        } else {
            let t = es[at].0;
            while hi < last && es[hi].0 == t {
                hi += 1;
            }
        }
        at = if desc { lo } else { hi };
        let g = &es[lo..hi];
        let t = g[0].0;
        b.spend(g.len())?;
        for &(_, from, to) in g {
            if reached(lab[from as usize], t) && better(lab[to as usize], t) {
                lab[to as usize] = t;
                stack.push(to);
            }
        }
        while let Some(x) = stack.pop() {
            let lo = g.partition_point(|e| e.1 < x);
            for &(_, from, to) in &g[lo..] {
                if from != x {
                    break;
                }
                if better(lab[to as usize], t) {
                    lab[to as usize] = t;
                    stack.push(to);
                }
            }
        }
    }
    Ok(lab)
}

fn forward_plain(
    ix: &ReachIndex,
    src: u32,
    b: &mut Budget,
) -> Result<Vec<(u32, i64)>, BudgetExceeded> {
    if let Some(es) = ix.scan(false) {
        let lab = scan_pass(ix, es, src, ix.t_a, false, b)?;
        return Ok(collect(lab, src, i64::MAX, false));
    }
    let mut arr = vec![i64::MAX; ix.n];
    let mut heap = RadixHeap::default();
    arr[src as usize] = ix.t_a;
    heap.push(key_of(ix.t_a), src);
    while let Some((k, u)) = heap.pop() {
        let a = time_of(k);
        if a > arr[u as usize] {
            continue;
        }
        let arcs = ix.outs(u);
        let arcs = &arcs[arcs.partition_point(|x| x.e <= a)..];
        b.spend(arcs.len())?;
        for arc in arcs {
            let tau = a.max(arc.s);
            if tau < arc.e && tau < ix.t_b && tau < arr[arc.other as usize] {
                arr[arc.other as usize] = tau;
                heap.push(key_of(tau), arc.other);
            }
        }
    }
    Ok(collect(arr, src, i64::MAX, false))
}

fn backward_plain(
    ix: &ReachIndex,
    src: u32,
    b: &mut Budget,
) -> Result<Vec<(u32, i64)>, BudgetExceeded> {
    if let Some(es) = ix.scan(true) {
        let lab = scan_pass(ix, es, src, ix.t_b - 1, true, b)?;
        return Ok(collect(lab, src, i64::MIN, true));
    }
    // Latest departure first: the keys are the times reversed.
    let mut dep = vec![i64::MIN; ix.n];
    let mut heap = RadixHeap::default();
    dep[src as usize] = ix.t_b - 1;
    heap.push(!key_of(ix.t_b - 1), src);
    while let Some((k, v)) = heap.pop() {
        let d = time_of(!k);
        if d < dep[v as usize] {
            continue;
        }
        let arcs = ix.ins(v);
        let arcs = &arcs[..arcs.partition_point(|x| x.s <= d)];
        b.spend(arcs.len())?;
        for arc in arcs {
            let tau = d.min(arc.e - 1);
            if tau >= arc.s && tau >= ix.t_a && tau > dep[arc.other as usize] {
                dep[arc.other as usize] = tau;
                heap.push(!key_of(tau), arc.other);
            }
        }
    }
    Ok(collect(dep, src, i64::MIN, true))
}

fn collect(label: Vec<i64>, src: u32, none: i64, desc: bool) -> Vec<(u32, i64)> {
    let mut rows: Vec<(u32, i64)> = label
        .into_iter()
        .enumerate()
        .filter(|&(v, l)| l != none && v as u32 != src)
        .map(|(v, l)| (v as u32, l))
        .collect();
    if desc {
        rows.sort_unstable_by_key(|&(v, l)| (Reverse(l), v));
    } else {
        rows.sort_unstable_by_key(|&(v, l)| (l, v));
    }
    rows
}

fn forward_capped(
    ix: &ReachIndex,
    src: u32,
    d_max: i64,
    b: &mut Budget,
) -> Result<Vec<(u32, i64)>, BudgetExceeded> {
    let start = (src, ix.t_a);
    let mut seen: HashSet<(u32, i64)> = HashSet::new();
    let mut queue = VecDeque::new();
    let mut best = vec![i64::MAX; ix.n];
    seen.insert(start);
    queue.push_back(start);
    while let Some((u, a)) = queue.pop_front() {
        let arcs = ix.outs(u);
        b.spend(arcs.len())?;
        let free = (u, a) == start;
        for arc in arcs {
            let tau = a.max(arc.s);
            if tau < arc.e
                && tau < ix.t_b
                && (free || tau - a <= d_max)
                && seen.insert((arc.other, tau))
            {
                let bv = &mut best[arc.other as usize];
                *bv = (*bv).min(tau);
                queue.push_back((arc.other, tau));
            }
        }
    }
    Ok(collect(best, src, i64::MAX, false))
}

fn backward_capped(
    ix: &ReachIndex,
    src: u32,
    d_max: i64,
    b: &mut Budget,
) -> Result<Vec<(u32, i64)>, BudgetExceeded> {
    let start = (src, ix.t_b - 1);
    let mut seen: HashSet<(u32, i64)> = HashSet::new();
    let mut queue = VecDeque::new();
    let mut best = vec![i64::MIN; ix.n];
    seen.insert(start);
    queue.push_back(start);
    while let Some((v, d)) = queue.pop_front() {
        let arcs = ix.ins(v);
        b.spend(arcs.len())?;
        let free = (v, d) == start;
        for arc in arcs {
            let tau = d.min(arc.e - 1);
            if tau >= arc.s
                && tau >= ix.t_a
                && (free || d - tau <= d_max)
                && seen.insert((arc.other, tau))
            {
                let bv = &mut best[arc.other as usize];
                *bv = (*bv).max(tau);
                queue.push_back((arc.other, tau));
            }
        }
    }
    Ok(collect(best, src, i64::MIN, true))
}

/// One search from `src` (§12). `max_wait` = `delta_max_wait`; `budget` = the work budget of
/// §7.5 (500,000, which the spec applies only with `delta_max_wait`; pass `None` otherwise;
/// `Both` sums both searches' units). Units are counted over the complete search, so the
/// refusal is deterministic; the error reports `budget + 1` (§7.5). The rows exclude `src`.
pub fn reachability(
    ix: &ReachIndex,
    src: u32,
    dir: Direction,
    max_wait: Option<i64>,
    budget: Option<u64>,
) -> Result<ReachResult, BudgetExceeded> {
    let mut b = Budget {
        units: 0,
        limit: budget,
    };
    let mut r = ReachResult::default();
    if matches!(dir, Direction::Out | Direction::Both) {
        r.forward = match max_wait {
            None => forward_plain(ix, src, &mut b)?,
            Some(d) => forward_capped(ix, src, d, &mut b)?,
        };
    }
    if matches!(dir, Direction::In | Direction::Both) {
        r.backward = match max_wait {
            None => backward_plain(ix, src, &mut b)?,
            Some(d) => backward_capped(ix, src, d, &mut b)?,
        };
    }
    r.units = b.units;
    Ok(r)
}

/// [`reachability`] for many sources in parallel; results in `sources` order, identical for
/// any thread count.
pub fn reachability_many(
    ix: &ReachIndex,
    sources: &[u32],
    dir: Direction,
    max_wait: Option<i64>,
    budget: Option<u64>,
) -> Vec<Result<ReachResult, BudgetExceeded>> {
    ix.prepare(dir, max_wait);
    sources
        .par_iter()
        .map(|&s| reachability(ix, s, dir, max_wait, budget))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sort_scan_list;

    /// A scan list sorted by runs (its times ascending) or whole is the fully sorted list.
    #[test]
    fn a_scan_list_sorts_to_the_one_sorted_list() {
        let mut g = tgms_testkit::Rng::new(31);
        for case in 0..200 {
            let n = g.below(300) as usize;
            let mut v: Vec<(i64, u32, u32)> = (0..n)
                .map(|_| (g.below(40) as i64, g.below(8) as u32, g.below(8) as u32))
                .collect();
            if case % 2 == 0 {
                // Times ascending, the rest of each run in any order.
                v.sort_unstable_by_key(|e| e.0);
            }
            let mut want = v.clone();
            want.sort_unstable();
            sort_scan_list(&mut v);
            assert_eq!(v, want, "case {case}");
        }
    }
}
