//! Parallel text ingest (`src/load_par.rs`, `docs/ingest.md`): the block reader hands on the
//! lines, numbers and stopping point of a line-by-line read, and a load through
//! `tgms::ingest` (parallel parsing, the CLI's path) builds the same store digest as the
//! engine's bulk API fed with events that this file parses itself from the raw lines:
//! CollegeMsg, a Bitcoin-OTC style CSV, JSONL, a file larger than one parse block, bad lines
//! under each `--on-error` policy, and a load into a store that already holds data.

use serde_json::{json, Value};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use tgms::ingest::{self, Failure, Input, Keys, OnError, Request};
use tgms::load::{Format, Mapping};
use tgms::load_par::{read_lines_par, BLOCK_BYTES};
use tgms_engine::clock::scripted_clock;
use tgms_engine::op::parse_event;
use tgms_engine::{canon, Event, Options, Store};

// ---------------------------------------------------------------------------------------
// The block reader against `read_until(b'\n')`.

/// The line-by-line reading the block reader must equal: `read_until(b'\n')`, strip `\n`
/// then one `\r`.
fn by_line(text: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut r = std::io::BufReader::new(text);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for no in 1u64.. {
        buf.clear();
        if r.read_until(b'\n', &mut buf).unwrap() == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        out.push((no, buf.clone()));
    }
    out
}

fn par(text: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    read_lines_par(
        Path::new("t"),
        text,
        |no, l| (no, l.to_vec()),
        |r| {
            out.push(r);
            Ok(true)
        },
    )
    .unwrap();
    out
}

#[test]
fn block_reader_lines_and_numbers_equal_reading_line_by_line() {
    let long = "x".repeat(BLOCK_BYTES + 17);
    let cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"a".to_vec(),
        b"a\n".to_vec(),
        b"a\r\nb\r\r\n\nc".to_vec(),
        b"\r".to_vec(),
        b"a\rb\r".to_vec(),
        format!("1 2 3\n{long}\n4 5 6\n{long}").into_bytes(),
        format!("{long}\r\n").into_bytes(),
        (0..400_000)
            .map(|i| format!("{i} {} {}\n", i % 7, i * 3))
            .collect::<String>()
            .into_bytes(),
        (0..300_000)
            .map(|i| {
                if i % 1000 == 0 {
                    "\n".to_string()
                } else {
                    format!("{i}\r\n")
                }
            })
            .collect::<String>()
            .into_bytes(),
    ];
    for c in cases {
        assert_eq!(par(&c), by_line(&c), "input of {} bytes", c.len());
    }
}

#[test]
fn block_reader_hands_nothing_after_a_stop() {
    let text: String = (0..500_000).map(|i| format!("{i}\n")).collect();
    let mut seen = Vec::new();
    read_lines_par(
        Path::new("t"),
        text.as_bytes(),
        |no, _| no,
        |no| {
            seen.push(no);
            Ok(no < 333_333)
        },
    )
    .unwrap();
    assert_eq!(seen, (1..=333_333).collect::<Vec<u64>>());
}

#[test]
fn block_reader_passes_on_the_callers_error() {
    let text: String = (0..300_000).map(|i| format!("{i}\n")).collect();
    let r = read_lines_par(
        Path::new("t"),
        text.as_bytes(),
        |no, _| no,
        |no| {
            if no == 250_000 {
                Err(tgms_engine::Error::invalid("stop here"))
            } else {
                Ok(true)
            }
        },
    );
    assert!(format!("{:?}", r.unwrap_err()).contains("stop here"));
}

// ---------------------------------------------------------------------------------------
// Store digests: the parallel load against the engine fed with independently parsed events.

/// A fresh store whose transaction clock is fixed (so two stores given the same batches
/// get the same tts and, with the same rows, the same digest).
fn store(dir: &Path, name: &str) -> Store {
    Store::create_with(
        &dir.join(name),
        Options {
            clock: Some(scripted_clock(vec![1_700_000_000_000_000])),
            ..Options::default()
        },
    )
    .unwrap()
}

/// Which lines of a raw file are events; the rest are ignored or (`None`) bad. Parsed here
/// from the format's definition in `docs/ingest.md`, not by `tgms::load`.
fn reference_events(text: &str, format: Format) -> Vec<Option<Event>> {
    let is_header = |no: usize, first: &str| {
        no == 1
            && !first
                .trim_start_matches(['+', '-'])
                .starts_with(|c: char| c.is_ascii_digit())
    };
    let node = |s: &str| {
        let d = s.strip_prefix('+').unwrap_or(s);
        (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .then(|| d.parse::<u64>().ok())
            .flatten()
            .map(|id| format!("n{id}"))
    };
    let mut out = Vec::new();
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let no = i + 1;
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let ev = match format {
            Format::Snap => {
                let t = line.trim();
                let f: Vec<&str> = t.split_whitespace().collect();
                if t.is_empty() || t.starts_with('#') || t.starts_with('%') || is_header(no, f[0]) {
                    continue;
                }
                (f.len() == 3)
                    .then(|| {
                        let secs: i64 = f[2].strip_prefix('+').unwrap_or(f[2]).parse().ok()?;
                        let t = secs.checked_mul(1_000_000).filter(|t| *t >= 0)?;
                        Some(Event::instant(node(f[0])?, node(f[1])?, "MSG".into(), t))
                    })
                    .flatten()
            }
            Format::SnapCsvRated => {
                let f: Vec<&str> = line.split(',').map(str::trim).collect();
                if line.trim().is_empty() || is_header(no, f[0]) {
                    continue;
                }
                (f.len() == 4)
                    .then(|| {
                        let rating: i64 = f[2].parse().ok()?;
                        let t = (f[3].parse::<f64>().ok()? * 1e6).trunc();
                        let mut e =
                            Event::instant(node(f[0])?, node(f[1])?, "TRUST".into(), t as i64);
                        e.props = Some(canon::to_string(&json!({ "rating": rating })));
                        Some(e)
                    })
                    .flatten()
            }
            Format::JsonlEvents => {
                if line.trim().is_empty() {
                    continue;
                }
                serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|v| parse_event(&v).ok())
            }
            _ => unreachable!("line formats only"),
        };
        out.push(ev);
    }
    out
}

fn request(name: &str, text: &str, format: Format, on_error: OnError) -> Request {
    Request {
        name: PathBuf::from(name),
        input: Input::Text(text.to_string()),
        format,
        map: Mapping::rel(None),
        on_error,
        keys: Keys::Given("k".into()),
        again: false,
    }
}

/// Loads `text` into `st` the CLI's way (validation pass, then the keyed write pass).
fn load(st: &mut Store, req: &Request) -> Result<ingest::Summary, Failure> {
    let tally = ingest::validate(req)?;
    st.bulk_load(0, |ld| ingest::write(ld, req, tally, &mut |_| {}))
        .unwrap()
}

/// Loads the good events of `text` (parsed by [`reference_events`]) through the engine's
/// bulk API, under the key prefix `k` as the CLI's load does.
fn load_reference(st: &mut Store, text: &str, format: Format) -> u64 {
    let events: Vec<Event> = reference_events(text, format)
        .into_iter()
        .flatten()
        .collect();
    let n = events.len() as u64;
    st.ingest_events_keyed(events, "Node", Some(("k", 0)), &mut |_| {})
        .unwrap();
    n
}

/// Asserts that loading `text` the CLI's way gives the reference store's digest, into
/// fresh stores or into stores that first got `before` (loaded the reference way in both).
fn same_digest(text: &str, format: Format, on_error: OnError, before: Option<&str>) {
    let d = tempfile::tempdir().unwrap();
    let (mut a, mut b) = (store(d.path(), "a"), store(d.path(), "b"));
    if let Some(pre) = before {
        for s in [&mut a, &mut b] {
            let events: Vec<Event> = reference_events(pre, Format::Snap)
                .into_iter()
                .flatten()
                .collect();
            s.ingest_events_keyed(events, "Node", Some(("pre", 0)), &mut |_| {})
                .unwrap();
        }
    }
    let summary = load(&mut a, &request("in", text, format, on_error)).unwrap();
    let n = load_reference(&mut b, text, format);
    assert!(n > 0);
    assert_eq!(summary.committed, n);
    let bad = reference_events(text, format)
        .iter()
        .filter(|e| e.is_none())
        .count() as u64;
    assert_eq!(summary.skipped_lines, bad);
    assert_eq!(a.stats().n_edge_versions, b.stats().n_edge_versions);
    assert_eq!(a.digest(), b.digest(), "{format:?} {on_error:?}");
}

fn collegemsg() -> String {
    let gz =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/CollegeMsg.txt.gz"))
            .unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// `n` SNAP lines over `nodes` nodes with times from the seeded test generator.
fn random_snap(n: usize, nodes: u64) -> String {
    let mut r = tgms_testkit::Rng::new(12345);
    let mut next = move || r.next_u64();
    (0..n)
        .map(|_| {
            format!(
                "{} {} {}\n",
                next() % nodes,
                next() % nodes,
                1_000_000 + next() % 1_000_000
            )
        })
        .collect()
}

#[test]
fn collegemsg_loads_to_the_reference_digest() {
    same_digest(&collegemsg(), Format::Snap, OnError::Fail, None);
}

#[test]
fn a_file_of_several_parse_blocks_loads_to_the_reference_digest() {
    let text = random_snap(150_000, 5_000);
    assert!(text.len() > BLOCK_BYTES, "the file must span blocks");
    same_digest(&text, Format::Snap, OnError::Fail, None);
}

#[test]
fn bitcoin_otc_csv_loads_to_the_reference_digest() {
    let mut text = String::from("SOURCE,TARGET,RATING,TIME\n");
    for i in 0..70_000u64 {
        let r = (i % 21) as i64 - 10;
        text += &format!(
            "{},{},{r},{}.{}\n",
            i % 900,
            (i * 31) % 977,
            1_289_000_000 + i * 7,
            i % 10
        );
    }
    same_digest(&text, Format::SnapCsvRated, OnError::Fail, None);
}

#[test]
fn jsonl_loads_to_the_reference_digest() {
    let mut text = String::new();
    for i in 0..60_000u64 {
        let ev = match i % 3 {
            0 => {
                json!({"src": format!("u{}", i % 500), "dst": format!("u{}", i % 77), "rel_type": "CALL", "vt_s": 1_000 + i})
            }
            1 => {
                json!({"src": format!("u{}", i % 500), "dst": "hub", "rel_type": "MSG", "vt_s": 5 + i, "vt_e": 100_000_000 + i, "props": {"n": i}})
            }
            _ => {
                json!({"src": "a", "dst": format!("u{}", i % 300), "rel_type": "MSG", "vt_s": i, "disc": format!("d{i}")})
            }
        };
        text += &format!("{ev}\n");
        if i % 9_999 == 0 {
            text += "\n";
        }
    }
    same_digest(&text, Format::JsonlEvents, OnError::Fail, None);
}

/// A SNAP file with bad lines at known places (the reference parser finds the same ones).
fn snap_with_bad_lines() -> (String, Vec<u64>) {
    let mut text = String::from("src dst time\n# comment\n");
    let mut bad = Vec::new();
    for i in 0..120_000u64 {
        let line = match i {
            17 => "1 2 1.5".to_string(),
            50_001 => "1 2".to_string(),
            99_998 => "x 2 3".to_string(),
            _ => format!("{} {} {}", i % 1_000, (i * 13) % 1_009, 1_000_000_000 + i),
        };
        if line.split_whitespace().count() != 3 || line.contains('.') || line.starts_with('x') {
            bad.push(i + 3);
        }
        text += &line;
        text += if i % 2 == 0 { "\n" } else { "\r\n" };
    }
    (text, bad)
}

#[test]
fn bad_lines_are_skipped_to_the_reference_digest() {
    let (text, bad) = snap_with_bad_lines();
    same_digest(&text, Format::Snap, OnError::Skip, None);
    let d = tempfile::tempdir().unwrap();
    let mut a = store(d.path(), "a");
    let s = load(&mut a, &request("in", &text, Format::Snap, OnError::Skip)).unwrap();
    let listed: Vec<u64> = s.skipped.iter().map(|b| b.line).collect();
    assert_eq!(listed, bad);
    assert_eq!(s.ignored_lines, 2);
    assert_eq!(s.lines, 120_002);
}

#[test]
fn the_first_bad_line_fails_the_load_before_anything_is_written() {
    let (text, bad) = snap_with_bad_lines();
    let d = tempfile::tempdir().unwrap();
    let mut a = store(d.path(), "a");
    let empty = a.digest();
    match load(&mut a, &request("in", &text, Format::Snap, OnError::Fail)) {
        Err(Failure::BadLine(b, s)) => {
            assert_eq!(b.line, bad[0]);
            assert_eq!(b.field, "seconds");
            assert_eq!(s.lines, bad[0]);
            assert_eq!(s.committed, 0);
        }
        other => panic!("expected the bad line {}, got {other:?}", bad[0]),
    }
    assert_eq!(a.digest(), empty);
}

#[test]
fn a_load_into_a_store_with_data_gives_the_reference_digest() {
    let before = random_snap(30_000, 2_000);
    same_digest(&collegemsg(), Format::Snap, OnError::Fail, Some(&before));
}
