//! Time input (docs/times.md): the ISO-8601 instant and duration parser against independently
//! derived values (hand-computed day counts, cross-checked with `date -u` where it exists),
//! its refusals, the formatter's round trip, and operator calls whose ISO arguments give the
//! byte-identical envelope of the integer call.

use serde_json::{json, Value};
use std::process::Command;
use tgms_engine::{Op, Store, OPEN_END};
use tgms_operators::timefmt::{duration, iso_utc};
use tgms_operators::timeparse::{parse_duration_us, parse_instant_us};
use tgms_operators::{call_operator, CallOptions};

const DAY_S: i64 = 86_400;

/// Seconds since the epoch per `date -u -d TEXT +%s` (GNU date), when `date` runs here.
fn gnu_date_s(text: &str) -> Option<i64> {
    let o = Command::new("date")
        .args(["-u", "-d", text, "+%s"])
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    String::from_utf8_lossy(&o.stdout).trim().parse().ok()
}

/// Each case: (input, µs derived by hand, the same instant in a form GNU date reads).
///
/// Day counts: 1970-01-01 → 2004-01-01 is 34 years with 8 leap days (1972, …, 1996, 2000),
/// 34·365 + 8 = 12418 days. 2004 is a leap year, so 2004-07-22 is day 31+29+31+30+31+30+21 =
/// 203 after Jan 1: 12621 days. 1970 → 2000-01-01: 30 years with 7 leap days = 10957 days.
fn instant_cases() -> Vec<(&'static str, i64, &'static str)> {
    let s = 1_000_000i64;
    let d2004_07_22 = 12_621 * DAY_S;
    let t2128 = d2004_07_22 + 21 * 3600 + 28 * 60;
    vec![
        ("1970-01-01", 0, "1970-01-01 00:00:00Z"),
        ("2004-07-22", d2004_07_22 * s, "2004-07-22 00:00:00Z"),
        ("2004-07-22T21:28:00Z", t2128 * s, "2004-07-22 21:28:00Z"),
        ("2004-07-22T21:28Z", t2128 * s, "2004-07-22 21:28:00Z"),
        ("2004-07-22T21:28:00", t2128 * s, "2004-07-22 21:28:00Z"),
        ("2004-07-22 21:28:00Z", t2128 * s, "2004-07-22 21:28:00Z"),
        (
            "2004-07-22T23:28:00+02:00",
            t2128 * s,
            "2004-07-22 23:28:00+02:00",
        ),
        (
            "2004-07-22T16:28:00-05:00",
            t2128 * s,
            "2004-07-22 16:28:00-05:00",
        ),
        (
            "2004-07-22T16:28:00-0500",
            t2128 * s,
            "2004-07-22 16:28:00-05:00",
        ),
        (
            "2004-07-23T03:58:00+06:30",
            t2128 * s,
            "2004-07-23 03:58:00+06:30",
        ),
        (
            "2004-07-22T21:28:00.5Z",
            t2128 * s + 500_000,
            "2004-07-22 21:28:00Z",
        ),
        (
            "2004-07-22T21:28:00.000001Z",
            t2128 * s + 1,
            "2004-07-22 21:28:00Z",
        ),
        (
            "2004-07-22T21:28:00.123456000Z",
            t2128 * s + 123_456,
            "2004-07-22 21:28:00Z",
        ),
        // Leap days: 2004-02-29 is day 31+28 after 2004-01-01; 2000 is a leap century.
        (
            "2004-02-29",
            (12_418 + 59) * DAY_S * s,
            "2004-02-29 00:00:00Z",
        ),
        (
            "2000-02-29",
            (10_957 + 59) * DAY_S * s,
            "2000-02-29 00:00:00Z",
        ),
        // An offset that crosses midnight back into the previous day.
        (
            "2004-03-01T01:00:00+02:00",
            ((12_418 + 59) * DAY_S + 23 * 3600) * s,
            "2004-03-01 01:00:00+02:00",
        ),
        ("open", OPEN_END, ""),
    ]
}

#[test]
fn instants_parse_to_independently_derived_microseconds() {
    for (text, want_us, gnu) in instant_cases() {
        assert_eq!(parse_instant_us(text), Ok(want_us), "{text}");
        if !gnu.is_empty() {
            if let Some(secs) = gnu_date_s(gnu) {
                // The whole-second part agrees with GNU date's own calendar.
                assert_eq!(
                    want_us.div_euclid(1_000_000),
                    secs,
                    "{text} vs date -d '{gnu}'"
                );
            }
        }
    }
}

#[test]
fn bad_instants_are_refused_with_a_reason() {
    let cases: [(&str, &str); 15] = [
        ("2003-02-29", "not a calendar date"),
        ("1900-02-29", "not a calendar date"),
        ("2004-13-01", "not a calendar date"),
        ("2004-04-31", "not a calendar date"),
        ("2004-07-22T24:00:00Z", "not a time of day"),
        ("2004-07-22T21:28:60Z", "leap seconds"),
        ("2004-07-22T21:28:00.0000001Z", "finer than a microsecond"),
        ("2004-07-22T21:28:00+24:00", "less than 24 hours"),
        ("1969-12-31", "before 1970-01-01"),
        (
            "1090531680000000",
            "write µs as a JSON integer (1090531680000000)",
        ),
        ("2004-7-22", "expected YYYY-MM-DD"),
        ("22/07/2004", "expected YYYY-MM-DD"),
        ("yesterday", "expected YYYY-MM-DD"),
        ("", "expected YYYY-MM-DD"),
        ("2004-07-22T21:28:00Zjunk", "expected YYYY-MM-DD"),
    ];
    for (text, why) in cases {
        let e = parse_instant_us(text).expect_err(text);
        assert_eq!(e.input, text);
        assert!(e.reason.contains(why), "{text}: {}", e.reason);
    }
}

#[test]
fn durations_parse_and_round_trip() {
    let s = 1_000_000i64;
    let cases: [(&str, i64); 11] = [
        ("7d", 7 * DAY_S * s),
        ("36h", 36 * 3600 * s),
        ("15m", 15 * 60 * s),
        ("90s", 90 * s),
        ("500ms", 500_000),
        ("250us", 250),
        ("250µs", 250),
        ("2w", 14 * DAY_S * s),
        ("3d 4h", (3 * DAY_S + 4 * 3600) * s),
        ("1h30m", 90 * 60 * s),
        ("0s", 0),
    ];
    for (text, want) in cases {
        assert_eq!(parse_duration_us(text), Ok(want), "{text}");
    }
    for (text, why) in [
        ("1.5h", "fractions"),
        ("7", "add a unit (\"7s\")"),
        ("7 days", "expected <number><unit>"),
        ("d", "expected <number><unit>"),
        ("", "expected <number><unit>"),
        ("-1d", "expected <number><unit>"),
        ("99999999999999999999d", "too large"),
        ("60000000d", "longer than the time domain"),
    ] {
        let e = parse_duration_us(text).expect_err(text);
        assert!(e.reason.contains(why), "{text}: {}", e.reason);
    }
    // The formatter's output reads back to the same µs.
    for us in [
        1,
        999,
        1_000,
        59_999_999,
        3_600_000_000,
        273_600_000_000,
        90_061_001_001,
    ] {
        assert_eq!(parse_duration_us(&duration(us)), Ok(us), "{}", duration(us));
    }
    for us in [
        0,
        1,
        1_090_531_680_000_000,
        1_090_531_680_123_456,
        4_102_444_800_000_000,
    ] {
        assert_eq!(parse_instant_us(&iso_utc(us)), Ok(us), "{}", iso_utc(us));
    }
}

/// A small store: a ring of five nodes messaging once an hour for two days, from
/// 2004-07-22T00:00:00Z (12621 days after the epoch).
fn store() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let mut s = Store::create(d.path()).unwrap();
    let t0 = 12_621 * DAY_S * 1_000_000;
    let ops: Vec<Op> = (0..48)
        .map(|i| {
            let t = t0 + i * 3_600_000_000;
            Op::parse(&json!({"op": "assert_edge", "src": format!("n{}", i % 5),
                "dst": format!("n{}", (i + 1) % 5), "rel_type": "MSG", "vt_s": t, "vt_e": t + 1}))
            .unwrap()
        })
        .collect();
    s.write(ops).unwrap();
    (d, s)
}

fn call(s: &Store, op: &str, args: &Value) -> Value {
    call_operator(s.snapshot(), op, args, &CallOptions::default()).unwrap_or_else(|e| e.payload())
}

#[test]
fn iso_arguments_give_the_integer_envelope_byte_for_byte() {
    let (_d, s) = store();
    let day = 12_621 * DAY_S * 1_000_000;
    let h = 3_600_000_000i64;
    let tt = s.stats().last_tt.unwrap();
    let tt_iso = iso_utc(tt);
    let pairs: Vec<(&str, Value, Value)> = vec![
        (
            "state_at",
            json!({"uid": "n1", "at": day + 5 * h}),
            json!({"uid": "n1", "at": "2004-07-22T05:00:00Z"}),
        ),
        (
            "snapshot_subgraph",
            json!({"seeds": ["n0"], "t_valid": day + 3 * h, "hops": 2}),
            json!({"seeds": ["n0"], "t_valid": "2004-07-22T05:00:00+02:00", "hops": 2}),
        ),
        (
            "diff_snapshots",
            json!({"t1": day, "t2": day + 24 * h}),
            json!({"t1": "2004-07-22", "t2": "2004-07-23"}),
        ),
        (
            "aggregate_events",
            json!({"group_by": [{"dim": "time_bucket"}], "aggregates": [{"agg": "count"}],
                "window": {"t_a": day, "t_b": day + 48 * h}, "stride": 6 * h}),
            json!({"group_by": [{"dim": "time_bucket"}], "aggregates": [{"agg": "count"}],
                "window": {"t_a": "2004-07-22", "t_b": "2004-07-24T00:00:00Z"}, "stride": "6h"}),
        ),
        (
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": {"t_a": day, "t_b": day + 48 * h},
                "stride": 24 * h}),
            json!({"metric": "edge_event_count", "window": {"t_a": "2004-07-22", "t_b": "2004-07-24"},
                "stride": "1d"}),
        ),
        (
            "count_temporal_motifs",
            json!({"motif": "M_triangle_cyclic", "delta": 5 * h,
                "window": {"t_a": day, "t_b": day + 48 * h}}),
            json!({"motif": "M_triangle_cyclic", "delta": "4h 60m",
                "window": {"t_a": "2004-07-22", "t_b": "2004-07-24"}}),
        ),
        (
            "temporal_reachability",
            json!({"src": "n0", "window": {"t_a": day, "t_b": day + 48 * h},
                "delta_max_wait": 2 * h}),
            json!({"src": "n0", "window": {"t_a": "2004-07-22", "t_b": "2004-07-24"},
                "delta_max_wait": "120m"}),
        ),
        (
            "entity_history",
            json!({"uid": "n2", "include_edges": true, "as_of_tt": tt}),
            json!({"uid": "n2", "include_edges": true, "as_of_tt": tt_iso}),
        ),
        (
            "entity_history",
            json!({"uid": "n2", "as_of_tt": OPEN_END}),
            json!({"uid": "n2", "as_of_tt": "open"}),
        ),
    ];
    for (op, ints, isos) in pairs {
        let a = call(&s, op, &ints);
        let b = call(&s, op, &isos);
        assert!(a.get("error").is_none(), "{op}: {a}");
        assert_eq!(
            tgms_engine::canon::to_string(&a),
            tgms_engine::canon::to_string(&b),
            "{op}"
        );
    }
}

#[test]
fn a_malformed_time_argument_is_a_structured_schema_error() {
    let (_d, s) = store();
    let e = call(&s, "state_at", &json!({"uid": "n1", "at": "2004-02-30"}));
    assert_eq!(e["error"], "E_SCHEMA");
    assert_eq!(
        e["message"],
        "invalid args for state_at: '2004-02-30' is not a time: 2004-02-30 is not a calendar date"
    );
    assert_eq!(e["details"]["path"], json!(["at"]));
    let forms = e["details"]["repair"]["accepted_forms"].as_array().unwrap();
    assert!(forms
        .iter()
        .any(|f| f.as_str().unwrap().contains("2004-07-22T21:28:00Z")));
    let e = call(
        &s,
        "aggregate_events",
        &json!({"group_by": [], "aggregates": [{"agg": "max_in_window", "span": "1.5h"}],
            "window": {"t_a": 0, "t_b": 10}}),
    );
    assert_eq!(e["error"], "E_SCHEMA");
    assert_eq!(e["details"]["path"], json!(["aggregates", 0, "span"]));
    assert!(e["message"].as_str().unwrap().contains("is not a duration"));
    // A zero duration parses, then fails the schema's minimum like the integer 0 does.
    let zero = call(
        &s,
        "graph_metric_timeseries",
        &json!({"metric": "node_count", "window": {"t_a": 0, "t_b": 10}, "stride": "0s"}),
    );
    let zero_int = call(
        &s,
        "graph_metric_timeseries",
        &json!({"metric": "node_count", "window": {"t_a": 0, "t_b": 10}, "stride": 0}),
    );
    assert_eq!(zero["error"], "E_SCHEMA");
    assert_eq!(zero, zero_int);
}

#[test]
fn published_schemas_admit_the_string_forms() {
    let spec = tgms_operators::lookup("state_at").unwrap();
    let at = &spec.arg_schema()["properties"]["at"];
    assert_eq!(at["type"], json!(["integer", "string"]));
    assert_eq!(at["pattern"], tgms_operators::timeparse::TIME_PATTERN);
    let spec = tgms_operators::lookup("graph_metric_timeseries").unwrap();
    let stride = &spec.arg_schema()["properties"]["stride"];
    // A bucket stride also takes a calendar unit (day, iso_week, month, year).
    assert_eq!(stride["pattern"], tgms_operators::timeparse::STRIDE_PATTERN);
    // burst_detection's stride takes calendar units too (issue 21 item 6); a duration-only
    // argument keeps the duration pattern.
    let spec = tgms_operators::lookup("burst_detection").unwrap();
    let stride = &spec.arg_schema()["properties"]["stride"];
    assert_eq!(stride["pattern"], tgms_operators::timeparse::STRIDE_PATTERN);
    let spec = tgms_operators::lookup("aggregate_events").unwrap();
    let span = &spec.arg_schema()["properties"]["aggregates"]["items"]["properties"]["span"];
    assert_eq!(span["pattern"], tgms_operators::timeparse::DURATION_PATTERN);
}

#[test]
fn an_integer_that_reads_as_seconds_of_the_data_is_refused_with_both_readings() {
    let (_d, s) = store();
    let t0_s = 12_621 * DAY_S; // 2004-07-22T00:00:00Z in seconds
    let e = call(&s, "state_at", &json!({"uid": "n1", "at": t0_s + 3600}));
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert_eq!(
        e["message"],
        format!("at = {} looks like seconds: read as µs it is 1970-01-01T00:18:10.458Z (before the store's first event at 2004-07-22T00:00:00Z); read as seconds it is 2004-07-22T01:00:00Z. Times are µs: write {} or \"2004-07-22T01:00:00Z\"", t0_s + 3600, (t0_s + 3600) * 1_000_000)
    );
    assert_eq!(e["details"]["repair"]["use"], (t0_s + 3600) * 1_000_000);
    assert_eq!(e["details"]["path"], json!(["at"]));
    // Nested positions are found and named.
    let e = call(
        &s,
        "graph_metric_timeseries",
        &json!({"metric": "edge_event_count",
        "window": {"t_a": 0, "t_b": t0_s + 86_400}, "stride": "1d"}),
    );
    assert_eq!(e["details"]["path"], json!(["window", "t_b"]), "{e}");
    // µs readings that are legal: 0, a seconds reading outside the data, as_of_tt, compute.
    for (op, args) in [
        (
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": t0_s * 1_000_000 + 86_400_000_000}, "stride": "1000d"}),
        ),
        ("state_at", json!({"uid": "n1", "at": 5})),
        (
            "state_at",
            json!({"uid": "n1", "at": t0_s * 1_000_000, "as_of_tt": t0_s + 10}),
        ),
        (
            "compute",
            json!({"fn": "interval_relation", "a": {"start": t0_s, "end": t0_s + 5}, "b": {"start": t0_s + 5, "end": t0_s + 9}}),
        ),
    ] {
        let env = call(&s, op, &args);
        assert!(env.get("error").is_none(), "{op} {args}: {env}");
    }
    // A store whose own times are small integers keeps taking them.
    let d = tempfile::tempdir().unwrap();
    let mut small = Store::create(d.path()).unwrap();
    small
        .write(vec![Op::parse(&json!({"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "M", "vt_s": 5, "vt_e": 60})).unwrap()])
        .unwrap();
    let env = call(&small, "state_at", &json!({"uid": "a", "at": 30}));
    assert_eq!(env["rows_total"], 1, "{env}");
}
