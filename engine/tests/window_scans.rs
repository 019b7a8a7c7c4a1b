//! The window scans used by the series operators (`Snapshot::node_scan`,
//! `Snapshot::edge_window`) against a brute-force filter over every stored row, on stores
//! with corrections, retractions and interval edges, at several belief states and windows.

mod common;

use common::rows_of;
use serde_json::json;
use tgms_engine::{Op, Options, Store, OPEN_END};

#[test]
fn window_scans_match_a_brute_force_filter() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create_with(
        &dir.path().join("s"),
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    let mut r = common::Rng::new(11);
    let mut rnd = |n: i64| r.below(n);
    let uids = ["a", "b", "c", "d"];
    for tt in 1..80 {
        let (vs, len) = (rnd(50), 1 + rnd(30));
        let (u, w) = (uids[rnd(4) as usize], uids[rnd(4) as usize]);
        let op = match rnd(6) {
            0 => {
                json!({"op":"assert_node","uid":u,"label":"N","props":{"p":rnd(3)},"vt_s":vs,"vt_e":if rnd(4)==0 {OPEN_END} else {vs+len}})
            }
            1 => {
                json!({"op":"assert_edge","src":u,"dst":w,"rel_type":"R","vt_s":vs,"vt_e":if rnd(4)==0 {OPEN_END} else {vs+len}})
            }
            2 => {
                json!({"op":"retract","ref":{"kind":"edge","src":u,"dst":w,"rel_type":"R"},"t":vs,"reason":"r"})
            }
            3 => {
                json!({"op":"retract","ref":{"kind":"node","uid":u},"t":vs,"reason":"r"})
            }
            4 => {
                json!({"op":"correct","ref":{"kind":"node","uid":u},"props":{"p":9},"vt_s":vs,"vt_e":vs+len,"reason":"c"})
            }
            _ => {
                json!({"op":"ingest_events","events":[{"src":u,"dst":w,"rel_type":"S","vt_s":vs}]})
            }
        };
        let _ = s.write_at(tt, vec![Op::from_json(&op)]);
    }
    let rows = rows_of(&s);
    let mut non_empty = 0;
    for as_of in [0, 10, 30, 79, OPEN_END] {
        let a = as_of.min(OPEN_END - 1);
        for w in [
            None,
            Some((0, 1)),
            Some((5, 25)),
            Some((20, 21)),
            Some((0, 100)),
            Some((40, OPEN_END)),
        ] {
            for node in [true, false] {
                let mut want: Vec<String> = rows
                    .iter()
                    .filter(|r| (r["kind"] == "node") == node)
                    .filter(|r| r["tt_s"].as_i64().unwrap() <= a && a < r["tt_e"].as_i64().unwrap())
                    .filter(|r| {
                        w.is_none_or(|(ta, tb)| {
                            r["vt_s"].as_i64().unwrap() < tb && ta < r["vt_e"].as_i64().unwrap()
                        })
                    })
                    .map(|r| r["vid"].as_str().unwrap().to_string())
                    .collect();
                let snap = s.snapshot();
                let mut got: Vec<String> = if node {
                    snap.node_scan(w, as_of).iter().map(|n| n.vid()).collect()
                } else {
                    snap.edge_window(w, as_of).iter().map(|e| e.vid()).collect()
                };
                want.sort();
                got.sort();
                assert_eq!(got, want, "node={node} as_of={as_of} window={w:?}");
                non_empty += usize::from(!want.is_empty());
            }
        }
    }
    assert!(non_empty >= 20, "only {non_empty} non-empty cases");
}
