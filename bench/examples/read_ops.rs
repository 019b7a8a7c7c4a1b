//! Read-path latency of the traversal and pattern operators on the generated store: the
//! registry queries `reach.window`, `paths.k`, `coactive.narrow`, `motif.filtered` (and our
//! `wtrav.seed`, `motif.all36`) of the spec's `evaluation.md` §2.1, each called through the full
//! pipeline (`call_operator`, default ceilings) `REPS` times; prints p50 / min / max in ms and
//! the registry answer summary.
//!
//! Run: `cargo run --release -p tgms-bench --example read_ops -- [N] [REPS]`
//! (the store is built by the generator of `tgms bench generate --scale N`, fixed clock).

use serde_json::{json, Value};
use std::time::Instant;
use tgms_operators::{call_operator, CallOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    let st =
        tgms_bench::generate::scratch_store(&dir.path().join("s"), n).expect("generated store");
    eprintln!(
        "generated N={n} in {:.1}s, digest {}",
        t.elapsed().as_secs_f64(),
        st.digest()
    );
    let (t0, t1) = (0i64, n as i64);
    let span = t1 - t0;
    let mid = t0 + span / 2;
    let filter: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
    let queries: Vec<(&str, &str, Value)> = vec![
        (
            "reach.window",
            "temporal_reachability",
            json!({"src": "n1", "window": {"t_a": t0, "t_b": t0 + span / 10}}),
        ),
        (
            "paths.k",
            "temporal_paths",
            json!({"src": "n1", "dst": "n2", "window": {"t_a": t0, "t_b": t0 + span / 4}, "k": 3, "max_hops": 3}),
        ),
        (
            "coactive.narrow",
            "co_active",
            json!({"a_spec": {"src": "n1"}, "b_spec": {"src": "n2"}, "allen_relation": {"relation": "overlaps"}}),
        ),
        (
            "motif.filtered",
            "count_temporal_motifs",
            json!({"motif": "M_triangle_cyclic", "delta": span / 50, "window": {"t_a": t0, "t_b": t1}, "node_filter": filter}),
        ),
        (
            "wtrav.seed",
            "weighted_traverse",
            json!({"seed": "n1", "t": mid, "max_depth": 2, "direction": "both"}),
        ),
        (
            "motif.all36",
            "count_temporal_motifs",
            json!({"motif": "all", "delta": 3600000000i64, "window": {"t_a": t0, "t_b": t1}}),
        ),
    ];
    let snap = st.snapshot();
    for (id, op, a) in queries {
        let mut ms = Vec::new();
        let mut last = Value::Null;
        for _ in 0..reps {
            let t = Instant::now();
            last = match call_operator(snap, op, &a, &CallOptions::default()) {
                Ok(v) => v,
                Err(e) => e.payload(),
            };
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(|x, y| x.total_cmp(y));
        let summary = last
            .get("error")
            .or(last.get("rows_total"))
            .or(last.get("count"))
            .cloned()
            .unwrap_or(Value::Null);
        println!(
            "{id:16} p50 {:9.2} ms  min {:9.2}  max {:9.2}  ({reps} runs)  answer {summary}",
            ms[ms.len() / 2],
            ms[0],
            ms[ms.len() - 1]
        );
    }
}
