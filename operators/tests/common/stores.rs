//! The reference stores of the spec's `test-vectors.md`, shared by the operator and verifier
//! tests (the verifier includes this file by path).

use serde_json::{json, Value};
use tgms_engine::{Op, Options, Store};

pub fn new_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::create_with(
        &dir.path().join("s"),
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    (dir, s)
}

pub fn ops(v: Vec<Value>) -> Vec<Op> {
    v.iter().map(Op::from_json).collect()
}

/// TV2: tt1 assert node a [0,100) p=1; tt2 correct [40,60) p=2.
pub fn tv2() -> (tempfile::TempDir, Store) {
    let (d, mut s) = tv2_asserted();
    correct_tv2(&mut s);
    (d, s)
}

/// TV2 before its correction: tt1 assert node a [0,100) p=1.
pub fn tv2_asserted() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    s.write_at(
        1,
        ops(vec![
            json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
        ]),
    )
    .unwrap();
    (d, s)
}

/// TV2's correction at tt2: p=2 over [40,60).
pub fn correct_tv2(s: &mut Store) {
    s.write_at(2, ops(vec![json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix p over [40,60)"})])).unwrap();
}

/// TV8: interval edges in three batches.
pub fn tv8() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    s.write_at(
        1,
        ops(vec![
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":0,"vt_e":100}),
        ]),
    )
    .unwrap();
    s.write_at(
        2,
        ops(vec![
            json!({"op":"assert_edge","src":"b","dst":"c","rel_type":"R","vt_s":5,"vt_e":50}),
        ]),
    )
    .unwrap();
    s.write_at(
        3,
        ops(vec![
            json!({"op":"assert_edge","src":"a","dst":"c","rel_type":"S","vt_s":30,"vt_e":31}),
        ]),
    )
    .unwrap();
    (d, s)
}

/// TV9: one ingest of six events at tt 1.
pub fn tv9() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let ev = |a: &str, b: &str, t: i64| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t});
    s.write_at(1, ops(vec![json!({"op":"ingest_events","events":[ev("a","b",10),ev("b","c",20),ev("c","a",30),ev("a","b",40),ev("b","a",41),ev("a","b",42)]})])).unwrap();
    (d, s)
}
