//! Event-file loaders of the spec's `evaluation.md` §7.1.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tgms::load::{parse_chunks, parse_events, Format};
use tgms_engine::{Error, Event, EventEnd, Options, Store};

fn p() -> PathBuf {
    PathBuf::from("input.txt")
}

fn ok(text: &str, format: Format, rel: Option<&str>) -> Vec<Event> {
    parse_events(&p(), text, format, rel).unwrap()
}

/// Asserts a `BadInput` error at `line` whose reason contains `needle`.
fn bad(text: &str, format: Format, rel: Option<&str>, line: u64, needle: &str) {
    match parse_events(&p(), text, format, rel) {
        Err(Error::BadInput {
            file,
            line: l,
            reason,
        }) => {
            assert_eq!(file, p());
            assert_eq!(l, line, "line of {reason:?} in {text:?}");
            assert!(
                reason.contains(needle),
                "reason {reason:?} should mention {needle:?} ({text:?})"
            );
            let e = Error::BadInput {
                file,
                line: l,
                reason,
            };
            let payload = tgms::operators::error::store_payload(&e);
            assert_eq!(payload["error"], "E_INVALID_ARG");
            assert_eq!(payload["details"]["line"], l);
        }
        other => panic!("expected BadInput for {text:?}, got {other:?}"),
    }
}

fn instant(src: &str, dst: &str, rel: &str, vt_s: i64) -> Event {
    Event::instant(src.into(), dst.into(), rel.into(), vt_s)
}

// ---------------------------------------------------------------- snap

/// A node id names the same node however its decimal is written: `007`, `+7` and `7` are
/// `n7`; `0`, `00` and `+0` are `n0`; a 20-digit id below 2^64 keeps its digits.
#[test]
fn snap_node_id_spellings_name_one_node() {
    let text = "007 +7 1\n7 0 2\n00 +0 3\n+010 18446744073709551615 4\n";
    assert_eq!(
        ok(text, Format::Snap, None),
        vec![
            instant("n7", "n7", "MSG", 1_000_000),
            instant("n7", "n0", "MSG", 2_000_000),
            instant("n0", "n0", "MSG", 3_000_000),
            instant("n10", "n18446744073709551615", "MSG", 4_000_000),
        ]
    );
    bad(
        "1 18446744073709551616 5\n",
        Format::Snap,
        None,
        1,
        "below 2^64",
    );
    bad("1 2 3 4\n", Format::Snap, None, 1, "4 fields");
    bad("1 2\n", Format::Snap, None, 1, "2 fields");
}

#[test]
fn snap_events_and_skipped_lines() {
    let text =
        "src dst time\n# comment\n% other comment\n\n   \n1 2 1082040961\n3\t4 5\n  7 7 0  \r\n";
    assert_eq!(
        ok(text, Format::Snap, None),
        vec![
            instant("n1", "n2", "MSG", 1_082_040_961_000_000),
            instant("n3", "n4", "MSG", 5_000_000),
            instant("n7", "n7", "MSG", 0),
        ]
    );
    let e = ok("1 2 3\n", Format::Snap, Some("EMAIL"));
    assert_eq!(e[0].rel_type, "EMAIL");
    assert_eq!(e[0].vt_e, EventEnd::Absent);
    assert_eq!(e[0].end(), 3_000_001);
    assert_eq!(e[0].disc, None);
    assert_eq!(e[0].props, None);
    // A header is recognised on line 1 only, and only when it does not start like a number.
    bad(
        "1 2 3\nFromNodeId ToNodeId Timestamp\n",
        Format::Snap,
        None,
        2,
        "field src: expected a non-negative integer node id (below 2^64), found \"FromNodeId\"",
    );
    bad("1 2 3.5\n", Format::Snap, None, 1, "field seconds");
    bad("1 2 3\n1 2 3.5\n", Format::Snap, None, 2, "found \"3.5\"");
    assert!(ok("", Format::Snap, None).is_empty());
}

#[test]
fn snap_errors() {
    let f = Format::Snap;
    bad("1 2 3\n1 2\n", f, None, 2, "3 whitespace-separated fields");
    bad("1 2 3 4\n", f, None, 1, "found 4");
    bad("1\n", f, None, 1, "found 1");
    bad(
        "# h\na 2 3\n",
        f,
        None,
        2,
        "field src: expected a non-negative integer node id (below 2^64), found \"a\"",
    );
    bad("1 b 3\n", f, None, 1, "field dst: expected");
    bad("-1 2 3\n", f, None, 1, "field src: expected");
    bad("1.0 2 3\n", f, None, 1, "field src: expected");
    bad("99999999999999999999 2 3\n", f, None, 1, "field src");
    bad("1 2 99999999999999999999\n", f, None, 1, "field seconds");
    bad("1 2 10000000000000\n", f, None, 1, "field seconds");
    bad("1 2 -5\n", f, None, 1, "field seconds");
    assert!(matches!(
        parse_events(&p(), "1 2 3\n", f, Some("")),
        Err(Error::InvalidArg { .. })
    ));
}

// ---------------------------------------------------------------- snap-csv-rated

#[test]
fn csv_rated_events_and_header() {
    let text = "SOURCE,TARGET,RATING,TIME\n6,2,4,1289241912\n6,5,-10,1289241942.5\n\n1, 15 ,+1, 1289243140.0000004\r\n";
    let e = ok(text, Format::SnapCsvRated, None);
    assert_eq!(e.len(), 3);
    let mut want = instant("n6", "n2", "TRUST", 1_289_241_912_000_000);
    want.props = Some(r#"{"rating":4}"#.into());
    assert_eq!(e[0], want);
    assert_eq!(e[1].vt_s, 1_289_241_942_500_000);
    assert_eq!(e[1].props.as_deref(), Some(r#"{"rating":-10}"#));
    assert_eq!((e[2].src.as_str(), e[2].dst.as_str()), ("n1", "n15"));
    // trunc(float(TIME) · 1e6) in binary64, as the reference computes it.
    assert_eq!(
        e[2].vt_s,
        ("1289243140.0000004".parse::<f64>().unwrap() * 1e6).trunc() as i64
    );
    assert_eq!(e[2].props.as_deref(), Some(r#"{"rating":1}"#));
    let e = ok("1,2,3,4\n", Format::SnapCsvRated, Some("RATES"));
    assert_eq!(e[0].rel_type, "RATES");
    assert_eq!(e[0].vt_s, 4_000_000);
    // A header on line 1 only; a TIME that is not a number is an error anywhere.
    assert!(ok("a,b,c,d\n", Format::SnapCsvRated, None).is_empty());
    bad(
        "a,b,c,d\n1,2,3,x\n",
        Format::SnapCsvRated,
        None,
        2,
        "field TIME",
    );
    bad(
        "1,2,3,4\na,b,c,d\n",
        Format::SnapCsvRated,
        None,
        2,
        "field SOURCE",
    );
}

#[test]
fn csv_rated_errors() {
    let f = Format::SnapCsvRated;
    bad("1,2,3\n", f, None, 1, "4 comma-separated fields");
    bad(
        "SOURCE,TARGET,RATING,TIME\n1,2,3,4,5\n",
        f,
        None,
        2,
        "found 5",
    );
    bad(
        "1,2,3,4\nx,2,3,4\n",
        f,
        None,
        2,
        "field SOURCE: expected a non-negative integer node id (below 2^64), found \"x\"",
    );
    bad(
        "1,,3,4\n",
        f,
        None,
        1,
        "field TARGET: expected a non-negative integer node id (below 2^64), found \"\"",
    );
    bad(
        "1,2,4.5,4\n",
        f,
        None,
        1,
        "field RATING: expected an integer, found \"4.5\"",
    );
    bad("1,2,r,4\n", f, None, 1, "RATING");
    bad("1,2,99999999999999999999,4\n", f, None, 1, "RATING");
    bad(
        "1,2,3,-4\n",
        f,
        None,
        1,
        "field TIME: expected a number of seconds",
    );
    bad("1,2,3,inf\n", f, None, 1, "field TIME");
    bad("1,2,3,NaN\n", f, None, 1, "field TIME");
    bad("1,2,3,1e20\n", f, None, 1, "found \"1e20\"");
}

// ---------------------------------------------------------------- jsonl-events

#[test]
fn jsonl_events() {
    let text = concat!(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5}"#,
        "\n\n",
        r#"{"src":"a","dst":"c","vt_s":7,"vt_e":9,"disc":"","props":{"z":1,"a":[2.0]}}"#,
        "\n",
        r#"{"src":"c","dst":"a","rel_type":null,"vt_s":1,"vt_e":null}"#,
        "\n",
        r#"{"src":"c","dst":"a","rel_type":"KEEP","vt_s":1,"vt_e":0}"#,
        "\n"
    );
    let e = ok(text, Format::JsonlEvents, Some("FILL"));
    assert_eq!(e.len(), 4);
    assert_eq!(e[0], instant("a", "b", "R", 5));
    assert_eq!(e[1].rel_type, "FILL");
    assert_eq!(e[1].vt_e, EventEnd::At(9));
    assert_eq!(e[1].disc.as_deref(), Some(""));
    assert_eq!(e[1].props.as_deref(), Some(r#"{"a":[2.0],"z":1}"#));
    assert_eq!(e[2].rel_type, "FILL");
    assert_eq!(e[2].vt_e, EventEnd::Null);
    assert_eq!(e[3].rel_type, "KEEP");
    assert_eq!(e[3].end(), 2);
}

#[test]
fn jsonl_errors() {
    let f = Format::JsonlEvents;
    let good = r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5}"#;
    bad(&format!("{good}\n{{\"src\":\n"), f, None, 2, "invalid JSON");
    bad("[1,2]\n", f, None, 1, "JSON event object");
    bad(
        r#"{"dst":"b","rel_type":"R","vt_s":5}"#,
        f,
        None,
        1,
        "field src: expected a non-empty string, found nothing",
    );
    bad(
        r#"{"src":"a","dst":"b","vt_s":5}"#,
        f,
        None,
        1,
        "field rel_type: expected a non-empty string",
    );
    bad(
        r#"{"src":"a","dst":"","rel_type":"R","vt_s":5}"#,
        f,
        None,
        1,
        "field dst: expected a non-empty string, found \"\"",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R"}"#,
        f,
        None,
        1,
        "field vt_s: expected an integer time",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":"5"}"#,
        f,
        None,
        1,
        "field vt_s: expected an integer time in µs since 1970-01-01 UTC, 0 to 2^62 - 2, found \"5\"",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":-1}"#,
        f,
        None,
        1,
        "field vt_s",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5,"vt_e":5}"#,
        f,
        None,
        1,
        "field vt_e: expected null, 0 or an integer time after vt_s",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":99999999999999999999}"#,
        f,
        None,
        1,
        "field vt_s",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5,"props":[1]}"#,
        f,
        None,
        1,
        "field props: expected a JSON object, found [1]",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5,"disc":3}"#,
        f,
        None,
        1,
        "field disc: expected a string, found 3",
    );
    // Every key is an event field: a typo is an error naming the nearest field.
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5,"other":1}"#,
        f,
        None,
        1,
        "field other",
    );
    bad(
        r#"{"src":"a","dst":"b","rel_type":"R","vt_s":5,"propz":{}}"#,
        f,
        None,
        1,
        "did you mean \"props\"",
    );
}

#[test]
fn malformed_file_applies_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::create(&tmp.path().join("s")).unwrap();
    let text = "1 2 3\n4 5 6\n7 x 9\n";
    let r = parse_events(&p(), text, Format::Snap, None);
    assert!(matches!(r, Err(Error::BadInput { line: 3, .. })));
    // The caller only ingests what parsed; nothing was written.
    assert_eq!(store.stats().n_batches, 0);
    let events = parse_events(&p(), "1 2 3\n4 5 6\n", Format::Snap, None).unwrap();
    let rep = store.ingest_events(events, "Node", &mut |_| {}).unwrap();
    assert_eq!((rep.events, rep.batches), (2, 1));
    assert_eq!(store.stats().n_entities, 4);
}

/// Chunks are handed over in order, whole, and concatenate to the one-shot parse; a
/// malformed line stops after the whole chunks before it (nothing of its own chunk), as
/// does an error of the consumer.
#[test]
fn chunked_parse_hands_over_whole_chunks_in_order() {
    let text: String = (0..23)
        .map(|i| {
            if i == 5 {
                "# comment\n".to_string()
            } else {
                format!("{} {} {}\n", i, i + 1, 100 + i)
            }
        })
        .collect();
    let all = ok(&text, Format::Snap, None);
    assert_eq!(all.len(), 22);
    for chunk in [1, 4, 7, 22, 50] {
        let mut got: Vec<Vec<Event>> = Vec::new();
        parse_chunks(&p(), text.as_bytes(), Format::Snap, None, (chunk, 1), |c| {
            got.push(c);
            Ok(())
        })
        .unwrap();
        assert!(
            got.iter().rev().skip(1).all(|c| c.len() == chunk),
            "{chunk}"
        );
        assert_eq!(got.concat(), all, "chunk {chunk}");
    }
    // Line 12 is malformed: in units of 4 events, the two whole units of lines 1..=9 (one
    // comment) are handed over, the events of lines 10 and 11 are not, whatever the chunk.
    let broken = text.replacen("11 12 111", "11 x 111", 1);
    for chunk in [4, 8, 400] {
        let mut got = Vec::new();
        let r = parse_chunks(
            &p(),
            broken.as_bytes(),
            Format::Snap,
            None,
            (chunk, 4),
            |c| {
                got.extend(c);
                Ok(())
            },
        );
        assert!(matches!(r, Err(Error::BadInput { line: 12, .. })), "{r:?}");
        assert_eq!(got, all[..8], "chunk {chunk}");
    }
    let r = parse_chunks(&p(), text.as_bytes(), Format::Snap, None, (4, 4), |_| {
        Err(Error::invalid("full"))
    });
    assert!(matches!(r, Err(Error::InvalidArg { .. })), "{r:?}");
    // The input is read a line at a time: a line that is not UTF-8 is malformed at its own
    // number (the whole units before it handed over), and `\r\n` ends a line as `\n` does.
    let mut bytes = broken
        .replace("11 x 111", "11 12 111")
        .replace('\n', "\r\n")
        .into_bytes();
    let at = bytes.windows(9).position(|w| w == b"11 12 111").unwrap();
    bytes[at + 3] = 0xFF;
    let mut got = Vec::new();
    let r = parse_chunks(&p(), &bytes[..], Format::Snap, None, (4, 4), |c| {
        got.extend(c);
        Ok(())
    });
    match r {
        Err(Error::BadInput {
            line: 12, reason, ..
        }) => assert!(reason.contains("UTF-8"), "{reason}"),
        r => panic!("{r:?}"),
    }
    assert_eq!(got, all[..8]);
}

// ---------------------------------------------------------------- CollegeMsg

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

#[test]
fn collegemsg_ingest() {
    let path = data_dir().join("CollegeMsg.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping: {} not found", path.display());
        return;
    };
    // Independent expectations from the file itself, with plain std code.
    let mut uids = BTreeSet::new();
    let (mut lines, mut tmin, mut tmax) = (0u64, i64::MAX, i64::MIN);
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(Ok(t)) = f.get(2).map(|x| x.parse::<i64>()) else {
            continue;
        };
        uids.insert(f[0].to_string());
        uids.insert(f[1].to_string());
        lines += 1;
        tmin = tmin.min(t);
        tmax = tmax.max(t);
    }
    assert_eq!(lines, 59_835);

    let events = parse_events(&path, &text, Format::Snap, None).unwrap();
    assert_eq!(events.len() as u64, lines);
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::create_with(
        &tmp.path().join("s"),
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    let rep = store.ingest_events(events, "Node", &mut |_| {}).unwrap();
    assert_eq!((rep.events, rep.batches), (59_835, 2));
    let st = store.stats();
    assert_eq!(st.n_edge_versions, 59_835);
    assert_eq!(st.n_entities, uids.len() as u64);
    assert_eq!(st.n_node_versions, uids.len() as u64);
    assert_eq!(st.vt_min, Some(tmin * 1_000_000));
    assert_eq!(st.vt_max, Some(tmax * 1_000_000 + 1));
    assert_eq!(st.rel_type_counts.get("MSG"), Some(&59_835));
    assert_eq!(st.n_failed_batches, 0);
    // The figures of evaluation.md §7.1 / §7.2.
    assert_eq!(uids.len(), 1_899);
    assert_eq!(
        (st.vt_min, st.vt_max),
        (Some(1_082_040_961_000_000), Some(1_098_777_142_000_001))
    );
    assert_eq!(st.max_out_degree, 1_091);
}
