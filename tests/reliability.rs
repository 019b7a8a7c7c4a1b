//! Reliability tests of the `tgms` binary (issue 19): recovery commands refuse a log that
//! is shorter than the manifest's checkpoint (or salvage it and say what was lost),
//! zero-filled log tails, `tgms check` against a live writer process, standard-output
//! errors, and the small input-validation items.

use serde_json::Value;
use std::path::{Path, PathBuf};
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

/// Writes `n` one-op batches through `tgms write`; each write closes the store, which
/// publishes a flush segment, so the manifest's checkpoint is the end of the log.
fn store_with_batches(dir: &Path, n: usize) -> PathBuf {
    let s = dir.join("s");
    ok(tgms(&["init", p(&s)]));
    let b = dir.join("b.json");
    for i in 0..n {
        std::fs::write(
            &b,
            format!(
                r#"[{{"op":"assert_edge","src":"a{i}","dst":"b{i}","rel_type":"R","vt_s":{i}}}]"#
            ),
        )
        .unwrap();
        ok(tgms(&["write", p(&s), p(&b)]));
    }
    s
}

/// Byte offsets where each record of the log at `wal` ends.
fn record_ends(wal: &Path) -> Vec<u64> {
    let bytes = std::fs::read(wal).unwrap();
    let mut ends = Vec::new();
    let mut at = 16usize;
    while at + 12 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        at += 12 + len;
        ends.push(at as u64);
    }
    ends
}

fn cut(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn recovery_commands_refuse_a_log_cut_below_the_checkpoint() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 4);
    let wal = s.join("wal.log");
    let ends = record_ends(&wal);
    assert_eq!(ends.len(), 8, "4 batches, 4 outcomes");
    let digest_before = String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap();
    // Cut at a record boundary (after 2 batches) and in the middle of a record, and to the
    // bare header: every cut lies below the checkpoint (the end of the log).
    for len in [ends[3], ends[4] - 5, 16] {
        cut(&wal, len);
        for args in [vec!["stats", p(&s), "--json"], vec!["check", p(&s)]] {
            assert_eq!(tgms(&args).status.code(), Some(3), "{args:?} at {len}");
        }
        let out = d.path().join(format!("export-{len}.jsonl"));
        let o = tgms(&["export-eventlog", p(&s), p(&out)]);
        assert_eq!(o.status.code(), Some(3), "export at {len}: {o:?}");
        let e = json_out(&o);
        assert_eq!(e["error"], "E_STATE");
        assert!(
            e["message"].as_str().unwrap().contains("shorter than"),
            "{e}"
        );
        assert_eq!(e["details"]["checkpoint_offset"], *ends.last().unwrap());
        assert!(!out.exists(), "a refused export creates no file");
        let dst = d.path().join(format!("replay-{len}"));
        let o = tgms(&["replay", p(&s), p(&dst)]);
        assert_eq!(o.status.code(), Some(3), "replay at {len}: {o:?}");
        assert_eq!(json_out(&o)["details"]["log_good_bytes"], len.min(ends[3]));
        assert!(!dst.exists(), "a refused replay creates no store");

        // --salvage rebuilds from the readable log and says what is lost.
        let o = ok(tgms(&["replay", p(&s), p(&dst), "--salvage"]));
        let v = json_out(&o);
        let kept = if len >= ends[3] { 2 } else { 0 };
        assert_eq!(v["batches"], kept, "{v}");
        assert_eq!(v["salvage"]["complete"], false);
        assert_eq!(v["salvage"]["batches_read"], kept);
        assert_eq!(v["salvage"]["batches_lost_at_least"], 4 - kept);
        assert_eq!(v["salvage"]["checkpoint"]["n_batches"], 4);
        // Exactly which batches: seqs kept..4; what followed the checkpoint is unknown.
        assert_eq!(
            v["salvage"]["lost_batch_seqs"],
            serde_json::json!({"first": kept, "end": 4})
        );
        assert_eq!(v["salvage"]["unknown_beyond_offset"], *ends.last().unwrap());
        assert_eq!(v["salvage"]["lost_count_exact"], false);
        let o = ok(tgms(&["export-eventlog", p(&s), p(&out), "--salvage"]));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("\"batches_lost_at_least\":"), "{err}");
        let lines = std::fs::read_to_string(&out).unwrap().lines().count();
        assert_eq!(lines, 1 + kept as usize);
    }
    // The intact store's commands still agree (nothing above changed the source).
    assert!(!digest_before.is_empty());
}

#[test]
fn salvage_of_an_intact_store_is_complete_and_exact() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 3);
    let digest = String::from_utf8(ok(tgms(&["digest", p(&s)])).stdout).unwrap();
    let dst = d.path().join("copy");
    let v = json_out(&ok(tgms(&["replay", p(&s), p(&dst), "--salvage"])));
    assert_eq!(v["salvage"]["complete"], true, "{v}");
    assert_eq!(v["salvage"]["batches_lost_at_least"], 0);
    assert_eq!(v["store_digest"].as_str().unwrap(), digest.trim());
}

/// Spawns a writer that commits `batches` batches through separate `tgms write` processes
/// (each opens, commits and closes the store, publishing a flush segment; every 8th
/// publication compacts, and every 5th write is followed by a `tgms compact` process).
/// Returns its thread; `stop` ends it early.
fn writer_processes(
    s: PathBuf,
    batch_file: PathBuf,
    batches: usize,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut done = 0;
        for i in 0..batches {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            std::fs::write(
                &batch_file,
                format!(
                    r#"[{{"op":"assert_edge","src":"w{i}","dst":"w{}","rel_type":"R","vt_s":{i},"props":{{"i":{i}}}}}]"#,
                    i + 1
                ),
            )
            .unwrap();
            ok(tgms(&["write", p(&s), p(&batch_file)]));
            if i % 5 == 4 {
                ok(tgms(&["compact", p(&s)]));
            }
            done += 1;
        }
        done
    })
}

#[test]
fn check_of_a_live_store_reports_no_false_damage() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 2);
    // A log and an image large enough that a check takes longer than a write.
    let events = d.path().join("events.txt");
    let text: String = (0..40_000)
        .map(|i| format!("{} {} {}\n", i % 997, (i * 7) % 1009, 1_000_000 + i))
        .collect();
    std::fs::write(&events, text).unwrap();
    ok(tgms(&["ingest", p(&s), p(&events), "--format", "snap"]));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = writer_processes(s.clone(), d.path().join("w.json"), 60, stop.clone());
    let mut checks = 0;
    let mut failures = Vec::new();
    while !writer.is_finished() {
        // Reader processes: check, stats and digest against the live writer.
        let o = tgms(&["check", p(&s)]);
        checks += 1;
        if !o.status.success() {
            failures.push(String::from_utf8_lossy(&o.stdout).into_owned());
        }
        let o = tgms(&["stats", p(&s), "--json"]);
        assert!(o.status.success(), "stats: {o:?}");
        if failures.len() >= 3 {
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {checks} checks failed: {failures:#?}",
        failures.len()
    );
    assert!(
        checks >= 5 && written >= 10,
        "too little overlap: {checks} checks, {written} writes"
    );
    ok(tgms(&["check", p(&s)]));
}

/// Runs tgms with standard output on `stdout`; returns (exit code, stderr).
fn tgms_to(args: &[&str], stdout: std::process::Stdio) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run tgms");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> std::process::Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

#[test]
fn stdout_errors_exit_quietly_on_a_closed_pipe_and_structured_on_a_full_disk() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 2);
    let b = d.path().join("b.json");
    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"x","label":"N","vt_s":0}]"#,
    )
    .unwrap();
    let cmds: Vec<Vec<&str>> = vec![
        vec!["digest", p(&s)],
        vec!["stats", p(&s)],
        vec!["stats", p(&s), "--json"],
        vec!["check", p(&s)],
        vec!["history", p(&s), "a0"],
        vec!["tools"],
        vec!["write", p(&s), p(&b)],
    ];
    let full = Path::new("/dev/full");
    for args in &cmds {
        let (code, err) = tgms_to(args, closed_pipe());
        assert_eq!(code, Some(141), "{args:?} on a closed pipe: {err}");
        assert!(err.is_empty(), "{args:?}: a closed pipe is quiet: {err}");
        if full.exists() {
            let f = std::fs::OpenOptions::new().write(true).open(full).unwrap();
            let (code, err) = tgms_to(args, f.into());
            assert_eq!(code, Some(3), "{args:?} on a full disk: {err}");
            let v: Value = serde_json::from_str(err.trim()).unwrap_or_else(|e| {
                panic!("{args:?}: stderr is not one JSON payload ({e}): {err}")
            });
            assert_eq!(v["error"], "E_STATE");
            assert!(
                v["message"].as_str().unwrap().contains("standard output"),
                "{v}"
            );
        }
    }
    // Both writes committed although their output was lost.
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    let expected = if full.exists() { 4 } else { 3 };
    assert_eq!(st["n_batches"], expected);
}

#[test]
fn write_refuses_an_ingest_op_over_the_event_limit_and_names_non_finite_values() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 1);
    let b = d.path().join("big.json");
    let events: Vec<String> = (0..50_001)
        .map(|i| format!(r#"{{"src":"a","dst":"b","rel_type":"R","vt_s":{i}}}"#))
        .collect();
    std::fs::write(
        &b,
        format!(
            r#"[{{"op":"ingest_events","events":[{}]}}]"#,
            events.join(",")
        ),
    )
    .unwrap();
    let o = tgms(&["write", p(&s), p(&b)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let e = json_out(&o);
    assert_eq!(e["error"], "E_INVALID_ARG");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("50001 events") && m.contains("at most 50000"),
        "{m}"
    );
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(
        st["n_edge_versions"], 1,
        "nothing of the refused op applied"
    );

    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"a","label":"N","props":{"k":[1,{"x":-1e400}]},"vt_s":0}]"#,
    )
    .unwrap();
    let o = tgms(&["write", p(&s), p(&b)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let m = json_out(&o)["message"].as_str().unwrap().to_string();
    assert!(
        m.starts_with("props.k[1].x is -1e") && m.contains("not a finite 64-bit float"),
        "{m}"
    );
    // The failed batch replays to the same failure (its raw op re-parses).
    let copy = d.path().join("copy");
    ok(tgms(&["replay", p(&s), p(&copy)]));
    assert_eq!(
        ok(tgms(&["digest", p(&s)])).stdout,
        ok(tgms(&["digest", p(&copy)])).stdout
    );
}

#[test]
fn export_import_keeps_failed_reasonless_corrections_failed() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 2);
    let b = d.path().join("b.json");
    // D-W1: a correct and a retract without a reason fail their batches.
    for op in [
        r#"{"op":"correct","ref":{"kind":"edge","src":"a0","dst":"b0","rel_type":"R"},"props":{"p":2},"vt_s":0}"#,
        r#"{"op":"retract","ref":{"kind":"node","uid":"a1"},"t":5}"#,
        r#"{"op":"retract","ref":{"kind":"node","uid":"a1"},"t":5,"reason":""}"#,
    ] {
        std::fs::write(&b, format!("[{op}]")).unwrap();
        assert_eq!(tgms(&["write", p(&s), p(&b)]).status.code(), Some(1));
    }
    let digest = ok(tgms(&["digest", p(&s)])).stdout;
    let log = d.path().join("log.jsonl");
    ok(tgms(&["export-eventlog", p(&s), p(&log)]));
    let t = d.path().join("t");
    ok(tgms(&["init", p(&t)]));
    let v = json_out(&ok(tgms(&["import-eventlog", p(&t), p(&log)])));
    assert_eq!(v["failed_batches"], 3, "{v}");
    assert_eq!(ok(tgms(&["digest", p(&t)])).stdout, digest);
    // And the export of the import is the same text.
    let log2 = d.path().join("log2.jsonl");
    ok(tgms(&["export-eventlog", p(&t), p(&log2)]));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        std::fs::read_to_string(&log2).unwrap()
    );
}

/// Runs tgms with the N-th fsync of the process failing with EIO (`TGMS_TEST_FAIL_SYNC`).
fn tgms_failing_sync(n: u64, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .env("TGMS_TEST_FAIL_SYNC", n.to_string())
        .output()
        .expect("run tgms")
}

#[test]
fn an_unknown_write_outcome_exits_4_and_a_keyed_retry_is_acknowledged_once() {
    let d = tempfile::tempdir().unwrap();
    let s = store_with_batches(d.path(), 1);
    let b = d.path().join("b.json");
    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"x","label":"N","vt_s":0}]"#,
    )
    .unwrap();
    // Sync 1 of `tgms write` is the batch record's fdatasync.
    let o = tgms_failing_sync(1, &["write", p(&s), p(&b), "--batch-key", "job-7"]);
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    let e = json_out(&o);
    assert_eq!(e["error"], "E_STATE");
    assert_eq!(e["details"]["outcome"], "unknown");
    assert_eq!(e["details"]["seq"], 1);
    assert_eq!(e["details"]["batch_key"], "job-7");
    let tt = e["details"]["tt"].as_i64().unwrap();
    // The retry is acknowledged with the first attempt's tt and applies nothing.
    let o = ok(tgms(&["write", p(&s), p(&b), "--batch-key", "job-7"]));
    let ack = json_out(&o);
    assert_eq!(
        (ack["tt"].as_i64(), ack["batch"].as_u64()),
        (Some(tt), Some(1))
    );
    assert_eq!(ack["duplicate"], true);
    assert!(String::from_utf8_lossy(&o.stderr).contains("already committed"));
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(
        (st["n_batches"].as_u64(), st["n_node_versions"].as_u64()),
        (Some(2), Some(3))
    );
    // A failure after the record is synced (sync 2: sealing it on exit) is a commit.
    std::fs::write(
        &b,
        r#"[{"op":"assert_node","uid":"y","label":"N","vt_s":0}]"#,
    )
    .unwrap();
    let o = tgms_failing_sync(2, &["write", p(&s), p(&b)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("committed"));
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(st["n_batches"], 3);
    ok(tgms(&["check", p(&s)]));
}

#[test]
fn an_interrupted_ingest_resumes_instead_of_duplicating() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let events = d.path().join("events.txt");
    let text: String = (0..120_000)
        .map(|i| format!("{} {} {}\n", i % 1000, (i * 7) % 1003, 1_000_000 + i))
        .collect();
    std::fs::write(&events, text).unwrap();
    // The second chunk's fdatasync fails: chunk 0 is committed, chunk 1's outcome unknown.
    let o = tgms_failing_sync(2, &["ingest", p(&s), p(&events), "--format", "snap"]);
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    assert_eq!(json_out(&o)["details"]["outcome"], "unknown");
    let v = json_out(&ok(tgms(&[
        "ingest",
        p(&s),
        p(&events),
        "--format",
        "snap",
    ])));
    assert_eq!(
        (v["batches"].as_u64(), v["skipped_batches"].as_u64()),
        (Some(3), Some(2)),
        "{v}"
    );
    let st = json_out(&ok(tgms(&["stats", p(&s), "--json"])));
    assert_eq!(st["n_edge_versions"], 120_000, "no chunk loaded twice");
    assert_eq!(st["n_batches"], 3);
    // Without keys the same file loads again (deliberately).
    let v = json_out(&ok(tgms(&[
        "ingest",
        p(&s),
        p(&events),
        "--format",
        "snap",
        "--no-batch-key",
    ])));
    assert_eq!(v["skipped_batches"], 0);
}

#[test]
fn sigkilled_writer_processes_keep_the_acknowledged_prefix() {
    use std::collections::BTreeSet;
    use tgms::soak::{read_acks, spawn_writer, verify};
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    ok(tgms(&["init", p(&s)]));
    let exe = Path::new(env!("CARGO_BIN_EXE_tgms"));
    let mut acked = BTreeSet::new();
    let mut next = 0u64;
    let mut rng = 0x1905_u64;
    // Seeded kill points: after 1 to 40 acknowledgements of each writer process, which
    // flushes every 7 batches and compacts every 25 (so kills land in commits, flushes and
    // compactions).
    for round in 0..8 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let kill_after = 1 + rng % 40;
        let mut child = spawn_writer(exe, &s, next, next + 1000).unwrap();
        read_acks(&mut child, &mut acked, |n| n >= kill_after);
        child.kill().unwrap();
        child.wait().unwrap();
        let total = acked.iter().next_back().map_or(0, |m| m + 2);
        let v = verify(&s, &acked, total).unwrap();
        assert!(v.violations.is_empty(), "round {round}: {:?}", v.violations);
        assert!(v.present >= acked.len() as u64);
        next = (0..).find(|i| !acked.contains(i)).unwrap();
    }
    // A writer restarted over everything acknowledges each batch once, applying none twice.
    let mut child = spawn_writer(exe, &s, 0, next + 5).unwrap();
    let mut all = BTreeSet::new();
    read_acks(&mut child, &mut all, |_| false);
    assert!(child.wait().unwrap().success());
    let v = verify(&s, &all, next + 5).unwrap();
    assert!(v.violations.is_empty(), "{:?}", v.violations);
    assert_eq!(v.present, next + 5);
    ok(tgms(&["check", p(&s)]));
    // The verdict is not vacuous: a batch claimed acknowledged but never written is caught.
    all.insert(next + 7);
    assert!(!verify(&s, &all, next + 9).unwrap().violations.is_empty());
}
