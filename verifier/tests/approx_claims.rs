//! Claims over approximate evidence (`docs/approximate.md`): an estimate is backed at most
//! `weakly_supported` and only inside its reported interval; stated as exact it is
//! `unsupported`; approximate evidence certifies no complete answer; the mechanical reporter
//! says "about N (95% interval a–b)" with every number backed, and prose gating keeps it;
//! exact answers, traces and descriptors are unchanged; the mutation class
//! `approximate_as_exact` is detected every time.

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_testkit::Rng;
use tgms_verifier::claims::mechanical_answer;
use tgms_verifier::exec::{descriptor, ResultStore};

/// 3,000 events among 8 nodes over 30,000 µs (the seeded test generator, seed 42).
fn store() -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    let mut r = Rng::new(42);
    let mut next = |n: u64| r.below(n);
    let events: Vec<Value> = (0..3000)
        .map(|_| {
            json!({"src": format!("n{}", next(8)), "dst": format!("n{}", next(8)),
                "rel_type": "M", "vt_s": next(30_000)})
        })
        .collect();
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    (d, s)
}

const W: &str = r#"{"t_a": 0, "t_b": 30000}"#;

fn motif_args(mode: &str) -> Value {
    let mut a =
        json!({"motif": "all", "delta": 50, "window": serde_json::from_str::<Value>(W).unwrap()});
    if mode == "sample" {
        a["mode"] = json!("sample");
        a["seed"] = json!(3);
        a["epsilon"] = json!(0.2);
    }
    a
}

fn claim(id: &str, value: Value, from: Option<&str>, extra: Value) -> Value {
    let mut c = json!({"id": id, "type": "count", "value": value, "evidence": ["s1"]});
    if let Some(f) = from {
        c["from"] = json!(f);
    }
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

#[test]
fn estimates_are_backed_weakly_inside_their_interval_and_never_as_exact() {
    let (_d, s) = store();
    let rs = ResultStore::memory();
    let p = plan(
        &[("s1", "count_temporal_motifs", motif_args("sample"), &[])],
        "count",
        "s1.count",
    );
    let t = run(&s, &p, &rs).trace;
    assert_eq!(t["ok"], true, "{t}");
    let env = rs
        .envelope(t["steps"][0]["result_digest"].as_str().unwrap())
        .unwrap();
    let iv = &env["interval"];
    let (lo, hi) = (
        iv["ci_low"].as_i64().unwrap(),
        iv["ci_high"].as_i64().unwrap(),
    );
    let est = env["count"].as_f64().unwrap();
    assert!(lo < hi, "{env}");
    let m11 = &env["intervals"]["M_1_1"];
    let (mlo, mhi) = (
        m11["ci_low"].as_i64().unwrap(),
        m11["ci_high"].as_i64().unwrap(),
    );
    assert!(mhi < lo, "a motif's interval lies below the total's: {env}");
    let n_ev = env["n_events_in_window"].clone();
    let cases = vec![
        // (claim, verdict)
        (
            claim("in", json!(lo + (hi - lo) / 2), Some("s1.count"), json!({})),
            "weakly_supported",
        ),
        (
            claim("low_end", json!(lo), Some("s1.count"), json!({})),
            "weakly_supported",
        ),
        (
            claim("high_end", json!(hi), Some("s1.count"), json!({})),
            "weakly_supported",
        ),
        (
            claim("point", env["count"].clone(), Some("s1.count"), json!({})),
            "weakly_supported",
        ),
        (
            claim("below", json!(lo - 1), Some("s1.count"), json!({})),
            "unsupported",
        ),
        (
            claim("above", json!(hi + 1), Some("s1.count"), json!({})),
            "unsupported",
        ),
        (
            claim(
                "exact",
                json!(est.round()),
                Some("s1.count"),
                json!({"complete": true}),
            ),
            "unsupported",
        ),
        (
            claim("no_from_in", json!(lo), None, json!({})),
            "weakly_supported",
        ),
        (
            claim("no_from_out", json!(hi + 1), None, json!({})),
            "unsupported",
        ),
        (
            claim("no_from_exact", json!(lo), None, json!({"complete": true})),
            "unsupported",
        ),
        // A motif's estimate is checked against its own interval, not the total's.
        (
            claim("motif_in", json!(mlo), Some("s1.counts.M_1_1"), json!({})),
            "weakly_supported",
        ),
        (
            claim("motif_total", json!(lo), Some("s1.counts.M_1_1"), json!({})),
            "unsupported",
        ),
        (
            claim(
                "motif_est",
                m11["estimate"].clone(),
                Some("s1.intervals.M_1_1.estimate"),
                json!({}),
            ),
            "weakly_supported",
        ),
        // Exact facts of an approximate step: equal values only, capped; never exact.
        (
            claim(
                "events",
                n_ev.clone(),
                Some("s1.n_events_in_window"),
                json!({}),
            ),
            "weakly_supported",
        ),
        (
            claim(
                "events_exact",
                n_ev,
                Some("s1.n_events_in_window"),
                json!({"complete": true}),
            ),
            "unsupported",
        ),
        (
            claim(
                "ci_end",
                json!(mhi),
                Some("s1.intervals.M_1_1.ci_high"),
                json!({}),
            ),
            "weakly_supported",
        ),
        (
            claim(
                "ci_end_off",
                json!(mhi + 1),
                Some("s1.intervals.M_1_1.ci_high"),
                json!({}),
            ),
            "unsupported",
        ),
    ];
    let ans = json!({"text": "x", "claims": cases.iter().map(|c| c.0.clone()).collect::<Vec<_>>()});
    let out = verify(&s, &t, &rs, &ans);
    for ((c, want), got) in cases.iter().zip(out["claims"].as_array().unwrap()) {
        assert_eq!(got["verdict"], *want, "{c} → {got}");
    }
    let reason = |id: &str| {
        out["claims"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        reason("in"),
        format!("value within the 95% interval [{lo}, {hi}] of an approximate estimate")
    );
    assert!(reason("exact").starts_with("an approximate estimate stated as exact"));
    // The "taint ignored" ablation lifts capping, not the interval rule.
    let ctx = tgms_verifier::claims::Ctx {
        trace: &t,
        results: &rs,
        snap: Some(s.snapshot()),
        honor_truncation: false,
    };
    let out = tgms_verifier::claims::verify(&ctx, &ans);
    assert_eq!(out["claims"][0]["verdict"], "weakly_supported");
    assert_eq!(out["claims"][4]["verdict"], "unsupported");
    assert_eq!(out["claims"][6]["verdict"], "unsupported");
}

#[test]
fn typed_answers_from_approximate_evidence_are_never_complete() {
    let (_d, s) = store();
    let rs = ResultStore::memory();
    let p = plan(
        &[("s1", "count_temporal_motifs", motif_args("sample"), &[])],
        "count",
        "s1.count",
    );
    let t = run(&s, &p, &rs).trace;
    assert_eq!(t["answer_complete"], false);
    let mut a = mechanical_answer("count", "s1.count", &t);
    assert_eq!(
        verify(&s, &t, &rs, &a)["answer_verdict"],
        "weakly_supported"
    );
    a["answer"]["complete"] = json!(true);
    assert_eq!(verify(&s, &t, &rs, &a)["answer_verdict"], "unsupported");

    // An entity set cannot be certified complete from approximate evidence: the same
    // complete list, once marked approximate, no longer certifies.
    let ps = plan(
        &[(
            "s1",
            "snapshot_subgraph",
            json!({"seeds": ["n1"], "hops": 1, "t_valid": 29_000}),
            &[],
        )],
        "entity_set",
        "s1.nodes",
    );
    let rs2 = ResultStore::memory();
    let te = run(&s, &ps, &rs2).trace;
    let digest = te["steps"][0]["result_digest"]
        .as_str()
        .unwrap()
        .to_string();
    let mut env = rs2.envelope(&digest).unwrap();
    let ans = mechanical_answer("entity_set", "s1.nodes", &te);
    assert!(ans["answer"]["value"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
    let mut typed = ans.clone();
    typed["answer"]["complete"] = json!(true);
    assert_eq!(verify(&s, &te, &rs2, &typed)["answer_verdict"], "supported");
    env["approximate"] = json!(true);
    env["result_digest"] = json!("f".repeat(64));
    let rs3 = ResultStore::memory();
    rs3.put_envelope(&env).unwrap();
    let mut ta = te.clone();
    ta["steps"][0]["result_digest"] = env["result_digest"].clone();
    ta["steps"][0]["evidence"] = descriptor(&env, "0", false, false);
    assert_eq!(ta["steps"][0]["evidence"]["complete"], false);
    let out = verify(&s, &ta, &rs3, &typed);
    assert_eq!(out["answer_verdict"], "unsupported", "{out}");
    assert_eq!(
        out["answer_reason"],
        "answer claims completeness the evidence does not have"
    );
    // The complete entity claim of the mechanical answer is capped (not certified).
    assert_eq!(out["claims"][0]["verdict"], "weakly_supported", "{out}");
}

#[test]
fn the_mechanical_reporter_says_about_and_gating_keeps_it() {
    let (_d, s) = store();
    let rs = ResultStore::memory();
    for from in ["s1.count", "s1.counts.M_5_1"] {
        let p = plan(
            &[("s1", "count_temporal_motifs", motif_args("sample"), &[])],
            "count",
            from,
        );
        let t = run(&s, &p, &rs).trace;
        let env = rs
            .envelope(t["steps"][0]["result_digest"].as_str().unwrap())
            .unwrap();
        let iv = if from == "s1.count" {
            env["interval"].clone()
        } else {
            env["intervals"]["M_5_1"].clone()
        };
        let ivp = if from == "s1.count" {
            "s1.interval"
        } else {
            "s1.intervals.M_5_1"
        };
        assert_eq!(t["answer_interval"]["path"], ivp);
        let a = mechanical_answer("count", from, &t);
        let (lo, hi) = (
            iv["ci_low"].as_i64().unwrap(),
            iv["ci_high"].as_i64().unwrap(),
        );
        let shown = (iv["estimate"].as_f64().unwrap().round() as i64).clamp(lo, hi);
        assert_eq!(
            a["text"],
            format!("The answer is about {shown} (95% interval {lo}–{hi}).")
        );
        let out = verify(&s, &t, &rs, &a);
        let v: Vec<(String, String)> = verdicts(&out);
        assert_eq!(v.len(), 4, "{out}");
        assert!(v.iter().all(|x| x.1 == "weakly_supported"), "{out}");
        assert_eq!(out["metrics"]["coverage"], 1.0, "{out}");
        let lex = tgms_verifier::prose::uid_lexicon(&t, &rs);
        let g = tgms_verifier::prose::gate_text(&a, &out, &lex);
        assert!(g.removed.is_empty(), "{:?}", g.removed);
        assert_eq!(g.answer["text"], a["text"]);
        // The descriptor names the method, ε, confidence and seed.
        let ap = &t["steps"][0]["evidence"]["approximation"];
        assert_eq!(ap["method"], "first_event_poisson_ht_normal");
        assert_eq!(ap["epsilon"], 0.2);
        assert_eq!(ap["confidence"], 0.95);
        assert_eq!(ap["seed"], 3);
        assert_eq!(t["steps"][0]["evidence"]["approximate"], true);
        // "exactly" with an uncovered percentage and no "about" is not what the reporter
        // writes; a 95% with nothing claiming 0.95 stays uncovered.
        let mut bare = a.clone();
        bare["claims"].as_array_mut().unwrap().truncate(3);
        let out = verify(&s, &t, &rs, &bare);
        assert_eq!(
            out["metrics"]["uncovered_assertions"],
            json!([95.0]),
            "{out}"
        );
    }
}

#[test]
fn exact_answers_traces_and_descriptors_are_unchanged() {
    let (_d, s) = store();
    let rs = ResultStore::memory();
    let p = plan(
        &[("s1", "count_temporal_motifs", motif_args("exact"), &[])],
        "count",
        "s1.count",
    );
    let t = run(&s, &p, &rs).trace;
    assert!(t.get("answer_interval").is_none());
    assert!(t["steps"][0]["evidence"].get("approximation").is_none());
    assert_eq!(t["steps"][0]["evidence"]["approximate"], false);
    let a = mechanical_answer("count", "s1.count", &t);
    assert_eq!(a["text"], format!("The answer is {}.", t["answer"]));
    assert_eq!(verify(&s, &t, &rs, &a)["claims"][0]["verdict"], "supported");
    // `complete: true` on a count claim over complete evidence stays supported.
    let c = claim(
        "c1",
        t["answer"].clone(),
        Some("s1.count"),
        json!({"complete": true}),
    );
    assert_eq!(
        verify(&s, &t, &rs, &answer(vec![c]))["claims"][0]["verdict"],
        "supported"
    );
}

#[test]
fn approximate_stated_as_exact_is_always_detected() {
    let (_d, s) = store();
    let rs = ResultStore::memory();
    let (cases, detected) =
        tgms_verifier::mutation_approx::approximate_as_exact(s.snapshot(), &rs, 30, true);
    assert_eq!(cases, 30);
    assert_eq!(detected, cases);
}

#[test]
fn the_static_verifier_offers_sample_mode_for_a_refused_exact_count() {
    let (_d, s) = store();
    // The static verifier prices a plan from the store's statistics alone: these are of a
    // store 100 times larger over the same span, where sampling would draw a tenth of the
    // events (over the 3,000 events themselves it would draw them all: no repair).
    let mut stats = s.stats().clone();
    stats.n_edge_versions *= 100;
    let opts = tgms_verifier::validate::Options {
        stats: Some(&stats),
        ceilings: tgms_operators::cost::Ceilings {
            expansions_est: Some(100),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut args = motif_args("exact");
    args["delta"] = json!(1);
    let p = plan(
        &[("s1", "count_temporal_motifs", args, &[])],
        "count",
        "s1.count",
    );
    let r = tgms_verifier::validate::validate_static(&p, &opts);
    let v = r
        .violations
        .iter()
        .find(|v| v.code == "E_COST")
        .expect("refused by cost");
    let j = v.to_json();
    let d = &j["details"]["repair"];
    assert_eq!(
        d["sample_mode"]["args"],
        json!({"mode": "sample", "epsilon": 0.05, "confidence": 0.95})
    );
    assert!(d.get("window").is_some(), "the window repair stays: {d}");
}
