//! Stores and helpers shared by several engine test files.
#![allow(dead_code)]

use serde_json::json;
use tgms_engine::clock::scripted_clock;
use tgms_engine::{Op, Options, Store, Version};

fn op(v: serde_json::Value) -> Op {
    Op::from_json(&v)
}

/// TV5's four writes under a scripted clock.
pub fn tv5_store(dir: &std::path::Path) -> Store {
    let mut s = Store::create_with(
        dir,
        Options {
            clock: Some(scripted_clock(vec![1000, 1000, 1000, 5000])),
            ..Options::default()
        },
    )
    .unwrap();
    let t1 = s.write(vec![op(json!({"op":"assert_node","uid":"a","label":"N","props":{"name":"Alice"},"vt_s":0,"vt_e":100}))]).unwrap();
    let t2 = s.write(vec![op(json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","props":{"w":1},"vt_s":10,"vt_e":20}))]).unwrap();
    assert!(s
        .write(vec![op(
            json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5,"reason":"cleanup"})
        )])
        .is_err());
    let t4 = s.write(vec![op(json!({"op":"ingest_events","events":[{"src":"a","dst":"c","rel_type":"MSG","vt_s":30},{"src":"c","dst":"a","rel_type":"MSG","vt_s":30}]}))]).unwrap();
    assert_eq!((t1, t2, s.last_tt(), t4), (1000, 1001, Some(5000), 5000));
    s
}

/// Every stored row (nodes, then edges, in digest order) as its canonical row object.
pub fn rows_of(s: &Store) -> Vec<serde_json::Value> {
    let snap = s.snapshot();
    snap.all_nodes()
        .into_iter()
        .map(Version::Node)
        .chain(snap.all_edges().into_iter().map(Version::Edge))
        .map(|v| v.to_json())
        .collect()
}

/// The seeded generator of the randomized test stores (not every test file draws from it).
#[allow(unused_imports)]
pub use tgms_testkit::Rng;
