//! Motif kernels (operators.md §14, §14.5, §15) against a brute-force oracle written from the
//! spec: explicit enumeration of event triples and pattern binding.

mod kernels_common;

use kernels_common::*;
use tgms_operators::kernels::motif_instances::find_instances;
use tgms_operators::kernels::motifs::{
    count_all, count_motif, count_named_all, matrix_total, select_events, Motif, MotifMatrix,
    NamedMotif,
};
use tgms_operators::kernels::{TEdge, TieMode};

const NAMED: [NamedMotif; 5] = [
    NamedMotif::Pingpong2,
    NamedMotif::Path3,
    NamedMotif::StarOut3,
    NamedMotif::TriangleAcyclic1,
    NamedMotif::TriangleCyclic,
];

/// The catalogue pattern of `M_i_j` over variables 0, 1, 2 (§14.5 table).
fn catalogue_pattern(i: usize, j: usize) -> [(u8, u8); 3] {
    let e2 = [(2, 1), (1, 2), (2, 0), (0, 2), (1, 0), (0, 1)][i - 1];
    let e3 = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)][j - 1];
    [(0, 1), e2, e3]
}

fn named_pattern(m: NamedMotif) -> [(u8, u8); 3] {
    match m {
        NamedMotif::TriangleCyclic => [(0, 1), (1, 2), (2, 0)],
        NamedMotif::TriangleAcyclic1 => [(0, 1), (0, 2), (1, 2)],
        NamedMotif::Pingpong2 => [(0, 1), (1, 0), (0, 1)],
        NamedMotif::StarOut3 => [(0, 1), (0, 2), (0, 3)],
        NamedMotif::Path3 => [(0, 1), (1, 2), (2, 3)],
    }
}

/// Is there a binding of the pattern variables to pairwise distinct nodes mapping the pattern
/// edges onto the events?
fn binds(p: [(u8, u8); 3], e: [(u32, u32); 3]) -> bool {
    let mut bind: [Option<u32>; 4] = [None; 4];
    for q in 0..3 {
        for (var, node) in [(p[q].0, e[q].0), (p[q].1, e[q].1)] {
            match bind[var as usize] {
                Some(x) if x != node => return false,
                Some(_) => {}
                None => {
                    if bind.contains(&Some(node)) {
                        return false;
                    }
                    bind[var as usize] = Some(node);
                }
            }
        }
    }
    true
}

/// All candidate triples (indices into `events`) in `(e1, e2, e3)` order.
fn oracle_triples(events: &[TEdge], delta: i64, tie: TieMode) -> Vec<[usize; 3]> {
    let mut idx: Vec<usize> = (0..events.len()).collect();
    idx.sort_by_key(|&i| (events[i].t, events[i].eid));
    let mut out = Vec::new();
    let n = idx.len();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                let (x, y, z) = (&events[idx[a]], &events[idx[b]], &events[idx[c]]);
                if z.t - x.t > delta {
                    continue;
                }
                if tie == TieMode::Strict && !(x.t < y.t && y.t < z.t) {
                    continue;
                }
                out.push([idx[a], idx[b], idx[c]]);
            }
        }
    }
    out
}

fn pairs_of(events: &[TEdge], t: [usize; 3]) -> [(u32, u32); 3] {
    t.map(|i| (events[i].src, events[i].dst))
}

fn oracle_matrix(events: &[TEdge], delta: i64, tie: TieMode) -> MotifMatrix {
    let mut m = [[0u64; 6]; 6];
    for t in oracle_triples(events, delta, tie) {
        let e = pairs_of(events, t);
        let mut hits = 0;
        for i in 1..=6 {
            for j in 1..=6 {
                if binds(catalogue_pattern(i, j), e) {
                    m[i - 1][j - 1] += 1;
                    hits += 1;
                }
            }
        }
        assert!(hits <= 1, "a triple belongs to at most one M_i_j");
    }
    m
}

fn oracle_instances(events: &[TEdge], delta: i64, tie: TieMode, motif: Motif) -> Vec<[u32; 3]> {
    let pat = match motif {
        Motif::Named(nm) => named_pattern(nm),
        Motif::Catalogue(i, j) => catalogue_pattern(i as usize, j as usize),
    };
    oracle_triples(events, delta, tie)
        .into_iter()
        .filter(|&t| binds(pat, pairs_of(events, t)))
        .map(|t| t.map(|x| x as u32))
        .collect()
}

#[test]
fn random_catalogue_and_named_vs_oracle() {
    let mut rng = Rng::new(14);
    let mut seen = [[[0u64; 6]; 6]; 2];
    let mut named_seen = [[0u64; 5]; 2];
    for case in 0..700 {
        let n = 2 + rng.below(7) as u32;
        let m = rng.below(28) as usize;
        let t_max = [3, 10, 40][case % 3];
        let events = random_edges(&mut rng, n, m, t_max, case % 5 == 0, 10);
        let delta = rng.int(1, t_max + 3);
        for tie in [TieMode::Ordered, TieMode::Strict] {
            let want = oracle_matrix(&events, delta, tie);
            let got = count_all(&events, delta, tie);
            for i in 0..6 {
                for j in 0..6 {
                    seen[tie as usize][i][j] += want[i][j];
                }
            }
            assert_eq!(
                got, want,
                "case {case} tie {tie:?} delta {delta} events {events:?}"
            );
            let (i, j) = (1 + rng.below(6) as u8, 1 + rng.below(6) as u8);
            assert_eq!(
                count_motif(&events, delta, tie, Motif::Catalogue(i, j)),
                want[i as usize - 1][j as usize - 1],
                "case {case} M_{i}_{j}"
            );
            let named = count_named_all(&events, delta, tie);
            for (k, nm) in NAMED.iter().enumerate() {
                let want_inst = oracle_instances(&events, delta, tie, Motif::Named(*nm));
                assert_eq!(
                    named[k],
                    want_inst.len() as u64,
                    "case {case} {:?} {tie:?}",
                    nm
                );
                named_seen[tie as usize][k] += named[k];
                assert_eq!(
                    find_instances(&events, delta, tie, Motif::Named(*nm)),
                    want_inst,
                    "case {case} {nm:?}"
                );
            }
            let cm = Motif::Catalogue(i, j);
            assert_eq!(
                find_instances(&events, delta, tie, cm),
                oracle_instances(&events, delta, tie, cm)
            );
        }
    }
    // Coverage: every motif occurs in both tie modes.
    for mode in 0..2 {
        assert!(
            seen[mode].iter().flatten().all(|&c| c > 0),
            "{:?}",
            seen[mode]
        );
        assert!(
            named_seen[mode].iter().all(|&c| c > 0),
            "{:?}",
            named_seen[mode]
        );
    }
}

#[test]
fn dense_ties_vs_oracle() {
    // Few nodes, few distinct times: many equal-time events, both tie modes.
    let mut rng = Rng::new(99);
    for case in 0..300 {
        let n = 3 + rng.below(3) as u32;
        let m = 10 + rng.below(25) as usize;
        let events = random_edges(&mut rng, n, m, 2 + (case % 3) as i64, false, 1);
        let delta = rng.int(1, 5);
        for tie in [TieMode::Ordered, TieMode::Strict] {
            assert_eq!(
                count_all(&events, delta, tie),
                oracle_matrix(&events, delta, tie),
                "case {case} {tie:?}"
            );
        }
    }
}

#[test]
fn medium_graphs_vs_oracle() {
    // Larger event sets (hubs with many neighbours, long windows) against the oracle, and the
    // instance lists of all 36 catalogue motifs against the counts.
    let mut rng = Rng::new(2024);
    for case in 0..40 {
        let n = 4 + rng.below(10) as u32;
        let m = 60 + rng.below(90) as usize;
        let t_max = [20, 100, 400][case % 3];
        let mut events = random_edges(&mut rng, n, m, t_max, false, 1);
        if case % 4 == 0 {
            // A hub: most events touch node 0.
            for e in events.iter_mut().step_by(2) {
                e.src = 0;
            }
        }
        let delta = rng.int(1, t_max / 2 + 1);
        for tie in [TieMode::Ordered, TieMode::Strict] {
            let want = oracle_matrix(&events, delta, tie);
            assert_eq!(count_all(&events, delta, tie), want, "case {case} {tie:?}");
            if case % 8 == 0 {
                for i in 1..=6u8 {
                    for j in 1..=6u8 {
                        let inst = find_instances(&events, delta, tie, Motif::Catalogue(i, j));
                        assert_eq!(inst.len() as u64, want[i as usize - 1][j as usize - 1]);
                    }
                }
            }
        }
    }
}

#[test]
fn thread_count_does_not_change_results() {
    let mut rng = Rng::new(7);
    for case in 0..4 {
        let events = random_edges(&mut rng, 40 + 20 * case, 5000, 2500, false, 1);
        for tie in [TieMode::Ordered, TieMode::Strict] {
            let (a, b) = one_and_many(|| count_all(&events, 60, tie));
            assert_eq!(a, b);
            let (a, b) = one_and_many(|| count_named_all(&events, 60, tie));
            assert_eq!(a, b);
            let (a, b) = one_and_many(|| find_instances(&events, 30, tie, Motif::Catalogue(2, 4)));
            assert_eq!(a, b);
            assert_eq!(
                a.len() as u64,
                count_motif(&events, 30, tie, Motif::Catalogue(2, 4))
            );
        }
    }
}

/// Communities of `size` nodes (70 % of events inside one) with random bridges, `per_t`
/// events per time step: many static triangles with several events per pair.
fn community_edges(rng: &mut Rng, n: u32, size: u32, m: usize, per_t: usize) -> Vec<TEdge> {
    (0..m)
        .map(|k| {
            let src = rng.below(n as u64) as u32;
            let dst = if rng.below(10) < 7 {
                (src / size * size + rng.below(size as u64) as u32).min(n - 1)
            } else {
                rng.below(n as u64) as u32
            };
            let mut eid = [0u8; 12];
            eid[4..].copy_from_slice(&rng.next_u64().to_be_bytes());
            ev(src, dst, (k / per_t) as i64, eid)
        })
        .collect()
}

#[test]
fn community_graphs_vs_oracle() {
    // Dense small communities: multi-event pairs in many triangles, with δ covering the whole
    // span (the window-free triangle counter) and narrower (the windowed one).
    let mut rng = Rng::new(5);
    for case in 0..24 {
        let events = community_edges(&mut rng, 8 + case % 5, 4, 90 + 3 * case as usize, 2);
        for delta in [1000, 9] {
            for tie in [TieMode::Ordered, TieMode::Strict] {
                assert_eq!(
                    count_all(&events, delta, tie),
                    oracle_matrix(&events, delta, tie),
                    "case {case} delta {delta} {tie:?}"
                );
            }
        }
    }
}

#[test]
fn community_graph_threads_and_relabelling() {
    // Enough nodes for rayon to split every pass; the counts must not depend on the thread
    // count, on the node numbering (x ↦ 7x mod n is a bijection for n = 600), or on running
    // the catalogue classes one at a time.
    let mut rng = Rng::new(31);
    let n = 600;
    let events = community_edges(&mut rng, n, 12, 12_000, 3);
    let relabelled: Vec<TEdge> = events
        .iter()
        .map(|e| TEdge {
            src: e.src * 7 % n,
            dst: e.dst * 7 % n,
            ..*e
        })
        .collect();
    for delta in [1_000_000, 40] {
        for tie in [TieMode::Ordered, TieMode::Strict] {
            let (a, b) = one_and_many(|| count_all(&events, delta, tie));
            assert_eq!(a, b, "delta {delta} {tie:?}");
            if delta > 4000 {
                // δ covers the whole span: every class occurs.
                assert!(a.iter().flatten().all(|&c| c > 0), "{a:?}");
            }
            assert_eq!(
                count_all(&relabelled, delta, tie),
                a,
                "delta {delta} {tie:?}"
            );
            for (i, j) in [(1, 3), (2, 4), (5, 1), (6, 2), (3, 1), (4, 6)] {
                let (x, y) =
                    one_and_many(|| count_motif(&events, delta, tie, Motif::Catalogue(i, j)));
                assert_eq!(x, y);
                assert_eq!(x, a[i as usize - 1][j as usize - 1], "M_{i}_{j}");
            }
        }
    }
}

fn tv9() -> Vec<TEdge> {
    let (a, b, c) = (0, 1, 2);
    vec![
        ev(a, b, 10, hex_eid("525d5e8ec7d4615ae428838b")),
        ev(b, c, 20, hex_eid("52c17a8b3c0dfaae3e584f5f")),
        ev(c, a, 30, hex_eid("1509947f408beb08cc82374e")),
        ev(a, b, 40, hex_eid("69217de0738c26302db43351")),
        ev(b, a, 41, hex_eid("0938525cd7c1e62244fabefb")),
        ev(a, b, 42, hex_eid("0a18376aba031b4a61221abd")),
    ]
}

#[test]
fn tv9_named_motifs() {
    let e = tv9();
    let o = TieMode::Ordered;
    let named = |m| Motif::Named(m);
    assert_eq!(count_motif(&e, 20, o, named(NamedMotif::TriangleCyclic)), 2);
    assert_eq!(count_motif(&e, 19, o, named(NamedMotif::TriangleCyclic)), 0);
    assert_eq!(count_motif(&e, 20, o, named(NamedMotif::Pingpong2)), 1);
    assert_eq!(count_motif(&e, 20, o, named(NamedMotif::Path3)), 0);
    assert_eq!(count_motif(&e, 20, o, named(NamedMotif::StarOut3)), 0);
    assert_eq!(
        count_motif(&e, 20, o, named(NamedMotif::TriangleAcyclic1)),
        0
    );
    assert_eq!(
        find_instances(&e, 5, o, named(NamedMotif::Pingpong2)),
        vec![[3, 4, 5]]
    );
    let tri = find_instances(&e, 20, o, named(NamedMotif::TriangleCyclic));
    assert_eq!(tri, vec![[0, 1, 2], [1, 2, 3]]);
}

fn tv23() -> Vec<TEdge> {
    let (a, b, c) = (0, 1, 2);
    vec![
        ev(a, b, 10, hex_eid("525d5e8ec7d4615ae428838b")),
        ev(b, c, 10, hex_eid("52c17a8b3c0dfaae3e584f5f")),
        ev(c, a, 20, hex_eid("1509947f408beb08cc82374e")),
        ev(a, c, 20, hex_eid("f5f54a1a487a5ea20d13df35")),
        ev(b, a, 30, hex_eid("0938525cd7c1e62244fabefb")),
    ]
}

fn mat(entries: &[((usize, usize), u64)]) -> MotifMatrix {
    let mut m = [[0u64; 6]; 6];
    for &((i, j), v) in entries {
        m[i - 1][j - 1] = v;
    }
    m
}

#[test]
fn tv23_catalogue_and_tie_modes() {
    let mut e = tv23();
    e.reverse(); // input order must not matter
    let (o, s) = (TieMode::Ordered, TieMode::Strict);
    let ordered = mat(&[
        ((1, 3), 1),
        ((2, 2), 1),
        ((2, 3), 2),
        ((2, 4), 1),
        ((2, 6), 1),
        ((3, 2), 1),
        ((3, 3), 1),
        ((4, 2), 1),
        ((5, 6), 1),
    ]);
    assert_eq!(count_all(&e, 20, o), ordered);
    assert_eq!(matrix_total(&ordered), 10);
    let strict = mat(&[((1, 3), 1), ((2, 3), 1), ((3, 2), 1), ((4, 2), 1)]);
    assert_eq!(count_all(&e, 20, s), strict);
    assert_eq!(
        count_all(&e, 10, o),
        mat(&[
            ((2, 3), 1),
            ((2, 4), 1),
            ((2, 6), 1),
            ((3, 3), 1),
            ((5, 6), 1)
        ])
    );
    assert_eq!(count_all(&e, 10, s), [[0; 6]; 6]);
    assert_eq!(count_motif(&e, 20, o, Motif::Catalogue(2, 3)), 2);
    assert_eq!(count_motif(&e, 20, s, Motif::Catalogue(2, 3)), 1);
    for (tie, want) in [(o, 1), (s, 0)] {
        assert_eq!(count_motif(&e, 20, tie, Motif::Catalogue(2, 4)), want);
        assert_eq!(
            count_motif(&e, 20, tie, Motif::Named(NamedMotif::TriangleCyclic)),
            want
        );
        assert_eq!(
            count_motif(&e, 20, tie, Motif::Named(NamedMotif::Pingpong2)),
            0
        );
        assert_eq!(count_motif(&e, 20, tie, Motif::Catalogue(5, 1)), 0);
    }
    // find M_2_3: (a→b@10, b→c@10, a→c@20) and (b→c@10, c→a@20, b→a@30); indices into the
    // reversed input.
    let idx = |k: usize| 4 - k as u32;
    assert_eq!(
        find_instances(&e, 20, o, Motif::Catalogue(2, 3)),
        vec![[idx(0), idx(1), idx(3)], [idx(1), idx(2), idx(4)]]
    );
}

#[test]
fn motif_parse() {
    assert_eq!(Motif::parse("M_1_6"), Some(Motif::Catalogue(1, 6)));
    assert_eq!(Motif::parse("M_7_1"), None);
    assert_eq!(
        Motif::parse("M_path_3"),
        Some(Motif::Named(NamedMotif::Path3))
    );
    for nm in NAMED {
        assert_eq!(Motif::parse(nm.name()), Some(Motif::Named(nm)));
    }
}

#[test]
fn event_selection() {
    let e = tv9();
    assert_eq!(select_events(&e, 0, 100, None).len(), 6);
    assert_eq!(select_events(&e, 20, 41, None).len(), 3);
    let keep_ab = |x: u32| x < 2;
    let sel = select_events(&e, 0, 100, Some(&keep_ab));
    assert_eq!(sel.len(), 4);
    assert_eq!(
        count_motif(
            &sel,
            5,
            TieMode::Ordered,
            Motif::Named(NamedMotif::Pingpong2)
        ),
        1
    );
    let none = |_: u32| false;
    assert!(select_events(&e, 0, 100, Some(&none)).is_empty());
}
