//! temporal_paths kernel (operators.md §13) against a brute-force enumeration of edge
//! sequences checked against the spec's path rules.

mod kernels_common;

use kernels_common::*;
use std::collections::BTreeSet;
use tgms_operators::kernels::paths::{temporal_paths, temporal_paths_from, OutEdges};
use tgms_operators::kernels::TEdge;

struct Oracle<'a> {
    edges: &'a [TEdge],
    cand: Vec<usize>,
    src: u32,
    dst: u32,
    t_a: i64,
    t_b: i64,
    max_hops: usize,
    found: Vec<(i64, Vec<u32>)>,
    units: u64,
    /// Nodes where a frame opens (`src` included).
    frames: BTreeSet<u32>,
}

impl Oracle<'_> {
    /// Arrival of a sequence if it is a valid prefix: starts at src, chains, node-simple,
    /// greedy traversal instants inside the intervals and the window.
    fn arrival(&self, seq: &[usize]) -> Option<i64> {
        let mut nodes = vec![self.src];
        let mut a = self.t_a;
        for &i in seq {
            let e = &self.edges[i];
            if e.src != *nodes.last().unwrap() || nodes.contains(&e.dst) {
                return None;
            }
            let tau = a.max(e.t);
            if tau >= e.t_end || tau >= self.t_b {
                return None;
            }
            nodes.push(e.dst);
            a = tau;
        }
        Some(a)
    }

    fn out_degree(&self, u: u32) -> u64 {
        self.cand
            .iter()
            .filter(|&&i| self.edges[i].src == u)
            .count() as u64
    }

    fn grow(&mut self, seq: &mut Vec<usize>) {
        for k in 0..self.cand.len() {
            let i = self.cand[k];
            seq.push(i);
            if let Some(arr) = self.arrival(seq) {
                let last = self.edges[i].dst;
                if last == self.dst {
                    self.found
                        .push((arr, seq.iter().map(|&x| x as u32).collect()));
                } else if seq.len() < self.max_hops {
                    // A frame opens here (ℓ + 1 < max_hops).
                    self.frames.insert(last);
                    self.units += self.out_degree(last);
                    self.grow(seq);
                }
            }
            seq.pop();
        }
    }
}

/// Recorded paths as `(arrival, edge indices)`, in spec order.
type Found = Vec<(i64, Vec<u32>)>;

/// The oracle's paths, budget units and frame nodes.
fn oracle(
    edges: &[TEdge],
    src: u32,
    dst: u32,
    t_a: i64,
    t_b: i64,
    max_hops: usize,
) -> (Found, u64, BTreeSet<u32>) {
    let cand: Vec<usize> = (0..edges.len())
        .filter(|&i| edges[i].t_end > t_a && edges[i].t < t_b)
        .collect();
    let mut o = Oracle {
        edges,
        cand,
        src,
        dst,
        t_a,
        t_b,
        max_hops,
        found: Vec::new(),
        units: 0,
        frames: BTreeSet::from([src]),
    };
    if src == dst {
        return (vec![], 0, BTreeSet::new());
    }
    o.units = o.out_degree(src);
    o.grow(&mut Vec::new());
    let mut found = o.found;
    found.sort_by_key(|(arr, p)| {
        (
            *arr,
            p.len(),
            p.iter()
                .map(|&i| (edges[i as usize].t, edges[i as usize].eid))
                .collect::<Vec<_>>(),
        )
    });
    (found, o.units, o.frames)
}

#[test]
fn random_paths_vs_oracle() {
    let mut rng = Rng::new(13);
    let mut nonempty = 0;
    let mut multi_hop = 0;
    for case in 0..700 {
        let n = 3 + rng.below(3) as usize;
        let m = rng.below(18) as usize;
        let t_max = [4, 12, 30][case % 3];
        let edges = random_edges(&mut rng, n as u32, m, t_max, case % 2 == 1, 10);
        let t_a = rng.int(0, t_max / 2 + 1);
        let t_b = rng.int(t_a + 1, t_max + 4);
        let src = rng.below(n as u64) as u32;
        let dst = rng.below(n as u64) as u32;
        let max_hops = 1 + rng.below(5) as usize;
        let got = temporal_paths(&edges, n, src, dst, t_a, t_b, max_hops, None).unwrap();
        let (want, units, _) = oracle(&edges, src, dst, t_a, t_b, max_hops);
        let got_pairs: Vec<(i64, Vec<u32>)> = got
            .paths
            .iter()
            .map(|p| (p.arrival, p.edges.clone()))
            .collect();
        assert_eq!(
            got_pairs, want,
            "case {case} {src}->{dst} [{t_a},{t_b}) h{max_hops} {edges:?}"
        );
        assert_eq!(got.units, units, "case {case} units");
        nonempty += !want.is_empty() as usize;
        multi_hop += want.iter().any(|p| p.1.len() > 1) as usize;
        if units > 0 {
            assert!(temporal_paths(&edges, n, src, dst, t_a, t_b, max_hops, Some(units)).is_ok());
            let e = temporal_paths(&edges, n, src, dst, t_a, t_b, max_hops, Some(units - 1))
                .unwrap_err();
            assert_eq!(e.units, units, "the error reports budget + 1");
        }
    }
    assert!(nonempty > 100 && multi_hop > 30, "{nonempty} {multi_hop}");
}

#[test]
fn tv8_interval_paths() {
    let (a, b, c) = (0, 1, 2);
    let e = [
        TEdge {
            src: a,
            dst: b,
            t: 0,
            t_end: 100,
            eid: hex_eid("f39a58802118efa2055a9e26"),
        },
        TEdge {
            src: b,
            dst: c,
            t: 5,
            t_end: 50,
            eid: hex_eid("2ada81c9322a57a350e2a707"),
        },
        TEdge {
            src: a,
            dst: c,
            t: 30,
            t_end: 31,
            eid: hex_eid("32d1d92ffe9c987c1d102160"),
        },
    ];
    let r = temporal_paths(&e, 3, a, c, 20, 60, 4, Some(500_000)).unwrap();
    let rows: Vec<(i64, Vec<u32>)> = r
        .paths
        .iter()
        .map(|p| (p.arrival, p.edges.clone()))
        .collect();
    assert_eq!(rows, vec![(20, vec![0, 1]), (30, vec![2])]);
    // edges[].t is vt_s: 0 and 5 for the first path.
    assert_eq!(
        r.paths[0]
            .edges
            .iter()
            .map(|&i| e[i as usize].t)
            .collect::<Vec<_>>(),
        vec![0, 5]
    );
    assert!(temporal_paths(&e, 3, a, a, 20, 60, 4, None)
        .unwrap()
        .paths
        .is_empty());
}

/// An [`OutEdges`] source over candidate edges kept in a different order than the input,
/// recording which nodes the enumeration asks for.
struct Recording<'a> {
    edges: &'a [TEdge],
    cand: Vec<u32>,
    loads: Vec<u32>,
}

impl OutEdges for Recording<'_> {
    fn load(&mut self, u: u32, buf: &mut Vec<u32>) {
        self.loads.push(u);
        buf.extend(
            self.cand
                .iter()
                .filter(|&&i| self.edges[i as usize].src == u),
        );
    }
    fn edge(&self, i: u32) -> &TEdge {
        &self.edges[i as usize]
    }
}

/// The served entry point loads exactly the nodes where a frame opens, each once (its cost
/// follows the explored frontier), and its paths do not depend on the order in which a
/// node's out-edges are served (no two paths tie on the sort key).
#[test]
fn served_paths_load_only_frame_nodes() {
    let mut rng = Rng::new(29);
    let mut loaded_some = 0;
    for case in 0..500 {
        let n = 3 + rng.below(5) as u32;
        let m = rng.below(24) as usize;
        let edges = random_edges(&mut rng, n, m, 20, case % 2 == 0, 8);
        let t_a = rng.int(0, 11);
        let t_b = rng.int(t_a + 1, 25);
        let (src, dst) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
        let max_hops = 1 + rng.below(5) as usize;
        // Candidates in reverse input order.
        let cand: Vec<u32> = (0..edges.len() as u32)
            .rev()
            .filter(|&i| edges[i as usize].t_end > t_a && edges[i as usize].t < t_b)
            .collect();
        let mut source = Recording {
            edges: &edges,
            cand,
            loads: Vec::new(),
        };
        let got = temporal_paths_from(&mut source, src, dst, t_a, t_b, max_hops, None).unwrap();
        let (want, units, frames) = oracle(&edges, src, dst, t_a, t_b, max_hops);
        let pairs: Vec<(i64, Vec<u32>)> = got
            .paths
            .iter()
            .map(|p| (p.arrival, p.edges.clone()))
            .collect();
        assert_eq!(pairs, want, "case {case}");
        assert_eq!(got.units, units, "case {case} units");
        let mut loads = source.loads.clone();
        loads.sort_unstable();
        loads.dedup();
        assert_eq!(
            loads.len(),
            source.loads.len(),
            "case {case}: a node loaded twice"
        );
        assert_eq!(
            loads.into_iter().collect::<BTreeSet<_>>(),
            frames,
            "case {case}"
        );
        loaded_some += (frames.len() > 2) as usize;
    }
    assert!(loaded_some > 30, "{loaded_some}");
}
