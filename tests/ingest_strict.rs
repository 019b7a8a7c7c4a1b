//! Strict ingest end to end (`docs/ingest.md`): a broken field at every position of every
//! format is reported at its line and field (both computed here from the file the test
//! built); headers only on line 1; `--on-error skip` summaries; `--dry-run` leaves the
//! store's bytes alone; an interrupted load resumes to the rows of one clean load; a
//! repeated load adds nothing unless `--again`; strict `tgms write` batches; CSV and
//! Parquet round trips of `export-rows` checked against the original input lines.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

fn tgms(args: &[&str]) -> Output {
    tgms_env(args, &[])
}

fn tgms_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tgms"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run tgms")
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

fn init(dir: &Path, name: &str) -> PathBuf {
    let s = dir.join(name);
    ok(tgms(&["init", p(&s)]));
    s
}

fn stats(s: &Path) -> Value {
    json_out(&ok(tgms(&["stats", p(s), "--json"])))
}

/// Writes a Parquet file of optional UTF-8 columns (an empty string is written as null).
fn write_parquet(path: &Path, header: &[&str], rows: &[Vec<String>]) {
    use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;
    let fields = header
        .iter()
        .map(|n| {
            Arc::new(
                Type::primitive_type_builder(n, Physical::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String))
                    .with_converted_type(ConvertedType::UTF8)
                    .with_repetition(Repetition::OPTIONAL)
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let schema = Arc::new(
        Type::group_type_builder("t")
            .with_fields(fields)
            .build()
            .unwrap(),
    );
    let file = std::fs::File::create(path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(file, schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    for c in 0..header.len() {
        let mut col = rg.next_column().unwrap().unwrap();
        let vals: Vec<ByteArray> = rows
            .iter()
            .filter(|r| !r[c].is_empty())
            .map(|r| ByteArray::from(r[c].as_str()))
            .collect();
        let defs: Vec<i16> = rows.iter().map(|r| i16::from(!r[c].is_empty())).collect();
        col.typed::<ByteArrayType>()
            .write_batch(&vals, Some(&defs), None)
            .unwrap();
        col.close().unwrap();
    }
    rg.close().unwrap();
    w.close().unwrap();
}

/// One format under test: its flags, header, a good record `i`, its field names, one bad
/// value per field, and how a record is written out.
struct Case {
    format: &'static str,
    flags: Vec<&'static str>,
    header: Option<Vec<&'static str>>,
    fields: Vec<&'static str>,
    good: fn(usize) -> Vec<String>,
    bad: Vec<&'static str>,
    join: fn(&[&str], &[String]) -> String,
}

fn snap_join(_: &[&str], v: &[String]) -> String {
    v.join(" ")
}

fn comma_join(_: &[&str], v: &[String]) -> String {
    v.join(",")
}

/// A JSON object of the fields; a bad value is JSON text spliced in as it is.
fn json_join(fields: &[&str], v: &[String]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .zip(v)
        .map(|(f, x)| format!("{:?}:{x}", f))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            format: "snap",
            flags: vec![],
            header: Some(vec!["src", "dst", "seconds"]),
            fields: vec!["src", "dst", "seconds"],
            good: |i| vec![i.to_string(), (i + 1).to_string(), (100 + i).to_string()],
            bad: vec!["x1", "-2", "1.5"],
            join: snap_join,
        },
        Case {
            format: "snap-csv-rated",
            flags: vec![],
            header: Some(vec!["SOURCE", "TARGET", "RATING", "TIME"]),
            fields: vec!["SOURCE", "TARGET", "RATING", "TIME"],
            good: |i| {
                vec![
                    i.to_string(),
                    (i + 2).to_string(),
                    "-3".into(),
                    format!("{}.5", 1000 + i),
                ]
            },
            bad: vec!["a", "", "4.5", "soon"],
            join: comma_join,
        },
        Case {
            format: "jsonl-events",
            flags: vec![],
            header: None,
            fields: vec!["src", "dst", "rel_type", "vt_s", "vt_e", "disc", "props"],
            good: |i| {
                vec![
                    format!("\"a{i}\""),
                    format!("\"b{i}\""),
                    "\"R\"".into(),
                    (10 * i + 10).to_string(),
                    (10 * i + 15).to_string(),
                    format!("\"d{i}\""),
                    format!("{{\"k\":{i}}}"),
                ]
            },
            // vt_e 3 is before every vt_s (≥ 10).
            bad: vec!["\"\"", "5", "\"\"", "\"5\"", "3", "7", "[1]"],
            join: json_join,
        },
        Case {
            format: "csv",
            flags: vec![
                "--src",
                "from",
                "--dst",
                "to",
                "--time-col",
                "ts",
                "--end",
                "until",
                "--rel-type-col",
                "kind",
                "--props",
                "w",
            ],
            header: Some(vec!["from", "to", "ts", "until", "kind", "w"]),
            fields: vec!["from", "to", "ts", "until", "kind"],
            good: |i| {
                vec![
                    format!("a{i}"),
                    format!("b{i}"),
                    (100 + i).to_string(),
                    (200 + i).to_string(),
                    "R".into(),
                    format!("w{i}"),
                ]
            },
            // until 5 is before every ts (≥ 100).
            bad: vec!["", "", "abc", "5", ""],
            join: comma_join,
        },
        Case {
            format: "parquet",
            flags: vec![
                "--src",
                "from",
                "--dst",
                "to",
                "--time-col",
                "ts",
                "--end",
                "until",
                "--rel-type-col",
                "kind",
                "--props",
                "w",
            ],
            header: Some(vec!["from", "to", "ts", "until", "kind", "w"]),
            fields: vec!["from", "to", "ts", "until", "kind"],
            good: |i| {
                vec![
                    format!("a{i}"),
                    format!("b{i}"),
                    (100 + i).to_string(),
                    (200 + i).to_string(),
                    "R".into(),
                    format!("w{i}"),
                ]
            },
            bad: vec!["", "", "abc", "5", ""],
            join: comma_join,
        },
    ]
}

/// Writes `records` in the case's format (header first where it has one); returns the
/// line number of record `r` (0-based).
fn write_case(c: &Case, path: &Path, records: &[Vec<String>]) -> impl Fn(usize) -> u64 {
    let header_lines = u64::from(c.header.is_some() && c.format != "parquet");
    if c.format == "parquet" {
        write_parquet(path, c.header.as_ref().unwrap(), records);
    } else {
        let mut text = String::new();
        if let Some(h) = &c.header {
            text.push_str(&h.join(if c.format == "snap" { " " } else { "," }));
            text.push('\n');
        }
        for r in records {
            text.push_str(&(c.join)(&c.fields, r));
            text.push('\n');
        }
        std::fs::write(path, text).unwrap();
    }
    move |r| header_lines + r as u64 + 1
}

#[test]
fn a_broken_field_at_every_position_of_every_format_names_its_line_and_field() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let before = stats(&s);
    for c in cases() {
        let n_good = 7;
        for (fi, field) in c.fields.iter().enumerate() {
            // The broken record sits at a different place for each field.
            let at = (fi * 3) % (n_good + 1);
            let mut records: Vec<Vec<String>> = (0..n_good).map(c.good).collect();
            let mut broken = (c.good)(99);
            broken[fi] = c.bad[fi].to_string();
            records.insert(at, broken);
            let f = d.path().join(format!("{}-{fi}.in", c.format));
            let line_of = write_case(&c, &f, &records);
            let mut args = vec!["ingest", p(&s), p(&f), "--format", c.format];
            args.extend(c.flags.iter().copied());
            for dry in [true, false] {
                let mut a = args.clone();
                if dry {
                    a.push("--dry-run");
                }
                let o = tgms(&a);
                assert_eq!(o.status.code(), Some(1), "{} {field}: {o:?}", c.format);
                let e = json_out(&o);
                let want_line = line_of(at);
                assert_eq!(e["error"], "E_INVALID_ARG");
                assert_eq!(
                    (
                        e["details"]["line"].as_u64(),
                        e["details"]["field"].as_str()
                    ),
                    (Some(want_line), Some(*field)),
                    "{} field {field}: {e}",
                    c.format
                );
                assert_eq!(e["details"]["events_committed"], 0);
                let m = e["message"].as_str().unwrap();
                assert!(
                    m.contains(&format!("{}:{want_line}: field {field}: expected ", p(&f))),
                    "{m}"
                );
                assert!(!e["details"]["expected"].as_str().unwrap().is_empty());
            }
        }
        // The good records alone load, every one of them.
        let f = d.path().join(format!("{}-good.in", c.format));
        let records: Vec<Vec<String>> = (0..5).map(c.good).collect();
        let _ = write_case(&c, &f, &records);
        let mut args = vec!["ingest", p(&s), p(&f), "--format", c.format];
        args.extend(c.flags.iter().copied());
        if c.format == "jsonl-events" || c.format == "snap" || c.format == "snap-csv-rated" {
            args.extend(["--uid-prefix", c.format]);
        }
        let v = json_out(&ok(tgms(&args)));
        assert_eq!(
            (v["events"].as_u64(), v["committed"].as_u64()),
            (Some(5), Some(5)),
            "{v}"
        );
    }
    // Nothing of the broken files was written: only the 5 good records of each format.
    let after = stats(&s);
    assert_eq!(
        after["n_batches"],
        before["n_batches"].as_u64().unwrap() + 5
    );
    assert_eq!(after["n_edge_versions"], 25);
}

/// Parquet rows are numbered across the reader's record batches (8,192 rows each): a bad
/// row in the third batch is named by its row number, and the rows before it all load with
/// `--on-error skip`.
#[test]
fn parquet_rows_are_numbered_across_record_batches() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let bad_row = 17_001; // 1-based, in the third batch of 8,192
    let rows: Vec<Vec<String>> = (1..=20_000)
        .map(|i| {
            let t = if i == bad_row {
                "x".to_string()
            } else {
                (1000 + i).to_string()
            };
            vec![format!("a{}", i % 97), format!("b{}", i % 89), t]
        })
        .collect();
    let f = d.path().join("many.parquet");
    write_parquet(&f, &["from", "to", "ts"], &rows);
    let args = [
        "ingest",
        p(&s),
        p(&f),
        "--format",
        "parquet",
        "--src",
        "from",
        "--dst",
        "to",
        "--time-col",
        "ts",
        "--rel-type",
        "R",
    ];
    let o = tgms(&args);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let e = json_out(&o);
    assert_eq!(
        (
            e["details"]["line"].as_u64(),
            e["details"]["field"].as_str()
        ),
        (Some(bad_row as u64), Some("ts")),
        "{e}"
    );
    let mut skip = args.to_vec();
    skip.extend(["--on-error", "skip"]);
    let v = json_out(&ok(tgms(&skip)));
    assert_eq!(
        (
            v["lines"].as_u64(),
            v["events"].as_u64(),
            v["skipped_lines"].as_u64()
        ),
        (Some(20_000), Some(19_999), Some(1)),
        "{v}"
    );
}

#[test]
fn wrong_field_counts_and_bad_json_are_line_errors() {
    let d = tempfile::tempdir().unwrap();
    for (format, text, line) in [
        ("snap", "1 2 3\n1 2\n", 2),
        ("snap", "1 2 3 4\n", 1),
        ("snap-csv-rated", "1,2,3,4\n1,2,3\n", 2),
        ("jsonl-events", "{\"src\":\"a\",\n", 1),
        ("jsonl-events", "[1]\n", 1),
    ] {
        let f = d.path().join("x.in");
        std::fs::write(&f, text).unwrap();
        let e = json_out(&tgms(&[
            "ingest",
            "nowhere",
            p(&f),
            "--format",
            format,
            "--dry-run",
        ]));
        assert_eq!(
            (
                e["details"]["line"].as_u64(),
                e["details"]["field"].as_str()
            ),
            (Some(line), Some("line")),
            "{format} {text:?}: {e}"
        );
    }
    let f = d.path().join("x.csv");
    std::fs::write(&f, "a,b,t\n1,2,3\n1,2\n").unwrap();
    let e = json_out(&tgms(&[
        "ingest",
        "nowhere",
        p(&f),
        "--format",
        "csv",
        "--src",
        "a",
        "--dst",
        "b",
        "--time-col",
        "t",
        "--rel-type",
        "R",
        "--dry-run",
    ]));
    assert_eq!(e["details"]["line"], 3);
    assert_eq!(e["details"]["field"], "line");
    // A column the file lacks is named, with the nearest one.
    let o = tgms(&[
        "ingest",
        "nowhere",
        p(&f),
        "--format",
        "csv",
        "--src",
        "a",
        "--dst",
        "b",
        "--time-col",
        "tt",
        "--rel-type",
        "R",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let m = json_out(&o)["message"].as_str().unwrap().to_string();
    assert!(m.contains("no column \"tt\"; did you mean \"t\"?"), "{m}");
}

#[test]
fn a_header_is_recognised_on_line_1_only() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("h.txt");
    std::fs::write(&f, "src dst time\n1 2 100\n# a comment\n2 3 200\n").unwrap();
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f)])));
    assert_eq!(
        (
            v["lines"].as_u64(),
            v["events"].as_u64(),
            v["ignored_lines"].as_u64()
        ),
        (Some(4), Some(2), Some(2))
    );
    // The same header further down is a bad line (its first field is no node id).
    std::fs::write(&f, "1 2 100\n2 3 200\nsrc dst time\n").unwrap();
    let e = json_out(&tgms(&["ingest", p(&s), p(&f)]));
    assert_eq!(e["details"]["line"], 3);
    assert_eq!(e["details"]["field"], "src");
    // A numeric-looking line 1 is data, not a header: `1 2 1.5` fails (the old loader
    // skipped it and reported 0 events).
    std::fs::write(&f, "1 2 1.5\n").unwrap();
    let e = json_out(&tgms(&["ingest", p(&s), p(&f)]));
    assert_eq!(
        (
            e["details"]["line"].as_u64(),
            e["details"]["field"].as_str()
        ),
        (Some(1), Some("seconds"))
    );
    assert_eq!(stats(&s)["n_edge_versions"], 2);
}

#[test]
fn on_error_skip_leaves_bad_lines_out_and_lists_the_first_20() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("mixed.txt");
    // Every 4th line is bad (25 of 100); the test keeps its own list.
    let mut text = String::new();
    let (mut good, mut bad_lines) = (BTreeSet::new(), Vec::new());
    for i in 0..100u64 {
        if i % 4 == 3 {
            text.push_str(&format!("{i} oops {i}\n"));
            bad_lines.push(i + 1);
        } else {
            text.push_str(&format!("{i} {} {}\n", i + 1, 1000 + i));
            good.insert((
                format!("n{i}"),
                format!("n{}", i + 1),
                (1000 + i) * 1_000_000,
            ));
        }
    }
    std::fs::write(&f, &text).unwrap();
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f), "--on-error", "skip"])));
    assert_eq!(v["lines"], 100);
    assert_eq!(v["events"], good.len());
    assert_eq!(v["committed"], good.len());
    assert_eq!(v["skipped_lines"], bad_lines.len());
    let listed: Vec<u64> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["line"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, bad_lines[..20]);
    assert!(v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["field"] == "dst" && b["found"] == "\"oops\""));
    // The store holds exactly the good lines' events.
    assert_eq!(edge_events(&s), good);
}

/// `(src, dst, vt_s)` of every believed edge row, from `export-rows` CSV.
fn edge_events(s: &Path) -> BTreeSet<(String, String, u64)> {
    rows(s)
        .into_iter()
        .filter(|r| r["kind"] == "edge" && r["tt_e"] == "4611686018427387904")
        .map(|r| {
            (
                r["src"].clone(),
                r["dst"].clone(),
                r["vt_s"].parse().unwrap(),
            )
        })
        .collect()
}

/// Every row of `export-rows` CSV as a column → cell map (read with the csv crate).
fn rows(s: &Path) -> Vec<BTreeMap<String, String>> {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rows.csv");
    ok(tgms(&["export-rows", p(s), p(&out)]));
    let mut r = csv::Reader::from_path(&out).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            m.extend(tree(&e.path()));
        } else {
            m.insert(e.path(), std::fs::read(e.path()).unwrap());
        }
    }
    m
}

#[test]
fn dry_run_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("a.txt");
    std::fs::write(&f, "1 2 100\n2 3 200\n").unwrap();
    ok(tgms(&["ingest", p(&s), p(&f)]));
    let before = tree(&s);
    let g = d.path().join("b.txt");
    std::fs::write(&g, "5 6 100\n6 7 200\n7 8 300\n").unwrap();
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&g), "--dry-run"])));
    assert_eq!(
        (
            v["events"].as_u64(),
            v["committed"].as_u64(),
            v["dry_run"].as_bool()
        ),
        (Some(3), Some(0), Some(true))
    );
    std::fs::write(&g, "5 6 100\n6 x 200\n").unwrap();
    assert_eq!(
        tgms(&["ingest", p(&s), p(&g), "--dry-run"]).status.code(),
        Some(1)
    );
    assert_eq!(tree(&s), before, "a dry run changed the store's files");
}

/// Rows of `export-rows` without the columns that depend on transaction time, sorted.
fn rows_without_tt(s: &Path) -> Vec<Vec<(String, String)>> {
    let mut v: Vec<Vec<(String, String)>> = rows(s)
        .into_iter()
        .map(|r| {
            r.into_iter()
                .filter(|(k, _)| !["tt_s", "tt_e", "vid"].contains(&k.as_str()))
                .collect()
        })
        .collect();
    v.sort();
    v
}

fn big_snap(path: &Path, n: usize) {
    let text: String = (0..n)
        .map(|i| format!("{} {} {}\n", i % 1000, (i * 7) % 1003, 1_000_000 + i))
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn an_interrupted_load_resumes_to_the_rows_of_one_clean_load() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("events.txt");
    big_snap(&f, 120_000);
    let s = init(d.path(), "s");
    // The injected failure: the second chunk's fdatasync fails (its outcome is unknown).
    let o = tgms_env(&["ingest", p(&s), p(&f)], &[("TGMS_TEST_FAIL_SYNC", "2")]);
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    let e = json_out(&o);
    assert_eq!(e["details"]["outcome"], "unknown");
    assert_eq!(e["details"]["events_committed"], 50_000);
    assert_eq!(e["details"]["in_doubt"], 50_000);
    assert!(e["details"]["resume"]
        .as_str()
        .unwrap()
        .contains("re-run the same command"));
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f)])));
    assert_eq!(
        v["committed"].as_u64().unwrap() + v["already_committed"].as_u64().unwrap(),
        120_000
    );
    assert!(v["already_committed"].as_u64().unwrap() >= 50_000, "{v}");
    let clean = init(d.path(), "clean");
    ok(tgms(&["ingest", p(&clean), p(&f)]));
    assert_eq!(stats(&s)["n_edge_versions"], 120_000);
    assert_eq!(stats(&s)["n_batches"], stats(&clean)["n_batches"]);
    assert_eq!(rows_without_tt(&s), rows_without_tt(&clean));
}

#[test]
fn a_sigkilled_load_resumes_to_the_rows_of_one_clean_load() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("events.txt");
    let n = 200_000;
    big_snap(&f, n);
    let s = init(d.path(), "s");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(["ingest", p(&s), p(&f), "--compact", "never"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once a reader sees the first committed chunk.
    let mut killed = false;
    for _ in 0..20_000 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let seen = tgms_engine::Store::open_read_only(&s)
            .map(|st| st.stats().n_batches)
            .unwrap_or(0);
        if seen >= 1 {
            child.kill().unwrap();
            killed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.wait().unwrap();
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f), "--compact", "never"])));
    let (done, now) = (
        v["already_committed"].as_u64().unwrap(),
        v["committed"].as_u64().unwrap(),
    );
    assert_eq!(done + now, n as u64, "{v}");
    eprintln!("killed mid-load: {killed}; resumed with {done} events already committed");
    if killed {
        assert!(done >= 50_000, "the kill came after a committed chunk: {v}");
    }
    let clean = init(d.path(), "clean");
    ok(tgms(&["ingest", p(&clean), p(&f), "--compact", "never"]));
    assert_eq!(stats(&s)["n_edge_versions"], n);
    assert_eq!(rows_without_tt(&s), rows_without_tt(&clean));
}

#[test]
fn a_loaded_file_is_not_loaded_twice_unless_again() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("a.txt");
    std::fs::write(&f, "1 2 100\n2 3 200\n3 1 300\n").unwrap();
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f)])));
    assert_eq!(
        (v["committed"].as_u64(), v["copy"].as_u64()),
        (Some(3), Some(1))
    );
    let o = ok(tgms(&["ingest", p(&s), p(&f)]));
    let v = json_out(&o);
    assert_eq!(
        (v["already_ingested"].as_bool(), v["committed"].as_u64()),
        (Some(true), Some(0))
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("already in the store"));
    assert_eq!(stats(&s)["n_edge_versions"], 3);
    assert_eq!(stats(&s)["n_batches"], 1);
    for copy in [2u64, 3] {
        let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f), "--again"])));
        assert_eq!(
            (v["committed"].as_u64(), v["copy"].as_u64()),
            (Some(3), Some(copy))
        );
        assert_eq!(stats(&s)["n_edge_versions"], 3 * copy);
    }
    // The same file read another way is another load.
    let v = json_out(&ok(tgms(&["ingest", p(&s), p(&f), "--rel-type", "OTHER"])));
    assert_eq!(v["committed"], 3);
}

#[test]
fn uid_prefix_keeps_datasets_apart() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("a.txt");
    std::fs::write(&f, "1 2 100\n").unwrap();
    ok(tgms(&["ingest", p(&s), p(&f)]));
    ok(tgms(&[
        "ingest",
        p(&s),
        p(&f),
        "--uid-prefix",
        "email:",
        "--rel-type",
        "EMAIL",
    ]));
    let uids: BTreeSet<String> = rows(&s)
        .into_iter()
        .filter(|r| r["kind"] == "node")
        .map(|r| r["uid"].clone())
        .collect();
    let want: BTreeSet<String> = ["n1", "n2", "email:n1", "email:n2"]
        .map(String::from)
        .into();
    assert_eq!(uids, want);
}

#[test]
fn strict_batches_name_the_op_the_field_and_the_nearest_name() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let b = d.path().join("b.json");
    let good = json!({"op":"assert_node","uid":"a","label":"N","vt_s":0});
    for (op, index, field, suggestion) in [
        (
            json!({"op":"assert_node","uid":"b","label":"N","vt_s":0,"propz":{"x":1}}),
            1,
            "propz",
            Some("props"),
        ),
        (
            json!({"op":"asert_node","uid":"b","label":"N","vt_s":0}),
            1,
            "op",
            Some("assert_node"),
        ),
        (
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R"}),
            1,
            "vt_s",
            None,
        ),
        (
            json!({"op":"retract","ref":{"kind":"node","uidd":"a"},"t":1,"reason":"r"}),
            1,
            "ref.uidd",
            Some("uid"),
        ),
    ] {
        std::fs::write(&b, json!([good, op]).to_string()).unwrap();
        let o = tgms(&["write", p(&s), p(&b)]);
        assert_eq!(o.status.code(), Some(1), "{op}");
        let e = json_out(&o);
        assert_eq!(e["error"], "E_INVALID_ARG");
        assert_eq!(
            (
                e["details"]["index"].as_u64(),
                e["details"]["field"].as_str(),
                e["details"]["suggestion"].as_str()
            ),
            (Some(index), Some(field), suggestion),
            "{e}"
        );
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("op {index}: ")),
            "{e}"
        );
        if let Some(sug) = suggestion {
            assert!(e["message"]
                .as_str()
                .unwrap()
                .contains(&format!("did you mean \"{sug}\"")));
        }
    }
    // Refused before logging: no batch was written, and the valid op alone still is.
    assert_eq!(stats(&s)["n_batches"], 0);
    std::fs::write(&b, json!([good]).to_string()).unwrap();
    ok(tgms(&["write", p(&s), p(&b)]));
    assert_eq!(stats(&s)["n_batches"], 1);
}

/// The events of the generated input of the round trips, as the test itself derives them:
/// `(src, dst, rel_type, disc, vt_s, vt_e, props)` with the defaults of `data-model.md`
/// §6.7 applied (vt_e = vt_s + 1, disc = "#" + the event's ordinal, props {}).
type Ev = (String, String, String, String, i64, i64, String);

fn round_trip_input(path: &Path) -> BTreeSet<Ev> {
    let (mut text, mut want) = (String::new(), BTreeSet::new());
    for i in 0..300i64 {
        let (src, dst, rel) = (
            format!("u{}", i % 17),
            format!("u{}", (i * 5) % 19),
            format!("R{}", i % 3),
        );
        let vt_s = 1000 * i + i % 7;
        let mut ev = json!({"src": src, "dst": dst, "rel_type": rel, "vt_s": vt_s});
        let mut vt_e = vt_s + 1;
        if i % 4 == 0 {
            vt_e = vt_s + 500;
            ev["vt_e"] = json!(vt_e);
        }
        let mut props = "{}".to_string();
        if i % 2 == 0 {
            let p = json!({"w": i, "s": format!("x,\"q\" {i}")});
            props = serde_json::to_string(&p).unwrap();
            ev["props"] = p;
        }
        let mut disc = format!("#{i}");
        if i % 5 == 0 {
            disc = format!("d{i}");
            ev["disc"] = json!(disc);
        }
        text.push_str(&format!("{ev}\n"));
        want.insert((src, dst, rel, disc, vt_s, vt_e, props));
    }
    std::fs::write(path, text).unwrap();
    want
}

/// The believed edges of a store, read back through `export-rows` CSV.
fn store_events(s: &Path) -> BTreeSet<Ev> {
    rows(s)
        .into_iter()
        .filter(|r| r["kind"] == "edge" && r["tt_e"] == "4611686018427387904")
        .map(|r| {
            (
                r["src"].clone(),
                r["dst"].clone(),
                r["rel_type"].clone(),
                r["disc"].clone(),
                r["vt_s"].parse().unwrap(),
                r["vt_e"].parse().unwrap(),
                r["props"].clone(),
            )
        })
        .collect()
}

#[test]
fn csv_and_parquet_exports_round_trip_to_the_same_events() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.jsonl");
    let want = round_trip_input(&input);
    let a = init(d.path(), "a");
    ok(tgms(&[
        "ingest",
        p(&a),
        p(&input),
        "--format",
        "jsonl-events",
    ]));
    assert_eq!(store_events(&a), want);
    for ext in ["csv", "parquet"] {
        let out = d.path().join(format!("rows.{ext}"));
        ok(tgms(&["export-rows", p(&a), p(&out)]));
        let b = init(d.path(), &format!("b-{ext}"));
        let v = json_out(&ok(tgms(&[
            "ingest",
            p(&b),
            p(&out),
            "--format",
            ext,
            "--only",
            "kind=edge",
            "--only",
            "tt_e=4611686018427387904",
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
        ])));
        assert_eq!(v["events"], 300, "{v}");
        assert!(
            v["filtered_rows"].as_u64().unwrap() > 0,
            "node rows are left out: {v}"
        );
        assert_eq!(store_events(&b), want, "{ext} round trip");
    }
}

#[test]
fn csv_columns_with_units_and_props() {
    let d = tempfile::tempdir().unwrap();
    let s = init(d.path(), "s");
    let f = d.path().join("t.csv");
    std::fs::write(
        &f,
        "who,whom,when,amount,note\nalice,bob,1700000000,12,\"hi, there\"\nbob,carol,1700000060,,\n",
    )
    .unwrap();
    let v = json_out(&ok(tgms(&[
        "ingest",
        p(&s),
        p(&f),
        "--format",
        "csv",
        "--src",
        "who",
        "--dst",
        "whom",
        "--time-col",
        "when",
        "--time-unit",
        "s",
        "--props",
        "amount,note",
        "--rel-type",
        "PAID",
    ])));
    assert_eq!(v["events"], 2);
    let got: BTreeSet<(String, String, String, String)> = rows(&s)
        .into_iter()
        .filter(|r| r["kind"] == "edge")
        .map(|r| {
            (
                r["src"].clone(),
                r["rel_type"].clone(),
                r["vt_s"].clone(),
                r["props"].clone(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String, String, String)> = [
        (
            "alice",
            "PAID",
            "1700000000000000",
            r#"{"amount":"12","note":"hi, there"}"#,
        ),
        ("bob", "PAID", "1700000060000000", "{}"),
    ]
    .into_iter()
    .map(|(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
    .collect();
    assert_eq!(got, want);
}

/// A Parquet file of many record batches (read in groups on all cores, `load_columns.rs`)
/// gives the events, row numbers and skipped rows of the same rows as CSV, which is read
/// row by row: bad rows in several batches and groups are listed at their row numbers, the
/// first one stops a strict load, and both stores hold the same rows.
#[test]
fn a_parquet_file_of_many_batches_loads_like_the_same_rows_as_csv() {
    let d = tempfile::tempdir().unwrap();
    let c = cases().into_iter().find(|c| c.format == "parquet").unwrap();
    let n = 70_000;
    let bad_at = [5usize, 8_200, 30_000, 40_000, 65_000, n - 1];
    let records: Vec<Vec<String>> = (0..n)
        .map(|i| {
            let mut r = (c.good)(i);
            if bad_at.contains(&i) {
                r[2] = "abc".into();
            }
            r
        })
        .collect();
    let pq = d.path().join("rows.parquet");
    write_parquet(&pq, c.header.as_ref().unwrap(), &records);
    let csv = d.path().join("rows.csv");
    let mut text = c.header.as_ref().unwrap().join(",") + "\n";
    for r in &records {
        text.push_str(&r.join(","));
        text.push('\n');
    }
    std::fs::write(&csv, text).unwrap();
    let load = |store: &Path, file: &Path, format: &str, policy: &str| {
        let mut a = vec!["ingest", p(store), p(file), "--format", format];
        a.extend(c.flags.iter().copied());
        a.extend(["--on-error", policy]);
        tgms(&a)
    };
    let sp = init(d.path(), "p");
    let sc = init(d.path(), "c");
    let (jp, jc) = (
        json_out(&ok(load(&sp, &pq, "parquet", "skip"))),
        json_out(&ok(load(&sc, &csv, "csv", "skip"))),
    );
    assert_eq!(jp["events"], json!(n - bad_at.len()));
    assert_eq!(jp["events"], jc["events"]);
    let lines = |j: &Value, shift: u64| -> Vec<u64> {
        j["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["line"].as_u64().unwrap() - shift)
            .collect()
    };
    let want: Vec<u64> = bad_at.iter().map(|&i| i as u64 + 1).collect();
    assert_eq!(lines(&jp, 0), want, "Parquet rows are numbered from 1");
    assert_eq!(lines(&jc, 1), want, "CSV lines count the header");
    // The same rows, with the same ordinals (so read in the same order), the clocks aside.
    let rows = |s: &Path| -> Vec<String> {
        let out = d
            .path()
            .join(format!("{}.csv", s.file_name().unwrap().to_str().unwrap()));
        ok(tgms(&["export-rows", p(s), p(&out)]));
        let text = std::fs::read_to_string(&out).unwrap();
        let mut it = text.lines();
        let head: Vec<&str> = it.next().unwrap().split(',').collect();
        // The version ids and the transaction times depend on the load's clock.
        let keep: Vec<bool> = head
            .iter()
            .map(|h| !h.starts_with("tt") && *h != "vid")
            .collect();
        it.map(|l| {
            l.split(',')
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(f, _)| f)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
    };
    let (rp, rc) = (rows(&sp), rows(&sc));
    assert!(rp.len() > n - bad_at.len(), "{} rows", rp.len());
    assert_eq!(rp.len(), rc.len());
    let differ = rp.iter().zip(&rc).position(|(a, b)| a != b);
    assert!(
        differ.is_none(),
        "row {differ:?} differs: {:?}",
        differ.map(|i| (&rp[i], &rc[i]))
    );
    // A strict load stops at the first bad row, in the first batch, before writing.
    let strict = init(d.path(), "strict");
    let o = load(&strict, &pq, "parquet", "fail");
    assert_eq!(o.status.code(), Some(1));
    let e = json_out(&o);
    assert_eq!(e["details"]["line"], json!(6));
    assert_eq!(e["details"]["field"], json!("ts"));
    assert_eq!(e["details"]["events_committed"], json!(0));
}
