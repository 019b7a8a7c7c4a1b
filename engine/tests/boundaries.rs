//! The boundary read calls used by `diff_snapshots` (`Snapshot::node_boundaries`,
//! `Snapshot::edge_boundaries`) against a brute-force filter over every stored row, on stores
//! with corrections, retractions and interval edges, at several belief states.

mod common;

use common::rows_of;
use serde_json::json;
use std::collections::BTreeSet;
use tgms_engine::{Op, Options, Store, OPEN_END};

#[test]
fn boundaries_match_a_brute_force_filter() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create_with(
        &dir.path().join("s"),
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    let mut r = common::Rng::new(5);
    let mut rnd = |n: i64| r.below(n);
    let uids = ["a", "b", "c"];
    for tt in 1..60 {
        let (vs, len) = (rnd(50), 1 + rnd(30));
        let (u, w) = (uids[rnd(3) as usize], uids[rnd(3) as usize]);
        let op = match rnd(5) {
            0 => {
                json!({"op":"assert_node","uid":u,"label":"N","props":{"p":rnd(3)},"vt_s":vs,"vt_e":vs+len})
            }
            1 => {
                json!({"op":"assert_edge","src":u,"dst":w,"rel_type":"R","vt_s":vs,"vt_e":if rnd(4)==0 {OPEN_END} else {vs+len}})
            }
            2 => {
                json!({"op":"retract","ref":{"kind":"edge","src":u,"dst":w,"rel_type":"R"},"t":vs,"reason":"r"})
            }
            3 => {
                json!({"op":"correct","ref":{"kind":"node","uid":u},"props":{"p":9},"vt_s":vs,"vt_e":vs+len,"reason":"c"})
            }
            _ => {
                json!({"op":"correct","ref":{"kind":"edge","src":u,"dst":w,"rel_type":"R"},"props":{"q":1},"vt_s":vs,"vt_e":vs+len,"reason":"c"})
            }
        };
        let _ = s.write_at(tt, vec![Op::from_json(&op)]);
    }
    let rows = rows_of(&s);
    let mut non_empty = 0;
    for as_of in [0, 10, 30, 59, OPEN_END] {
        let a = as_of.min(OPEN_END - 1);
        for (lo, hi) in [(0, 0), (5, 25), (20, 21), (0, 100), (40, OPEN_END)] {
            let inside = |t: i64| lo < t && t <= hi;
            let want: BTreeSet<String> = rows
                .iter()
                .filter(|r| r["tt_s"].as_i64().unwrap() <= a && a < r["tt_e"].as_i64().unwrap())
                .filter(|r| {
                    inside(r["vt_s"].as_i64().unwrap()) || inside(r["vt_e"].as_i64().unwrap())
                })
                .map(|r| r["vid"].as_str().unwrap().to_string())
                .collect();
            let snap = s.snapshot();
            let got: BTreeSet<String> = snap
                .node_boundaries(lo, hi, as_of)
                .iter()
                .map(|n| n.vid())
                .chain(snap.edge_boundaries(lo, hi, as_of).iter().map(|e| e.vid()))
                .collect();
            non_empty += usize::from(!want.is_empty());
            assert_eq!(got, want, "as_of {as_of}, ({lo}, {hi}]");
        }
    }
    assert!(non_empty >= 10, "only {non_empty} non-empty cases");
}
