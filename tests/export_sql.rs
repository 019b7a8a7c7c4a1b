//! The SQL of `docs/export.md`, run as written in real DuckDB over the typed Parquet export
//! of a store with corrections, in a session time zone away from UTC and in UTC, each answer
//! compared with one computed independently (brute force in this file) from the plain CSV
//! export of the same store. A changed query in the doc, a changed export schema or a
//! time-zone-dependent query fails here.

mod export_support;
use export_support::{csv_rows, duckdb_python, p, store, tgms, OPEN_END};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

type CsvRow = BTreeMap<String, Option<String>>;
type SqlRow = BTreeMap<String, Value>;

/// Runs each query over `read_parquet(parquet)` as the view `r` in one DuckDB session with
/// `TimeZone = tz`; times come back as µs integers (`epoch_us`), text as strings.
const RUNNER: &str = r#"
import duckdb, json, sys
parquet, tz = sys.argv[1], sys.argv[2]
queries = json.load(sys.stdin)
c = duckdb.connect()
c.execute(f"SET TimeZone = '{tz}'")
c.execute(f"CREATE VIEW r AS SELECT * FROM read_parquet('{parquet}')")
out = []
for q in queries:
    q = q.strip().rstrip(';')
    cols = c.execute(f"DESCRIBE {q}").fetchall()
    sel = []
    for name, ty, *_ in cols:
        qn = '"' + name.replace('"', '""') + '"'
        if ty.startswith('TIMESTAMP'):
            sel.append(f"epoch_us({qn}) AS {qn}")
        elif ty in ('DOUBLE', 'BIGINT', 'INTEGER'):
            sel.append(qn)
        else:
            sel.append(f"CAST({qn} AS VARCHAR) AS {qn}")
    rows = c.execute(f"SELECT {', '.join(sel)} FROM ({q})").fetchall()
    out.append([dict(zip([x[0] for x in cols], r)) for r in rows])
print(json.dumps(out))
"#;

fn duckdb(py: &std::path::Path, parquet: &str, tz: &str, queries: &[String]) -> Vec<Vec<SqlRow>> {
    let mut child = Command::new(py)
        .args(["-c", RUNNER, parquet, tz])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!(queries).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The ```sql blocks of `docs/export.md`, in order.
fn doc_queries() -> Vec<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/export.md")).unwrap();
    doc.split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

fn us(row: &CsvRow, col: &str) -> i64 {
    row[col].as_deref().unwrap().parse().unwrap()
}

fn text(v: &Option<String>) -> Value {
    v.as_ref().map_or(Value::Null, |s| json!(s))
}

/// A `TIMESTAMPTZ` literal with its offset (`Z`), as the doc says to write a parameter.
fn tz_literal(t_us: i64) -> String {
    format!("TIMESTAMPTZ '{}'", tgms::time::iso_utc(t_us))
}

fn median(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    v.dedup();
    v[v.len() / 2]
}

#[test]
fn the_docs_sql_answers_as_the_rows_say_in_any_session_time_zone() {
    let Some(py) = duckdb_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sp = store(dir.path());
    let csv = csv_rows(&sp, dir.path());
    let parquet = dir.path().join("rows.parquet");
    tgms(&["export-rows", p(&sp), p(&parquet), "--typed"]);
    let open = |r: &CsvRow| us(r, "tt_e") == OPEN_END;

    // Parameters: a transaction time and a valid time in the middle of the store's.
    let tt = median(csv.iter().map(|r| us(r, "tt_s")).collect());
    let t = median(
        csv.iter()
            .filter(|r| r["kind"].as_deref() == Some("edge"))
            .map(|r| us(r, "vt_s"))
            .collect(),
    );
    let uid = "x1";
    let queries: Vec<String> = doc_queries()
        .iter()
        .map(|q| {
            q.replace(":tt", &tz_literal(tt))
                .replace(":t", &tz_literal(t))
                .replace(":uid", &format!("'{uid}'"))
        })
        .collect();
    assert_eq!(
        queries.len(),
        6,
        "docs/export.md has six queries; a new one needs its expectation here"
    );

    let answers = duckdb(py, p(&parquet), "America/New_York", &queries);
    assert_eq!(
        answers,
        duckdb(py, p(&parquet), "UTC", &queries),
        "the same answers in any session time zone"
    );

    // 1. Current beliefs.
    let ids = |rows: &[SqlRow]| {
        let mut v: Vec<String> = rows
            .iter()
            .map(|r| r["vid"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let csv_ids = |keep: &dyn Fn(&CsvRow) -> bool| {
        let mut v: Vec<String> = csv
            .iter()
            .filter(|r| keep(r))
            .map(|r| r["vid"].clone().unwrap())
            .collect();
        v.sort();
        v
    };
    let current = csv_ids(&|r| open(r));
    assert!(!current.is_empty() && current.len() < csv.len());
    assert_eq!(ids(&answers[0]), current, "current beliefs");

    // 2. As of a transaction time: believed then, whatever came later.
    let as_of = csv_ids(&|r| us(r, "tt_s") <= tt && tt < us(r, "tt_e"));
    assert!(
        !as_of.is_empty() && as_of != current,
        "the probe time is informative"
    );
    assert_eq!(ids(&answers[1]), as_of, "as of {tt}");

    // 3. State at a valid time, under current beliefs.
    let cols = ["src", "dst", "rel_type", "disc", "props"];
    let mut want: Vec<Vec<Value>> = csv
        .iter()
        .filter(|r| r["kind"].as_deref() == Some("edge"))
        .filter(|r| us(r, "vt_s") <= t && t < us(r, "vt_e") && open(r))
        .map(|r| cols.iter().map(|c| text(&r[*c])).collect())
        .collect();
    let mut got: Vec<Vec<Value>> = answers[2]
        .iter()
        .map(|r| cols.iter().map(|c| r[*c].clone()).collect())
        .collect();
    want.sort_by_key(|v| json!(v).to_string());
    got.sort_by_key(|v| json!(v).to_string());
    assert!(!want.is_empty());
    assert_eq!(got, want, "state at {t}");

    // 4. History of an entity, in write order.
    let hcols = [
        "vt_s",
        "vt_e",
        "tt_s",
        "tt_e",
        "props",
        "origin",
        "reason",
        "closed_by",
        "close_reason",
    ];
    let mut hist: Vec<&CsvRow> = csv
        .iter()
        .filter(|r| r["kind"].as_deref() == Some("node") && r["uid"].as_deref() == Some(uid))
        .collect();
    hist.sort_by_key(|r| (us(r, "tt_s"), us(r, "vt_s"), r["vid"].clone()));
    assert!(hist.len() >= 2, "{uid} has a corrected version");
    let want: Vec<Vec<Value>> = hist
        .iter()
        .map(|r| {
            hcols
                .iter()
                .map(|c| match *c {
                    "vt_s" | "vt_e" | "tt_s" | "tt_e" => json!(us(r, c)),
                    _ => text(&r[*c]),
                })
                .collect()
        })
        .collect();
    let got: Vec<Vec<Value>> = answers[3]
        .iter()
        .map(|r| hcols.iter().map(|c| r[*c].clone()).collect())
        .collect();
    assert_eq!(got, want, "history of {uid}");

    // 5. Corrections: every closed version, ordered by the time it was closed.
    let ccols = ["uid", "eid", "tt_s", "tt_e", "close_reason"];
    let mut want: Vec<Vec<Value>> = csv
        .iter()
        .filter(|r| !open(r))
        .map(|r| {
            ccols
                .iter()
                .map(|c| match *c {
                    "tt_s" | "tt_e" => json!(us(r, c)),
                    _ => text(&r[*c]),
                })
                .collect()
        })
        .collect();
    let mut got: Vec<Vec<Value>> = answers[4]
        .iter()
        .map(|r| ccols.iter().map(|c| r[*c].clone()).collect())
        .collect();
    let closed_at: Vec<i64> = got.iter().map(|r| r[3].as_i64().unwrap()).collect();
    assert!(
        closed_at.windows(2).all(|w| w[0] <= w[1]),
        "ordered by tt_e"
    );
    want.sort_by_key(|v| json!(v).to_string());
    got.sort_by_key(|v| json!(v).to_string());
    assert!(!want.is_empty());
    assert_eq!(got, want, "corrections");

    // 6. Edges per UTC ISO week (Monday 00:00) and type, with the mean weight.
    const DAY_US: i64 = 86_400_000_000;
    let mut groups: BTreeMap<(i64, String), (i64, Vec<f64>)> = BTreeMap::new();
    for r in csv
        .iter()
        .filter(|r| r["kind"].as_deref() == Some("edge") && open(r))
    {
        let days = us(r, "vt_s").div_euclid(DAY_US);
        // 1970-01-01 was a Thursday: Monday is 3 days before it.
        let monday_us = (days - (days + 3).rem_euclid(7)) * DAY_US;
        let props: Value = serde_json::from_str(r["props"].as_deref().unwrap()).unwrap();
        let g = groups
            .entry((monday_us, r["rel_type"].clone().unwrap()))
            .or_default();
        g.0 += 1;
        g.1.extend(props.get("weight").and_then(Value::as_f64));
    }
    let want: Vec<Value> = groups
        .iter()
        .map(|((week, rel), (n, ws))| {
            let w = if ws.is_empty() {
                Value::Null
            } else {
                json!(ws.iter().sum::<f64>() / ws.len() as f64)
            };
            json!({"week": week, "rel_type": rel, "n": n, "w": w})
        })
        .collect();
    let got: Vec<Value> = answers[5].iter().map(|r| json!(r)).collect();
    assert!(
        want.iter().any(|g| g["w"] == json!(3.75)),
        "a week with two weights"
    );
    assert_eq!(got, want, "weekly aggregates");

    // The doc's second rule: the zone-less sentinel misses every open row outside UTC.
    let naive = vec![
        "SELECT count(*) AS n FROM r WHERE tt_e = make_timestamp(4611686018427387904)".to_string(),
    ];
    assert_eq!(
        duckdb(py, p(&parquet), "America/New_York", &naive)[0][0]["n"],
        json!(0)
    );
    assert_eq!(
        duckdb(py, p(&parquet), "UTC", &naive)[0][0]["n"],
        json!(current.len())
    );
}
