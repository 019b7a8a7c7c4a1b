//! Benchmark: all 36 δ-temporal motif counts on CollegeMsg from loaded events.
//!
//! `cargo run --release -p tgms-operators --example motif_bench -- [path] [reps]`
//! (default path `/work/shared/data/CollegeMsg.txt`: `src dst unix_seconds`, header line;
//! t = seconds·10^6). Prints p50/min/max per δ and tie mode, and the matrices' totals.

use std::time::Instant;
use tgms_operators::kernels::motifs::{count_all, count_motif, matrix_total, Motif, NamedMotif};
use tgms_operators::kernels::{TEdge, TieMode};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "/work/shared/data/CollegeMsg.txt".to_string());
    let reps: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(21);
    let text = std::fs::read_to_string(&path).expect("read dataset");
    let mut raw = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 {
            continue;
        }
        let (Ok(s), Ok(d), Ok(t)) = (
            f[0].parse::<u64>(),
            f[1].parse::<u64>(),
            f[2].parse::<i64>(),
        ) else {
            continue; // header
        };
        raw.push((s, d, t));
    }
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
    println!(
        "{}: {} events, {} nodes, rayon threads {}",
        path,
        events.len(),
        ids.len(),
        rayon::current_num_threads()
    );
    for (name, delta) in [("1h", 3_600_000_000i64), ("1d", 86_400_000_000i64)] {
        for tie in [TieMode::Ordered, TieMode::Strict] {
            let mut times = Vec::with_capacity(reps);
            let mut m = [[0u64; 6]; 6];
            for _ in 0..reps {
                let t0 = Instant::now();
                m = count_all(&events, delta, tie);
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "delta {name} {tie:?}: p50 {:.2} ms  min {:.2} ms  max {:.2} ms  total {}",
                times[reps / 2],
                times[0],
                times[reps - 1],
                matrix_total(&m)
            );
            for row in &m {
                println!("    {row:?}");
            }
        }
        // Breakdown by pass (each call sorts and indexes on its own), and the named motifs.
        let p50 = |f: &dyn Fn() -> u64| {
            let mut times = Vec::with_capacity(reps);
            let mut c = 0;
            for _ in 0..reps {
                let t0 = Instant::now();
                c = f();
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            (times[reps / 2], c)
        };
        let tie = TieMode::Ordered;
        for (label, motif) in [
            ("pairs only (M_5_1)", Motif::Catalogue(5, 1)),
            ("stars only (M_1_1)", Motif::Catalogue(1, 1)),
            ("triangles only (M_1_3)", Motif::Catalogue(1, 3)),
            ("M_2node_pingpong", Motif::Named(NamedMotif::Pingpong2)),
            ("M_path_3", Motif::Named(NamedMotif::Path3)),
            ("M_star_out_3", Motif::Named(NamedMotif::StarOut3)),
            (
                "M_triangle_acyclic_1",
                Motif::Named(NamedMotif::TriangleAcyclic1),
            ),
            (
                "M_triangle_cyclic",
                Motif::Named(NamedMotif::TriangleCyclic),
            ),
        ] {
            let (ms, c) = p50(&|| count_motif(&events, delta, tie, motif));
            println!("  delta {name} {label}: p50 {ms:.2} ms  count {c}");
        }
    }
}
