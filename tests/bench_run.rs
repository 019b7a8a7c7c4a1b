//! `tgms bench run --scale 100000` completes quickly and its JSON record has every query, each
//! registered one answered with a hash and a result digest; with `--compact` the store it
//! builds is served from the mapped image.

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
        "peak_rss_covers",
        "build_peak_rss_bytes",
        "compact_s",
        "mapped_image",
    ] {
        assert!(rec.get(k).is_some(), "missing key {k}");
    }
    // Without --compact the build closes its writer, which seals one mapped image
    // (`Store::close`): the timed open replays no log.
    assert_eq!(rec["compact_s"], Value::Null);
    assert_eq!(rec["mapped_image"], true);
    assert!(stdout.contains("one mapped image"), "{stdout}");
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
        // Every registry operator is registered: each query answers with a digest.
        assert_eq!(q["available"], true, "{q}");
        assert_eq!(q["ok"], true, "{q}");
        assert_eq!(q["hash"].as_str().map(str::len), Some(32), "{q}");
        assert_eq!(q["result_digest"].as_str().map(str::len), Some(64), "{q}");
        assert!(q["timings_ms"].as_array().unwrap().len() >= 10, "{q}");
        let id = q["id"].as_str().unwrap();
        // The table fits 100 columns: it prints the hash's first 12 hex digits (the run
        // record has it whole).
        let hash = q["hash"].as_str().unwrap();
        assert!(
            stdout.contains(&format!("{}…", &hash[..12])),
            "{id} hash not printed"
        );
    }
    // The hist.single answer is stable across processes.
    assert!(rec["open_ms"].as_f64().is_some());
}

#[test]
fn replayed_log_parameters_and_bench_run_on_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cm.jsonl");
    let tgms = env!("CARGO_BIN_EXE_tgms");
    let ok = |args: &[&std::ffi::OsStr]| {
        let o = Command::new(tgms).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        o
    };
    ok(&["bench".as_ref(), "collegemsg-log".as_ref(), log.as_os_str()]);
    let store = dir.path().join("store");
    let json = dir.path().join("run.json");
    let o = ok(&[
        "bench".as_ref(),
        "run".as_ref(),
        "--log".as_ref(),
        log.as_os_str(),
        "--store".as_ref(),
        store.as_os_str(),
        "--warmups".as_ref(),
        "1".as_ref(),
        "--reps".as_ref(),
        "3".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
        "--compact".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("hist.single"));
    // --compact: the imported store was compacted and is served from its mapped image.
    assert!(stdout.contains("one mapped image"), "{stdout}");
    // §2.1 parameters of a replayed real log, on the CollegeMsg store.
    let st = tgms_engine::Store::open_read_only(&store).unwrap();
    let p = tgms_bench::registry::Params::from_store(&st);
    assert_eq!((p.t0, p.t1), (1_082_040_961_000_000, 1_098_777_142_000_001));
    assert_eq!(p.tt_epoch1, 1_783_612_865_737_377);
    assert_eq!(p.filter_uids.len(), 200);
    assert_eq!(&p.filter_uids[..5], ["n1", "n10", "n100", "n1000", "n1001"]);
    assert_eq!(p.filter_uids[199], "n1244");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rec["queries"].as_array().unwrap().len(), 16);
    assert_eq!(rec["mapped_image"], true);
    assert!(rec["compact_s"].as_f64().is_some(), "{}", rec["compact_s"]);
}
