//! `tgms export-rows STORE OUT.csv|OUT.parquet` (the spec's `agent-surface.md` §11.2): every stored
//! row (believed and closed) in store-digest order, one row per version, columns
//! `kind, vid, uid, label, eid, src, dst, rel_type, disc, vt_s, vt_e, tt_s, tt_e, props,
//! source, provenance_ref, origin, reason, closed_by, close_reason`. `props` and
//! `provenance_ref` are canonical JSON text, times are 64-bit integers, null where a column
//! does not apply to the kind (or the row has no reason / was not closed).
//!
//! CSV has a header line, an empty unquoted field for null and `""` for the empty string.
//! Parquet has the same columns: the four times `INT64` (required), every other column a
//! UTF-8 `BYTE_ARRAY`, required or optional as [`OPTIONAL`] says; uncompressed, dictionary
//! encoded, one row group per [`ROW_GROUP`] rows. Both writers read the rows through one
//! visitor ([`visit_rows`]), so they cannot disagree on a value.

use bytes::Bytes;
use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};
use std::io::Write;
use std::sync::Arc;
use tgms_engine::Store;

pub use tgms_sql::columns::{COLUMNS, OPTIONAL, TIME_COLUMNS};

/// Columns with (nearly) one distinct value per row, written without a dictionary.
const UNIQUE_COLUMNS: [&str; 5] = ["vid", "eid", "disc", "vt_s", "vt_e"];

/// Rows per Parquet row group.
pub const ROW_GROUP: usize = 1 << 17;

/// Output format of `export-rows` (also its `--format` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// CSV with a header line.
    Csv,
    /// Parquet: integer times and JSON-text props, or the typed schema (timestamps, typed props).
    Parquet,
    /// An Arrow IPC stream, always in the typed schema.
    Arrow,
}

impl Format {
    /// The format named by a file extension (`csv`, `parquet`, `arrow` / `arrows` / `ipc`;
    /// ASCII case-insensitive).
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "parquet" => Some(Format::Parquet),
            "arrow" | "arrows" | "ipc" => Some(Format::Arrow),
            _ => None,
        }
    }
}

/// One stored row as the exporters see it: the text of every column (`None` = null; the
/// time columns as decimal text too, for CSV) and the four times as integers.
pub struct Row<'a> {
    /// The text of each column of `COLUMNS`, in order; `None` is null.
    pub cells: [Option<&'a str>; 20],
    /// `vt_s, vt_e, tt_s, tt_e` in µs (`OPEN_END` for an open end).
    pub times: [i64; 4],
}

/// Calls `f` on every stored row in store-digest order (all node versions, then all edge
/// versions, as the store digest lists them); returns `(node rows, edge rows)`.
pub fn visit_rows<E>(
    store: &Store,
    mut f: impl FnMut(&Row<'_>) -> Result<(), E>,
) -> Result<(u64, u64), E> {
    let snap = store.snapshot();
    let (mut nn, mut ne) = (0u64, 0u64);
    for n in snap.all_nodes() {
        let times = [n.vt_s(), n.vt_e(), n.tt_s(), n.tt_e()];
        let [vs, ve, ts, te] = times.map(|t| t.to_string());
        let vid = n.vid();
        f(&Row {
            cells: [
                Some("node"),
                Some(&vid),
                Some(n.uid()),
                Some(n.label()),
                None,
                None,
                None,
                None,
                None,
                Some(&vs),
                Some(&ve),
                Some(&ts),
                Some(&te),
                Some(n.props()),
                Some(n.source()),
                Some(n.provenance_ref()),
                Some(n.origin().as_str()),
                n.reason(),
                n.closed_by().map(|o| o.as_str()),
                n.close_reason(),
            ],
            times,
        })?;
        nn += 1;
    }
    for e in snap.all_edges() {
        let times = [e.vt_s(), e.vt_e(), e.tt_s(), e.tt_e()];
        let [vs, ve, ts, te] = times.map(|t| t.to_string());
        let (eid, disc) = (e.eid(), e.disc());
        let vid = tgms_engine::ident::vid(&eid, e.tt_s(), e.vt_s());
        f(&Row {
            cells: [
                Some("edge"),
                Some(&vid),
                None,
                None,
                Some(&eid),
                Some(e.src()),
                Some(e.dst()),
                Some(e.rel_type()),
                Some(&disc),
                Some(&vs),
                Some(&ve),
                Some(&ts),
                Some(&te),
                Some(e.props()),
                Some(e.source()),
                Some(e.provenance_ref()),
                Some(e.origin().as_str()),
                e.reason(),
                e.closed_by().map(|o| o.as_str()),
                e.close_reason(),
            ],
            times,
        })?;
        ne += 1;
    }
    Ok((nn, ne))
}

/// Appends one CSV field: `None` → empty, `""` → `""`, quoted when needed.
fn field(s: &mut String, v: Option<&str>) {
    match v {
        None => {}
        Some("") => s.push_str("\"\""),
        Some(t) if t.contains([',', '"', '\n', '\r']) || t.starts_with(' ') || t.ends_with(' ') => {
            s.push('"');
            s.push_str(&t.replace('"', "\"\""));
            s.push('"');
        }
        Some(t) => s.push_str(t),
    }
}

fn line(s: &mut String, cells: &[Option<&str>]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        field(s, *c);
    }
    s.push('\n');
}

/// Writes the CSV of every stored row; returns `(node rows, edge rows)`.
pub fn write_csv(store: &Store, out: &mut dyn Write) -> std::io::Result<(u64, u64)> {
    let mut s = String::new();
    line(&mut s, &COLUMNS.map(Some));
    let counts = visit_rows(store, |r| {
        line(&mut s, &r.cells);
        if s.len() > 1 << 20 {
            out.write_all(s.as_bytes())?;
            s.clear();
        }
        Ok::<_, std::io::Error>(())
    })?;
    out.write_all(s.as_bytes())?;
    Ok(counts)
}

/// The Parquet schema of the export (see the module docs).
pub fn parquet_schema() -> parquet::errors::Result<Type> {
    let fields = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let rep = if OPTIONAL[i] {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            };
            let b = if TIME_COLUMNS.contains(&i) {
                Type::primitive_type_builder(name, PhysicalType::INT64)
            } else {
                Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String))
                    .with_converted_type(ConvertedType::UTF8)
            };
            b.with_repetition(rep).build().map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    Type::group_type_builder("tgms_rows")
        .with_fields(fields)
        .build()
}

/// One text column of a row group being collected: the bytes of its non-null values back
/// to back, each value's end offset, and a definition level per row (1 = set, 0 = null).
#[derive(Default)]
struct TextColumn {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    defs: Vec<i16>,
}

impl TextColumn {
    /// The values as byte arrays sharing one buffer (no allocation per value).
    fn values(&mut self) -> Vec<ByteArray> {
        let buf = Bytes::from(std::mem::take(&mut self.bytes));
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let v = ByteArray::from(buf.slice(start..end));
                start = end;
                v
            })
            .collect()
    }
}

/// One row group being collected, column by column (time columns as integers).
struct Columns {
    text: Vec<TextColumn>,
    times: [Vec<i64>; 4],
    rows: usize,
}

impl Columns {
    fn new() -> Columns {
        Columns {
            text: (0..COLUMNS.len()).map(|_| TextColumn::default()).collect(),
            times: Default::default(),
            rows: 0,
        }
    }

    fn push(&mut self, r: &Row<'_>) {
        for (i, cell) in r.cells.iter().enumerate() {
            if TIME_COLUMNS.contains(&i) {
                continue;
            }
            let c = &mut self.text[i];
            if let Some(v) = cell {
                c.bytes.extend_from_slice(v.as_bytes());
                c.ends.push(c.bytes.len());
            }
            c.defs.push(i16::from(cell.is_some()));
        }
        for (col, t) in self.times.iter_mut().zip(r.times) {
            col.push(t);
        }
        self.rows += 1;
    }

    /// Writes the collected rows as one row group and empties the buffers.
    fn flush<W: Write + Send>(
        &mut self,
        w: &mut SerializedFileWriter<W>,
    ) -> parquet::errors::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut rg = w.next_row_group()?;
        for (i, optional) in OPTIONAL.iter().enumerate() {
            let Some(mut col) = rg.next_column()? else {
                return Err(parquet::errors::ParquetError::General(format!(
                    "schema has no column {i}"
                )));
            };
            if TIME_COLUMNS.contains(&i) {
                let vals = &self.times[i - TIME_COLUMNS.start];
                col.typed::<Int64Type>().write_batch(vals, None, None)?;
            } else {
                let c = &mut self.text[i];
                let vals = c.values();
                let defs = optional.then_some(c.defs.as_slice());
                col.typed::<ByteArrayType>()
                    .write_batch(&vals, defs, None)?;
            }
            col.close()?;
        }
        rg.close()?;
        *self = Columns::new();
        Ok(())
    }
}

/// Writes the Parquet file of every stored row in row groups of [`ROW_GROUP`] rows; returns
/// `(node rows, edge rows)`.
pub fn write_parquet<W: Write + Send>(
    store: &Store,
    out: W,
) -> parquet::errors::Result<(u64, u64)> {
    write_parquet_grouped(store, out, ROW_GROUP)
}

/// [`write_parquet`] with row groups of `row_group` rows (at least 1).
pub fn write_parquet_grouped<W: Write + Send>(
    store: &Store,
    out: W,
    row_group: usize,
) -> parquet::errors::Result<(u64, u64)> {
    let row_group = row_group.max(1);
    // Dictionary encoding pays off for the repetitive columns (kind, label, endpoints,
    // rel_type, props, source, origin, tt); the per-version unique ones skip it.
    let props = UNIQUE_COLUMNS
        .iter()
        .fold(WriterProperties::builder(), |b, c| {
            b.set_column_dictionary_enabled(ColumnPath::from(*c), false)
        })
        .build();
    let props = Arc::new(props);
    let mut w = SerializedFileWriter::new(out, Arc::new(parquet_schema()?), props)?;
    let mut cols = Columns::new();
    let counts = visit_rows(store, |r| {
        cols.push(r);
        if cols.rows >= row_group {
            cols.flush(&mut w)?;
        }
        Ok::<_, parquet::errors::ParquetError>(())
    })?;
    cols.flush(&mut w)?;
    w.close()?;
    Ok(counts)
}
