//! Time input for people (docs/times.md): the one parser of instants (`"2004-07-22"`,
//! `"2004-07-22T21:28:00Z"`, `"2004-07-22T23:28:00+02:00"`, `"open"`) and durations (`"7d"`,
//! `"36h"`, `"3d 4h"`, `"500ms"`), and the pass that resolves them to integer µs wherever an
//! argument schema declares a time ([`resolve_times`]) — so resolved arguments, envelopes and
//! digests are the ones the integer call produces.
//!
//! The grammar is split here; every calendar fact (month lengths, leap years, offsets) is
//! chrono's.

use crate::error::{Code, OpError};
use crate::registry::OpSpec;
use chrono::{FixedOffset, NaiveDate, NaiveDateTime, NaiveTime};
use serde_json::{json, Value};
use tgms_engine::OPEN_END;

/// The `pattern` of a time (instant) argument in the published schemas. Its presence on a
/// schema node is also what marks that node for [`resolve_times`].
pub const TIME_PATTERN: &str = r"^(open|[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?)$";

/// The `pattern` of a duration argument (marks the node like [`TIME_PATTERN`]).
pub const DURATION_PATTERN: &str = r"^([0-9]+ ?(w|d|h|m|s|ms|us|µs) ?)+$";

/// The `pattern` of a bucket `stride` that also takes a calendar unit
/// ([`crate::calendar::CAL_UNITS`]): durations are resolved to µs, calendar unit names are
/// kept for the operator.
pub const STRIDE_PATTERN: &str = r"^(day|iso_week|month|year|([0-9]+ ?(w|d|h|m|s|ms|us|µs) ?)+)$";

/// What a schema says about time strings, for descriptions and repairs.
pub const TIME_FORMS: [&str; 5] = [
    "integer µs since 1970-01-01 UTC, e.g. 1090531680000000",
    "\"2004-07-22\" (midnight UTC, or midnight in the call's `timezone`)",
    "\"2004-07-22T21:28:00Z\" (seconds, fraction and zone optional; no zone = the call's `timezone`, else UTC)",
    "\"2004-07-22T23:28:00+02:00\" (an offset from UTC)",
    "\"open\" (the open end, 4611686018427387904)",
];

/// The accepted duration forms.
pub const DURATION_FORMS: [&str; 3] = [
    "integer µs, e.g. 86400000000",
    "\"7d\", \"36h\", \"15m\", \"90s\", \"500ms\", \"250us\" (also \"2w\")",
    "\"3d 4h\" (parts add up)",
];

/// The accepted forms of a calendar-capable `stride`.
pub const STRIDE_FORMS: [&str; 4] = [
    DURATION_FORMS[0],
    DURATION_FORMS[1],
    DURATION_FORMS[2],
    "a calendar unit: \"day\", \"iso_week\", \"month\", \"year\" (local to `timezone`)",
];

/// Why a time string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeError {
    /// The string as given.
    pub input: String,
    /// What is wrong with it, in words.
    pub reason: String,
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}': {}", self.input, self.reason)
    }
}

impl std::error::Error for TimeError {}

fn fail(input: &str, reason: impl Into<String>) -> TimeError {
    TimeError {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// Exactly `n` ASCII digits at the start of `s` as a number, and the rest.
fn digits(s: &str, n: usize) -> Option<(u32, &str)> {
    let head = s.get(..n)?;
    if !head.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head.parse().ok()?, &s[n..]))
}

const SHAPE: &str =
    "expected YYYY-MM-DD, optionally followed by THH:MM[:SS[.ffffff]] and Z or ±HH:MM";

/// An instant as µs since 1970-01-01 UTC, in `[0, OPEN_END]`; a string without `Z` or an
/// offset is UTC.
pub fn parse_instant_us(s: &str) -> Result<i64, TimeError> {
    parse_instant_in(s, None)
}

/// [`parse_instant_us`] reading a string without `Z` or an offset as local time of `zone`
/// when one is given (the call's `timezone`, docs/times.md#time-strings-and-timezone). A
/// local time that occurs twice (the hour a clock is set back) is its earlier instant; one
/// that does not occur (the hour a clock skips) is refused.
pub fn parse_instant_in(s: &str, zone: Option<crate::calendar::Zone>) -> Result<i64, TimeError> {
    if s == "open" {
        return Ok(OPEN_END);
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        // A bare number in a string: the integer form is a JSON number, not a string.
        return Err(fail(
            s,
            format!("a number in a string; write µs as a JSON integer ({s}), or a date like \"2004-07-22\""),
        ));
    }
    let (y, rest) = digits(s, 4).ok_or_else(|| fail(s, SHAPE))?;
    let (m, rest) = rest
        .strip_prefix('-')
        .and_then(|r| digits(r, 2))
        .ok_or_else(|| fail(s, SHAPE))?;
    let (d, rest) = rest
        .strip_prefix('-')
        .and_then(|r| digits(r, 2))
        .ok_or_else(|| fail(s, SHAPE))?;
    let date = NaiveDate::from_ymd_opt(y as i32, m, d)
        .ok_or_else(|| fail(s, format!("{y:04}-{m:02}-{d:02} is not a calendar date")))?;
    let (time, offset_s) = if rest.is_empty() {
        (NaiveTime::MIN, None)
    } else {
        let r = rest
            .strip_prefix('T')
            .or_else(|| rest.strip_prefix(' '))
            .ok_or_else(|| fail(s, SHAPE))?;
        parse_time_of_day(s, r)?
    };
    let local = NaiveDateTime::new(date, time);
    let us = match (offset_s, zone) {
        (None, Some(z)) => z.local_to_utc_us(local).map_err(|why| fail(s, why))?,
        _ => {
            let offset = FixedOffset::east_opt(offset_s.unwrap_or(0))
                .ok_or_else(|| fail(s, "the UTC offset must be less than 24 hours"))?;
            (local - offset).and_utc().timestamp_micros()
        }
    };
    if us < 0 {
        return Err(fail(
            s,
            "before 1970-01-01T00:00:00Z, where the store's time domain starts",
        ));
    }
    Ok(us.min(OPEN_END))
}

/// `HH:MM[:SS[.f]][zone]` → (time of day, offset east of UTC in seconds; none without a
/// zone).
fn parse_time_of_day(s: &str, r: &str) -> Result<(NaiveTime, Option<i32>), TimeError> {
    let (h, r) = digits(r, 2).ok_or_else(|| fail(s, SHAPE))?;
    let (mi, mut r) = r
        .strip_prefix(':')
        .and_then(|r| digits(r, 2))
        .ok_or_else(|| fail(s, SHAPE))?;
    let mut sec = 0;
    let mut nano = 0;
    if let Some(x) = r.strip_prefix(':') {
        let (v, x) = digits(x, 2).ok_or_else(|| fail(s, SHAPE))?;
        sec = v;
        r = x;
        if let Some(x) = r.strip_prefix('.') {
            let n = x.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 || n > 9 {
                return Err(fail(s, "a fraction of a second has 1 to 9 digits"));
            }
            let frac = &x[..n];
            if frac.len() > 6 && frac[6..].bytes().any(|b| b != b'0') {
                return Err(fail(
                    s,
                    "finer than a microsecond, the store's time unit; round to 6 fraction digits",
                ));
            }
            nano = format!("{frac:0<9}").parse::<u32>().unwrap_or(0);
            r = &x[n..];
        }
    }
    if sec == 60 {
        return Err(fail(
            s,
            "leap seconds (:60) are not representable in µs since the epoch",
        ));
    }
    let time = NaiveTime::from_hms_nano_opt(h, mi, sec, nano)
        .ok_or_else(|| fail(s, format!("{h:02}:{mi:02}:{sec:02} is not a time of day")))?;
    let offset = match r {
        "" => return Ok((time, None)),
        "Z" => 0,
        _ => {
            let sign = match r.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(fail(s, SHAPE)),
            };
            let z = &r[1..];
            let (oh, z) = digits(z, 2).ok_or_else(|| fail(s, SHAPE))?;
            let om = match z {
                "" => 0,
                _ => {
                    let z = z.strip_prefix(':').unwrap_or(z);
                    match digits(z, 2) {
                        Some((om, "")) if om < 60 => om,
                        _ => return Err(fail(s, SHAPE)),
                    }
                }
            };
            sign * (oh as i32 * 3600 + om as i32 * 60)
        }
    };
    Ok((time, Some(offset)))
}

/// A duration as µs (`>= 0`): `"7d"`, `"36h"`, `"15m"`, `"90s"`, `"500ms"`, `"250us"`,
/// `"2w"`, or parts that add up (`"3d 4h"`, `"1h30m"`).
pub fn parse_duration_us(s: &str) -> Result<i64, TimeError> {
    const UNITS: [(&str, i64); 8] = [
        // Longest unit names first so "ms" is not read as "m" followed by "s".
        ("ms", 1_000),
        ("us", 1),
        ("µs", 1),
        ("w", 7 * 86_400_000_000),
        ("d", 86_400_000_000),
        ("h", 3_600_000_000),
        ("m", 60_000_000),
        ("s", 1_000_000),
    ];
    let shape =
        "expected <number><unit> parts with unit w, d, h, m, s, ms or us, e.g. \"7d\" or \"3d 4h\"";
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(
            s,
            format!(
                "a number in a string; write µs as a JSON integer ({s}), or add a unit (\"{s}s\")"
            ),
        ));
    }
    let mut r = s.trim_start();
    let mut total: i64 = 0;
    if r.is_empty() {
        return Err(fail(s, shape));
    }
    while !r.is_empty() {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return Err(fail(s, shape));
        }
        let value: i64 = r[..n]
            .parse()
            .map_err(|_| fail(s, "the number is too large"))?;
        r = r[n..].trim_start();
        let Some((unit, per)) = UNITS.iter().find(|(u, _)| r.starts_with(u)) else {
            return Err(fail(
                s,
                if r.starts_with('.') {
                    "fractions are not accepted; use a smaller unit (\"90m\", not \"1.5h\")"
                } else {
                    shape
                },
            ));
        };
        total = value
            .checked_mul(*per)
            .and_then(|v| total.checked_add(v))
            .filter(|v| *v <= OPEN_END)
            .ok_or_else(|| fail(s, "longer than the time domain (2^62 µs)"))?;
        r = r[unit.len()..].trim_start();
    }
    Ok(total)
}

/// Which parser a schema node asks for.
fn kind_of(schema: &Value) -> Option<Kind> {
    match schema.get("pattern").and_then(Value::as_str) {
        Some(TIME_PATTERN) => Some(Kind::Instant),
        Some(DURATION_PATTERN) => Some(Kind::Duration),
        Some(STRIDE_PATTERN) => Some(Kind::Stride),
        _ => None,
    }
}

/// The kind of time a schema node holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A point in time, resolved to µs since 1970 UTC.
    Instant,
    /// A length of time, resolved to µs.
    Duration,
    /// A duration or a calendar unit name (left as the string).
    Stride,
}

/// Every time or duration string at a position `schema` marks, in document order, with its
/// instance path and kind. Other values (integers, `$ref` objects, wrong types, a calendar
/// unit name given as a stride) are left for schema validation. Read-only, so a call without
/// time strings (e.g. a `compute` over a large input table) copies nothing.
fn time_strings<'v>(
    schema: &Value,
    v: &'v Value,
    path: &mut Vec<Value>,
    out: &mut Vec<(Vec<Value>, Kind, &'v str)>,
) {
    match (kind_of(schema), v) {
        (Some(Kind::Stride), Value::String(s)) if crate::calendar::CalUnit::parse(s).is_some() => {}
        (Some(k), Value::String(s)) => out.push((path.clone(), k, s)),
        (Some(_), _) => {}
        (None, Value::Object(m)) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, x) in m {
                    if let Some(sub) = props.get(k) {
                        path.push(json!(k));
                        time_strings(sub, x, path, out);
                        path.pop();
                    }
                }
            }
        }
        (None, Value::Array(a)) => {
            if let Some(items) = schema.get("items") {
                for (i, x) in a.iter().enumerate() {
                    path.push(json!(i));
                    time_strings(items, x, path, out);
                    path.pop();
                }
            }
        }
        (None, _) => {}
    }
}

/// The value at instance `path` (object keys and array indices, as [`time_strings`] records
/// them).
fn at_path_mut<'v>(mut v: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
    for step in path {
        v = match step {
            Value::String(k) => v.get_mut(k.as_str())?,
            Value::Number(i) => v.get_mut(usize::try_from(i.as_u64()?).ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The arguments of a call to `spec` with every time and duration string resolved to µs:
/// `None` when nothing was a string (the arguments stay byte for byte as given), else the
/// resolved copy. A malformed string is `E_SCHEMA` naming the argument path, the reason and
/// the accepted forms.
///
/// When the operator takes a `timezone` and the call gives one (a zone name or offset), a
/// time string without `Z` or an offset is local time of that zone; otherwise it is UTC. A
/// `timezone` that does not parse is left for the operator's validator to report.
pub fn resolve_times(spec: &OpSpec, args: &Value) -> Result<Option<Value>, OpError> {
    let mut found = Vec::new();
    time_strings(&spec.arg_schema(), args, &mut Vec::new(), &mut found);
    if found.is_empty() {
        return Ok(None);
    }
    let zone = spec
        .args
        .iter()
        .any(|a| a.name == "timezone")
        .then(|| args.get("timezone").and_then(Value::as_str))
        .flatten()
        .and_then(|z| crate::calendar::parse_zone(z).ok());
    let mut v = args.clone();
    for (path, kind, s) in found {
        let parsed = match kind {
            Kind::Instant => parse_instant_in(s, zone),
            Kind::Duration | Kind::Stride => parse_duration_us(s),
        };
        let us = parsed.map_err(|e| {
            let (what, forms): (&str, &[&str]) = match kind {
                Kind::Duration => ("a duration", &DURATION_FORMS),
                Kind::Stride => ("a stride", &STRIDE_FORMS),
                Kind::Instant => ("a time", &TIME_FORMS),
            };
            OpError::with(
                Code::Schema,
                format!(
                    "invalid args for {}: '{}' is not {what}: {}",
                    spec.name, e.input, e.reason
                ),
                json!({"path": path, "repair": {"accepted_forms": forms, "docs": "docs/times.md"}}),
            )
        })?;
        let slot = at_path_mut(&mut v, &path)
            .ok_or_else(|| OpError::internal("a time string's path does not lead back to it"))?;
        *slot = json!(us);
    }
    Ok(Some(v))
}
