//! The typed export of `tgms export-rows` (`--format arrow`, `--typed` Parquet, `--as-of`,
//! `--partition-by month`) checked against the plain CSV export of the same store, read
//! independently: TIMESTAMP(µs, UTC) times with the open end as the documented sentinel,
//! typed prop columns, past belief states computed by brute force from the CSV rows and
//! unchanged by later writes, month partitions, and `ingest --format arrow-ipc` of the export
//! reproducing the store's events.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

mod export_support;
use export_support::{csv_rows, p, store, tgms, OPEN_END};

fn read_ipc(path: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    arrow_ipc::reader::StreamReader::try_new(f, None)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every row of the batches as column → JSON value (times as µs integers).
fn typed_rows(batches: &[RecordBatch]) -> Vec<BTreeMap<String, Value>> {
    let mut out = Vec::new();
    for b in batches {
        for row in 0..b.num_rows() {
            let mut m = BTreeMap::new();
            for (f, col) in b.schema().fields().iter().zip(b.columns()) {
                let v = if col.is_null(row) {
                    Value::Null
                } else {
                    match f.data_type() {
                        DataType::Utf8 => json!(col.as_string::<i32>().value(row)),
                        DataType::Int64 => json!(col.as_primitive::<Int64Type>().value(row)),
                        DataType::Float64 => json!(col.as_primitive::<Float64Type>().value(row)),
                        DataType::Boolean => json!(col.as_boolean().value(row)),
                        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) if &**tz == "UTC" => {
                            json!(col.as_primitive::<TimestampMicrosecondType>().value(row))
                        }
                        other => panic!("unexpected type {other}"),
                    }
                };
                m.insert(f.name().clone(), v);
            }
            out.push(m);
        }
    }
    out
}

/// What a CSV row should look like in the typed export (`props` of the prop columns parsed
/// independently with serde_json).
fn expected(row: &BTreeMap<String, Option<String>>, prop_cols: &[&str]) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    for (k, v) in row {
        let val = match (k.as_str(), v) {
            (_, None) => Value::Null,
            ("vt_s" | "vt_e" | "tt_s" | "tt_e", Some(t)) => json!(t.parse::<i64>().unwrap()),
            (_, Some(s)) => json!(s),
        };
        m.insert(k.clone(), val);
    }
    let props: serde_json::Map<String, Value> =
        serde_json::from_str(row["props"].as_deref().unwrap()).unwrap();
    for c in prop_cols {
        let name = c.strip_prefix("prop_").unwrap();
        let v = match (name, props.get(name)) {
            (_, None) => Value::Null,
            // Mixed types: the JSON text.
            ("m", Some(v)) => json!(v.to_string()),
            ("f" | "weight", Some(v)) => json!(v.as_f64().unwrap()),
            (_, Some(v)) => v.clone(),
        };
        m.insert(c.to_string(), v);
    }
    m
}

#[test]
fn arrow_export_has_typed_times_and_props_and_the_csv_rows() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let csv = csv_rows(&sp, dir.path());
    let out = dir.path().join("rows.arrow");
    tgms(&["export-rows", p(&sp), p(&out)]);
    let batches = read_ipc(&out);
    let schema = batches[0].schema();
    assert_eq!(
        schema.metadata().get("tgms.open_end_us"),
        Some(&OPEN_END.to_string())
    );
    for t in ["vt_s", "vt_e", "tt_s", "tt_e"] {
        let f = schema.field_with_name(t).unwrap();
        assert_eq!(
            f.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert!(!f.is_nullable());
    }
    let prop_cols: Vec<&str> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| n.starts_with("prop_"))
        .collect();
    // Every prop name of the store, sorted, typed when one type holds.
    let mut names: Vec<String> = csv
        .iter()
        .flat_map(|r| {
            serde_json::from_str::<serde_json::Map<String, Value>>(r["props"].as_deref().unwrap())
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(
        prop_cols,
        names
            .iter()
            .map(|n| format!("prop_{n}"))
            .collect::<Vec<_>>()
    );
    let ty = |n: &str| schema.field_with_name(n).unwrap().data_type().clone();
    assert_eq!(ty("prop_w"), DataType::Int64);
    assert_eq!(ty("prop_f"), DataType::Float64);
    assert_eq!(ty("prop_k"), DataType::Utf8);
    assert_eq!(ty("prop_m"), DataType::Utf8);
    assert_eq!(
        schema
            .field_with_name("prop_m")
            .unwrap()
            .metadata()
            .get("tgms.json"),
        Some(&"true".to_string())
    );
    let got = typed_rows(&batches);
    assert_eq!(got.len(), csv.len());
    assert!(
        got.iter().any(|r| r["tt_e"] != json!(OPEN_END)),
        "has closed rows"
    );
    assert!(
        got.iter().any(|r| r["vt_e"] == json!(OPEN_END)),
        "has open rows"
    );
    for (g, c) in got.iter().zip(&csv) {
        assert_eq!(g, &expected(c, &prop_cols));
    }

    // Parquet --typed holds the same batches.
    let pq = dir.path().join("rows.parquet");
    tgms(&["export-rows", p(&sp), p(&pq), "--typed"]);
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&pq).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let pq_batches: Vec<RecordBatch> = r.map(Result::unwrap).collect();
    assert_eq!(typed_rows(&pq_batches), got);
    assert_eq!(pq_batches[0].schema().fields(), schema.fields());
}

#[test]
fn as_of_exports_the_past_belief_state_unchanged_by_later_writes() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let csv = csv_rows(&sp, dir.path());
    // A transaction time between batches: the first batch's.
    let mut tts: Vec<i64> = csv
        .iter()
        .map(|r| r["tt_s"].as_deref().unwrap().parse().unwrap())
        .collect();
    tts.sort();
    tts.dedup();
    assert!(tts.len() >= 3);
    let tt = tts[1];
    let out = dir.path().join("asof.arrow");
    tgms(&["export-rows", p(&sp), p(&out), "--as-of", &tt.to_string()]);
    let got = typed_rows(&read_ipc(&out));
    let schema = read_ipc(&out)[0].schema();
    let prop_cols: Vec<&str> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| n.starts_with("prop_"))
        .collect();
    // Brute force over the CSV rows: believed at tt, as believed then.
    let want: Vec<BTreeMap<String, Value>> = csv
        .iter()
        .filter(|r| {
            let s: i64 = r["tt_s"].as_deref().unwrap().parse().unwrap();
            let e: i64 = r["tt_e"].as_deref().unwrap().parse().unwrap();
            s <= tt && tt < e
        })
        .map(|r| {
            let mut r = r.clone();
            if r["tt_e"].as_deref() != Some(&OPEN_END.to_string()) {
                r.insert("tt_e".into(), Some(OPEN_END.to_string()));
                r.insert("closed_by".into(), None);
                r.insert("close_reason".into(), None);
            }
            r
        })
        .map(|r| {
            let mut e = expected(&r, &[]);
            let props: serde_json::Map<String, Value> =
                serde_json::from_str(r["props"].as_deref().unwrap()).unwrap();
            for c in &prop_cols {
                let v = props.get(c.strip_prefix("prop_").unwrap()).cloned();
                e.insert(c.to_string(), v.unwrap_or(Value::Null));
            }
            e
        })
        .collect();
    assert!(!want.is_empty() && want.len() < csv.len());
    assert_eq!(got, want);
    // Later writes do not change the export of that belief state.
    let before = std::fs::read(&out).unwrap();
    let batch = dir.path().join("c.json");
    std::fs::write(
        &batch,
        json!([{"op": "assert_edge", "src": "y1", "dst": "y2", "rel_type": "T", "vt_s": 5,
                "props": {"zz": true}}])
        .to_string(),
    )
    .unwrap();
    tgms(&["write", p(&sp), p(&batch)]);
    tgms(&["export-rows", p(&sp), p(&out), "--as-of", &tt.to_string()]);
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn partition_by_month_splits_the_rows_by_valid_time() {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let csv = csv_rows(&sp, dir.path());
    let out = dir.path().join("parts");
    tgms(&[
        "export-rows",
        p(&sp),
        p(&out),
        "--format",
        "arrow",
        "--partition-by",
        "month",
    ]);
    let mut all = Vec::new();
    let mut months = Vec::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let month = name.strip_prefix("vt_month=").unwrap().to_string();
        let rows = typed_rows(&read_ipc(&e.path().join("part-0.arrows")));
        for r in &rows {
            let secs = r["vt_s"].as_i64().unwrap().div_euclid(1_000_000);
            let d = chrono::DateTime::from_timestamp(secs, 0).unwrap();
            assert_eq!(d.format("%Y-%m").to_string(), month);
        }
        months.push(month);
        all.extend(rows);
    }
    let want_months: std::collections::BTreeSet<String> = csv
        .iter()
        .map(|r| {
            let us: i64 = r["vt_s"].as_deref().unwrap().parse().unwrap();
            chrono::DateTime::from_timestamp(us.div_euclid(1_000_000), 0)
                .unwrap()
                .format("%Y-%m")
                .to_string()
        })
        .collect();
    months.sort();
    assert_eq!(months, want_months.into_iter().collect::<Vec<_>>());
    assert!(months.len() >= 2);
    let key = |r: &BTreeMap<String, Value>| r["vid"].as_str().unwrap().to_string();
    let mut got: Vec<String> = all.iter().map(key).collect();
    got.sort();
    let mut want: Vec<String> = csv.iter().map(|r| r["vid"].clone().unwrap()).collect();
    want.sort();
    assert_eq!(got, want);
}

/// `(src, dst, rel_type, disc, vt_s, vt_e, props)` of every believed edge row of a CSV
/// export.
fn believed_events(rows: &[BTreeMap<String, Option<String>>]) -> Vec<Vec<Option<String>>> {
    let mut v: Vec<Vec<Option<String>>> = rows
        .iter()
        .filter(|r| {
            r["kind"].as_deref() == Some("edge")
                && r["tt_e"].as_deref() == Some(&OPEN_END.to_string())
        })
        .map(|r| {
            ["src", "dst", "rel_type", "disc", "vt_s", "vt_e", "props"]
                .iter()
                .map(|c| r[*c].clone())
                .collect()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn arrow_ipc_ingest_of_the_export_reproduces_the_events() {
    ingest_of_the_export_reproduces_the_events("rows.arrow", &[], "arrow-ipc");
}

/// The typed Parquet export (timestamp columns, typed props) loads as the Arrow stream does.
#[test]
fn typed_parquet_ingest_of_the_export_reproduces_the_events() {
    ingest_of_the_export_reproduces_the_events("rows.parquet", &["--typed"], "parquet");
}

/// Exports the test store to `file` (with `flags`), loads its believed edge rows into a
/// fresh store as `format` and compares the events of both stores' CSV exports.
fn ingest_of_the_export_reproduces_the_events(file: &str, flags: &[&str], format: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let csv = csv_rows(&sp, dir.path());
    let out = dir.path().join(file);
    let mut export = vec!["export-rows", p(&sp), p(&out)];
    export.extend(flags);
    tgms(&export);
    let b = dir.path().join("b");
    tgms(&["init", p(&b)]);
    let open = OPEN_END.to_string();
    let only_open = format!("tt_e={open}");
    tgms(&[
        "ingest",
        p(&b),
        p(&out),
        "--format",
        format,
        "--only",
        "kind=edge",
        "--only",
        &only_open,
        "--src",
        "src",
        "--dst",
        "dst",
        "--time-col",
        "vt_s",
        "--end",
        "vt_e",
        "--rel-type-col",
        "rel_type",
        "--disc",
        "disc",
        "--props-json",
        "props",
    ]);
    let dir2 = dir.path().join("b-out");
    std::fs::create_dir_all(&dir2).unwrap();
    let again = csv_rows(&b, &dir2);
    assert!(!believed_events(&csv).is_empty());
    assert_eq!(believed_events(&again), believed_events(&csv));
}
