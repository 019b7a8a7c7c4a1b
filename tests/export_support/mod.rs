//! Test support for the export tests (`export_typed.rs`, `export_sql.rs`): the CLI runner, a
//! store with corrections and typed props, and an independent reader of the plain CSV
//! export that the expectations are computed from.
#![allow(dead_code)]

use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The store's open end of an interval, µs (2^62).
pub const OPEN_END: i64 = 1 << 62;

/// Runs the `tgms` binary and returns its stdout; panics with its stderr on failure.
pub fn tgms(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tgms {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Runs the `tgms` binary expecting failure; returns its stdout (the error payload).
pub fn tgms_err(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .unwrap();
    assert!(!o.status.success(), "tgms {args:?} should fail");
    String::from_utf8(o.stdout).unwrap()
}

/// A path as `&str`.
pub fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

/// A store with corrections (the incident scenario) and edges whose props have one type
/// across the store (`w`: ints, `f`: ints and floats, `k`: strings) or several (`m`), and a
/// numeric `weight` on three edges of two weeks, and a node (`x1`) whose version a later
/// write corrects.
pub fn store(dir: &Path) -> PathBuf {
    let sp = dir.join("s");
    tgms_bench::scenarios::build_store(&sp, &tgms_bench::scenarios::incident_log()).unwrap();
    let batch = dir.join("b.json");
    let t = 1_100_000_000_000_000i64; // 2004-11-09
    let day = 86_400_000_000i64;
    std::fs::write(
        &batch,
        json!([
            {"op": "assert_edge", "src": "x1", "dst": "x2", "rel_type": "T", "vt_s": t,
             "vt_e": t + 10, "props": {"w": 1, "f": 2, "k": "a", "m": 5}},
            {"op": "assert_edge", "src": "x2", "dst": "x3", "rel_type": "T",
             "vt_s": t + 40 * day, "props": {"w": 2, "f": 2.5, "m": "five"}},
            {"op": "assert_edge", "src": "x1", "dst": "x3", "rel_type": "MSG",
             "vt_s": t + day, "props": {"weight": 3}},
            {"op": "assert_edge", "src": "x3", "dst": "x1", "rel_type": "MSG",
             "vt_s": t + 2 * day, "props": {"weight": 4.5}},
            {"op": "assert_edge", "src": "x2", "dst": "x1", "rel_type": "MSG",
             "vt_s": t + 9 * day, "props": {"weight": 10}},
        ])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    // A node version corrected by a later write, for the history query.
    std::fs::write(
        &batch,
        json!([{"op": "assert_node", "uid": "x1", "label": "Acct", "vt_s": t,
                "props": {"tier": "gold"}}])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    std::fs::write(
        &batch,
        json!([{"op": "correct", "ref": {"kind": "node", "uid": "x1"}, "vt_s": t,
                "props": {"tier": "silver"}, "reason": "tier fixed"}])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    sp
}

/// A minimal RFC 4180 reader: `None` for an empty unquoted field, `Some("")` for `""`.
pub fn parse_csv(text: &str) -> Vec<Vec<Option<String>>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut in_q, mut chars) = (false, false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (in_q, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => in_q = false,
            (true, c) => cur.push(c),
            (false, '"') => {
                in_q = true;
                quoted = true;
            }
            (false, ',' | '\n') => {
                row.push((quoted || !cur.is_empty()).then(|| std::mem::take(&mut cur)));
                quoted = false;
                if c == '\n' {
                    rows.push(std::mem::take(&mut row));
                }
            }
            (false, c) => cur.push(c),
        }
    }
    rows
}

/// The plain CSV export as maps column → cell (None = null).
pub fn csv_rows(sp: &Path, dir: &Path) -> Vec<BTreeMap<String, Option<String>>> {
    let out = dir.join("rows.csv");
    tgms(&["export-rows", p(sp), p(&out)]);
    let rows = parse_csv(&std::fs::read_to_string(&out).unwrap());
    let header: Vec<String> = rows[0].iter().map(|c| c.clone().unwrap()).collect();
    rows[1..]
        .iter()
        .map(|r| header.iter().cloned().zip(r.iter().cloned()).collect())
        .collect()
}

/// The venv's python with DuckDB (from `bench/eval/requirements.txt`, installed by
/// `bench/eval/duckdb-venv.sh` once per target directory), or `None` with a message when the
/// package index cannot be reached.
pub fn duckdb_python() -> Option<&'static Path> {
    static PY: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let req = std::fs::read_to_string(root.join("bench/eval/requirements.txt")).unwrap();
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("duckdb-venv");
        let py = venv.join("bin/python");
        let marker = venv.join("installed-requirements.txt");
        if std::fs::read_to_string(&marker).ok().as_deref() == Some(req.as_str()) {
            return Some(py);
        }
        let _ = std::fs::remove_dir_all(&venv);
        let out = Command::new(root.join("bench/eval/duckdb-venv.sh"))
            .arg(&venv)
            .output()
            .expect("bash runs");
        if !out.status.success() {
            eprintln!(
                "SKIP: DuckDB cannot be installed from the package index:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        std::fs::write(&marker, req).unwrap();
        Some(py)
    })
    .as_deref()
}
