//! 1-thread vs N-thread determinism of the window operators that read through the engine's
//! valid-time index and run parallel parts (`diff_snapshots`, `graph_metric_timeseries`,
//! `burst_detection`, `aggregate_events`): on a store large enough for several parallel
//! work units, narrow windows (index gather) and the full window (storage scan) give
//! byte-identical envelopes in 1-, 2- and 4-thread rayon pools and in the default pool.

mod common;
use common::kit::Rng;
use common::*;
use serde_json::{json, Value};

/// 120,000 events over 300 uids (a fifth with durations), then corrections and retractions
/// so that closed rows sit inside the windows.
fn store(r: &mut Rng) -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    let uid = |k: i64| format!("n{k:03}");
    for b in 0..12 {
        let events: Vec<Value> = (0..10_000)
            .map(|_| {
                let t = r.int(0, 200_000);
                let mut ev = json!({"src": uid(r.below(300) as i64), "dst": uid(r.below(300) as i64),
                    "rel_type": r.pick(&["R", "S", "T"]), "vt_s": t, "props": {"w": r.below(5)}});
                if r.chance(20) {
                    ev["vt_e"] = json!(t + r.int(1, 20_000));
                }
                ev
            })
            .collect();
        s.write_at(
            b + 1,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
    }
    let mut fixes = Vec::new();
    for k in 0..200 {
        let t = r.int(0, 200_000);
        fixes.push(if k % 2 == 0 {
            json!({"op": "assert_node", "uid": uid(r.below(300) as i64), "label": "P",
                "props": {"v": k}, "vt_s": t, "vt_e": t + r.int(1, 30_000)})
        } else {
            json!({"op": "retract", "ref": {"kind": "node", "uid": uid(r.below(300) as i64)}, "t": t})
        });
    }
    for (k, f) in fixes.into_iter().enumerate() {
        // Retractions of nodes not valid at `t` fail; that is part of the mix.
        let _ = s.write_at(10 + k as i64, ops(vec![f]));
    }
    (d, s)
}

fn calls() -> Vec<(&'static str, Value)> {
    let full = json!({"t_a": 0, "t_b": 220_001});
    let narrow = json!({"t_a": 40_000, "t_b": 43_000});
    let mut v = Vec::new();
    // (40k, 70k): some 20,000 boundary candidates, a gather over several work units.
    for (t1, t2) in [(40_000, 70_000), (70_000, 40_000), (0, 220_000), (10, 11)] {
        v.push(("diff_snapshots", json!({"t1": t1, "t2": t2, "limit": 100})));
    }
    v.push((
        "diff_snapshots",
        json!({"t1": 30_000, "t2": 50_000, "limit": 5000, "as_of_tt": 6}),
    ));
    for w in [&full, &narrow] {
        for metric in [
            "edge_event_count",
            "node_count",
            "active_edge_count",
            "reciprocity",
        ] {
            v.push((
                "graph_metric_timeseries",
                json!({"metric": metric, "window": w, "stride": 200}),
            ));
        }
        v.push((
            "burst_detection",
            json!({"target": {"kind": "edge_event_rate", "rel_type": "S"}, "window": w,
                "stride": 200, "method": "zscore", "params": {"z": 1.5}}),
        ));
        v.push((
            "aggregate_events",
            json!({"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}], "window": w,
                "stride": 1000, "limit": 1000,
                "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}]}),
        ));
    }
    v
}

#[test]
fn window_operators_do_not_depend_on_the_thread_count() {
    let mut r = Rng::new(7);
    let (_d, s) = store(&mut r);
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let pools = [pool(1), pool(2), pool(4)];
    let snap = s.snapshot();
    let run = |op: &str, args: &Value| match tgms_operators::call_operator(
        snap,
        op,
        args,
        &Default::default(),
    ) {
        Ok(v) => canon(&v),
        Err(e) => canon(&e.payload()),
    };
    let mut big = 0;
    for (op, args) in calls() {
        let one = pools[0].install(|| run(op, &args));
        assert!(!one.contains("\"error\""), "{op} {args} → {one}");
        for p in &pools[1..] {
            assert_eq!(p.install(|| run(op, &args)), one, "{op} {args}");
        }
        assert_eq!(
            canon(&call(&s, op, args.clone())),
            one,
            "{op} {args} (default pool)"
        );
        // Answers drawn from enough versions to span several parallel work units.
        let v: Value = serde_json::from_str(&one).unwrap();
        let p = v.get("result").unwrap_or(&v);
        let n = |k: &str| p.get(k).and_then(Value::as_u64).unwrap_or(0);
        let edges = n("edges_added_total") + n("edges_removed_total");
        let counted: u64 = p["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| r["value"].as_u64().or(r["count"].as_u64()))
                    .sum()
            })
            .unwrap_or(0);
        eprintln!("{op}: {edges} diff edges, {counted} counted");
        big += usize::from(edges.max(counted) > 1000);
    }
    assert!(big >= 6, "only {big} large answers");
}
