//! Benchmark (issue 21 item 1): `compute` reducers over the complete result of a paged step
//! of N rows (default 1,000,000). A store of N generated events is written; then a plan
//! pages `version_history` (kind edge, 100 rows) and reduces its complete result with
//! `count`, `median` of `vt_s` and `max` of `vt_s`. Prints the wall time of the plan and of
//! each step (the first reducer pays the unpaged recomputation; the others reuse it).
//!
//! `cargo run --release -p tgms-verifier --example complete_reducers -- [N] [DIR]`

use serde_json::{json, Value};
use std::time::Instant;
use tgms_engine::{Options, Store};
use tgms_verifier::exec::{execute, ExecOptions, ResultStore};
use tgms_verifier::plan::Plan;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(1_000_000);
    let dir = std::env::args()
        .nth(2)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("tgms-complete-reducers-{n}")));
    let _ = std::fs::remove_dir_all(&dir);
    let t0 = Instant::now();
    let mut s = Store::create_with(
        &dir,
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .expect("create store");
    // 2,000 accounts, one event per 10 s; deterministic.
    let mut r = tgms_testkit::Rng::new(0x2121);
    let mut next = move || r.next_u64();
    let base: i64 = 1_082_000_000_000_000;
    let ids: Vec<usize> = (0..n).collect();
    for (tt, chunk) in (1..).zip(ids.chunks(tgms_engine::op::INGEST_CHUNK)) {
        let events: Vec<Value> = chunk
            .iter()
            .map(|&i| {
                json!({"src": format!("a{}", next() % 2000), "dst": format!("a{}", next() % 2000),
                    "rel_type": "M", "vt_s": base + i as i64 * 10_000_000})
            })
            .collect();
        let op = tgms_engine::Op::from_json(&json!({"op": "ingest_events", "events": events}));
        s.write_at(tt, vec![op]).expect("write");
    }
    s.compact().expect("compact");
    eprintln!(
        "store of {n} events written in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let window = json!({"t_a": base, "t_b": base + n as i64 * 10_000_000});
    let rows = json!({"$ref": "s1.rows"});
    let p = json!({"plan_id": "complete-reducers", "steps": [
        {"id": "s1", "op": "version_history", "args": {"kind": "edge", "window": window, "limit": 100}},
        {"id": "s2", "op": "compute", "args": {"fn": "count", "input": rows}},
        {"id": "s3", "op": "compute", "args": {"fn": "median", "input": rows, "field": "vt_s"}},
        {"id": "s4", "op": "compute", "args": {"fn": "max", "input": rows, "field": "vt_s"}}],
        "answer_spec": {"kind": "count", "from": "s2.value"}});
    let plan = Plan::from_json(&p).expect("plan");
    for run in 0..2 {
        let t = Instant::now();
        let ex = execute(
            &plan,
            s.snapshot(),
            &ResultStore::memory(),
            &ExecOptions::default(),
        )
        .expect("execute");
        let wall = t.elapsed().as_secs_f64();
        let steps: Vec<String> = ex.trace["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {} {} ms {}",
                    r["step_id"],
                    r["status"],
                    r["wall_ms"],
                    r.get("error").map(|e| e.to_string()).unwrap_or_default()
                )
            })
            .collect();
        println!(
            "run {run}: n = {n}, answer = {}, ok = {}, plan wall {:.3} s; {}",
            ex.trace["answer"],
            ex.trace["ok"],
            wall,
            steps.join("; ")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
