//! Time output for people (docs/times.md): µs since the epoch as ISO-8601 UTC, the open end as
//! `"open"`, durations as `"3d 4h"`, chosen by `--time iso|us`; and the `_utc` companions a
//! JSON output for people gains beside its integers. The one formatting module of the
//! workspace: the CLI tables, `stats`, `history`, the MCP dataset card and the evaluation
//! tables call it. Operator envelopes never go through it (their bytes are digested).

use serde_json::{Map, Value};
use tgms_engine::OPEN_END;

/// How a table or text output shows times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeMode {
    /// ISO-8601 UTC instants, `"open"`, durations like `3d 4h` (the default for people).
    #[default]
    Iso,
    /// The stored integers (µs).
    Us,
}

impl std::str::FromStr for TimeMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "iso" => Ok(TimeMode::Iso),
            "us" => Ok(TimeMode::Us),
            _ => Err(format!("unknown time mode '{s}': use iso or us")),
        }
    }
}

/// `us` as ISO-8601 UTC: `2004-04-15T07:56:01Z`, with a fraction only when it is not zero
/// (`…:01.001500Z`); `"open"` at and past the open end [`OPEN_END`].
pub fn iso_utc(us: i64) -> String {
    if us >= OPEN_END {
        return "open".into();
    }
    match chrono::DateTime::from_timestamp_micros(us) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        None => format!("{us} µs (outside the calendar range)"),
    }
}

/// `us` as a duration for people: the non-zero parts among d, h, m, s, ms, µs
/// (`"3d 4h"`, `"1h 30m"`, `"500ms"`, `"0s"`); the form [`crate::timeparse`] reads back.
pub fn duration(us: i64) -> String {
    if us >= OPEN_END {
        return "open".into();
    }
    const PARTS: [(&str, i64); 6] = [
        ("d", 86_400_000_000),
        ("h", 3_600_000_000),
        ("m", 60_000_000),
        ("s", 1_000_000),
        ("ms", 1_000),
        ("µs", 1),
    ];
    if us == 0 {
        return "0s".into();
    }
    let mut rest = us.unsigned_abs();
    let mut out: Vec<String> = Vec::new();
    for (unit, per) in PARTS {
        let per = per as u64;
        if rest >= per {
            out.push(format!("{}{unit}", rest / per));
            rest %= per;
        }
    }
    let sign = if us < 0 { "-" } else { "" };
    format!("{sign}{}", out.join(" "))
}

/// An instant in `mode`.
pub fn instant(us: i64, mode: TimeMode) -> String {
    match mode {
        TimeMode::Iso => iso_utc(us),
        TimeMode::Us => us.to_string(),
    }
}

/// A duration in `mode`.
pub fn span(us: i64, mode: TimeMode) -> String {
    match mode {
        TimeMode::Iso => duration(us),
        TimeMode::Us => us.to_string(),
    }
}

/// Field names whose integer values are instants (µs since the epoch) wherever they occur in
/// an envelope, a version row or a statistics object.
pub const INSTANT_FIELDS: [&str; 23] = [
    "vt_s",
    "vt_e",
    "tt_s",
    "tt_e",
    "t",
    "at",
    "t_a",
    "t_b",
    "t1",
    "t2",
    "t_valid",
    "as_of_tt",
    "vt_min",
    "vt_max",
    "first_tt",
    "last_tt",
    "tt",
    "arrival",
    "earliest_arrival",
    "latest_departure",
    "bucket_start",
    "first_t",
    "last_t",
];

/// Field names whose integer values are durations (µs); any name ending in `_us` is one too.
pub const DURATION_FIELDS: [&str; 6] = ["stride", "delta", "gap", "span", "lag", "delta_max_wait"];

/// Whether `name` holds an instant, a duration, or neither. Besides [`INSTANT_FIELDS`], a
/// name ending in `_vt_s` or `_vt_e` (`min_vt_s`, `first_vt_s`, `lo_hi_last_vt_s`) is an
/// instant.
pub fn field_kind(name: &str) -> Option<FieldKind> {
    if INSTANT_FIELDS.contains(&name) || name.ends_with("_vt_s") || name.ends_with("_vt_e") {
        Some(FieldKind::Instant)
    } else if DURATION_FIELDS.contains(&name) || name.ends_with("_us") {
        Some(FieldKind::Duration)
    } else {
        None
    }
}

/// What a time-carrying field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A point in time (µs since 1970 UTC).
    Instant,
    /// A length of time (µs).
    Duration,
}

/// The text of field `name` with value `v` in `mode`, when `name` is a time field and `v` an
/// integer; `None` otherwise (the caller renders the value as it always did).
pub fn field(name: &str, v: &Value, mode: TimeMode) -> Option<String> {
    let us = v.as_i64()?;
    Some(match field_kind(name)? {
        FieldKind::Instant => instant(us, mode),
        FieldKind::Duration => span(us, mode),
    })
}

/// Adds `<name>_utc` (ISO-8601 or `"open"`) beside every integer instant field of `m` and of
/// the objects nested in it, never replacing the integers. For JSON outputs meant for people
/// (`stats --json`); never applied to operator envelopes.
pub fn add_utc_companions(m: &mut Map<String, Value>) {
    let mut extra: Vec<(String, Value)> = Vec::new();
    for (k, v) in m.iter_mut() {
        match v {
            Value::Object(inner) => add_utc_companions(inner),
            Value::Array(a) => a.iter_mut().for_each(|x| {
                if let Value::Object(inner) = x {
                    add_utc_companions(inner)
                }
            }),
            _ => {
                if let (Some(FieldKind::Instant), Some(us)) = (field_kind(k), v.as_i64()) {
                    extra.push((format!("{k}_utc"), Value::from(iso_utc(us))));
                }
            }
        }
    }
    m.extend(extra);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_and_open() {
        // 1082015761 s = 12523 days (2004-04-15) + 28561 s (07:56:01).
        assert_eq!(iso_utc(1_082_015_761_000_000), "2004-04-15T07:56:01Z");
        assert_eq!(iso_utc(1_500), "1970-01-01T00:00:00.001500Z");
        assert_eq!(iso_utc(OPEN_END), "open");
        assert_eq!(instant(5, TimeMode::Us), "5");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(3 * 86_400_000_000 + 4 * 3_600_000_000), "3d 4h");
        assert_eq!(duration(5_400_000_000), "1h 30m");
        assert_eq!(duration(500_000), "500ms");
        assert_eq!(duration(1), "1µs");
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(-90_000_000), "-1m 30s");
        assert_eq!(span(7, TimeMode::Us), "7");
    }
}
