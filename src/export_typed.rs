//! The typed export of `tgms export-rows` (`--format arrow`, `--typed`, `--as-of`,
//! `--partition-by month`; `docs/export.md`): the stored rows as Arrow record batches, written
//! as an Arrow IPC stream or as Parquet through the Arrow writer, for engines that read them
//! unchanged (DuckDB, DataFusion, Spark, Trino, polars).
//!
//! Schema: the typed schema of [`tgms_sql::columns`] (the table `tgms sql` queries in
//! place): times `TIMESTAMP(µs, UTC)` with the open end 2^62 µs (schema metadata
//! `tgms.open_end_us`, so a re-ingest with `--end vt_e` reproduces open intervals), and one
//! typed `prop_<name>` column per prop.
//!
//! `--as-of TT` exports the belief state at transaction time TT: the rows with `tt_s <= TT <
//! tt_e`, each as it was believed then (a row closed after TT shows `tt_e` open and no
//! `closed_by` / `close_reason`), so the file is the same whatever is written later.

use crate::export_rows::{visit_rows, Row, COLUMNS, TIME_COLUMNS};
use arrow_array::builder::{StringBuilder, TimestampMicrosecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use serde_json::Value;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tgms_engine::{canon, Store};
use tgms_sql::columns::{believed_tt_e, prop_kinds, schema, Kind, PropCol};

/// Rows per record batch (and Parquet row group).
pub const BATCH_ROWS: usize = 1 << 16;

/// Errors of the typed export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A file or directory could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Building an Arrow batch or writing the IPC stream failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Writing the Parquet file failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}

/// The file format of the typed export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// An Arrow IPC stream.
    ArrowIpc,
    /// Parquet (uncompressed), one row group per record batch.
    Parquet,
}

impl Sink {
    /// The file extension of a partition file.
    fn extension(self) -> &'static str {
        match self {
            Sink::ArrowIpc => "arrows",
            Sink::Parquet => "parquet",
        }
    }
}

/// `--partition-by` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PartitionBy {
    /// One file per calendar month (UTC) of `vt_s`.
    Month,
}

/// What to export and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Export the belief state at this transaction time (µs) instead of every stored row.
    pub as_of_tt: Option<i64>,
    /// One file per calendar month (UTC) of `vt_s`, under `OUT/vt_month=YYYY-MM/`.
    pub partition_by_month: bool,
}

/// What the export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Node versions written.
    pub node_rows: u64,
    /// Edge versions written.
    pub edge_rows: u64,
    /// The files written (one unless partitioned).
    pub files: Vec<PathBuf>,
}

/// The row as believed at `as_of` (None: left out), applied to a visited row.
fn believed_at<'a>(r: &Row<'a>, as_of: Option<i64>) -> Option<Row<'a>> {
    let [_, _, tt_s, tt_e] = r.times;
    let shown = believed_tt_e(tt_s, tt_e, as_of)?;
    let mut row = Row {
        cells: r.cells,
        times: r.times,
    };
    if shown != tt_e {
        row.times[3] = shown;
        // closed_by and close_reason: the close had not happened at `as_of`.
        row.cells[18] = None;
        row.cells[19] = None;
    }
    Some(row)
}

/// One file being written: its column builders and its writer.
struct Part {
    path: PathBuf,
    text: Vec<StringBuilder>,
    times: Vec<TimestampMicrosecondBuilder>,
    props: Vec<PropCol>,
    rows: usize,
    writer: Writer,
}

enum Writer {
    Ipc(arrow_ipc::writer::StreamWriter<BufWriter<std::fs::File>>),
    Parquet(parquet::arrow::ArrowWriter<BufWriter<std::fs::File>>),
}

impl Part {
    fn create(
        path: PathBuf,
        sink: Sink,
        schema: &SchemaRef,
        kinds: &BTreeMap<String, Kind>,
    ) -> Result<Part, ExportError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ExportError::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        let f = std::fs::File::create(&path).map_err(|e| ExportError::Io {
            path: path.clone(),
            source: e,
        })?;
        let w = BufWriter::with_capacity(1 << 20, f);
        let writer = match sink {
            Sink::ArrowIpc => Writer::Ipc(arrow_ipc::writer::StreamWriter::try_new(w, schema)?),
            Sink::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_max_row_group_row_count(Some(BATCH_ROWS))
                    .build();
                Writer::Parquet(parquet::arrow::ArrowWriter::try_new(
                    w,
                    schema.clone(),
                    Some(props),
                )?)
            }
        };
        Ok(Part {
            path,
            text: (0..COLUMNS.len() - TIME_COLUMNS.len())
                .map(|_| StringBuilder::new())
                .collect(),
            times: (0..TIME_COLUMNS.len())
                .map(|_| TimestampMicrosecondBuilder::new().with_timezone("UTC"))
                .collect(),
            props: kinds.values().map(|k| PropCol::new(*k)).collect(),
            rows: 0,
            writer,
        })
    }

    fn push(&mut self, r: &Row<'_>, names: &[&String]) {
        let mut t = 0;
        for (i, cell) in r.cells.iter().enumerate() {
            if TIME_COLUMNS.contains(&i) {
                continue;
            }
            self.text[t].append_option(*cell);
            t += 1;
        }
        for (b, v) in self.times.iter_mut().zip(r.times) {
            b.append_value(v);
        }
        let props = match r.cells[13].map(canon::parse) {
            Some(Ok(Value::Object(m))) => m,
            _ => serde_json::Map::new(),
        };
        for (col, name) in self.props.iter_mut().zip(names) {
            col.push(props.get(name.as_str()));
        }
        self.rows += 1;
    }

    fn flush(&mut self, schema: &SchemaRef) -> Result<(), ExportError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        let (mut t, mut tm) = (self.text.iter_mut(), self.times.iter_mut());
        for i in 0..COLUMNS.len() {
            let a: Option<ArrayRef> = if TIME_COLUMNS.contains(&i) {
                tm.next().map(|b| Arc::new(b.finish()) as ArrayRef)
            } else {
                t.next().map(|b| Arc::new(b.finish()) as ArrayRef)
            };
            cols.extend(a);
        }
        cols.extend(self.props.iter_mut().map(PropCol::finish));
        let batch = RecordBatch::try_new(schema.clone(), cols)?;
        match &mut self.writer {
            Writer::Ipc(w) => w.write(&batch)?,
            Writer::Parquet(w) => w.write(&batch)?,
        }
        self.rows = 0;
        Ok(())
    }

    fn finish(mut self, schema: &SchemaRef) -> Result<PathBuf, ExportError> {
        self.flush(schema)?;
        let io = |path: &Path, e| ExportError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        match self.writer {
            Writer::Ipc(mut w) => {
                w.finish()?;
                w.into_inner()?.flush().map_err(|e| io(&self.path, e))?;
            }
            Writer::Parquet(w) => {
                // Writes the footer and flushes the buffered file.
                w.close()?;
            }
        }
        Ok(self.path)
    }
}

/// `YYYY-MM` of an instant in µs (UTC).
fn month_of(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || "out-of-range".to_string(),
        |d| d.format("%Y-%m").to_string(),
    )
}

/// Writes the typed export of `store` to `out` (a file, or with `partition_by_month` a
/// directory of `vt_month=YYYY-MM/part-0.<ext>` files); rows in store-digest order within
/// each file.
pub fn write(
    store: &Store,
    out: &Path,
    sink: Sink,
    opts: &Options,
) -> Result<Written, ExportError> {
    let kinds = prop_kinds(&store.snapshot(), opts.as_of_tt);
    let names: Vec<&String> = kinds.keys().collect();
    let schema = schema(&kinds);
    let mut parts: BTreeMap<String, Part> = BTreeMap::new();
    let mut written = Written::default();
    let single = !opts.partition_by_month;
    if single {
        parts.insert(
            String::new(),
            Part::create(out.to_path_buf(), sink, &schema, &kinds)?,
        );
    }
    visit_rows(store, |r| {
        let Some(row) = believed_at(r, opts.as_of_tt) else {
            return Ok(());
        };
        let key = if single {
            String::new()
        } else {
            month_of(row.times[0])
        };
        let part = match parts.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let path = out
                    .join(format!("vt_month={}", e.key()))
                    .join(format!("part-0.{}", sink.extension()));
                e.insert(Part::create(path, sink, &schema, &kinds)?)
            }
        };
        part.push(&row, &names);
        if part.rows >= BATCH_ROWS {
            part.flush(&schema)?;
        }
        if row.cells[0] == Some("node") {
            written.node_rows += 1;
        } else {
            written.edge_rows += 1;
        }
        Ok::<_, ExportError>(())
    })?;
    for (_, p) in parts {
        written.files.push(p.finish(&schema)?);
    }
    Ok(written)
}
