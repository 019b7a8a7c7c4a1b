//! Event-file loaders (`spec/evaluation.md` §7.1): `snap`, `snap-csv-rated` and
//! `jsonl-events`. [`parse_events`] parses a whole text; [`parse_chunks`] reads a file a
//! line at a time and hands its events over in chunks, so a bulk load holds neither the
//! file nor all its events. A malformed line is reported as [`Error::BadInput`] with its
//! 1-based line number. The events are written with `Store::ingest_events` (node label
//! `Node`, chunks of 50,000).

use serde_json::{json, Value};
use std::path::Path;
use tgms_engine::op::parse_event;
use tgms_engine::{canon, Error, Event, Result, OPEN_END};

/// An event-file format of §7.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// SNAP temporal edge list: `src dst seconds` per line.
    Snap,
    /// Bitcoin-OTC style CSV: `SOURCE,TARGET,RATING,TIME`.
    SnapCsvRated,
    /// One event object (`data-model.md` §6.7) per line.
    JsonlEvents,
}

impl Format {
    /// The CLI spelling (`--format`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Snap => "snap",
            Format::SnapCsvRated => "snap-csv-rated",
            Format::JsonlEvents => "jsonl-events",
        }
    }

    /// Parses the CLI spelling.
    pub fn from_name(s: &str) -> Option<Format> {
        Some(match s {
            "snap" => Format::Snap,
            "snap-csv-rated" => Format::SnapCsvRated,
            "jsonl-events" => Format::JsonlEvents,
            _ => return None,
        })
    }

    /// The `rel_type` used when none is given: `MSG` (snap), `TRUST` (snap-csv-rated);
    /// `jsonl-events` has none (events must carry their own).
    pub fn default_rel_type(self) -> Option<&'static str> {
        match self {
            Format::Snap => Some("MSG"),
            Format::SnapCsvRated => Some("TRUST"),
            Format::JsonlEvents => None,
        }
    }
}

/// Parses the whole text of an event file (`path` is only used in error reports). Events
/// come out in file order. `rel_type` overrides the format's default (`snap`,
/// `snap-csv-rated`) or fills events that lack one (`jsonl-events`).
pub fn parse_events(
    path: &Path,
    text: &str,
    format: Format,
    rel_type: Option<&str>,
) -> Result<Vec<Event>> {
    let mut out = Vec::new();
    parse_chunks(
        path,
        text.as_bytes(),
        format,
        rel_type,
        (usize::MAX, 1),
        |mut c| {
            out.append(&mut c);
            Ok(())
        },
    )?;
    Ok(out)
}

/// [`parse_events`] handing the events to `f` in order, in chunks of `chunk` events (the
/// last one shorter), so that a bulk load holds one chunk of parsed events at a time. A
/// malformed line ends the parse with its `BadInput` error after the events before it
/// were handed over in whole `unit`s (`chunk` is a multiple of `unit`; a bulk load's unit
/// is its batch), and nothing of the unit it falls in; an error of `f` ends it too.
///
/// The input is read a line at a time (a bulk load never holds the file); a line ends at
/// `\n` or `\r\n`, and a line that is not UTF-8 is malformed.
pub fn parse_chunks(
    path: &Path,
    mut input: impl std::io::BufRead,
    format: Format,
    rel_type: Option<&str>,
    (chunk, unit): (usize, usize),
    mut f: impl FnMut(Vec<Event>) -> Result<()>,
) -> Result<()> {
    if let Some("") = rel_type {
        return Err(Error::invalid("rel_type must be a non-empty string"));
    }
    let rel = rel_type.or(format.default_rel_type());
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for no in 0u64.. {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        let bad = |reason: String| Error::BadInput {
            file: path.to_path_buf(),
            line: no + 1,
            reason,
        };
        let parsed = match std::str::from_utf8(&buf) {
            Err(_) => Err("line is not valid UTF-8".to_string()),
            Ok(line) => parse_line(format, line, rel),
        };
        match parsed {
            Ok(None) => {}
            Ok(Some(e)) => {
                out.push(e);
                if out.len() == chunk {
                    f(std::mem::take(&mut out))?;
                }
            }
            Err(reason) => {
                out.truncate(out.len() / unit.max(1) * unit.max(1));
                if !out.is_empty() {
                    f(out)?;
                }
                return Err(bad(reason));
            }
        }
    }
    if !out.is_empty() {
        f(out)?;
    }
    Ok(())
}

/// A line's outcome: `Ok(None)` = skipped, `Err(reason)` = malformed.
type LineResult = std::result::Result<Option<Event>, String>;

/// One line of an event file in `format`, `rel` the rel type it takes.
fn parse_line(format: Format, line: &str, rel: Option<&str>) -> LineResult {
    match format {
        Format::Snap => snap_line(line, rel.unwrap_or("MSG")),
        Format::SnapCsvRated => csv_rated_line(line, rel.unwrap_or("TRUST")),
        Format::JsonlEvents => jsonl_line(line, rel),
    }
}

/// `snap`: `src dst seconds`. Blank lines, `#` / `%` comments and lines whose third field
/// is not an integer (headers) are skipped.
fn snap_line(line: &str, rel: &str) -> LineResult {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') || t.starts_with('%') {
        return Ok(None);
    }
    let fields: Vec<&str> = t.split_whitespace().collect();
    if fields.len() >= 3 && !is_integer(fields[2]) {
        return Ok(None);
    }
    if fields.len() != 3 {
        return Err(format!(
            "expected 3 whitespace-separated fields `src dst seconds`, found {}",
            fields.len()
        ));
    }
    let src = node_id(fields[0], "src")?;
    let dst = node_id(fields[1], "dst")?;
    let secs: i64 = fields[2]
        .parse()
        .map_err(|_| format!("seconds {} out of range", fields[2]))?;
    let vt_s = secs
        .checked_mul(1_000_000)
        .filter(|v| instant_ok(*v))
        .ok_or_else(|| format!("seconds {secs} out of range"))?;
    Ok(Some(Event::instant(src, dst, rel.to_string(), vt_s)))
}

/// `snap-csv-rated`: `SOURCE,TARGET,RATING,TIME`. Blank lines and lines whose `TIME` is not
/// a number (headers) are skipped.
fn csv_rated_line(line: &str, rel: &str) -> LineResult {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() >= 4 && fields[3].parse::<f64>().is_err() {
        return Ok(None);
    }
    if fields.len() != 4 {
        return Err(format!(
            "expected 4 comma-separated fields `SOURCE,TARGET,RATING,TIME`, found {}",
            fields.len()
        ));
    }
    let src = node_id(fields[0], "SOURCE")?;
    let dst = node_id(fields[1], "TARGET")?;
    let rating: i64 = fields[2]
        .strip_prefix('+')
        .unwrap_or(fields[2])
        .parse()
        .map_err(|_| format!("RATING {:?} is not an integer", fields[2]))?;
    let time: f64 = fields[3].parse().unwrap_or(f64::NAN);
    // vt_s = trunc(float(TIME) · 1,000,000), in the timestamp domain.
    let scaled = (time * 1_000_000.0).trunc();
    if !(scaled.is_finite() && scaled >= 0.0 && scaled < (OPEN_END - 1) as f64) {
        return Err(format!("TIME {} out of range", fields[3]));
    }
    let mut e = Event::instant(src, dst, rel.to_string(), scaled as i64);
    e.props = Some(canon::to_string(&json!({ "rating": rating })));
    Ok(Some(e))
}

/// `jsonl-events`: one event object per line (blank lines skipped).
fn jsonl_line(line: &str, rel: Option<&str>) -> LineResult {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let mut v = canon::parse(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(m) = &mut v else {
        return Err("every line must be a JSON event object".to_string());
    };
    if let Some(r) = rel {
        if matches!(m.get("rel_type"), None | Some(Value::Null)) {
            m.insert("rel_type".to_string(), Value::String(r.to_string()));
        }
    }
    parse_event(&v).map(Some).map_err(|e| e.to_string())
}

/// `[+-]?[0-9]+`: what counts as an integer field.
fn is_integer(s: &str) -> bool {
    let d = s.strip_prefix(['+', '-']).unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// A SNAP node id (a non-negative decimal integer) → uid `"n<id>"` (the id's decimal text,
/// so `007` and `7` name the same node).
fn node_id(s: &str, what: &str) -> std::result::Result<String, String> {
    let d = s.strip_prefix('+').unwrap_or(s);
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} {s:?} is not a non-negative integer node id"
        ));
    }
    let id: u64 = d
        .parse()
        .map_err(|_| format!("{what} {s:?} overflows a 64-bit node id"))?;
    Ok(format!("n{id}"))
}

/// An instantaneous event at `t` needs `0 <= t` and `t + 1 <= OPEN_END`.
fn instant_ok(t: i64) -> bool {
    (0..OPEN_END).contains(&t)
}
