//! `tgms import-rows STORE FILE` (`docs/export.md`): rebuilds a store from an `export-rows`
//! file — CSV, Parquet or Arrow IPC, plain or typed — batch by batch at the recorded
//! transaction times, so that the new store holds exactly the exported rows and has the
//! source's store digest.
//!
//! An export holds versions, not ops. The ops are recovered from the rows: each group of rows
//! with one `tt_s` is one batch; rows of origin `assert` become `assert_node` /
//! `assert_edge` ops carrying every audit field, and rows of origin `ingest` become
//! `ingest_events` ops whose events are put back in ingest-ordinal order (the `#k` of their
//! default discriminator), so the store assigns the same ordinals. A row that was closed, or
//! that a retraction or correction wrote, needs the op that closed or wrote it, which an
//! export does not carry: such a file is refused before anything is written, with the event
//! log as the fix. After the import, the store's rows are compared with the file's, column
//! by column; any difference is reported.

use crate::export_rows::{visit_rows, Format, COLUMNS};
use crate::load_columns::{arrow_cell, Cell};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use tgms_engine::op::INGEST_CHUNK;
use tgms_engine::{canon, Error, Op, Result, Store, OPEN_END};

/// What an import wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    /// Batches written (one per distinct `tt_s`).
    pub batches: u64,
    /// Rows in the file, all now in the store.
    pub rows: u64,
}

/// Column positions in [`COLUMNS`].
const KIND: usize = 0;
const VID: usize = 1;
const UID: usize = 2;
const LABEL: usize = 3;
const SRC: usize = 5;
const DST: usize = 6;
const REL_TYPE: usize = 7;
const DISC: usize = 8;
const VT_S: usize = 9;
const VT_E: usize = 10;
const TT_S: usize = 11;
const TT_E: usize = 12;
const PROPS: usize = 13;
const SOURCE: usize = 14;
const PROVENANCE: usize = 15;
const ORIGIN: usize = 16;
const REASON: usize = 17;
const CLOSED_BY: usize = 18;
const CLOSE_REASON: usize = 19;

/// One exported row: its line or row number (1-based, the header not counted) and the 20
/// columns as text (`None` = null; times as decimal text).
#[derive(Debug)]
struct XRow {
    cells: [Option<String>; 20],
    no: u64,
}

impl XRow {
    fn get(&self, c: usize) -> Option<&str> {
        self.cells[c].as_deref()
    }

    fn time(&self, c: usize) -> Result<i64> {
        self.get(c)
            .and_then(|t| t.parse::<i64>().ok())
            .ok_or_else(|| self.bad(format!("{} is not a time", COLUMNS[c])))
    }

    fn json(&self, c: usize) -> Result<Value> {
        let t = self.get(c).unwrap_or("null");
        canon::parse(t).map_err(|e| self.bad(format!("{} is not JSON: {e}", COLUMNS[c])))
    }

    fn bad(&self, what: String) -> Error {
        Error::invalid(format!(
            "row {} ({} {}): {what}",
            self.no,
            self.get(KIND).unwrap_or("?"),
            self.get(VID).unwrap_or("?")
        ))
    }
}

/// Imports `path` into `store`, which must be empty. `format` `None`: from the extension.
pub fn import(store: &mut Store, path: &Path, format: Option<Format>) -> Result<Imported> {
    let stats = store.snapshot().stats();
    if stats.n_batches > 0 {
        return Err(Error::invalid(format!(
            "import-rows writes at the file's own transaction times and needs an empty store; \
             this one holds {} batches (create a new one with `tgms init NEW`)",
            stats.n_batches
        )));
    }
    let format = match format {
        Some(f) => f,
        None => path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Format::from_extension)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "cannot tell the format of {} from its extension: pass --format csv|parquet|arrow",
                    path.display()
                ))
            })?,
    };
    let rows = match format {
        Format::Csv => read_csv(path)?,
        Format::Parquet => read_parquet(path)?,
        Format::Arrow => read_arrow(path)?,
    };
    for (tt, ops) in batches(&rows)? {
        store.write_at(tt, ops)?;
    }
    check_rows(store, rows)
}

/// The batches that wrote `rows`, in transaction-time order.
fn batches(rows: &[XRow]) -> Result<Vec<(i64, Vec<Op>)>> {
    let mut by_tt: BTreeMap<i64, Vec<&XRow>> = BTreeMap::new();
    for r in rows {
        let closed = r.time(TT_E)? != OPEN_END
            || r.get(CLOSED_BY).is_some()
            || r.get(CLOSE_REASON).is_some();
        let origin = r.get(ORIGIN).unwrap_or("");
        if closed || !matches!(origin, "assert" | "ingest") {
            let why = if closed {
                format!(
                    "it was closed at tt {} by a {}",
                    r.get(TT_E).unwrap_or("?"),
                    r.get(CLOSED_BY).unwrap_or("later write")
                )
            } else {
                format!("it was written by a {origin}")
            };
            return Err(r.bad(format!(
                "{why}, and an export does not carry the op that did it; rebuild a store \
                 with retractions or corrections from its log: `tgms export-eventlog SRC \
                 log.jsonl`, then `tgms init NEW` and `tgms import-eventlog NEW log.jsonl`"
            )));
        }
        by_tt.entry(r.time(TT_S)?).or_default().push(r);
    }
    let mut ordinal = 0u64;
    let mut out = Vec::with_capacity(by_tt.len());
    for (tt, group) in by_tt {
        let mut ops = Vec::new();
        // Asserted nodes first: an asserted edge's endpoint node exists (D-W3) and an
        // ingest does not create a node that is already believed.
        for r in group
            .iter()
            .filter(|r| r.get(ORIGIN) == Some("assert") && r.get(KIND) == Some("node"))
        {
            let mut op = json!({"op": "assert_node", "uid": r.get(UID), "label": r.get(LABEL),
                "vt_s": r.time(VT_S)?, "vt_e": r.time(VT_E)?, "props": r.json(PROPS)?});
            audit(r, &mut op)?;
            ops.push(Op::parse(&op).map_err(|e| r.bad(e.to_string()))?);
        }
        ops.extend(ingest_ops(&group, &mut ordinal)?);
        for r in group
            .iter()
            .filter(|r| r.get(ORIGIN) == Some("assert") && r.get(KIND) == Some("edge"))
        {
            let mut op = json!({"op": "assert_edge", "src": r.get(SRC), "dst": r.get(DST),
                "rel_type": r.get(REL_TYPE), "disc": r.get(DISC).unwrap_or(""),
                "vt_s": r.time(VT_S)?, "vt_e": r.time(VT_E)?, "props": r.json(PROPS)?});
            audit(r, &mut op)?;
            ops.push(Op::parse(&op).map_err(|e| r.bad(e.to_string()))?);
        }
        out.push((tt, ops));
    }
    Ok(out)
}

/// Copies a row's `source`, `provenance_ref` and `reason` onto an op object.
fn audit(r: &XRow, op: &mut Value) -> Result<()> {
    let m = op.as_object_mut().expect("an op object");
    if let Some(s) = r.get(SOURCE) {
        m.insert("source".into(), json!(s));
    }
    m.insert("provenance_ref".into(), r.json(PROVENANCE)?);
    if let Some(s) = r.get(REASON) {
        m.insert("reason".into(), json!(s));
    }
    Ok(())
}

/// The `ingest_events` ops of one batch: its ingest-origin edges in ordinal order (an edge
/// with an explicit discriminator fills the ordinal gap it left), one op per run of equal
/// audit fields and at most [`INGEST_CHUNK`] events; the node label from the batch's
/// ingest-origin nodes. `ordinal` is the store's ingest ordinal counter, carried across
/// batches.
fn ingest_ops(group: &[&XRow], ordinal: &mut u64) -> Result<Vec<Op>> {
    let edges: Vec<&XRow> = group
        .iter()
        .copied()
        .filter(|r| r.get(ORIGIN) == Some("ingest") && r.get(KIND) == Some("edge"))
        .collect();
    let nodes: Vec<&XRow> = group
        .iter()
        .copied()
        .filter(|r| r.get(ORIGIN) == Some("ingest") && r.get(KIND) == Some("node"))
        .collect();
    if edges.is_empty() {
        return match nodes.first() {
            None => Ok(Vec::new()),
            Some(r) => Err(r.bad(
                "an ingested node without an ingested edge in its batch: the file is not a \
                 whole export"
                    .into(),
            )),
        };
    }
    let mut labels: Vec<&str> = nodes.iter().filter_map(|r| r.get(LABEL)).collect();
    labels.sort_unstable();
    labels.dedup();
    if labels.len() > 1 {
        return Err(nodes[0].bad(format!(
            "one batch ingested nodes with labels {labels:?}: which events created which node \
             cannot be told from the rows; rebuild the store from its log (tgms \
             export-eventlog / import-eventlog)"
        )));
    }
    let label = labels.first().copied().unwrap_or("Node");
    // Ordinal slots: the default discriminator `#k` names its event's position.
    let base = *ordinal;
    let mut slots: Vec<Option<&XRow>> = vec![None; edges.len()];
    let mut explicit = Vec::new();
    for r in &edges {
        let k = r
            .get(DISC)
            .and_then(|d| d.strip_prefix('#'))
            .and_then(|k| k.parse::<u64>().ok());
        match k {
            Some(k) if k >= base && k - base < edges.len() as u64 => {
                let slot = &mut slots[(k - base) as usize];
                if slot.is_some() {
                    return Err(r.bad(format!("ingest ordinal #{k} appears twice")));
                }
                *slot = Some(r);
            }
            Some(k) => {
                return Err(r.bad(format!(
                    "ingest ordinal #{k} is outside this batch's ordinals #{base}..#{}: the \
                     file is not a whole export of one store",
                    base + edges.len() as u64 - 1
                )))
            }
            None => explicit.push(*r),
        }
    }
    let mut explicit = explicit.into_iter();
    let events: Vec<&XRow> = slots
        .into_iter()
        .map(|s| s.or_else(|| explicit.next()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            edges[0].bad("the batch's ingest ordinals have gaps that no edge fills".into())
        })?;
    *ordinal = base + events.len() as u64;
    let key = |r: &XRow| {
        (
            r.get(SOURCE).map(str::to_owned),
            r.get(PROVENANCE).map(str::to_owned),
            r.get(REASON).map(str::to_owned),
        )
    };
    let mut ops = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let k = key(events[i]);
        let mut j = i;
        while j < events.len() && j - i < INGEST_CHUNK && key(events[j]) == k {
            j += 1;
        }
        let evs = events[i..j]
            .iter()
            .map(|r| {
                let mut e = Map::new();
                e.insert("src".into(), json!(r.get(SRC)));
                e.insert("dst".into(), json!(r.get(DST)));
                e.insert("rel_type".into(), json!(r.get(REL_TYPE)));
                e.insert("vt_s".into(), json!(r.time(VT_S)?));
                e.insert("vt_e".into(), json!(r.time(VT_E)?));
                e.insert("props".into(), r.json(PROPS)?);
                let d = r.get(DISC).unwrap_or("");
                if !d.starts_with('#') {
                    e.insert("disc".into(), json!(d));
                }
                Ok(Value::Object(e))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut op = json!({"op": "ingest_events", "node_label": label, "events": evs});
        audit(events[i], &mut op)?;
        ops.push(Op::parse(&op).map_err(|e| events[i].bad(e.to_string()))?);
        i = j;
    }
    Ok(ops)
}

/// Compares the store's rows with the file's (every column, as text); an error lists the
/// first differences.
fn check_rows(store: &Store, rows: Vec<XRow>) -> Result<Imported> {
    let mut got = Vec::with_capacity(rows.len());
    visit_rows(store, |r| {
        got.push(r.cells.map(|c| c.map(str::to_owned)));
        Ok::<_, Error>(())
    })?;
    let n = rows.len() as u64;
    let mut want: Vec<[Option<String>; 20]> = rows.into_iter().map(|r| r.cells).collect();
    want.sort();
    got.sort();
    if want != got {
        let missing: Vec<String> = want
            .iter()
            .filter(|r| got.binary_search(r).is_err())
            .take(3)
            .map(|r| format!("{:?}", r))
            .collect();
        return Err(Error::invalid(format!(
            "the imported store's rows differ from the file's ({} rows in the store, {} in the \
             file); first rows of the file not reproduced: {}; the file may have been edited \
             or written by another tool (the store now holds what was imported: delete it)",
            got.len(),
            want.len(),
            missing.join("; ")
        )));
    }
    let batches = store.snapshot().stats().n_batches;
    Ok(Imported { batches, rows: n })
}

/// The positions of [`COLUMNS`] in a header; a missing column is an error with the fix.
fn positions(path: &Path, header: &[String]) -> Result<[usize; 20]> {
    let mut pos = [0usize; 20];
    for (i, c) in COLUMNS.iter().enumerate() {
        pos[i] = header.iter().position(|h| h == c).ok_or_else(|| {
            Error::invalid(format!(
                "{}: no column '{c}': import-rows reads the files `tgms export-rows` writes \
                 (columns {})",
                path.display(),
                COLUMNS.join(", ")
            ))
        })?;
    }
    Ok(pos)
}

fn read_csv(path: &Path) -> Result<Vec<XRow>> {
    let bad = |e: csv::Error| Error::invalid(format!("{}: cannot read CSV: {e}", path.display()));
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(bad)?;
    let header: Vec<String> = rd
        .headers()
        .map_err(bad)?
        .iter()
        .map(String::from)
        .collect();
    let pos = positions(path, &header)?;
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec.map_err(bad)?;
        let mut cells: [Option<String>; 20] =
            pos.map(|p| rec.get(p).filter(|s| !s.is_empty()).map(String::from));
        // CSV does not tell an empty string from a null: an edge's discriminator is never
        // null, and `""` is the default one.
        if cells[KIND].as_deref() == Some("edge") && cells[DISC].is_none() {
            cells[DISC] = Some(String::new());
        }
        rows.push(XRow {
            cells,
            no: i as u64 + 1,
        });
    }
    Ok(rows)
}

fn read_parquet(path: &Path) -> Result<Vec<XRow>> {
    let bad = |e: parquet::errors::ParquetError| {
        Error::invalid(format!("{}: cannot read Parquet: {e}", path.display()))
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(bad)?
        .build()
        .map_err(bad)?;
    let header: Vec<String> = arrow_array::RecordBatchReader::schema(&reader)
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let pos = positions(path, &header)?;
    let mut rows = Vec::new();
    for b in reader {
        let b = b.map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        batch_rows(&b, &pos, &mut rows);
    }
    Ok(rows)
}

fn read_arrow(path: &Path) -> Result<Vec<XRow>> {
    let bad = |e: arrow_schema::ArrowError| {
        Error::invalid(format!(
            "{}: cannot read an Arrow IPC stream: {e}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::BufReader::new(file), None)
        .map_err(bad)?;
    let header: Vec<String> = reader
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let pos = positions(path, &header)?;
    let mut rows = Vec::new();
    for b in reader {
        batch_rows(&b.map_err(bad)?, &pos, &mut rows);
    }
    Ok(rows)
}

/// The rows of one record batch, every cell as text (times as decimal µs, typed or not).
fn batch_rows(b: &arrow_array::RecordBatch, pos: &[usize; 20], rows: &mut Vec<XRow>) {
    for row in 0..b.num_rows() {
        let cells = pos.map(|p| match arrow_cell(b.column(p).as_ref(), row) {
            Cell::Null => None,
            Cell::Text(s) => Some(s.to_string()),
            Cell::Other(s) => Some(s),
            Cell::Int(i) | Cell::TimeUs(i) => Some(i.to_string()),
            Cell::Float(f) => Some(f.to_string()),
            Cell::Bool(x) => Some(x.to_string()),
        });
        let no = rows.len() as u64 + 1;
        rows.push(XRow { cells, no });
    }
}
