//! Plan-language friction of issue 21 item 7 at the verifier and executor: args beside refs
//! are schema-checked statically, whole-ref args are checked through the declared output
//! type, `depends_on` is inferred from refs (an explicit list gives the same run), and scalar
//! arithmetic over refs runs in a plan.

mod common;
use common::*;
use serde_json::json;
use tgms_verifier::exec::{record, ResultStore};

fn step_msgs(p: &serde_json::Value) -> Vec<String> {
    check(None, p, None)
        .violations
        .iter()
        .map(|v| v.message.clone())
        .collect()
}

#[test]
fn args_beside_refs_and_whole_refs_are_checked_statically() {
    let p = plan(
        &[
            ("s1", "resolve_entities", json!({"query": "a"}), &[]),
            (
                "s2",
                "compute",
                json!({"fn": "topk", "input": {"$ref": "s1.rows"}, "field": "match", "k": 1150}),
                &[],
            ),
        ],
        "entity_set",
        "s2.rows",
    );
    let r = check(None, &p, None);
    assert_eq!(r.violations.len(), 1, "{:?}", r.violations);
    let v = &r.violations[0];
    assert_eq!(v.code, "E_SCHEMA");
    assert_eq!(v.step_id.as_deref(), Some("s2"));
    assert_eq!(
        v.message,
        "invalid args for compute: 1150 is greater than the maximum of 1000"
    );
    assert_eq!(v.details.as_ref().unwrap()["path"], json!(["k"]));
    assert_eq!(
        v.details.as_ref().unwrap()["repair"]["schema"]["maximum"],
        1000
    );
    // A whole ref whose declared type cannot fit the argument's type.
    let p = plan(
        &[
            ("s1", "resolve_entities", json!({"query": "a"}), &[]),
            (
                "s2",
                "compute",
                json!({"fn": "ratio", "x": {"$ref": "s1.rows"}, "y": {"$ref": "s1.rows_total"}}),
                &[],
            ),
            (
                "s3",
                "entity_history",
                json!({"uid": {"$ref": "s1.rows_total"}}),
                &[],
            ),
        ],
        "value",
        "s2.value",
    );
    assert_eq!(
        step_msgs(&p),
        [
            "invalid args for compute: $ref 's1.rows' yields a list but 'x' takes number or null",
            "invalid args for entity_history: $ref 's1.rows_total' yields an int but 'uid' takes string"
        ]
    );
    // Types that fit pass: an int where a number is taken, a projected list where a list is
    // taken, a row field of an open row (`any`), a uid where a string is taken.
    let p = plan(
        &[
            ("s1", "resolve_entities", json!({"query": "a"}), &[]),
            (
                "s2",
                "compute",
                json!({"fn": "ratio", "x": {"$ref": "s1.rows_total"}, "y": {"$ref": "s1.rows_total"}}),
                &[],
            ),
            (
                "s3",
                "snapshot_subgraph",
                json!({"seeds": {"$ref": "s1.rows[*].uid"}, "t_valid": 5}),
                &[],
            ),
            (
                "s4",
                "entity_history",
                json!({"uid": {"$ref": "s1.rows[0].uid"}}),
                &[],
            ),
        ],
        "value",
        "s2.value",
    );
    assert!(step_msgs(&p).is_empty(), "{:?}", step_msgs(&p));
}

#[test]
fn inferred_dependencies_run_like_explicit_ones() {
    let (_d, s) = tv9();
    let steps = |deps: bool| {
        let d: &[&str] = if deps { &["s1"] } else { &[] };
        let d2: &[&str] = if deps { &["s2"] } else { &[] };
        plan(
            &[
                ("s1", "resolve_entities", json!({"query": "a"}), &[]),
                (
                    "s2",
                    "temporal_reachability",
                    json!({"src": {"$ref": "s1.rows[0].uid"}, "window": {"t_a": 0, "t_b": 100}}),
                    d,
                ),
                (
                    "s3",
                    "compute",
                    json!({"fn": "count", "input": {"$ref": "s2.rows"}}),
                    d2,
                ),
            ],
            "count",
            "s3.value",
        )
    };
    let a = run(&s, &steps(true), &ResultStore::memory()).trace;
    let b = run(&s, &steps(false), &ResultStore::memory()).trace;
    assert!(check(Some(&s), &steps(false), None).valid());
    assert_eq!(a["ok"], true);
    assert_eq!(a["answer"], b["answer"]);
    for id in ["s1", "s2", "s3"] {
        assert_eq!(
            record(&a, id).unwrap()["result_digest"],
            record(&b, id).unwrap()["result_digest"]
        );
    }
}

#[test]
fn scalar_arithmetic_over_refs_in_a_plan() {
    // TV9's store: reachability from a over [0, 100) and within [0, 20).
    let (_d, s) = tv9();
    let reach = |tb: i64| json!({"src": "a", "window": {"t_a": 0, "t_b": tb}, "limit": 1});
    let p = plan(
        &[
            ("s1", "temporal_reachability", reach(100), &[]),
            ("s2", "temporal_reachability", reach(20), &[]),
            (
                "s3",
                "compute",
                json!({"fn": "sub", "x": {"$ref": "s2.rows_total"}, "y": {"$ref": "s1.rows_total"}}),
                &[],
            ),
            (
                "s4",
                "compute",
                json!({"fn": "abs", "x": {"$ref": "s3.value"}}),
                &[],
            ),
        ],
        "value",
        "s4.value",
    );
    assert!(check(Some(&s), &p, None).valid());
    let t = run(&s, &p, &ResultStore::memory()).trace;
    assert_eq!(t["ok"], true, "{t:#}");
    let total = |tb: i64| call_rows_total(&s, reach(tb));
    assert_eq!(t["answer"], (total(20) - total(100)).abs());
    assert_eq!(t["answer_complete"], true);
}

fn call_rows_total(s: &tgms_engine::Store, args: serde_json::Value) -> i64 {
    tgms_operators::call_operator(
        s.snapshot(),
        "temporal_reachability",
        &args,
        &Default::default(),
    )
    .unwrap()["rows_total"]
        .as_i64()
        .unwrap()
}
