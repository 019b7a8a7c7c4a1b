//! Test support for the evaluation campaign tests: a small deterministic store written at
//! explicit transaction times (so suites over it are byte-stable), with its raw events for
//! brute-force expectations, and the shared-data locator.
#![allow(dead_code)]

use serde_json::json;
use std::path::{Path, PathBuf};
use tgms_engine::{Op, Options, Store};

/// Start of the small store's valid time (2024-01-01 00:00 UTC), µs.
pub const T0_US: i64 = 1_704_067_200_000_000;
/// First transaction time of the small store, µs.
pub const TT0_US: i64 = 1_710_000_000_000_000;
pub const N_NODES: usize = 24;
pub const N_EVENTS: usize = 480;

/// One raw event `(src, dst, vt_s)`.
pub type Ev = (String, String, i64);

/// The events of the small store: distinct instants, 1–2 hours apart, over 24 nodes.
pub fn small_events() -> Vec<Ev> {
    let mut t = T0_US;
    (0..N_EVENTS)
        .map(|i| {
            let s = (i * 7 + i / 13) % N_NODES;
            let d = (s + 1 + (i * 11) % (N_NODES - 1)) % N_NODES;
            t += 3_600_000_000 + ((i % 5) as i64) * 600_000_000;
            (format!("u{s:02}"), format!("u{d:02}"), t)
        })
        .collect()
}

/// Creates the small store in `dir`: two batches of events at explicit transaction times.
pub fn small_store(dir: &Path) -> Store {
    let mut st = Store::create_with(
        dir,
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    let evs = small_events();
    for (k, chunk) in evs.chunks(N_EVENTS / 2).enumerate() {
        let events: Vec<_> = chunk
            .iter()
            .map(|(s, d, t)| json!({"src": s, "dst": d, "rel_type": "MSG", "vt_s": t}))
            .collect();
        let op = Op::parse(&json!({"op": "ingest_events", "events": events})).unwrap();
        st.write_at(TT0_US + k as i64 * 1_000_000, vec![op])
            .unwrap();
    }
    st
}

/// `../shared/data` beside the checkout (absent on CI: tests that need it skip).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

/// The `tgms` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tgms")
}

/// `tgms init DIR` then `tgms ingest DIR ARGS…`.
pub fn cli_store(dir: &Path, ingest_args: &[&str]) {
    let ok = std::process::Command::new(bin())
        .arg("init")
        .arg(dir)
        .output()
        .unwrap();
    assert!(ok.status.success(), "init");
    let out = std::process::Command::new(bin())
        .arg("ingest")
        .arg(dir)
        .args(ingest_args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ingest {ingest_args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Earliest-arrival reachability by brute force over raw instantaneous events (distinct
/// instants): the uids `src` reaches inside `[t_a, t_b)`, without `src`.
pub fn reach_brute(
    evs: &[Ev],
    src: &str,
    t_a: i64,
    t_b: i64,
) -> std::collections::BTreeSet<String> {
    let mut sorted: Vec<&Ev> = evs.iter().filter(|e| e.2 >= t_a && e.2 < t_b).collect();
    sorted.sort_by_key(|e| e.2);
    let mut reached = std::collections::BTreeMap::new();
    reached.insert(src.to_string(), t_a);
    for (s, d, t) in sorted {
        if reached.get(s).is_some_and(|&at| at <= *t) && !reached.contains_key(d) {
            reached.insert(d.clone(), *t);
        }
    }
    reached.remove(src);
    reached.into_keys().collect()
}
