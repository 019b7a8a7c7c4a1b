//! End-to-end tests of the `tgms` binary: exit codes, error payloads, and that the commands
//! agree with each other (replay digest = source digest, export → import round trip, ingest
//! counts from the file's own content, the generator's reference digest).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .expect("run tgms")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn json_out(o: &Output) -> Value {
    let s = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: stdout {} stderr {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn collegemsg_ingest_stats_replay_history_and_errors() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("college");
    ok(tgms(&["init", p(&s)]));
    let r = json_out(&ok(tgms(&["ingest", p(&s), "--dataset", "collegemsg"])));
    assert_eq!(
        (r["events"].as_u64(), r["batches"].as_u64()),
        (Some(59_835), Some(2))
    );
    // A load into an empty store ends compacted: a read-only open maps the image.
    assert_eq!(r["compacted"], true);
    assert!(tgms_engine::Store::open_read_only(&s).unwrap().is_lazy());
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(st["n_edge_versions"], 59_835);
    assert_eq!(st["n_entities"], 1_899);
    assert_eq!(st["vt_min"], 1_082_040_961_000_000i64);
    assert_eq!(st["vt_max"], 1_098_777_142_000_001i64);
    // 1082040961 s = 1082015761 s (2004-04-15T07:56:01Z) + 7 h.
    assert_eq!(st["vt_min_utc"], "2004-04-15T14:56:01Z");
    assert!(st["disk_bytes"]["log"].as_u64().unwrap() > 0);
    let mut keys: Vec<&str> = st.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "disk_bytes",
            "first_tt",
            "first_tt_utc",
            "last_tt",
            "last_tt_utc",
            "layout",
            "max_out_degree",
            "n_batches",
            "n_edge_versions",
            "n_entities",
            "n_failed_batches",
            "n_node_versions",
            "rel_type_counts",
            "vt_max",
            "vt_max_utc",
            "vt_min",
            "vt_min_utc"
        ]
    );
    let digest = String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap();
    assert_eq!(digest.trim().len(), 64);
    let copy = d.path().join("copy");
    let rep = json_out(&ok(tgms(&["replay", p(&s), p(&copy)])));
    assert_eq!(rep["store_digest"], digest.trim());
    assert_eq!(rep["batches"], 2);

    // history: one node row with lag; --edges lists the edges touching it.
    let h = json_out(&ok(tgms(&[
        "history",
        p(&s),
        "n1",
        "--edges",
        "--format",
        "json",
    ])));
    assert_eq!(h["uid"], "n1");
    let row = &h["rows"][0];
    assert_eq!(
        row["ingestion_lag_us"].as_i64().unwrap(),
        row["tt_s"].as_i64().unwrap() - row["vt_s"].as_i64().unwrap()
    );
    let edges = h["edges"].as_array().unwrap();
    assert!(!edges.is_empty());
    assert!(edges.iter().all(|e| e["src"] == "n1" || e["dst"] == "n1"));

    // Errors: payload on stdout, exit 1 for E_NOT_FOUND, 3 for E_STATE.
    let o = tgms(&["history", p(&s), "nobody"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_out(&o)["error"], "E_NOT_FOUND");
    let o = tgms(&["init", p(&s)]);
    assert_eq!(o.status.code(), Some(3));
    assert!(json_out(&o)["message"]
        .as_str()
        .unwrap()
        .ends_with("exists and is not empty"));
    let o = tgms(&["stats", p(&d.path().join("missing"))]);
    assert_eq!(o.status.code(), Some(3));
    assert!(json_out(&o)["message"]
        .as_str()
        .unwrap()
        .starts_with("no tgms store at"));
    // Usage errors exit 2.
    assert_eq!(tgms(&["stats"]).status.code(), Some(2));
}

#[test]
fn write_batches_success_failure_and_schema() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let b = d.path().join("b.json");
    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100},
        {"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":5}]"#,
    )
    .unwrap();
    let ack = json_out(&ok(tgms(&["write", p(&s), p(&b)])));
    assert_eq!(ack["ops"], 2, "{ack}");
    let tt = ack["tt"].as_i64().unwrap();
    assert!(tt > 0);
    // The first batch of a fresh store is batch 0; its tt is the one stats reports last.
    assert_eq!(ack["batch"], 0);
    std::fs::write(
        &b,
        r#"[{"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5,"reason":"r"}]"#,
    )
    .unwrap();
    let o = tgms(&["write", p(&s), p(&b)]);
    assert_eq!(o.status.code(), Some(1));
    let e = json_out(&o);
    assert_eq!(e["error"], "E_NOT_FOUND");
    assert_eq!(e["message"], "no believed node version of zzz valid at 5");
    std::fs::write(&b, r#"{"op":"assert_node"}"#).unwrap();
    let o = tgms(&["write", p(&s), p(&b)]);
    assert_eq!(
        (o.status.code(), json_out(&o)["error"].clone()),
        (Some(1), Value::from("E_SCHEMA"))
    );
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    // The failed batch is logged and consumed its tt; the schema error wrote nothing.
    assert_eq!(
        (st["n_batches"].as_u64(), st["n_failed_batches"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(st["n_node_versions"], 2); // a, and b from D-W3
}

#[test]
fn export_import_round_trip_keeps_the_digest() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["bench", "generate", "--scale", "20000", p(&s)]));
    let digest = String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap();
    // evaluation.md §1.6 reference digest for N = 20,000 with the fixed clock.
    assert_eq!(
        digest.trim(),
        "9efd78771e103ac930a218c3a5eb98b341811d675b623ffec0cfe8089fb4d553"
    );
    let log = d.path().join("log.jsonl");
    ok(tgms(&["export-eventlog", p(&s), p(&log)]));
    let t = d.path().join("t");
    ok(tgms(&["init", p(&t)]));
    let r = json_out(&ok(tgms(&["import-eventlog", p(&t), p(&log)])));
    assert_eq!(
        (r["batches"].as_u64(), r["failed_batches"].as_u64()),
        (Some(263), Some(0))
    );
    let d2 = String::from_utf8(ok(tgms(&["digest", p(&t)])).stdout).unwrap();
    assert_eq!(d2, digest);
}

#[test]
fn ingest_compacts_loads_of_an_eighth_of_the_store_or_as_asked() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let load = |name: &str, n: usize, t0: usize, extra: &[&str]| {
        let f = d.path().join(name);
        let text: String = (0..n)
            .map(|i| format!("{} {} {}\n", i % 37, (i * 7 + 1) % 37, t0 + i))
            .collect();
        std::fs::write(&f, text).unwrap();
        let mut args = vec!["ingest", p(&s), p(&f)];
        args.extend_from_slice(extra);
        json_out(&ok(tgms(&args)))
    };
    // (served lazily, segments): every load is sealed on exit, so a reader always maps the
    // image; what was not compacted is decoded from flush segments above it.
    let layout = || {
        let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
        let l = &st["layout"];
        (
            l["mapped"].as_bool().unwrap(),
            l["segments"].as_u64().unwrap() as usize,
        )
    };
    // 800 of 800 edge versions: compacted.
    assert_eq!(load("a.txt", 800, 1_000, &[])["compacted"], true);
    assert_eq!(layout(), (true, 1));
    // 100 of 900 (less than an eighth): sealed as a flush segment above the image.
    assert_eq!(load("b.txt", 100, 5_000, &[])["compacted"], false);
    assert_eq!(layout(), (true, 2));
    // 129 of 1,029 (an eighth or more): compacted again.
    assert_eq!(load("c.txt", 129, 9_000, &[])["compacted"], true);
    assert_eq!(layout(), (true, 1));
    // As asked, whatever the size.
    assert_eq!(
        load("d.txt", 2, 20_000, &["--compact", "always"])["compacted"],
        true
    );
    assert_eq!(layout(), (true, 1));
    assert_eq!(
        load("e.txt", 5_000, 30_000, &["--compact", "never"])["compacted"],
        false
    );
    assert_eq!(layout(), (true, 2));
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(st["n_edge_versions"], 800 + 100 + 129 + 2 + 5_000);
    let o = tgms(&[
        "ingest",
        p(&s),
        p(&d.path().join("e.txt")),
        "--compact",
        "sometimes",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad --compact value is a usage error"
    );
}

#[test]
fn a_malformed_line_at_the_end_commits_nothing() {
    // The validation pass finds the bad line before the first chunk is written: a bad
    // line after 60,000 good ones leaves the store untouched (the old loader committed the
    // first 50,000).
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let f = d.path().join("ev.txt");
    let mut text = String::from("src dst time\n");
    for i in 0..60_000 {
        text.push_str(&format!("{} {} {}\n", i % 100, (i + 1) % 100, 1000 + i));
    }
    text.push_str("x7 2 3\n");
    std::fs::write(&f, &text).unwrap();
    let o = tgms(&["ingest", p(&s), p(&f), "--format", "snap"]);
    assert_eq!(o.status.code(), Some(1));
    let e = json_out(&o);
    assert_eq!(e["error"], "E_INVALID_ARG");
    assert_eq!(e["details"]["line"], 60_002);
    assert_eq!(e["details"]["field"], "src");
    assert_eq!(e["details"]["events_committed"], 0);
    assert!(e["message"].as_str().unwrap().contains(":60002: "));
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(st["n_edge_versions"], 0);
    assert_eq!(st["n_batches"], 0);
}

#[test]
fn a_second_writer_is_refused_while_readers_work() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    let _writer = tgms_engine::Store::create(&s).unwrap();
    let b = d.path().join("b.json");
    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"a","label":"N","vt_s":0}]"#,
    )
    .unwrap();
    let o = tgms(&["write", p(&s), p(&b)]);
    assert_eq!(o.status.code(), Some(3));
    let e = json_out(&o);
    assert_eq!(e["message"], "store is locked by another writer");
    assert_eq!(e["details"]["holder_pid"], std::process::id());
    ok(tgms(&["stats", p(&s)]));
    ok(tgms(&["digest", p(&s)]));
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in [
        vec!["init"],
        vec!["ingest"],
        vec!["write"],
        vec!["stats"],
        vec!["digest"],
        vec!["replay"],
        vec!["history"],
        vec!["import-eventlog"],
        vec!["export-eventlog"],
        vec!["check"],
        vec!["compact"],
        vec!["bench", "generate"],
        vec!["bench", "collegemsg-log"],
    ] {
        let mut args = cmd.clone();
        args.push("--help");
        let o = ok(tgms(&args));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains("Examples:"), "{cmd:?} --help has no example");
    }
}

#[test]
fn call_and_tools() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let batch = d.path().join("b.json");
    std::fs::write(
        &batch,
        r#"[{"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100},
            {"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":0,"vt_e":100}]"#,
    )
    .unwrap();
    ok(tgms(&["write", p(&s), p(&batch)]));

    // Inline JSON → the envelope; the digest is SHA-256 of the payload's canonical JSON.
    let e = json_out(&ok(tgms(&[
        "call",
        p(&s),
        "entity_history",
        r#"{"uid": "a"}"#,
    ])));
    assert_eq!(e["op"], "entity_history");
    assert_eq!(e["rows_total"], 1);
    assert_eq!(e["args_echo"]["limit"], 100);
    // A file argument and --as-of before the first write (empty past belief state).
    let args = d.path().join("args.json");
    std::fs::write(&args, r#"{"uid": "a"}"#).unwrap();
    let e = json_out(&ok(tgms(&[
        "call",
        p(&s),
        "entity_history",
        p(&args),
        "--as-of",
        "1",
    ])));
    assert_eq!(e["rows_total"], 0);
    assert_eq!(e["args_echo"]["as_of_tt"], 1);
    // --as-of with an as_of_tt in ARGS is a usage error.
    let o = tgms(&[
        "call",
        p(&s),
        "entity_history",
        r#"{"uid":"a","as_of_tt":5}"#,
        "--as-of",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // Malformed JSON is a usage error; an unknown file too.
    assert_eq!(
        tgms(&["call", p(&s), "entity_history", "{nope"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        tgms(&["call", p(&s), "entity_history", "/no/such/file.json"])
            .status
            .code(),
        Some(2)
    );
    // An unpaired surrogate escape is E_SCHEMA "invalid JSON string" (plans-and-claims §1.1).
    let o = tgms(&["call", p(&s), "entity_history", r#"{"uid": "\ud800"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_out(&o)["message"], "invalid JSON string");
    // Errors: payload on stdout, exit 1; E_STATE exit 3.
    let o = tgms(&["call", p(&s), "entity_history", r#"{"uid": "nobody"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        json_out(&o),
        serde_json::json!({"error":"E_NOT_FOUND","message":"unknown uid: nobody","details":{"uid":"nobody"}})
    );
    let o = tgms(&["call", p(&s), "state_at", r#"{"uid": "a"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        json_out(&o)["message"],
        "invalid args for state_at: 'at' is a required property"
    );
    let o = tgms(&["call", p(&d.path().join("none")), "state_at", "{}"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(json_out(&o)["error"], "E_STATE");
    // An ARGS array: one call each on one snapshot, results in order; exit 1 if any failed.
    let o = tgms(&[
        "call",
        p(&s),
        "state_at",
        r#"[{"uid":"a","at":5},{"uid":"zz","at":5},{"uid":"b","at":5,"direction":"in"}]"#,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let arr = json_out(&o);
    assert_eq!(arr.as_array().unwrap().len(), 3);
    assert_eq!(arr[0]["rows"][0]["dst"], "b");
    assert_eq!(arr[1]["error"], "E_NOT_FOUND");
    assert_eq!(arr[2]["rows"][0]["src"], "a");
    // Table rendering ends with the result digest.
    let o = ok(tgms(&[
        "call",
        p(&s),
        "snapshot_subgraph",
        r#"{"seeds":["a"],"t_valid":5}"#,
        "--format",
        "table",
    ]));
    let text = String::from_utf8(o.stdout).unwrap();
    let e = json_out(&ok(tgms(&[
        "call",
        p(&s),
        "snapshot_subgraph",
        r#"{"seeds":["a"],"t_valid":5}"#,
    ])));
    assert!(
        text.trim_end().ends_with(&format!(
            "result_digest: {}",
            e["result_digest"].as_str().unwrap()
        )),
        "{text}"
    );

    // tools: three shapes, sorted by name, needing no store.
    for (fmt, key) in [
        ("anthropic", "input_schema"),
        ("openai", "function"),
        ("mcp", "outputSchema"),
    ] {
        let t = json_out(&ok(tgms(&["tools", "--format", fmt])));
        let t = t.as_array().unwrap();
        assert!(t.len() >= 5);
        assert!(t.iter().all(|x| x.get(key).is_some()), "{fmt}");
    }
    assert!(String::from_utf8(ok(tgms(&["call", "--help"])).stdout)
        .unwrap()
        .contains("Examples:"));
}

#[test]
fn compact_keeps_the_digest_and_check_reports_damage() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("college");
    ok(tgms(&["init", p(&s)]));
    ok(tgms(&["ingest", p(&s), "--dataset", "collegemsg"]));
    let digest = String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap();
    let c = json_out(&ok(tgms(&["compact", p(&s)])));
    assert_eq!(c["segments_after"], 1);
    assert_eq!(
        String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap(),
        digest
    );
    let r = json_out(&ok(tgms(&["check", p(&s)])));
    assert_eq!(r["ok"], true);
    assert_eq!(r["segments"], 1);
    // Damage the segment and the log's first record: both are reported, exit 3.
    let seg = s.join("seg-00000001.tgs");
    let mut b = std::fs::read(&seg).unwrap();
    b[200] ^= 0x40;
    std::fs::write(&seg, &b).unwrap();
    let wal = s.join("wal.log");
    let mut w = std::fs::read(&wal).unwrap();
    w[100] ^= 0x40;
    std::fs::write(&wal, &w).unwrap();
    let o = tgms(&["check", p(&s)]);
    assert_eq!(o.status.code(), Some(3));
    let e = json_out(&o);
    assert_eq!(e["error"], "E_STATE");
    let files: Vec<&str> = e["details"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    assert!(files.iter().any(|f| f.ends_with("seg-00000001.tgs")), "{e}");
    assert!(files.iter().any(|f| f.ends_with("wal.log")), "{e}");
    // The damaged segment makes open fail with a named corruption, never wrong rows.
    let o = tgms(&["digest", p(&s)]);
    assert_eq!(o.status.code(), Some(3));
    assert!(json_out(&o)["details"]["file"]
        .as_str()
        .unwrap()
        .ends_with("seg-00000001.tgs"));
}

/// `TGMS_PAGE_CACHE_BYTES` is read by the CLI only; a value that is not a whole number of
/// bytes stops any command with a usage error naming it, `0` (cache off) is accepted.
#[test]
fn page_cache_budget_from_the_environment() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    let run = |v: &str| {
        Command::new(env!("CARGO_BIN_EXE_tgms"))
            .args(["init", p(&s)])
            .env("TGMS_PAGE_CACHE_BYTES", v)
            .output()
            .expect("run tgms")
    };
    let o = run("lots");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("TGMS_PAGE_CACHE_BYTES=lots") && err.contains("whole number of bytes"),
        "{err}"
    );
    assert!(!s.exists(), "a refused command does nothing");
    ok(run("0"));
    assert!(s.is_dir());
}
