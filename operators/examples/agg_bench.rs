//! Latency of the benchmark registry's `agg.rel_bucket` query (`evaluation.md` §2.1) on a
//! store built by `tgms bench generate --scale N STORE`:
//! `cargo run --release -p tgms-operators --example agg_bench -- STORE N [REPS]`.
//! Prints the per-call latency (min and median over REPS calls) with the rayon thread count.

use serde_json::json;
use std::time::Instant;
use tgms_engine::Store;
use tgms_operators::{call_operator, CallOptions};

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(n)) = (argv.get(1), argv.get(2).and_then(|x| x.parse::<i64>().ok()))
    else {
        eprintln!("usage: agg_bench STORE N [REPS]");
        std::process::exit(2);
    };
    let reps: usize = argv.get(3).and_then(|x| x.parse().ok()).unwrap_or(15);
    let s = Store::open_read_only(std::path::Path::new(dir)).expect("open store");
    let (t0, t1) = (0i64, n);
    let span = t1 - t0;
    let args = json!({"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}],
        "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}],
        "window": {"t_a": t0, "t_b": t1}, "stride": (span / 100).max(1), "limit": 1000});
    let opts = CallOptions::default();
    let mut ms = Vec::with_capacity(reps);
    let mut digest = String::new();
    for _ in 0..reps {
        let t = Instant::now();
        let env = call_operator(s.snapshot(), "aggregate_events", &args, &opts)
            .unwrap_or_else(|e| panic!("{}", e.payload()));
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        digest = env["result_digest"].as_str().unwrap_or("").to_string();
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    println!(
        "agg.rel_bucket n={n} threads={} reps={reps}: min {:.2} ms, median {:.2} ms; result_digest {digest}",
        rayon_threads(),
        ms[0],
        ms[ms.len() / 2]
    );
}

fn rayon_threads() -> String {
    std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "default".into())
}
