//! Every validator and error path of the framework and of this crate's operators, with bad
//! input: exact E_SCHEMA messages and paths (§5.3), semantic validators, unknown uids, bad
//! cursors, cost refusals — and a fuzz of random argument values that must never panic.

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_operators::{call_operator, CallOptions, Ceilings};
use tgms_testkit::Rng;

fn expect(
    s: &tgms_engine::Store,
    op: &str,
    args: Value,
    code: &str,
    msg: &str,
    path: Option<Value>,
) {
    let got = call(s, op, args.clone());
    assert_eq!(got["error"], code, "{op} {args} → {got}");
    assert_eq!(got["message"], msg, "{op} {args} → {got}");
    if let Some(p) = path {
        assert_eq!(got["details"]["path"], p, "{op} {args} → {got}");
    }
    assert!(got["details"].is_object());
}

#[test]
fn schema_errors_have_the_spec_messages_and_paths() {
    let (_d, s) = tv8();
    let sc = "E_SCHEMA";
    let eh = |m: &str| format!("invalid args for entity_history: {m}");
    expect(
        &s,
        "entity_history",
        json!({}),
        sc,
        &eh("'uid' is a required property"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        json!({"bogus": 1}),
        sc,
        &eh("'uid' is a required property"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": ""}),
        sc,
        &eh("'' is too short"),
        Some(json!(["uid"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": 5}),
        sc,
        &eh("5 is not of type 'string'"),
        Some(json!(["uid"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": 5, "zz": 1, "bogus": 2}),
        sc,
        &eh("Additional properties are not allowed ('bogus', 'zz' were unexpected)"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "bogus": 1}),
        sc,
        &eh("Additional properties are not allowed ('bogus' was unexpected)"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "limit": 0}),
        sc,
        &eh("0 is less than the minimum of 1"),
        Some(json!(["limit"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "limit": 10001}),
        sc,
        &eh("10001 is greater than the maximum of 10000"),
        Some(json!(["limit"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "limit": 2.5}),
        sc,
        &eh("2.5 is not of type 'integer'"),
        Some(json!(["limit"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "limit": true}),
        sc,
        &eh("true is not of type 'integer'"),
        Some(json!(["limit"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "as_of_tt": -1}),
        sc,
        &eh("-1 is less than the minimum of 0"),
        Some(json!(["as_of_tt"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "cursor": 5}),
        sc,
        &eh("5 is not of type 'string', 'null'"),
        Some(json!(["cursor"])),
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "include_edges": "yes"}),
        sc,
        &eh("'yes' is not of type 'boolean'"),
        Some(json!(["include_edges"])),
    );
    expect(
        &s,
        "entity_history",
        json!([]),
        sc,
        &eh("[] is not of type 'object'"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        json!("it's"),
        sc,
        &eh(r"'it\'s' is not of type 'object'"),
        Some(json!([])),
    );
    expect(
        &s,
        "entity_history",
        Value::Null,
        sc,
        &eh("null is not of type 'object'"),
        Some(json!([])),
    );
    let long = "x".repeat(300);
    let got = call(&s, "entity_history", json!({"uid": "a", "cursor": [long]}));
    assert!(got["message"].as_str().unwrap().contains("…"), "{got}");

    let vh = |m: &str| format!("invalid args for version_history: {m}");
    expect(
        &s,
        "version_history",
        json!({"kind": "x"}),
        sc,
        &vh("'x' is not one of ['node', 'edge']"),
        Some(json!(["kind"])),
    );
    expect(
        &s,
        "version_history",
        json!({"belief": "some"}),
        sc,
        &vh("'some' is not one of ['current', 'superseded', 'all']"),
        Some(json!(["belief"])),
    );
    expect(
        &s,
        "version_history",
        json!({"window": {"t_a": 5}}),
        sc,
        &vh("'t_b' is a required property"),
        Some(json!(["window"])),
    );
    expect(
        &s,
        "version_history",
        json!({"window": {"t_a": 5, "t_b": "9"}}),
        sc,
        // A time in a string is parsed as ISO-8601 (docs/times.md); a bare number in a
        // string is refused with the integer form as the fix.
        &vh("'9' is not a time: a number in a string; write µs as a JSON integer (9), or a date like \"2004-07-22\""),
        Some(json!(["window", "t_b"])),
    );
    expect(
        &s,
        "version_history",
        json!({"window": 3}),
        sc,
        &vh("3 is not of type 'object', 'null'"),
        Some(json!(["window"])),
    );
    expect(
        &s,
        "version_history",
        json!({"uid": ""}),
        sc,
        &vh("'' is too short"),
        Some(json!(["uid"])),
    );
    expect(
        &s,
        "version_history",
        json!({"rel_types": [1]}),
        sc,
        &vh("1 is not of type 'string'"),
        Some(json!(["rel_types", 0])),
    );

    let ss = |m: &str| format!("invalid args for snapshot_subgraph: {m}");
    expect(
        &s,
        "snapshot_subgraph",
        json!({"seeds": [], "t_valid": 1}),
        sc,
        &ss("[] is too short"),
        Some(json!(["seeds"])),
    );
    expect(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a", ""], "t_valid": 1}),
        sc,
        &ss("'' is too short"),
        Some(json!(["seeds", 1])),
    );
    expect(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a"], "t_valid": 1, "hops": 4}),
        sc,
        &ss("4 is greater than the maximum of 3"),
        Some(json!(["hops"])),
    );
    expect(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a"]}),
        sc,
        &ss("'t_valid' is a required property"),
        Some(json!([])),
    );
    let many: Vec<String> = (0..10001).map(|i| format!("u{i}")).collect();
    let got = call(
        &s,
        "snapshot_subgraph",
        json!({"seeds": many, "t_valid": 1}),
    );
    assert!(
        got["message"].as_str().unwrap().ends_with("… is too long"),
        "{}",
        got["message"]
    );

    let ds = |m: &str| format!("invalid args for diff_snapshots: {m}");
    expect(
        &s,
        "diff_snapshots",
        json!({"t1": 1, "t2": 2, "scope": {"seeds": ["a"]}}),
        sc,
        &ds("'hops' is a required property"),
        Some(json!(["scope"])),
    );
    expect(
        &s,
        "diff_snapshots",
        json!({"t1": 1, "t2": 2, "scope": {"seeds": ["a"], "hops": 1, "x": 1}}),
        sc,
        &ds("Additional properties are not allowed ('x' was unexpected)"),
        Some(json!(["scope"])),
    );
    expect(
        &s,
        "diff_snapshots",
        json!({"t1": 1, "t2": 2, "cursor": "1"}),
        sc,
        &ds("Additional properties are not allowed ('cursor' was unexpected)"),
        Some(json!([])),
    );

    let sa = |m: &str| format!("invalid args for state_at: {m}");
    expect(
        &s,
        "state_at",
        json!({"uid": "a", "at": 1, "direction": "up"}),
        sc,
        &sa("'up' is not one of ['out', 'in', 'both']"),
        Some(json!(["direction"])),
    );
    expect(
        &s,
        "state_at",
        json!({"uid": "a", "at": 4611686018427387905i64}),
        sc,
        &sa("4611686018427387905 is greater than the maximum of 4611686018427387904"),
        Some(json!(["at"])),
    );
    expect(
        &s,
        "state_at",
        json!({"uid": "a", "at": 1e30}),
        sc,
        &sa("1e+30 is greater than the maximum of 4611686018427387904"),
        Some(json!(["at"])),
    );
    expect(
        &s,
        "state_at",
        json!({"uid": "a", "at": 1, "rel_type": 3}),
        sc,
        &sa("3 is not of type 'string', 'null'"),
        Some(json!(["rel_type"])),
    );
}

#[test]
fn semantic_errors() {
    let (_d, s) = tv8();
    expect(
        &s,
        "version_history",
        json!({"window": {"t_a": 5, "t_b": 5}}),
        "E_INVALID_ARG",
        "window requires t_a < t_b, got [5, 5)",
        None,
    );
    expect(
        &s,
        "version_history",
        json!({"kind": "node", "rel_types": ["R"]}),
        "E_INVALID_ARG",
        "rel_types is only valid for kind 'edge'",
        None,
    );
    expect(
        &s,
        "version_history",
        json!({"uid": "zz"}),
        "E_NOT_FOUND",
        "unknown uid: zz",
        None,
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "cursor": "abc"}),
        "E_INVALID_ARG",
        "bad cursor: 'abc'",
        None,
    );
    expect(
        &s,
        "entity_history",
        json!({"uid": "a", "cursor": "-1"}),
        "E_INVALID_ARG",
        "bad cursor: '-1'",
        None,
    );
    expect(
        &s,
        "state_at",
        json!({"uid": "zz", "at": 1}),
        "E_NOT_FOUND",
        "unknown uid: zz",
        None,
    );
    expect(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a", "zz", "yy"], "t_valid": 1}),
        "E_NOT_FOUND",
        "unknown uid: zz",
        None,
    );
    expect(
        &s,
        "diff_snapshots",
        json!({"t1": 1, "t2": 2, "scope": {"seeds": ["qq"], "hops": 0}}),
        "E_NOT_FOUND",
        "unknown uid: qq",
        None,
    );
    // A huge cursor is a legal, empty page.
    let e = call(
        &s,
        "entity_history",
        json!({"uid": "a", "cursor": "99999999999999999999999"}),
    );
    assert_eq!(
        (
            e["rows"].clone(),
            e["rows_total"].clone(),
            e["truncated"].clone()
        ),
        (json!([]), json!(1), json!(false))
    );
    // Integral floats are integers after step 3.
    let e = call(&s, "entity_history", json!({"uid": "a", "limit": 2.0}));
    assert_eq!(canon(&e["args_echo"]["limit"]), "2");
}

#[test]
fn cost_refusal_and_skip() {
    let (_d, s) = tv8();
    let opts = CallOptions {
        ceilings: Ceilings {
            rows_scanned_est: Some(0),
            ..Ceilings::default()
        },
        skip_cost: false,
    };
    let e = call_operator(
        s.snapshot(),
        "snapshot_subgraph",
        &json!({"seeds": ["a"], "t_valid": 30}),
        &opts,
    )
    .unwrap_err();
    // adjacency_estimate of one seed, one hop: the mean incident edge versions
    // ceil(2 · 3 edge versions / 3 entities) = 2; time int(2 · 115 / 1e6) = 0.
    assert_eq!(
        canon(&e.payload()),
        r#"{"details":{"ceilings":{"rows_scanned_est":0},"estimate":{"expansions_est":0,"rows_scanned_est":2,"time_est_ms":0},"suggestions":["narrow the valid-time window","add a node_filter / seed set","restrict rel_types","reduce hops / max_hops"]},"error":"E_COST","message":"estimated cost for snapshot_subgraph exceeds ceilings"}"#
    );
    let skip = CallOptions {
        skip_cost: true,
        ..opts
    };
    assert!(call_operator(
        s.snapshot(),
        "snapshot_subgraph",
        &json!({"seeds": ["a"], "t_valid": 30}),
        &skip
    )
    .is_ok());
    // version_history without uid: rows = expansions = 6 versions, coeff 15,400.
    let opts = CallOptions {
        ceilings: Ceilings {
            expansions_est: Some(5),
            ..Ceilings::default()
        },
        skip_cost: false,
    };
    let e = call_operator(s.snapshot(), "version_history", &json!({}), &opts).unwrap_err();
    assert_eq!(
        e.details["estimate"],
        json!({"rows_scanned_est": 6, "expansions_est": 6, "time_est_ms": 0})
    );
    // with uid (kind edge): ceil_div(2 · 3, 3) = 2.
    let e = call_operator(
        s.snapshot(),
        "version_history",
        &json!({"uid": "a", "kind": "edge"}),
        &CallOptions {
            ceilings: Ceilings {
                rows_scanned_est: Some(1),
                ..Ceilings::default()
            },
            skip_cost: false,
        },
    )
    .unwrap_err();
    assert_eq!(e.details["estimate"]["rows_scanned_est"], 2);
    // state_at: point read 1 + ceil_div(6, 3) = 3.
    let e = call_operator(
        s.snapshot(),
        "state_at",
        &json!({"uid": "a", "at": 1}),
        &CallOptions {
            ceilings: Ceilings {
                rows_scanned_est: Some(1),
                ..Ceilings::default()
            },
            skip_cost: false,
        },
    )
    .unwrap_err();
    assert_eq!(e.details["estimate"]["rows_scanned_est"], 3);
}

fn random_value(r: &mut Rng, depth: u32) -> Value {
    let x = r.next_u64();
    let k = (x >> 33) % if depth > 2 { 8 } else { 10 };
    let n = (x >> 40) as i64;
    match k {
        0 => Value::Null,
        1 => json!(n % 2 == 0),
        2 => json!(n % 120 - 10),
        3 => json!((n % 1000) as f64 / 7.0),
        4 => {
            json!(["a", "b", "", "zz", "x1", "0", "node", "edge", "all", "out"][(n % 10) as usize])
        }
        5 => json!(4611686018427387904i64 + n % 3 - 1),
        6 => json!(-(n % 5)),
        7 => json!("é\u{0}'\\"),
        8 => Value::Array((0..(n % 4)).map(|_| random_value(r, depth + 1)).collect()),
        _ => {
            let keys = ["t_a", "t_b", "seeds", "hops", "uid", "x"];
            Value::Object(
                (0..(n % 4))
                    .map(|i| {
                        (
                            keys[((n + i) % 6) as usize].to_string(),
                            random_value(r, depth + 1),
                        )
                    })
                    .collect(),
            )
        }
    }
}

#[test]
fn random_arguments_never_panic() {
    let (_d, s) = tv9();
    let names = [
        "entity_history",
        "version_history",
        "state_at",
        "snapshot_subgraph",
        "diff_snapshots",
        "graph_metric_timeseries",
        "burst_detection",
        "neighborhood_evolution",
        "resolve_entities",
        "compute",
        "aggregate_events",
    ];
    let mut r = Rng::new(99);
    let codes = [
        "E_SCHEMA",
        "E_INVALID_ARG",
        "E_NOT_FOUND",
        "E_COST",
        "E_LIMIT",
    ];
    for i in 0..4000 {
        let op = names[i % names.len()];
        let spec = tgms_operators::lookup(op).unwrap();
        let mut args = serde_json::Map::new();
        for a in &spec.args {
            if r.below(16) < 11 {
                args.insert(a.name.to_string(), random_value(&mut r, 0));
            }
        }
        let got = call(&s, op, Value::Object(args));
        match got.get("error") {
            Some(c) => assert!(codes.contains(&c.as_str().unwrap()), "{got}"),
            None => assert_eq!(got["result_digest"].as_str().unwrap().len(), 64),
        }
    }
}

/// Validators, kernel caps and error paths of graph_metric_timeseries, burst_detection,
/// neighborhood_evolution and resolve_entities.
#[test]
fn series_and_neighbourhood_errors() {
    let (_d, s) = tv9();
    let w = json!({"t_a": 0, "t_b": 50});
    expect(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "node_count", "window": {"t_a": 5, "t_b": 5}, "stride": 1}),
        "E_INVALID_ARG",
        "window requires t_a < t_b, got [5, 5)",
        None,
    );
    expect(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "degree", "window": w, "stride": 1}),
        "E_SCHEMA",
        "invalid args for graph_metric_timeseries: 'degree' is not one of ['node_count', 'edge_event_count', 'active_edge_count', 'mean_out_degree', 'new_node_rate', 'reciprocity']",
        Some(json!(["metric"])),
    );
    expect(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "node_count", "window": w, "stride": 0}),
        "E_SCHEMA",
        "invalid args for graph_metric_timeseries: 0 is less than the minimum of 1",
        Some(json!(["stride"])),
    );
    expect(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "node_count", "window": {"t_a": 0, "t_b": 4611686018427387904i64}, "stride": 1}),
        "E_LIMIT",
        "bucket count 4611686018427387904 exceeds cap 2000; use stride >= 2305843009213694 for this window",
        None,
    );
    // Exactly 2000 buckets pass; 2001 do not.
    let ok = call(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": 2000}, "stride": 1}),
    );
    assert_eq!(ok["n_buckets"], 2000);
    expect(
        &s,
        "graph_metric_timeseries",
        json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": 2001}, "stride": 1}),
        "E_LIMIT",
        "bucket count 2001 exceeds cap 2000; use stride >= 2 for this window",
        None,
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "node_activity"}, "window": w, "stride": 5}),
        "E_INVALID_ARG",
        "target.kind='node_activity' requires target.uid",
        None,
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "node_activity", "uid": ""}, "window": w, "stride": 5}),
        "E_INVALID_ARG",
        "target.kind='node_activity' requires target.uid",
        None,
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "node_activity", "uid": "zz"}, "window": w, "stride": 5}),
        "E_NOT_FOUND",
        "unknown uid: zz",
        None,
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate", "bogus": 1}, "window": w, "stride": 5}),
        "E_SCHEMA",
        "invalid args for burst_detection: Additional properties are not allowed ('bogus' was unexpected)",
        Some(json!(["target"])),
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": 5, "params": {"w": 1}}),
        "E_SCHEMA",
        "invalid args for burst_detection: 1 is less than the minimum of 2",
        Some(json!(["params", "w"])),
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": 5, "params": {"z": 0.05}}),
        "E_SCHEMA",
        "invalid args for burst_detection: 0.05 is less than the minimum of 0.1",
        Some(json!(["params", "z"])),
    );
    expect(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": 5, "method": "mad"}),
        "E_SCHEMA",
        "invalid args for burst_detection: 'mad' is not one of ['zscore', 'ratio']",
        Some(json!(["method"])),
    );
    expect(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 5, "t2": 5}),
        "E_INVALID_ARG",
        "neighborhood_evolution requires t1 < t2, got t1=5, t2=5",
        None,
    );
    expect(
        &s,
        "neighborhood_evolution",
        json!({"uid": "zz", "t1": 5, "t2": 6}),
        "E_NOT_FOUND",
        "unknown uid: zz",
        None,
    );
    expect(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 0, "t2": 2001, "stride": 1}),
        "E_LIMIT",
        "bucket count 2001 exceeds cap 2000; increase stride",
        None,
    );
    expect(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 0, "t2": 10, "stride": 0}),
        "E_SCHEMA",
        "invalid args for neighborhood_evolution: 0 is less than the minimum of 1",
        Some(json!(["stride"])),
    );
    // Default stride: max(1, (t2 − t1) // 20).
    let n = call(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 0, "t2": 7}),
    );
    assert_eq!(n["stride"], 1);
    assert_eq!(n["degree_series"].as_array().unwrap().len(), 7);
    let n = call(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 0, "t2": 100}),
    );
    assert_eq!(n["stride"], 5);
    expect(
        &s,
        "resolve_entities",
        json!({"query": ""}),
        "E_SCHEMA",
        "invalid args for resolve_entities: '' is too short",
        Some(json!(["query"])),
    );
    expect(
        &s,
        "resolve_entities",
        json!({"query": "a", "cursor": "x"}),
        "E_INVALID_ARG",
        "bad cursor: 'x'",
        None,
    );
    // Never E_NOT_FOUND.
    let r = call(&s, "resolve_entities", json!({"query": "nobody"}));
    assert_eq!(r["rows_total"], 0);
}

/// Cost estimates of the series operators (scan_estimate with the window fraction) and of
/// neighborhood_evolution (adjacency) and resolve_entities (node scan), on the TV9 store (6 edge
/// versions, 3 node versions, extent [10, 43)).
#[test]
fn series_cost_estimates() {
    let (_d, s) = tv9();
    let refuse = CallOptions {
        ceilings: Ceilings {
            rows_scanned_est: Some(0),
            ..Ceilings::default()
        },
        skip_cost: false,
    };
    let est = |op: &str, args: Value| {
        let e = call_operator(s.snapshot(), op, &args, &refuse).unwrap_err();
        assert_eq!(e.code.as_str(), "E_COST", "{op}");
        assert_eq!(
            e.details["ceilings"],
            json!({"rows_scanned_est": 0}),
            "{op}"
        );
        e.details["estimate"].clone()
    };
    let full = json!({"rows_scanned_est": 9, "expansions_est": 0, "time_est_ms": 0});
    let w = |a: i64, b: i64| json!({"t_a": a, "t_b": b});
    assert_eq!(
        est(
            "graph_metric_timeseries",
            json!({"metric": "node_count", "window": w(0, 50), "stride": 10})
        ),
        full
    );
    // A window outside the extent: fraction clipped to 0, node versions still counted.
    assert_eq!(
        est(
            "graph_metric_timeseries",
            json!({"metric": "node_count", "window": w(100, 200), "stride": 10})
        )["rows_scanned_est"],
        3
    );
    assert_eq!(
        est(
            "burst_detection",
            json!({"target": {"kind": "edge_event_rate"}, "window": w(100, 200), "stride": 10})
        )["rows_scanned_est"],
        3
    );
    // The node's versions, ceil(3 / 3 entities) = 1, and its adjacency, the mean incident
    // edge versions ceil(2 · 6 / 3) = 4 (not a scan: the window does not matter).
    assert_eq!(
        est(
            "neighborhood_evolution",
            json!({"uid": "a", "t1": 100, "t2": 200})
        )["rows_scanned_est"],
        5
    );
    // The node versions and the uid dictionary: 3 + 3.
    assert_eq!(
        est("resolve_entities", json!({"query": "a"}))["rows_scanned_est"],
        6
    );
    // The bucket cap is a kernel check: the cost refusal comes first.
    assert_eq!(
        est(
            "graph_metric_timeseries",
            json!({"metric": "node_count", "window": w(0, 100000), "stride": 1})
        )["rows_scanned_est"],
        9
    );
}

/// Strides beyond i64 (schema-valid: no maximum) act as one bucket, never E_INTERNAL.
#[test]
fn huge_strides_are_one_bucket() {
    let (_d, s) = tv9();
    for stride in [json!(18446744073709551615u64), json!(1e30)] {
        let g = call(
            &s,
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": 50}, "stride": stride}),
        );
        assert_eq!(g["rows"], json!([{"t_a": 0, "t_b": 50, "value": 6}]), "{g}");
        let b = call(
            &s,
            "burst_detection",
            json!({"target": {"kind": "edge_event_rate"}, "window": {"t_a": 0, "t_b": 50}, "stride": stride}),
        );
        assert_eq!(b["n_buckets"], 1, "{b}");
        let n = call(
            &s,
            "neighborhood_evolution",
            json!({"uid": "a", "t1": 10, "t2": 50, "stride": stride}),
        );
        assert_eq!(n["degree_series"], json!([{"t": 10, "degree": 1}]), "{n}");
    }
}

#[test]
fn compute_errors() {
    let (_d, s) = new_store();
    let ia = "E_INVALID_ARG";
    let c = |args: Value, msg: &str| expect(&s, "compute", args, ia, msg, None);
    expect(
        &s,
        "compute",
        json!({"fn": "count", "input": [1], "cursor": "1"}),
        "E_SCHEMA",
        "invalid args for compute: Additional properties are not allowed ('cursor' was unexpected)",
        Some(json!([])),
    );
    expect(
        &s,
        "compute",
        json!({"fn": "ratio", "x": true, "y": 1}),
        "E_SCHEMA",
        "invalid args for compute: true is not of type 'number', 'null'",
        Some(json!(["x"])),
    );
    expect(
        &s,
        "compute",
        json!({"fn": "topk", "input": [], "field": "v", "pct": 0}),
        "E_SCHEMA",
        "invalid args for compute: 0 is less than or equal to the minimum of 0",
        Some(json!(["pct"])),
    );
    c(
        json!({"fn": "mean", "input": [1, "1361129467683753853853498429727072845824"]}),
        "compute mean needs numeric values, got '1361129467683753853853498429727072845824'",
    );
    let big: Value = serde_json::from_str(
        r#"{"fn": "mean", "input": [1, 1361129467683753853853498429727072845824]}"#,
    )
    .unwrap();
    c(big, "integer out of supported range");
    let ovf: Value = serde_json::from_str(
        r#"{"fn": "sum", "input": [170141183460469231731687303715884105727, 1]}"#,
    )
    .unwrap();
    c(ovf, "integer out of supported range");
    c(
        json!({"fn": "filter", "input": [1], "cmp": "eq", "value": 1, "group_by": "g"}),
        "group_by is only supported for count, sum, min, max, mean, median, topk",
    );
    c(
        json!({"fn": "interval_relation", "a": {"start": 2, "end": 2}, "b": {"start": 0, "end": 1}}),
        "interval_relation requires a and b with start < end",
    );
    c(
        json!({"fn": "derive", "input": [], "field": "a", "op": "add", "into": "b", "value": 1, "field2": "c"}),
        "derive requires input, field, op, into and exactly one of field2 or value",
    );
    c(
        json!({"fn": "derive", "input": [1], "field": "a", "op": "add", "into": "b", "value": 1}),
        "derive rows must be objects",
    );
    c(
        json!({"fn": "derive", "input": [{"a": 1, "b": 2}], "field": "a", "op": "add", "into": "b", "value": 1}),
        "derive: column 'b' already exists",
    );
    c(
        json!({"fn": "derive", "input": [{"x": 1}], "field": "a", "op": "add", "into": "b", "value": 1}),
        "derive: row has no field 'a'",
    );
    c(
        json!({"fn": "derive", "input": [{"a": "1"}], "field": "a", "op": "mul", "into": "b", "value": 1}),
        "derive mul needs numbers",
    );
    c(
        json!({"fn": "derive", "input": [{"a": 1}], "field": "a", "op": "floordiv", "into": "b", "value": 0.0}),
        "division by zero",
    );
    c(
        json!({"fn": "join", "input": []}),
        "join requires input, other and on",
    );
    c(
        json!({"fn": "join", "input": [{"k": 1}], "other": [{"j": 1}], "on": "k"}),
        "join: other row without key 'k'",
    );
    c(
        json!({"fn": "join", "input": [{"k": 1}], "other": [{"k": "a"}, {"k": 2}, {"k": "a"}], "on": "k"}),
        "join: duplicate key 'a' in other",
    );
    c(
        json!({"fn": "join", "input": [{"k": 1}, {"k": 1.0}], "other": [], "on": "k"}),
        "join: duplicate key 1.0 in input",
    );
    c(
        json!({"fn": "join", "input": [{"k": [1]}], "other": [], "on": "k"}),
        "join keys must be scalars",
    );
    c(
        json!({"fn": "join", "input": [{"k": 1, "r_k": 0}], "other": [{"k": 1}], "on": "k"}),
        "join: column 'r_k' already exists in input",
    );
    c(
        json!({"fn": "union", "input": [1]}),
        "union requires input and other",
    );
    c(
        json!({"fn": "intersect", "input": [{"a": 1}], "other": [], "field": "b"}),
        "intersect: row has no field 'b'",
    );
    c(
        json!({"fn": "difference", "input": [[1]], "other": []}),
        "set members must be scalars",
    );
    c(json!({"fn": "percent", "x": 1}), "percent requires x and y");
    c(
        json!({"fn": "percent", "x": 1, "y": 0.0}),
        "division by zero",
    );
    c(json!({"fn": "median"}), "compute fn=median requires input");
    c(
        json!({"fn": "sum", "input": [{"v": 1}], "group_by": "g"}),
        "group_by: row without column 'g'",
    );
    c(
        json!({"fn": "sum", "input": [{"g": {}}], "group_by": "g"}),
        "group_by keys must be scalars",
    );
    c(
        json!({"fn": "sum", "input": [{"g": 1}], "group_by": "g"}),
        "compute fn=sum with group_by requires field",
    );
    c(
        json!({"fn": "max", "input": [{"v": 1}, {"w": 2}], "field": "v"}),
        "compute max: row has no field 'v'",
    );
    c(
        json!({"fn": "min", "input": [1, true]}),
        "compute min needs numeric values, got true",
    );
    c(json!({"fn": "mean", "input": []}), "empty input");
    c(
        json!({"fn": "topk", "input": [], "field": "v"}),
        "topk takes exactly one of k or pct",
    );
    c(
        json!({"fn": "topk", "input": [], "k": 1}),
        "topk requires field",
    );
    c(json!({"fn": "filter", "input": []}), "filter requires cmp");
    c(
        json!({"fn": "filter", "input": [], "cmp": "eq", "value": 1, "field2": "w"}),
        "filter takes field2 or value, not both",
    );
    c(
        json!({"fn": "filter", "input": ["a"], "cmp": "lt", "value": 1}),
        "cannot order string and int",
    );
    c(
        json!({"fn": "ratio", "x": 1e308, "y": 0.001}),
        "non-finite float in operator output",
    );
    // empty sum is the int 0; booleans stay apart from numbers in sets, not in filter
    let e = call(&s, "compute", json!({"fn": "sum", "input": []}));
    assert_eq!(canon(&e["value"]), "0");
    let e = call(
        &s,
        "compute",
        json!({"fn": "filter", "input": [true, 1, 1.0, "1"], "cmp": "eq", "value": 1}),
    );
    assert_eq!(canon(&e["rows"]), "[true,1,1.0]");
}

#[test]
fn aggregate_events_errors() {
    let (_d, s) = tv9();
    let w = json!({"t_a": 0, "t_b": 100});
    let cnt = json!([{"agg": "count"}]);
    let ia = "E_INVALID_ARG";
    let a = |g: Value, aggs: Value, extra: Value, msg: &str| {
        let mut args = json!({"group_by": g, "aggregates": aggs, "window": w});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        expect(&s, "aggregate_events", args, ia, msg, None);
    };
    a(
        json!([]),
        cnt.clone(),
        json!({"window": {"t_a": 5, "t_b": 5}}),
        "window requires t_a < t_b, got [5, 5)",
    );
    a(
        json!([{"dim": "rel_type", "unit": "hour_of_day"}]),
        cnt.clone(),
        json!({}),
        "unit is only valid for calendar_unit",
    );
    a(
        json!([{"dim": "rel_type", "tz_offset_minutes": 60}]),
        cnt.clone(),
        json!({}),
        "tz_offset_minutes is only valid for calendar_unit",
    );
    a(
        json!([{"dim": "calendar_unit"}]),
        cnt.clone(),
        json!({}),
        "calendar_unit requires unit",
    );
    a(
        json!([{"dim": "label"}]),
        cnt.clone(),
        json!({}),
        "label requires role src or dst",
    );
    a(
        json!([{"dim": "rel_type", "role": "src"}]),
        cnt.clone(),
        json!({}),
        "role is only valid for endpoint and label",
    );
    a(
        json!([{"dim": "rel_type"}, {"dim": "rel_type"}]),
        cnt.clone(),
        json!({}),
        "duplicate dimension rel_type",
    );
    a(
        json!([]),
        json!([{"agg": "count", "prop": "w"}]),
        json!({}),
        "prop is only valid with of='prop'",
    );
    a(
        json!([]),
        json!([{"agg": "count", "span": 2}]),
        json!({}),
        "span is only valid for max_in_window",
    );
    a(
        json!([]),
        json!([{"agg": "max_gap", "gap": 2}]),
        json!({}),
        "gap is only valid for max_session_span",
    );
    a(
        json!([]),
        json!([{"agg": "max_gap", "of": "vt_s"}]),
        json!({}),
        "max_gap takes no 'of'",
    );
    a(
        json!([]),
        json!([{"agg": "max_in_window"}]),
        json!({}),
        "max_in_window requires span",
    );
    a(
        json!([]),
        json!([{"agg": "max_session_span"}]),
        json!({}),
        "max_session_span requires gap",
    );
    a(
        json!([]),
        json!([{"agg": "count", "of": "src"}]),
        json!({}),
        "count takes no 'of'",
    );
    a(
        json!([]),
        json!([{"agg": "count_distinct", "of": "vt_s"}]),
        json!({}),
        "count_distinct requires of 'src' or 'dst'",
    );
    a(
        json!([]),
        json!([{"agg": "mean", "of": "src"}]),
        json!({}),
        "mean requires of 'vt_s', 'duration' or 'prop'",
    );
    a(
        json!([]),
        json!([{"agg": "min", "of": "prop"}]),
        json!({}),
        "of='prop' requires prop",
    );
    a(
        json!([]),
        json!([{"agg": "count"}, {"agg": "count"}]),
        json!({}),
        "duplicate aggregate output 'count'",
    );
    a(
        json!([]),
        cnt.clone(),
        json!({"prop_filter": {"prop": "w", "cmp": "eq", "value": [1]}}),
        "prop_filter.value must be a number, string or boolean",
    );
    a(
        json!([{"dim": "endpoint", "role": "dst"}, {"dim": "endpoint", "role": "src"}]),
        cnt.clone(),
        json!({"pair_mode": "undirected"}),
        "pair_mode requires group_by [endpoint src, endpoint dst], optionally with one time_bucket, calendar_unit or rel_type dimension before or after the pair",
    );
    a(
        json!([{"dim": "time_bucket"}]),
        cnt.clone(),
        json!({}),
        "time_bucket requires stride",
    );
    a(
        json!([]),
        cnt.clone(),
        json!({"stride": 5}),
        "stride requires a time_bucket dimension",
    );
    expect(
        &s,
        "aggregate_events",
        json!({"group_by": [{"dim": "time_bucket"}], "aggregates": cnt, "window": {"t_a": 0, "t_b": 100000}, "stride": 1}),
        "E_LIMIT",
        "bucket count 100000 exceeds cap 2000; use stride >= 50 for this window",
        None,
    );
    // The bucket cap is checked before the cost guardrail.
    let e = call_operator(
        s.snapshot(),
        "aggregate_events",
        &json!({"group_by": [{"dim": "time_bucket"}], "aggregates": cnt, "window": {"t_a": 0, "t_b": 100000}, "stride": 1}),
        &CallOptions {
            ceilings: Ceilings {
                rows_scanned_est: Some(0),
                ..Ceilings::default()
            },
            skip_cost: false,
        },
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "E_LIMIT");
    // Cost: scan_estimate with the window fraction (TV9: extent [10, 43), 6 edge and 3 node
    // versions): int(6 · 16/33) + 3 = 5; coeff 170.
    let e = call_operator(
        s.snapshot(),
        "aggregate_events",
        &json!({"group_by": [], "aggregates": cnt, "window": {"t_a": 10, "t_b": 26}}),
        &CallOptions {
            ceilings: Ceilings {
                rows_scanned_est: Some(0),
                ..Ceilings::default()
            },
            skip_cost: false,
        },
    )
    .unwrap_err();
    assert_eq!(
        e.details["estimate"],
        json!({"rows_scanned_est": 5, "expansions_est": 0, "time_est_ms": 0})
    );
    expect(
        &s,
        "aggregate_events",
        json!({"group_by": [{"dim": "x"}], "aggregates": cnt, "window": w}),
        "E_SCHEMA",
        "invalid args for aggregate_events: 'x' is not one of ['time_bucket', 'calendar_unit', 'rel_type', 'endpoint', 'label']",
        Some(json!(["group_by", 0, "dim"])),
    );
    expect(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [], "window": w}),
        "E_SCHEMA",
        "invalid args for aggregate_events: [] is too short",
        Some(json!(["aggregates"])),
    );
    // An empty cohort is an empty population; group_by [] still gives one row.
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "window": w, "endpoint_filter": {"role": "either", "uids": []},
            "aggregates": [{"agg": "count"}, {"agg": "max_gap"}, {"agg": "max_in_window", "span": 5}, {"agg": "mean", "of": "vt_s"}]}),
    );
    assert_eq!(
        canon(&payload(&e)),
        r#"{"cursor":null,"rows":[{"count":0,"max_gap":null,"max_in_window":0,"mean_vt_s":null}],"rows_total":1,"set_digest":"37517e5f3dc66819f61f5a7bb8ace1921282415f10551d2defa5c3eb0985b570","truncated":false}"#
    );
}
