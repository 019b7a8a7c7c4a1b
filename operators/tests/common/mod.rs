//! Shared fixtures of the operator tests: the reference stores of the spec's `test-vectors.md` and
//! a call helper.
#![allow(dead_code)]

pub mod kit;
pub mod patterns_oracle;
pub mod stores;

pub use stores::*;

use serde_json::{json, Value};
use tgms_engine::Store;
use tgms_operators::{call_operator, CallOptions};

/// Envelope or error payload of one call with default ceilings.
pub fn call(s: &Store, op: &str, args: Value) -> Value {
    match call_operator(s.snapshot(), op, &args, &CallOptions::default()) {
        Ok(v) => v,
        Err(e) => e.payload(),
    }
}

pub fn payload(env: &Value) -> Value {
    tgms_operators::pipeline::payload_of(env)
}

pub fn canon(v: &Value) -> String {
    tgms_engine::canon::to_string(v)
}

/// The incident store of `evaluation.md` §6.1 (TV19).
pub fn incident() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    const OPEN: i64 = tgms_engine::OPEN_END;
    let t0 = 1761955200000000i64;
    let node = |uid: &str, label: &str, props: Value, vt_s: i64, reason: &str| json!({"op":"assert_node","uid":uid,"label":label,"props":props,"vt_s":vt_s,"vt_e":OPEN,"reason":reason});
    let edge = |src: &str,
                dst: &str,
                rel: &str,
                props: Value,
                vt_s: i64,
                vt_e: i64,
                reason: &str| {
        json!({"op":"assert_edge","src":src,"dst":dst,"rel_type":rel,"props":props,"vt_s":vt_s,"vt_e":vt_e,"reason":reason})
    };
    let retract = |dst: &str, rel: &str, t: i64, reason: &str| json!({"op":"retract","ref":{"kind":"edge","src":"checkout-api","dst":dst,"rel_type":rel,"disc":""},"t":t,"reason":reason});
    let r0 = "initial CMDB import";
    s.write_at(
        1767607200000000,
        ops(vec![
            node(
                "checkout-api",
                "Service",
                json!({"name": "Checkout API", "tier": "critical"}),
                t0,
                r0,
            ),
            node(
                "instance:t3.large",
                "InstanceType",
                json!({"name": "t3.large", "vcpu": 2, "memory_gib": 8}),
                t0,
                r0,
            ),
            node(
                "instance:m5.xlarge",
                "InstanceType",
                json!({"name": "m5.xlarge", "vcpu": 4, "memory_gib": 16}),
                t0,
                r0,
            ),
            node(
                "replicas:3",
                "ConfigValue",
                json!({"name": "min replicas 3"}),
                t0,
                r0,
            ),
            node(
                "replicas:4",
                "ConfigValue",
                json!({"name": "min replicas 4"}),
                t0,
                r0,
            ),
            node(
                "dbpool:50",
                "ConfigValue",
                json!({"name": "db pool size 50"}),
                t0,
                r0,
            ),
            edge(
                "checkout-api",
                "instance:t3.large",
                "HAS_INSTANCE_TYPE",
                json!({}),
                t0,
                OPEN,
                r0,
            ),
            edge(
                "checkout-api",
                "replicas:3",
                "HAS_MIN_REPLICAS",
                json!({}),
                t0,
                OPEN,
                r0,
            ),
            edge(
                "checkout-api",
                "dbpool:50",
                "USES_DB_POOL",
                json!({}),
                t0,
                OPEN,
                r0,
            ),
        ]),
    )
    .unwrap();
    let r1 = "CHG-2104: raise min replicas from 3 to 4 ahead of the spring promotion";
    s.write_at(
        1771585500000000,
        ops(vec![
            retract("replicas:3", "HAS_MIN_REPLICAS", 1771585200000000, r1),
            edge(
                "checkout-api",
                "replicas:4",
                "HAS_MIN_REPLICAS",
                json!({"change": "CHG-2104"}),
                1771585200000000,
                OPEN,
                r1,
            ),
        ]),
    )
    .unwrap();
    let r2 = "CHG-2291: resize checkout-api from t3.large to m5.xlarge";
    s.write_at(
        1773220500000000,
        ops(vec![
            retract(
                "instance:t3.large",
                "HAS_INSTANCE_TYPE",
                1773219600000000,
                r2,
            ),
            edge(
                "checkout-api",
                "instance:m5.xlarge",
                "HAS_INSTANCE_TYPE",
                json!({"change": "CHG-2291"}),
                1773219600000000,
                OPEN,
                r2,
            ),
        ]),
    )
    .unwrap();
    let r3 = "pager alert";
    s.write_at(
        1773562320000000,
        ops(vec![
            node(
                "INC-4711",
                "Incident",
                json!({"name": "Checkout outage", "severity": "SEV1"}),
                1773561600000000,
                r3,
            ),
            edge(
                "INC-4711",
                "checkout-api",
                "AFFECTED",
                json!({}),
                1773561600000000,
                1773567600000000,
                r3,
            ),
        ]),
    )
    .unwrap();
    let r4 = "postmortem INC-4711: deploy log shows CHG-2291 completed 2026-03-10T14:30Z, not 2026-03-11T09:00Z";
    s.write_at(1773655200000000, ops(vec![
        json!({"op":"correct","ref":{"kind":"edge","src":"checkout-api","dst":"instance:m5.xlarge","rel_type":"HAS_INSTANCE_TYPE","disc":""},
               "props":{"change": "CHG-2291", "evidence": "deploy-log"},"vt_s":1773153000000000i64,"vt_e":OPEN,"reason":r4}),
        retract("instance:t3.large", "HAS_INSTANCE_TYPE", 1773153000000000, r4),
    ])).unwrap();
    let r5 = "CHG-2320: roll back checkout-api to t3.large after INC-4711";
    s.write_at(
        1773673500000000,
        ops(vec![
            retract(
                "instance:m5.xlarge",
                "HAS_INSTANCE_TYPE",
                1773673200000000,
                r5,
            ),
            edge(
                "checkout-api",
                "instance:t3.large",
                "HAS_INSTANCE_TYPE",
                json!({}),
                1773673200000000,
                OPEN,
                r5,
            ),
        ]),
    )
    .unwrap();
    (d, s)
}
