//! `tgms sql` (docs/sql.md) as a user runs it: the table `rows` holds exactly the rows of
//! the plain CSV export (read independently, by `export-rows`), the prop columns are typed
//! as the export's, `--as-of` pins a past belief state, the three output formats, and
//! statements that fail or write are refused with `E_SQL`.

mod export_support;
use export_support::{csv_rows, p, store, tgms, tgms_err};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// The JSON rows of `q` over store `sp` (extra args after the query).
fn sql_json(sp: &std::path::Path, q: &str, extra: &[&str]) -> Vec<BTreeMap<String, Value>> {
    let mut args = vec!["sql", p(sp), q, "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&tgms(&args)).unwrap()
}

#[test]
fn the_table_holds_the_rows_of_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let want_rows = csv_rows(&sp, dir.path());
    let cols = tgms_sql::columns::COLUMNS;
    let select: Vec<String> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if tgms_sql::columns::TIME_COLUMNS.contains(&i) {
                format!("arrow_cast({c}, 'Int64') AS {c}")
            } else {
                c.to_string()
            }
        })
        .collect();
    let q = format!("SELECT {} FROM rows", select.join(", "));
    // JSON leaves null columns out; integers (the times) compare as the CSV's text.
    let mut got: Vec<Vec<Option<String>>> = sql_json(&sp, &q, &[])
        .iter()
        .map(|r| {
            cols.iter()
                .map(|c| match r.get(*c) {
                    None => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(v) => Some(v.to_string()),
                })
                .collect()
        })
        .collect();
    let mut want: Vec<Vec<Option<String>>> = want_rows
        .iter()
        .map(|r| cols.iter().map(|c| r[*c].clone()).collect())
        .collect();
    got.sort();
    want.sort();
    assert!(want.len() > 20);
    assert_eq!(got, want);
}

#[test]
fn prop_columns_are_typed_and_as_of_pins_a_past_belief_state() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let types: BTreeMap<String, String> = sql_json(&sp, "DESCRIBE rows", &[])
        .into_iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("column_name"), s("data_type"))
        })
        .collect();
    assert_eq!(types["prop_w"], "Int64");
    assert_eq!(types["prop_f"], "Float64");
    assert_eq!(types["prop_k"], "Utf8");
    assert_eq!(types["prop_m"], "Utf8", "mixed types: JSON text");
    assert_eq!(types["vt_s"], "Timestamp(µs, \"UTC\")");
    // x1's tier was corrected from gold to silver: the closed version names when.
    let closed = csv_rows(&sp, dir.path())
        .into_iter()
        .find(|r| r["uid"].as_deref() == Some("x1") && r["close_reason"].is_some())
        .expect("x1's corrected version");
    let corrected_at: i64 = closed["tt_e"].as_deref().unwrap().parse().unwrap();
    let q = "SELECT prop_tier, closed_by FROM rows WHERE uid = 'x1' AND prop_tier IS NOT NULL \
             AND tt_e = open_end()";
    let tier = |extra: &[&str]| {
        let rows = sql_json(&sp, q, extra);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert!(
            !rows[0].contains_key("closed_by"),
            "believed rows are not closed"
        );
        rows[0]["prop_tier"].as_str().unwrap().to_string()
    };
    assert_eq!(tier(&[]), "silver");
    let before = (corrected_at - 1).to_string();
    assert_eq!(tier(&["--as-of", &before]), "gold");
    assert_eq!(tier(&["--as-of", &corrected_at.to_string()]), "silver");
}

#[test]
fn formats_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let q = "SELECT rel_type, count(*) AS n FROM rows WHERE kind = 'edge' AND rel_type = 'MSG' \
             GROUP BY rel_type";
    let table = tgms(&["sql", p(&sp), q]);
    assert!(table.contains("| rel_type | n "), "{table}");
    let csv = tgms(&["sql", p(&sp), q, "--format", "csv"]);
    assert!(csv.starts_with("rel_type,n\nMSG,"), "{csv}");
    let none = "SELECT uid FROM rows WHERE uid = 'nobody'";
    assert_eq!(
        tgms(&["sql", p(&sp), none, "--format", "json"]).trim(),
        "[]"
    );
    assert!(tgms(&["sql", p(&sp), none, "--format", "csv"]).starts_with("uid"));
    // Refused: syntax errors, unknown columns, statements that write.
    for bad in [
        "SELEC 1",
        "SELECT nope FROM rows",
        "INSERT INTO rows (kind) VALUES ('x')",
        "CREATE TABLE t AS SELECT 1",
        "COPY (SELECT 1) TO '/tmp/tgms-sql-copy.csv'",
        "SET datafusion.execution.batch_size = 1",
    ] {
        let e: Value = serde_json::from_str(&tgms_err(&["sql", p(&sp), bad])).unwrap();
        assert_eq!(e["error"], "E_SQL", "{bad}: {e}");
        assert_eq!(e["details"]["statement"], bad);
        assert!(e["details"]["fix"]
            .as_str()
            .unwrap()
            .contains("DESCRIBE rows"));
    }
    assert!(!std::path::Path::new("/tmp/tgms-sql-copy.csv").exists());
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(["sql", p(&dir.path().join("missing")), "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["error"], "E_STATE");
}

#[test]
fn the_queries_of_the_docs_run() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/sql.md")).unwrap();
    let queries: Vec<&str> = doc
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().trim().trim_end_matches(';'))
        .collect();
    assert!(queries.len() >= 5);
    for q in queries {
        // Each runs and prints a JSON array (an error would fail `tgms`).
        let rows: Vec<Value> =
            serde_json::from_str(&tgms(&["sql", p(&sp), q, "--format", "json"])).unwrap();
        if q.contains("uid = 'n1'") {
            continue; // the docs' uid; this store's nodes are named otherwise
        }
        assert!(
            !rows.is_empty() || q.contains("EXCEPT") || q.contains("2004-05-01"),
            "{q}"
        );
    }
}
