//! `tgms export-rows STORE OUT.csv|OUT.parquet`: one row per stored row in store-digest order,
//! with the stored row's values (CSV: null → empty field, "" → `""`); the Parquet file holds
//! the same rows as the CSV; bad output paths are usage errors with a hint.

use serde_json::Value;
use std::process::Command;
use tgms_engine::{canon, Version};

mod export_support;
use export_support::parse_csv;

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
}

/// Every row of a Parquet file as CSV-like cells: strings as they are, integers as decimal
/// text, null as `None`; also checks the column names and that times are INT64.
fn read_parquet(path: &std::path::Path) -> Vec<Vec<Option<String>>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let schema = r.metadata().file_metadata().schema_descr_ptr();
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, tgms::export_rows::COLUMNS);
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, f)| match f {
                    Field::Null => None,
                    Field::Str(s) => Some(s.clone()),
                    Field::Long(v) => Some(v.to_string()),
                    other => panic!("column {name}: unexpected {other:?}"),
                })
                .collect()
        })
        .collect()
}

fn export(store: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("export-rows")
        .arg(store)
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn export_rows_parquet_holds_the_csv_rows() {
    let dir = tempfile::tempdir().unwrap();
    let sp = dir.path().join("s");
    let st =
        tgms_bench::scenarios::build_store(&sp, &tgms_bench::scenarios::incident_log()).unwrap();
    let (csv, pq) = (dir.path().join("rows.csv"), dir.path().join("rows.parquet"));
    for out in [&csv, &pq] {
        let o = export(&sp, out, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let csv_rows = parse_csv(&std::fs::read_to_string(&csv).unwrap());
    let pq_rows = read_parquet(&pq);
    assert_eq!(pq_rows.len(), 19);
    assert_eq!(pq_rows, csv_rows[1..]);
    // The incident log has null cells (node-only / edge-only columns) and set ones in the
    // optional columns, so both definition levels are exercised.
    let nulls = pq_rows.iter().flatten().filter(|c| c.is_none()).count();
    assert!(nulls > 0 && nulls < 19 * 20);

    // Several row groups (7 + 7 + 5 rows) read back as the same rows.
    let grouped = dir.path().join("grouped.parquet");
    let f = std::fs::File::create(&grouped).unwrap();
    let counts = tgms::export_rows::write_parquet_grouped(&st, f, 7).unwrap();
    assert_eq!(counts.0 + counts.1, 19);
    use parquet::file::reader::FileReader;
    let r =
        parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&grouped).unwrap())
            .unwrap();
    assert_eq!(r.metadata().num_row_groups(), 3);
    assert_eq!(read_parquet(&grouped), csv_rows[1..]);

    // --format overrides the extension.
    let dat = dir.path().join("rows.dat");
    assert!(export(&sp, &dat, &["--format", "parquet"]).status.success());
    assert_eq!(read_parquet(&dat), csv_rows[1..]);
    assert!(export(&sp, &dat, &["--format", "csv"]).status.success());
    assert_eq!(std::fs::read(&dat).unwrap(), std::fs::read(&csv).unwrap());
}

#[test]
fn export_rows_bad_output_is_a_usage_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let sp = dir.path().join("s");
    tgms_bench::scenarios::build_store(&sp, &tgms_bench::scenarios::incident_log()).unwrap();
    let txt = dir.path().join("rows.txt");
    let o = export(&sp, &txt, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'.txt'") && err.contains("hint: name it OUT.csv, OUT.parquet or OUT.arrow"),
        "{err}"
    );
    assert!(!txt.exists());
    let o = export(&sp, &dir.path().join("missing/rows.parquet"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot create") && err.contains("hint: the parent directory"),
        "{err}"
    );
    // A missing store is the store error of every command (exit 3, payload on stdout).
    let o = export(&dir.path().join("nostore"), &dir.path().join("r.csv"), &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no tgms store"));
}
