//! `tgms import-rows`: an export of a store written by ingests and asserts (CollegeMsg, a
//! batch of asserts with every audit field, explicit discriminators and closed intervals, a
//! second ingest), in each of the four export forms, rebuilds a store with the source's
//! store digest; exports with closed rows, non-empty targets, files without the export's
//! columns and edited files are refused with the fix.

mod export_support;
use export_support::{p, tgms, tgms_err};
use serde_json::{json, Value};
use std::path::Path;

fn source(dir: &Path) -> std::path::PathBuf {
    let sp = dir.join("src");
    tgms(&["init", p(&sp)]);
    tgms(&["ingest", p(&sp), "--dataset", "collegemsg"]);
    let batch = dir.join("w.json");
    std::fs::write(
        &batch,
        json!([
            {"op": "assert_node", "uid": "zed", "label": "Person", "vt_s": 1_082_040_961_000_000i64,
             "props": {"age": 3}, "reason": "hr import", "source": "hr", "provenance_ref": {"doc": 7}},
            {"op": "assert_edge", "src": "zed", "dst": "n1", "rel_type": "KNOWS",
             "vt_s": 1_082_040_961_000_000i64, "props": {"w": 1.5}, "reason": "met"},
            {"op": "assert_edge", "src": "zed", "dst": "n2", "rel_type": "KNOWS", "disc": "b",
             "vt_s": 1_082_040_962_000_000i64, "vt_e": 1_082_040_963_000_000i64},
        ])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    let snap = dir.join("more.txt");
    std::fs::write(&snap, "7 8 100\n8 9 200\n8 9 200\n").unwrap();
    tgms(&[
        "ingest",
        p(&sp),
        p(&snap),
        "--format",
        "snap",
        "--rel-type",
        "PING",
    ]);
    sp
}

fn digest(store: &Path) -> String {
    tgms(&["digest", p(store)]).trim().to_string()
}

#[test]
fn every_export_form_rebuilds_the_source_digest() {
    let dir = tempfile::tempdir().unwrap();
    let sp = source(dir.path());
    let want = digest(&sp);
    let rows = tgms(&["stats", p(&sp), "--format", "json"]);
    let stats: Value = serde_json::from_str(&rows).unwrap();
    let n_rows =
        stats["n_node_versions"].as_u64().unwrap() + stats["n_edge_versions"].as_u64().unwrap();
    for (name, extra) in [
        ("rows.csv", None),
        ("rows.parquet", None),
        ("typed.parquet", Some("--typed")),
        ("rows.arrow", None),
    ] {
        let file = dir.path().join(name);
        let mut args = vec!["export-rows", p(&sp), p(&file)];
        args.extend(extra);
        tgms(&args);
        let copy = dir.path().join(format!("copy-{name}"));
        tgms(&["init", p(&copy)]);
        let out: Value = serde_json::from_str(&tgms(&["import-rows", p(&copy), p(&file)])).unwrap();
        assert_eq!(out["rows"], json!(n_rows), "{name}");
        assert_eq!(out["batches"], stats["n_batches"], "{name}");
        assert_eq!(digest(&copy), want, "{name}: the source's store digest");
        assert_eq!(out["digest"], json!(want));
    }
}

#[test]
fn what_an_export_cannot_rebuild_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let sp = source(dir.path());
    let csv = dir.path().join("rows.csv");
    tgms(&["export-rows", p(&sp), p(&csv)]);

    // A target that is not empty.
    let e = tgms_err(&["import-rows", p(&sp), p(&csv)]);
    assert!(e.contains("needs an empty store"), "{e}");

    // A correction closes a row: the event log is the way.
    let batch = dir.path().join("fix.json");
    std::fs::write(
        &batch,
        json!([{"op": "correct", "ref": {"kind": "node", "uid": "zed"},
                "vt_s": 1_082_040_961_000_000i64, "props": {"age": 4}, "reason": "typo"}])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    let closed = dir.path().join("closed.parquet");
    tgms(&["export-rows", p(&sp), p(&closed)]);
    let t = dir.path().join("t1");
    tgms(&["init", p(&t)]);
    let e = tgms_err(&["import-rows", p(&t), p(&closed)]);
    assert!(
        e.contains("export-eventlog") && e.contains("closed at tt"),
        "{e}"
    );
    let stats: Value = serde_json::from_str(&tgms(&["stats", p(&t), "--format", "json"])).unwrap();
    assert_eq!(stats["n_batches"], json!(0), "nothing written");

    // A file without the export's columns.
    let text = std::fs::read_to_string(&csv).unwrap();
    let cut = dir.path().join("cut.csv");
    std::fs::write(&cut, text.replacen(",origin,", ",kind_of_write,", 1)).unwrap();
    let e = tgms_err(&["import-rows", p(&t), p(&cut)]);
    assert!(e.contains("no column 'origin'"), "{e}");

    // An edited vid: the rows are written, and the check says they differ from the file.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let i = lines.iter().position(|l| l.starts_with("edge,")).unwrap();
    let vid = lines[i].split(',').nth(1).unwrap().to_string();
    lines[i] = lines[i].replacen(&vid, "000000000000000000000000", 1);
    let edited = dir.path().join("edited.csv");
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();
    let e = tgms_err(&["import-rows", p(&t), p(&edited)]);
    assert!(e.contains("differ from the file's"), "{e}");
}
