//! Temporal paths (operators.md §13): every node-simple time-respecting path from `src` to
//! `dst` with at most `max_hops` edges, found by the spec's depth-first enumeration, sorted by
//! `(arrival, hops, [(vt_s_1, eid_1), …])`. The caller keeps the first `k` as rows and uses
//! the full list for `rows_total` and `set_digest`.
//!
//! The enumeration reads candidate out-edges through [`OutEdges`], one node at a time and only
//! for nodes where a frame opens, so its cost follows the explored frontier: the operator
//! serves them from the store's per-node adjacency ([`temporal_paths_from`]); the slice entry
//! point [`temporal_paths`] serves them from an index over a given edge list.

use super::{BudgetExceeded, TEdge};
use std::collections::HashMap;

/// One recorded path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemporalPath {
    /// The last edge's traversal instant.
    pub arrival: i64,
    /// Edge ids in path order (indices into the input `edges` for [`temporal_paths`], the
    /// source's ids for [`temporal_paths_from`]); `hops` = `edges.len()`. Each row edge's `t`
    /// is that edge version's `vt_s` (not the traversal instant).
    pub edges: Vec<u32>,
}

/// All recorded paths in spec order, and the budget units spent.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PathsResult {
    /// The recorded paths, in spec order.
    pub paths: Vec<TemporalPath>,
    /// Budget units spent: one per candidate out-edge examined.
    pub units: u64,
}

/// The candidate out-edges of the enumeration, served per node.
pub trait OutEdges {
    /// Appends to `buf` the ids of the candidate out-edges of node `u` (the edges leaving `u`
    /// that overlap the window). Called at most once per node. The order is the order in
    /// which frames examine them; it only decides the order of paths whose sort keys tie.
    fn load(&mut self, u: u32, buf: &mut Vec<u32>);
    /// The kernel edge of id `i` (an id that [`OutEdges::load`] handed out). The search
    /// reads its `src`, `dst`, `t` and `t_end`; its `eid` need only be right once
    /// [`OutEdges::settle`] has named it.
    fn edge(&self, i: u32) -> &TEdge;
    /// Makes the `eid` of the edges `ids` right (called once, before the recorded paths are
    /// sorted, with the edges on them): a source that derives eids (hashes) does so only for
    /// edges on a path, not for every candidate it loads.
    fn settle(&mut self, _ids: &[u32]) {}
}

/// [`OutEdges`] over a slice: candidate edges (overlapping `[t_a, t_b)`) grouped by source
/// node, in slice order; edge ids are slice indices.
struct SliceOut<'a> {
    edges: &'a [TEdge],
    off: Vec<usize>,
    adj: Vec<u32>,
}

impl<'a> SliceOut<'a> {
    fn new(edges: &'a [TEdge], n: usize, t_a: i64, t_b: i64) -> Self {
        let mut off = vec![0usize; n + 1];
        let cand = |e: &TEdge| e.t_end > t_a && e.t < t_b;
        for e in edges.iter().filter(|e| cand(e)) {
            off[e.src as usize + 1] += 1;
        }
        for k in 0..n {
            off[k + 1] += off[k];
        }
        let mut pos = off.clone();
        let mut adj = vec![0u32; off[n]];
        for (i, e) in edges.iter().enumerate().filter(|(_, e)| cand(e)) {
            adj[pos[e.src as usize]] = i as u32;
            pos[e.src as usize] += 1;
        }
        SliceOut { edges, off, adj }
    }
}

impl OutEdges for SliceOut<'_> {
    fn load(&mut self, u: u32, buf: &mut Vec<u32>) {
        let u = u as usize;
        if u + 1 < self.off.len() {
            buf.extend_from_slice(&self.adj[self.off[u]..self.off[u + 1]]);
        }
    }
    fn edge(&self, i: u32) -> &TEdge {
        &self.edges[i as usize]
    }
}

struct Dfs<'s, S: OutEdges> {
    source: &'s mut S,
    /// Node → its range in `adj`, filled on the node's first frame.
    span: HashMap<u32, (usize, usize)>,
    /// Candidate out-edge ids of every loaded node, node after node (append-only, so a
    /// frame's range stays valid while deeper frames load more nodes).
    adj: Vec<u32>,
    dst: u32,
    t_b: i64,
    max_hops: usize,
    /// The visited set: `src` and the heads of the edges on `stack` (at most `max_hops`
    /// entries, so a linear scan is the cheapest membership test).
    nodes: Vec<u32>,
    stack: Vec<u32>,
    out: Vec<TemporalPath>,
    units: u64,
    budget: Option<u64>,
}

impl<S: OutEdges> Dfs<'_, S> {
    fn range(&mut self, u: u32) -> (usize, usize) {
        if let Some(&r) = self.span.get(&u) {
            return r;
        }
        let lo = self.adj.len();
        self.source.load(u, &mut self.adj);
        let r = (lo, self.adj.len());
        self.span.insert(u, r);
        r
    }

    fn frame(&mut self, u: u32, a: i64) -> Result<(), BudgetExceeded> {
        let (lo, hi) = self.range(u);
        for k in lo..hi {
            self.units += 1;
            if let Some(b) = self.budget {
                if self.units > b {
                    return Err(BudgetExceeded { units: self.units });
                }
            }
            let ei = self.adj[k];
            let e = *self.source.edge(ei);
            let v = e.dst;
            if self.nodes.contains(&v) {
                continue;
            }
            let tau = a.max(e.t);
            if !(tau < e.t_end && tau < self.t_b) {
                continue;
            }
            if v == self.dst {
                let mut p = self.stack.clone();
                p.push(ei);
                self.out.push(TemporalPath {
                    arrival: tau,
                    edges: p,
                });
            } else if self.stack.len() + 1 < self.max_hops {
                self.nodes.push(v);
                self.stack.push(ei);
                self.frame(v, tau)?;
                self.stack.pop();
                self.nodes.pop();
            }
        }
        Ok(())
    }
}

/// §13 semantics 1–5 at kernel level. Candidate edges are those of `edges` overlapping
/// `[t_a, t_b)`; `n` = number of dense node ids. `src == dst` → no paths. `budget` = the work
/// budget (one unit per candidate out-edge examined from a frame; 500,000 in the spec).
#[allow(clippy::too_many_arguments)]
pub fn temporal_paths(
    edges: &[TEdge],
    n: usize,
    src: u32,
    dst: u32,
    t_a: i64,
    t_b: i64,
    max_hops: usize,
    budget: Option<u64>,
) -> Result<PathsResult, BudgetExceeded> {
    if src == dst || max_hops == 0 {
        return Ok(PathsResult::default());
    }
    let mut source = SliceOut::new(edges, n, t_a, t_b);
    temporal_paths_from(&mut source, src, dst, t_a, t_b, max_hops, budget)
}

/// [`temporal_paths`] over candidate out-edges served by `source`, which must hand out only
/// edges overlapping `[t_a, t_b)`. Only nodes where a frame opens are loaded.
pub fn temporal_paths_from<S: OutEdges>(
    source: &mut S,
    src: u32,
    dst: u32,
    t_a: i64,
    t_b: i64,
    max_hops: usize,
    budget: Option<u64>,
) -> Result<PathsResult, BudgetExceeded> {
    if src == dst || max_hops == 0 {
        return Ok(PathsResult::default());
    }
    let mut d = Dfs {
        source,
        span: HashMap::new(),
        adj: Vec::new(),
        dst,
        t_b,
        max_hops,
        nodes: vec![src],
        stack: Vec::new(),
        out: Vec::new(),
        units: 0,
        budget,
    };
    d.frame(src, t_a)?;
    let (mut paths, units, source) = (d.out, d.units, d.source);
    let mut on_paths: Vec<u32> = paths.iter().flat_map(|p| p.edges.iter().copied()).collect();
    on_paths.sort_unstable();
    on_paths.dedup();
    source.settle(&on_paths);
    // Stable: paths whose keys tie keep their discovery order.
    paths.sort_by(|x, y| {
        (x.arrival, x.edges.len())
            .cmp(&(y.arrival, y.edges.len()))
            .then_with(|| {
                let kx = x.edges.iter().map(|&i| source.edge(i).key());
                let ky = y.edges.iter().map(|&i| source.edge(i).key());
                kx.cmp(ky)
            })
    });
    Ok(PathsResult { paths, units })
}
