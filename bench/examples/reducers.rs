//! Reducer speed over complete results (issue 21): plans whose `compute` step reads the
//! complete result of a `version_history` step listing the edge versions of a window (about
//! `ROWS` rows), timed for `median`, `topk`, a `filter` keeping the versions of the window's
//! first 1,000 µs, `count` with `group_by`, `join` and a distinct (`union` with an empty
//! `other`). For each reducer it prints the producer's unpaged call alone, the `compute` call
//! alone over the same rows given literally, and the plan's `compute` step as the executor
//! runs it (recompute of the producer, `$ref` substitution, resolved-args digest, the call,
//! the in-memory result store), split into the producer's re-run (`rerun_ms`, the trace's
//! `complete_inputs[0].wall_ms`; 0 when the plan's producer step rendered the list beside
//! its page) and the rest (`reducer_ms`), and the plan's producer step (`s1_ms`, its page,
//! and the list beside it when rendered so), all as p50 of `REPS` interleaved runs.
//!
//! Run: `nice -n 10 cargo run --release -p tgms-bench --example reducers -- [N|STORE] [REPS] [ROWS]`
//! (default N = 1,000,000 generated events, fixed clock; or the directory of a store made by
//! `tgms bench generate --scale N STORE`; REPS = 3; ROWS = 1,000,000: the window is cut so the
//! table has about that many rows, or is the whole extent when the store has fewer).
//! `REDUCERS=median,topk` in the environment times only those reducers;
//! `MAX_REDUCER_BYTES=N` sets the executor's memory budget (`max_reducer_bytes`).

use serde_json::{json, Value};
use std::time::Instant;
use tgms_operators::pipeline::{call_operator, call_operator_unpaged};
use tgms_operators::CallOptions;
use tgms_verifier::exec::{execute, record, ExecOptions, ResultStore};
use tgms_verifier::plan::Plan;

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The producer: every edge version overlapping the window (`version_history`, one row per
/// event of the generated store). `aggregate_events` cannot produce 1M rows: its groups are
/// capped at 100,000.
fn producer(t_a: i64, t_b: i64, limit: u64) -> Value {
    json!({"kind": "edge", "window": {"t_a": t_a, "t_b": t_b}, "belief": "current", "limit": limit})
}

/// The per-sender table the join reads as `other`.
fn senders(t_a: i64, t_b: i64) -> Value {
    json!({"group_by": [{"dim": "endpoint", "role": "src"}],
        "aggregates": [{"agg": "count"}], "window": {"t_a": t_a, "t_b": t_b}, "limit": 10})
}

/// The reducers timed: name and `compute` args with `input` (and `other`) left out; the
/// window starts at `t_a`.
fn reducers(t_a: i64) -> Vec<(&'static str, Value)> {
    vec![
        ("median", json!({"fn": "median", "field": "vt_s"})),
        ("topk", json!({"fn": "topk", "field": "vt_s", "k": 10})),
        (
            "filter",
            json!({"fn": "filter", "field": "vt_s", "cmp": "lt", "value": t_a + 1000}),
        ),
        ("group_by", json!({"fn": "count", "group_by": "src"})),
        (
            "join",
            json!({"fn": "join", "on": "src", "other_on": "src", "cardinality": "many_to_one"}),
        ),
        (
            "distinct",
            json!({"fn": "union", "field": "src", "other": []}),
        ),
    ]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next().unwrap_or_else(|| "1000000".into());
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let want_rows: i64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let st = tgms_bench::generate::example_store(&first, dir.path()).expect("the store");
    let snap = st.snapshot();
    let stats = snap.stats();
    let (lo, hi) = (
        stats.vt_min.expect("events"),
        stats.vt_max.expect("events") + 1,
    );
    let opts = CallOptions {
        skip_cost: true,
        ..CallOptions::default()
    };
    let rows_in = |t_b: i64| -> i64 {
        let v = call_operator(snap, "version_history", &producer(lo, t_b, 1), &opts)
            .expect("the table");
        v["rows_total"].as_i64().expect("rows_total")
    };
    // Bisect the window end for about `want_rows` rows (rows grow with the window).
    let mut t_b = hi;
    if rows_in(hi) > want_rows {
        let (mut a, mut b) = (lo + 1, hi);
        for _ in 0..12 {
            let mid = a + (b - a) / 2;
            if rows_in(mid) < want_rows {
                a = mid;
            } else {
                b = mid;
            }
        }
        t_b = b;
    }
    let full = call_operator_unpaged(snap, "version_history", &producer(lo, t_b, 10), &opts)
        .expect("the complete table");
    let rows = full["rows"].clone();
    let n_rows = rows.as_array().map_or(0, Vec::len);
    let other = call_operator_unpaged(snap, "aggregate_events", &senders(lo, t_b), &opts)
        .expect("senders")["rows"]
        .clone();
    eprintln!(
        "store: {} events, window [{lo}, {t_b}): {n_rows} rows, {} senders",
        stats.n_edge_versions,
        other.as_array().map_or(0, Vec::len)
    );
    println!(
        "{:>9} {:>9} {:>12} {:>11} {:>8} {:>13} {:>9} {:>11} {:>10}",
        "reducer",
        "rows_in",
        "producer_ms",
        "compute_ms",
        "s1_ms",
        "plan_step_ms",
        "rerun_ms",
        "reducer_ms",
        "rows_out"
    );
    let mut eopts = ExecOptions::default();
    eopts.call.skip_cost = true;
    // `MAX_REDUCER_BYTES=N` raises (or lowers) the executor's memory budget.
    if let Some(b) = std::env::var("MAX_REDUCER_BYTES")
        .ok()
        .and_then(|b| b.parse().ok())
    {
        eopts.call.ceilings.max_reducer_bytes = b;
    }
    // `REDUCERS=median,join` times only those.
    let only = std::env::var("REDUCERS").ok();
    for (name, base) in reducers(lo) {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let mut literal = base.clone();
        literal["input"] = rows.clone();
        if name == "join" {
            literal["other"] = other.clone();
        }
        let mut step_args = base.clone();
        step_args["input"] = json!({"$ref": "s1.rows"});
        if name == "join" {
            step_args["other"] = json!({"$ref": "s2.rows"});
        }
        let plan = Plan::from_json(&json!({"plan_id": format!("reducer-{name}"), "steps": [
            {"id": "s1", "op": "version_history", "args": producer(lo, t_b, 10)},
            {"id": "s2", "op": "aggregate_events", "args": senders(lo, t_b)},
            {"id": "s3", "op": "compute", "args": step_args}],
            "answer_spec": {"kind": "value", "from": "s3"}}))
        .expect("plan");
        let (mut tp, mut tc, mut ts) = (Vec::new(), Vec::new(), Vec::new());
        let (mut trr, mut tr, mut t1) = (Vec::new(), Vec::new(), Vec::new());
        let mut out_rows = Value::Null;
        // Interleaved, so drift on a shared machine hits all three alike.
        for _ in 0..reps {
            let t = Instant::now();
            let p = call_operator_unpaged(snap, "version_history", &producer(lo, t_b, 10), &opts)
                .expect("producer");
            tp.push(ms_since(t));
            assert_eq!(p["result_digest"], full["result_digest"]);
            drop(p);
            let t = Instant::now();
            let c = call_operator_unpaged(snap, "compute", &literal, &opts).expect("compute");
            tc.push(ms_since(t));
            let rs = ResultStore::memory();
            let ex = execute(&plan, snap, &rs, &eopts).expect("executed");
            let r = record(&ex.trace, "s3").expect("s3 ran");
            assert_eq!(r["status"], "ok", "{r}");
            // The plan's step computed exactly what the literal call did.
            assert_eq!(r["result_digest"], c["result_digest"]);
            let step = r["wall_ms"].as_f64().expect("wall_ms");
            let rerun = r["complete_inputs"][0]["wall_ms"].as_f64().unwrap_or(0.0);
            ts.push(step);
            t1.push(
                record(&ex.trace, "s1").expect("s1 ran")["wall_ms"]
                    .as_f64()
                    .unwrap_or(0.0),
            );
            trr.push(rerun);
            tr.push(step - rerun);
            out_rows = c
                .get("rows_total")
                .cloned()
                .unwrap_or_else(|| json!("value"));
        }
        println!(
            "{:>9} {:>9} {:>12.1} {:>11.1} {:>8.1} {:>13.1} {:>9.1} {:>11.1} {:>10}",
            name,
            n_rows,
            p50(tp),
            p50(tc),
            p50(t1),
            p50(ts),
            p50(trr),
            p50(tr),
            out_rows
        );
    }
}
