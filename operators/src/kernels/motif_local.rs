//! Local enumeration of δ-temporal motif triples by their first event (operators.md §14.1,
//! §15): per-node incidence lists over a ranked event sequence, so the triples whose first
//! event is `e1` are found from the δ-window of the nodes they touch alone.
//!
//! Every motif of §14.2 and §14.5 is connected in time order: e2 shares a node with e1 and
//! e3 a node with e1 or e2. So e2 is drawn from the incidence lists of e1's endpoints and e3
//! from those of the (up to three) endpoints of e1 and e2, each inside `(e_prev, t(e1) + δ]`.
//! Used by instance listing ([`super::motif_instances`]) and by the sampler
//! ([`super::motif_sample`]), which counts the triples of sampled first events.

use super::motifs::MotifEvent;
use super::TieMode;
use rustc_hash::FxHashMap;

/// Per-node incidence lists of an event sequence in the total `(t, eid)` order.
pub struct Incidence<'a> {
    /// The events; a position is the event's rank.
    ev: &'a [MotifEvent],
    /// `inc[off[x]..off[x + 1]]`: the ranks of node `x`'s events, ascending; self loops are
    /// left out (they never participate).
    off: Vec<usize>,
    inc: Vec<u32>,
    delta: i64,
    strict: bool,
}

/// Scratch buffers of one enumerating thread.
#[derive(Default)]
pub struct Scratch {
    e2: Vec<u32>,
    e3: Vec<u32>,
    /// [`Incidence::catalogue_from`]: per third node `x`, the later candidates `u→x`,
    /// `x→u`, `v→x`, `x→v`.
    third: FxHashMap<u32, [u64; 4]>,
}

impl<'a> Incidence<'a> {
    /// The incidence lists of `ev` (ranked, node ids below `n`, fewer than 2^32 events),
    /// in rank order ([`super::node_lists`]).
    pub fn new(ev: &'a [MotifEvent], n: usize, delta: i64, tie: TieMode) -> Incidence<'a> {
        let (off, inc) = super::node_lists::node_lists(ev, n);
        Incidence {
            ev,
            off,
            inc,
            delta,
            strict: tie == TieMode::Strict,
        }
    }

    /// Node `x`'s list.
    fn of(&self, x: u32) -> &[u32] {
        &self.inc[self.off[x as usize]..self.off[x as usize + 1]]
    }

    /// The events, by rank.
    pub fn events(&self) -> &'a [MotifEvent] {
        self.ev
    }

    /// Node `x`'s events after rank `after` (strict: after its time) and up to time `hi`.
    fn after(&self, x: u32, after: usize, hi: i64) -> &[u32] {
        let l = self.of(x);
        let lo = if self.strict {
            let t_after = self.ev[after].t;
            l.partition_point(|&r| self.ev[r as usize].t <= t_after)
        } else {
            l.partition_point(|&r| (r as usize) <= after)
        };
        let n = l[lo..]
            .iter()
            .position(|&r| self.ev[r as usize].t > hi)
            .unwrap_or(l.len() - lo);
        &l[lo..lo + n]
    }

    /// The e2 candidates of `r1` into `e2` — the merged lists of its endpoints `u`, `v` after
    /// it and up to `hi = t(r1) + δ` — and `(u, v, hi)`; `None` for a self loop.
    fn second_candidates(&self, r1: usize, e2: &mut Vec<u32>) -> Option<(u32, u32, i64)> {
        let e1 = self.ev[r1];
        if e1.src == e1.dst {
            return None;
        }
        let (u, v) = (e1.src, e1.dst);
        let hi = e1.t.saturating_add(self.delta);
        merge(self.after(u, r1, hi), self.after(v, r1, hi), |_| true, e2);
        Some((u, v, hi))
    }

    /// Calls `f(r2, r3)` for every candidate triple `(r1, r2, r3)` whose first event is `r1`:
    /// `r1 < r2 < r3` (strict: with increasing times), `t(r3) − t(r1) <= δ`, e2 sharing a node
    /// with e1 and e3 a node with e1 or e2, no self loop — in `(r2, r3)` order. Whether a
    /// triple is a given motif is the caller's test.
    ///
    /// The e2 candidates are the merged lists of e1's endpoints `u`, `v`. The e3 candidates of
    /// an e2 are the e2 candidates after it (the events of `u` and `v` there) and, when e2
    /// brings a third node `w`, `w`'s events after e2 that touch neither `u` nor `v` (those
    /// are already among the first): one list search per e2 at most.
    pub fn each_from(&self, r1: usize, s: &mut Scratch, mut f: impl FnMut(u32, u32)) {
        let Scratch { e2, e3, .. } = s;
        let Some((u, v, hi)) = self.second_candidates(r1, e2) else {
            return;
        };
        for (k, &r2) in e2.iter().enumerate() {
            let x = self.ev[r2 as usize];
            let mut rest = &e2[k + 1..];
            if self.strict {
                rest = &rest[rest.partition_point(|&r| self.ev[r as usize].t <= x.t)..];
            }
            let w = [x.src, x.dst].into_iter().find(|&y| y != u && y != v);
            let Some(w) = w else {
                rest.iter().for_each(|&r3| f(r2, r3));
                continue;
            };
            let off_uv = |r: &u32| {
                let y = self.ev[*r as usize];
                y.src != u && y.src != v && y.dst != u && y.dst != v
            };
            merge(rest, self.after(w, r2 as usize, hi), off_uv, e3);
            e3.iter().for_each(|&r3| f(r2, r3));
        }
    }

    /// Adds to `counts` (row-major `M_1_1` … `M_6_6`) the catalogue instances whose first
    /// event is `r1`, without enumerating them: the same triples as [`Self::each_from`]
    /// classified as by [`super::motifs::classify`], in time linear in the e2 candidates.
    ///
    /// A catalogue instance has at most three nodes, so its e3 is an event of `u` or `v` —
    /// another e2 candidate, later than e2 — and never needs the third node's list. Walking
    /// the candidates from the last, suffix counters hold the later candidates by their
    /// relation to `(u, v)` (`agg`: `u→v`, `v→u`, `u→x`, `x→u`, `v→x`, `x→v` for any third
    /// node `x`) and per third node; each e2's row of the matrix is read off them.
    pub fn catalogue_from(&self, r1: usize, s: &mut Scratch, counts: &mut [u64; 36]) {
        let Scratch { e2, third, .. } = s;
        let Some((u, v, _)) = self.second_candidates(r1, e2) else {
            return;
        };
        third.clear();
        let mut agg = [0u64; 6];
        let mut k = e2.len();
        while k > 0 {
            // The tie group ending at `k`: in strict mode the events of equal time (never e2
            // and e3 of one instance), else the one event.
            let mut g = k - 1;
            if self.strict {
                let t = self.ev[e2[k - 1] as usize].t;
                while g > 0 && self.ev[e2[g - 1] as usize].t == t {
                    g -= 1;
                }
            }
            for &r2 in &e2[g..k] {
                // e2's class `i` (1-based) is `6 − slot` (`M_6_*` starts `u→v, u→v`, …,
                // `M_1_*` starts `u→v, w→v`).
                let (slot, w) = relation(self.ev[r2 as usize], u, v);
                let i = 6 - slot;
                let row = &mut counts[(i - 1) * 6..i * 6];
                match w {
                    None => row.iter_mut().zip(agg).for_each(|(c, a)| *c += a),
                    Some(w) => {
                        row[0] += agg[0];
                        row[1] += agg[1];
                        if let Some(c) = third.get(&w) {
                            row[2..].iter_mut().zip(c).for_each(|(r, c)| *r += c);
                        }
                    }
                }
            }
            for &r in &e2[g..k] {
                let (slot, x) = relation(self.ev[r as usize], u, v);
                agg[slot] += 1;
                if let Some(x) = x {
                    third.entry(x).or_default()[slot - 2] += 1;
                }
            }
            k = g;
        }
    }
}

/// The relation of an event `y` of `u` or `v` (not a self loop) to `(u, v)`: its slot `u→v`
/// 0, `v→u` 1, `u→x` 2, `x→u` 3, `v→x` 4, `x→v` 5 — which is also its class as e3 minus one
/// (§14.5, with `x` the third node) — and the third node `x`, if any.
fn relation(y: MotifEvent, u: u32, v: u32) -> (usize, Option<u32>) {
    if (y.src, y.dst) == (u, v) {
        (0, None)
    } else if (y.src, y.dst) == (v, u) {
        (1, None)
    } else if y.src == u {
        (2, Some(y.dst))
    } else if y.dst == u {
        (3, Some(y.src))
    } else if y.src == v {
        (4, Some(y.dst))
    } else {
        (5, Some(y.src))
    }
}

/// `a` and the entries of `b` that `keep`, merged into `out` ascending without repeats
/// (both ascending).
fn merge(a: &[u32], b: &[u32], keep: impl Fn(&u32) -> bool, out: &mut Vec<u32>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else if i < a.len() && a[i] == b[j] {
            out.push(a[i]);
            i += 1;
            j += 1;
        } else {
            if keep(&b[j]) {
                out.push(b[j]);
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::motifs::{classify, random_ranked};

    /// Each node's list holds its events (self loops left out) in rank order.
    #[test]
    fn lists_hold_each_nodes_events_in_rank_order() {
        let mut r = tgms_testkit::Rng::new(7);
        let ev = random_ranked(&mut r, 50, 5_000, 1_000);
        let inc = Incidence::new(&ev, 60, 10, TieMode::Ordered);
        for x in 0..60u32 {
            let want: Vec<u32> = (0..ev.len() as u32)
                .filter(|&r| {
                    let e = ev[r as usize];
                    e.src != e.dst && (e.src == x || e.dst == x)
                })
                .collect();
            assert_eq!(inc.of(x), want, "node {x}");
        }
    }

    /// `catalogue_from` counts exactly the triples `each_from` lists that `classify` places,
    /// event by event, in both tie modes (random small graphs with ties and self loops).
    #[test]
    fn counting_equals_classifying_the_enumeration() {
        let mut r = tgms_testkit::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut seen = 0;
        for case in 0..300 {
            let nodes = 2 + r.below(6u64) as usize;
            let m = r.below(40u64) as usize;
            let ev = random_ranked(&mut r, nodes, m, 30);
            let delta = 1 + r.below(12u64) as i64;
            for tie in [TieMode::Ordered, TieMode::Strict] {
                let inc = Incidence::new(&ev, nodes, delta, tie);
                let mut s = Scratch::default();
                for r1 in 0..ev.len() {
                    let mut want = [0u64; 36];
                    let e1 = ev[r1];
                    inc.each_from(r1, &mut s, |r2, r3| {
                        let (a, b) = (ev[r2 as usize], ev[r3 as usize]);
                        if let Some((i, j)) =
                            classify([(e1.src, e1.dst), (a.src, a.dst), (b.src, b.dst)])
                        {
                            want[(i - 1) * 6 + j - 1] += 1;
                        }
                    });
                    let mut got = [0u64; 36];
                    inc.catalogue_from(r1, &mut s, &mut got);
                    assert_eq!(got, want, "case {case} {tie:?} r1 {r1} δ {delta} {ev:?}");
                    seen += want.iter().sum::<u64>();
                }
            }
        }
        assert!(
            seen > 1_000,
            "only {seen} instances: the graphs are too sparse to test"
        );
    }
}
