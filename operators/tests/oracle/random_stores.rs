//! Every operator against its oracle on random stores: the `OPS` table, random arguments
//! (schema-valid; defaults filled by the oracle side explicitly), event-heavy stores for the
//! traversal operators, and the metamorphic checks (diff composition, results pinned to a
//! past belief state, pages and certificates).

use crate::aggregate::{agg_args, o_aggregate};
use crate::common::kit::*;
use crate::common::patterns_oracle::*;
use crate::common::*;
use crate::history::{
    o_diff, o_entity_history, o_snapshot_subgraph, o_state_at, o_version_history,
};
use crate::series::{args_for_series, o_burst, o_nbr, o_resolve, o_series};
use crate::traversal::{args_for_traversal, o_weighted};
use crate::uid_arg;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::{Store, OPEN_END};

fn as_of(r: &mut Rng, s: &Store) -> Value {
    let last = s.last_tt().unwrap_or(0);
    if r.chance(40) {
        json!(OPEN_END)
    } else {
        json!(r.int(0, last + 2))
    }
}

fn paging(r: &mut Rng, o: &mut Value) {
    o["limit"] = json!(if r.chance(50) { r.int(1, 4) } else { 100 });
    o["cursor"] = match r.below(10) {
        0..=4 => Value::Null,
        5 => json!(""),
        6 => json!("x1"),
        _ => json!(r.int(0, 6).to_string()),
    };
}

fn args_for(op: &str, r: &mut Rng, s: &Store) -> Value {
    let mut o = match op {
        "entity_history" => json!({"uid": uid_arg(r), "include_edges": r.chance(50)}),
        "version_history" => {
            let kind = if r.chance(50) { "node" } else { "edge" };
            let mut v = json!({"kind": kind, "belief": r.pick(&["current", "superseded", "all"])});
            v["window"] = if r.chance(50) {
                Value::Null
            } else {
                let x = r.int(0, 60);
                json!({"t_a": x, "t_b": if r.chance(10) { x } else { x + r.int(1, 40) }})
            };
            v["uid"] = if r.chance(50) {
                Value::Null
            } else {
                json!(uid_arg(r))
            };
            v["rel_types"] = if r.chance(70) {
                Value::Null
            } else {
                json!([r.pick(&RELS)])
            };
            v
        }
        "aggregate_events" => agg_args(r),
        "state_at" => json!({"uid": uid_arg(r), "at": r.int(0, 70),
            "rel_type": if r.chance(60) { Value::Null } else { json!(r.pick(&RELS)) },
            "direction": r.pick(&["out", "in", "both"])}),
        "snapshot_subgraph" => {
            let n = r.int(1, 4);
            let mut seeds: Vec<&str> = vec![uid_arg(r)];
            seeds.extend((1..n).map(|_| r.pick(&UIDS[..4])));
            json!({"seeds": seeds, "hops": r.int(0, 4), "t_valid": r.int(0, 70),
                "rel_types": if r.chance(70) { Value::Null } else { json!([r.pick(&RELS)]) }})
        }
        "graph_metric_timeseries"
        | "burst_detection"
        | "neighborhood_evolution"
        | "resolve_entities" => args_for_series(op, r),
        "diff_snapshots" => {
            let scope = if r.chance(60) {
                Value::Null
            } else {
                let n = r.int(1, 3);
                let seeds: Vec<&str> = (0..n).map(|_| uid_arg(r)).collect();
                json!({"seeds": seeds, "hops": r.int(0, 4)})
            };
            json!({"t1": r.int(0, 70), "t2": r.int(0, 70), "scope": scope, "limit": if r.chance(50) { r.int(1, 4) } else { 100 }})
        }
        _ => args_for_traversal(op, r),
    };
    o["as_of_tt"] = as_of(r, s);
    if ![
        "diff_snapshots",
        "neighborhood_evolution",
        "temporal_paths",
        "count_temporal_motifs",
    ]
    .contains(&op)
    {
        paging(r, &mut o);
    }
    o
}

type Oracle = fn(&[Row], &Value) -> Result<Value, Value>;

const OPS: [(&str, Oracle); 16] = [
    ("entity_history", o_entity_history),
    ("version_history", o_version_history),
    ("state_at", o_state_at),
    ("snapshot_subgraph", o_snapshot_subgraph),
    ("diff_snapshots", o_diff),
    ("graph_metric_timeseries", o_series),
    ("burst_detection", o_burst),
    ("neighborhood_evolution", o_nbr),
    ("resolve_entities", o_resolve),
    ("aggregate_events", o_aggregate),
    ("temporal_reachability", o_reach),
    ("temporal_paths", o_paths),
    ("count_temporal_motifs", o_count_motifs),
    ("find_temporal_motif_instances", o_find_motifs),
    ("co_active", o_co_active),
    ("weighted_traverse", o_weighted),
];

#[test]
fn operators_match_their_oracles_on_random_stores() {
    let mut r = Rng::new(0x7467_6d73);
    let mut cases: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for store_no in 0..120 {
        let (_d, mut s) = new_store();
        let n = r.int(3, 25) as usize;
        grow(&mut s, &mut r, n);
        let rows = plain_rows(&s);
        for (op, oracle) in OPS {
            for _ in 0..5 {
                let args = args_for(op, &mut r, &s);
                let got = call(&s, op, args.clone());
                let want = match oracle(&rows, &args) {
                    Ok(p) => p,
                    Err(e) => e,
                };
                let got_cmp = if got.get("error").is_some() {
                    got.clone()
                } else {
                    payload(&got)
                };
                assert_eq!(
                    canon(&got_cmp),
                    canon(&want),
                    "store #{store_no}, {op} {args}\nrows: {rows:#?}"
                );
                let c = cases.entry(op).or_default();
                c.0 += 1;
                if got.get("error").is_none() {
                    c.1 += 1;
                }
            }
        }
    }
    for (op, (n, ok)) in &cases {
        assert!(*n >= 500, "{op}: only {n} cases");
        assert!(*ok >= 250, "{op}: only {ok} successful cases of {n}");
    }
}

/// Event-heavy workload for the traversal and pattern operators: the random batches of
/// [`grow`] (corrections, retractions, interval edges) around several ingests of 3–12 events
/// over four nodes with times in [0, 30) — many equal times, self loops, interval events.
fn grow_dense(s: &mut Store, r: &mut Rng) {
    let n = r.int(1, 8) as usize;
    grow(s, r, n);
    for _ in 0..r.int(2, 6) {
        let k = r.int(3, 13);
        let events: Vec<Value> = (0..k)
            .map(|_| {
                let t = r.int(0, 30);
                let mut ev = json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
                    "rel_type": r.pick(&RELS), "vt_s": t});
                if r.chance(35) {
                    ev["vt_e"] = json!(t + r.int(1, 40));
                }
                if r.chance(70) {
                    // Mostly typed links (weighted_traverse), some unusable.
                    let mut p = json!({"link_type": r.pick(&["entity", "semantic", "temporal", "causal", "causal", "friend"])});
                    match r.below(5) {
                        0 => {}
                        1 => p["weight"] = if r.chance(50) { json!("high") } else { json!(true) },
                        _ => p["weight"] = json!(0.25 * r.below(9) as f64),
                    }
                    ev["props"] = p;
                }
                ev
            })
            .collect();
        let tt = s.last_tt().unwrap_or(0) + 1;
        s.write_at(
            tt,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
        let m = r.int(0, 3) as usize;
        grow(s, r, m);
    }
}

/// The operators of issue #5, exercised on event-heavy stores.
const TRAVERSAL: [&str; 6] = [
    "temporal_reachability",
    "temporal_paths",
    "count_temporal_motifs",
    "find_temporal_motif_instances",
    "co_active",
    "weighted_traverse",
];

#[test]
fn traversal_operators_match_their_oracles_on_event_heavy_stores() {
    let mut r = Rng::new(0x6f70_7335);
    let mut cases: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for store_no in 0..120 {
        let (_d, mut s) = new_store();
        grow_dense(&mut s, &mut r);
        let rows = plain_rows(&s);
        for &(op, oracle) in OPS.iter().filter(|(op, _)| TRAVERSAL.contains(op)) {
            for _ in 0..5 {
                let args = args_for(op, &mut r, &s);
                let got = call(&s, op, args.clone());
                let want = match oracle(&rows, &args) {
                    Ok(p) => p,
                    Err(e) => e,
                };
                let got_cmp = if got.get("error").is_some() {
                    got.clone()
                } else {
                    payload(&got)
                };
                assert_eq!(
                    canon(&got_cmp),
                    canon(&want),
                    "store #{store_no}, {op} {args}\nrows: {rows:#?}"
                );
                let c = cases.entry(op).or_default();
                c.0 += 1;
                if got.get("error").is_none() {
                    c.1 += 1;
                }
                let found = got["rows_total"].as_i64().or(got["count"].as_i64());
                if found.is_some_and(|n| n > 0) {
                    c.2 += 1;
                }
            }
        }
    }
    for (op, (n, ok, found)) in &cases {
        eprintln!("{op}: {n} cases, {ok} answered, {found} non-empty");
        assert!(*n >= 500, "{op}: only {n} cases");
        assert!(*ok >= 250, "{op}: only {ok} successful cases of {n}");
        assert!(*found >= 75, "{op}: only {found} non-empty results");
    }
}

fn set_of(v: &Value, k: &str) -> BTreeSet<String> {
    v[k].as_array()
        .unwrap()
        .iter()
        .map(|x| {
            x.as_str()
                .map_or_else(|| x["eid"].as_str().unwrap().to_string(), str::to_string)
        })
        .collect()
}

#[test]
fn diffs_compose() {
    let mut r = Rng::new(42);
    for _ in 0..60 {
        let (_d, mut s) = new_store();
        let n = r.int(5, 25) as usize;
        grow(&mut s, &mut r, n);
        let asof = as_of(&mut r, &s);
        let (t1, t2, t3) = (r.int(0, 70), r.int(0, 70), r.int(0, 70));
        let d = |x: i64, y: i64| {
            call(
                &s,
                "diff_snapshots",
                json!({"t1": x, "t2": y, "as_of_tt": asof, "limit": 10000}),
            )
        };
        let (d12, d23, d13) = (d(t1, t2), d(t2, t3), d(t1, t3));
        for (add, rem) in [
            ("nodes_added", "nodes_removed"),
            ("edges_added", "edges_removed"),
        ] {
            let (a12, r12, a23, r23) = (
                set_of(&d12, add),
                set_of(&d12, rem),
                set_of(&d23, add),
                set_of(&d23, rem),
            );
            let added: BTreeSet<String> = a12
                .difference(&r23)
                .cloned()
                .chain(
                    a23.iter()
                        .filter(|x| !a12.contains(*x) && !r12.contains(*x))
                        .cloned(),
                )
                .collect();
            assert_eq!(added, set_of(&d13, add), "{add} at {t1},{t2},{t3}");
            let removed: BTreeSet<String> = r12
                .difference(&a23)
                .cloned()
                .chain(
                    r23.iter()
                        .filter(|x| !r12.contains(*x) && !a12.contains(*x))
                        .cloned(),
                )
                .collect();
            assert_eq!(removed, set_of(&d13, rem), "{rem} at {t1},{t2},{t3}");
        }
    }
}

#[test]
fn results_pinned_to_a_past_belief_state_never_change() {
    let mut r = Rng::new(7);
    let mut pinned = 0;
    for _ in 0..30 {
        let (_d, mut s) = new_store();
        let n = r.int(5, 20) as usize;
        grow(&mut s, &mut r, n);
        let pin = s.last_tt().unwrap_or(0);
        let mut calls = Vec::new();
        for (op, _) in OPS {
            for _ in 0..4 {
                let mut args = args_for(op, &mut r, &s);
                args["as_of_tt"] = json!(pin);
                let mut env = call(&s, op, args.clone());
                // Only results are pinned: an unknown-uid refusal legitimately changes once
                // the uid is registered by a later write (the call then answers with the
                // empty past belief state).
                if env.get("error").is_some() {
                    continue;
                }
                if let Some(m) = env.as_object_mut() {
                    m.remove("dataset_extent");
                }
                calls.push((op, args, canon(&env)));
            }
        }
        // Later corrections, retractions, asserts and ingests.
        let more = r.int(3, 15) as usize;
        grow(&mut s, &mut r, more);
        pinned += calls.len();
        for (op, args, before) in calls {
            let mut env = call(&s, op, args.clone());
            if let Some(m) = env.as_object_mut() {
                m.remove("dataset_extent");
            }
            assert_eq!(
                canon(&env),
                before,
                "{op} {args} changed after later writes"
            );
        }
    }
    assert!(pinned >= 300, "only {pinned} pinned results");
}

#[test]
fn pages_concatenate_to_the_complete_list_and_certificates_hold() {
    let mut r = Rng::new(2024);
    let mut paged_calls = 0;
    for _ in 0..40 {
        let (_d, mut s) = new_store();
        let n = r.int(10, 30) as usize;
        grow(&mut s, &mut r, n);
        // Event-heavy half: long lists for the traversal and pattern operators.
        if r.chance(50) {
            grow_dense(&mut s, &mut r);
        }
        for op in [
            "entity_history",
            "version_history",
            "state_at",
            "snapshot_subgraph",
            "temporal_reachability",
            "find_temporal_motif_instances",
            "co_active",
            "weighted_traverse",
        ] {
            for _ in 0..3 {
                let mut args = args_for(op, &mut r, &s);
                args["cursor"] = Value::Null;
                args["limit"] = json!(10000);
                let full = call(&s, op, args.clone());
                if full.get("error").is_some() {
                    continue;
                }
                // Walk the pages with a small limit.
                args["limit"] = json!(r.int(1, 3));
                let mut rows: Vec<Value> = Vec::new();
                let mut pages = 0;
                loop {
                    let pg = call(&s, op, args.clone());
                    assert_eq!(pg["rows_total"], full["rows_total"], "{op} {args}");
                    assert_eq!(pg["set_digest"], full["set_digest"], "{op} {args}");
                    rows.extend(pg["rows"].as_array().unwrap().iter().cloned());
                    pages += 1;
                    match &pg["cursor"] {
                        Value::Null => {
                            // snapshot_subgraph: a capped `nodes` list also sets it (§10).
                            let nodes_cut = pg["nodes_truncated"] == true;
                            assert_eq!(pg["truncated"], nodes_cut, "{op} {args}");
                            break;
                        }
                        c => {
                            assert_eq!(pg["truncated"], true);
                            args["cursor"] = c.clone();
                        }
                    }
                    assert!(pages < 10_000);
                }
                assert_eq!(Value::Array(rows), full["rows"], "{op} {args}");
                paged_calls += pages;
                // §6.3: a uid-keyed capped list equals the complete set iff the count and
                // the certificate match.
                if op == "snapshot_subgraph" {
                    let uids: Vec<Value> = full["nodes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n["uid"].clone())
                        .collect();
                    assert_eq!(json!(uids.len()), full["nodes_total"]);
                    assert_eq!(json!(oracle_set_digest(&uids)), full["nodes_set_digest"]);
                    let capped = call(&s, op, args.clone());
                    assert_eq!(capped["nodes_set_digest"], full["nodes_set_digest"]);
                    assert_eq!(capped["nodes_total"], full["nodes_total"]);
                }
            }
        }
    }
    assert!(paged_calls >= 200, "only {paged_calls} pages walked");
}
