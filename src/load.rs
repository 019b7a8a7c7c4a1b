//! Event-file parsing for `tgms ingest` (the spec's `evaluation.md` §7.1, `docs/ingest.md`): the
//! line formats `snap`, `snap-csv-rated`, `jsonl-events` and the named-column formats `csv`
//! and `parquet` ([`crate::load_columns`]). Parsing is strict: every line (row) is an event,
//! a line the format defines as ignorable (blank, a `#`/`%` comment in `snap`, a header on
//! line 1 only), a row left out by `--only`, or a [`BadLine`] naming its line, its field,
//! the shape expected there and what was found. [`read_lines`] walks a text file record by
//! record without holding it (parsing blocks of lines in parallel, `load_par.rs`); [`parse_events`] parses a whole text, failing at its first
//! bad line.

use serde_json::{json, Map, Value};
use std::path::Path;
use tgms_engine::op::parse_event;
use tgms_engine::op_input::{nearest, EVENT_FIELDS};
use tgms_engine::{canon, Error, Event, Result, OPEN_END};

/// An input format of `tgms ingest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// SNAP temporal edge list: `src dst seconds` per line.
    Snap,
    /// Bitcoin-OTC style CSV: `SOURCE,TARGET,RATING,TIME`.
    SnapCsvRated,
    /// One event object (`data-model.md` §6.7) per line.
    JsonlEvents,
    /// CSV with a header line, columns named by `--src`, `--dst`, `--time`, ….
    Csv,
    /// Parquet, columns named as for `csv`.
    Parquet,
    /// An Arrow IPC stream (what `export-rows --format arrow` and pyarrow's
    /// `ipc.new_stream` write), columns named as for `csv`.
    ArrowIpc,
}

impl Format {
    /// The CLI spelling (`--format`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Snap => "snap",
            Format::SnapCsvRated => "snap-csv-rated",
            Format::JsonlEvents => "jsonl-events",
            Format::Csv => "csv",
            Format::Parquet => "parquet",
            Format::ArrowIpc => "arrow-ipc",
        }
    }

    /// Parses the CLI spelling.
    pub fn from_name(s: &str) -> Option<Format> {
        Some(match s {
            "snap" => Format::Snap,
            "snap-csv-rated" => Format::SnapCsvRated,
            "jsonl-events" => Format::JsonlEvents,
            "csv" => Format::Csv,
            "parquet" => Format::Parquet,
            "arrow-ipc" => Format::ArrowIpc,
            _ => return None,
        })
    }

    /// The `rel_type` used when none is given: `MSG` (snap), `TRUST` (snap-csv-rated); the
    /// other formats have none (events carry their own, or `--rel-type` gives one).
    pub fn default_rel_type(self) -> Option<&'static str> {
        match self {
            Format::Snap => Some("MSG"),
            Format::SnapCsvRated => Some("TRUST"),
            Format::JsonlEvents | Format::Csv | Format::Parquet | Format::ArrowIpc => None,
        }
    }

    /// Whether the format names its columns (`csv`, `parquet`, `arrow-ipc`).
    pub fn has_named_columns(self) -> bool {
        matches!(self, Format::Csv | Format::Parquet | Format::ArrowIpc)
    }
}

/// How lines become events, besides the format: the rel type, the uid namespace and (for
/// `csv` / `parquet`) the column mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// `--rel-type`: overrides the format's default (`snap`, `snap-csv-rated`), fills
    /// events that lack one (`jsonl-events`, named columns without `--rel-type-col`).
    pub rel_type: Option<String>,
    /// `--uid-prefix`: prepended to every node uid read (`email:` → `email:n7`).
    pub uid_prefix: String,
    /// The named columns (`csv`, `parquet` only).
    pub columns: Option<crate::load_columns::Columns>,
}

impl Mapping {
    /// A mapping with only a rel type.
    pub fn rel(rel_type: Option<&str>) -> Mapping {
        Mapping {
            rel_type: rel_type.map(str::to_string),
            ..Mapping::default()
        }
    }

    /// Canonical text of everything that decides the events of a file besides its bytes
    /// (part of the derived batch-key prefix: the same file loaded another way is another
    /// load).
    pub fn describe(&self, format: Format) -> String {
        canon::to_string(&json!({
            "format": format.as_str(),
            "rel_type": self.rel_type,
            "uid_prefix": self.uid_prefix,
            "columns": self.columns.as_ref().map(|c| c.describe()),
        }))
    }
}

/// One line (row) of an input file that is not malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// The event the line holds.
    Event(Event),
    /// A line the format ignores: blank, a comment, the header on line 1.
    Ignored,
    /// A row left out by `--only`.
    Filtered,
}

/// What a counting pass keeps of a [`Record`]: its kind, without the event's strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// [`Record::Event`].
    Event,
    /// [`Record::Ignored`].
    Ignored,
    /// [`Record::Filtered`].
    Filtered,
}

impl Record {
    /// The record's kind.
    pub fn kind(&self) -> RecordKind {
        match self {
            Record::Event(_) => RecordKind::Event,
            Record::Ignored => RecordKind::Ignored,
            Record::Filtered => RecordKind::Filtered,
        }
    }
}

/// A malformed line: where, which field, what shape was expected and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number (data row number for Parquet).
    pub line: u64,
    /// The offending field (`src`, `seconds`, a JSON key, a column name) or `line` when
    /// the line as a whole has the wrong shape.
    pub field: String,
    /// The shape the field should have, in words.
    pub expected: String,
    /// What the field held, in words or quoted.
    pub found: String,
}

impl BadLine {
    fn new(line: u64, field: &str, expected: impl Into<String>, found: impl Into<String>) -> Self {
        BadLine {
            line,
            field: field.to_string(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// `field F: expected E, found X`.
    pub fn reason(&self) -> String {
        format!(
            "field {}: expected {}, found {}",
            self.field, self.expected, self.found
        )
    }

    /// The engine's `BadInput` error for this line of `path`.
    pub fn into_error(self, path: &Path) -> Error {
        Error::BadInput {
            file: path.to_path_buf(),
            line: self.line,
            reason: self.reason(),
        }
    }

    /// `{line, field, expected, found, reason}` for summaries and error details.
    pub fn to_json(&self) -> Value {
        json!({"line": self.line, "field": self.field, "expected": self.expected,
            "found": self.found, "reason": self.reason()})
    }
}

/// A value as it was found, quoted and cut to 80 characters for messages.
pub fn shown(s: &str) -> String {
    let cut: String = s.chars().take(80).collect();
    if cut.len() < s.len() {
        format!("{:?}…", cut)
    } else {
        format!("{cut:?}")
    }
}

/// Parses the whole text of an event file strictly (`path` is only used in error reports):
/// the events in file order, or the first malformed line's `BadInput` error. `rel_type`
/// as in [`Mapping::rel_type`].
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
/// last one shorter). A malformed line ends the parse with its `BadInput` error after the
/// events before it were handed over in whole `unit`s (`chunk` is a multiple of `unit`),
/// and nothing of the unit it falls in; an error of `f` ends it too.
pub fn parse_chunks(
    path: &Path,
    input: impl std::io::BufRead + Send,
    format: Format,
    rel_type: Option<&str>,
    (chunk, unit): (usize, usize),
    mut f: impl FnMut(Vec<Event>) -> Result<()>,
) -> Result<()> {
    let mut out = Vec::new();
    let mut bad = None;
    read_lines(path, input, format, &Mapping::rel(rel_type), |r| {
        match r {
            Ok(Record::Event(e)) => {
                out.push(e);
                if out.len() == chunk {
                    f(std::mem::take(&mut out))?;
                }
            }
            Ok(_) => {}
            Err(b) => {
                bad = Some(b);
                return Ok(false);
            }
        }
        Ok(true)
    })?;
    if let Some(b) = bad {
        out.truncate(out.len() / unit.max(1) * unit.max(1));
        if !out.is_empty() {
            f(out)?;
        }
        return Err(b.into_error(path));
    }
    if !out.is_empty() {
        f(out)?;
    }
    Ok(())
}

/// Checks a mapping before reading: a rel type given must not be empty.
pub fn check_mapping(format: Format, map: &Mapping) -> Result<()> {
    if let Some("") = map.rel_type.as_deref() {
        return Err(Error::invalid("rel_type must be a non-empty string"));
    }
    if format.has_named_columns() != map.columns.is_some() {
        return Err(Error::invalid(format!(
            "--format {} {}",
            format.as_str(),
            if format.has_named_columns() {
                "needs its columns: --src COL --dst COL --time COL"
            } else {
                "has fixed fields; --src, --dst, --time and the other column flags are for \
                 --format csv and parquet"
            }
        )));
    }
    Ok(())
}

/// Reads a text-format file (`snap`, `snap-csv-rated`, `jsonl-events`, `csv`) record by
/// record, handing each to `f` with its outcome; `f` returns `false` to stop. A line ends at
/// `\n` or `\r\n`; a line that is not UTF-8 is malformed. Errors: reading the input, a
/// mapping that does not fit the file (a named column it lacks), or `f`'s.
pub fn read_lines(
    path: &Path,
    input: impl std::io::BufRead + Send,
    format: Format,
    map: &Mapping,
    f: impl FnMut(std::result::Result<Record, BadLine>) -> Result<bool>,
) -> Result<()> {
    read_lines_with(path, input, format, map, |r| r, f)
}

/// [`read_lines`] handing `f` each line's outcome through `light`, which runs where the
/// line was parsed (on the parsing threads for the line formats): a pass that only counts
/// lines keeps no event, and its strings are freed by the thread that built them.
pub fn read_lines_with<T: Send>(
    path: &Path,
    input: impl std::io::BufRead + Send,
    format: Format,
    map: &Mapping,
    light: impl Fn(LineResult) -> T + Sync,
    mut f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    check_mapping(format, map)?;
    if format == Format::Csv {
        return crate::load_columns::read_csv(path, input, map, |r| f(light(r)));
    }
    if matches!(format, Format::Parquet | Format::ArrowIpc) {
        return Err(Error::invalid(format!(
            "{} is read from a file (load_columns::read_parquet / read_arrow_ipc)",
            format.as_str()
        )));
    }
    let rel = map.rel_type.as_deref().or(format.default_rel_type());
    // Lines are parsed in parallel and handed to `f` in file order (`load_par.rs`).
    crate::load_par::read_lines_par(
        path,
        input,
        |no, bytes| light(line_record(format, no, bytes, rel, &map.uid_prefix)),
        f,
    )
}

/// One line's record, from its bytes (without the line end): a line that is not UTF-8 is
/// malformed.
fn line_record(
    format: Format,
    no: u64,
    bytes: &[u8],
    rel: Option<&str>,
    prefix: &str,
) -> LineResult {
    parse_line(format, no, line_text(no, bytes)?, rel, prefix)
}

/// A line's text: a line that is not UTF-8 is malformed.
fn line_text(no: u64, bytes: &[u8]) -> std::result::Result<&str, BadLine> {
    std::str::from_utf8(bytes).map_err(|e| {
        BadLine::new(
            no,
            "line",
            "UTF-8 text",
            format!("a byte that is not UTF-8 at column {}", e.valid_up_to() + 1),
        )
    })
}

/// The kinds of [`read_lines`]'s records, handed to `f` in order: the counting pass of a
/// load. A `snap` line is checked without building its event (two uids and a rel type, a
/// tenth of the pass's time in allocation), with the same outcome; other formats are parsed
/// whole, as [`read_lines`] parses them.
pub fn read_line_kinds(
    path: &Path,
    input: impl std::io::BufRead + Send,
    format: Format,
    map: &Mapping,
    f: impl FnMut(KindResult) -> Result<bool>,
) -> Result<()> {
    if format != Format::Snap {
        return read_lines_with(path, input, format, map, |r| r.map(|rec| rec.kind()), f);
    }
    check_mapping(format, map)?;
    crate::load_par::read_lines_par(
        path,
        input,
        |no, bytes| {
            let fields = snap_fields(no, line_text(no, bytes)?)?;
            Ok(match fields {
                Some(_) => RecordKind::Event,
                None => RecordKind::Ignored,
            })
        },
        f,
    )
}

/// A line's outcome.
pub type LineResult = std::result::Result<Record, BadLine>;

/// A line's outcome as the validation pass keeps it: the record's kind, or the bad line.
pub type KindResult = std::result::Result<RecordKind, BadLine>;

/// One line (number `no`) of an event file in `format`, `rel` the rel type it takes.
fn parse_line(format: Format, no: u64, line: &str, rel: Option<&str>, prefix: &str) -> LineResult {
    match format {
        Format::Snap => snap_line(no, line, rel.unwrap_or("MSG"), prefix),
        Format::SnapCsvRated => csv_rated_line(no, line, rel.unwrap_or("TRUST"), prefix),
        Format::JsonlEvents => jsonl_line(no, line, rel, prefix),
        Format::Csv | Format::Parquet | Format::ArrowIpc => Ok(Record::Ignored),
    }
}

/// Line 1 of a `snap` / `snap-csv-rated` file whose first field does not start like a
/// number is its header (`src dst time`, `SOURCE,TARGET,RATING,TIME`). Anywhere else, and
/// for a line 1 that starts like a number, a line that does not parse is an error.
fn is_header(no: u64, first_field: &str) -> bool {
    no == 1
        && !first_field
            .trim_start_matches(['+', '-'])
            .starts_with(|c: char| c.is_ascii_digit())
}

/// The fields of `snap`, for messages.
const SNAP_FIELDS: [&str; 3] = ["src", "dst", "seconds"];

/// `snap`: `src dst seconds`. Blank lines, `#` / `%` comments and a header on line 1 are
/// ignored.
fn snap_line(no: u64, line: &str, rel: &str, prefix: &str) -> LineResult {
    Ok(match snap_fields(no, line)? {
        None => Record::Ignored,
        Some(f) => Record::Event(Event::instant(
            uid_of(prefix, f.src),
            uid_of(prefix, f.dst),
            rel.to_string(),
            f.vt_s,
        )),
    })
}

/// The checked fields of a `snap` line.
struct SnapFields<'a> {
    /// The source node id: its digits as written (no sign) and its value.
    src: (&'a str, u64),
    /// The destination node id, as `src`.
    dst: (&'a str, u64),
    /// The time, µs since 1970-01-01 UTC.
    vt_s: i64,
}

/// The fields of a `snap` line, checked ([`snap_line`]'s errors, in its order); `None` for
/// a line the format ignores.
fn snap_fields(no: u64, line: &str) -> std::result::Result<Option<SnapFields<'_>>, BadLine> {
    // The first three fields and whether more follow, without a vector per line.
    let mut it = fields_of(line);
    let mut fields = [""; 3];
    let mut n = 0;
    for (slot, f) in fields.iter_mut().zip(it.by_ref()) {
        *slot = f;
        n += 1;
    }
    // A blank line, a comment (its first field starts with the mark) or the header.
    let comment = fields[0].starts_with('#') || fields[0].starts_with('%');
    if n == 0 || comment || is_header(no, fields[0]) {
        return Ok(None);
    }
    let n = n + it.count();
    if n != 3 {
        return Err(BadLine::new(
            no,
            "line",
            "3 whitespace-separated fields `src dst seconds`",
            format!("{n} fields in {}", shown(line.trim())),
        ));
    }
    let src = node_number(no, fields[0], SNAP_FIELDS[0])?;
    let dst = node_number(no, fields[1], SNAP_FIELDS[1])?;
    let vt_s = fields[2]
        .strip_prefix('+')
        .unwrap_or(fields[2])
        .parse::<i64>()
        .ok()
        .and_then(|s| s.checked_mul(1_000_000))
        .filter(|v| instant_ok(*v))
        .ok_or_else(|| {
            BadLine::new(
                no,
                SNAP_FIELDS[2],
                format!(
                    "an integer number of seconds since 1970-01-01 UTC, 0 to {}",
                    OPEN_END / 1_000_000 - 1
                ),
                shown(fields[2]),
            )
        })?;
    Ok(Some(SnapFields { src, dst, vt_s }))
}

/// The whitespace-separated fields of `line` (`str::split_whitespace`'s). An ASCII line (a
/// SNAP file's) is cut at its whitespace bytes without decoding characters (a tenth of a
/// text load's parsing was `split_whitespace`); any other line as `split_whitespace` cuts
/// it (Unicode spaces included).
fn fields_of(line: &str) -> Fields<'_> {
    if line.is_ascii() {
        Fields::Ascii(line, 0)
    } else {
        Fields::Unicode(line.split_whitespace())
    }
}

/// The iterator of [`fields_of`]: an ASCII line and the byte where the next field search
/// starts, or any other line's `split_whitespace`.
enum Fields<'a> {
    Ascii(&'a str, usize),
    Unicode(std::str::SplitWhitespace<'a>),
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Fields::Unicode(it) => it.next(),
            Fields::Ascii(line, i) => {
                // `char::is_whitespace` of the ASCII characters: tab, line feed, vertical
                // tab, form feed, carriage return and space.
                let space = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
                let b = line.as_bytes();
                while *i < b.len() && space(b[*i]) {
                    *i += 1;
                }
                let start = *i;
                while *i < b.len() && !space(b[*i]) {
                    *i += 1;
                }
                (*i > start).then(|| &line[start..*i])
            }
        }
    }
}

/// The fields of `snap-csv-rated`, for messages.
const CSV_RATED_FIELDS: [&str; 4] = ["SOURCE", "TARGET", "RATING", "TIME"];

/// `snap-csv-rated`: `SOURCE,TARGET,RATING,TIME`. Blank lines and a header on line 1 are
/// ignored.
fn csv_rated_line(no: u64, line: &str, rel: &str, prefix: &str) -> LineResult {
    if line.trim().is_empty() {
        return Ok(Record::Ignored);
    }
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if is_header(no, fields[0]) {
        return Ok(Record::Ignored);
    }
    if fields.len() != 4 {
        return Err(BadLine::new(
            no,
            "line",
            "4 comma-separated fields `SOURCE,TARGET,RATING,TIME`",
            format!("{} fields in {}", fields.len(), shown(line)),
        ));
    }
    let src = node_id(no, fields[0], CSV_RATED_FIELDS[0], prefix)?;
    let dst = node_id(no, fields[1], CSV_RATED_FIELDS[1], prefix)?;
    let rating: i64 = fields[2]
        .strip_prefix('+')
        .unwrap_or(fields[2])
        .parse()
        .map_err(|_| BadLine::new(no, CSV_RATED_FIELDS[2], "an integer", shown(fields[2])))?;
    // vt_s = trunc(float(TIME) · 1,000,000), in the timestamp domain.
    let scaled = fields[3]
        .parse::<f64>()
        .map(|t| (t * 1_000_000.0).trunc())
        .unwrap_or(f64::NAN);
    if !(scaled.is_finite() && scaled >= 0.0 && scaled < (OPEN_END - 1) as f64) {
        return Err(BadLine::new(
            no,
            CSV_RATED_FIELDS[3],
            format!(
                "a number of seconds since 1970-01-01 UTC, 0 to {}",
                OPEN_END / 1_000_000 - 1
            ),
            shown(fields[3]),
        ));
    }
    let mut e = Event::instant(src, dst, rel.to_string(), scaled as i64);
    e.props = Some(canon::to_string(&json!({ "rating": rating })));
    Ok(Record::Event(e))
}

/// `jsonl-events`: one event object per line (blank lines ignored). Every key must be an
/// event field (`data-model.md` §6.7); each field is checked for its type and domain.
fn jsonl_line(no: u64, line: &str, rel: Option<&str>, prefix: &str) -> LineResult {
    if line.trim().is_empty() {
        return Ok(Record::Ignored);
    }
    let bad = |field: &str, expected: &str, found: String| BadLine::new(no, field, expected, found);
    let mut v = canon::parse(line).map_err(|e| {
        bad(
            "line",
            "one JSON event object",
            format!("invalid JSON ({e}) in {}", shown(line)),
        )
    })?;
    let Value::Object(m) = &mut v else {
        return Err(bad("line", "one JSON event object", shown(line)));
    };
    if let Some(k) = m.keys().find(|k| !EVENT_FIELDS.contains(&k.as_str())) {
        let hint = nearest(k, &EVENT_FIELDS)
            .map_or(String::new(), |n| format!(" (did you mean \"{n}\"?)"));
        return Err(bad(
            k,
            &format!("only the event fields {}{hint}", EVENT_FIELDS.join(", ")),
            format!("unknown field \"{k}\""),
        ));
    }
    if let Some(r) = rel {
        if matches!(m.get("rel_type"), None | Some(Value::Null)) {
            m.insert("rel_type".to_string(), Value::String(r.to_string()));
        }
    }
    check_event_fields(m).map_err(|(field, expected)| {
        let found = m.get(field).map_or("nothing".to_string(), canon::to_string);
        bad(field, expected, found)
    })?;
    let mut e = parse_event(&v).map_err(|e| bad("line", "a valid event", e.to_string()))?;
    if !prefix.is_empty() {
        e.src = format!("{prefix}{}", e.src);
        e.dst = format!("{prefix}{}", e.dst);
    }
    Ok(Record::Event(e))
}

/// The first field of a JSON event that is missing or out of its domain, with the shape
/// expected there.
fn check_event_fields(
    m: &Map<String, Value>,
) -> std::result::Result<(), (&'static str, &'static str)> {
    for k in ["src", "dst", "rel_type"] {
        if !matches!(m.get(k), Some(Value::String(s)) if !s.is_empty()) {
            return Err((k, "a non-empty string"));
        }
    }
    let vt_s = match m.get("vt_s").and_then(Value::as_i64) {
        Some(t) if instant_ok(t) => t,
        _ => {
            return Err((
                "vt_s",
                "an integer time in µs since 1970-01-01 UTC, 0 to 2^62 - 2",
            ))
        }
    };
    match m.get("vt_e") {
        None | Some(Value::Null) => {}
        Some(x) => match x.as_i64() {
            Some(0) => {}
            Some(e) if tgms_engine::time::legal_interval(vt_s, e) => {}
            _ => {
                return Err((
                    "vt_e",
                    "null, 0 or an integer time after vt_s, at most 2^62",
                ))
            }
        },
    }
    if !matches!(m.get("disc"), None | Some(Value::String(_))) {
        return Err(("disc", "a string"));
    }
    if !matches!(
        m.get("props"),
        None | Some(Value::Null) | Some(Value::Object(_))
    ) {
        return Err(("props", "a JSON object"));
    }
    Ok(())
}

/// A SNAP node id (a non-negative decimal integer) → uid `"<prefix>n<id>"` (the id's
/// decimal text, so `007` and `7` name the same node).
fn node_id(no: u64, s: &str, field: &str, prefix: &str) -> std::result::Result<String, BadLine> {
    Ok(uid_of(prefix, node_number(no, s, field)?))
}

/// A SNAP node id field, checked: its digits as written (without a `+`) and its value.
fn node_number<'a>(
    no: u64,
    s: &'a str,
    field: &str,
) -> std::result::Result<(&'a str, u64), BadLine> {
    let d = s.strip_prefix('+').unwrap_or(s);
    let id = d
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| d.parse::<u64>().ok())
        .flatten()
        .ok_or_else(|| {
            BadLine::new(
                no,
                field,
                "a non-negative integer node id (below 2^64)",
                shown(s),
            )
        })?;
    Ok((d, id))
}

/// The uid `"<prefix>n<id>"` of a checked node id ([`node_number`]).
fn uid_of(prefix: &str, (d, id): (&str, u64)) -> String {
    // The uid is built without `format!` (it was a tenth of a text ingest's CPU): the digits
    // as written when they are already the id's decimal text (no sign, no leading zero),
    // else the parsed id's.
    let mut uid = String::with_capacity(prefix.len() + 1 + d.len());
    uid.push_str(prefix);
    uid.push('n');
    if d.len() == 1 || !d.starts_with('0') {
        uid.push_str(d);
    } else {
        uid.push_str(&id.to_string());
    }
    uid
}

/// An instantaneous event at `t` needs `0 <= t` and `t + 1 <= OPEN_END`.
pub fn instant_ok(t: i64) -> bool {
    (0..OPEN_END).contains(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting pass's outcome of every `snap` line (`read_line_kinds`, which builds no
    /// event) is the kind of the full parse's (`read_lines`), bad lines with the same
    /// error: random lines over digits, signs, leading zeros, comment marks, letters,
    /// separators, a byte that is not UTF-8 and huge numbers, line 1 included.
    #[test]
    fn counted_kinds_are_the_parsed_records_kinds() {
        let fields: [&[u8]; 14] = [
            b"1",
            b"0",
            b"42",
            b"007",
            b"+5",
            b"-3",
            b"x",
            b"#c",
            b"%",
            b"1e3",
            b"\xff",
            b"99999999999999999999",
            b"4611686018427",
            b"12",
        ];
        let seps: [&[u8]; 3] = [b" ", b"\t", b" ,"];
        let mut g = tgms_testkit::Rng::new(23);
        let mut text = Vec::new();
        for _ in 0..5_000 {
            // Mostly three fields of small numbers, so that many lines are events.
            let n = [3, 3, 3, 0, 1, 2, 4][g.below(7) as usize];
            for k in 0..n {
                if k > 0 {
                    text.extend_from_slice(seps[g.below(seps.len() as u64) as usize]);
                }
                let pick = match g.below(3) {
                    0 => g.below(fields.len() as u64),
                    _ => [0, 1, 2, 3, 13][g.below(5) as usize],
                };
                text.extend_from_slice(fields[pick as usize]);
            }
            text.push(b'\n');
        }
        let (path, map) = (Path::new("t"), Mapping::rel(None));
        let mut full = Vec::new();
        read_lines(path, &text[..], Format::Snap, &map, |r| {
            full.push(r.map(|rec| rec.kind()));
            Ok(true)
        })
        .unwrap();
        let mut kinds = Vec::new();
        read_line_kinds(path, &text[..], Format::Snap, &map, |r| {
            kinds.push(r);
            Ok(true)
        })
        .unwrap();
        assert_eq!(kinds, full);
        let events = kinds
            .iter()
            .filter(|k| matches!(k, Ok(RecordKind::Event)))
            .count();
        let bad = kinds.iter().filter(|k| k.is_err()).count();
        assert!(
            events > 100 && bad > 100,
            "{events} events, {bad} bad lines"
        );
    }

    /// The fields of a line are `split_whitespace`'s: random lines over digits, every ASCII
    /// whitespace character (vertical tab and form feed included), other ASCII and Unicode
    /// spaces and letters.
    #[test]
    fn fields_are_split_whitespace_fields() {
        let alphabet = [
            "1", "23", "#", "a", " ", "\t", "\n", "\u{b}", "\u{c}", "\r", "\u{a0}", "\u{2003}",
            "é", "\u{1c}", ",",
        ];
        let mut g = tgms_testkit::Rng::new(17);
        for _ in 0..20_000 {
            let n = g.below(12) as usize;
            let line: String = (0..n)
                .map(|_| alphabet[g.below(alphabet.len() as u64) as usize])
                .collect();
            let want: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields_of(&line).collect::<Vec<_>>(), want, "{line:?}");
        }
    }
}
