//! Every operator on a read-only store served from its mapped base image
//! (`format-spec.md` §9.4) — point operators and scans alike — gives byte-identical
//! envelopes to the same calls on an eager open (every segment decoded into memory), over
//! random compacted stores with corrections, retractions, interval edges and failed
//! batches.

mod common;
use common::kit::{grow, Rng, METRICS, UIDS};
use common::*;
use serde_json::{json, Value};
use tgms_engine::{Options, Store};

fn read_only(path: &std::path::Path, eager: bool) -> Store {
    Store::open_with(
        path,
        Options {
            read_only: true,
            eager,
            ..Options::default()
        },
    )
    .unwrap()
}

/// Argument sets of the scan operators (windows, diffs, series, aggregation, motifs,
/// version lists, search).
fn scan_calls(r: &mut Rng, last_tt: i64) -> Vec<(&'static str, Value)> {
    let mut v = Vec::new();
    let t = r.int(-5, 70);
    let w = json!({"t_a": r.int(-5, 30), "t_b": r.int(31, 90)});
    let as_of = r.int(0, last_tt + 2);
    let (a, b) = (UIDS[0], UIDS[1]);
    v.push(("diff_snapshots", json!({"t1": t, "t2": t + r.int(1, 40)})));
    v.push((
        "diff_snapshots",
        json!({"t1": t, "t2": t + 9, "as_of_tt": as_of}),
    ));
    v.push((
        "temporal_reachability",
        json!({"src": a, "window": w.clone()}),
    ));
    for metric in METRICS {
        v.push((
            "graph_metric_timeseries",
            json!({"metric": metric, "window": w.clone(), "stride": r.int(1, 20)}),
        ));
    }
    v.push((
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w.clone(), "stride": 5,
            "method": "zscore", "params": {"z": 1.0}}),
    ));
    v.push((
        "co_active",
        json!({"a_spec": {"src": a}, "b_spec": {"src": b},
            "allen_relation": {"relation": "overlaps"}}),
    ));
    v.push(("resolve_entities", json!({"query": &a[..1]})));
    v.push((
        "aggregate_events",
        json!({"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}],
            "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}],
            "window": w.clone(), "stride": r.int(1, 30), "as_of_tt": as_of}),
    ));
    v.push((
        "count_temporal_motifs",
        json!({"motif": "all", "delta": r.int(1, 30), "window": w.clone()}),
    ));
    v.push((
        "count_temporal_motifs",
        json!({"motif": "M_triangle_cyclic", "delta": 20, "window": w.clone(),
            "node_filter": [a, b, UIDS[2]]}),
    ));
    v.push((
        "count_temporal_motifs",
        json!({"motif": "all", "delta": r.int(1, 30), "window": w.clone(), "as_of_tt": as_of,
            "node_filter": [a, b, UIDS[2], UIDS[3], UIDS[4]]}),
    ));
    for kind in ["node", "edge"] {
        for belief in ["current", "superseded", "all"] {
            v.push((
                "version_history",
                json!({"kind": kind, "belief": belief, "window": w.clone()}),
            ));
            v.push((
                "version_history",
                json!({"kind": kind, "belief": belief, "window": w.clone(), "as_of_tt": as_of}),
            ));
        }
    }
    v
}

/// Argument sets of the point operators over the kit's uid universe.
fn calls(r: &mut Rng, last_tt: i64) -> Vec<(&'static str, Value)> {
    let mut v = Vec::new();
    let mut uids: Vec<&str> = UIDS.to_vec();
    uids.push("nobody");
    for uid in uids {
        let t = r.int(-5, 70);
        let as_of = r.int(0, last_tt + 2);
        v.push(("entity_history", json!({"uid": uid})));
        v.push(("entity_history", json!({"uid": uid, "as_of_tt": as_of})));
        for dir in ["out", "in", "both"] {
            v.push(("state_at", json!({"uid": uid, "at": t, "direction": dir})));
        }
        v.push((
            "snapshot_subgraph",
            json!({"seeds": [uid], "hops": 2, "t_valid": t}),
        ));
        v.push((
            "neighborhood_evolution",
            json!({"uid": uid, "t1": t, "t2": t + r.int(1, 30)}),
        ));
        v.push((
            "weighted_traverse",
            json!({"seed": uid, "t": t, "max_depth": 2, "direction": "both"}),
        ));
        let dst = UIDS[r.below(UIDS.len() as u64) as usize];
        v.push((
            "temporal_paths",
            json!({"src": uid, "dst": dst, "window": {"t_a": 0, "t_b": 80}, "k": 3, "max_hops": 3}),
        ));
    }
    v
}

#[test]
fn every_operator_answers_the_same_from_the_mapped_image() {
    let mut r = Rng::new(0x1a2b);
    let (mut compared, mut scans) = (0, 0);
    for _ in 0..6 {
        let (dir, mut s) = new_store();
        grow(&mut s, &mut r, 60);
        s.compact().unwrap();
        let last_tt = s.last_tt().unwrap_or(0);
        let path = dir.path().join("s");
        drop(s);
        let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
        assert!(lazy.is_lazy());
        for (op, args) in calls(&mut r, last_tt) {
            let (a, b) = (
                call(&lazy, op, args.clone()),
                call(&eager, op, args.clone()),
            );
            assert_eq!(canon(&a), canon(&b), "{op} {args}");
            compared += usize::from(a.get("result_digest").is_some());
        }
        for _ in 0..3 {
            for (op, args) in scan_calls(&mut r, last_tt) {
                let (a, b) = (
                    call(&lazy, op, args.clone()),
                    call(&eager, op, args.clone()),
                );
                assert_eq!(canon(&a), canon(&b), "{op} {args}");
                scans += usize::from(a.get("result_digest").is_some());
            }
        }
        assert_eq!(lazy.digest(), eager.digest());
        assert!(
            lazy.is_lazy(),
            "a read-only compacted store is never decoded"
        );
    }
    assert!(compared >= 300, "only {compared} successful calls compared");
    assert!(scans >= 300, "only {scans} successful scans compared");
}
