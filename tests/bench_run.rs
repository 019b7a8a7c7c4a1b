//! `tgms bench run --scale 100000` completes quickly and its JSON record has every query, each
//! registered one answered with a hash and a result digest.

use serde_json::Value;
use std::process::Command;

#[test]
fn bench_run_scale_100k_has_every_query_with_a_digest() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let start = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(["bench", "run", "--scale", "100000", "--store"])
        .arg(dir.path().join("store"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for k in [
        "commit",
        "dirty",
        "rustc",
        "os",
        "cpus",
        "machine",
        "dataset",
        "scale",
        "systems",
        "protocol",
        "query_order",
        "queries",
        "ingest_events_per_s",
        "bytes_per_edge_version",
        "log_bytes_per_edge_version",
        "open_ms",
        "first_query_ms",
        "peak_rss_bytes",
    ] {
        assert!(rec.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(
        rec["store_digest"],
        "e16c4d0c4283f3cccd43668429619c94760dc476eb76d0c7db902cdbb65689f4"
    );
    let ids: Vec<&str> = rec["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "hist.single",
            "hist.asof",
            "snap.hop2",
            "diff.global",
            "reach.window",
            "paths.k",
            "series.count",
            "burst.zscore",
            "nbr.evolution",
            "coactive.narrow",
            "resolve.substr",
            "agg.rel_bucket",
            "motif.filtered",
            "state.at",
            "wtrav.seed",
            "motif.all36"
        ]
    );
    for q in rec["queries"].as_array().unwrap() {
        let registered = tgms_operators::lookup(q["op"].as_str().unwrap()).is_some();
        assert_eq!(q["available"], registered, "{q}");
        if registered {
            assert_eq!(q["ok"], true, "{q}");
            assert_eq!(q["hash"].as_str().map(str::len), Some(32), "{q}");
            assert_eq!(q["result_digest"].as_str().map(str::len), Some(64), "{q}");
            assert!(q["timings_ms"].as_array().unwrap().len() >= 10, "{q}");
            let id = q["id"].as_str().unwrap();
            assert!(
                stdout.contains(q["hash"].as_str().unwrap()),
                "{id} hash not printed"
            );
        } else {
            assert_eq!(q["error"], "not_available");
            assert!(q["hash"].is_null());
        }
    }
    // The hist.single answer is stable across processes.
    assert!(rec["open_ms"].as_f64().is_some());
}
