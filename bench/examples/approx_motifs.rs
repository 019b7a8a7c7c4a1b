//! The exact 36-motif census against the sampler (`count_temporal_motifs`, `mode: "sample"`,
//! ε = 5%, 95% confidence) side by side in one run: p50 times and their ratio, the achieved
//! relative error of the count and of each motif (against the exact census), the reported
//! bound, the events drawn, and how many of the 36 intervals cover the census.
//!
//! Two windows: `window` = the first `EXACT_EVENT_CAP` (5,000,000) events' worth of time or
//! the whole store when smaller, where the exact operator answers, timed as operator calls;
//! and, when the store is larger, `whole` = the whole store, where the exact operator refuses
//! (the event cap), so the census is the same kernel run directly over the same events
//! (`Snapshot::start_events` then [`count_all_ordered`]), its load included.
//!
//! Run: `nice -n 10 cargo run --release -p tgms-bench --example approx_motifs -- [N|STORE]
//! [REPS] [DELTA ...]` (default N = 1,000,000 generated events, fixed clock, where event `i`
//! has `vt_s ≈ i` µs; or the directory of a store made by `tgms bench generate --scale N`;
//! REPS = 5; δ = 1000, 10000, 100000 µs).

use serde_json::{json, Value};
use std::time::Instant;
use tgms_operators::kernels::motifs::{count_all_ordered, MotifEvent};
use tgms_operators::kernels::TieMode;
use tgms_operators::{call_operator, CallOptions};

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rel(est: f64, truth: f64) -> f64 {
    if truth == 0.0 {
        0.0
    } else {
        (est - truth).abs() / truth
    }
}

/// The 36 counts of an exact envelope, or of the kernel's matrix, by name.
type Counts = Vec<(String, f64)>;

fn names() -> impl Iterator<Item = String> {
    (1..=6).flat_map(|i| (1..=6).map(move |j| format!("M_{i}_{j}")))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next().unwrap_or_else(|| "1000000".into());
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let mut deltas: Vec<i64> = args.filter_map(|a| a.parse().ok()).collect();
    if deltas.is_empty() {
        deltas = vec![1_000, 10_000, 100_000];
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let st = tgms_bench::generate::example_store(&first, dir.path()).expect("the store");
    let snap = st.snapshot();
    let stats = snap.stats();
    let (lo, hi) = (
        stats.vt_min.expect("events"),
        stats.vt_max.expect("events") + 1,
    );
    let all = snap.start_events(lo, hi, i64::MAX);
    let cap = tgms_operators::ops::count_temporal_motifs::EXACT_EVENT_CAP;
    let cut = if all.len() > cap { all[cap].t } else { hi };
    eprintln!(
        "{} events; window [{lo}, {cut}) holds {}",
        all.len(),
        all.partition_point(|e| e.t < cut)
    );
    drop(all);
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
    // The census of the whole store by the kernel, its load included.
    let census = |delta: i64| -> (Counts, f64) {
        let t = Instant::now();
        let ev: Vec<MotifEvent> = snap
            .start_events(lo, hi, i64::MAX)
            .into_iter()
            .map(|e| MotifEvent {
                t: e.t,
                src: e.src,
                dst: e.dst,
            })
            .collect();
        let n = ev
            .iter()
            .map(|e| e.src.max(e.dst) as usize + 1)
            .max()
            .unwrap_or(0);
        let m = count_all_ordered(&ev, n, delta, TieMode::Ordered);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let counts = names().zip(m.iter().flatten().map(|&c| c as f64)).collect();
        (counts, ms)
    };
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>7} {:>12} {:>9} {:>9} {:>9} {:>17} {:>6}",
        "window",
        "delta_us",
        "exact_ms",
        "sample_ms",
        "ratio",
        "count",
        "err_count",
        "bound",
        "err_max36",
        "events_drawn",
        "cover"
    );
    let mut windows = vec![("window", cut)];
    if cut < hi {
        windows.push(("whole", hi));
    }
    for (label, end) in windows {
        let w = json!({"t_a": lo, "t_b": end});
        for &delta in &deltas {
            let exact_args = json!({"motif": "all", "delta": delta, "window": w});
            let sample_args = json!({"motif": "all", "delta": delta, "window": w,
                "mode": "sample", "epsilon": 0.05, "confidence": 0.95, "seed": 1});
            let (mut te, mut ts) = (Vec::new(), Vec::new());
            let (mut ex, mut sa): (Counts, Value) = (Vec::new(), Value::Null);
            // Interleaved, so drift on a shared machine hits both alike.
            for _ in 0..reps {
                let (counts, ms) = if end == hi && cut < hi {
                    census(delta)
                } else {
                    let (v, ms) = call(&exact_args);
                    let counts = names().map(|k| (k.clone(), v["counts"][&k].as_f64().unwrap()));
                    (counts.collect(), ms)
                };
                te.push(ms);
                ex = counts;
                let (v, ms) = call(&sample_args);
                ts.push(ms);
                sa = v;
            }
            let exact_count: f64 = ex.iter().map(|x| x.1).sum();
            let err_count = rel(sa["count"].as_f64().unwrap(), exact_count);
            // Motifs with at least 1% of the instances (the rare ones are reported by their
            // own intervals).
            let err_max = ex
                .iter()
                .filter(|(_, c)| *c >= exact_count / 100.0)
                .map(|(m, c)| rel(sa["counts"][m].as_f64().unwrap(), *c))
                .fold(0.0, f64::max);
            let covered = ex
                .iter()
                .filter(|(m, c)| {
                    let iv = &sa["intervals"][m.as_str()];
                    iv["ci_low"].as_f64().unwrap() <= *c && *c <= iv["ci_high"].as_f64().unwrap()
                })
                .count();
            let (e50, s50) = (p50(te), p50(ts));
            println!(
                "{:>6} {:>8} {:>10.1} {:>10.1} {:>7.2} {:>12} {:>9.4} {:>9.4} {:>9.4} {:>8}/{:<8} {:>3}/36",
                label,
                delta,
                e50,
                s50,
                e50 / s50,
                exact_count,
                err_count,
                sa["error_bound"]["relative"].as_f64().unwrap_or(f64::NAN),
                err_max,
                sa["sampling"]["events_sampled"],
                sa["sampling"]["events_total"],
                covered,
            );
        }
    }
}
