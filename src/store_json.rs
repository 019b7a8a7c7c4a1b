//! The JSON of the store-level commands shared by the CLI and the Python package: `tgms
//! stats --json`, `tgms history --format json`, `tgms verify`, and where `tgms plan run`
//! keeps its results and traces. One implementation, so both surfaces print the same object.

use serde_json::{json, Value};
use std::path::Path;
use tgms_engine::{Error, Identity, Store, Version};
use tgms_verifier::{claims, exec};

/// `tgms stats --json` (without the `_utc` companions the CLI adds for people).
pub fn stats_json(st: &Store) -> Result<Value, Error> {
    let s = st.stats();
    let (total, log) = st.disk_bytes()?;
    Ok(json!({
        "n_entities": s.n_entities, "n_node_versions": s.n_node_versions,
        "n_edge_versions": s.n_edge_versions, "vt_min": s.vt_min, "vt_max": s.vt_max,
        "rel_type_counts": s.rel_type_counts, "max_out_degree": s.max_out_degree,
        "first_tt": s.first_tt, "last_tt": s.last_tt, "n_batches": s.n_batches,
        "n_failed_batches": s.n_failed_batches, "disk_bytes": {"total": total, "log": log},
        "layout": {"segments": st.segments().len(), "mapped": st.is_lazy()},
    }))
}

/// A version's JSON with `ingestion_lag_us = tt_s - vt_s`.
fn with_lag(v: Value) -> Value {
    let mut v = v;
    if let (Some(t), Some(s)) = (v["tt_s"].as_i64(), v["vt_s"].as_i64()) {
        v["ingestion_lag_us"] = json!(t - s);
    }
    v
}

/// `tgms history UID --format json`: every stored version of node `uid` (believed and
/// closed) ordered by `(tt_s, vt_s, vid)`, and with `edges` those of the edges touching it.
/// `Err` is the `E_NOT_FOUND` payload of an unknown uid.
pub fn history_json(st: &Store, uid: &str, edges: bool) -> Result<Value, Value> {
    let snap = st.snapshot();
    if !snap.has_uid(uid) {
        return Err(json!({"error": "E_NOT_FOUND",
            "message": format!("unknown uid: {uid}"), "details": {"uid": uid}}));
    }
    let mut rows: Vec<Version> = snap.history_of(&Identity::Node(uid.to_string()));
    let mut rows_json: Vec<(i64, i64, String, Value)> = rows
        .drain(..)
        .map(|v| {
            let j = v.to_json();
            (
                j["tt_s"].as_i64().unwrap_or(0),
                j["vt_s"].as_i64().unwrap_or(0),
                j["vid"].as_str().unwrap_or("").to_string(),
                with_lag(j),
            )
        })
        .collect();
    rows_json.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
    let mut o = json!({"uid": uid, "rows": rows_json.into_iter().map(|r| r.3).collect::<Vec<_>>()});
    if edges {
        let e: Vec<Value> = snap
            .edge_history_touching(uid)
            .into_iter()
            .map(|e| with_lag(Version::Edge(e).to_json()))
            .collect();
        o["edges"] = Value::Array(e);
    }
    Ok(o)
}

/// Where `tgms plan run` keeps its envelopes and trace: the store's result store, or — when
/// the store directory cannot be written (a read-only mount, another user's store) —
/// memory, said on stderr, so the plan still runs and prints its answer (the trace is then
/// not kept for `tgms view` / `tgms verify`; `--trace-out` still writes it).
pub fn plan_results(store: &Path) -> exec::ResultStore {
    let writable = ["results", "args", "traces"].iter().all(|d| {
        std::fs::create_dir_all(store.join(d)).is_ok() && {
            let probe = store.join(d).join(".tgms-write-probe");
            let ok = std::fs::write(&probe, b"").is_ok();
            let _ = std::fs::remove_file(&probe);
            ok
        }
    });
    if writable {
        exec::ResultStore::in_dir(store)
    } else {
        eprintln!(
            "note: {} is not writable: results and the trace are kept in memory only \
             (use --trace-out to keep the trace)",
            store.display()
        );
        exec::ResultStore::memory()
    }
}

/// `tgms verify`: the claim verifier's report on `answer` against trace `trace` (a trace
/// object, e.g. from a file), with the gated answer and its metrics.
pub fn verify_json(st: &Store, rs: &exec::ResultStore, trace: &Value, answer: &Value) -> Value {
    let ctx = claims::Ctx {
        trace,
        results: rs,
        snap: Some(st.snapshot()),
        honor_truncation: true,
    };
    let mut first = claims::verify(&ctx, answer);
    let (gated, second) = claims::gate(&ctx, answer);
    first["gated_answer_object"] = gated;
    first["gated_metrics"] = second["metrics"].clone();
    first
}

/// The `E_NOT_FOUND` payload of a trace id the result store does not hold.
pub fn unknown_trace(trace: &str) -> Value {
    json!({"error": "E_NOT_FOUND",
        "message": format!("unknown trace '{trace}'"), "details": {"trace": trace}})
}
