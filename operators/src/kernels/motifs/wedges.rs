//! The triangle motifs counted from δ-wedges instead of static triangles: for each event
//! `e1`, each later event `e2` within δ that shares exactly one node `x` with it, and the
//! events `e3` after `e2` within δ of `e1` on the pair that closes the triangle, counted by
//! direction from prefix sums. The work follows the number of δ-wedges, so it wins over the
//! per-static-triangle pass ([`super::count_triangles`]) when δ is short against the events'
//! spread — e.g. a node filter over a dense community, where every static triangle carries a
//! few events but almost none of them lie within δ of each other — and loses when δ covers
//! most of the span. [`count_triangles_by_wedges`] declines (returns `None`) above a wedge
//! budget per event; the counts are the same either way.

use super::{add_counts, class_matrix, classify, Csr, MotifEvent, MotifMatrix, PairIndex};
use rayon::prelude::*;

/// δ-wedges per event above which the static-triangle pass is used instead. A wedge costs
/// two short binary searches and a pair lookup; the static pass costs a few steps per event
/// of every static triangle, whatever δ.
pub(super) const WEDGES_PER_EVENT: u64 = 32;

/// The triangle counts of [`super::count_triangles`] (triangle cells only; `ev` in rank
/// order, `pi` its pair index), or `None` when the events are estimated to hold more than
/// `per_event` δ-wedges per event (callers pass [`WEDGES_PER_EVENT`]).
pub(super) fn count_triangles_by_wedges(
    ev: &[MotifEvent],
    pi: &PairIndex,
    n: usize,
    delta: i64,
    strict: bool,
    per_event: u64,
) -> Option<MotifMatrix> {
    let rank_of = |r: u32| r as usize;
    let loops_out = || {
        ev.iter()
            .enumerate()
            .filter(|(_, e)| e.src != e.dst)
            .map(|(r, e)| (r as u32, e))
    };
    // Σ C(deg, 2) wedges when δ covers the span; for times spread evenly a pair of events
    // of one node lies within δ with probability about 2δ / span. An estimate: it only
    // chooses the pass, and both count the same.
    let mut deg = vec![0u64; n];
    let mut m = 0u64;
    for (_, e) in loops_out() {
        deg[e.src as usize] += 1;
        deg[e.dst as usize] += 1;
        m += 1;
    }
    let pairs_at_nodes: f64 = deg
        .iter()
        .map(|&d| (d * d.saturating_sub(1) / 2) as f64)
        .sum();
    let span = match (ev.first(), ev.last()) {
        (Some(a), Some(b)) => (b.t - a.t).max(1) as f64,
        _ => 1.0,
    };
    let wedges_est = pairs_at_nodes * (2.0 * delta as f64 / span).min(1.0);
    if wedges_est > per_event.saturating_mul(m.max(1)) as f64 {
        return None;
    }
    drop(deg);
    // Incident non-self-loop events per node, in rank order (the scatter keeps input order).
    let inc: Csr<u32> = Csr::build(
        n,
        loops_out().flat_map(|(r, e)| [(e.src as usize, r), (e.dst as usize, r)]),
    );
    // Where each event sits in its endpoints' lists: `at[2r]` in its source's, `at[2r + 1]`
    // in its destination's.
    let mut at = vec![0u32; 2 * ev.len()];
    for x in 0..n {
        for (k, &r) in inc.get(x).iter().enumerate() {
            let side = usize::from(ev[rank_of(r)].src as usize != x);
            at[2 * rank_of(r) + side] = k as u32;
        }
    }
    // The later events of `x` (side 0: `x` is the source of `ev[r1]`) that can be the second
    // event after `ev[r1]`: rank above `r1` (strict: time above), time at most `t1 + δ`.
    // Lists are short within δ: linear probes before binary searches.
    let seconds = |x: u32, side: usize, r1: usize| -> &[u32] {
        let list = inc.get(x as usize);
        let t1 = ev[r1].t;
        let mut a = at[2 * r1 + side] as usize + 1;
        if strict {
            a = skip_while(list, a, |&r| ev[rank_of(r)].t <= t1);
        }
        let lim = t1.saturating_add(delta);
        let b = skip_while(list, a, |&r| ev[rank_of(r)].t <= lim);
        &list[a..b]
    };
    // The pairs of each node: pair ids by either endpoint.
    let pairs_of: Csr<u32> = Csr::build(
        n,
        (0..pi.len()).flat_map(|p| [(pi.lo[p] as usize, p as u32), (pi.hi[p] as usize, p as u32)]),
    );
    // `hi_lo[k]` = events running hi → lo among `pi.items[..k]`.
    let mut hi_lo = Vec::with_capacity(pi.items.len() + 1);
    hi_lo.push(0u32);
    for e in &pi.items {
        hi_lo.push(hi_lo[hi_lo.len() - 1] + u32::from(e.dir()));
    }
    let shapes = shape_table();
    // Per node `y` (the first event's endpoint that the third event touches): `pair_of[w]`
    // = the pair (y, w), set for y's pairs and cleared after, so that closing a wedge is one
    // load. Every first event `e1` is taken once from each endpoint.
    let raw: [u64; 36] = (0..n)
        .into_par_iter()
        .with_min_len(16)
        .fold(
            || ([0u64; 36], vec![u32::MAX; n]),
            |(mut acc, mut pair_of), y| {
                let y = y as u32;
                let mine = pairs_of.get(y as usize);
                for &p in mine {
                    let p = p as usize;
                    pair_of[(pi.lo[p] ^ pi.hi[p] ^ y) as usize] = p as u32;
                }
                for &r1 in inc.get(y as usize) {
                    let r1 = rank_of(r1);
                    let e1 = ev[r1];
                    // `x` is e1's other endpoint; `s` = x is e1's source.
                    let (s, x) = if e1.dst == y {
                        (1usize, e1.src)
                    } else {
                        (0, e1.dst)
                    };
                    let lim = e1.t.saturating_add(delta);
                    for &r2 in seconds(x, 1 - s, r1) {
                        let e2 = ev[rank_of(r2)];
                        let (o, w) = if e2.src == x {
                            (1usize, e2.dst)
                        } else {
                            (0, e2.src)
                        };
                        // w == y: the same pair, a two-node motif.
                        let p = pair_of[w as usize];
                        if w == y || p == u32::MAX {
                            continue;
                        }
                        let p = p as usize;
                        let (off, items) = (pi.off[p], pi.events(p));
                        let a = if strict {
                            skip_while(items, 0, |e| e.t <= e2.t)
                        } else {
                            skip_while(items, 0, |e| (e.r >> 1) <= r2)
                        };
                        let b = skip_while(items, a, |e| e.t <= lim);
                        if a == b {
                            continue;
                        }
                        let from_hi = u64::from(hi_lo[off + b] - hi_lo[off + a]);
                        let from_y = if y < w {
                            (b - a) as u64 - from_hi
                        } else {
                            from_hi
                        };
                        acc[shapes[s][o][1] as usize] += from_y;
                        acc[shapes[s][o][0] as usize] += (b - a) as u64 - from_y;
                    }
                }
                for &p in mine {
                    let p = p as usize;
                    pair_of[(pi.lo[p] ^ pi.hi[p] ^ y) as usize] = u32::MAX;
                }
                (acc, pair_of)
            },
        )
        .map(|(acc, _)| acc)
        .reduce(|| [0u64; 36], add_counts);
    Some(class_matrix(raw))
}

/// The first index `>= from` whose item fails `keep`, for a `keep` that holds on a prefix of
/// `items`: a few linear steps (the usual answer within δ is near), then a binary search.
#[inline]
fn skip_while<T>(items: &[T], from: usize, keep: impl Fn(&T) -> bool) -> usize {
    let probe = (from + 8).min(items.len());
    for (k, item) in items[from.min(probe)..probe].iter().enumerate() {
        if !keep(item) {
            return from + k;
        }
    }
    probe + items[probe..].partition_point(keep)
}

/// The class `(i − 1)·6 + (j − 1)` of a triangle instance by its shape
/// `[s][o][d]`: `s` = the shared node `x` is `e1`'s source, `o` = `x` is `e2`'s source,
/// `d` = `e3` runs from `e1`'s other node `y` to `e2`'s other node `w`.
fn shape_table() -> [[[u8; 2]; 2]; 2] {
    let (a, b, c) = (0u32, 1u32, 2u32);
    let mut tab = [[[0u8; 2]; 2]; 2];
    for s in 0..2 {
        for o in 0..2 {
            for d in 0..2 {
                let (x, y) = if s == 1 { (a, b) } else { (b, a) };
                let e2 = if o == 1 { (x, c) } else { (c, x) };
                let e3 = if d == 1 { (y, c) } else { (c, y) };
                let (i, j) = classify([(a, b), e2, e3]).expect("a triangle classifies");
                tab[s][o][d] = ((i - 1) * 6 + (j - 1)) as u8;
            }
        }
    }
    tab
}

#[cfg(test)]
mod tests {
    use super::super::{count_triangles, pair_index};
    use super::*;

    /// The wedge pass equals the static-triangle pass on random event sets with ties,
    /// repeated pairs and self loops, in both tie modes, for short and long δ.
    #[test]
    fn wedges_count_what_static_triangles_count() {
        let mut r = tgms_testkit::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| r.below(m);
        let mut non_zero = 0;
        for round in 0..60 {
            let n = 3 + next(12) as usize;
            let span = 1 + next(300) as i64;
            let mut ev: Vec<MotifEvent> = (0..next(500))
                .map(|_| MotifEvent {
                    t: next(span as u64) as i64,
                    src: next(n as u64) as u32,
                    dst: next(n as u64) as u32,
                })
                .collect();
            // Rank order is (t, position): a stable sort by time.
            ev.sort_by_key(|e| e.t);
            for strict in [false, true] {
                let delta = next(span as u64 + 20) as i64;
                let pi = pair_index(&ev, n);
                let got = count_triangles_by_wedges(&ev, &pi, n, delta, strict, u64::MAX)
                    .expect("an unlimited budget always counts");
                let want = count_triangles(pair_index(&ev, n), n, delta, strict);
                assert_eq!(got, want, "round {round} strict {strict} delta {delta}");
                non_zero += usize::from(got.iter().flatten().any(|&c| c > 0));
            }
        }
        assert!(non_zero >= 30, "only {non_zero} non-zero triangle counts");
    }

    /// The budget declines when the estimated wedges per event exceed it, and counts
    /// otherwise.
    #[test]
    fn the_budget_decides_by_wedges_per_event() {
        // A triangle a→b, b→c, c→a repeated at times 0, 1, 2, …: with δ covering all, every
        // event pairs with every later event on its two nodes.
        let ev: Vec<MotifEvent> = (0..30)
            .map(|k| MotifEvent {
                t: k,
                src: (k % 3) as u32,
                dst: ((k + 1) % 3) as u32,
            })
            .collect();
        let pi = pair_index(&ev, 3);
        assert!(count_triangles_by_wedges(&ev, &pi, 3, 1_000, false, 2).is_none());
        assert!(count_triangles_by_wedges(&ev, &pi, 3, 1_000, false, 100).is_some());
        // δ = 1 over 30 µs: about 1.3 wedges per event.
        assert!(count_triangles_by_wedges(&ev, &pi, 3, 1, false, 2).is_some());
    }
}
