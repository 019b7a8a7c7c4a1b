//! The claim verifier (`plans-and-claims.md` §7–§10): every claim type with supported /
//! weakly supported / unsupported / unverifiable cases, capping and its ablation,
//! completeness certificates (D-V5), the typed answer, gating (D-V6), metrics (D-A2) and the
//! mechanical reporter (D-A1, TV22 shapes on the registered operators).

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_verifier::claims::{self, gate, mechanical_answer, prose_numbers, Ctx};
use tgms_verifier::exec::{record, ResultStore};

/// TV8 trace: s1 truncated snapshot (limit 1), s2 entity_history a, s3 complete snapshot,
/// s4 a failed step.
fn fixture() -> (tempfile::TempDir, tgms_engine::Store, ResultStore, Value) {
    let (d, s) = tv8();
    let p = plan(
        &[
            (
                "s1",
                "snapshot_subgraph",
                json!({"seeds": ["a"], "hops": 1, "t_valid": 30, "limit": 1}),
                &[],
            ),
            ("s2", "entity_history", json!({"uid": "a"}), &[]),
            (
                "s3",
                "snapshot_subgraph",
                json!({"seeds": ["a"], "hops": 1, "t_valid": 30}),
                &[],
            ),
            ("s4", "entity_history", json!({"uid": "nope"}), &[]),
        ],
        "count",
        "s3.rows_total",
    );
    let rs = ResultStore::memory();
    let t = run(&s, &p, &rs).trace;
    (d, s, rs, t)
}

fn verdict_of(s: &tgms_engine::Store, t: &Value, rs: &ResultStore, c: Value) -> (String, String) {
    let out = verify(s, t, rs, &answer(vec![c]));
    let c = &out["claims"][0];
    (
        c["verdict"].as_str().unwrap().into(),
        c["reason"].as_str().unwrap().into(),
    )
}

#[test]
fn count_and_value_claims() {
    let (_d, s, rs, t) = fixture();
    let v = |c: Value| verdict_of(&s, &t, &rs, c).0;
    assert_eq!(
        v(
            json!({"id": "c", "type": "count", "value": 3, "from": "s3.rows_total", "evidence": ["s3"]})
        ),
        "supported"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "count", "value": 3, "evidence": ["s3"]})),
        "supported"
    );
    assert_eq!(
        v(
            json!({"id": "c", "type": "value", "value": 3.0000000001, "from": "s3.rows_total", "evidence": ["s3"]})
        ),
        "supported"
    );
    assert_eq!(
        v(
            json!({"id": "c", "type": "value", "value": "a", "from": "s3.nodes[0].uid", "evidence": ["s3"]})
        ),
        "supported"
    );
    // Integers compare exactly, also where binary64 cannot tell them apart: the open end of
    // transaction time (2^62) is not 2^62 − 1 (a count_pm1 mutant the f64 reading missed).
    let open_end = 1i64 << 62;
    assert_eq!(
        t["steps"][1]["result_digest"]
            .as_str()
            .and_then(|d| rs.envelope(d))
            .map(|e| e["rows"][0]["tt_e"].clone()),
        Some(json!(open_end))
    );
    for (value, want) in [
        (open_end, "supported"),
        (open_end - 1, "unsupported"),
        (open_end + 1, "unsupported"),
    ] {
        assert_eq!(
            v(
                json!({"id": "c", "type": "value", "value": value, "from": "s2.rows[0].tt_e", "evidence": ["s2"]})
            ),
            want,
            "{value}"
        );
    }
    // An exact total of a page-truncated step is not capped (TV13 c13).
    assert_eq!(
        v(
            json!({"id": "c", "type": "count", "value": 3, "from": "s1.rows_total", "evidence": ["s1"]})
        ),
        "supported"
    );
    // Reading the truncated list itself, or citing it without from, is capped.
    let (w, reason) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "value", "value": "a", "from": "s1.nodes[0].uid", "evidence": ["s1"]}),
    );
    assert_eq!(w, "weakly_supported");
    assert!(reason.ends_with(" (evidence incomplete)"));
    assert_eq!(
        v(json!({"id": "c", "type": "count", "value": 3, "evidence": ["s1"]})),
        "weakly_supported"
    );
    // Unsupported: the classic count ±1 and a unit confusion.
    assert_eq!(
        v(
            json!({"id": "c", "type": "count", "value": 4, "from": "s3.rows_total", "evidence": ["s3"]})
        ),
        "unsupported"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "count", "value": 2, "evidence": ["s3"]})),
        "unsupported"
    );
    // Unverifiable.
    let (u, r) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "count", "value": 3, "from": "s3.rows_total", "evidence": ["s2"]}),
    );
    assert_eq!(
        (u.as_str(), r.as_str()),
        ("unverifiable", "provenance pointer names an uncited step")
    );
    let (u, r) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "count", "value": 1, "evidence": ["s4"]}),
    );
    assert_eq!(
        (u.as_str(), r.as_str()),
        ("unverifiable", "evidence steps unavailable")
    );
    let (u, r) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "count", "value": null, "evidence": ["s3"]}),
    );
    assert_eq!(
        (u.as_str(), r.as_str()),
        ("unverifiable", "claim has no value")
    );
    let (u, r) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "count", "value": 1, "from": "s3.nope", "evidence": ["s3"]}),
    );
    assert_eq!(u, "unverifiable");
    assert_eq!(r, "bad from-path ($ref 's3.nope': field 'nope' not found)");
    // Some cited steps missing, some loaded: continue with the loaded ones.
    assert_eq!(
        v(json!({"id": "c", "type": "count", "value": 3, "evidence": ["s4", "s3"]})),
        "supported"
    );
}

#[test]
fn entity_claims() {
    let (_d, s, rs, t) = fixture();
    let v = |c: Value| verdict_of(&s, &t, &rs, c).0;
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": ["a", "b", "c"], "evidence": ["s3"]})),
        "supported"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": ["a"], "evidence": ["s1"]})),
        "weakly_supported"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": ["fabricated-1"], "evidence": ["s3"]})),
        "unsupported"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": [], "evidence": ["s3"]})),
        "unverifiable"
    );
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": ["a"], "evidence": ["s4"]})),
        "unverifiable"
    );
    // Digest-typed strings are not in the lexicon (D-V4).
    let dig = record(&t, "s3").unwrap()["result_digest"].clone();
    let eid = rs.envelope(dig.as_str().unwrap()).unwrap()["rows"][0]["eid"].clone();
    assert_eq!(
        v(json!({"id": "c", "type": "entity", "uids": [eid], "evidence": ["s3"]})),
        "unsupported"
    );
    // A real uid absent from a truncated page stays unsupported.
    let (_, r) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "entity", "uids": ["zz"], "evidence": ["s2"]}),
    );
    assert!(r.contains("zz"));
}

#[test]
fn complete_entity_claims_and_certificates() {
    let (_d, s, rs, t) = fixture();
    let v = |c: Value| verdict_of(&s, &t, &rs, c);
    let c = |uids: Value, from: &str, ev: &str| json!({"id": "c", "type": "entity", "uids": uids, "complete": true, "from": from, "evidence": [ev]});
    // Complete list: direct comparison.
    assert_eq!(
        v(c(json!(["a", "b", "c"]), "s3.nodes", "s3")).0,
        "supported"
    );
    let (d, r) = v(c(json!(["a", "b"]), "s3.nodes", "s3"));
    assert_eq!(d, "unsupported");
    assert_eq!(r, r#"set differs from evidence: missing ["c"], extra []"#);
    assert_eq!(
        v(c(json!(["a", "b", "c", "z"]), "s3.nodes[*].uid", "s3")).0,
        "unsupported"
    );
    // Capped uid-keyed list: certificate (total + set_digest), though one node was returned.
    assert_eq!(
        v(c(json!(["a", "b", "c"]), "s1.nodes[*].uid", "s1")).0,
        "supported"
    );
    assert_eq!(
        v(c(json!(["c", "a", "b"]), "s1.nodes", "s1")).0,
        "supported"
    );
    let (d, r) = v(c(json!(["a", "b"]), "s1.nodes[*].uid", "s1"));
    assert_eq!(
        (d.as_str(), r.as_str()),
        (
            "unsupported",
            "set does not match the complete result (certificate)"
        )
    );
    assert_eq!(
        v(c(json!(["a", "b", "x"]), "s1.nodes", "s1")).0,
        "unsupported"
    );
    // A list that is not uid-keyed (rows keyed by vid) on a page: weakly supported at best.
    let first_src = rs
        .envelope(record(&t, "s1").unwrap()["result_digest"].as_str().unwrap())
        .unwrap()["rows"][0]["src"]
        .clone();
    let (d, r) = v(c(json!([first_src]), "s1.rows[*].src", "s1"));
    assert_eq!(
        (d.as_str(), r.as_str()),
        (
            "weakly_supported",
            "evidence incomplete; completeness cannot be certified"
        )
    );
    // Malformed.
    assert_eq!(v(json!({"id": "c", "type": "entity", "uids": ["a"], "complete": true, "evidence": ["s3"]})).1, "complete entity claim needs from");
    assert_eq!(
        v(c(json!(["a"]), "s3.rows_total", "s3")).1,
        "from does not name a list"
    );
    // An empty uids list means "no entities".
    assert_eq!(v(c(json!([]), "s3.nodes", "s3")).0, "unsupported");
}

#[test]
fn ordering_claims() {
    let (_d, s, rs, t) = fixture();
    let v = |c: Value| verdict_of(&s, &t, &rs, c);
    let o = |a: Value, b: Value, rel: Value, ev: &str| json!({"id": "c", "type": "ordering", "a": a, "b": b, "relation": rel, "evidence": [ev]});
    // s3 rows: a→b [0,100), b→c [5,50), a→c [30,31).
    assert_eq!(
        v(o(
            json!({"start": 0, "end": 100}),
            json!({"start": 30, "end": 31}),
            json!("contains"),
            "s3"
        ))
        .0,
        "supported"
    );
    assert_eq!(
        v(o(
            json!({"t_a": 30, "t_b": 31}),
            json!({"start": 0, "end": 100}),
            json!("during"),
            "s3"
        ))
        .0,
        "supported"
    );
    let (d, r) = v(o(
        json!({"start": 0, "end": 100}),
        json!({"start": 30, "end": 31}),
        json!("during"),
        "s3",
    ));
    assert_eq!(
        (d.as_str(), r.as_str()),
        ("unsupported", "relation is contains, not during")
    );
    // Ordering swap is detected.
    assert_eq!(
        v(o(
            json!({"start": 30, "end": 31}),
            json!({"start": 0, "end": 100}),
            json!("contains"),
            "s3"
        ))
        .0,
        "unsupported"
    );
    assert_eq!(
        v(o(
            json!({"t": 5}),
            json!({"t": 30}),
            json!({"within": 25}),
            "s3"
        ))
        .0,
        "supported"
    );
    assert_eq!(
        v(o(
            json!({"t": 5}),
            json!({"t": 30}),
            json!({"within": 24}),
            "s3"
        ))
        .0,
        "unsupported"
    );
    // Weakly supported: grounded in a truncated step (30 = t_valid, 1 = limit in args_echo).
    assert_eq!(
        v(o(json!({"t": 30}), json!({"t": 1}), json!("after"), "s1")).0,
        "weakly_supported"
    );
    // Unverifiable: every stated endpoint must be grounded (D-V4) — unit confusion fails here.
    let (d, r) = v(o(
        json!({"start": 0, "end": 100}),
        json!({"start": 30, "end": 77}),
        json!("contains"),
        "s3",
    ));
    assert_eq!(
        (d.as_str(), r.as_str()),
        (
            "unverifiable",
            "claimed timestamps not grounded in evidence: [77]"
        )
    );
    assert!(
        v(o(json!({"x": 1}), json!({"t": 30}), json!("before"), "s3"))
            .1
            .starts_with("malformed claim (")
    );
    assert_eq!(
        v(json!({"id": "c", "type": "ordering", "a": {"t": 5}, "evidence": ["s3"]})).0,
        "unverifiable"
    );
}

#[test]
fn allen_relations_of_the_spec() {
    let cases = [
        ((0, 2), (5, 9), "before"),
        ((0, 5), (5, 9), "meets"),
        ((0, 6), (5, 9), "overlaps"),
        ((5, 9), (0, 6), "overlapped_by"),
        ((6, 8), (5, 9), "during"),
        ((5, 9), (6, 8), "contains"),
        ((5, 7), (5, 9), "starts"),
        ((5, 9), (5, 7), "started_by"),
        ((7, 9), (5, 9), "finishes"),
        ((5, 9), (7, 9), "finished_by"),
        ((0, 5), (0, 5), "equals"),
        ((5, 9), (0, 2), "after"),
        ((5, 9), (0, 5), "met_by"),
    ];
    for (a, b, r) in cases {
        assert_eq!(claims::allen(a, b), r, "{a:?} {b:?}");
    }
}

#[test]
fn temporal_pattern_claims() {
    let (_d, s, rs, t) = fixture();
    let c = json!({"id": "c", "type": "temporal_pattern", "assertion": "concentration", "interval": {"t_a": 40, "t_b": 45}, "evidence": ["s3"]});
    let no_store = Ctx {
        trace: &t,
        results: &rs,
        snap: None,
        honor_truncation: true,
    };
    let out = claims::verify(&no_store, &answer(vec![c.clone()]));
    assert_eq!(out["claims"][0]["verdict"], "unverifiable");
    assert_eq!(out["claims"][0]["reason"], "no store to re-check patterns");
    let (d, _) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "temporal_pattern", "assertion": "concentration", "evidence": ["s3"]}),
    );
    assert_eq!(d, "unverifiable");
    let (d, _) = verdict_of(
        &s,
        &t,
        &rs,
        json!({"id": "c", "type": "temporal_pattern", "assertion": "burst", "interval": {"x": 1}, "evidence": ["s3"]}),
    );
    assert_eq!(d, "unverifiable");
    // TV13 c8 on the TV9 store.
    let (_d9, s9) = tv9();
    let p = plan(
        &[("s1", "entity_history", json!({"uid": "a"}), &[])],
        "count",
        "s1.rows_total",
    );
    let rs9 = ResultStore::memory();
    let t9 = run(&s9, &p, &rs9).trace;
    let mk = |iv: Value| json!({"id": "c", "type": "temporal_pattern", "assertion": "concentration", "interval": iv, "evidence": ["s1"]});
    assert_eq!(
        verdict_of(&s9, &t9, &rs9, mk(json!({"t_a": 40, "t_b": 45}))).0,
        "supported"
    );
    assert_eq!(
        verdict_of(&s9, &t9, &rs9, mk(json!({"t_a": 10, "t_b": 15}))).0,
        "unsupported"
    );
}

#[test]
fn capping_ablation_and_schema_gate() {
    let (_d, s, rs, t) = fixture();
    let c = json!({"id": "c", "type": "entity", "uids": ["a"], "evidence": ["s1"]});
    let off = Ctx {
        trace: &t,
        results: &rs,
        snap: Some(s.snapshot()),
        honor_truncation: false,
    };
    assert_eq!(
        claims::verify(&off, &answer(vec![c]))["claims"][0]["verdict"],
        "supported"
    );
    let bad = claims::verify(
        &off,
        &json!({"text": "x", "claims": [{"id": "c", "type": "count", "evidence": []}]}),
    );
    assert_eq!(bad["schema_valid"], false);
    assert_eq!(
        bad["metrics"],
        json!({"ucr": 1.0, "coverage": 0.0, "n_claims": 0})
    );
    let bad = claims::verify(&off, &json!({"text": "x", "claims": [], "extra": 1}));
    assert_eq!(bad["schema_valid"], false);
    // Gating passes nothing of an unreadable answer object on: its count claim (without
    // a value) and its text are withheld.
    let invalid = json!({"text": "The answer is 5.", "claims": [{"id": "c", "type": "count", "evidence": []}]});
    let (gated, second) = claims::gate(&off, &invalid);
    assert_eq!(gated, json!({"text": "", "claims": []}));
    assert_eq!(second["schema_valid"], true);
}

#[test]
fn metrics_and_coverage() {
    let (_d, s, rs, t) = fixture();
    let ans = json!({"text": "There are 3 edges; a and b meet, 7 too. 1,000 x10 b_2.",
        "claims": [{"id": "c1", "type": "count", "value": 3, "evidence": ["s3"]},
                   {"id": "c2", "type": "entity", "uids": ["b"], "evidence": ["s3"]},
                   {"id": "c3", "type": "count", "value": 9, "evidence": ["s3"]}]});
    let out = verify(&s, &t, &rs, &ans);
    let m = &out["metrics"];
    assert_eq!(m["n_claims"], 3);
    assert_eq!(m["ucr"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(m["ucr_gated"], m["ucr"]);
    // numbers 3, 7, 1000; uid mentions a, b (token boundaries: not "b_2"); uncovered 7, 1000, a.
    assert_eq!(m["uncovered_assertions"], json!([7.0, 1000.0, "a"]));
    assert_eq!(m["coverage"].as_f64().unwrap(), 0.4);
    assert_eq!(
        prose_numbers("at 10. then 2.5x, 1,234,5 and v2 9"),
        vec![10.0, 2.0, 12345.0, 9.0]
    );
    assert_eq!(prose_numbers("2.5 and 3,"), vec![2.5, 3.0]);
    assert_eq!(
        verify(&s, &t, &rs, &json!({"text": "", "claims": []}))["metrics"]["coverage"],
        1.0
    );
}

#[test]
fn gating_drops_unsupported_claims_of_every_type() {
    let (_d, s, rs, t) = fixture();
    let ans = json!({"text": "t", "claims": [
        {"id": "c1", "type": "count", "value": 3, "evidence": ["s3"]},
        {"id": "c2", "type": "count", "value": 4, "from": "s3.rows_total", "evidence": ["s3"]},
        {"id": "c3", "type": "entity", "uids": ["a"], "evidence": ["s1"]},
        {"id": "c4", "type": "ordering", "a": {"start": 0, "end": 100}, "b": {"start": 30, "end": 31}, "relation": "during", "evidence": ["s3"]},
        {"id": "c5", "type": "count", "value": 1, "evidence": ["s4"]}],
        "answer": {"kind": "count", "value": 4, "from": "s3.rows_total", "evidence": ["s3"], "complete": true}});
    let ctx = Ctx {
        trace: &t,
        results: &rs,
        snap: Some(s.snapshot()),
        honor_truncation: true,
    };
    let first = claims::verify(&ctx, &ans);
    assert_eq!(first["answer_verdict"], "unsupported");
    let (gated, out) = gate(&ctx, &ans);
    let ids: Vec<&str> = gated["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c3", "c5"]);
    assert!(gated.get("answer").is_none());
    assert_eq!(gated["text"], "t");
    assert_eq!(out["metrics"]["ucr"], 0.0);
    assert_eq!(
        verdicts(&out),
        vec![
            ("c1".into(), "supported".into()),
            ("c3".into(), "weakly_supported".into()),
            ("c5".into(), "unverifiable".into())
        ]
    );
}

#[test]
fn typed_answer_verdicts() {
    let (_d, s, rs, t) = fixture();
    let av = |a: Value| {
        verify(&s, &t, &rs, &json!({"text": "", "claims": [], "answer": a}))["answer_verdict"]
            .clone()
    };
    assert_eq!(
        av(
            json!({"kind": "count", "value": 3, "from": "s3.rows_total", "evidence": ["s3"], "complete": true})
        ),
        "supported"
    );
    assert_eq!(
        av(
            json!({"kind": "count", "value": 3, "from": "s3.rows_total", "evidence": ["s3"], "complete": false})
        ),
        "weakly_supported"
    );
    assert_eq!(
        av(json!({"kind": "count", "value": 3, "from": "s3.rows_total", "evidence": ["s2"]})),
        "unverifiable"
    );
    assert_eq!(
        av(
            json!({"kind": "value", "value": "a", "from": "s1.nodes[0].uid", "evidence": ["s1"], "complete": true})
        ),
        "unsupported"
    );
    assert_eq!(
        av(
            json!({"kind": "entity_set", "value": ["a", "b", "c"], "from": "s1.nodes", "evidence": ["s1"], "complete": true})
        ),
        "supported"
    );
    assert_eq!(
        av(
            json!({"kind": "entity_set", "value": ["a", "b"], "from": "s3.nodes", "evidence": ["s3"], "complete": true})
        ),
        "unsupported"
    );
}

#[test]
fn mechanical_reporter_tv22_shapes() {
    let (_d, s) = tv8();
    let rs = ResultStore::memory();
    // value with a string answer (TV22 second case, on entity_history).
    let p = plan(
        &[("s1", "entity_history", json!({"uid": "a"}), &[])],
        "value",
        "s1.rows[0].uid",
    );
    let t = run(&s, &p, &rs).trace;
    let a = mechanical_answer("value", "s1.rows[0].uid", &t);
    assert_eq!(a["text"], "The answer is a.");
    assert_eq!(
        a["claims"],
        json!([{"id": "c1", "type": "value", "value": "a", "from": "s1.rows[0].uid", "evidence": ["s1"]}])
    );
    assert_eq!(
        verdicts(&verify(&s, &t, &rs, &a)),
        vec![("c1".into(), "supported".into())]
    );
    // entity_set (TV22 third case, on snapshot_subgraph nodes) and the entity_dropped mutant.
    let p = plan(
        &[(
            "s1",
            "snapshot_subgraph",
            json!({"seeds": ["a"], "hops": 1, "t_valid": 30, "limit": 10000}),
            &[],
        )],
        "entity_set",
        "s1.nodes",
    );
    let t = run(&s, &p, &rs).trace;
    let a = mechanical_answer("entity_set", "s1.nodes", &t);
    assert_eq!(a["text"], "The entities are: a, b, c.");
    assert_eq!(
        a["claims"],
        json!([{"id": "c1", "type": "entity", "uids": ["a", "b", "c"], "from": "s1.nodes", "complete": true, "evidence": ["s1"]}])
    );
    let out = verify(&s, &t, &rs, &a);
    assert_eq!(verdicts(&out), vec![("c1".into(), "supported".into())]);
    assert_eq!(out["answer_verdict"], "supported");
    assert_eq!(out["metrics"]["coverage"], 1.0);
    let mut m = a.clone();
    m["claims"][0]["uids"] = json!(["a", "b"]);
    let out = verify(&s, &t, &rs, &m);
    assert_eq!(out["claims"][0]["verdict"], "unsupported");
    assert!(out["claims"][0]["reason"]
        .as_str()
        .unwrap()
        .contains(r#"missing ["c"]"#));
    // count.
    let p = plan(
        &[(
            "s1",
            "snapshot_subgraph",
            json!({"seeds": ["a"], "hops": 1, "t_valid": 30}),
            &[],
        )],
        "count",
        "s1.rows_total",
    );
    let t = run(&s, &p, &rs).trace;
    let a = mechanical_answer("count", "s1.rows_total", &t);
    assert_eq!(
        tgms_engine::canon::to_string(&a),
        r#"{"answer":{"complete":true,"evidence":["s1"],"from":"s1.rows_total","kind":"count","value":3},"claims":[{"evidence":["s1"],"from":"s1.rows_total","id":"c1","type":"count","value":3}],"text":"The answer is 3."}"#
    );
    // interval from a row with start/end-like fields is not applicable here: the fallback text.
    let a = mechanical_answer("series", "s1.rows_total", &t);
    assert_eq!(a["text"], "3");
    assert_eq!(a["claims"], json!([]));
    let a = mechanical_answer("count", "s9.x", &json!({"answer": null}));
    assert_eq!(a["text"], "No answer.");
    assert!(a.get("answer").is_none());
}

#[test]
fn wrong_belief_state_is_detected() {
    let (d, mut s) = tv2_asserted();
    let rs = ResultStore::in_dir(&d.path().join("s"));
    correct_tv2(&mut s);
    // Pinned at tt 1, a has one version; under current beliefs the correction split it.
    let pin = plan(
        &[(
            "s1",
            "entity_history",
            json!({"uid": "a", "as_of_tt": 1}),
            &[],
        )],
        "count",
        "s1.rows_total",
    );
    let cur = plan(
        &[("s1", "entity_history", json!({"uid": "a"}), &[])],
        "count",
        "s1.rows_total",
    );
    let tp = run(&s, &pin, &rs).trace;
    let tc = run(&s, &cur, &rs).trace;
    if tp["answer"].is_null() || tp["answer"] == tc["answer"] {
        panic!("state_at rows differ by belief state: {} vs {}", tp, tc);
    }
    let mut m = mechanical_answer("count", "s1.rows_total", &tp);
    m["claims"][0]["value"] = tc["answer"].clone();
    assert_eq!(
        verify(&s, &tp, &rs, &m)["claims"][0]["verdict"],
        "unsupported"
    );
    let clean = mechanical_answer("count", "s1.rows_total", &tp);
    assert_eq!(
        verify(&s, &tp, &rs, &clean)["claims"][0]["verdict"],
        "supported"
    );
}

#[test]
fn tv13_claims() {
    let (_d, s) = tv9();
    let p = tv13_plan();
    let rs = ResultStore::memory();
    let t = run_with(&s, &p, &rs, &pages_only()).trace;
    let ans = json!({"text": "There are 2 cyclic triangles; b was reached at 10 and node a, c too. 7 is uncovered.", "claims": [
        {"id": "c1", "type": "count", "value": 2, "from": "s5.count", "evidence": ["s5"]},
        {"id": "c2", "type": "count", "value": 2, "evidence": ["s5"]},
        {"id": "c3", "type": "entity", "uids": ["b"], "evidence": ["s2"]},
        {"id": "c4", "type": "entity", "uids": ["zz"], "evidence": ["s2"]},
        {"id": "c5", "type": "count", "value": 3, "from": "s2.rows_total", "evidence": ["s5"]},
        {"id": "c6", "type": "ordering", "a": {"t": 10}, "b": {"t": 100}, "relation": "before", "evidence": ["s2"]},
        {"id": "c7", "type": "ordering", "a": {"t": 10}, "b": {"t": 0}, "relation": "after", "evidence": ["s2"]},
        {"id": "c8", "type": "temporal_pattern", "assertion": "concentration", "interval": {"t_a": 40, "t_b": 45}, "evidence": ["s5"]},
        {"id": "c9", "type": "count", "value": 1, "evidence": ["s4"]},
        {"id": "c10", "type": "entity", "uids": ["c"], "evidence": ["s2"]}]});
    let out = verify(&s, &t, &rs, &ans);
    let v: Vec<String> = verdicts(&out).into_iter().map(|x| x.1).collect();
    assert_eq!(
        v,
        [
            "supported",
            "supported",
            "weakly_supported",
            "unsupported",
            "unverifiable",
            "weakly_supported",
            "weakly_supported",
            "supported",
            "unverifiable",
            "unsupported"
        ]
    );
    assert_eq!(out["metrics"]["ucr"], 0.2);
    assert_eq!(out["metrics"]["coverage"], 0.6);
    assert_eq!(out["metrics"]["uncovered_assertions"], json!([7.0, "a"]));
    let c = |c: Value| verdict_of(&s, &t, &rs, c).0;
    assert_eq!(
        c(
            json!({"id": "c11", "type": "entity", "uids": ["b"], "complete": true, "from": "s2.rows", "evidence": ["s2"]})
        ),
        "unsupported"
    );
    assert_eq!(
        c(
            json!({"id": "c12", "type": "entity", "uids": ["b", "c"], "complete": true, "from": "s2.rows[*].uid", "evidence": ["s2"]})
        ),
        "supported"
    );
    assert_eq!(
        c(
            json!({"id": "c13", "type": "count", "value": 2, "from": "s2.rows_total", "evidence": ["s2"]})
        ),
        "supported"
    );
    let m = mechanical_answer("count", "s5.count", &t);
    assert_eq!(
        tgms_engine::canon::to_string(&m),
        r#"{"answer":{"complete":true,"evidence":["s5"],"from":"s5.count","kind":"count","value":2},"claims":[{"evidence":["s5"],"from":"s5.count","id":"c1","type":"count","value":2}],"text":"The answer is 2."}"#
    );
}

#[test]
fn campaign_metrics_over_runs() {
    use tgms_verifier::claims::{campaign_metrics, RunRecord};
    let (_d, s, rs, t) = fixture();
    let ctx = Ctx {
        trace: &t,
        results: &rs,
        snap: Some(s.snapshot()),
        honor_truncation: true,
    };
    let good = json!({"text": "3", "claims": [{"id": "c1", "type": "count", "value": 3, "evidence": ["s3"]}]});
    let mixed = json!({"text": "3", "claims": [{"id": "c1", "type": "count", "value": 3, "evidence": ["s3"]},
        {"id": "c2", "type": "count", "value": 5, "evidence": ["s3"]}]});
    let bad = json!({"text": "5", "claims": [{"id": "c1", "type": "count", "value": 5, "evidence": ["s3"]}]});
    let rec = |a: &Value, em: f64| {
        let v = claims::verify(&ctx, a);
        let (g, gv) = gate(&ctx, a);
        RunRecord {
            verification: Some(v),
            gated_answer: Some(g),
            gated_verification: Some(gv),
            exact_match: em,
        }
    };
    let runs = vec![
        rec(&good, 1.0),
        rec(&mixed, 1.0),
        rec(&bad, 0.0),
        RunRecord {
            verification: None,
            gated_answer: None,
            gated_verification: None,
            exact_match: 0.0,
        },
    ];
    let m = campaign_metrics(&runs);
    assert_eq!(m["emitted"], 2, "{m}");
    assert_eq!(m["answer_coverage"], 0.5);
    assert_eq!(m["conditional_accuracy"], 1.0);
    assert_eq!(m["unsupported_claim_rate"], 0.5);
    assert_eq!(m["unsupported_claim_rate_gated"], 0.0);
    assert_eq!(m["overall_accuracy"], 0.5);
}

#[test]
fn tv22() {
    let (_d, s) = tv9();
    let rs = ResultStore::memory();
    let p = plan(
        &[
            (
                "s1",
                "graph_metric_timeseries",
                json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": 50}, "stride": 20, "limit": 2000}),
                &[],
            ),
            (
                "s2",
                "compute",
                json!({"fn": "topk", "input": {"$ref": "s1.rows"}, "field": "value", "k": 1}),
                &["s1"],
            ),
        ],
        "interval",
        "s2.rows[0]",
    );
    let t = run(&s, &p, &rs).trace;
    assert_eq!(
        record(&t, "s2").unwrap()["result_digest"],
        "30acccebf0dc7ca23e01de01a0f640647aa8c1d0d026303b393be149a21bcd1e"
    );
    let a = mechanical_answer("interval", "s2.rows[0]", &t);
    assert_eq!(a["text"], "The interval is [40, 50).");
    assert_eq!(
        verdicts(&verify(&s, &t, &rs, &a)),
        vec![
            ("c1".into(), "supported".into()),
            ("c2".into(), "supported".into())
        ]
    );
    let p = plan(
        &[(
            "s1",
            "temporal_reachability",
            json!({"src": "a", "window": {"t_a": 0, "t_b": 100}, "limit": 10000}),
            &[],
        )],
        "value",
        "s1.rows[0].uid",
    );
    let t = run(&s, &p, &rs).trace;
    let a = mechanical_answer("value", "s1.rows[0].uid", &t);
    assert_eq!(a["text"], "The answer is b.");
    assert_eq!(
        verdicts(&verify(&s, &t, &rs, &a)),
        vec![("c1".into(), "supported".into())]
    );
}

/// Two claims with one id (D-V10): a schema violation naming the id and both positions,
/// whatever the claims' verdicts would be; gating passes nothing of the object on. The
/// same claims with distinct ids verify (so the refusal is the ids' doing).
#[test]
fn duplicate_claim_ids_are_a_schema_violation() {
    let (_d, s, rs, t) = fixture();
    let ctx = Ctx {
        trace: &t,
        results: &rs,
        snap: Some(s.snapshot()),
        honor_truncation: true,
    };
    let claim =
        |id: &str, v: i64| json!({"id": id, "type": "count", "value": v, "evidence": ["s3"]});
    let dup =
        json!({"text": "3 and 9.", "claims": [claim("c1", 3), claim("c2", 3), claim("c1", 9)]});
    let v = claims::verify(&ctx, &dup);
    assert_eq!(v["schema_valid"], false, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("claims[2].id \"c1\"") && e.contains("claims[0]"),
        "{e}"
    );
    assert_eq!(v["claims"], json!([]));
    let (gated, _) = gate(&ctx, &dup);
    assert_eq!(gated, json!({"text": "", "claims": []}));
    let distinct =
        json!({"text": "3 and 9.", "claims": [claim("c1", 3), claim("c2", 3), claim("c3", 9)]});
    let v = claims::verify(&ctx, &distinct);
    assert_eq!(v["schema_valid"], true, "{v}");
    assert_eq!(v["claims"].as_array().unwrap().len(), 3);
}
