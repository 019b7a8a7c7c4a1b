//! The exact 36-motif census against the sampler (`count_temporal_motifs`, `mode: "sample"`,
//! ε = 5%, 95% confidence) on the generated store, side by side in one run: p50 times and
//! their ratio, the achieved relative error of the count and of each motif (against the
//! exact census), the reported bound and the blocks sampled, for several δ (the sampler's
//! blocks are δ long, so δ sets how many there are to sample from).
//!
//! Run: `nice -n 10 cargo run --release -p tgms-bench --example approx_motifs -- [N] [REPS]`
//! (default N = 1,000,000, REPS = 5; the store is built by the generator of
//! `tgms bench generate --scale N`, fixed clock, where event `i` has `vt_s ≈ i` µs).

use serde_json::{json, Value};
use std::time::Instant;
use tgms_operators::{call_operator, CallOptions};

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    let st =
        tgms_bench::generate::scratch_store(&dir.path().join("s"), n).expect("generated store");
    eprintln!(
        "generated N={n} in {:.1}s, digest {}",
        t.elapsed().as_secs_f64(),
        st.digest()
    );
    let snap = st.snapshot();
    let stats = snap.stats();
    let w = json!({"t_a": stats.vt_min, "t_b": stats.vt_max.map(|x| x + 1)});
    // No ceilings: both answers are measured whatever their estimates.
    let opts = CallOptions {
        skip_cost: true,
        ..CallOptions::default()
    };
    let call = |a: &Value| -> (Value, f64) {
        let t = Instant::now();
        let v = call_operator(snap, "count_temporal_motifs", a, &opts).expect("answered");
        (v, t.elapsed().as_secs_f64() * 1e3)
    };
    println!(
        "{:>8} {:>10} {:>10} {:>7} {:>12} {:>9} {:>9} {:>9} {:>13}",
        "delta_us",
        "exact_ms",
        "sample_ms",
        "ratio",
        "count",
        "err_count",
        "bound",
        "err_max36",
        "blocks"
    );
    for delta in [10i64, 100, 1_000] {
        let exact_args = json!({"motif": "all", "delta": delta, "window": w});
        let sample_args = json!({"motif": "all", "delta": delta, "window": w, "mode": "sample",
            "epsilon": 0.05, "confidence": 0.95, "seed": 1});
        let (mut te, mut ts) = (Vec::new(), Vec::new());
        let (mut ex, mut sa) = (Value::Null, Value::Null);
        // Interleaved, so drift on a shared machine hits both alike.
        for _ in 0..reps {
            let (v, ms) = call(&exact_args);
            te.push(ms);
            ex = v;
            let (v, ms) = call(&sample_args);
            ts.push(ms);
            sa = v;
        }
        let exact_count = ex["count"].as_f64().unwrap();
        let rel = |est: f64, truth: f64| {
            if truth == 0.0 {
                0.0
            } else {
                (est - truth).abs() / truth
            }
        };
        let err_count = rel(sa["count"].as_f64().unwrap(), exact_count);
        // Motifs with at least 1% of the instances (the rare ones are reported separately
        // by their own intervals).
        let err_max = ex["counts"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, c)| c.as_f64().unwrap() >= exact_count / 100.0)
            .map(|(m, c)| rel(sa["counts"][m].as_f64().unwrap(), c.as_f64().unwrap()))
            .fold(0.0, f64::max);
        let covered = ex["counts"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(m, c)| {
                let iv = &sa["intervals"][m.as_str()];
                let c = c.as_u64().unwrap();
                iv["ci_low"].as_u64().unwrap() <= c && c <= iv["ci_high"].as_u64().unwrap()
            })
            .count();
        let (e50, s50) = (p50(te), p50(ts));
        println!(
            "{:>8} {:>10.1} {:>10.1} {:>7.2} {:>12} {:>9.4} {:>9.4} {:>9.4} {:>6}/{:<6}  intervals covering the census: {covered}/36",
            delta,
            e50,
            s50,
            e50 / s50,
            exact_count,
            err_count,
            sa["error_bound"]["relative"].as_f64().unwrap_or(f64::NAN),
            err_max,
            sa["sampling"]["blocks_sampled"],
            sa["sampling"]["blocks_total"],
        );
    }
}
