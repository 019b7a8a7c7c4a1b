//! Instance listing for `find_temporal_motif_instances` (operators.md §15): enumerates the
//! instances of one motif, ordered lexicographically by the `(t, eid)` keys of e1, e2, e3.
//!
//! Enumeration is local ([`super::motif_local`]): the candidates of each e1 come from the
//! incidence lists of the nodes inside its δ-window. Parallel over e1 (rayon), concatenated
//! in e1 order: deterministic.

use super::motif_local::{Incidence, Scratch};
use super::motifs::{classify, ranked_by, Motif, NamedMotif};
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
    let ev = ranked_by(events, &order);
    let local = Incidence::new(&ev, node_count(events), delta, tie);
    let mut b0 = 0;
    while b0 < m {
        let b1 = (b0 + BLOCK).min(m);
        let per_e1: Vec<Vec<[u32; 3]>> = (b0..b1)
            .into_par_iter()
            .with_min_len(64)
            .map_init(Scratch::default, |scratch, r1| {
                let mut out = Vec::new();
                let e1 = ev[r1];
                local.each_from(r1, scratch, |r2, r3| {
                    let (x, y) = (ev[r2 as usize], ev[r3 as usize]);
                    if matches(motif, [(e1.src, e1.dst), (x.src, x.dst), (y.src, y.dst)]) {
                        out.push([order[r1], order[r2 as usize], order[r3 as usize]]);
                    }
                });
                out
            })
            .collect();
        for x in per_e1.into_iter().flatten() {
            f(x);
        }
        b0 = b1;
    }
}
