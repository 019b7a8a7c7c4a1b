//! Shared fixtures of the verifier tests: the reference stores and run helpers.
#![allow(dead_code)]

#[path = "../../../operators/tests/common/stores.rs"]
mod stores;
pub use stores::*;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms_engine::Store;
use tgms_verifier::claims::{self, Ctx};
use tgms_verifier::exec::{execute, ExecOptions, Execution, ResultStore};
use tgms_verifier::plan::Plan;
use tgms_verifier::validate::{validate_static, Options as VOptions, Report};

/// A plan from (id, op, args, deps) tuples.
pub fn plan(steps: &[(&str, &str, Value, &[&str])], kind: &str, from: &str) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(id, op, args, deps)| json!({"id": id, "op": op, "args": args, "depends_on": deps}))
        .collect();
    json!({"plan_id": "p", "steps": steps, "answer_spec": {"kind": kind, "from": from}})
}

pub fn check(s: Option<&Store>, p: &Value, uids: Option<&[&str]>) -> Report {
    let set: Option<BTreeSet<String>> = uids.map(|u| u.iter().map(|x| x.to_string()).collect());
    validate_static(
        p,
        &VOptions {
            stats: s.map(|s| s.stats()),
            task_input_uids: set.as_ref(),
            ..VOptions::default()
        },
    )
}

/// (code, step_id, message) of each violation.
pub fn triples(r: &Report) -> Vec<(String, Option<String>, String)> {
    r.violations
        .iter()
        .map(|v| (v.code.to_string(), v.step_id.clone(), v.message.clone()))
        .collect()
}

pub fn run(s: &Store, p: &Value, rs: &ResultStore) -> Execution {
    run_with(s, p, rs, &ExecOptions::default())
}

/// The executor options of the spec's TGMS behavior (a compute step reads pages only), for
/// the test vectors written against it (TV13, TV14).
pub fn pages_only() -> ExecOptions {
    ExecOptions {
        read_complete_results: false,
        ..ExecOptions::default()
    }
}

pub fn run_with(s: &Store, p: &Value, rs: &ResultStore, o: &ExecOptions) -> Execution {
    let plan = Plan::from_json(p).expect("plan schema");
    execute(&plan, s.snapshot(), rs, o).expect("executes")
}

pub fn verify(s: &Store, trace: &Value, rs: &ResultStore, ans: &Value) -> Value {
    let ctx = Ctx {
        trace,
        results: rs,
        snap: Some(s.snapshot()),
        honor_truncation: true,
    };
    claims::verify(&ctx, ans)
}

/// The verdicts of an answer's claims by id.
pub fn verdicts(out: &Value) -> Vec<(String, String)> {
    out["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn answer(claims: Vec<Value>) -> Value {
    json!({"text": "x", "claims": claims})
}

/// The TV13 plan (test-vectors.md): resolve → reachability → filter → count, and a motif
/// count answering `s5.count`.
pub fn tv13_plan() -> Value {
    plan(
        &[
            ("s1", "resolve_entities", json!({"query": "a"}), &[]),
            (
                "s2",
                "temporal_reachability",
                json!({"src": {"$ref": "s1.rows[0].uid"}, "window": {"t_a": 0, "t_b": 100}, "limit": 1}),
                &["s1"],
            ),
            (
                "s3",
                "compute",
                json!({"fn": "filter", "input": {"$ref": "s2.rows"}, "field": "uid", "cmp": "not_null"}),
                &["s2"],
            ),
            (
                "s4",
                "compute",
                json!({"fn": "count", "input": {"$ref": "s3.rows"}}),
                &["s3"],
            ),
            (
                "s5",
                "count_temporal_motifs",
                json!({"motif": "M_triangle_cyclic", "delta": 20, "window": {"t_a": 0, "t_b": 100}}),
                &[],
            ),
        ],
        "count",
        "s5.count",
    )
}
