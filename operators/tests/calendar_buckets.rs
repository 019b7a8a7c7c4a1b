//! Calendar strides and time zones (issue 21 item 6): on randomized stores, the `day`,
//! `iso_week`, `month` and `year` buckets of `aggregate_events` and
//! `graph_metric_timeseries` in IANA and fixed-offset zones equal a brute force that keys each
//! event by its local civil date (chrono-tz's conversion, chrono's ISO week); calendar-unit
//! dimensions follow `timezone`; integer calls keep their bytes; bad input is a structured
//! error.

mod common;
use chrono::{DateTime, Datelike, NaiveDate, Timelike};
use common::kit::Rng;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const ZONES: [&str; 5] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "+05:30",
    "Asia/Kathmandu",
];
const UNITS: [&str; 4] = ["day", "iso_week", "month", "year"];
const DAY: i64 = 86_400_000_000;

fn us(y: i32, m: u32, d: u32) -> i64 {
    NaiveDate::from_ymd_opt(y, m, d)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp_micros()
}

/// The local civil date and time of `t` in `zone`.
fn local(t: i64, zone: &str) -> chrono::NaiveDateTime {
    let utc = DateTime::from_timestamp_micros(t).unwrap();
    if let Ok(z) = zone.parse::<chrono_tz::Tz>() {
        return utc.with_timezone(&z).naive_local();
    }
    let off = chrono::FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap();
    assert_eq!(zone, "+05:30");
    utc.with_timezone(&off).naive_local()
}

/// The calendar unit an instant belongs to, as a comparable key.
fn unit_key(t: i64, zone: &str, unit: &str) -> (i32, u32, u32) {
    let d = local(t, zone).date();
    match unit {
        "day" => (d.year(), d.month(), d.day()),
        "iso_week" => (d.iso_week().year(), d.iso_week().week(), 0),
        "month" => (d.year(), d.month(), 0),
        _ => (d.year(), 0, 0),
    }
}

fn random_store(r: &mut Rng) -> (tempfile::TempDir, tgms_engine::Store, Vec<i64>) {
    let (d, mut s) = new_store();
    let (lo, hi) = (us(2003, 1, 1), us(2006, 1, 1));
    let n = 20 + r.below(200);
    // Some events sit on or next to midnights in the tested zones.
    let ts: Vec<i64> = (0..n)
        .map(|_| match r.below(3) {
            0 => {
                lo + r.below(((hi - lo) / DAY) as u64) as i64 * DAY
                    - r.below(2) as i64 * 3_600_000_000
            }
            _ => lo + r.below((hi - lo) as u64) as i64,
        })
        .collect();
    let events: Vec<Value> = ts
        .iter()
        .map(|t| json!({"src": format!("n{}", r.below(5)), "dst": format!("n{}", r.below(5)), "rel_type": "M", "vt_s": t}))
        .collect();
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    (d, s, ts)
}

#[test]
fn calendar_buckets_equal_local_date_brute_force() {
    let mut r = Rng::new(2112);
    for case in 0..60 {
        let (_d, s, ts) = random_store(&mut r);
        let zone = r.pick(&ZONES);
        let unit = r.pick(&UNITS);
        let (lo, hi) = (us(2003, 1, 1), us(2006, 1, 1));
        let span = if unit == "day" { 400 * DAY } else { hi - lo };
        let t_a = lo + r.below((hi - lo - span / 2) as u64) as i64;
        let t_b = (t_a + 1 + r.below(span as u64) as i64).min(hi);
        let window = json!({"t_a": t_a, "t_b": t_b});
        let inside: Vec<i64> = ts
            .iter()
            .copied()
            .filter(|t| t_a <= *t && *t < t_b)
            .collect();
        let mut want: BTreeMap<(i32, u32, u32), i64> = BTreeMap::new();
        for &t in &inside {
            *want.entry(unit_key(t, zone, unit)).or_insert(0) += 1;
        }
        let ctx = format!("case {case}: {unit} in {zone} over {window}");

        let env = call(
            &s,
            "aggregate_events",
            json!({"group_by": [{"dim": "time_bucket"}],
            "aggregates": [{"agg": "count"}], "window": window, "stride": unit, "timezone": zone, "limit": 10000}),
        );
        assert!(env.get("error").is_none(), "{ctx}: {env}");
        let mut got: BTreeMap<(i32, u32, u32), i64> = BTreeMap::new();
        for row in env["rows"].as_array().unwrap() {
            let (a, b) = (row["t_a"].as_i64().unwrap(), row["t_b"].as_i64().unwrap());
            let k = unit_key(a, zone, unit);
            // A bucket is one unit: its last instant is in the same unit as its first.
            assert_eq!(unit_key(b - 1, zone, unit), k, "{ctx}: row {row}");
            assert!(
                got.insert(k, row["count"].as_i64().unwrap()).is_none(),
                "{ctx}"
            );
        }
        assert_eq!(got, want, "{ctx}");

        let env = call(
            &s,
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count",
            "window": window, "stride": unit, "timezone": zone, "limit": 10000}),
        );
        assert!(env.get("error").is_none(), "{ctx}: {env}");
        let rows = env["rows"].as_array().unwrap();
        assert_eq!(rows[0]["t_a"], t_a, "{ctx}");
        assert_eq!(rows[rows.len() - 1]["t_b"], t_b, "{ctx}");
        let mut seen = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let a = row["t_a"].as_i64().unwrap();
            if i > 0 {
                // Buckets tile the window, and each interior one starts at local midnight
                // (none of these zones moves its clocks at midnight).
                assert_eq!(rows[i - 1]["t_b"], a, "{ctx}");
                let l = local(a, zone);
                assert_eq!(
                    (l.hour(), l.minute(), l.second()),
                    (0, 0, 0),
                    "{ctx}: {row}"
                );
            }
            let k = unit_key(a, zone, unit);
            seen.push(k);
            assert_eq!(
                row["value"],
                want.get(&k).copied().unwrap_or(0),
                "{ctx}: {row}"
            );
        }
        seen.dedup();
        assert_eq!(seen.len(), rows.len(), "{ctx}: two buckets of one unit");
        assert_eq!(env["n_buckets"], rows.len(), "{ctx}");
    }
}

#[test]
fn calendar_unit_dimensions_follow_the_timezone() {
    let mut r = Rng::new(77);
    for case in 0..20 {
        let (_d, s, ts) = random_store(&mut r);
        let zone = r.pick(&ZONES);
        let window = json!({"t_a": us(2003, 1, 1), "t_b": us(2006, 1, 1)});
        let env = call(
            &s,
            "aggregate_events",
            json!({"group_by": [{"dim": "calendar_unit", "unit": "hour_of_day"}],
            "aggregates": [{"agg": "count"}], "window": window, "timezone": zone}),
        );
        let mut want: BTreeMap<u32, i64> = BTreeMap::new();
        for &t in &ts {
            *want.entry(local(t, zone).hour()).or_insert(0) += 1;
        }
        let got: BTreeMap<u32, i64> = env["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["hour_of_day"].as_u64().unwrap() as u32,
                    row["count"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "case {case} in {zone}");
    }
}

#[test]
fn integer_strides_keep_their_bytes_and_bad_input_is_structured() {
    let (_d, s) = incident();
    let a = s.stats().vt_min.unwrap();
    let b = a + 30 * DAY;
    let args = json!({"metric": "edge_event_count", "window": {"t_a": a, "t_b": b}, "stride": DAY});
    let env = call(&s, "graph_metric_timeseries", args.clone());
    assert!(env["args_echo"].get("timezone").is_none(), "{env}");
    let mut with_utc = args.clone();
    with_utc["timezone"] = json!("UTC");
    // The same uniform buckets in UTC: the same payload digest.
    assert_eq!(
        call(&s, "graph_metric_timeseries", with_utc)["result_digest"],
        env["result_digest"]
    );

    let bad = |op: &str, args: Value| call(&s, op, args);
    let e = bad(
        "graph_metric_timeseries",
        json!({"metric": "edge_event_count", "window": {"t_a": a, "t_b": b},
        "stride": "month", "timezone": "Mars/Base"}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert_eq!(e["message"], "unknown timezone 'Mars/Base'");
    assert!(e["details"]["repair"]["accepted_forms"].is_array());
    let e = bad(
        "graph_metric_timeseries",
        json!({"metric": "edge_event_count", "window": {"t_a": a, "t_b": b},
        "stride": "week"}),
    );
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("is not a stride"),
        "{e}"
    );
    assert!(e["details"]["repair"]["accepted_forms"]
        .to_string()
        .contains("iso_week"));
    let e = bad(
        "aggregate_events",
        json!({"group_by": [{"dim": "calendar_unit", "unit": "hour_of_day", "tz_offset_minutes": 60}],
        "aggregates": [{"agg": "count"}], "window": {"t_a": a, "t_b": b}, "timezone": "Europe/Berlin"}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert!(e["message"].as_str().unwrap().contains("not both"));
    let e = bad(
        "aggregate_events",
        json!({"group_by": [{"dim": "time_bucket"}], "aggregates": [{"agg": "count"}],
        "window": {"t_a": 0, "t_b": us(2010, 1, 1)}, "stride": "day"}),
    );
    assert_eq!(e["error"], "E_LIMIT", "{e}");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("coarser calendar unit"));
    let e = bad(
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "count"}],
        "window": {"t_a": a, "t_b": b}, "stride": "month"}),
    );
    assert_eq!(e["message"], "stride requires a time_bucket dimension");
}
