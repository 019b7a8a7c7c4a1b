//! Instance listing for `find_temporal_motif_instances` (operators.md §15): enumerates the
//! instances of one motif, ordered lexicographically by the `(t, eid)` keys of e1, e2, e3.
//!
//! Enumeration is local: e2 must share a node with e1 and e3 a node with e1 or e2 (true of
//! every motif of §14.2 and §14.5), so candidates come from per-node incidence lists inside
//! the δ-window of e1. Parallel over e1 (rayon), concatenated in e1 order: deterministic.

use super::motifs::{classify, Motif, NamedMotif};
use super::{event_order, node_count, TEdge, TieMode};
use rayon::prelude::*;

/// Does the ordered triple `(e1, e2, e3)` (as `(src, dst)`) match `motif` (§14.2 / §14.5)?
pub fn matches(motif: Motif, e: [(u32, u32); 3]) -> bool {
    let [(s1, d1), (s2, d2), (s3, d3)] = e;
    if e.iter().any(|&(s, d)| s == d) {
        return false;
    }
    match motif {
        Motif::Catalogue(i, j) => classify(e) == Some((i as usize, j as usize)),
        Motif::Named(NamedMotif::TriangleCyclic) => s2 == d1 && s3 == d2 && d3 == s1 && d2 != s1,
        Motif::Named(NamedMotif::TriangleAcyclic1) => s2 == s1 && s3 == d1 && d3 == d2 && d2 != d1,
        Motif::Named(NamedMotif::Pingpong2) => s2 == d1 && d2 == s1 && s3 == s1 && d3 == d1,
        Motif::Named(NamedMotif::StarOut3) => {
            s2 == s1 && s3 == s1 && d1 != d2 && d1 != d3 && d2 != d3
        }
        Motif::Named(NamedMotif::Path3) => s2 == d1 && s3 == d2 && s1 != d2 && s1 != d3 && d1 != d3,
    }
}

/// All instances of `motif`, as indices into `events`, ordered by `(e1, e2, e3)` in `(t, eid)`
/// order. `rows_total` = the length. The caller applies the §14.3 step-3 cap before calling.
pub fn find_instances(events: &[TEdge], delta: i64, tie: TieMode, motif: Motif) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    for_each_instance(events, delta, tie, motif, |x| out.push(x));
    out
}

/// Number of e1 events enumerated in parallel per block by [`for_each_instance`].
const BLOCK: usize = 4096;

/// Streams the instances of [`find_instances`] to `f`, in the same order, holding only one
/// block of e1 events' instances in memory (for `rows_total`, the page and `set_digest`
/// without materialising every instance).
pub fn for_each_instance(
    events: &[TEdge],
    delta: i64,
    tie: TieMode,
    motif: Motif,
    mut f: impl FnMut([u32; 3]),
) {
    let order = event_order(events);
    let m = order.len();
    let n = node_count(events);
    let strict = tie == TieMode::Strict;
    let ev: Vec<(i64, u32, u32)> = order
        .iter()
        .map(|&i| {
            let e = &events[i as usize];
            (e.t, e.src, e.dst)
        })
        .collect();
    // Per-node incidence lists of ranks (self loops excluded), in rank order.
    let mut off = vec![0usize; n + 1];
    for &(_, s, d) in &ev {
        if s != d {
            off[s as usize + 1] += 1;
            off[d as usize + 1] += 1;
        }
    }
    for k in 0..n {
        off[k + 1] += off[k];
    }
    let mut pos = off.clone();
    let mut inc = vec![0u32; off[n]];
    for (r, &(_, s, d)) in ev.iter().enumerate() {
        if s != d {
            for x in [s, d] {
                inc[pos[x as usize]] = r as u32;
                pos[x as usize] += 1;
            }
        }
    }
    let inc_of = |x: u32| &inc[off[x as usize]..off[x as usize + 1]];
    // Ranks of `nodes`' incident events after rank `after` (strict: after time `t_after`) and
    // with t <= hi, sorted and deduplicated.
    let gather = |nodes: &[u32], after: usize, t_after: i64, hi: i64, buf: &mut Vec<u32>| {
        buf.clear();
        for &x in nodes {
            let l = inc_of(x);
            let lo = if strict {
                l.partition_point(|&r| ev[r as usize].0 <= t_after)
            } else {
                l.partition_point(|&r| (r as usize) <= after)
            };
            for &r in &l[lo..] {
                if ev[r as usize].0 > hi {
                    break;
                }
                buf.push(r);
            }
        }
        buf.sort_unstable();
        buf.dedup();
    };
    let mut b0 = 0;
    while b0 < m {
        let b1 = (b0 + BLOCK).min(m);
        let per_e1: Vec<Vec<[u32; 3]>> = (b0..b1)
            .into_par_iter()
            .with_min_len(64)
            .map_init(
                || (Vec::new(), Vec::new()),
                |(b2, b3): &mut (Vec<u32>, Vec<u32>), r1| {
                    let mut out = Vec::new();
                    let (t1, s1, d1) = ev[r1];
                    if s1 == d1 {
                        return out;
                    }
                    let hi = t1.saturating_add(delta);
                    gather(&[s1, d1], r1, t1, hi, b2);
                    for &r2 in b2.iter() {
                        let (t2, s2, d2) = ev[r2 as usize];
                        let mut nodes = [s1, d1, s2, d2];
                        nodes.sort_unstable();
                        let mut k = 1;
                        for q in 1..4 {
                            if nodes[q] != nodes[k - 1] {
                                nodes[k] = nodes[q];
                                k += 1;
                            }
                        }
                        gather(&nodes[..k], r2 as usize, t2, hi, b3);
                        for &r3 in b3.iter() {
                            let (_, s3, d3) = ev[r3 as usize];
                            if matches(motif, [(s1, d1), (s2, d2), (s3, d3)]) {
                                out.push([order[r1], order[r2 as usize], order[r3 as usize]]);
                            }
                        }
                    }
                    out
                },
            )
            .collect();
        for x in per_e1.into_iter().flatten() {
            f(x);
        }
        b0 = b1;
    }
}
