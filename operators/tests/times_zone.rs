//! Times, the rest of issue 21 item 6: a time string without `Z` or an offset is read in the
//! call's `timezone` (against GNU `date` with `TZ=` and hand arithmetic), and the calendar
//! strides of `burst_detection` and `neighborhood_evolution` (against the integer-stride call
//! where local days are uniform, and against a brute force over the store's rows where they
//! are not); their bad inputs are structured errors.

use serde_json::{json, Value};
use std::process::Command;
use tgms_engine::{Op, Store};
use tgms_operators::{call_operator, CallOptions};

const S: i64 = 1_000_000;
const HOUR: i64 = 3600 * S;
const DAY: i64 = 24 * HOUR;
/// 2004-07-22T00:00:00Z (12,621 days after the epoch; see tests/times.rs).
const D0722: i64 = 12_621 * DAY;

/// µs of local time `text` in zone `tz` per GNU date (`TZ=tz date -d text +%s`), when `date`
/// runs here.
fn gnu_local(tz: &str, text: &str) -> Option<i64> {
    let o = Command::new("date")
        .env("TZ", tz)
        .args(["-d", text, "+%s"])
        .output()
        .ok()?;
    o.status.success().then_some(())?;
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse::<i64>()
        .ok()
        .map(|s| s * S)
}

/// Events every `step` µs from `t0` between five nodes.
fn store(t0: i64, n: i64, step: i64) -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let mut s = Store::create(d.path()).unwrap();
    let ops: Vec<Op> = (0..n)
        .map(|i| {
            // Uneven activity so that bursts exist: more events in every seventh step.
            let t = t0 + i * step;
            Op::parse(&json!({"op": "assert_edge", "src": format!("n{}", i % 5),
                "dst": format!("n{}", (i * 3 + 1) % 5), "rel_type": "MSG", "vt_s": t,
                "vt_e": t + (i % 4 + 1) * step}))
            .unwrap()
        })
        .collect();
    s.write(ops).unwrap();
    (d, s)
}

fn call(s: &Store, op: &str, args: &Value) -> Value {
    call_operator(s.snapshot(), op, args, &CallOptions::default()).unwrap_or_else(|e| e.payload())
}

/// The envelope without `args_echo` (which keeps the strings as given).
fn body(mut env: Value) -> Value {
    if let Some(m) = env.as_object_mut() {
        m.remove("args_echo");
    }
    env
}

#[test]
fn time_strings_without_an_offset_are_read_in_the_calls_timezone() {
    let (_d, s) = store(D0722 - 3 * DAY, 200, HOUR);
    let cases: [(&str, &str, i64); 6] = [
        // (timezone, local text, UTC µs by hand)
        ("Europe/Berlin", "2004-07-22", D0722 - 2 * HOUR),
        ("Europe/Berlin", "2004-07-22T21:00", D0722 + 19 * HOUR),
        (
            "+05:30",
            "2004-07-22T21:00",
            D0722 + 21 * HOUR - 5 * HOUR - 30 * 60 * S,
        ),
        ("-0800", "2004-07-21", D0722 - DAY + 8 * HOUR),
        (
            "UTC",
            "2004-07-22T06:15:30",
            D0722 + 6 * HOUR + 15 * 60 * S + 30 * S,
        ),
        (
            "America/New_York",
            "2004-07-22T00:30",
            D0722 + 4 * HOUR + 30 * 60 * S,
        ),
    ];
    for (tz, text, want) in cases {
        if tz.contains('/') {
            if let Some(g) = gnu_local(tz, &text.replace('T', " ")) {
                assert_eq!(
                    g, want,
                    "GNU date disagrees with the hand value for {text} in {tz}"
                );
            }
        }
        for op in ["aggregate_events", "graph_metric_timeseries"] {
            let mk = |t_a: Value| match op {
                "aggregate_events" => json!({"group_by": [], "aggregates": [{"agg": "count"}],
                    "window": {"t_a": t_a, "t_b": D0722 + 2 * DAY}, "timezone": tz}),
                _ => json!({"metric": "edge_event_count", "stride": "day",
                    "window": {"t_a": t_a, "t_b": D0722 + 2 * DAY}, "timezone": tz}),
            };
            let by_text = call(&s, op, &mk(json!(text)));
            let by_int = call(&s, op, &mk(json!(want)));
            assert!(by_int.get("error").is_none(), "{op} {tz}: {by_int}");
            assert_eq!(body(by_text), body(by_int), "{op}: {text} in {tz}");
        }
    }
    // With `Z` or an offset the string is absolute, whatever the timezone.
    let args = |t_a: Value, tz: Option<&str>| {
        let mut a = json!({"group_by": [], "aggregates": [{"agg": "count"}],
            "window": {"t_a": t_a, "t_b": D0722 + 2 * DAY}});
        if let Some(tz) = tz {
            a["timezone"] = json!(tz);
        }
        a
    };
    let abs = body(call(
        &s,
        "aggregate_events",
        &args(json!(D0722 + 3 * HOUR), Some("Asia/Tokyo")),
    ));
    for text in ["2004-07-22T03:00:00Z", "2004-07-22T05:00+02:00"] {
        let got = body(call(
            &s,
            "aggregate_events",
            &args(json!(text), Some("Asia/Tokyo")),
        ));
        assert_eq!(got, abs, "{text}");
    }
    // Without a timezone a plain string stays UTC.
    let utc = body(call(
        &s,
        "aggregate_events",
        &args(json!("2004-07-22"), None),
    ));
    assert_eq!(
        utc,
        body(call(&s, "aggregate_events", &args(json!(D0722), None)))
    );
}

#[test]
fn local_times_that_happen_twice_or_never_are_handled() {
    let (_d, s) = store(D0722 - 200 * DAY, 100, DAY);
    // 2004-10-31 02:30 happens twice in Berlin (CEST then CET): the earlier, 00:30Z.
    let d1031 = D0722 + (9 + 31 + 30 + 31) * DAY; // Jul 22 → Jul 31 → Aug 31 → Sep 30 → Oct 31
    let args = |t_a: Value| {
        json!({"group_by": [], "aggregates": [{"agg": "count"}],
        "window": {"t_a": t_a, "t_b": d1031 + DAY}, "timezone": "Europe/Berlin"})
    };
    let twice = body(call(
        &s,
        "aggregate_events",
        &args(json!("2004-10-31T02:30")),
    ));
    let want = d1031 + 30 * 60 * S;
    if let Some(g) = gnu_local("Europe/Berlin", "2004-10-31 02:30 CEST") {
        assert_eq!(g, want);
    }
    assert_eq!(
        twice,
        body(call(&s, "aggregate_events", &args(json!(want))))
    );
    // 2004-03-28 02:30 does not happen in Berlin.
    let e = call(&s, "aggregate_events", &args(json!("2004-03-28T02:30")));
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("'2004-03-28T02:30'") && m.contains("does not exist"),
        "{m}"
    );
    assert!(m.contains("explicit offset"), "{m}");
    // An unknown zone is the validator's error, not a time error.
    let mut bad = args(json!("2004-10-01"));
    bad["timezone"] = json!("Mars/Olympus");
    let e = call(&s, "aggregate_events", &bad);
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert!(canon(&e).contains("unknown timezone 'Mars/Olympus'"), "{e}");
}

fn canon(v: &Value) -> String {
    tgms_engine::canon::to_string(v)
}

#[test]
fn burst_detection_calendar_days_equal_uniform_days_from_local_midnight() {
    // Events every 37 minutes over 60 days: with a fixed offset and a window from local
    // midnight, calendar days are exactly the uniform 1-day buckets.
    let t0 = D0722 - 30 * DAY;
    let (_d, s) = store(t0, 60 * 24 * 60 / 37, 37 * 60 * S);
    let mut flagged = 0;
    for (k, off_min) in [0i64, 330, -480, 60, -210, 840].into_iter().enumerate() {
        let tz = format!(
            "{}{:02}:{:02}",
            if off_min < 0 { '-' } else { '+' },
            off_min.abs() / 60,
            off_min.abs() % 60
        );
        let t_a = t0 + DAY - off_min * 60 * S; // local midnight of the next day
        let t_b = t_a + (40 + k as i64) * DAY;
        for method in ["zscore", "ratio"] {
            for (unit, width) in [("day", DAY), ("iso_week", 7 * DAY)] {
                // iso_week buckets start on a Monday: move t_a to a local Monday.
                let t_a = if unit == "iso_week" {
                    let local_day = (t_a + off_min * 60 * S).div_euclid(DAY);
                    let monday = local_day + (7 - (local_day + 3).rem_euclid(7)) % 7;
                    monday * DAY - off_min * 60 * S
                } else {
                    t_a
                };
                let base = json!({"target": {"kind": "edge_event_rate"}, "window": {"t_a": t_a, "t_b": t_b},
                    "method": method, "params": {"w": 3, "z": 0.5, "r": 1.01}, "limit": 2000});
                let mut cal = base.clone();
                cal["stride"] = json!(unit);
                cal["timezone"] = json!(tz);
                let mut uni = base.clone();
                uni["stride"] = json!(width);
                let (c, u) = (
                    body(call(&s, "burst_detection", &cal)),
                    body(call(&s, "burst_detection", &uni)),
                );
                assert!(u.get("error").is_none(), "{u}");
                assert_eq!(c, u, "{unit} {tz} {method}");
                flagged += c["rows_total"].as_u64().unwrap();
                // node_activity takes the same buckets.
                cal["target"] = json!({"kind": "node_activity", "uid": "n2"});
                uni["target"] = cal["target"].clone();
                assert_eq!(
                    body(call(&s, "burst_detection", &cal)),
                    body(call(&s, "burst_detection", &uni)),
                    "node_activity {unit} {tz} {method}"
                );
            }
        }
    }
    assert!(flagged > 20, "{flagged} flagged buckets in all");
}

#[test]
fn burst_detection_months_count_each_calendar_month() {
    // Berlin months over a year: bucket bounds are local midnights of the 1st, whose UTC
    // offset changes with daylight saving; every bucket's count is checked through a
    // threshold that flags every bucket (ratio >= 1e-9 against a history of counts > 0).
    let t0 = D0722 - 200 * DAY;
    let step = 5 * HOUR + 17 * 60 * S;
    let n = 400 * DAY / step;
    let (_d, s) = store(t0, n, step);
    let (t_a, t_b) = (t0 + 3 * DAY, t0 + 380 * DAY);
    let env = call(
        &s,
        "burst_detection",
        &json!({"target": {"kind": "edge_event_rate"}, "window": {"t_a": t_a, "t_b": t_b},
            "stride": "month", "timezone": "Europe/Berlin", "method": "ratio",
            "params": {"r": 1.0, "w": 2}, "limit": 2000}),
    );
    // Brute force: local month starts in Berlin (UTC+1 in winter, +2 from the last Sunday of
    // March to the last Sunday of October), computed with GNU date where it runs.
    let mut bounds = vec![t_a];
    let mut starts = Vec::new();
    for (y, m) in (2003..=2005).flat_map(|y| (1..=12).map(move |m| (y, m))) {
        if let Some(t) = gnu_local("Europe/Berlin", &format!("{y}-{m:02}-01 00:00")) {
            starts.push(t);
        }
    }
    if starts.is_empty() {
        eprintln!("skipping the month bounds: GNU date not available");
        return;
    }
    bounds.extend(starts.into_iter().filter(|&t| t_a < t && t < t_b));
    bounds.push(t_b);
    assert_eq!(env["n_buckets"], json!(bounds.len() - 1), "{env}");
    let count = |a: i64, b: i64| (0..n).filter(|i| (a..b).contains(&(t0 + i * step))).count();
    // Ratio against the median of the previous two counts (all > 0), flagged iff ≥ 1.0:
    // recompute the flags from the brute-force counts.
    let x: Vec<usize> = bounds.windows(2).map(|w| count(w[0], w[1])).collect();
    let mut want = Vec::new();
    for b in 1..x.len() {
        let h = &x[b.saturating_sub(2)..b];
        let med = if h.len() == 1 {
            h[0] as f64
        } else {
            (h[0] + h[1]) as f64 / 2.0
        };
        if x[b] as f64 / med >= 1.0 {
            want.push(json!({"t_a": bounds[b], "t_b": bounds[b + 1], "value": x[b]}));
        }
    }
    let got: Vec<Value> = env["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!({"t_a": r["t_a"], "t_b": r["t_b"], "value": r["value"].as_f64().unwrap() as usize}))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn neighborhood_evolution_calendar_series_has_one_point_per_local_unit() {
    let t0 = D0722 - 40 * DAY;
    let (_d, s) = store(t0, 500, 3 * HOUR + 11 * 60 * S);
    for off_min in [0i64, 330, -480, 600] {
        let tz = format!(
            "{}{:02}:{:02}",
            if off_min < 0 { '-' } else { '+' },
            off_min.abs() / 60,
            off_min.abs() % 60
        );
        let t1 = t0 + 2 * DAY - off_min * 60 * S; // a local midnight
        let t2 = t1 + 30 * DAY;
        let cal = call(
            &s,
            "neighborhood_evolution",
            &json!({"uid": "n1", "t1": t1, "t2": t2, "stride": "day", "timezone": tz}),
        );
        let uni = call(
            &s,
            "neighborhood_evolution",
            &json!({"uid": "n1", "t1": t1, "t2": t2, "stride": DAY}),
        );
        assert_eq!(cal["degree_series"], uni["degree_series"], "{tz}");
        assert_eq!(cal["stride"], Value::Null);
        assert_eq!(cal["stride_unit"], "day");
        assert_eq!(uni["stride"], json!(DAY));
        assert!(uni.get("stride_unit").is_none(), "{uni}");
        // A t1 inside a local day: the first point is t1, then local midnights.
        let cal = call(
            &s,
            "neighborhood_evolution",
            &json!({"uid": "n1", "t1": t1 + 5 * HOUR, "t2": t2, "stride": "day", "timezone": tz}),
        );
        let ts: Vec<i64> = cal["degree_series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["t"].as_i64().unwrap())
            .collect();
        let want: Vec<i64> = std::iter::once(t1 + 5 * HOUR)
            .chain((1..30).map(|k| t1 + k * DAY))
            .collect();
        assert_eq!(ts, want, "{tz}");
    }
    // An unknown zone and an unknown unit are structured errors.
    let e = call(
        &s,
        "neighborhood_evolution",
        &json!({"uid": "n1", "t1": t0, "t2": t0 + DAY, "stride": "day", "timezone": "Nowhere"}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    let e = call(
        &s,
        "neighborhood_evolution",
        &json!({"uid": "n1", "t1": t0, "t2": t0 + DAY, "stride": "week"}),
    );
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
    assert!(canon(&e).contains("iso_week"), "{e}");
    let e = call(
        &s,
        "burst_detection",
        &json!({"target": {"kind": "edge_event_rate"}, "window": {"t_a": t0, "t_b": t0 + 9000 * DAY}, "stride": "day"}),
    );
    assert_eq!(e["error"], "E_LIMIT", "{e}");
}
