//! Benchmark: temporal reachability from every node of CollegeMsg (direction both), without
//! and with a wait cap, via `reachability_many`.
//!
//! `cargo run --release -p tgms-operators --example reach_bench -- [path]`

use std::time::Instant;
use tgms_operators::kernels::reach::{reachability_many, Direction, ReachIndex};
use tgms_operators::kernels::{Span, TEdge};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/work/shared/data/CollegeMsg.txt".to_string());
    let text = std::fs::read_to_string(&path).expect("read dataset");
    let raw: Vec<(u64, u64, i64)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.first()?.parse().ok()?,
                f.get(1)?.parse().ok()?,
                f.get(2)?.parse().ok()?,
            ))
        })
        .collect();
    let mut ids: Vec<u64> = raw.iter().flat_map(|&(s, d, _)| [s, d]).collect();
    ids.sort_unstable();
    ids.dedup();
    let id = |x: u64| ids.binary_search(&x).unwrap() as u32;
    let events: Vec<TEdge> = raw
        .iter()
        .enumerate()
        .map(|(k, &(s, d, t))| {
            let mut eid = [0u8; 12];
            eid[4..].copy_from_slice(&(k as u64).to_be_bytes());
            TEdge {
                src: id(s),
                dst: id(d),
                t: t * 1_000_000,
                t_end: t * 1_000_000 + 1,
                eid,
            }
        })
        .collect();
    let t_a = events.iter().map(|e| e.t).min().unwrap();
    let t_b = events.iter().map(|e| e.t).max().unwrap() + 1;
    let n = ids.len();
    let spans: Vec<Span> = events.iter().map(Span::from).collect();
    let ix = ReachIndex::new(&spans, n, t_a, t_b);
    let sources: Vec<u32> = (0..n as u32).collect();
    for (label, wait, budget) in [
        ("no wait cap", None, None),
        (
            "wait <= 1 h, budget 500000",
            Some(3_600_000_000i64),
            Some(500_000u64),
        ),
    ] {
        let t0 = Instant::now();
        let res = reachability_many(&ix, &sources, Direction::Both, wait, budget);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let pairs: usize = res
            .iter()
            .map(|r| r.as_ref().map(|r| r.forward.len()).unwrap_or(0))
            .sum();
        let units: u64 = res
            .iter()
            .map(|r| r.as_ref().map(|r| r.units).unwrap_or(0))
            .sum();
        let refused = res.iter().filter(|r| r.is_err()).count();
        println!(
            "{label}: {n} sources, both directions, {ms:.1} ms, forward-reachable pairs {pairs}, units {units}, refused {refused}"
        );
    }
}
