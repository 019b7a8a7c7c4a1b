//! Times on the command line (docs/times.md): the value parser of time flags (`--as-of
//! 2004-07-22` or µs) and the `--time iso|us` rendering of table and text cells. The parsing
//! and formatting themselves are the operators crate's ([`tgms_operators::timeparse`],
//! [`tgms_operators::timefmt`]); this module only adapts them to clap and to table cells.

use serde_json::{Map, Value};
use tgms_engine::canon;
pub use tgms_operators::timefmt::TimeMode;
use tgms_operators::timefmt::{self, field_kind, FieldKind};

/// The store's time unit, in the words every help text uses.
pub const UNIT_HELP: &str = "Times are µs since 1970-01-01 UTC (the store's unit); time arguments \
also take ISO-8601 (\"2004-07-22\", \"2004-07-22T21:28:00Z\", \"…+02:00\") and durations \"7d\", \
\"36h\", \"15m\", \"90s\", \"500ms\" (docs/times.md).";

/// clap value parser of an instant flag: integer µs or an ISO-8601 string.
pub fn instant_arg(s: &str) -> Result<i64, String> {
    if let Ok(us) = s.parse::<i64>() {
        return Ok(us);
    }
    tgms_operators::timeparse::parse_instant_us(s).map_err(|e| {
        format!(
            "{e}; accepted: {}",
            tgms_operators::timeparse::TIME_FORMS.join("; ")
        )
    })
}

/// clap value parser of `--time`.
pub fn time_mode_arg(s: &str) -> Result<TimeMode, String> {
    s.parse()
}

/// `v` with every integer under a time field name rendered for people in `mode` (instants
/// as ISO-8601 UTC or `"open"`, durations as `3d 4h`); other values unchanged. For display
/// only: never digest or store the result.
pub fn humanize(v: &Value, mode: TimeMode) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let shown = timefmt::field(k, x, mode)
                        .map(Value::from)
                        .unwrap_or_else(|| humanize(x, mode));
                    (k.clone(), shown)
                })
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| humanize(x, mode)).collect()),
        other => other.clone(),
    }
}

/// The text of one table cell or text field `key` holding `v`: a time field in `mode`, a
/// string as itself, anything else as canonical JSON with its nested time fields rendered.
/// `history` and `stats` tables call this for every cell.
pub fn cell(key: &str, v: &Value, mode: TimeMode) -> String {
    if let Some(s) = timefmt::field(key, v, mode) {
        return s;
    }
    match v {
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => canon::to_string(&humanize(v, mode)),
        other => canon::to_string(other),
    }
}

/// A text line's time value with both readings when they differ, e.g.
/// `2004-04-15T07:56:01Z (1082015761000000 µs)`; the integer alone under `--time us`.
pub fn both(key: &str, v: &Value, mode: TimeMode) -> String {
    match (mode, field_kind(key), v.as_i64()) {
        (TimeMode::Iso, Some(FieldKind::Instant), Some(us)) => {
            format!("{} ({us} µs)", timefmt::iso_utc(us))
        }
        (TimeMode::Iso, Some(FieldKind::Duration), Some(us)) => {
            format!("{} ({us} µs)", timefmt::duration(us))
        }
        _ => cell(key, v, mode),
    }
}
