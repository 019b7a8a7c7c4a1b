//! Named-column ingest (`tgms ingest --format csv|parquet|arrow-ipc`, `docs/ingest.md`): which
//! columns hold an event's endpoints, times, rel type, disc and props, and the readers that
//! turn CSV records and Parquet rows into events through one mapping (`Resolved::record`),
//! so both formats accept and refuse exactly the same values.

use crate::load::{
    instant_ok, shown, BadLine, KindResult, LineResult, Mapping, Record, RecordKind,
};
use serde_json::{json, Map, Value};
use std::path::Path;
use tgms_engine::op::props_text;
use tgms_engine::op_input::nearest;
use tgms_engine::time::legal_interval;
use tgms_engine::{canon, Error, Event, EventEnd, Result};

/// The unit of integer time cells (`--time-unit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds (× 1,000,000 to µs).
    S,
    /// Milliseconds (× 1,000 to µs).
    Ms,
    /// Microseconds, the store's own unit (the default, and what `export-rows` writes).
    #[default]
    Us,
}

impl TimeUnit {
    /// µs per unit.
    pub fn us(self) -> i64 {
        match self {
            TimeUnit::S => 1_000_000,
            TimeUnit::Ms => 1_000,
            TimeUnit::Us => 1,
        }
    }

    /// The CLI spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
        }
    }
}

/// The column mapping of a `csv` / `parquet` ingest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    /// `--src`, `--dst`: the endpoint uid columns.
    pub src: String,
    /// `--dst`: the destination uid column.
    pub dst: String,
    /// `--time-col`: the valid-time start; `--end`: the valid-time end (empty or null: an
    /// instant event).
    pub time: String,
    /// `--end`: the valid-time end column, if any.
    pub end: Option<String>,
    /// `--time-unit`: the unit of integer time cells.
    pub time_unit: TimeUnit,
    /// `--rel-type-col`: a column holding each event's rel type.
    pub rel_type: Option<String>,
    /// `--disc`: a column holding each event's discriminator.
    pub disc: Option<String>,
    /// `--props`: columns that become props of the same name.
    pub props: Vec<String>,
    /// `--props-json`: a column holding a JSON object of props (what `export-rows` writes).
    pub props_json: Option<String>,
    /// `--only COL=VALUE` (repeatable): rows whose cells differ are left out.
    pub only: Vec<(String, String)>,
}

impl Columns {
    /// Canonical description, for the batch-key digest.
    pub fn describe(&self) -> Value {
        json!({"src": self.src, "dst": self.dst, "time": self.time, "end": self.end,
            "time_unit": self.time_unit.as_str(), "rel_type": self.rel_type,
            "disc": self.disc, "props": self.props, "props_json": self.props_json,
            "only": self.only})
    }

    /// Every column the mapping names (`--only` ones included), for the header check.
    fn named(&self) -> Vec<&str> {
        let mut v = vec![self.src.as_str(), self.dst.as_str(), self.time.as_str()];
        v.extend(self.end.as_deref());
        v.extend(self.rel_type.as_deref());
        v.extend(self.disc.as_deref());
        v.extend(self.props.iter().map(String::as_str));
        v.extend(self.props_json.as_deref());
        v.extend(self.only.iter().map(|(c, _)| c.as_str()));
        v
    }

    /// The index of every named column in `header`, or the error naming the first missing
    /// one (with the nearest header name and the list).
    fn resolve(&self, path: &Path, header: &[String]) -> Result<Resolved> {
        let names: Vec<&str> = header.iter().map(String::as_str).collect();
        let at = |c: &str| -> Result<usize> {
            names.iter().position(|h| *h == c).ok_or_else(|| {
                let hint =
                    nearest(c, &names).map_or(String::new(), |n| format!("; did you mean {n:?}?"));
                Error::invalid(format!(
                    "{}: no column {c:?}{hint} (the columns are {})",
                    path.display(),
                    names.join(", ")
                ))
            })
        };
        for c in self.named() {
            at(c)?;
        }
        Ok(Resolved {
            src: at(&self.src)?,
            dst: at(&self.dst)?,
            time: at(&self.time)?,
            end: self.end.as_deref().map(at).transpose()?,
            rel_type: self.rel_type.as_deref().map(at).transpose()?,
            disc: self.disc.as_deref().map(at).transpose()?,
            props: self
                .props
                .iter()
                .map(|c| Ok((c.clone(), at(c)?)))
                .collect::<Result<_>>()?,
            props_json: self.props_json.as_deref().map(at).transpose()?,
            only: self
                .only
                .iter()
                .map(|(c, v)| Ok((at(c)?, v.clone(), int_of_text(v))))
                .collect::<Result<_>>()?,
        })
    }
}

/// The integer whose text (as `Display` writes it) is `v`, if any: `7` for "7", none for
/// "007" or "+7".
fn int_of_text(v: &str) -> Option<i64> {
    v.parse::<i64>().ok().filter(|n| n.to_string() == v)
}

/// Column indexes of a [`Columns`] mapping in one file.
struct Resolved {
    src: usize,
    dst: usize,
    time: usize,
    end: Option<usize>,
    rel_type: Option<usize>,
    disc: Option<usize>,
    props: Vec<(String, usize)>,
    props_json: Option<usize>,
    /// `--only` column, value, and the integer whose text the value is.
    only: Vec<(usize, String, Option<i64>)>,
}

/// One cell as read: CSV cells are text (an empty cell is `Null`); Parquet cells keep
/// their type.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// An empty CSV cell, or a null of a typed (Parquet, Arrow) column.
    Null,
    /// A non-empty CSV cell, or a string of a typed column (borrowed from the record or
    /// the batch: a row's cells are not copied).
    Text(&'a str),
    /// An integer of a typed column (unsigned ones that fit `i64`).
    Int(i64),
    /// A floating-point value of a typed column.
    Float(f64),
    /// A boolean of a typed column.
    Bool(bool),
    /// A Parquet timestamp, converted to µs (its own unit wins over `--time-unit`).
    TimeUs(i64),
    /// A Parquet value of a type no field takes (described).
    Other(String),
}

impl Cell<'_> {
    /// The cell as shown in messages.
    fn shown(&self) -> String {
        match self {
            Cell::Null => "an empty cell".into(),
            Cell::Text(s) => shown(s),
            Cell::Int(i) | Cell::TimeUs(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Bool(b) => b.to_string(),
            Cell::Other(d) => d.clone(),
        }
    }

    /// The cell's text ([`Cell::text`]) is `v`, whose integer is `int` (that integer's
    /// text is `v`): an integer cell is compared without writing its text.
    fn has_text(&self, v: &str, int: Option<i64>) -> bool {
        match self {
            Cell::Text(s) => *s == v,
            Cell::Int(i) | Cell::TimeUs(i) => int == Some(*i),
            c => c.text() == v,
        }
    }

    /// The cell's text for `--only` comparisons (null: the empty string).
    fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Text(s) => s.to_string(),
            Cell::Int(i) | Cell::TimeUs(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Bool(b) => b.to_string(),
            Cell::Other(d) => d.clone(),
        }
    }
}

/// A uid or disc cell, checked: text or an integer, borrowed from the row's cells.
#[derive(Clone, Copy)]
enum Key<'c> {
    Text(&'c str),
    Int(i64),
}

impl Key<'_> {
    /// The key's text after `prefix`.
    fn text(self, prefix: &str) -> String {
        match self {
            Key::Text(s) => [prefix, s].concat(),
            Key::Int(n) => format!("{prefix}{n}"),
        }
    }
}

/// The fields of a row that holds an event, checked ([`Resolved::checked`]); the event's
/// texts are built from them only when the event is ([`Checked::event`]).
struct Checked<'c> {
    src: Key<'c>,
    dst: Key<'c>,
    vt_s: i64,
    vt_e: EventEnd,
    /// The rel type column's cell; `None`: `--rel-type`.
    rel_type: Option<&'c str>,
    disc: Option<Key<'c>>,
    props: Option<String>,
}

impl Checked<'_> {
    /// The event.
    fn event(self, map: &Mapping) -> Event {
        let prefix = map.uid_prefix.as_str();
        Event {
            src: self.src.text(prefix),
            dst: self.dst.text(prefix),
            rel_type: match self.rel_type {
                Some(r) => r.to_string(),
                // `check_columns_mapping` made sure one of the two is given.
                None => map.rel_type.clone().unwrap_or_default(),
            },
            vt_s: self.vt_s,
            vt_e: self.vt_e,
            disc: self.disc.map(|d| d.text("")),
            props: self.props,
        }
    }
}

impl Resolved {
    /// The record of one row (`no` its line or row number).
    fn record(
        &self,
        map: &Mapping,
        cols: &Columns,
        no: u64,
        cells: &[Cell],
    ) -> std::result::Result<Record, BadLine> {
        Ok(match self.checked(cols, no, cells)? {
            Some(c) => Record::Event(c.event(map)),
            None => Record::Filtered,
        })
    }

    /// The kind of [`Resolved::record`]'s record, or its error, without building the
    /// event's texts (the validation pass).
    fn kind(&self, cols: &Columns, no: u64, cells: &[Cell]) -> KindResult {
        Ok(match self.checked(cols, no, cells)? {
            Some(_) => RecordKind::Event,
            None => RecordKind::Filtered,
        })
    }

    /// The checked fields of one row, `None` for a row `--only` leaves out; the error of
    /// its first bad field.
    fn checked<'c>(
        &self,
        cols: &Columns,
        no: u64,
        cells: &'c [Cell],
    ) -> std::result::Result<Option<Checked<'c>>, BadLine> {
        if self
            .only
            .iter()
            .any(|(i, v, int)| !cells[*i].has_text(v, *int))
        {
            return Ok(None);
        }
        let bad = |col: &str, expected: &str, c: &Cell| BadLine {
            line: no,
            field: col.to_string(),
            expected: expected.to_string(),
            found: c.shown(),
        };
        let uid = |i: usize, col: &str| match &cells[i] {
            Cell::Text(s) if !s.is_empty() => Ok(Key::Text(s)),
            Cell::Int(n) => Ok(Key::Int(*n)),
            c => Err(bad(col, "a non-empty node uid (text or integer)", c)),
        };
        let src = uid(self.src, &cols.src)?;
        let dst = uid(self.dst, &cols.dst)?;
        let unit = cols.time_unit;
        let vt_s = time_us(&cells[self.time], unit)
            .filter(|t| instant_ok(*t))
            .ok_or_else(|| {
                let expected = format!(
                    "an integer time in {} since 1970-01-01 UTC (--time-unit), 0 to 2^62 - 2 µs",
                    unit.as_str()
                );
                bad(&cols.time, &expected, &cells[self.time])
            })?;
        let vt_e = match self.end {
            None => EventEnd::Absent,
            Some(i) => match &cells[i] {
                Cell::Null => EventEnd::Absent,
                c => EventEnd::At(
                    time_us(c, unit)
                        .filter(|e| legal_interval(vt_s, *e))
                        .ok_or_else(|| {
                            bad(
                                cols.end.as_deref().unwrap_or("end"),
                                &format!(
                                    "an empty cell or an integer time in {} after the start \
                                     time, at most 2^62 µs",
                                    unit.as_str()
                                ),
                                c,
                            )
                        })?,
                ),
            },
        };
        let rel_type = match self.rel_type {
            Some(i) => match &cells[i] {
                Cell::Text(s) if !s.is_empty() => Some(*s),
                c => {
                    return Err(bad(
                        cols.rel_type.as_deref().unwrap_or("rel_type"),
                        "a non-empty rel type",
                        c,
                    ))
                }
            },
            None => None,
        };
        let disc = match self.disc {
            None => None,
            Some(i) => match &cells[i] {
                Cell::Null => None,
                Cell::Text(s) => Some(Key::Text(s)),
                Cell::Int(n) => Some(Key::Int(*n)),
                c => return Err(bad(cols.disc.as_deref().unwrap_or("disc"), "text", c)),
            },
        };
        let mut props = Map::new();
        if let Some(i) = self.props_json {
            let col = cols.props_json.as_deref().unwrap_or("props");
            let expected = "a JSON object (or an empty cell)";
            match &cells[i] {
                Cell::Null => {}
                // The empty object (every row of an export without props) needs no parse.
                Cell::Text("{}") => {}
                Cell::Text(s) => match canon::parse(s) {
                    Ok(Value::Object(m)) => props = m,
                    _ => return Err(bad(col, expected, &cells[i])),
                },
                c => return Err(bad(col, expected, c)),
            }
        }
        for (name, i) in &self.props {
            let v = match &cells[*i] {
                Cell::Null => continue,
                Cell::Text(s) => json!(*s),
                Cell::Int(n) | Cell::TimeUs(n) => json!(n),
                Cell::Float(f) if f.is_finite() => json!(f),
                Cell::Bool(b) => json!(b),
                c => return Err(bad(name, "text, a number or a boolean", c)),
            };
            props.insert(name.clone(), v);
        }
        let props = if self.props_json.is_some() || !self.props.is_empty() {
            let p = Value::Object(props);
            Some(props_text(Some(&p)).map_err(|e| BadLine {
                line: no,
                field: cols.props_json.clone().unwrap_or_else(|| "props".into()),
                expected: "finite numbers".into(),
                found: e.to_string(),
            })?)
        } else {
            None
        };
        Ok(Some(Checked {
            src,
            dst,
            vt_s,
            vt_e,
            rel_type,
            disc,
            props,
        }))
    }
}

/// A time cell in µs: an integer (or integer text) times the unit, or a Parquet timestamp.
fn time_us(c: &Cell, unit: TimeUnit) -> Option<i64> {
    match c {
        Cell::Int(n) => n.checked_mul(unit.us()),
        Cell::Text(s) => s
            .strip_prefix('+')
            .unwrap_or(s)
            .parse::<i64>()
            .ok()?
            .checked_mul(unit.us()),
        Cell::TimeUs(t) => Some(*t),
        _ => None,
    }
}

/// Checks that a named-column mapping has a rel type from somewhere.
fn check_rel(map: &Mapping, cols: &Columns) -> Result<()> {
    if cols.rel_type.is_none() && map.rel_type.is_none() {
        return Err(Error::invalid(
            "give the events' rel type: --rel-type TYPE for all of them, or --rel-type-col COL \
             for a column holding each one's",
        ));
    }
    Ok(())
}

/// Reads a CSV file with a header line (line 1) naming its columns; every further record is
/// one row. Quoted fields may span lines; a record's line number is the line it starts on.
pub fn read_csv(
    path: &Path,
    input: impl std::io::Read,
    map: &Mapping,
    mut f: impl FnMut(std::result::Result<Record, BadLine>) -> Result<bool>,
) -> Result<()> {
    let Some(cols) = &map.columns else {
        return Err(Error::invalid(
            "--format csv needs --src, --dst and --time-col",
        ));
    };
    check_rel(map, cols)?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut rec = csv::ByteRecord::new();
    let io = |e: csv::Error| Error::invalid(format!("{}: cannot read CSV: {e}", path.display()));
    if !rdr.read_byte_record(&mut rec).map_err(io)? {
        return Err(Error::invalid(format!(
            "{}: the file is empty; a CSV file starts with a header line naming its columns",
            path.display()
        )));
    }
    let header: Vec<String> = rec
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let resolved = cols.resolve(path, &header)?;
    while rdr.read_byte_record(&mut rec).map_err(io)? {
        let no = rec.position().map_or(0, |p| p.line());
        let r = if rec.len() == 1 && rec.get(0).is_some_and(|c| c.is_empty()) {
            // A blank line.
            Ok(Record::Ignored)
        } else if rec.len() != header.len() {
            Err(BadLine {
                line: no,
                field: "line".into(),
                expected: format!("{} comma-separated fields, as in the header", header.len()),
                found: format!("{} fields", rec.len()),
            })
        } else {
            // The cells borrow the record's text.
            let mut cells = Vec::with_capacity(header.len());
            let mut bad = None;
            for (i, c) in rec.iter().enumerate() {
                match std::str::from_utf8(c) {
                    Ok("") => cells.push(Cell::Null),
                    Ok(s) => cells.push(Cell::Text(s)),
                    Err(_) => {
                        bad.get_or_insert(BadLine {
                            line: no,
                            field: header[i].clone(),
                            expected: "UTF-8 text".into(),
                            found: "bytes that are not UTF-8".into(),
                        });
                        cells.push(Cell::Null);
                    }
                }
            }
            match bad {
                Some(b) => Err(b),
                None => resolved.record(map, cols, no, &cells),
            }
        };
        if !f(r)? {
            break;
        }
    }
    Ok(())
}

/// Reads a Parquet file: its top-level columns by name, one row per event, row numbers
/// (1-based) as line numbers. Only the columns the mapping reads are decoded (Parquet's
/// Arrow reader: the same cells as an Arrow stream of the same table, [`arrow_cell`]): a
/// row group per core side by side when no row group holds more than 262,144 rows, else a
/// record batch at a time. Compression codecs are not built in: a compressed file is
/// refused with the fix (write it uncompressed, or as CSV). What `make` makes of each row
/// ([`RowCells`]: its record, or only its kind) goes to `f` in file order.
pub fn read_parquet<T: Send>(
    path: &Path,
    map: &Mapping,
    make: impl Fn(RowCells) -> T + Sync,
    f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    use parquet::arrow::arrow_reader::{
        ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    };
    use parquet::arrow::ProjectionMask;
    let Some(cols) = &map.columns else {
        return Err(Error::invalid(
            "--format parquet needs --src, --dst and --time-col",
        ));
    };
    check_rel(map, cols)?;
    let pq = |e: &dyn std::fmt::Display| {
        let e = e.to_string();
        let hint = if e.contains("codec") || e.contains("compression") {
            " (this build reads uncompressed Parquet only: write the file with compression \
             NONE, e.g. pandas `to_parquet(compression=None)`, or as CSV)"
        } else {
            ""
        };
        Error::invalid(format!(
            "{}: cannot read Parquet: {e}{hint}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let meta =
        ArrowReaderMetadata::load(&file, ArrowReaderOptions::default()).map_err(|e| pq(&e))?;
    let header: Vec<String> = meta
        .parquet_schema()
        .root_schema()
        .get_fields()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let rows = Rows::new(path, &header, map, cols)?;
    // The projected batches hold the used columns in file order.
    let mask = ProjectionMask::roots(meta.parquet_schema(), rows.at.iter().copied());
    // The batches of the used columns of row groups `groups` (all when `None`) of `file`.
    let batches = |file: std::fs::File, groups: Option<Vec<usize>>| {
        let b = ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta.clone())
            .with_projection(mask.clone())
            .with_batch_size(BATCH_ROWS);
        let b = match groups {
            Some(g) => b.with_row_groups(g),
            None => b,
        };
        let reader = b.build().map_err(|e| pq(&e))?;
        Ok(reader.map(|b| b.map_err(|e| pq(&e))))
    };
    let groups = meta.metadata().row_groups();
    let small = groups
        .iter()
        .all(|g| usize::try_from(g.num_rows()).is_ok_and(|n| n <= SIDE_BY_SIDE_ROWS));
    if groups.len() < 2 || !small {
        return feed_batches(batches(file, None)?, &rows, make, f);
    }
    // Each row group from its own file handle.
    let decode = |g: usize| {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e));
        match file.and_then(|file| batches(file, Some(vec![g]))) {
            Ok(b) => b.collect(),
            Err(e) => vec![Err(e)],
        }
    };
    feed_batches(side_by_side(groups.len(), decode), &rows, make, f)
}

/// The record batches of `n` row groups in file order, `decode` (a row group's batches)
/// run on as many row groups at once as there are cores; a read error ends them after the
/// batches before it.
fn side_by_side(
    n: usize,
    decode: impl Fn(usize) -> Vec<Result<arrow_array::RecordBatch>> + Sync + Send,
) -> impl Iterator<Item = Result<arrow_array::RecordBatch>> + Send {
    use rayon::prelude::*;
    let mut next = 0;
    let mut ready = std::collections::VecDeque::new();
    std::iter::from_fn(move || {
        if ready.is_empty() && next < n {
            let end = (next + rayon::current_num_threads().max(1)).min(n);
            let decoded: Vec<_> = (next..end).into_par_iter().map(&decode).collect();
            next = end;
            for b in decoded.into_iter().flatten() {
                let failed = b.is_err();
                ready.push_back(b);
                if failed {
                    next = n;
                    break;
                }
            }
        }
        ready.pop_front()
    })
}

/// Rows per record batch read from a Parquet file.
const BATCH_ROWS: usize = 8192;

/// The most rows a Parquet file's row groups may hold for them to be decoded side by side
/// (one per core, each whole before it is handed on); a file with a larger row group is
/// read one batch at a time, so memory stays bounded by the batch, not the row group.
const SIDE_BY_SIDE_ROWS: usize = 1 << 18;

/// How the rows of a record batch become records: batch column `j` is the file's column
/// `at[j]` (of `n`); the file's other columns read as null (the mapping does not read them).
struct Rows<'a> {
    at: Vec<usize>,
    n: usize,
    resolved: Resolved,
    map: &'a Mapping,
    cols: &'a Columns,
}

impl<'a> Rows<'a> {
    /// The mapping resolved against the file's column names `header`: the columns it reads
    /// (`at`, in file order) and how.
    fn new(path: &Path, header: &[String], map: &'a Mapping, cols: &'a Columns) -> Result<Self> {
        let resolved = cols.resolve(path, header)?;
        let used = resolved.used(header.len());
        Ok(Rows {
            at: (0..header.len()).filter(|&i| used[i]).collect(),
            n: header.len(),
            resolved,
            map,
            cols,
        })
    }

    /// What `make` makes of each row of `batch`, whose first row is row `first` of the file.
    fn of<T>(
        &self,
        batch: &arrow_array::RecordBatch,
        first: u64,
        make: &impl Fn(RowCells) -> T,
    ) -> Vec<T> {
        // The cells borrow the batch's strings; each column's type is resolved once.
        let columns: Vec<(Column, usize)> = batch
            .columns()
            .iter()
            .zip(&self.at)
            .map(|(col, &i)| (Column::of(col.as_ref()), i))
            .collect();
        let mut cells = vec![Cell::Null; self.n];
        (0..batch.num_rows())
            .map(|row| {
                for (col, i) in &columns {
                    cells[*i] = col.cell(row);
                }
                make(RowCells {
                    rows: self,
                    no: first + row as u64,
                    cells: &cells,
                })
            })
            .collect()
    }
}

/// One row of a columnar file as its reader hands it on: [`RowCells::record`] builds its
/// record, [`RowCells::kind`] only checks it (the validation pass, which keeps nothing).
pub struct RowCells<'r> {
    rows: &'r Rows<'r>,
    /// The row's number (1-based), its "line".
    no: u64,
    cells: &'r [Cell<'r>],
}

impl RowCells<'_> {
    /// The row's record, or the error of its first bad field.
    pub fn record(&self) -> LineResult {
        let r = self.rows;
        r.resolved.record(r.map, r.cols, self.no, self.cells)
    }

    /// The kind of [`RowCells::record`]'s record, or its error, without building the event.
    pub fn kind(&self) -> KindResult {
        let r = self.rows;
        r.resolved.kind(r.cols, self.no, self.cells)
    }
}

/// A record batch's column with its type resolved: [`Column::cell`] is [`arrow_cell`]
/// without the type dispatch per cell for the types an export and most tables use.
enum Column<'a> {
    Utf8(&'a arrow_array::StringArray),
    Int64(&'a arrow_array::Int64Array),
    Any(&'a dyn arrow_array::Array),
}

impl<'a> Column<'a> {
    fn of(a: &'a dyn arrow_array::Array) -> Column<'a> {
        use arrow_array::cast::AsArray;
        use arrow_schema::DataType as D;
        match a.data_type() {
            D::Utf8 => Column::Utf8(a.as_string::<i32>()),
            D::Int64 => Column::Int64(a.as_primitive::<arrow_array::types::Int64Type>()),
            _ => Column::Any(a),
        }
    }

    /// Row `row`'s cell, as [`arrow_cell`] reads it.
    #[inline]
    fn cell(&self, row: usize) -> Cell<'a> {
        use arrow_array::Array;
        match self {
            Column::Utf8(s) if s.is_null(row) => Cell::Null,
            Column::Utf8(s) => Cell::Text(s.value(row)),
            Column::Int64(n) if n.is_null(row) => Cell::Null,
            Column::Int64(n) => Cell::Int(n.value(row)),
            Column::Any(a) => arrow_cell(*a, row),
        }
    }
}

/// Record batches decoded and turned into records together, on all cores.
const BATCHES_PER_GROUP: usize = 4;

/// Turns the rows of `batches` into records for `f` in file order, numbering rows from 1
/// across batches; stops when `f` says so. A reader thread decodes the next
/// [`BATCHES_PER_GROUP`] batches and turns them into records in parallel (through `light`,
/// on the threads that built them) while `f` consumes the previous group, as the line
/// formats' parser does (`load_par.rs`). A read error is handed on after the records of the
/// batches before it.
fn feed_batches<T: Send>(
    batches: impl Iterator<Item = Result<arrow_array::RecordBatch>> + Send,
    rows: &Rows<'_>,
    make: impl Fn(RowCells) -> T + Sync,
    f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    use rayon::prelude::*;
    let mut batches = batches;
    let mut next_row = 1u64;
    // A read error after some batches: handed on after their records.
    let mut failed = None;
    let make = &make;
    let next = move || {
        if let Some(e) = failed.take() {
            return Some(Err(e));
        }
        let mut group = Vec::with_capacity(BATCHES_PER_GROUP);
        for b in batches.by_ref().take(BATCHES_PER_GROUP) {
            match b {
                Ok(b) => {
                    let first = next_row;
                    next_row += b.num_rows() as u64;
                    group.push((first, b));
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if group.is_empty() {
            return failed.take().map(Err);
        }
        Some(Ok(group
            .par_iter()
            .map(|(first, b)| rows.of(b, *first, make))
            .collect()))
    };
    crate::load_par::in_order("the reader of the record batches", next, f)
}

/// Reads an Arrow IPC stream file (`export-rows --format arrow`, pyarrow's
/// `ipc.new_stream`, the Python package's table ingest): its top-level columns by name, one
/// row per event, row numbers (1-based, across record batches) as line numbers. One record
/// batch is in memory at a time. What `make` makes of each row goes to `f`, as in
/// [`read_parquet`].
pub fn read_arrow_ipc<T: Send>(
    path: &Path,
    map: &Mapping,
    make: impl Fn(RowCells) -> T + Sync,
    f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    let Some(cols) = &map.columns else {
        return Err(Error::invalid(
            "--format arrow-ipc needs --src, --dst and --time-col",
        ));
    };
    check_rel(map, cols)?;
    let ipc = |e: arrow_schema::ArrowError| {
        Error::invalid(format!(
            "{}: cannot read an Arrow IPC stream: {e} (the file must be an Arrow IPC *stream*, \
             e.g. pyarrow `ipc.new_stream`; for the random-access file format use \
             `ipc.open_file(...).read_all()` and write it as a stream)",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let reader = arrow_ipc::reader::StreamReader::try_new(
        std::io::BufReader::with_capacity(1 << 20, file),
        None,
    )
    .map_err(ipc)?;
    let header: Vec<String> = reader
        .schema()
        .fields()
        .iter()
        .map(|fl| fl.name().clone())
        .collect();
    let rows = Rows::new(path, &header, map, cols)?;
    // Every column is in each batch; only the used ones are converted.
    let batches = reader.map(|b| {
        b.map_err(ipc)
            .and_then(|b| b.project(&rows.at).map_err(ipc))
    });
    feed_batches(batches, &rows, make, f)
}

impl Resolved {
    /// Which of `n` columns the mapping reads (the others are never converted).
    fn used(&self, n: usize) -> Vec<bool> {
        let mut v = vec![false; n];
        let named = [Some(self.src), Some(self.dst), Some(self.time)]
            .into_iter()
            .chain([self.end, self.rel_type, self.disc, self.props_json])
            .flatten()
            .chain(self.props.iter().map(|(_, i)| *i))
            .chain(self.only.iter().map(|(i, _, _)| *i));
        for i in named {
            v[i] = true;
        }
        v
    }
}

/// One value of an Arrow column as a [`Cell`]: strings (any offset width, views and
/// dictionaries of them), integers, floats, booleans, and timestamps converted to µs (a
/// nanosecond timestamp with a sub-µs part is refused, not rounded).
pub fn arrow_cell(a: &dyn arrow_array::Array, row: usize) -> Cell<'_> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    use arrow_schema::{DataType as D, TimeUnit as U};
    if a.is_null(row) {
        return Cell::Null;
    }
    macro_rules! int {
        ($t:ty) => {
            Cell::Int(i64::from(a.as_primitive::<$t>().value(row)))
        };
    }
    macro_rules! key {
        ($t:ty) => {{
            let d = a.as_dictionary::<$t>();
            match usize::try_from(d.keys().value(row)) {
                Ok(k) => arrow_cell(d.values().as_ref(), k),
                Err(_) => Cell::Other("a negative dictionary key".into()),
            }
        }};
    }
    match a.data_type() {
        D::Utf8 => Cell::Text(a.as_string::<i32>().value(row)),
        D::LargeUtf8 => Cell::Text(a.as_string::<i64>().value(row)),
        D::Utf8View => Cell::Text(a.as_string_view().value(row)),
        D::Boolean => Cell::Bool(a.as_boolean().value(row)),
        D::Int8 => int!(Int8Type),
        D::Int16 => int!(Int16Type),
        D::Int32 => int!(Int32Type),
        D::Int64 => int!(Int64Type),
        D::UInt8 => int!(UInt8Type),
        D::UInt16 => int!(UInt16Type),
        D::UInt32 => int!(UInt32Type),
        D::UInt64 => {
            let n = a.as_primitive::<UInt64Type>().value(row);
            i64::try_from(n).map_or(Cell::Other(n.to_string()), Cell::Int)
        }
        D::Float32 => Cell::Float(f64::from(a.as_primitive::<Float32Type>().value(row))),
        D::Float64 => Cell::Float(a.as_primitive::<Float64Type>().value(row)),
        D::Timestamp(unit, _) => {
            let (t, per_us_mul, per_us_div) = match unit {
                U::Second => (
                    a.as_primitive::<TimestampSecondType>().value(row),
                    1_000_000,
                    1,
                ),
                U::Millisecond => (
                    a.as_primitive::<TimestampMillisecondType>().value(row),
                    1_000,
                    1,
                ),
                U::Microsecond => (
                    a.as_primitive::<TimestampMicrosecondType>().value(row),
                    1,
                    1,
                ),
                U::Nanosecond => (
                    a.as_primitive::<TimestampNanosecondType>().value(row),
                    1,
                    1_000,
                ),
            };
            if t % per_us_div != 0 {
                return Cell::Other(format!("{t} ns (a timestamp finer than 1 µs)"));
            }
            (t / per_us_div)
                .checked_mul(per_us_mul)
                .map_or(Cell::Other(t.to_string()), Cell::TimeUs)
        }
        D::Dictionary(k, _) => match **k {
            D::Int8 => key!(Int8Type),
            D::Int16 => key!(Int16Type),
            D::Int32 => key!(Int32Type),
            D::Int64 => key!(Int64Type),
            D::UInt8 => key!(UInt8Type),
            D::UInt16 => key!(UInt16Type),
            D::UInt32 => key!(UInt32Type),
            D::UInt64 => key!(UInt64Type),
            _ => Cell::Other("a dictionary with a non-integer key".into()),
        },
        other => Cell::Other(format!("an Arrow {other} value")),
    }
}

#[cfg(test)]
mod tests {
    use super::{arrow_cell, int_of_text, Cell, Column, Columns, RowCells, Rows};
    use crate::load::{Mapping, RecordKind};
    use arrow_array::{Array, StringArray};
    use arrow_array::{ArrayRef, Int32Array, Int64Array, LargeStringArray, RecordBatch};
    use std::sync::Arc;

    /// A Parquet file of many row groups (read side by side) hands on the same records, in
    /// the same order and with the same row numbers, as the same rows in one row group
    /// (read a batch at a time): good rows, bad rows and rows the mapping leaves out.
    #[test]
    fn row_groups_side_by_side_read_as_one() {
        use super::read_parquet;
        let mut g = tgms_testkit::Rng::new(77);
        let n = 5_000;
        let src = StringArray::from(
            (0..n)
                .map(|i| match g.below(20) {
                    0 => None,
                    1 => Some(String::new()),
                    _ => Some(format!("u{}", i % 97)),
                })
                .collect::<Vec<_>>(),
        );
        let dst = Int64Array::from(
            (0..n)
                .map(|i| (i % 13 != 0).then_some(i % 89))
                .collect::<Vec<_>>(),
        );
        let time = Int64Array::from(
            (0..n)
                .map(|i| if i % 31 == 0 { -5 } else { i })
                .collect::<Vec<_>>(),
        );
        let kind = StringArray::from(
            (0..n)
                .map(|i| if i % 7 == 0 { "node" } else { "edge" })
                .collect::<Vec<_>>(),
        );
        let batch = RecordBatch::try_from_iter(vec![
            ("src", Arc::new(src) as ArrayRef),
            ("dst", Arc::new(dst) as ArrayRef),
            ("t", Arc::new(time) as ArrayRef),
            ("kind", Arc::new(kind) as ArrayRef),
        ])
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, group_rows: Option<usize>| {
            let path = dir.path().join(name);
            let props = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_row_count(group_rows)
                .build();
            let f = std::fs::File::create(&path).unwrap();
            let mut w =
                parquet::arrow::ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            let meta = w.close().unwrap();
            (path, meta.num_row_groups())
        };
        let (one, one_groups) = write("one.parquet", None);
        let (many, many_groups) = write("many.parquet", Some(97));
        assert_eq!((one_groups, many_groups), (1, (n as usize).div_ceil(97)));
        let cols = Columns {
            src: "src".into(),
            dst: "dst".into(),
            time: "t".into(),
            only: vec![("kind".into(), "edge".into())],
            ..Columns::default()
        };
        let map = Mapping {
            columns: Some(cols),
            ..Mapping::rel(Some("MSG"))
        };
        let read = |path: &std::path::Path| {
            let mut got = Vec::new();
            read_parquet(
                path,
                &map,
                |r: RowCells| r.record(),
                |rec| {
                    got.push(rec);
                    Ok(true)
                },
            )
            .unwrap();
            got
        };
        let (a, b) = (read(&one), read(&many));
        assert_eq!(a.len(), n as usize);
        assert_eq!(a, b);
        let bad = a.iter().filter(|r| r.is_err()).count();
        let left_out = a
            .iter()
            .filter(|r| r.as_ref().is_ok_and(|r| r.kind() == RecordKind::Filtered))
            .count();
        assert!(
            bad > 300 && left_out > 500,
            "{bad} bad rows, {left_out} left out"
        );
    }

    /// Every row of a random batch, good and bad cells mixed in every column the mapping
    /// reads: each column's cells read through [`Column`] are [`arrow_cell`]'s, and the
    /// validation pass's kind of each row ([`RowCells::kind`], which builds no event) is
    /// the kind of its record, a bad row with the same error.
    #[test]
    fn checked_kinds_are_the_records_kinds() {
        let mut g = tgms_testkit::Rng::new(31);
        let n = 3_000;
        let mut pick = |opts: &[&str]| -> Option<String> {
            match opts[g.below(opts.len() as u64) as usize] {
                "NULL" => None,
                o => Some(o.to_string()),
            }
        };
        let text = |pick: &mut dyn FnMut(&[&str]) -> Option<String>, opts: &[&str]| {
            StringArray::from((0..n).map(|_| pick(opts)).collect::<Vec<_>>())
        };
        let src = text(&mut pick, &["a", "b", "a", "", "NULL", "n7"]);
        let rel = text(&mut pick, &["MSG", "MSG", "", "NULL"]);
        let props = text(
            &mut pick,
            &[
                "{}",
                "{}",
                r#"{"w":1}"#,
                "[1]",
                "{bad",
                "NULL",
                r#"{"x":1e999}"#,
            ],
        );
        let kind = text(&mut pick, &["edge", "edge", "edge", "node"]);
        let mut g2 = tgms_testkit::Rng::new(32);
        let mut int = |opts: &[Option<i64>]| -> Vec<Option<i64>> {
            (0..n)
                .map(|_| opts[g2.below(opts.len() as u64) as usize])
                .collect()
        };
        let dst = Int64Array::from(int(&[Some(3), Some(4), Some(-1), None]));
        let time = Int64Array::from(int(&[Some(5), Some(100), Some(-2), None, Some(i64::MAX)]));
        let end = Int64Array::from(int(&[None, None, Some(200), Some(1), Some(i64::MAX)]));
        let disc = Int32Array::from(
            int(&[None, Some(1), Some(-9)])
                .into_iter()
                .map(|d| d.map(|d| d as i32))
                .collect::<Vec<_>>(),
        );
        let rel_large = LargeStringArray::from(
            (0..n)
                .map(|i| rel.is_valid(i).then(|| rel.value(i)))
                .collect::<Vec<_>>(),
        );
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("src", Arc::new(src)),
            ("dst", Arc::new(dst)),
            ("t", Arc::new(time)),
            ("end", Arc::new(end)),
            ("rel", Arc::new(rel)),
            ("rel_large", Arc::new(rel_large)),
            ("disc", Arc::new(disc)),
            ("props", Arc::new(props)),
            ("kind", Arc::new(kind)),
        ];
        for (name, a) in &columns {
            let col = Column::of(a.as_ref());
            for row in 0..n {
                assert_eq!(
                    col.cell(row),
                    arrow_cell(a.as_ref(), row),
                    "{name} row {row}"
                );
            }
        }
        let header: Vec<String> = columns.iter().map(|(c, _)| c.to_string()).collect();
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        for rel_col in ["rel", "rel_large"] {
            let cols = Columns {
                src: "src".into(),
                dst: "dst".into(),
                time: "t".into(),
                end: Some("end".into()),
                rel_type: Some(rel_col.into()),
                disc: Some("disc".into()),
                props_json: Some("props".into()),
                only: vec![("kind".into(), "edge".into())],
                ..Columns::default()
            };
            let map = Mapping {
                uid_prefix: "p:".into(),
                columns: Some(cols.clone()),
                ..Mapping::default()
            };
            let rows = Rows::new(std::path::Path::new("t"), &header, &map, &cols).unwrap();
            // The readers hand on batches of the used columns only.
            let batch = batch.project(&rows.at).unwrap();
            let full = rows.of(&batch, 1, &|r: RowCells| r.record().map(|rec| rec.kind()));
            let kinds = rows.of(&batch, 1, &|r: RowCells| r.kind());
            assert_eq!(kinds, full, "{rel_col}");
            let count = |k: Option<RecordKind>| {
                kinds
                    .iter()
                    .filter(|r| r.as_ref().ok() == k.as_ref())
                    .count()
            };
            let (events, filtered, bad) = (
                count(Some(RecordKind::Event)),
                count(Some(RecordKind::Filtered)),
                count(None),
            );
            assert!(
                events > 20 && filtered > 500 && bad > 1000,
                "{events} events, {filtered} rows left out, {bad} bad rows"
            );
        }
    }

    /// `--only COL=VALUE` keeps a cell whose text is `VALUE`: an integer cell compares as
    /// the text `Display` writes, so `007` or `+7` keep no integer 7.
    #[test]
    fn an_integer_cell_has_only_its_own_text() {
        for (cell, v, want) in [
            (Cell::Int(7), "7", true),
            (Cell::Int(7), "007", false),
            (Cell::Int(7), "+7", false),
            (Cell::Int(0), "-0", false),
            (Cell::TimeUs(-3), "-3", true),
            (Cell::Int(4611686018427387904), "4611686018427387904", true),
            (Cell::Int(7), "8", false),
            (Cell::Text("7"), "7", true),
            (Cell::Text("007"), "7", false),
            (Cell::Null, "", true),
            (Cell::Bool(true), "true", true),
        ] {
            assert_eq!(
                cell.has_text(v, int_of_text(v)),
                want,
                "{cell:?} against {v:?}"
            );
            assert_eq!(
                cell.has_text(v, int_of_text(v)),
                cell.text() == v,
                "{cell:?} as text"
            );
        }
    }
}
