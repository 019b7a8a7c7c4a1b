//! Interop with TGMS's JSONL event log (`data-model.md` §13): import a TGMS log into a
//! store, batch by batch at the recorded transaction times, and export a store's write-ahead
//! log as a TGMS log.
//!
//! Format (§13.1): UTF-8, one JSON value per `\n`-terminated line; line 1 is the header
//! `{"format":"tgms-eventlog","version":1}`; every further line is one batch
//! `{"batch_id", "ops", "tt"}` whose `batch_id` is the first 16 hex of SHA-256 of the
//! canonical JSON of `{"tt", "ops"}`.

use crate::apply::Trace;
use crate::canon;
use crate::error::{Error, Result, StateAbout};
use crate::op::{self, AssertEdge, AssertNode, Op};
use crate::rows::Rows;
use crate::store::{read_log_with, LogMode, Salvage, Store};
use crate::time::OPEN_END;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The header line's object (§13.1).
pub const HEADER: &str = r#"{"format":"tgms-eventlog","version":1}"#;

/// The reason given to imported `retract` / `correct` ops that carry none (§13.2).
pub const IMPORT_REASON: &str = "imported from a TGMS event log; no reason recorded";

/// What [`import`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Batch records imported (failed ones included).
    pub batches: u64,
    /// Imported batches whose apply failed (kept in the log, consuming their tt).
    pub failed_batches: u64,
    /// Events of the `ingest_events` ops of the batches that applied.
    pub events: u64,
    /// True when the final line had no trailing newline, failed to parse or verify, and was
    /// skipped as torn.
    pub torn_final_line: bool,
}

/// What [`export`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Batch lines written (one per log record, failed batches included).
    pub batches: u64,
    /// Human-readable notes on rows a TGMS replay of the export will not reproduce.
    pub warnings: Vec<String>,
    /// Under [`LogMode::Salvage`]: what could not be read from the store's log.
    pub salvage: Option<Salvage>,
}

// ------------------------------------------------------------------------------- import

/// Why one record line of a TGMS event log was not accepted; its text is the `reason` of
/// the [`Error::BadInput`] that [`import`] reports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The line is not a well-formed batch record (or an op of it cannot be imported).
    #[error("{0}")]
    Malformed(String),
    /// The record's `batch_id` does not match its content.
    #[error("batch_id {found} does not match its content ({expected})")]
    Mismatch {
        /// The `batch_id` the record carries.
        found: String,
        /// The `batch_id` its content hashes to.
        expected: String,
    },
}

/// Parses one record line of a TGMS event log into `(tt, ops)` and verifies its
/// `batch_id`; the error says what is wrong with the line (what [`import`] reports).
pub fn parse_line(bytes: &[u8]) -> std::result::Result<(i64, Vec<Value>), LineError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| LineError::Malformed(format!("line is not UTF-8: {e}")))?;
    let v = canon::parse(text).map_err(|e| LineError::Malformed(format!("invalid JSON: {e}")))?;
    let Value::Object(mut m) = v else {
        return Err(LineError::Malformed(
            "a batch record must be a JSON object".into(),
        ));
    };
    let tt = match m.get("tt") {
        Some(t) => t.as_i64().ok_or_else(|| {
            LineError::Malformed(format!(
                "tt must be an integer, got {}",
                canon::to_string(t)
            ))
        })?,
        None => return Err(LineError::Malformed("batch record has no tt".into())),
    };
    let found = match m.get("batch_id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(LineError::Malformed(format!(
                "batch_id must be a string, got {}",
                canon::to_string(other)
            )))
        }
        None => return Err(LineError::Malformed("batch record has no batch_id".into())),
    };
    let ops = match m.remove("ops") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err(LineError::Malformed("ops must be an array".into())),
        None => return Err(LineError::Malformed("batch record has no ops".into())),
    };
    let expected = op::batch_id(tt, &ops);
    if found != expected {
        return Err(LineError::Mismatch { found, expected });
    }
    Ok((tt, ops))
}

/// True when `v` is a string with at least one non-whitespace character (`data-model.md`
/// §6.6: what "non-empty reason" means).
fn is_real_reason(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if s.chars().any(|c| !c.is_whitespace()))
}

/// Converts one TGMS op object into ours (§13.2). An op that does not normalize becomes a
/// raw op, which fails its batch at apply time. Only a malformed ingest `offset` is refused
/// outright (the discs it implies cannot be computed).
fn import_op(v: Value) -> std::result::Result<Op, LineError> {
    let Value::Object(mut m) = v else {
        return Ok(Op::from_json(&v));
    };
    match m.get("op").and_then(Value::as_str) {
        // Only an op with no `reason` key gets the import reason: a TGMS log never carries
        // one (it is our extension key), while our own export writes `"reason": null` for a
        // retract / correct that had none, which failed its batch (D-W1) and must fail
        // again for the round trip to be exact.
        Some("retract" | "correct") if !m.contains_key("reason") => {
            m.insert("reason".into(), Value::String(IMPORT_REASON.into()));
        }
        Some("ingest_events") => {
            let offset = match m.get("offset") {
                None | Some(Value::Null) => 0,
                Some(o) => o.as_u64().ok_or_else(|| {
                    LineError::Malformed(format!(
                        "ingest_events offset must be a non-negative integer, got {}",
                        canon::to_string(o)
                    ))
                })?,
            };
            if let Some(Value::Array(events)) = m.get_mut("events") {
                for (i, e) in events.iter_mut().enumerate() {
                    if let Value::Object(e) = e {
                        if !e.contains_key("disc") {
                            let k = offset.checked_add(i as u64).ok_or_else(|| {
                                LineError::Malformed(
                                    "ingest_events offset overflows the disc ordinal".into(),
                                )
                            })?;
                            e.insert("disc".into(), Value::String(format!("#{k}")));
                        }
                    }
                }
            }
            m.remove("offset");
        }
        // assert_node / assert_edge are copied: `reason` from its key or null, labels
        // default to "Node" (the normalization defaults). Unknown kinds become raw ops.
        _ => {}
    }
    Ok(Op::from_json(&Value::Object(m)))
}

/// Adds `file` / `line` to a store error raised while committing the batch of `line`.
fn at_line(e: Error, file: &Path, line: u64) -> Error {
    match e {
        Error::State { message, about } => Error::State {
            message,
            about: StateAbout::AtLine {
                file: file.to_path_buf(),
                line,
                about: Box::new(about),
            },
        },
        Error::InvalidArg { message } => Error::BadInput {
            file: file.to_path_buf(),
            line,
            reason: message,
        },
        other => other,
    }
}

/// Imports a TGMS JSONL event log into `store` (`tgms import-eventlog`, §13.2). Every record
/// becomes one batch at its recorded tt; a batch that fails to apply is kept and counted.
/// `progress` gets the number of lines processed so far after each record line.
///
/// Errors: a bad header is `E_STATE "not a tgms event log"`; a `batch_id` that does not
/// match is `E_STATE "batch_id mismatch at line <n>"`; a malformed line is
/// [`Error::BadInput`]; a record whose tt does not exceed the store's last tt is
/// `E_STATE "non-monotonic tt …"`. A final line without a trailing newline that fails to
/// parse or verify is torn: skipped and reported in [`ImportReport::torn_final_line`].
/// Batches imported before an error stay committed.
pub fn import(
    store: &mut Store,
    path: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<ImportReport> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut buf: Vec<u8> = Vec::new();
    let mut report = ImportReport::default();
    let not_a_log = || Error::State {
        message: "not a tgms event log".into(),
        about: StateAbout::NotAnEventLog {
            file: path.to_path_buf(),
        },
    };

    // Line 1: the header.
    buf.clear();
    r.read_until(b'\n', &mut buf)
        .map_err(|e| Error::io(path, e))?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    let header_ok = std::str::from_utf8(&buf)
        .ok()
        .and_then(|t| canon::parse(t).ok())
        .is_some_and(|h| {
            h.get("format").and_then(Value::as_str) == Some("tgms-eventlog")
                && h.get("version").and_then(Value::as_i64) == Some(1)
        });
    if !header_ok {
        return Err(not_a_log());
    }

    let mut line_no: u64 = 1;
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let terminated = buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        let (tt, ops) = match parse_line(&buf) {
            Ok(rec) => rec,
            // Only the final line can lack its newline: it is torn, not damaged.
            Err(_) if !terminated => {
                report.torn_final_line = true;
                break;
            }
            Err(LineError::Malformed(reason)) => {
                return Err(Error::BadInput {
                    file: path.to_path_buf(),
                    line: line_no,
                    reason,
                })
            }
            Err(LineError::Mismatch { found, expected }) => {
                return Err(Error::State {
                    message: format!("batch_id mismatch at line {line_no}"),
                    about: StateAbout::BatchIdMismatch {
                        file: path.to_path_buf(),
                        line: line_no,
                        found,
                        expected,
                    },
                })
            }
        };
        let mut converted = Vec::with_capacity(ops.len());
        let mut events = 0u64;
        for v in ops {
            let op = import_op(v).map_err(|reason| Error::BadInput {
                file: path.to_path_buf(),
                line: line_no,
                reason: reason.to_string(),
            })?;
            if let Op::IngestEvents(o) = &op {
                events += o.events.len() as u64;
            }
            converted.push(op);
        }
        let committed = store
            .commit(Some(tt), converted)
            .map_err(|e| at_line(e, path, line_no))?;
        report.batches += 1;
        match committed.result {
            Ok(()) => report.events += events,
            Err(_) => report.failed_batches += 1,
        }
        progress(line_no);
    }
    Ok(report)
}

// ------------------------------------------------------------------------------- export

/// Removes our extension keys from an op object as §13.3 requires.
fn strip_extensions(v: &mut Value, strict: bool, labels: bool) {
    if let Value::Object(m) = v {
        if strict || m.get("reason").is_some_and(Value::is_null) {
            m.remove("reason");
        }
        if strict && labels {
            m.remove("src_label");
            m.remove("dst_label");
        }
    }
}

/// One of our ops in TGMS shape (§13.1, §13.3).
fn export_op(op: &Op, strict: bool) -> Value {
    match op {
        Op::IngestEvents(o) => {
            let events: Vec<Value> = o
                .events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let mut v = op::event_json(e);
                    if e.disc.is_none() {
                        if let Value::Object(m) = &mut v {
                            let k = o.ordinal_base + i as u64;
                            m.insert("disc".into(), Value::String(format!("#{k}")));
                        }
                    }
                    v
                })
                .collect();
            json!({
                "op": "ingest_events",
                "events": events,
                "offset": o.ordinal_base,
                "node_label": o.node_label,
                "source": o.audit.source,
                "provenance_ref": op::text_json(&o.audit.provenance_ref),
            })
        }
        Op::Raw(text) => {
            let mut v = op::text_json(text);
            // A retract / correct without a reason failed here (D-W1); an explicit null keeps
            // a re-import from giving it the import reason, which would apply it.
            if let Value::Object(m) = &mut v {
                let kind = m.get("op").and_then(Value::as_str);
                if !strict
                    && matches!(kind, Some("retract" | "correct"))
                    && !m.contains_key("reason")
                {
                    m.insert("reason".into(), Value::Null);
                }
            }
            v
        }
        other => {
            let mut v = other.to_json();
            strip_extensions(&mut v, strict, matches!(other, Op::AssertEdge(_)));
            v
        }
    }
}

/// The explicit `assert_node` standing for an endpoint node version that `e` created (D-W3):
/// `label` as used, `props` `{}`, `[vt_s, OPEN_END)`, the edge op's audit fields.
fn endpoint_node(e: &AssertEdge, dst: bool) -> Op {
    let (uid, label) = if dst {
        (&e.dst, &e.dst_label)
    } else {
        (&e.src, &e.src_label)
    };
    Op::AssertNode(AssertNode {
        uid: uid.clone(),
        label: label.clone(),
        props: "{}".into(),
        vt_s: e.vt_s,
        vt_e: OPEN_END,
        audit: e.audit.clone(),
    })
}

/// True for a raw `retract` / `correct` without a usable reason: it failed here (D-W1) but
/// applies in a TGMS replay and in a re-import (which supplies [`IMPORT_REASON`]).
fn reasonless_raw(op: &Op) -> bool {
    let Op::Raw(text) = op else { return false };
    let v = op::text_json(text);
    matches!(
        v.get("op").and_then(Value::as_str),
        Some("retract" | "correct")
    ) && !is_real_reason(v.get("reason"))
}

/// Writes the TGMS JSONL export of the store at `store_dir` (`tgms export-eventlog`, §13.3)
/// to `out`: the header, then one canonical line per batch record of the store's log (failed
/// batches included), ops in TGMS shape, `batch_id` recomputed over the exported ops.
/// `strict` drops our extension keys (`reason`, `src_label`, `dst_label`).
///
/// Reads the log without opening the store (no lock, nothing modified) and replays it into
/// a private in-memory state to learn which node versions `assert_edge` created (exported as
/// explicit `assert_node` ops right after it) and whether any ingest event was carved (D-W2,
/// reported as a warning).
pub fn export(store_dir: &Path, out: &mut dyn Write, strict: bool) -> Result<ExportReport> {
    export_with(store_dir, out, strict, LogMode::Whole)
}

/// [`export`] under a [`LogMode`]: a log shorter than the store's checkpoint is refused
/// before anything is written to `out` ([`LogMode::Whole`]), or its readable part exported
/// and the loss reported in [`ExportReport::salvage`].
pub fn export_with(
    store_dir: &Path,
    out: &mut dyn Write,
    strict: bool,
    mode: LogMode,
) -> Result<ExportReport> {
    let out_err = |e: std::io::Error| Error::io(PathBuf::from("<export output>"), e);
    let mut report = ExportReport::default();
    let mut state = Rows::empty(crate::model::Stats::default());
    let mut last_tt: Option<i64> = None;
    let mut carved_events = 0u64;
    let mut carved_batches = 0u64;
    let mut reasonless: Vec<i64> = Vec::new();
    let mut line = String::with_capacity(1 << 16);
    // The header is written with the first batch (or at the end): a log that
    // `read_log_with` refuses before its first batch leaves `out` untouched.
    let mut header_written = false;
    let salvage = read_log_with(store_dir, mode, |b| {
        if !header_written {
            out.write_all(format!("{HEADER}\n").as_bytes())
                .map_err(out_err)?;
            header_written = true;
        }
        if let Some(last) = last_tt {
            if b.tt <= last {
                return Err(Error::state(format!(
                    "non-monotonic tt {} (last is {last})",
                    b.tt
                )));
            }
        }
        last_tt = Some(b.tt);
        state.trace = Some(Trace::default());
        let ok = state.apply_batch(b.tt, &b.ops, false).is_ok();
        let trace = state.trace.take().unwrap_or_default();

        let mut ops = Vec::with_capacity(b.ops.len());
        let mut edge_no = 0;
        // Index into `b.ops` of the next op not yet written.
        let mut j = 0;
        while j < b.ops.len() {
            let o = &b.ops[j];
            ops.push(export_op(o, strict));
            j += 1;
            let Op::AssertEdge(e) = o else { continue };
            let made = trace
                .created_endpoints
                .get(edge_no)
                .copied()
                .unwrap_or_default();
            edge_no += 1;
            // Nodes of a failed batch never existed; nothing to make explicit.
            if !ok {
                continue;
            }
            for (k, &m) in made.iter().enumerate() {
                if !m {
                    continue;
                }
                let node = endpoint_node(e, k == 1);
                ops.push(export_op(&node, strict));
                // A log that already carries this explicit op right here (an imported
                // export) keeps it once, so exporting an imported export gives the same text.
                if b.ops.get(j) == Some(&node) {
                    j += 1;
                }
            }
        }
        if ok && trace.carved_events > 0 {
            carved_events += trace.carved_events;
            carved_batches += 1;
        }
        if !ok && b.ops.iter().any(reasonless_raw) {
            reasonless.push(b.tt);
        }

        let id = op::batch_id(b.tt, &ops);
        line.clear();
        canon::write_value(&mut line, &json!({"batch_id": id, "ops": ops, "tt": b.tt}));
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(out_err)?;
        report.batches += 1;
        Ok(())
    })?;
    if !header_written {
        out.write_all(format!("{HEADER}\n").as_bytes())
            .map_err(out_err)?;
    }
    out.flush().map_err(out_err)?;
    if mode == LogMode::Salvage {
        report.salvage = Some(salvage);
    }

    if carved_events > 0 {
        report.warnings.push(format!(
            "{carved_events} ingest event(s) in {carved_batches} batch(es) overlapped believed \
             versions of their edge identity and were carved (D-W2); a TGMS replay of this \
             export will not reproduce those rows"
        ));
    }
    if !reasonless.is_empty() {
        let shown: Vec<String> = reasonless.iter().take(10).map(i64::to_string).collect();
        report.warnings.push(format!(
            "{} failed batch(es) (tt {}{}) contain a retract/correct without a reason, which \
             failed here (D-W1) but applies in a TGMS replay{}",
            reasonless.len(),
            shown.join(", "),
            if reasonless.len() > 10 { ", …" } else { "" },
            if strict {
                " or a re-import of this strict export (which drops reasons)"
            } else {
                ""
            }
        ));
    }
    Ok(report)
}
