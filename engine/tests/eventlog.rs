//! TGMS JSONL event-log interop (`data-model.md` §13) against the TV5 vector of
//! `test-vectors.md`: export, import of our export, import of TGMS's own log, round trip,
//! and the refusals of malformed logs.

mod common;
use common::tv5_store;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tgms_engine::clock::scripted_clock;
use tgms_engine::eventlog::{self, ImportReport};
use tgms_engine::{Error, Op, Options, Store};

const TV5_DIGEST: &str = "aef477e588a2179bb14f6a9cee561072e37fc0d42a82a336b0f565b0ab8c2066";

/// The TV5 TGMS JSONL export (non-strict), quoted from `test-vectors.md`.
const TV5_EXPORT: [&str; 5] = [
    r#"{"format":"tgms-eventlog","version":1}"#,
    r#"{"batch_id":"c05907f6d1d44530","ops":[{"label":"N","op":"assert_node","props":{"name":"Alice"},"provenance_ref":null,"source":"ingest","uid":"a","vt_e":100,"vt_s":0}],"tt":1000}"#,
    r#"{"batch_id":"b56363a90a1191af","ops":[{"disc":"","dst":"b","dst_label":"Node","op":"assert_edge","props":{"w":1},"provenance_ref":null,"rel_type":"R","source":"ingest","src":"a","src_label":"Node","vt_e":20,"vt_s":10},{"label":"Node","op":"assert_node","props":{},"provenance_ref":null,"source":"ingest","uid":"b","vt_e":4611686018427387904,"vt_s":10}],"tt":1001}"#,
    r#"{"batch_id":"c1ad340b9325761d","ops":[{"op":"retract","provenance_ref":null,"reason":"cleanup","ref":{"kind":"node","uid":"zzz"},"source":"ingest","t":5}],"tt":1002}"#,
    r##"{"batch_id":"363b054604c6459a","ops":[{"events":[{"disc":"#0","dst":"c","rel_type":"MSG","src":"a","vt_s":30},{"disc":"#1","dst":"a","rel_type":"MSG","src":"c","vt_s":30}],"node_label":"Node","offset":0,"op":"ingest_events","provenance_ref":null,"source":"ingest"}],"tt":5000}"##,
];

/// TGMS's own log of the four TV5 writes, written by hand: `(tt, canonical ops text, batch
/// id quoted in test-vectors.md)`. No `reason` keys, no labels, events without disc.
const TGMS_TV5: [(i64, &str, &str); 4] = [
    (
        1000,
        r#"[{"label":"N","op":"assert_node","props":{"name":"Alice"},"provenance_ref":null,"source":"ingest","uid":"a","vt_e":100,"vt_s":0}]"#,
        "c05907f6d1d44530",
    ),
    (
        1001,
        r#"[{"disc":"","dst":"b","op":"assert_edge","props":{"w":1},"provenance_ref":null,"rel_type":"R","source":"ingest","src":"a","vt_e":20,"vt_s":10}]"#,
        "df75c1353d511752",
    ),
    (
        1002,
        r#"[{"op":"retract","provenance_ref":null,"ref":{"kind":"node","uid":"zzz"},"source":"ingest","t":5}]"#,
        "02c19f82088466ad",
    ),
    (
        5000,
        r#"[{"events":[{"dst":"c","rel_type":"MSG","src":"a","vt_s":30},{"dst":"a","rel_type":"MSG","src":"c","vt_s":30}],"node_label":"Node","offset":0,"op":"ingest_events","provenance_ref":null,"source":"ingest"}]"#,
        "0af415dd4c75e96b",
    ),
];

fn op(v: Value) -> Op {
    Op::from_json(&v)
}

fn new_store(root: &Path, name: &str) -> Store {
    Store::create_with(
        &root.join(name),
        Options {
            paranoid: true,
            ..Options::default()
        },
    )
    .unwrap()
}

fn export_text(dir: &Path, strict: bool) -> (String, eventlog::ExportReport) {
    let mut out = Vec::new();
    let rep = eventlog::export(dir, &mut out, strict).unwrap();
    (String::from_utf8(out).unwrap(), rep)
}

fn write_file(root: &Path, name: &str, text: &str) -> PathBuf {
    let p = root.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Imports `log` into a fresh store; returns the report (or error) and the store.
fn import_fresh(root: &Path, name: &str, log: &Path) -> (tgms_engine::Result<ImportReport>, Store) {
    let mut s = new_store(root, name);
    let r = eventlog::import(&mut s, log, &mut |_| {});
    (r, s)
}

fn tgms_tv5_lines() -> Vec<String> {
    let mut lines = vec![r#"{"format":"tgms-eventlog","version":1}"#.to_string()];
    for (tt, ops, id) in TGMS_TV5 {
        lines.push(format!(r#"{{"batch_id":"{id}","ops":{ops},"tt":{tt}}}"#));
    }
    lines
}

fn joined(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn tv5_export_matches_the_vector() {
    let d = tempfile::tempdir().unwrap();
    let s = tv5_store(&d.path().join("s"));
    drop(s);
    let (text, rep) = export_text(&d.path().join("s"), false);
    let want: String = TV5_EXPORT.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(text, want);
    assert_eq!(rep.batches, 4);
    assert!(rep.warnings.is_empty(), "{:?}", rep.warnings);
}

#[test]
fn tv5_export_works_while_the_store_is_open() {
    // Export reads the log without the writer lock.
    let d = tempfile::tempdir().unwrap();
    let s = tv5_store(&d.path().join("s"));
    let (text, _) = export_text(&d.path().join("s"), false);
    assert_eq!(text.lines().collect::<Vec<_>>(), TV5_EXPORT.to_vec());
    drop(s);
}

#[test]
fn tv5_import_of_the_export_gives_the_tv5_digest() {
    let d = tempfile::tempdir().unwrap();
    let want: String = TV5_EXPORT.iter().map(|l| format!("{l}\n")).collect();
    let log = write_file(d.path(), "tv5.jsonl", &want);
    let mut lines = Vec::new();
    let mut s = new_store(d.path(), "imp");
    let rep = eventlog::import(&mut s, &log, &mut |n| lines.push(n)).unwrap();
    assert_eq!(
        rep,
        ImportReport {
            batches: 4,
            failed_batches: 1,
            events: 2,
            torn_final_line: false
        }
    );
    assert_eq!(lines, vec![2, 3, 4, 5]);
    assert_eq!(s.digest(), TV5_DIGEST);
    let st = s.stats();
    assert_eq!((st.n_batches, st.n_failed_batches), (4, 1));
    assert_eq!(
        (st.n_entities, st.n_node_versions, st.n_edge_versions),
        (3, 3, 3)
    );
    assert_eq!(s.last_tt(), Some(5000));
}

#[test]
fn tgms_own_tv5_log_has_the_quoted_batch_ids_and_imports_to_the_tv5_digest() {
    // The hand-written canonical records hash to the batch ids quoted by the vector.
    for (tt, ops, id) in TGMS_TV5 {
        let hashed = format!(r#"{{"ops":{ops},"tt":{tt}}}"#);
        let h = Sha256::digest(hashed.as_bytes());
        let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(&hex[..16], id, "tt {tt}");
    }
    let d = tempfile::tempdir().unwrap();
    let log = write_file(d.path(), "tgms.jsonl", &joined(&tgms_tv5_lines()));
    let (rep, s) = import_fresh(d.path(), "imp", &log);
    let rep = rep.unwrap();
    assert_eq!((rep.batches, rep.failed_batches, rep.events), (4, 1, 2));
    assert!(!rep.torn_final_line);
    assert_eq!(s.digest(), TV5_DIGEST);
    assert_eq!(s.stats().n_node_versions, 3);
}

#[test]
fn imported_retract_without_reason_gets_the_fixed_text() {
    let d = tempfile::tempdir().unwrap();
    // TGMS log: assert a node, then retract it at t=50 without a reason.
    let recs = [
        (
            10,
            r#"[{"label":"N","op":"assert_node","props":{},"provenance_ref":null,"source":"ingest","uid":"x","vt_e":100,"vt_s":0}]"#,
        ),
        (
            20,
            r#"[{"op":"retract","provenance_ref":null,"ref":{"kind":"node","uid":"x"},"source":"ingest","t":50}]"#,
        ),
    ];
    let mut lines = vec![r#"{"format":"tgms-eventlog","version":1}"#.to_string()];
    for (tt, ops) in recs {
        let h = Sha256::digest(format!(r#"{{"ops":{ops},"tt":{tt}}}"#).as_bytes());
        let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
        lines.push(format!(r#"{{"batch_id":"{hex}","ops":{ops},"tt":{tt}}}"#));
    }
    let log = write_file(d.path(), "r.jsonl", &joined(&lines));
    let (rep, s) = import_fresh(d.path(), "imp", &log);
    let rep = rep.unwrap();
    assert_eq!((rep.batches, rep.failed_batches), (2, 0));
    let hist = s
        .snapshot()
        .history_of(&tgms_engine::Identity::Node("x".into()));
    let rows: Vec<Value> = hist.iter().map(|v| v.to_json()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["close_reason"], json!(eventlog::IMPORT_REASON));
    assert_eq!(
        rows[0]["close_reason"],
        json!("imported from a TGMS event log; no reason recorded")
    );
    assert_eq!(rows[1]["reason"], json!(eventlog::IMPORT_REASON));
    assert_eq!(
        (rows[1]["vt_s"].clone(), rows[1]["vt_e"].clone()),
        (json!(0), json!(50))
    );
}

#[test]
fn import_export_import_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let log = write_file(d.path(), "tgms.jsonl", &joined(&tgms_tv5_lines()));
    let (rep, s1) = import_fresh(d.path(), "one", &log);
    rep.unwrap();
    let dig1 = s1.digest();
    drop(s1);
    let (text, _) = export_text(&d.path().join("one"), false);
    // Our re-export of TGMS's log is the vector's export plus the retract's import reason.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[..3], TV5_EXPORT[..3]);
    assert_eq!(lines[4], TV5_EXPORT[4]);
    assert!(lines[3].contains(r#""reason":"imported from a TGMS event log; no reason recorded""#));
    let log2 = write_file(d.path(), "re.jsonl", &text);
    let (rep2, s2) = import_fresh(d.path(), "two", &log2);
    assert_eq!(rep2.unwrap().failed_batches, 1);
    assert_eq!(s2.digest(), dig1);
    assert_eq!(dig1, TV5_DIGEST);
    drop(s2);
    // Export of the re-import is byte-identical to the first export.
    let (text2, _) = export_text(&d.path().join("two"), false);
    assert_eq!(text2, text);
}

#[test]
fn round_trip_with_corrections_self_loops_and_carving() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let mut s = Store::create_with(
        &src,
        Options {
            clock: Some(scripted_clock((1..100).map(|i| i * 10).collect())),
            paranoid: true,
            ..Options::default()
        },
    )
    .unwrap();
    // Batch with two assert_edges: a self-loop (one endpoint) and an edge whose src exists.
    s.write(vec![
        op(json!({"op":"assert_edge","src":"p","dst":"p","rel_type":"L","vt_s":5,"vt_e":9,"reason":"loop","src_label":"P"})),
        op(json!({"op":"assert_node","uid":"q","label":"Q","vt_s":0,"vt_e":3})),
        op(json!({"op":"assert_edge","src":"q","dst":"r","rel_type":"R","vt_s":7,"dst_label":"RR","provenance_ref":{"doc":1},"source":"s1"})),
    ])
    .unwrap();
    s.write(vec![op(json!({"op":"correct","ref":{"kind":"edge","src":"q","dst":"r","rel_type":"R"},"props":{"k":2},"vt_s":10,"vt_e":20,"reason":"fix"}))]).unwrap();
    // A failed batch containing an assert_edge that would have created a node.
    assert!(s
        .write(vec![
            op(json!({"op":"assert_edge","src":"m","dst":"n","rel_type":"R"})),
            op(json!({"op":"retract","ref":{"kind":"node","uid":"nobody"},"t":1,"reason":"x"})),
        ])
        .is_err());
    // An unknown op kind: logged raw, fails.
    assert!(s.write(vec![op(json!({"op":"frob","x":1}))]).is_err());
    // Ingest with an explicit disc colliding with an asserted identity: D-W2 carving.
    s.write(vec![op(json!({"op":"assert_edge","src":"u","dst":"v","rel_type":"E","disc":"k","vt_s":0,"vt_e":100}))]).unwrap();
    s.ingest_events(
        vec![
            tgms_engine::Event {
                disc: Some("k".into()),
                ..tgms_engine::Event::instant("u".into(), "v".into(), "E".into(), 50)
            },
            tgms_engine::Event::instant("v".into(), "w".into(), "E".into(), 60),
        ],
        "Node",
        &mut |_| {},
    )
    .unwrap();
    let dig = s.digest();
    let stats = s.stats().clone();
    drop(s);

    let (text, rep) = export_text(&src, false);
    assert_eq!(rep.batches, 6);
    assert_eq!(rep.warnings.len(), 1, "{:?}", rep.warnings);
    assert!(rep.warnings[0].contains("D-W2"));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Batch 1: the self-loop creates p only; q existed, so only r is made explicit.
    let ops1: Vec<(String, String)> = lines[1]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["op"].as_str().unwrap().to_string(),
                o.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("assert_edge", ""),
        ("assert_node", "p"),
        ("assert_node", "q"),
        ("assert_edge", ""),
        ("assert_node", "r"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(ops1, want);
    assert_eq!(
        lines[1]["ops"][1],
        json!({"label":"P","op":"assert_node","props":{},"provenance_ref":null,"reason":"loop","source":"ingest","uid":"p","vt_e":4611686018427387904_i64,"vt_s":5})
    );
    assert_eq!(
        lines[1]["ops"][4],
        json!({"label":"RR","op":"assert_node","props":{},"provenance_ref":{"doc":1},"source":"s1","uid":"r","vt_e":4611686018427387904_i64,"vt_s":7})
    );
    // The failed batch gets no explicit node ops; the raw op is copied as it was.
    assert_eq!(lines[3]["ops"].as_array().unwrap().len(), 2);
    assert_eq!(lines[4]["ops"], json!([{"op":"frob","x":1}]));
    // Ingest: explicit discs, offset = ordinal base.
    assert_eq!(lines[6]["ops"][0]["offset"], json!(0));
    assert_eq!(lines[6]["ops"][0]["events"][0]["disc"], json!("k"));
    assert_eq!(lines[6]["ops"][0]["events"][1]["disc"], json!("#1"));

    let log = write_file(d.path(), "x.jsonl", &text);
    let (rep, s2) = import_fresh(d.path(), "imp", &log);
    let rep = rep.unwrap();
    assert_eq!((rep.batches, rep.failed_batches, rep.events), (6, 2, 2));
    assert_eq!(s2.digest(), dig);
    assert_eq!(s2.stats(), &stats);
    drop(s2);
    // Exporting the import gives the same text again.
    assert_eq!(export_text(&d.path().join("imp"), false).0, text);

    // Strict export drops reason and labels but keeps the explicit nodes.
    let (strict, _) = export_text(&src, true);
    assert!(!strict.contains("\"reason\""));
    assert!(!strict.contains("src_label"));
    assert!(strict.contains(r#""label":"RR""#));
}

fn err_of(r: tgms_engine::Result<ImportReport>) -> Error {
    match r {
        Ok(rep) => panic!("expected an error, got {rep:?}"),
        Err(e) => e,
    }
}

#[test]
fn bad_header_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let body: String = joined(&tgms_tv5_lines()[1..]);
    for (i, head) in [
        "",
        "{\"format\":\"tgms-eventlog\",\"version\":2}\n",
        "{\"format\":\"other\",\"version\":1}\n",
        "{\"format\":\"tgms-eventlog\",\"version\":1.0}\n",
        "[\"tgms-eventlog\",1]\n",
        "not json\n",
    ]
    .iter()
    .enumerate()
    {
        let log = write_file(d.path(), &format!("h{i}.jsonl"), &format!("{head}{body}"));
        let (r, s) = import_fresh(d.path(), &format!("s{i}"), &log);
        let e = err_of(r);
        assert_eq!(e.code().as_str(), "E_STATE", "{head}");
        assert_eq!(e.message(), "not a tgms event log", "{head}");
        assert_eq!(s.stats().n_batches, 0);
    }
    // An empty file is no log either.
    let log = write_file(d.path(), "empty.jsonl", "");
    let e = err_of(import_fresh(d.path(), "se", &log).0);
    assert_eq!(e.message(), "not a tgms event log");
}

#[test]
fn batch_id_mismatch_names_the_line() {
    let d = tempfile::tempdir().unwrap();
    let mut lines = tgms_tv5_lines();
    // Change the retract's instant without fixing its batch id: line 4.
    lines[3] = lines[3].replace(r#""t":5"#, r#""t":6"#);
    let log = write_file(d.path(), "m.jsonl", &joined(&lines));
    let (r, s) = import_fresh(d.path(), "s", &log);
    let e = err_of(r);
    assert_eq!(e.code().as_str(), "E_STATE");
    assert_eq!(e.message(), "batch_id mismatch at line 4");
    // The two batches before it were imported and stay.
    assert_eq!(s.stats().n_batches, 2);
}

#[test]
fn torn_final_line_is_skipped() {
    let d = tempfile::tempdir().unwrap();
    let lines = tgms_tv5_lines();
    // The final record cut in the middle, without its newline.
    let mut text = joined(&lines[..4]);
    text.push_str(&lines[4][..40]);
    let log = write_file(d.path(), "t.jsonl", &text);
    let (r, s) = import_fresh(d.path(), "s", &log);
    let rep = r.unwrap();
    assert!(rep.torn_final_line);
    assert_eq!((rep.batches, rep.failed_batches, rep.events), (3, 1, 0));
    assert_eq!(s.stats().n_batches, 3);

    // A complete final record without its newline whose batch id does not verify: torn.
    let mut text = joined(&lines[..4]);
    text.push_str(&lines[4].replace("\"vt_s\":30", "\"vt_s\":31"));
    let log = write_file(d.path(), "t2.jsonl", &text);
    let rep = import_fresh(d.path(), "s2", &log).0.unwrap();
    assert!(rep.torn_final_line);
    assert_eq!(rep.batches, 3);

    // A complete, verifying final record without its newline is imported.
    let mut text = joined(&lines[..4]);
    text.push_str(&lines[4]);
    let log = write_file(d.path(), "t3.jsonl", &text);
    let (r, s) = import_fresh(d.path(), "s3", &log);
    let rep = r.unwrap();
    assert!(!rep.torn_final_line);
    assert_eq!(rep.batches, 4);
    assert_eq!(s.digest(), TV5_DIGEST);

    // The same cut record *with* a newline is damage, not a torn tail.
    let mut text = joined(&lines[..4]);
    text.push_str(&lines[4][..40]);
    text.push('\n');
    let log = write_file(d.path(), "t4.jsonl", &text);
    match err_of(import_fresh(d.path(), "s4", &log).0) {
        Error::BadInput { line, .. } => assert_eq!(line, 5),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn malformed_lines_are_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let lines = tgms_tv5_lines();
    let cases = [
        "{\"batch_id\":\"x\",\"ops\":[",
        "",
        "[1,2,3]",
        "{\"batch_id\":\"c05907f6d1d44530\",\"tt\":1000}",
        "{\"batch_id\":\"c05907f6d1d44530\",\"ops\":{},\"tt\":1000}",
        "{\"ops\":[],\"tt\":1000}",
        "{\"batch_id\":7,\"ops\":[],\"tt\":1000}",
        "{\"batch_id\":\"c05907f6d1d44530\",\"ops\":[],\"tt\":\"1000\"}",
        "{\"batch_id\":\"c05907f6d1d44530\",\"ops\":[],\"tt\":1000.5}",
    ];
    for (i, bad) in cases.iter().enumerate() {
        let mut l = lines.clone();
        l.insert(3, bad.to_string());
        let log = write_file(d.path(), &format!("b{i}.jsonl"), &joined(&l));
        let (r, s) = import_fresh(d.path(), &format!("s{i}"), &log);
        match err_of(r) {
            Error::BadInput { file, line, reason } => {
                assert_eq!(file, log);
                assert_eq!(line, 4, "{bad}");
                assert!(!reason.is_empty());
            }
            other => panic!("{bad}: unexpected {other:?}"),
        }
        assert_eq!(s.stats().n_batches, 2);
    }
    // Invalid UTF-8.
    let mut bytes = joined(&lines[..2]).into_bytes();
    bytes.extend_from_slice(b"{\"x\":\"\xff\"}\n");
    let log = d.path().join("u.jsonl");
    std::fs::write(&log, bytes).unwrap();
    assert!(matches!(
        err_of(import_fresh(d.path(), "su", &log).0),
        Error::BadInput { line: 3, .. }
    ));
}

#[test]
fn bad_ingest_offset_is_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let ops = r#"[{"events":[{"dst":"c","rel_type":"MSG","src":"a","vt_s":30}],"node_label":"Node","offset":-1,"op":"ingest_events","provenance_ref":null,"source":"ingest"}]"#;
    let h = Sha256::digest(format!(r#"{{"ops":{ops},"tt":7}}"#).as_bytes());
    let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let text = format!(
        "{}\n{{\"batch_id\":\"{hex}\",\"ops\":{ops},\"tt\":7}}\n",
        eventlog::HEADER
    );
    let log = write_file(d.path(), "o.jsonl", &text);
    assert!(matches!(
        err_of(import_fresh(d.path(), "s", &log).0),
        Error::BadInput { line: 2, .. }
    ));
}

#[test]
fn non_monotonic_tt_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    // Records out of order: 1000, 1001, 1002, then 5000 rewritten as 1001.
    let mut lines = tgms_tv5_lines();
    let (_, ops, _) = TGMS_TV5[3];
    let h = Sha256::digest(format!(r#"{{"ops":{ops},"tt":1001}}"#).as_bytes());
    let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    lines[4] = format!(r#"{{"batch_id":"{hex}","ops":{ops},"tt":1001}}"#);
    let log = write_file(d.path(), "n.jsonl", &joined(&lines));
    let (r, s) = import_fresh(d.path(), "s", &log);
    let e = err_of(r);
    assert_eq!(e.code().as_str(), "E_STATE");
    assert_eq!(e.message(), "non-monotonic tt 1001 (last is 1002)");
    let tgms_engine::Error::State {
        about: tgms_engine::StateAbout::AtLine { line, .. },
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*line, 5);
    assert_eq!(s.stats().n_batches, 3);

    // A store whose last tt is at or above the log's first tt refuses the first record.
    let good = write_file(d.path(), "g.jsonl", &joined(&tgms_tv5_lines()));
    let mut s2 = new_store(d.path(), "s2");
    s2.write_at(
        1000,
        vec![op(json!({"op":"assert_node","uid":"z","label":"Z"}))],
    )
    .unwrap();
    let e = err_of(eventlog::import(&mut s2, &good, &mut |_| {}));
    assert_eq!(e.message(), "non-monotonic tt 1000 (last is 1000)");
    assert_eq!(s2.stats().n_batches, 1);
}

#[test]
fn export_of_a_missing_store_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let e = eventlog::export(&d.path().join("none"), &mut out, false).unwrap_err();
    assert_eq!(e.code().as_str(), "E_STATE");
}

#[test]
fn export_warns_about_failed_reasonless_retracts() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let mut s = new_store(d.path(), "s");
    s.write_at(
        10,
        vec![op(json!({"op":"assert_node","uid":"x","label":"N"}))],
    )
    .unwrap();
    // D-W1: no reason, so it fails here; TGMS would apply it.
    assert!(s
        .write_at(
            20,
            vec![op(
                json!({"op":"retract","ref":{"kind":"node","uid":"x"},"t":5})
            )]
        )
        .is_err());
    drop(s);
    let (text, rep) = export_text(&dir, false);
    assert_eq!(rep.batches, 2);
    assert_eq!(rep.warnings.len(), 1, "{:?}", rep.warnings);
    assert!(rep.warnings[0].contains("tt 20"), "{}", rep.warnings[0]);
    // The missing reason is exported as an explicit null, so a re-import keeps the batch
    // failed (a TGMS replay ignores the key); batch_id = first 16 hex of SHA-256 of the
    // canonical {"ops","tt"}.
    let ops = r#"[{"op":"retract","reason":null,"ref":{"kind":"node","uid":"x"},"t":5}]"#;
    let h = Sha256::digest(format!(r#"{{"ops":{ops},"tt":20}}"#).as_bytes());
    let id: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        text.lines().nth(2).unwrap(),
        format!(r#"{{"batch_id":"{id}","ops":{ops},"tt":20}}"#)
    );
    let (_, strict) = export_text(&dir, true);
    assert!(
        strict.warnings[0].contains("re-import"),
        "{:?}",
        strict.warnings
    );
}

#[test]
fn tgms_ingest_discs_restart_at_the_offset() {
    // TGMS restarts default discs at "#0" in every ingest call: two calls that ingest the
    // same event both name eid("a","b","M","#0") = 525d5e8ec7d4615ae428838b (TV1). Ours
    // imports them under that eid, carving the second over the first (D-W2).
    let d = tempfile::tempdir().unwrap();
    let ops = r#"[{"events":[{"dst":"b","rel_type":"M","src":"a","vt_s":1}],"node_label":"Node","offset":0,"op":"ingest_events","provenance_ref":null,"source":"ingest"}]"#;
    let mut text = format!("{}\n", eventlog::HEADER);
    for tt in [100, 200] {
        let h = Sha256::digest(format!(r#"{{"ops":{ops},"tt":{tt}}}"#).as_bytes());
        let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!(
            "{{\"batch_id\":\"{hex}\",\"ops\":{ops},\"tt\":{tt}}}\n"
        ));
    }
    let log = write_file(d.path(), "i.jsonl", &text);
    let (rep, s) = import_fresh(d.path(), "s", &log);
    let rep = rep.unwrap();
    assert_eq!((rep.batches, rep.failed_batches, rep.events), (2, 0, 2));
    let snap = s.snapshot();
    let edges: Vec<(String, i64, i64)> = snap
        .all_edges()
        .iter()
        .map(|e| (e.eid(), e.tt_s(), e.tt_e()))
        .collect();
    let eid = "525d5e8ec7d4615ae428838b".to_string();
    assert_eq!(
        edges,
        vec![(eid.clone(), 100, 200), (eid, 200, tgms_engine::OPEN_END)]
    );
    drop(s);
    // The export warns that a TGMS replay would not reproduce the carving.
    let (text, rep) = export_text(&d.path().join("s"), false);
    assert_eq!(rep.warnings.len(), 1, "{:?}", rep.warnings);
    assert!(rep.warnings[0].contains("D-W2"));
    // Second batch: offset is our ordinal base (1), the disc stays explicit "#0".
    let l2: Value = serde_json::from_str(text.lines().nth(2).unwrap()).unwrap();
    assert_eq!(l2["ops"][0]["offset"], json!(1));
    assert_eq!(l2["ops"][0]["events"][0]["disc"], json!("#0"));
}
