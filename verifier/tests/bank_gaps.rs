//! Issue 21, the question bank's gaps on the verifier side: a plan whose answer is `compute`
//! `compare`'s yes/no value runs, the mechanical reporter phrases it with a boolean claim, the
//! claim verifier supports exactly the true boolean (not its negation, not 1/0), and prose
//! gating keeps the sentence; the reporter writes a UTC companion beside an integer time
//! that prose gating accepts only when it writes the claimed time; and the seconds guard
//! applies in static validation when the store's statistics are known (a note says so when
//! they are not).

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_engine::{Op, Store};
use tgms_verifier::claims::mechanical_answer;
use tgms_verifier::exec::ResultStore;

/// Ten events a→b and four b→a at µs times of July 2004.
fn messages() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let t0 = 1_090_454_400_000_000i64; // 2004-07-22T00:00:00Z
    let ops: Vec<Op> = (0..14)
        .map(|i| {
            let (src, dst) = if i < 10 { ("a", "b") } else { ("b", "a") };
            Op::parse(
                &json!({"op": "assert_edge", "src": src, "dst": dst, "rel_type": "MSG",
                "vt_s": t0 + i * 3_600_000_000i64, "vt_e": t0 + i * 3_600_000_000i64 + 1}),
            )
            .unwrap()
        })
        .collect();
    s.write(ops).unwrap();
    (d, s)
}

fn count_step(id: &str, role: &str) -> (String, Value) {
    (
        id.to_string(),
        json!({"group_by": [], "aggregates": [{"agg": "count"}],
            "window": {"t_a": "2004-07-01", "t_b": "2004-08-01"},
            "endpoint_filter": {"role": role, "uids": ["a"]}}),
    )
}

fn compare_plan(cmp: &str) -> Value {
    let (s1, a1) = count_step("s1", "src");
    let (s2, a2) = count_step("s2", "dst");
    plan(
        &[
            (&s1, "aggregate_events", a1, &[]),
            (&s2, "aggregate_events", a2, &[]),
            (
                "s3",
                "compute",
                json!({"fn": "compare", "x": {"$ref": "s1.rows[0].count"}, "cmp": cmp,
                    "y": {"$ref": "s2.rows[0].count"}}),
                &["s1", "s2"],
            ),
        ],
        "value",
        "s3.value",
    )
}

#[test]
fn a_yes_no_answer_is_reported_and_verified_as_a_boolean() {
    let (_d, s) = messages();
    let rs = ResultStore::memory();
    // a sent 10 and received 4: "did a send more than it received?" is yes.
    for (cmp, want) in [("gt", true), ("lt", false), ("eq", false), ("ne", true)] {
        let p = compare_plan(cmp);
        assert!(
            check(Some(&s), &p, None).valid(),
            "{:?}",
            triples(&check(Some(&s), &p, None))
        );
        let t = run(&s, &p, &rs).trace;
        assert_eq!(t["ok"], true, "{t}");
        assert_eq!(t["answer"], json!(want), "{cmp}");
        let a = mechanical_answer("value", "s3.value", &t);
        let word = if want { "yes" } else { "no" };
        assert_eq!(a["text"], format!("The answer is {word} ({want})."));
        assert_eq!(
            a["claims"],
            json!([{"id": "c1", "type": "value", "value": want, "from": "s3.value", "evidence": ["s3"]}])
        );
        let out = verify(&s, &t, &rs, &a);
        assert_eq!(
            verdicts(&out),
            vec![("c1".into(), "supported".into())],
            "{out}"
        );
        // The negation, and the number 1/0 in place of the boolean, are not supported.
        for wrong in [json!(!want), json!(i64::from(want))] {
            let mut bad = a.clone();
            bad["claims"][0]["value"] = wrong.clone();
            let out = verify(&s, &t, &rs, &bad);
            assert_eq!(
                verdicts(&out),
                vec![("c1".into(), "unsupported".into())],
                "{wrong}: {out}"
            );
        }
        // Prose gating keeps the mechanical sentence (the boolean's word mentions the claim).
        let gated =
            tgms_verifier::prose::gate_text(&a, &out_for(&s, &t, &rs, &a), &Default::default());
        assert_eq!(gated.answer["text"], a["text"], "{:?}", gated.removed);
        assert!(gated.removed.is_empty());
    }
}

fn out_for(s: &Store, t: &Value, rs: &ResultStore, a: &Value) -> Value {
    verify(s, t, rs, a)
}

#[test]
fn validation_with_the_store_refuses_a_time_in_seconds() {
    let (_d, s) = messages();
    let secs = 1_090_454_400i64 + 3600; // 2004-07-22T01:00:00Z, in seconds
    let p = plan(
        &[(
            "s1",
            "aggregate_events",
            json!({"group_by": [], "aggregates": [{"agg": "count"}], "window": {"t_a": secs, "t_b": "2004-08-01"}}),
            &[],
        )],
        "count",
        "s1.rows[0].count",
    );
    let r = check(Some(&s), &p, None);
    let v = &r.violations;
    assert_eq!(v.len(), 1, "{:?}", triples(&r));
    assert_eq!(v[0].code, "E_INVALID_ARG");
    assert_eq!(v[0].step_id.as_deref(), Some("s1"));
    assert!(
        v[0].message
            .starts_with(&format!("window.t_a = {secs} looks like seconds")),
        "{}",
        v[0].message
    );
    let d = v[0].details.as_ref().unwrap();
    assert_eq!(d["repair"]["use"], json!(secs * 1_000_000));
    assert_eq!(d["path"], json!(["window", "t_a"]));
    assert!(r.to_json().get("notes").is_none());
    // Without statistics the validator cannot decide: a note names the integer.
    let r = check(None, &p, None);
    assert!(r.valid(), "{:?}", triples(&r));
    let j = r.to_json();
    assert_eq!(j["notes"][0]["check"], "seconds_guard", "{j}");
    assert_eq!(j["notes"][0]["step_id"], "s1");
    assert_eq!(j["notes"][0]["path"], "window.t_a");
    assert_eq!(j["notes"][0]["value"], json!(secs));
    // µs integers are fine with the store, and a plan without integer times has no note.
    let mut ok = p.clone();
    ok["steps"][0]["args"]["window"]["t_a"] = json!(secs * 1_000_000);
    assert!(check(Some(&s), &ok, None).valid());
    ok["steps"][0]["args"]["window"]["t_a"] = json!("2004-07-22");
    let j = check(None, &ok, None).to_json();
    assert!(j.get("notes").is_none(), "{j}");
}

#[test]
fn a_time_answer_reads_with_its_utc_companion_in_prose_only() {
    let (_d, s) = messages();
    let rs = ResultStore::memory();
    let p = plan(
        &[(
            "s1",
            "aggregate_events",
            json!({"group_by": [], "aggregates": [{"agg": "min", "of": "vt_s"}],
                "window": {"t_a": "2004-07-01", "t_b": "2004-08-01"},
                "endpoint_filter": {"role": "dst", "uids": ["a"]}}),
            &[],
        )],
        "value",
        "s1.rows[0].min_vt_s",
    );
    let t = run(&s, &p, &rs).trace;
    // The first message to a: event 10, at 2004-07-22T10:00:00Z.
    let want = 1_090_454_400_000_000i64 + 10 * 3_600_000_000;
    assert_eq!(t["answer"], json!(want), "{t}");
    let a = mechanical_answer("value", "s1.rows[0].min_vt_s", &t);
    assert_eq!(
        a["text"],
        format!("The answer is {want} (2004-07-22T10:00:00Z).")
    );
    // JSON keeps the integer alone.
    assert_eq!(a["claims"][0]["value"], json!(want));
    assert_eq!(a["answer"]["value"], json!(want));
    let out = verify(&s, &t, &rs, &a);
    assert_eq!(
        verdicts(&out),
        vec![("c1".into(), "supported".into())],
        "{out}"
    );
    assert_eq!(out["metrics"]["coverage"], json!(1.0), "{out}");
    let gated = tgms_verifier::prose::gate_text(&a, &out, &Default::default());
    assert_eq!(gated.answer["text"], a["text"], "{:?}", gated.removed);
    // A companion that writes another time is an uncovered assertion: its sentence goes.
    let mut wrong = a.clone();
    wrong["text"] = json!(format!("The answer is {want} (2004-07-23T10:00:00Z)."));
    let out = verify(&s, &t, &rs, &wrong);
    let gated = tgms_verifier::prose::gate_text(&wrong, &out, &Default::default());
    assert_eq!(gated.removed.len(), 1, "{:?}", gated.removed);
    assert_ne!(gated.answer["text"], wrong["text"]);
    // The interval shape gets both readings.
    let p = plan(
        &[(
            "s1",
            "aggregate_events",
            json!({"group_by": [{"dim": "time_bucket"}], "aggregates": [{"agg": "count"}],
                "window": {"t_a": "2004-07-22", "t_b": "2004-07-23"}, "stride": "12h"}),
            &[],
        )],
        "interval",
        "s1.rows[0]",
    );
    let t = run(&s, &p, &rs).trace;
    let a = mechanical_answer("interval", "s1.rows[0]", &t);
    assert_eq!(
        a["text"],
        "The interval is [1090454400000000, 1090497600000000) (2004-07-22T00:00:00Z to 2004-07-22T12:00:00Z)."
    );
    let out = verify(&s, &t, &rs, &a);
    let gated = tgms_verifier::prose::gate_text(&a, &out, &Default::default());
    assert_eq!(gated.answer["text"], a["text"], "{:?}", gated.removed);
}
