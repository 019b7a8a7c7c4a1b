//! Open-path measurements for the segment-store issue, side by side in one run: opening a
//! store from its segments (+ log tail) versus replaying its whole log, and the first point
//! lookup after the open.
//!
//! Run: `cargo run --release -p tgms-bench --example open_path -- STORE [UID]`

use std::time::Instant;
use tgms_engine::{Identity, Options, Store};

fn open(dir: &std::path::Path, whole: bool) -> (Store, f64) {
    let t = Instant::now();
    let s = Store::open_with(
        dir,
        Options {
            read_only: true,
            replay_whole_log: whole,
            ..Options::default()
        },
    )
    .expect("open");
    (s, t.elapsed().as_secs_f64())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("STORE"));
    let uid = args.next().unwrap_or_else(|| "n1".into());
    let (s, seg_s) = open(&dir, false);
    let t = Instant::now();
    let v = s
        .snapshot()
        .versions_of(&Identity::Node(uid.clone()), tgms_engine::OPEN_END);
    let out = s.snapshot().out_edges(&uid, None, tgms_engine::OPEN_END);
    let lookup_us = t.elapsed().as_secs_f64() * 1e6;
    println!(
        "segments: {} ; edge versions {}",
        s.segments().len(),
        s.stats().n_edge_versions
    );
    println!(
        "open from segments + log tail: {seg_s:.3} s; first lookup of {uid} ({} versions, {} out-edges): {lookup_us:.0} µs",
        v.len(),
        out.len()
    );
    drop(s);
    let (w, whole_s) = open(&dir, true);
    drop(w);
    println!(
        "open by replaying the whole log: {whole_s:.3} s; ratio segments/replay = {:.3}",
        seg_s / whole_s
    );
}
