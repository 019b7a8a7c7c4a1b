//! Registry-query latency of `evaluation.md` §2.1 for this crate's series operators
//! (measurement only, ignored; no timing assertion). Build a store with
//! `tgms bench generate --scale 1000000 DIR`, then run
//! `TGMS_BENCH_STORE=DIR cargo test --release -p tgms-operators --test registry_latency -- --ignored --nocapture`.
//! Synthetic stores use `t0 = 0`, `t1 = N` (§2): pass `TGMS_BENCH_SCALE=N` (default 1,000,000).

use serde_json::json;
use std::time::Instant;
use tgms_operators::{call_operator, CallOptions};

#[test]
#[ignore]
fn registry_queries_of_the_series_operators() {
    let Some(dir) = std::env::var_os("TGMS_BENCH_STORE") else {
        println!("TGMS_BENCH_STORE not set; nothing measured");
        return;
    };
    let n: i64 = std::env::var("TGMS_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let s = tgms_engine::Store::open_read_only(std::path::Path::new(&dir)).unwrap();
    let (t0, t1) = (0i64, n);
    let span = t1 - t0;
    let mid = t0 + span / 2;
    let stride = (span / 100).max(1);
    let w = json!({"t_a": t0, "t_b": t1});
    let calls = [
        (
            "series.count",
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": w, "stride": stride}),
        ),
        (
            "burst.zscore",
            "burst_detection",
            json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": stride, "method": "zscore", "params": {"z": 3.0}}),
        ),
        (
            "nbr.evolution",
            "neighborhood_evolution",
            json!({"uid": "n1", "t1": mid, "t2": mid + span / 10}),
        ),
        ("resolve.substr", "resolve_entities", json!({"query": "n1"})),
    ];
    for (id, op, args) in calls {
        let opts = CallOptions::default();
        let e = call_operator(s.snapshot(), op, &args, &opts).unwrap();
        let mut samples: Vec<f64> = (0..15)
            .map(|_| {
                let t = Instant::now();
                let _ = call_operator(s.snapshot(), op, &args, &opts).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        println!(
            "{id:<15} {op:<24} median {:>8.3} ms  min {:>8.3} ms  result_digest {}",
            samples[samples.len() / 2],
            samples[0],
            &e["result_digest"].as_str().unwrap()[..16]
        );
    }
}
