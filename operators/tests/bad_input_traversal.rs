//! Bad input for the traversal and pattern operators: exact spec errors (schema messages,
//! validators, unknown uids, sample-mode refusal, budgets) and a fuzz of mutated arguments
//! that must always end in a spec error code or an envelope — never a panic (`E_INTERNAL`).

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_testkit::Rng;

fn expect(s: &tgms_engine::Store, op: &str, args: Value, code: &str, msg: &str) -> Value {
    let got = call(s, op, args.clone());
    assert_eq!(got["error"], code, "{op} {args} → {got}");
    assert_eq!(got["message"], msg, "{op} {args} → {got}");
    assert!(got["details"].is_object());
    got
}

#[test]
fn spec_errors() {
    let (_d, s) = tv9();
    let w = json!({"t_a": 0, "t_b": 100});
    let bad_w = json!({"t_a": 5, "t_b": 5});
    let wmsg = "window requires t_a < t_b, got [5, 5)";
    let inv = "E_INVALID_ARG";
    expect(
        &s,
        "temporal_reachability",
        json!({"src": "a", "window": bad_w}),
        inv,
        wmsg,
    );
    expect(
        &s,
        "temporal_paths",
        json!({"src": "a", "dst": "b", "window": bad_w}),
        inv,
        wmsg,
    );
    for op in ["count_temporal_motifs", "find_temporal_motif_instances"] {
        expect(
            &s,
            op,
            json!({"motif": "M_1_1", "delta": 3, "window": bad_w}),
            inv,
            wmsg,
        );
        // Kernel order (§14.3): the instance finder refuses sample mode first, then the
        // filter; the count resolves the filter in sample mode too.
        let (code, msg) = if op == "find_temporal_motif_instances" {
            (
                inv,
                "mode='sample' is only available for count_temporal_motifs",
            )
        } else {
            ("E_NOT_FOUND", "unknown uid: zz")
        };
        expect(
            &s,
            op,
            json!({"motif": "M_1_1", "delta": 3, "window": w, "mode": "sample", "node_filter": ["zz"]}),
            code,
            msg,
        );
        // The first unknown uid in code-point order.
        let e = expect(
            &s,
            op,
            json!({"motif": "M_path_3", "delta": 3, "window": w, "node_filter": ["zz", "a", "yy", "é"]}),
            "E_NOT_FOUND",
            "unknown uid: yy",
        );
        assert_eq!(e["details"], json!({"uid": "yy"}));
        // D-O9: motif, delta and window are required.
        expect(
            &s,
            op,
            json!({"delta": 3, "window": w}),
            "E_SCHEMA",
            &format!("invalid args for {op}: 'motif' is a required property"),
        );
        expect(
            &s,
            op,
            json!({"motif": "M_1_1", "delta": 0, "window": w}),
            "E_SCHEMA",
            &format!("invalid args for {op}: 0 is less than the minimum of 1"),
        );
    }
    let e = call(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "all", "delta": 3, "window": w}),
    );
    assert_eq!(e["error"], "E_SCHEMA");
    assert_eq!(e["details"]["path"], json!(["motif"]));
    expect(
        &s,
        "temporal_paths",
        json!({"src": "a", "dst": "b", "window": w, "max_hops": 7}),
        "E_SCHEMA",
        "invalid args for temporal_paths: 7 is greater than the maximum of 6",
    );
    expect(
        &s,
        "temporal_paths",
        json!({"src": "a", "dst": "nobody", "window": w}),
        "E_NOT_FOUND",
        "unknown uid: nobody",
    );
    expect(
        &s,
        "temporal_reachability",
        json!({"src": "nobody", "window": w}),
        "E_NOT_FOUND",
        "unknown uid: nobody",
    );
    expect(
        &s,
        "temporal_reachability",
        json!({"src": "a", "window": w, "delta_max_wait": 0}),
        "E_SCHEMA",
        "invalid args for temporal_reachability: 0 is less than the minimum of 1",
    );
    expect(
        &s,
        "temporal_reachability",
        json!({"src": "a", "window": w, "cursor": "x"}),
        inv,
        "bad cursor: 'x'",
    );
    expect(
        &s,
        "co_active",
        json!({"a_spec": {"dst": "nobody"}, "b_spec": {}, "allen_relation": {"relation": "meets"}}),
        "E_NOT_FOUND",
        "unknown uid: nobody",
    );
    expect(
        &s,
        "co_active",
        json!({"a_spec": {}, "b_spec": {}, "allen_relation": {"relation": "before", "gap": null}}),
        inv,
        "allen_relation 'before' requires gap",
    );
    expect(
        &s,
        "co_active",
        json!({"a_spec": {"x": 1}, "b_spec": {}, "allen_relation": {"relation": "meets"}}),
        "E_SCHEMA",
        "invalid args for co_active: Additional properties are not allowed ('x' was unexpected)",
    );
    expect(
        &s,
        "weighted_traverse",
        json!({"seed": "nobody", "t": 1}),
        "E_NOT_FOUND",
        "unknown uid: nobody",
    );
    expect(
        &s,
        "weighted_traverse",
        json!({"seed": "a", "t": 1, "multipliers": {"causal": -1}}),
        "E_SCHEMA",
        "invalid args for weighted_traverse: -1 is less than the minimum of 0",
    );
    expect(
        &s,
        "weighted_traverse",
        json!({"seed": "a", "t": 1, "max_depth": 4}),
        "E_SCHEMA",
        "invalid args for weighted_traverse: 4 is greater than the maximum of 3",
    );
}

/// A complete digraph on 12 nodes with 4 parallel interval edges per pair: path enumeration
/// and the capped reachability search cross their 500,000-unit budgets; weighted_traverse
/// with every link usable crosses its budget in direction both.
#[test]
fn runtime_budgets_report_budget_plus_one() {
    let (_d, mut s) = new_store();
    let mut events = Vec::new();
    for i in 0..12 {
        for j in 0..12 {
            if i != j {
                for k in 0..4 {
                    events.push(
                        json!({"src": format!("v{i}"), "dst": format!("v{j}"), "rel_type": "R",
                        "vt_s": k * 10, "vt_e": 1000 + k, "props": {"link_type": "causal"}}),
                    );
                }
            }
        }
    }
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    let w = json!({"t_a": 0, "t_b": 2000});
    let check = |op: &str, args: Value, sugg: Value| {
        let e = call(&s, op, args.clone());
        assert_eq!(e["error"], "E_COST", "{op} {args} → {e}");
        assert_eq!(
            e["details"],
            json!({"estimate": {"expansions_est": 500001}, "suggestions": sugg}),
            "{op}"
        );
    };
    check(
        "temporal_paths",
        json!({"src": "v0", "dst": "v1", "window": w, "max_hops": 4}),
        json!(["narrow the window", "reduce max_hops"]),
    );
    check(
        "weighted_traverse",
        json!({"seed": "v0", "t": 500, "direction": "both"}),
        json!([
            "reduce max_depth",
            "restrict rel_types",
            "use direction out or in"
        ]),
    );
    let ok = call(
        &s,
        "weighted_traverse",
        json!({"seed": "v0", "t": 500, "max_depth": 2}),
    );
    assert_eq!(ok["rows_total"], 11, "{ok}");
}

fn mutate(r: &mut Rng) -> Value {
    let n = (r.next_u64() >> 33) as i64;
    match n % 12 {
        0 => Value::Null,
        1 => json!(n % 2 == 0),
        2 => json!(n % 120 - 10),
        3 => json!((n % 1000) as f64 / 7.0),
        4 => json!(
            ["a", "b", "", "zz", "all", "out", "in", "both", "sample", "strict"][(n % 10) as usize]
        ),
        5 => json!(4611686018427387904i64 - n % 3),
        6 => json!({"t_a": n % 50, "t_b": n % 70}),
        7 => json!({"t_a": 0, "t_b": 4611686018427387904i64}),
        8 => json!(["a", "b", "c"]),
        9 => {
            let rel = ["overlaps", "during", "before", "meets"][(n % 4) as usize];
            json!({"relation": rel, "gap": n % 3})
        }
        10 => json!({"src": "a", "dst": null, "rel_type": ""}),
        _ => json!({"causal": (n % 5) as f64 / 2.0, "entity": 0}),
    }
}

#[test]
fn mutated_arguments_never_panic() {
    let (_d, s) = tv9();
    let w = json!({"t_a": 0, "t_b": 100});
    let base = [
        ("temporal_reachability", json!({"src": "a", "window": w})),
        (
            "temporal_paths",
            json!({"src": "a", "dst": "c", "window": w}),
        ),
        (
            "count_temporal_motifs",
            json!({"motif": "all", "delta": 20, "window": w}),
        ),
        (
            "find_temporal_motif_instances",
            json!({"motif": "M_2_4", "delta": 20, "window": w}),
        ),
        (
            "co_active",
            json!({"a_spec": {}, "b_spec": {}, "allen_relation": {"relation": "meets"}}),
        ),
        ("weighted_traverse", json!({"seed": "a", "t": 40})),
    ];
    let codes = [
        "E_SCHEMA",
        "E_INVALID_ARG",
        "E_NOT_FOUND",
        "E_COST",
        "E_LIMIT",
    ];
    let mut r = Rng::new(7);
    let mut answered = 0;
    for i in 0..3000 {
        let (op, b) = &base[i % base.len()];
        let spec = tgms_operators::lookup(op).unwrap();
        let mut args = b.clone();
        for a in &spec.args {
            if r.below(16) < 3 {
                args[a.name] = mutate(&mut r);
            }
        }
        let got = call(&s, op, args.clone());
        match got.get("error") {
            Some(c) => assert!(codes.contains(&c.as_str().unwrap()), "{op} {args} → {got}"),
            None => {
                answered += 1;
                assert_eq!(got["result_digest"].as_str().unwrap().len(), 64);
            }
        }
    }
    assert!(answered >= 300, "only {answered} answered");
}
