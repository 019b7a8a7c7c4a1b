//! Temporal paths (operators.md §13): every node-simple time-respecting path from `src` to
//! `dst` with at most `max_hops` edges, found by the spec's depth-first enumeration, sorted by
//! `(arrival, hops, [(vt_s_1, eid_1), …])`. The caller keeps the first `k` as rows and uses
//! the full list for `rows_total` and `set_digest`.

use super::{BudgetExceeded, TEdge};

/// One recorded path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemporalPath {
    /// The last edge's traversal instant.
    pub arrival: i64,
    /// Indices into the input `edges`, in path order; `hops` = `edges.len()`. Each row edge's
    /// `t` is that edge version's `vt_s` (not the traversal instant).
    pub edges: Vec<u32>,
}

/// All recorded paths in spec order, and the budget units spent.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PathsResult {
    pub paths: Vec<TemporalPath>,
    pub units: u64,
}

struct Dfs<'a> {
    edges: &'a [TEdge],
    off: Vec<usize>,
    adj: Vec<u32>,
    dst: u32,
    t_b: i64,
    max_hops: usize,
    visited: Vec<bool>,
    stack: Vec<u32>,
    out: Vec<TemporalPath>,
    units: u64,
    budget: Option<u64>,
}

impl Dfs<'_> {
    fn frame(&mut self, u: u32, a: i64) -> Result<(), BudgetExceeded> {
        let (lo, hi) = (self.off[u as usize], self.off[u as usize + 1]);
        for k in lo..hi {
            self.units += 1;
            if let Some(b) = self.budget {
                if self.units > b {
                    return Err(BudgetExceeded { units: self.units });
                }
            }
            let ei = self.adj[k];
            let e = &self.edges[ei as usize];
            let v = e.dst;
            if self.visited[v as usize] {
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
                self.visited[v as usize] = true;
                self.stack.push(ei);
                self.frame(v, tau)?;
                self.stack.pop();
                self.visited[v as usize] = false;
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
    let mut visited = vec![false; n];
    visited[src as usize] = true;
    let mut d = Dfs {
        edges,
        off,
        adj,
        dst,
        t_b,
        max_hops,
        visited,
        stack: Vec::new(),
        out: Vec::new(),
        units: 0,
        budget,
    };
    d.frame(src, t_a)?;
    let mut paths = d.out;
    paths.sort_by(|x, y| {
        (x.arrival, x.edges.len())
            .cmp(&(y.arrival, y.edges.len()))
            .then_with(|| {
                let kx = x.edges.iter().map(|&i| edges[i as usize].key());
                let ky = y.edges.iter().map(|&i| edges[i as usize].key());
                kx.cmp(ky)
            })
    });
    Ok(PathsResult {
        paths,
        units: d.units,
    })
}
