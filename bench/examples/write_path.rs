//! Write-path measurements for the engine issue: durable bulk-ingest throughput of the
//! generated event stream and of CollegeMsg, and singleton durable-commit latency.
//!
//! Run: `cargo run --release -p tgms-bench --example write_path -- [N_EVENTS] [N_COMMITS]`

use std::time::Instant;
use tgms_engine::{Op, Options, Store};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let commits: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let dir = tempfile::tempdir().expect("temp dir");

    // Bulk ingest of the generator's events (evaluation.md §1.3), durable, 50k per batch.
    let events: Vec<_> = (0..n).map(|i| tgms_bench::generate::event(n, i)).collect();
    let mut s = Store::create(&dir.path().join("bulk")).expect("store");
    let t = Instant::now();
    s.ingest_events(events, "Node", &mut |_| {})
        .expect("ingest");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "bulk ingest (generated, N={n}): {:.3} s, {:.0} events/s durable",
        secs,
        n as f64 / secs
    );

    // Bulk ingest of CollegeMsg (SNAP lines `src dst seconds`), durable.
    let college = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/CollegeMsg.txt"
    );
    if let Ok(text) = std::fs::read_to_string(college) {
        let events: Vec<_> = text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let secs: i64 = f.get(2)?.parse().ok()?;
                Some(tgms_engine::Event::instant(
                    format!("n{}", f[0]),
                    format!("n{}", f[1]),
                    "MSG".into(),
                    secs * 1_000_000,
                ))
            })
            .collect();
        let n = events.len();
        let mut s = Store::create(&dir.path().join("college")).expect("store");
        let t = Instant::now();
        s.ingest_events(events, "Node", &mut |_| {})
            .expect("ingest");
        let secs = t.elapsed().as_secs_f64();
        println!(
            "bulk ingest (CollegeMsg, {n} events): {:.4} s, {:.0} events/s durable",
            secs,
            n as f64 / secs
        );
    }

    // Singleton commits: one assert_edge per batch, durable and not.
    for durable in [true, false] {
        let mut s = Store::create_with(
            &dir.path().join(format!("single-{durable}")),
            Options {
                no_sync: !durable,
                ..Options::default()
            },
        )
        .expect("store");
        let mut lat = Vec::with_capacity(commits);
        for i in 0..commits {
            let op = Op::from_json(&serde_json::json!({
                "op": "assert_edge", "src": format!("u{}", i % 97), "dst": format!("u{}", i % 89),
                "rel_type": "R", "props": {"i": i}, "vt_s": i, "vt_e": i + 10}));
            let t = Instant::now();
            s.write(vec![op]).expect("write");
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "singleton commit ({}): p50 {:.1} µs, p95 {:.1} µs, p99 {:.1} µs over {commits}",
            if durable {
                "durable, fdatasync"
            } else {
                "no fsync"
            },
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.95),
            pct(&mut lat, 0.99)
        );
    }
}
