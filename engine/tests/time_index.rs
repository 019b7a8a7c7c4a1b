//! Every read answered through the valid-time index (`node_boundaries`, `edge_boundaries`,
//! `node_scan`, `edge_window`, `edge_starts` — also as positions and as runs —,
//! `edge_start_counts`, windowed `edge_scan`, `nodes_valid_at`) against a brute-force filter over every stored row, on a randomized
//! store checked between writes — so the index is built, then read with an unindexed tail,
//! then extended — and across corrections, retractions, failed batches, flush, compaction
//! and reopen. Storage-order results are also checked for order against the full scan.

mod common;

use common::{rows_of, Rng};
use serde_json::{json, Value};
use std::path::Path;
use tgms_engine::{EdgeScan, Op, Options, Store, OPEN_END};

fn opts() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

fn int(r: &Value, k: &str) -> i64 {
    r[k].as_i64().unwrap()
}

fn believed(r: &Value, as_of: i64) -> bool {
    let a = as_of.min(OPEN_END - 1);
    int(r, "tt_s") <= a && a < int(r, "tt_e")
}

fn vids(rows: &[&Value]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| r["vid"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

/// `sub` appears in `full` in the same relative order (both lists of vids).
fn is_subsequence(sub: &[String], full: &[String]) -> bool {
    let mut it = full.iter();
    sub.iter().all(|x| it.any(|y| y == x))
}

/// One random op over a small universe, so that identities collide often.
fn random_op(g: &mut Rng) -> Value {
    let uids = ["a", "b", "c", "d", "e"];
    let (vs, len) = (g.below(200), 1 + g.below(40));
    let (u, w) = (uids[g.below(5) as usize], uids[g.below(5) as usize]);
    let end = |g: &mut Rng| match g.below(4) {
        0 => OPEN_END,
        1 => vs + 1,
        _ => vs + len,
    };
    match g.below(8) {
        0 => {
            json!({"op":"assert_node","uid":u,"label":"N","props":{"p":g.below(3)},"vt_s":vs,"vt_e":end(g)})
        }
        1 => {
            json!({"op":"assert_edge","src":u,"dst":w,"rel_type":"R","vt_s":vs,"vt_e":end(g)})
        }
        2 => {
            json!({"op":"retract","ref":{"kind":"edge","src":u,"dst":w,"rel_type":"R"},"t":vs,"reason":"r"})
        }
        3 => json!({"op":"retract","ref":{"kind":"node","uid":u},"t":vs,"reason":"r"}),
        4 => {
            json!({"op":"correct","ref":{"kind":"node","uid":u},"props":{"p":9},"vt_s":vs,"vt_e":vs+len,"reason":"c"})
        }
        5 => {
            json!({"op":"correct","ref":{"kind":"edge","src":u,"dst":w,"rel_type":"R"},"props":{"q":1},"vt_s":vs,"vt_e":vs+len,"reason":"c"})
        }
        _ => {
            let rel = if g.below(2) == 0 { "S" } else { "T" };
            let evs: Vec<Value> = (0..1 + g.below(6))
                .map(|k| json!({"src":u,"dst":uids[((g.below(5) + k) % 5) as usize],"rel_type":rel,"vt_s":vs + k}))
                .collect();
            json!({"op":"ingest_events","events":evs})
        }
    }
}

/// Compares every indexed read with the brute-force filter at several belief states and
/// windows. Returns the number of non-empty expected answers.
fn check(s: &Store, g: &mut Rng, last_tt: i64) -> usize {
    let rows = rows_of(s);
    let snap = s.snapshot();
    let mut non_empty = 0;
    let kind = |node: bool| {
        rows.iter()
            .filter(move |r| (r["kind"] == "node") == node)
            .collect::<Vec<&Value>>()
    };
    let (nodes, edges) = (kind(true), kind(false));
    // The compact edge columns equal the rows they cover, which are the mapped image's
    // (none without one: the rows above are read one by one).
    let cols = snap.edge_columns();
    let n = snap.edge_positions();
    assert!(s.is_lazy() || cols.covered() == 0);
    assert!(cols.covered() <= n);
    // Every uid id is below the id space size.
    for p in 0..n {
        let e = snap.edge_at(p as u32).unwrap();
        assert!(
            e.src_id().max(e.dst_id()) < snap.uid_ids() as u32,
            "uid id space"
        );
    }
    for p in 0..cols.covered() {
        let e = snap.edge_at(p as u32).unwrap();
        assert_eq!(
            (cols.vt_s()[p], cols.rel()[p], cols.src()[p], cols.dst()[p]),
            (e.vt_s(), e.rel_id(), e.src_id(), e.dst_id()),
            "edge column entry {p}"
        );
    }
    for as_of in [0, g.below(last_tt + 1), last_tt / 2, OPEN_END] {
        // The full storage-order scans: the reference order of every storage-order read.
        let all_n: Vec<String> = snap
            .node_scan(None, as_of)
            .iter()
            .map(|n| n.vid())
            .collect();
        let all_e: Vec<String> = snap
            .edge_window(None, as_of)
            .iter()
            .map(|e| e.vid())
            .collect();
        let mut windows = vec![(0, 0), (0, 1), (50, 100), (199, 200), (0, OPEN_END)];
        windows.push((OPEN_END - 1, OPEN_END));
        for _ in 0..4 {
            let a = g.below(260) - 10;
            windows.push((a, a + g.below(60)));
            windows.push((a, a - 1 - g.below(5)));
        }
        for (lo, hi) in windows {
            // Boundaries (lo, hi].
            let bound = |r: &&&Value| {
                let (s, e) = (int(r, "vt_s"), int(r, "vt_e"));
                believed(r, as_of) && ((lo < s && s <= hi) || (lo < e && e <= hi))
            };
            let want_n: Vec<&Value> = nodes.iter().filter(bound).copied().collect();
            let want_e: Vec<&Value> = edges.iter().filter(bound).copied().collect();
            let got_n: Vec<String> = snap
                .node_boundaries(lo, hi, as_of)
                .iter()
                .map(|n| n.vid())
                .collect();
            let got_e: Vec<String> = snap
                .edge_boundaries(lo, hi, as_of)
                .iter()
                .map(|e| e.vid())
                .collect();
            assert!(is_subsequence(&got_n, &all_n) && is_subsequence(&got_e, &all_e));
            let mut sorted = (got_n.clone(), got_e.clone());
            sorted.0.sort();
            sorted.1.sort();
            assert_eq!(
                sorted.0,
                vids(&want_n),
                "node_boundaries({lo}, {hi}, {as_of})"
            );
            assert_eq!(
                sorted.1,
                vids(&want_e),
                "edge_boundaries({lo}, {hi}, {as_of})"
            );
            non_empty += usize::from(!want_e.is_empty()) + usize::from(!want_n.is_empty());

            // Overlap of [lo, hi) (also when empty or reversed).
            let over =
                |r: &&&Value| believed(r, as_of) && int(r, "vt_s") < hi && lo < int(r, "vt_e");
            let w = Some((lo, hi));
            let got_n: Vec<String> = snap.node_scan(w, as_of).iter().map(|n| n.vid()).collect();
            let got_e: Vec<String> = snap.edge_window(w, as_of).iter().map(|e| e.vid()).collect();
            assert!(is_subsequence(&got_n, &all_n) && is_subsequence(&got_e, &all_e));
            let want_n: Vec<&Value> = nodes.iter().filter(over).copied().collect();
            let want_e: Vec<&Value> = edges.iter().filter(over).copied().collect();
            let mut sorted = (got_n, got_e.clone());
            sorted.0.sort();
            sorted.1.sort();
            assert_eq!(sorted.0, vids(&want_n), "node_scan([{lo}, {hi}), {as_of})");
            assert_eq!(
                sorted.1,
                vids(&want_e),
                "edge_window([{lo}, {hi}), {as_of})"
            );

            // The windowed edge scan: the same rows, ordered by (vt_s, eid, tt_s).
            let scan: Vec<(i64, String, i64)> = snap
                .edge_scan(&EdgeScan {
                    vt_window: w,
                    ..EdgeScan::all(as_of)
                })
                .iter()
                .map(|e| (e.vt_s(), e.eid(), e.tt_s()))
                .collect();
            let mut want: Vec<(i64, String, i64)> = want_e
                .iter()
                .map(|r| {
                    let eid = r["eid"].as_str().unwrap().to_string();
                    (int(r, "vt_s"), eid, int(r, "tt_s"))
                })
                .collect();
            want.sort();
            assert_eq!(scan, want, "edge_scan([{lo}, {hi}), {as_of})");

            // Starts in [lo, hi): the indexed list equals the positional scan, in order.
            let got: Vec<String> = snap.edge_starts(lo, hi, as_of).map(|e| e.vid()).collect();
            let n = snap.edge_positions();
            let cut = g.below(n as i64 + 1) as usize;
            let by_pos: Vec<String> = snap
                .edge_starts_in(lo, hi, as_of, 0..cut)
                .chain(snap.edge_starts_in(lo, hi, as_of, cut..n))
                .map(|e| e.vid())
                .collect();
            assert_eq!(got, by_pos, "edge_starts({lo}, {hi}, {as_of})");
            // The same positions as a list and as maximal runs.
            let pos = snap.edge_start_positions(lo, hi, as_of);
            let runs = snap.edge_start_runs(lo, hi, as_of);
            assert!(runs.iter().all(|r| !r.is_empty()), "empty run");
            assert!(
                runs.windows(2).all(|w| w[0].end < w[1].start),
                "runs not maximal and ascending"
            );
            let flat: Vec<u32> = runs.into_iter().flatten().collect();
            assert_eq!(flat, pos, "edge_start_runs({lo}, {hi}, {as_of})");
            let by_pos_ids: Vec<String> = pos
                .iter()
                .map(|&p| snap.edge_at(p).unwrap().vid())
                .collect();
            assert_eq!(
                by_pos_ids, by_pos,
                "edge_start_positions({lo}, {hi}, {as_of})"
            );
            let starting =
                |r: &&&Value| believed(r, as_of) && lo <= int(r, "vt_s") && int(r, "vt_s") < hi;
            let want_s: Vec<&Value> = edges.iter().filter(starting).copied().collect();
            let mut sorted = got;
            sorted.sort();
            assert_eq!(sorted, vids(&want_s));

            // Start counts per bucket, with and without a rel type.
            let span = hi as i128 - lo as i128;
            let stride = if span > 1000 {
                span.min(i64::MAX as i128) as i64
            } else {
                1 + g.below(30)
            };
            for rel in [None, Some("S"), Some("R"), Some("nope")] {
                let got = snap.edge_start_counts(lo, hi, stride, as_of, rel).unwrap();
                let mut want = vec![
                    0u64;
                    if lo < hi {
                        ((hi as i128 - lo as i128 + stride as i128 - 1) / stride as i128) as usize
                    } else {
                        0
                    }
                ];
                for r in want_s
                    .iter()
                    .filter(|r| rel.is_none_or(|x| r["rel_type"] == x))
                {
                    want[((int(r, "vt_s") as i128 - lo as i128) / stride as i128) as usize] += 1;
                }
                assert_eq!(
                    got, want,
                    "edge_start_counts({lo}, {hi}, {stride}, {as_of}, {rel:?})"
                );
            }

            // Nodes valid at `lo`, ordered by uid.
            let got: Vec<String> = snap
                .nodes_valid_at(lo, as_of)
                .iter()
                .map(|n| n.vid())
                .collect();
            let mut want: Vec<(&str, String)> = nodes
                .iter()
                .filter(|r| believed(r, as_of) && int(r, "vt_s") <= lo && lo < int(r, "vt_e"))
                .map(|r| {
                    (
                        r["uid"].as_str().unwrap(),
                        r["vid"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            want.sort();
            let want: Vec<String> = want.into_iter().map(|x| x.1).collect();
            assert_eq!(got, want, "nodes_valid_at({lo}, {as_of})");
        }
        assert!(snap.edge_start_counts(0, OPEN_END, 1, as_of, None).is_err());
        assert!(snap.edge_start_counts(0, 10, 0, as_of, None).is_err());
    }
    non_empty
}

fn reopen(path: &Path, s: Store, eager: bool) -> Store {
    drop(s);
    Store::open_with(path, Options { eager, ..opts() }).unwrap()
}

/// Both writers: after the compaction, one decodes the image and one writes over it mapped.
#[test]
fn indexed_reads_match_a_brute_force_filter_under_writes() {
    for eager in [true, false] {
        reads_under_writes(eager);
    }
}

fn reads_under_writes(eager: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut s = Store::create_with(&path, Options { eager, ..opts() }).unwrap();
    let mut g = Rng::new(29);
    let (mut non_empty, mut failed) = (0, 0);
    for tt in 1..=240i64 {
        let mut ops = vec![Op::from_json(&random_op(&mut g))];
        if g.below(8) == 0 {
            ops.push(Op::from_json(&random_op(&mut g)));
            // A batch that fails after applying its first ops: everything is rolled back.
            ops.push(Op::from_json(
                &json!({"op":"retract","ref":{"kind":"node","uid":"nobody"},"t":0}),
            ));
        }
        failed += usize::from(s.write_at(tt, ops).is_err());
        if tt % 12 == 0 {
            non_empty += check(&s, &mut g, tt);
        }
        match tt {
            60 | 150 => assert!(s.flush().is_ok()),
            100 => {
                s.compact().unwrap();
                assert_eq!(s.is_lazy(), !eager);
            }
            120 | 200 => s = reopen(&path, s, eager),
            _ => {}
        }
    }
    non_empty += check(&s, &mut g, 240);
    assert!(failed >= 20, "only {failed} failed batches");
    assert!(
        non_empty >= 200,
        "only {non_empty} non-empty boundary answers"
    );
}

/// The parallel paths (gathers and scans over several work units) against the brute force,
/// on a store of 120,000 events with interval edges, corrections and retractions; the
/// window (30,000, 48,000) gathers some 25,000 index candidates (several work units).
#[test]
fn parallel_gathers_match_a_brute_force_filter() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create_with(&dir.path().join("s"), opts()).unwrap();
    let mut g = Rng::new(41);
    for b in 0..12i64 {
        let evs: Vec<Value> = (0..10_000)
            .map(|_| {
                let t = g.below(100_000);
                let mut ev = json!({"src": format!("u{}", g.below(200)), "dst": format!("u{}", g.below(200)),
                    "rel_type": "R", "vt_s": t});
                if g.below(5) == 0 {
                    ev["vt_e"] = json!(t + 1 + g.below(20_000));
                }
                ev
            })
            .collect();
        s.write_at(
            b + 1,
            vec![Op::from_json(
                &json!({"op": "ingest_events", "events": evs}),
            )],
        )
        .unwrap();
    }
    for k in 0..300i64 {
        let (u, t) = (format!("u{}", g.below(200)), g.below(100_000));
        let op = if k % 2 == 0 {
            json!({"op":"correct","ref":{"kind":"node","uid":u},"props":{"p":k},"vt_s":t,"vt_e":t + 5000})
        } else {
            json!({"op":"retract","ref":{"kind":"node","uid":u},"t":t})
        };
        let _ = s.write_at(10 + k, vec![Op::from_json(&op)]);
    }
    let rows = rows_of(&s);
    let snap = s.snapshot();
    let edges: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "edge").collect();
    let mut large = 0;
    for as_of in [OPEN_END, 4, 100] {
        for (lo, hi) in [
            (30_000, 48_000),
            (0, 100_000),
            (10_000, 11_000),
            (0, OPEN_END),
        ] {
            let bound = |r: &&&Value| {
                let (vs, ve) = (int(r, "vt_s"), int(r, "vt_e"));
                believed(r, as_of) && ((lo < vs && vs <= hi) || (lo < ve && ve <= hi))
            };
            let want: Vec<&Value> = edges.iter().filter(bound).copied().collect();
            let mut got: Vec<String> = snap
                .edge_boundaries(lo, hi, as_of)
                .iter()
                .map(|e| e.vid())
                .collect();
            got.sort();
            assert_eq!(got, vids(&want), "edge_boundaries({lo}, {hi}, {as_of})");
            large += usize::from(want.len() > 20_000);
            let over =
                |r: &&&Value| believed(r, as_of) && int(r, "vt_s") < hi && lo < int(r, "vt_e");
            let want: Vec<&Value> = edges.iter().filter(over).copied().collect();
            let mut got: Vec<String> = snap
                .edge_window(Some((lo, hi)), as_of)
                .iter()
                .map(|e| e.vid())
                .collect();
            got.sort();
            assert_eq!(got, vids(&want), "edge_window([{lo}, {hi}), {as_of})");
            let starting =
                |r: &&&Value| believed(r, as_of) && lo <= int(r, "vt_s") && int(r, "vt_s") < hi;
            let want: Vec<&Value> = edges.iter().filter(starting).copied().collect();
            let mut got: Vec<String> = snap.edge_starts(lo, hi, as_of).map(|e| e.vid()).collect();
            got.sort();
            assert_eq!(got, vids(&want), "edge_starts({lo}, {hi}, {as_of})");
            let runs: Vec<u32> = snap
                .edge_start_runs(lo, hi, as_of)
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(
                runs,
                snap.edge_start_positions(lo, hi, as_of),
                "edge_start_runs({lo}, {hi}, {as_of})"
            );
        }
    }
    assert!(large >= 3, "only {large} answers above 20,000 rows");
}
