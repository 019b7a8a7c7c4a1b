//! `tgms export-rows STORE OUT.csv`: one line per stored row in store-digest order, with the
//! stored row's values (null → empty field, "" → `""`).

use serde_json::Value;
use std::process::Command;
use tgms_engine::{canon, Version};

/// A minimal RFC 4180 reader: `None` for an empty unquoted field.
fn parse_csv(text: &str) -> Vec<Vec<Option<String>>> {
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

#[test]
fn export_rows_csv_matches_the_stored_rows() {
    let dir = tempfile::tempdir().unwrap();
    let sp = dir.path().join("s");
    let st =
        tgms_bench::scenarios::build_store(&sp, &tgms_bench::scenarios::incident_log()).unwrap();
    let out = dir.path().join("rows.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("export-rows")
        .arg(&sp)
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = parse_csv(&std::fs::read_to_string(&out).unwrap());
    let header: Vec<String> = rows[0].iter().map(|c| c.clone().unwrap()).collect();
    assert_eq!(header, tgms::export_rows::COLUMNS);
    let snap = st.snapshot();
    let stored: Vec<Value> = snap
        .all_nodes()
        .into_iter()
        .map(|n| Version::Node(n).to_json())
        .chain(
            snap.all_edges()
                .into_iter()
                .map(|e| Version::Edge(e).to_json()),
        )
        .collect();
    assert_eq!(rows.len() - 1, stored.len());
    assert_eq!(stored.len(), 19);
    for (row, want) in rows[1..].iter().zip(&stored) {
        for (col, cell) in header.iter().zip(row) {
            let w = &want[col.as_str()];
            let expect = match w {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                other if col == "props" || col == "provenance_ref" => Some(canon::to_string(other)),
                other => Some(other.to_string()),
            };
            let expect = match (col.as_str(), expect) {
                ("provenance_ref", None) => Some("null".to_string()),
                (_, e) => e,
            };
            assert_eq!(cell, &expect, "column {col} of {want}");
        }
    }
    // Parquet is refused as a usage error.
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("export-rows")
        .arg(&sp)
        .arg(dir.path().join("rows.parquet"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
