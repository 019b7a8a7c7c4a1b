//! Oracle kit shared by the brute-force operator tests: deterministic randomness, random
//! write workloads (corrections, retractions, interval edges, ingests), the store's rows as a
//! plain `Vec` of version rows, and the framework rules (paging, caps, certificates, errors)
//! re-implemented from the spec. New operators' oracles build on these.

use super::{canon, ops};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tgms_engine::{Store, OPEN_END};

// ---------------------------------------------------------------------------------------
// Deterministic randomness.

pub use tgms_testkit::Rng;

pub const UIDS: [&str; 6] = ["a", "b", "c", "d", "é", "e"];

/// Every metric of `graph_metric_timeseries` (operators.md §16).
pub const METRICS: [&str; 6] = [
    "node_count",
    "edge_event_count",
    "active_edge_count",
    "mean_out_degree",
    "new_node_rate",
    "reciprocity",
];
pub const RELS: [&str; 2] = ["R", "S"];

pub fn interval(r: &mut Rng) -> (i64, Value) {
    let s = r.int(0, 50);
    let e = if r.chance(20) {
        json!(OPEN_END)
    } else {
        json!(s + r.int(1, 30))
    };
    (s, e)
}

/// Small props, sometimes with floats whose canonical text survives `round9` unchanged
/// (`2.0` stays a float, `2` an int: different content).
pub fn props(r: &mut Rng) -> Value {
    if r.chance(30) {
        // A typed, weighted link of `weighted_traverse` (§25), sometimes unusable.
        let mut p =
            json!({"link_type": r.pick(&["entity", "semantic", "temporal", "causal", "friend"])});
        match r.below(6) {
            0 => {}
            1 => p["weight"] = json!("high"),
            2 => p["weight"] = json!(r.below(3)),
            _ => p["weight"] = json!(0.25 * r.below(9) as f64),
        }
        return p;
    }
    match r.below(6) {
        0 => json!({"p": r.below(3)}),
        1 => json!({"p": r.below(3) as f64}),
        2 => json!({"p": 0.125 * r.below(5) as f64, "q": "x"}),
        // Names for resolve_entities: case, non-ASCII, empty, non-string.
        3 => json!({"name": r.pick(&["Alpha", "bÉta", "", "AB", "Éa", "ph"])}),
        4 => {
            let n = [json!(7), Value::Null, json!(["a"])][r.below(3) as usize].clone();
            json!({ "name": n })
        }
        _ => json!({}),
    }
}

pub fn edge_ref(r: &mut Rng) -> Value {
    json!({"kind": "edge", "src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
        "rel_type": r.pick(&RELS), "disc": if r.chance(70) { "" } else { "x" }})
}

pub fn random_op(r: &mut Rng) -> Value {
    let (s, e) = interval(r);
    match r.below(8) {
        0 | 1 => json!({"op": "assert_node", "uid": r.pick(&UIDS), "label": r.pick(&["L", "M"]),
            "props": props(r), "vt_s": s, "vt_e": e}),
        2 | 3 => json!({"op": "assert_edge", "src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
            "rel_type": r.pick(&RELS), "disc": if r.chance(70) { "" } else { "x" },
            "props": props(r), "vt_s": s, "vt_e": e}),
        4 => {
            let target = if r.chance(50) {
                json!({"kind": "node", "uid": r.pick(&UIDS)})
            } else {
                edge_ref(r)
            };
            json!({"op": "retract", "ref": target, "t": r.int(0, 60), "reason": "ended"})
        }
        5 | 6 => {
            let target = if r.chance(50) {
                json!({"kind": "node", "uid": r.pick(&UIDS)})
            } else {
                edge_ref(r)
            };
            json!({"op": "correct", "ref": target, "props": props(r),
                "vt_s": s, "vt_e": e, "reason": "fix"})
        }
        _ => {
            let n = r.int(1, 4);
            let events: Vec<Value> = (0..n)
                .map(|_| {
                    let t = r.int(0, 50);
                    let mut ev = json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
                        "rel_type": r.pick(&RELS), "vt_s": t});
                    if r.chance(40) {
                        ev["vt_e"] = json!(t + r.int(1, 20));
                    }
                    ev
                })
                .collect();
            json!({"op": "ingest_events", "events": events})
        }
    }
}

/// Writes `batches` random batches starting after the store's last tt.
pub fn grow(s: &mut Store, r: &mut Rng, batches: usize) {
    for _ in 0..batches {
        let tt = s.last_tt().unwrap_or(0) + r.int(1, 3);
        let n = r.int(1, 4);
        let batch: Vec<Value> = (0..n).map(|_| random_op(r)).collect();
        let _ = s.write_at(tt, ops(batch)); // failed batches are part of the workload
    }
}

// ---------------------------------------------------------------------------------------
// The plain rows and the oracle.

#[derive(Clone, Debug)]
pub struct Row {
    pub node: bool,
    pub uid: String,
    pub eid: String,
    pub vid: String,
    pub src: String,
    pub dst: String,
    pub rel: String,
    pub disc: String,
    pub label: String,
    pub props: Value,
    pub source: String,
    pub provenance: Value,
    pub vt_s: i64,
    pub vt_e: i64,
    pub tt_s: i64,
    pub tt_e: i64,
    pub origin: String,
    pub reason: Value,
    pub closed_by: Value,
    pub close_reason: Value,
}

pub fn plain_rows(s: &Store) -> Vec<Row> {
    let snap = s.snapshot();
    let mut out = Vec::new();
    let objs = snap
        .all_nodes()
        .into_iter()
        .map(tgms_engine::Version::Node)
        .chain(snap.all_edges().into_iter().map(tgms_engine::Version::Edge))
        .map(|v| v.to_json());
    for o in objs {
        let st = |k: &str| o[k].as_str().unwrap_or("").to_string();
        out.push(Row {
            node: o["kind"] == "node",
            uid: st("uid"),
            eid: st("eid"),
            vid: st("vid"),
            src: st("src"),
            dst: st("dst"),
            rel: st("rel_type"),
            disc: st("disc"),
            label: st("label"),
            props: o["props"].clone(),
            source: st("source"),
            provenance: o["provenance_ref"].clone(),
            vt_s: o["vt_s"].as_i64().unwrap(),
            vt_e: o["vt_e"].as_i64().unwrap(),
            tt_s: o["tt_s"].as_i64().unwrap(),
            tt_e: o["tt_e"].as_i64().unwrap(),
            origin: st("origin"),
            reason: o["reason"].clone(),
            closed_by: o["closed_by"].clone(),
            close_reason: o["close_reason"].clone(),
        });
    }
    out
}

pub fn oracle_set_digest(keys: &[Value]) -> String {
    let mut lines: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| format!("{}\n", canon(k)).into_bytes())
        .collect();
    lines.sort();
    let mut h = Sha256::new();
    for l in lines {
        h.update(&l);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

pub fn err(code: &str, msg: String, details: Value) -> Value {
    json!({"error": code, "message": msg, "details": details})
}

pub fn unknown(uid: &str) -> Value {
    err(
        "E_NOT_FOUND",
        format!("unknown uid: {uid}"),
        json!({"uid": uid}),
    )
}

pub struct Q<'a> {
    pub args: &'a Value,
}

impl Q<'_> {
    pub fn a(&self) -> i64 {
        self.args["as_of_tt"]
            .as_i64()
            .unwrap_or(OPEN_END)
            .min(OPEN_END - 1)
    }
    pub fn limit(&self) -> usize {
        self.args["limit"].as_u64().unwrap_or(100) as usize
    }
    pub fn offset(&self) -> Result<usize, Value> {
        match &self.args["cursor"] {
            Value::Null => Ok(0),
            Value::String(c) if c.is_empty() => Ok(0),
            Value::String(c) => c
                .parse::<usize>()
                .ok()
                .filter(|_| c.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| err("E_INVALID_ARG", format!("bad cursor: '{c}'"), json!({}))),
            _ => unreachable!(),
        }
    }
}

pub fn believed(r: &Row, a: i64) -> bool {
    r.tt_s <= a && a < r.tt_e
}

pub fn registered(rows: &[Row], uid: &str) -> bool {
    rows.iter().any(|r| {
        if r.node {
            r.uid == uid
        } else {
            r.src == uid || r.dst == uid
        }
    })
}

/// Pages `rows` (already ordered) into `p` with the §6.1 rules.
pub fn page(p: &mut Map<String, Value>, rows: Vec<Value>, key: &str, q: &Q) -> Result<(), Value> {
    let off = q.offset()?;
    let keys: Vec<Value> = rows.iter().map(|r| r[key].clone()).collect();
    let total = rows.len();
    let pg: Vec<Value> = rows.into_iter().skip(off).take(q.limit()).collect();
    let end = off + pg.len();
    let trunc = end < total;
    p.insert("rows".into(), Value::Array(pg));
    p.insert("rows_total".into(), json!(total));
    p.insert("truncated".into(), json!(trunc));
    p.insert(
        "cursor".into(),
        if trunc {
            json!(end.to_string())
        } else {
            Value::Null
        },
    );
    p.insert("set_digest".into(), json!(oracle_set_digest(&keys)));
    Ok(())
}

pub fn cap(
    p: &mut Map<String, Value>,
    name: &str,
    rows: Vec<Value>,
    keys: Vec<Value>,
    q: &Q,
    flag: bool,
) -> bool {
    let total = rows.len();
    p.insert(
        name.into(),
        Value::Array(rows.into_iter().take(q.limit()).collect()),
    );
    p.insert(format!("{name}_total"), json!(total));
    if flag {
        p.insert(format!("{name}_truncated"), json!(total > q.limit()));
    }
    p.insert(
        format!("{name}_set_digest"),
        json!(oracle_set_digest(&keys)),
    );
    total > q.limit()
}

pub fn by_vt_vid(v: &mut [&Row]) {
    v.sort_by(|x, y| (x.vt_s, &x.vid).cmp(&(y.vt_s, &y.vid)));
}
