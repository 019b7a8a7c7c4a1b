//! Cost-follows-the-answer measurement (ignored; run with
//! `cargo test --release -p tgms-operators --test scaling -- --ignored --nocapture`):
//! per-call latency of each operator on stores of growing size with a constant answer size.
//! Point operators (entity_history, state_at, snapshot_subgraph, version_history with uid)
//! must stay flat; diff_snapshots and version_history without uid are whole-store questions
//! over the current read API.

mod common;
use common::*;
use serde_json::json;
use std::time::Instant;

fn store(n_events: usize) -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    // Degree stays constant as the store grows: events connect n_i -> n_{i+1..i+4}.
    let n_nodes = n_events / 4;
    let mut events = Vec::with_capacity(n_events);
    for i in 0..n_events {
        let a = i % n_nodes;
        let b = (a + 1 + i / n_nodes) % n_nodes;
        events.push(
            json!({"src": format!("n{a}"), "dst": format!("n{b}"), "rel_type": "R",
            "vt_s": (i as i64) * 10, "vt_e": (i as i64) * 10 + 5_000}),
        );
    }
    for chunk in events.chunks(50_000) {
        s.write(ops(vec![json!({"op": "ingest_events", "events": chunk})]))
            .unwrap();
    }
    (d, s)
}

#[test]
#[ignore]
fn latency_versus_store_size() {
    for n in [20_000usize, 200_000] {
        let (_d, s) = store(n);
        let t_mid = (n as i64) * 5;
        let calls = [
            (
                "entity_history",
                json!({"uid": "n7", "include_edges": true}),
            ),
            (
                "state_at",
                json!({"uid": "n7", "at": t_mid, "direction": "both"}),
            ),
            (
                "snapshot_subgraph",
                json!({"seeds": ["n7"], "hops": 2, "t_valid": 30}),
            ),
            (
                "version_history",
                json!({"uid": "n7", "kind": "edge", "belief": "all"}),
            ),
            ("diff_snapshots", json!({"t1": t_mid, "t2": t_mid + 100})),
            (
                "version_history",
                json!({"kind": "edge", "window": {"t_a": 0, "t_b": 100}}),
            ),
        ];
        for (op, args) in calls {
            let reps = 20;
            let t = Instant::now();
            for _ in 0..reps {
                let e = call(&s, op, args.clone());
                assert!(e.get("error").is_none(), "{op}: {e}");
            }
            let us = t.elapsed().as_micros() / reps;
            println!("n_events={n:>7} {op:<18} {us:>8} µs/call");
        }
    }
}
