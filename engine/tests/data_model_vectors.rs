//! The data-model vectors of the spec's `test-vectors.md` (TV1–TV5, TV20 store digests) run
//! against real stores on disk.

mod common;

use common::tv5_store;
use serde_json::{json, Value};
use tgms_engine::{Identity, Op, Options, Store, OPEN_END};

fn op(v: Value) -> Op {
    Op::from_json(&v)
}

fn new_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::create_with(
        &dir.path().join("s"),
        Options {
            paranoid: true,
            ..Options::default()
        },
    )
    .unwrap();
    (dir, s)
}

/// Stored rows of one identity as canonical row objects, (tt_s, vt_s) order.
fn rows(s: &Store, id: Identity) -> Vec<Value> {
    s.snapshot()
        .history_of(&id)
        .iter()
        .map(|v| v.to_json())
        .collect()
}

fn brief(r: &Value) -> (i64, i64, i64, i64, String, String) {
    (
        r["vt_s"].as_i64().unwrap(),
        r["vt_e"].as_i64().unwrap(),
        r["tt_s"].as_i64().unwrap(),
        r["tt_e"].as_i64().unwrap(),
        r["props"].to_string(),
        r["origin"].as_str().unwrap().to_string(),
    )
}

fn node(uid: &str) -> Identity {
    Identity::Node(uid.into())
}

fn edge(src: &str, dst: &str, rel: &str, disc: &str) -> Identity {
    Identity::Edge {
        src: src.into(),
        dst: dst.into(),
        rel_type: rel.into(),
        disc: disc.into(),
    }
}

#[test]
fn tv1_empty_store_digest() {
    let (_d, s) = new_store();
    assert_eq!(
        s.digest(),
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    );
}

#[test]
#[allow(clippy::type_complexity)]
fn tv2_correction_carving() {
    let (_d, mut s) = new_store();
    s.write_at(
        1,
        vec![op(
            json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
        )],
    )
    .unwrap();
    s.write_at(2, vec![op(json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix p over [40,60)"}))]).unwrap();
    let r = rows(&s, node("a"));
    let got: Vec<(
        String,
        i64,
        i64,
        i64,
        i64,
        String,
        String,
        Value,
        Value,
        Value,
    )> = r
        .iter()
        .map(|x| {
            (
                x["vid"].as_str().unwrap().to_string(),
                x["vt_s"].as_i64().unwrap(),
                x["vt_e"].as_i64().unwrap(),
                x["tt_s"].as_i64().unwrap(),
                x["tt_e"].as_i64().unwrap(),
                x["props"].to_string(),
                x["origin"].as_str().unwrap().to_string(),
                x["reason"].clone(),
                x["closed_by"].clone(),
                x["close_reason"].clone(),
            )
        })
        .collect();
    let fix = json!("fix p over [40,60)");
    let want = vec![
        (
            "6a8bfaa2db98618ce6c976c4".to_string(),
            0,
            100,
            1,
            2,
            r#"{"p":1}"#.to_string(),
            "assert".to_string(),
            Value::Null,
            json!("correct"),
            fix.clone(),
        ),
        (
            "4938f8be20ef59114636f8c0".to_string(),
            0,
            40,
            2,
            OPEN_END,
            r#"{"p":1}"#.to_string(),
            "correct".to_string(),
            fix.clone(),
            Value::Null,
            Value::Null,
        ),
        (
            "ab1515355119df62299a1324".to_string(),
            40,
            60,
            2,
            OPEN_END,
            r#"{"p":2}"#.to_string(),
            "correct".to_string(),
            fix.clone(),
            Value::Null,
            Value::Null,
        ),
        (
            "fd6b4016ca66d7b71fb87cab".to_string(),
            60,
            100,
            2,
            OPEN_END,
            r#"{"p":1}"#.to_string(),
            "correct".to_string(),
            fix.clone(),
            Value::Null,
            Value::Null,
        ),
    ];
    assert_eq!(got, want);
    assert_eq!(
        s.digest(),
        "803b8b1a2ca29c98c36d429e267e0a981db084142844d6bcbf3ca1992e487dd7"
    );
    // Belief state at tt=1 sees p=1 at vt 50, current sees p=2.
    let at = |as_of: i64| -> String {
        s.snapshot()
            .versions_of(&node("a"), as_of)
            .iter()
            .map(|v| v.to_json())
            .find(|x| x["vt_s"].as_i64().unwrap() <= 50 && 50 < x["vt_e"].as_i64().unwrap())
            .unwrap()["props"]
            .to_string()
    };
    assert_eq!(at(1), r#"{"p":1}"#);
    assert_eq!(at(OPEN_END), r#"{"p":2}"#);
}

fn one_batch(ops: Vec<Value>) -> Vec<(i64, i64, i64, i64, String, String)> {
    let (_d, mut s) = new_store();
    s.write_at(1, ops.into_iter().map(op).collect()).unwrap();
    rows(&s, edge("a", "b", "R", ""))
        .iter()
        .map(brief)
        .collect()
}

fn ae(s: i64, e: i64, p: i64) -> Value {
    json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","props":{"p":p},"vt_s":s,"vt_e":e})
}

#[test]
fn tv3_same_batch_retirement() {
    let o = OPEN_END;
    let p1 = r#"{"p":1}"#.to_string();
    let p2 = r#"{"p":2}"#.to_string();
    let a = "assert".to_string();
    let got = one_batch(vec![ae(10, 20, 1), ae(15, 25, 2)]);
    assert_eq!(
        got,
        vec![
            (10, 15, 1, o, p1.clone(), a.clone()),
            (15, 25, 1, o, p2.clone(), a.clone())
        ]
    );
    let got = one_batch(vec![ae(10, 20, 1), ae(5, 15, 2)]);
    let mut got_sorted = got.clone();
    got_sorted.sort();
    assert_eq!(
        got_sorted,
        vec![
            (5, 15, 1, o, p2.clone(), a.clone()),
            (15, 20, 1, o, p1.clone(), a.clone())
        ]
    );
    let got = one_batch(vec![ae(10, 20, 1), ae(10, 30, 2)]);
    assert_eq!(got, vec![(10, 30, 1, o, p2.clone(), a.clone())]);
    let got = one_batch(vec![
        ae(0, 100, 1),
        json!({"op":"retract","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"t":50,"reason":"ended at 50"}),
    ]);
    assert_eq!(got, vec![(0, 50, 1, o, p1.clone(), "retract".to_string())]);
    let mut got = one_batch(vec![
        ae(0, 100, 1),
        json!({"op":"correct","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix"}),
    ]);
    got.sort();
    let c = "correct".to_string();
    assert_eq!(
        got,
        vec![
            (0, 40, 1, o, p1.clone(), c.clone()),
            (40, 60, 1, o, p2.clone(), c.clone()),
            (60, 100, 1, o, p1.clone(), c.clone())
        ]
    );

    // The vid of [10,30) is reused after retirement.
    let (_d, mut s) = new_store();
    s.write_at(1, vec![op(ae(10, 20, 1)), op(ae(10, 30, 2))])
        .unwrap();
    assert_eq!(
        rows(&s, edge("a", "b", "R", ""))[0]["vid"],
        "22fded770c643fb11ab4ebde"
    );

    // Separate batches.
    let (_d, mut s) = new_store();
    s.write_at(1, vec![op(ae(10, 20, 1))]).unwrap();
    s.write_at(2, vec![op(ae(15, 25, 2))]).unwrap();
    let r = rows(&s, edge("a", "b", "R", ""));
    assert_eq!(
        r.iter().map(brief).collect::<Vec<_>>(),
        vec![
            (10, 20, 1, 2, p1.clone(), a.clone()),
            (10, 15, 2, o, p1.clone(), a.clone()),
            (15, 25, 2, o, p2.clone(), a.clone()),
        ]
    );
    assert_eq!(r[0]["closed_by"], "assert");
    assert_eq!(r[0]["close_reason"], Value::Null);
    assert_eq!(
        rows(&s, edge("a", "b", "R", ""))[1]["vid"],
        rows(&s, edge("a", "b", "R", ""))[1]["vid"]
    );
    for u in ["a", "b"] {
        let n = rows(&s, node(u));
        assert_eq!(n.len(), 1);
        assert_eq!(
            (
                n[0]["vt_s"].as_i64(),
                n[0]["vt_e"].as_i64(),
                n[0]["tt_s"].as_i64()
            ),
            (Some(10), Some(o), Some(1))
        );
    }
    assert_eq!(
        s.digest(),
        "7daf598253868df7b2df965019f733bd26a8cdacc126a82aa4b6c76eda312928"
    );
}

fn believed(s: &Store, id: Identity) -> Vec<(i64, i64, i64, String, String)> {
    s.snapshot()
        .versions_of(&id, OPEN_END)
        .iter()
        .map(|v| v.to_json())
        .map(|x| {
            (
                x["vt_s"].as_i64().unwrap(),
                x["vt_e"].as_i64().unwrap(),
                x["tt_s"].as_i64().unwrap(),
                x["label"].as_str().unwrap_or("").to_string(),
                x["props"].to_string(),
            )
        })
        .collect()
}

fn tv4_base() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    s.write_at(1, vec![
        op(json!({"op":"assert_node","uid":"x","label":"A","props":{"p":1},"vt_s":0,"vt_e":10})),
        op(json!({"op":"assert_node","uid":"x","label":"B","props":{"p":2},"vt_s":20,"vt_e":30})),
    ]).unwrap();
    (d, s)
}

#[test]
fn tv4_corner_cases() {
    let (_d, mut s) = tv4_base();
    s.write_at(2, vec![op(json!({"op":"correct","ref":{"kind":"node","uid":"x"},"props":{"p":9},"vt_s":5,"vt_e":25,"reason":"fix 5..25"}))]).unwrap();
    let b = |l: &str, p: i64| (l.to_string(), format!("{{\"p\":{p}}}"));
    let got = believed(&s, node("x"));
    assert_eq!(
        got.iter()
            .map(|g| (g.0, g.1, g.3.clone(), g.4.clone()))
            .collect::<Vec<_>>(),
        vec![
            (0, 5, b("A", 1).0, b("A", 1).1),
            (5, 25, b("A", 9).0, b("A", 9).1),
            (25, 30, b("B", 2).0, b("B", 2).1)
        ]
    );
    let closed: Vec<Value> = rows(&s, node("x"))
        .into_iter()
        .filter(|r| r["tt_e"] == json!(2))
        .collect();
    assert_eq!(closed.len(), 2);
    assert!(closed.iter().all(|r| r["closed_by"] == "correct"));

    let (_d, mut s) = tv4_base();
    s.write_at(
        2,
        vec![op(
            json!({"op":"retract","ref":{"kind":"node","uid":"x"},"t":5,"reason":"gone at 5"}),
        )],
    )
    .unwrap();
    s.write_at(
        3,
        vec![op(
            json!({"op":"assert_node","uid":"x","label":"C","props":{"p":3},"vt_s":25,"vt_e":40}),
        )],
    )
    .unwrap();
    let got = believed(&s, node("x"));
    assert_eq!(
        got.iter()
            .map(|g| (g.0, g.1, g.2, g.3.clone()))
            .collect::<Vec<_>>(),
        vec![
            (0, 5, 2, "A".to_string()),
            (20, 25, 3, "B".to_string()),
            (25, 40, 3, "C".to_string())
        ]
    );

    // Retract of an unknown uid: E_NOT_FOUND, logged, tt consumed.
    let e = s
        .write_at(
            4,
            vec![op(
                json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5,"reason":"r"}),
            )],
        )
        .unwrap_err();
    assert_eq!(
        (e.code().as_str(), e.message().as_str()),
        ("E_NOT_FOUND", "no believed node version of zzz valid at 5")
    );
    assert_eq!(s.last_tt(), Some(4));
    assert_eq!(s.stats().n_failed_batches, 1);
    let e = s
        .write_at(
            5,
            vec![op(
                json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5}),
            )],
        )
        .unwrap_err();
    assert_eq!(
        (e.code().as_str(), e.message().as_str()),
        ("E_INVALID_ARG", "retract requires a non-empty reason")
    );
    assert!(!s.snapshot().has_uid("zzz"));
}

#[test]
fn tv4_ingest_discs() {
    let (_d, mut s) = new_store();
    let ev = |src: &str, dst: &str, t: i64| json!({"src":src,"dst":dst,"rel_type":"M","vt_s":t});
    s.write_at(1, vec![op(json!({"op":"ingest_events","events":[ev("u","v",1),ev("u","v",2),ev("u","v",3),ev("u","v",4),ev("u","v",5)]}))]).unwrap();
    s.write_at(
        2,
        vec![op(json!({"op":"ingest_events","events":[
        {"src":"p","dst":"q","rel_type":"M","vt_s":7,"vt_e":0},
        {"src":"p","dst":"q","rel_type":"M","vt_s":9,"vt_e":15,"disc":"k"}]}))],
    )
    .unwrap();
    let snap = s.snapshot();
    let e5 = snap.versions_of(&edge("p", "q", "M", "#5"), OPEN_END);
    let ek = snap.versions_of(&edge("p", "q", "M", "k"), OPEN_END);
    let (Some(tgms_engine::Version::Edge(e5)), Some(tgms_engine::Version::Edge(ek))) =
        (e5.first(), ek.first())
    else {
        panic!("missing edges")
    };
    assert_eq!(
        (e5.eid(), e5.vt_s(), e5.vt_e()),
        ("42d905bc59975b41be81ce2a".to_string(), 7, 8)
    );
    assert_eq!(
        (ek.eid(), ek.vt_s(), ek.vt_e()),
        ("62544c6b6a60788f586d1876".to_string(), 9, 15)
    );
    for u in ["p", "q"] {
        let n = believed(&s, node(u));
        assert_eq!(
            n,
            vec![(7, OPEN_END, 2, "Node".to_string(), "{}".to_string())]
        );
    }
}

#[test]
fn tv4_d_w2_reingest_is_a_new_identity_and_explicit_disc_carves() {
    let (_d, mut s) = new_store();
    let ing = |disc: Option<&str>| {
        let mut e = json!({"src":"a","dst":"b","rel_type":"M","vt_s":10});
        if let Some(d) = disc {
            e["disc"] = json!(d);
        }
        op(json!({"op":"ingest_events","events":[e]}))
    };
    s.write_at(1, vec![ing(None)]).unwrap();
    s.write_at(2, vec![ing(None)]).unwrap();
    let snap = s.snapshot();
    for (disc, eid) in [
        ("#0", "525d5e8ec7d4615ae428838b"),
        ("#1", "de2f5c2c50d5a7388da43b40"),
    ] {
        let v = snap.versions_of(&edge("a", "b", "M", disc), OPEN_END);
        let tgms_engine::Version::Edge(e) = v[0] else {
            panic!()
        };
        assert_eq!(
            (e.eid(), e.vt_s(), e.vt_e(), v.len()),
            (eid.to_string(), 10, 11, 1)
        );
    }
    s.write_at(3, vec![ing(Some("#0"))]).unwrap();
    let h = rows(&s, edge("a", "b", "M", "#0"));
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0]["tt_e"].as_i64(), h[0]["closed_by"].as_str()),
        (Some(3), Some("ingest"))
    );
    let b = s
        .snapshot()
        .versions_of(&edge("a", "b", "M", "#0"), OPEN_END);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].to_json()["tt_s"], 3);
}

#[test]
fn tv5_clock_stats_digest_and_reopen() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let s = tv5_store(&path);
    let st = s.stats().clone();
    assert_eq!(st.n_entities, 3);
    assert_eq!(st.n_node_versions, 3);
    assert_eq!(st.n_edge_versions, 3);
    assert_eq!((st.vt_min, st.vt_max), (Some(10), Some(31)));
    assert_eq!(
        st.rel_type_counts
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        vec![("MSG", 2), ("R", 1)]
    );
    assert_eq!(st.max_out_degree, 2);
    assert_eq!((st.n_batches, st.n_failed_batches), (4, 1));
    assert_eq!((st.first_tt, st.last_tt), (Some(1000), Some(5000)));
    let want = "aef477e588a2179bb14f6a9cee561072e37fc0d42a82a336b0f565b0ab8c2066";
    assert_eq!(s.digest(), want);
    drop(s);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.digest(), want);
    assert_eq!(s.stats(), &st);
    assert_eq!(s.last_tt(), Some(5000));
}
