//! The executor (`plans-and-claims.md` §6): Kahn-wave order (D-E1), taint along the refs
//! actually read (D-E2), E_UPSTREAM, ref errors, evidence descriptors, the content-addressed
//! stores, determinism and pinned results; TV13 when its operators are registered.

mod common;
use common::*;
use serde_json::json;
use tgms_verifier::exec::{execute, record, ExecOptions, ResultStore};
use tgms_verifier::plan::{Plan, Step};

fn order(t: &serde_json::Value) -> Vec<String> {
    t["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["step_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn kahn_waves_in_plan_order() {
    let (_d, s) = tv8();
    let eh = json!({"uid": "a"});
    let p = plan(
        &[
            ("s1", "entity_history", eh.clone(), &[]),
            ("s2", "entity_history", eh.clone(), &["s1"]),
            ("s3", "entity_history", eh.clone(), &["s2"]),
            ("s4", "entity_history", eh.clone(), &["s3"]),
            ("s5", "entity_history", eh.clone(), &[]),
        ],
        "count",
        "s4.rows_total",
    );
    let t = run(&s, &p, &ResultStore::memory()).trace;
    assert_eq!(order(&t), ["s1", "s5", "s2", "s3", "s4"]);
    assert_eq!(t["ok"], true);
    // A dependency listed after its dependent.
    let p = plan(
        &[
            ("s1", "entity_history", eh.clone(), &["s3"]),
            ("s2", "entity_history", eh.clone(), &[]),
            ("s3", "entity_history", eh.clone(), &["s2"]),
        ],
        "count",
        "s1.rows_total",
    );
    assert_eq!(
        order(&run(&s, &p, &ResultStore::memory()).trace),
        ["s2", "s3", "s1"]
    );
}

#[test]
fn taint_follows_the_refs_actually_read() {
    let (_d, s) = tv8();
    let p = plan(
        &[
            (
                "s1",
                "snapshot_subgraph",
                json!({"seeds": ["a"], "hops": 1, "t_valid": 30, "limit": 1}),
                &[],
            ),
            (
                "s2",
                "entity_history",
                json!({"uid": {"$ref": "s1.nodes[0].uid"}}),
                &["s1"],
            ),
            (
                "s3",
                "diff_snapshots",
                json!({"t1": {"$ref": "s1.nodes_total"}, "t2": 50}),
                &["s1"],
            ),
            (
                "s4",
                "entity_history",
                json!({"uid": {"$ref": "s2.rows[0].uid"}}),
                &["s2"],
            ),
            ("s5", "entity_history", json!({"uid": "b"}), &["s1"]),
        ],
        "count",
        "s1.nodes_total",
    );
    let t = run(&s, &p, &ResultStore::memory()).trace;
    let r = |id: &str| record(&t, id).unwrap().clone();
    assert_eq!(r("s1")["truncated"], true);
    assert_eq!(r("s1")["upstream_truncated"], false);
    assert_eq!(r("s1")["evidence"]["lists"]["nodes"]["returned"], 1);
    assert_eq!(r("s1")["evidence"]["lists"]["nodes"]["total"], 3);
    assert_eq!(r("s1")["evidence"]["complete"], false);
    // Reads an incomplete capped list: tainted, with the cut recorded.
    assert_eq!(r("s2")["upstream_truncated"], true);
    assert_eq!(
        r("s2")["ref_truncations"],
        json!([{"ref": "s1.nodes[0].uid", "from": 3, "to": 1, "reason": "incomplete_source"}])
    );
    assert_eq!(r("s2")["evidence"]["complete"], false);
    // Reads an exact total of a truncated step: not tainted (D-E2).
    assert_eq!(r("s3")["status"], "ok");
    assert_eq!(r("s3")["upstream_truncated"], false);
    assert!(r("s3").get("ref_truncations").is_none());
    // Anything read from a tainted step taints.
    assert_eq!(r("s4")["upstream_truncated"], true);
    assert_eq!(r("s4")["ref_truncations"][0]["reason"], "incomplete_source");
    // Merely depending on a truncated step does not taint (TGMS would).
    assert_eq!(r("s5")["upstream_truncated"], false);
    assert_eq!(t["answer"], 3);
    assert_eq!(t["answer_complete"], true);
    assert_eq!(t["ok"], true);
    // The same list as the answer is not complete.
    let mut p2 = p.clone();
    p2["answer_spec"]["from"] = json!("s1.nodes");
    let t2 = run(&s, &p2, &ResultStore::memory()).trace;
    assert_eq!(t2["answer_complete"], false);
    // A bare step id answers with the envelope minus op/args_echo/dataset_extent.
    p2["answer_spec"]["from"] = json!("s3");
    let t3 = run(&s, &p2, &ResultStore::memory()).trace;
    assert!(t3["answer"].get("result_digest").is_some());
    assert!(t3["answer"].get("args_echo").is_none());
    assert_eq!(t3["answer"]["truncated"], false);
}

#[test]
fn failures_skip_dependents_with_e_upstream_and_independent_branches_run() {
    let (_d, s) = tv8();
    let p = plan(
        &[
            ("s1", "entity_history", json!({"uid": "nope"}), &[]),
            (
                "s2",
                "entity_history",
                json!({"uid": {"$ref": "s1.rows[0].uid"}}),
                &["s1"],
            ),
            ("s3", "entity_history", json!({"uid": "a"}), &[]),
            (
                "s4",
                "entity_history",
                json!({"uid": {"$ref": "s3.rows[9].uid"}}),
                &["s3"],
            ),
            (
                "s5",
                "entity_history",
                json!({"uid": {"$ref": "s3.rows[0].uid"}}),
                &["s3"],
            ),
        ],
        "count",
        "s2.rows_total",
    );
    let t = run(&s, &p, &ResultStore::memory()).trace;
    let r = |id: &str| record(&t, id).unwrap().clone();
    assert_eq!(r("s1")["status"], "failed");
    assert_eq!(r("s1")["error"]["error"], "E_NOT_FOUND");
    assert_eq!(r("s2")["status"], "skipped");
    assert_eq!(
        r("s2")["error"],
        json!({"error": "E_UPSTREAM", "message": "a dependency failed", "details": {}})
    );
    assert_eq!(
        r("s2").as_object().unwrap().len(),
        4,
        "a skipped step has step_id, op, status, error"
    );
    assert_eq!(r("s3")["status"], "ok");
    assert_eq!(r("s4")["status"], "failed");
    assert_eq!(
        r("s4")["error"]["message"],
        "$ref 's3.rows[9].uid': index 9 out of range for 'rows' (length 1)"
    );
    assert_eq!(r("s5")["status"], "ok");
    assert_eq!(t["ok"], false);
    assert_eq!(t["answer"], serde_json::Value::Null);
    assert_eq!(t["answer_error"], "answer source step s2 did not complete");
}

#[test]
fn plans_over_twelve_steps_are_refused_without_trace() {
    let (_d, s) = tv8();
    let step = |i: usize| Step {
        id: format!("s{i}"),
        op: "entity_history".into(),
        args: json!({"uid": "a"}),
        depends_on: vec![],
    };
    let plan = Plan {
        plan_id: "p".into(),
        question: None,
        steps: (1..=13).map(step).collect(),
        answer_kind: "count".into(),
        answer_from: "s1".into(),
        raw: json!({}),
    };
    let e = execute(
        &plan,
        s.snapshot(),
        &ResultStore::memory(),
        &ExecOptions::default(),
    )
    .err()
    .unwrap();
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        ("E_LIMIT", "plan exceeds 12 steps")
    );
}

#[test]
fn evidence_descriptor_and_record_fields() {
    let (_d, s) = tv8();
    let p = plan(
        &[(
            "s1",
            "entity_history",
            json!({"uid": "a", "as_of_tt": 2}),
            &[],
        )],
        "count",
        "s1.rows_total",
    );
    let t = run(&s, &p, &ResultStore::memory()).trace;
    let r = record(&t, "s1").unwrap();
    let ev = &r["evidence"];
    for k in [
        "op",
        "result_digest",
        "resolved_args_digest",
        "as_of_tt",
        "truncated",
        "upstream_truncated",
        "approximate",
        "lists",
        "complete",
    ] {
        assert!(ev.get(k).is_some(), "{k}");
    }
    assert_eq!(ev["as_of_tt"], 2);
    assert_eq!(ev["result_digest"], r["result_digest"]);
    assert_eq!(
        r["resolved_args_sha"].as_str().unwrap(),
        &r["resolved_args_digest"].as_str().unwrap()[..16]
    );
    assert_eq!(
        r["resolved_args_digest"],
        tgms_engine::canon::digest(&json!({"uid": "a", "as_of_tt": 2}))
    );
    assert!(r["wall_ms"].is_number());
    assert_eq!(r["rows_returned"], 1);
    assert_eq!(t["store"]["extent"], json!({"vt_min": 0, "vt_max": 100}));
    assert_eq!(t["store"]["n_batches"], 3);
}

#[test]
fn rerun_reproduces_digests_and_trace_id_and_stores_are_content_addressed() {
    let (d, s) = tv8();
    let p = plan(
        &[
            (
                "s1",
                "snapshot_subgraph",
                json!({"seeds": ["a"], "hops": 1, "t_valid": 30, "limit": 1}),
                &[],
            ),
            (
                "s2",
                "entity_history",
                json!({"uid": {"$ref": "s1.nodes[0].uid"}}),
                &["s1"],
            ),
        ],
        "count",
        "s2.rows_total",
    );
    let rs1 = ResultStore::in_dir(&d.path().join("s"));
    let t1 = run(&s, &p, &rs1).trace;
    let t2 = run(&s, &p, &ResultStore::memory()).trace;
    assert_eq!(t1["trace_id"], t2["trace_id"]);
    assert_eq!(order(&t1), order(&t2));
    for id in ["s1", "s2"] {
        assert_eq!(
            record(&t1, id).unwrap()["result_digest"],
            record(&t2, id).unwrap()["result_digest"]
        );
    }
    let dig = record(&t1, "s1").unwrap()["result_digest"]
        .as_str()
        .unwrap()
        .to_string();
    let on_disk = d.path().join("s").join("results").join(&dig);
    assert!(on_disk.exists());
    let env = tgms_engine::canon::parse(&std::fs::read_to_string(&on_disk).unwrap()).unwrap();
    assert_eq!(
        tgms_engine::canon::digest(&tgms_operators::pipeline::payload_of(&env)),
        dig
    );
    let tid = t1["trace_id"].as_str().unwrap();
    assert_eq!(
        ResultStore::in_dir(&d.path().join("s")).trace(tid).unwrap(),
        t1
    );
    let rad = record(&t1, "s2").unwrap()["resolved_args_digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        ResultStore::in_dir(&d.path().join("s")).args(&rad).unwrap(),
        json!({"uid": "a"})
    );
    // The store still opens with the result stores inside its directory.
    drop(s);
    tgms_engine::Store::open_read_only(&d.path().join("s")).unwrap();
}

#[test]
fn pinned_results_keep_their_digests_after_corrections() {
    let (d, mut s) = tv2_asserted();
    let p = plan(
        &[
            (
                "s1",
                "entity_history",
                json!({"uid": "a", "as_of_tt": 1}),
                &[],
            ),
            ("s2", "entity_history", json!({"uid": "a"}), &[]),
        ],
        "count",
        "s1.rows_total",
    );
    let rs = ResultStore::in_dir(&d.path().join("s"));
    let before = run(&s, &p, &rs).trace;
    correct_tv2(&mut s);
    let after = run(&s, &p, &rs).trace;
    let dg = |t: &serde_json::Value, id: &str| record(t, id).unwrap()["result_digest"].clone();
    assert_eq!(dg(&before, "s1"), dg(&after, "s1"));
    assert_ne!(dg(&before, "s2"), dg(&after, "s2"));
    assert!(
        rs.envelope(dg(&before, "s2").as_str().unwrap()).is_some(),
        "stored envelopes are immutable and kept"
    );
}

#[test]
fn tv13_executor() {
    let (_d, s) = tv9();
    let p = tv13_plan();
    let t = run_with(&s, &p, &ResultStore::memory(), &pages_only()).trace;
    assert_eq!(order(&t), ["s1", "s5", "s2", "s3", "s4"]);
    let r = |id: &str| record(&t, id).unwrap().clone();
    assert_eq!(
        r("s1")["result_digest"],
        "842cf8f828ffa43b3db758ad3550b5c0c04d7a27239e7744b67356515d0deda9"
    );
    assert_eq!(r("s1")["resolved_args_sha"], "67478f6d095c4a6e");
    assert_eq!(
        r("s2")["result_digest"],
        "faed39944aaedc1bf42f8a06cf9886147b70a6a80324f65545f4ad164a600b86"
    );
    assert_eq!(r("s3")["upstream_truncated"], true);
    assert_eq!(
        r("s3")["ref_truncations"],
        json!([{"ref":"s2.rows","from":2,"to":1,"reason":"incomplete_source"}])
    );
    assert_eq!(
        r("s3")["result_digest"],
        "c521c4d1ff510d30bb4e36a2fa7a21e46c884759550618b3e579e373d5298637"
    );
    assert_eq!(r("s4")["status"], "failed");
    assert!(r("s4")["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("compute count would reduce a truncated result to one number; "));
    assert_eq!(t["answer"], 2);
    assert_eq!(t["answer_complete"], true);
    assert_eq!(t["ok"], false);
}

#[test]
fn tv14_materialized_rows_limit_keeps_the_output() {
    let (_d, mut s) = new_store();
    let evs: Vec<serde_json::Value> = (0..50_500)
        .map(|i| json!({"src": "s", "dst": format!("d_{i}"), "rel_type": "M", "vt_s": 10 + i}))
        .collect();
    // Two ops: one `ingest_events` op holds at most 50,000 events (format-spec §12); the
    // second continues the first's ordinals, so the rows are those of one op.
    let (a, b) = evs.split_at(25_250);
    s.write_at(
        1,
        ops(vec![
            json!({"op": "ingest_events", "events": a}),
            json!({"op": "ingest_events", "events": b}),
        ]),
    )
    .unwrap();
    let p = plan(
        &[
            ("s1", "version_history", json!({}), &[]),
            ("s2", "entity_history", json!({"uid": "s"}), &["s1"]),
        ],
        "count",
        "s1.rows_total",
    );
    // TV14 is written against the spec's 50,000-row limit; the executor's default is now the
    // row budget (`max_total_rows`), so the vector sets the old limit through the ceilings.
    let tv14 = ExecOptions {
        call: tgms_operators::CallOptions {
            ceilings: tgms_operators::Ceilings::from_json(&json!({"max_total_rows": 50_000}))
                .unwrap(),
            ..Default::default()
        },
        ..ExecOptions::default()
    };
    let t = run_with(&s, &p, &ResultStore::memory(), &tv14).trace;
    let r = record(&t, "s1").unwrap();
    let n = r["rows_returned"].as_i64().unwrap();
    assert!(n > 50_000);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["truncated"], true);
    assert_eq!(
        r["error"]["message"],
        format!("materialized rows {n} > 50000")
    );
    assert_eq!(record(&t, "s2").unwrap()["status"], "skipped");
    assert_eq!(t["answer"], n);
    assert_eq!(t["ok"], false);
    // Under the default row budget the same plan runs.
    let t = run(&s, &p, &ResultStore::memory()).trace;
    assert_eq!(record(&t, "s1").unwrap()["status"], "ok");
    assert_eq!(record(&t, "s2").unwrap()["status"], "ok");
    assert_eq!(t["answer"], n);
}
