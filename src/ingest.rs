//! The `tgms ingest` driver (`docs/ingest.md`): a validation pass over the whole input,
//! then the write pass in keyed chunks of 50,000 events, with a summary that says exactly
//! what was read, skipped and committed. With `--on-error fail` (the default) a bad line
//! anywhere stops the load in the validation pass, before anything is written; with
//! `--on-error skip` bad lines are left out (both passes skip the same lines) and listed.
//! Chunk keys make a re-run resume an interrupted load, and a load that is already whole in
//! the store is recognized and not repeated unless `again`.

use crate::load::{self, BadLine, Format, KindResult, Mapping, Record, RecordKind};
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use tgms_engine::op::INGEST_CHUNK;
use tgms_engine::{Error, Event, Load, Result};

/// Bad lines listed in a summary; the rest are only counted.
pub const LISTED_BAD_LINES: usize = 20;

/// What a bad line does (`--on-error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// The load fails at the first bad line, in the validation pass: nothing is written.
    #[default]
    Fail,
    /// Bad lines are left out, counted and listed (the first [`LISTED_BAD_LINES`]).
    Skip,
}

/// The batch keys of the chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// `ingest:` + BLAKE3 of the mapping and the input ([`key_prefix`]).
    Derived,
    /// `--batch-key PREFIX`.
    Given(String),
    /// `--no-batch-key`: no keys, so no resume and no repeat detection.
    None,
}

/// Where the input comes from.
pub enum Input {
    /// A file, read a line (row) at a time.
    File(PathBuf),
    /// A text held in memory (the shipped dataset).
    Text(String),
}

impl Input {
    /// A reader of the input from its start.
    fn reader(&self) -> Result<Box<dyn std::io::BufRead + Send + '_>> {
        Ok(match self {
            Input::Text(t) => Box::new(t.as_bytes()),
            Input::File(p) => {
                let f = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
                Box::new(std::io::BufReader::with_capacity(1 << 20, f))
            }
        })
    }
}

/// One ingest as asked.
pub struct Request {
    /// The input's name in messages (its path, or the dataset's).
    pub name: PathBuf,
    /// Where the lines are read from.
    pub input: Input,
    /// How each line is parsed.
    pub format: Format,
    /// How fields become events (rel type, uid prefix, named columns).
    pub map: Mapping,
    /// What a bad line does.
    pub on_error: OnError,
    /// How the chunks are keyed.
    pub keys: Keys,
    /// `--again`: load one more copy of an input that is already whole in the store.
    pub again: bool,
}

/// What a load read and did: the summary every ingest prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Lines (CSV records, Parquet rows) read, header and blank lines included.
    pub lines: u64,
    /// Events the input holds (its good lines' events).
    pub events: u64,
    /// Lines the format ignores: blank, comments, the header.
    pub ignored_lines: u64,
    /// Rows left out by `--only`.
    pub filtered_rows: u64,
    /// Bad lines left out (`--on-error skip`).
    pub skipped_lines: u64,
    /// The first [`LISTED_BAD_LINES`] of the bad lines left out, in input order.
    pub skipped: Vec<BadLine>,
    /// Events this run committed.
    pub committed: u64,
    /// Events whose chunks an earlier run had committed (a resumed load).
    pub already_committed: u64,
    /// Chunks written or acknowledged.
    pub batches: u64,
    /// Of `batches`, the chunks an earlier run had already committed (acknowledged only).
    pub skipped_batches: u64,
    /// The key prefix of the chunks (`PREFIX:N`), when keyed.
    pub batch_key: Option<String>,
    /// Which copy of the input this load is (1 unless `--again`).
    pub copy: u64,
    /// The whole input was already in the store: nothing was written.
    pub already_ingested: bool,
    /// Transaction time (µs) of the first chunk written or acknowledged; `None` without one.
    pub first_tt: Option<i64>,
    /// Transaction time (µs) of the last chunk written or acknowledged; `None` without one.
    pub last_tt: Option<i64>,
}

impl Summary {
    /// The summary object (`docs/ingest.md` §Summary).
    pub fn to_json(&self) -> Value {
        json!({
            "lines": self.lines,
            "events": self.events,
            "ignored_lines": self.ignored_lines,
            "filtered_rows": self.filtered_rows,
            "skipped_lines": self.skipped_lines,
            "skipped": self.skipped.iter().map(BadLine::to_json).collect::<Vec<_>>(),
            "committed": self.committed,
            "already_committed": self.already_committed,
            "batches": self.batches,
            "skipped_batches": self.skipped_batches,
            "batch_key": self.batch_key,
            "copy": self.copy,
            "already_ingested": self.already_ingested,
            "first_tt": self.first_tt,
            "last_tt": self.last_tt,
        })
    }

    /// Counts one record of a pass.
    fn count(&mut self, r: &KindResult) {
        self.lines += 1;
        match r {
            Ok(RecordKind::Event) => self.events += 1,
            Ok(RecordKind::Ignored) => self.ignored_lines += 1,
            Ok(RecordKind::Filtered) => self.filtered_rows += 1,
            Err(b) => {
                self.skipped_lines += 1;
                if self.skipped.len() < LISTED_BAD_LINES {
                    self.skipped.push(b.clone());
                }
            }
        }
    }
}

/// Why a load stopped.
#[derive(Debug)]
pub enum Failure {
    /// A bad line with `--on-error fail`; `Summary` says what was read and committed.
    BadLine(BadLine, Box<Summary>),
    /// The store refused or failed a chunk; `Summary` says what was committed before it,
    /// `in_doubt` the events of a chunk whose outcome is unknown.
    Store(Error, Box<Summary>, u64),
    /// The input could not be read, or the request does not fit it.
    Input(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Input(e)
    }
}

/// Hands every record of the input to `f` (which returns `false` to stop).
pub fn scan(
    req: &Request,
    f: impl FnMut(std::result::Result<Record, BadLine>) -> Result<bool>,
) -> Result<()> {
    scan_with(req, |r| r, f)
}

/// [`scan`] handing `f` each record through `light`, applied where the record was parsed
/// ([`load::read_lines_with`]).
pub fn scan_with<T: Send>(
    req: &Request,
    light: impl Fn(load::LineResult) -> T + Sync,
    f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    load::check_mapping(req.format, &req.map)?;
    match (req.format, &req.input) {
        (Format::Parquet, Input::File(p)) => {
            crate::load_columns::read_parquet(p, &req.map, |r| light(r.record()), f)
        }
        (Format::ArrowIpc, Input::File(p)) => {
            crate::load_columns::read_arrow_ipc(p, &req.map, |r| light(r.record()), f)
        }
        (Format::Parquet | Format::ArrowIpc, Input::Text(_)) => Err(Error::invalid(format!(
            "{} input must be a file",
            req.format.as_str()
        ))),
        _ => load::read_lines_with(
            &req.name,
            req.input.reader()?,
            req.format,
            &req.map,
            light,
            f,
        ),
    }
}

/// The kind of every record of the input, handed to `f` (the validation pass): line
/// formats through [`load::read_line_kinds`], which checks a `snap` line without building
/// its event, and the columnar ones checking each row without building its event either.
fn scan_kinds(req: &Request, f: impl FnMut(KindResult) -> Result<bool>) -> Result<()> {
    use crate::load_columns::{read_arrow_ipc, read_parquet};
    match (req.format, &req.input) {
        (Format::Parquet, Input::File(p)) => {
            load::check_mapping(req.format, &req.map)?;
            read_parquet(p, &req.map, |r| r.kind(), f)
        }
        (Format::ArrowIpc, Input::File(p)) => {
            load::check_mapping(req.format, &req.map)?;
            read_arrow_ipc(p, &req.map, |r| r.kind(), f)
        }
        (Format::Parquet | Format::ArrowIpc, _) => scan_with(req, |r| r.map(|rec| rec.kind()), f),
        _ => load::read_line_kinds(&req.name, req.input.reader()?, req.format, &req.map, f),
    }
}

/// The validation pass: reads the whole input and counts it. With [`OnError::Fail`] the
/// first bad line ends it with [`Failure::BadLine`] (nothing was written: the write pass
/// has not begun).
pub fn validate(req: &Request) -> std::result::Result<Summary, Failure> {
    let mut s = Summary {
        copy: 1,
        ..Summary::default()
    };
    let mut first_bad = None;
    // Only the kinds come back from the parsing threads: no event is kept or moved.
    scan_kinds(req, |r| {
        s.count(&r);
        if let (Err(b), OnError::Fail) = (&r, req.on_error) {
            first_bad = Some(b.clone());
            return Ok(false);
        }
        Ok(true)
    })?;
    match first_bad {
        Some(b) => {
            // What was counted up to the bad line: nothing is committed.
            s.skipped_lines = 0;
            s.skipped.clear();
            Err(Failure::BadLine(b, Box::new(s)))
        }
        None => Ok(s),
    }
}

/// The derived key prefix: `ingest:` + the first 32 hex digits of BLAKE3 over the mapping's
/// description ([`Mapping::describe`], with the `--on-error` policy) and the input's bytes.
/// The same file loaded with another format, rel type, uid prefix or column mapping is
/// another load.
pub fn key_prefix(req: &Request) -> Result<String> {
    let policy = match req.on_error {
        OnError::Fail => "fail",
        OnError::Skip => "skip",
    };
    let head = format!("{}\n{policy}\n", req.map.describe(req.format));
    let io = |e| Error::io(&req.name, e);
    match &req.input {
        Input::Text(t) => {
            tgms_engine::store::ingest_key_prefix(&mut head.as_bytes().chain(t.as_bytes()))
                .map_err(io)
        }
        Input::File(p) => {
            let f = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
            tgms_engine::store::ingest_key_prefix(&mut head.as_bytes().chain(f)).map_err(io)
        }
    }
}

/// The chunk keys of a load of `events` events under `prefix`.
fn chunk_keys(prefix: &str, events: u64) -> impl Iterator<Item = String> + '_ {
    (0..events)
        .step_by(INGEST_CHUNK)
        .map(move |k| format!("{prefix}:{k}"))
}

/// Whether every chunk of a load of `events` events under `prefix` is in the store's log.
fn whole(st: &mut Load, prefix: &str, events: u64) -> Result<bool> {
    for k in chunk_keys(prefix, events) {
        if !st.batch_key_committed(&k)? {
            return Ok(false);
        }
    }
    Ok(events > 0)
}

/// The key prefix of copy `copy` (copy 1 is `prefix` itself, copy k ≥ 2 `prefix/k`).
fn copy_prefix(prefix: &str, copy: u64) -> String {
    if copy == 1 {
        prefix.to_string()
    } else {
        format!("{prefix}/{copy}")
    }
}

/// The write pass: picks the copy (resuming an interrupted one, or recognizing an input
/// already whole in the store), then writes the events in keyed chunks. `tally` is the
/// validation pass's summary; `progress` gets the events handled so far.
pub fn write(
    st: &mut Load,
    req: &Request,
    tally: Summary,
    progress: &mut dyn FnMut(u64),
) -> std::result::Result<Summary, Failure> {
    let mut s = tally;
    let base = match &req.keys {
        Keys::None => None,
        Keys::Given(p) => Some(p.clone()),
        Keys::Derived => Some(key_prefix(req)?),
    };
    let prefix = match &base {
        None => None,
        Some(b) if !req.again => {
            if whole(st, b, s.events)? {
                s.already_ingested = true;
                s.already_committed = s.events;
                s.batch_key = Some(b.clone());
                return Ok(s);
            }
            Some(b.clone())
        }
        Some(b) => {
            // The first copy after the original that is not whole (an interrupted `--again`
            // run resumes its copy).
            let mut copy = 2;
            while whole(st, &copy_prefix(b, copy), s.events)? {
                copy += 1;
            }
            s.copy = copy;
            Some(copy_prefix(b, copy))
        }
    };
    s.batch_key = prefix.clone();
    let expected = s.events;
    let mut chunk: Vec<Event> = Vec::with_capacity(INGEST_CHUNK.min(expected as usize));
    let mut at = 0u64;
    let mut stop: Option<Failure> = None;
    let mut flush =
        |chunk: Vec<Event>, s: &mut Summary, at: &mut u64| -> std::result::Result<(), Failure> {
            let n = chunk.len() as u64;
            let keys = prefix.as_deref().map(|k| (k, *at));
            match st.ingest_events_keyed(chunk, "Node", keys, &mut |_| {}) {
                Ok(r) => {
                    if r.skipped_batches > 0 {
                        s.already_committed += n;
                    } else {
                        s.committed += n;
                    }
                    s.batches += r.batches;
                    s.skipped_batches += r.skipped_batches;
                    s.first_tt = s.first_tt.or(r.first_tt);
                    s.last_tt = r.last_tt.or(s.last_tt);
                    *at += n;
                    Ok(())
                }
                Err(e) => {
                    let in_doubt = if matches!(e, Error::OutcomeUnknown { .. }) {
                        n
                    } else {
                        0
                    };
                    Err(Failure::Store(e, Box::new(s.clone()), in_doubt))
                }
            }
        };
    let mut seen = 0u64;
    let scanned = scan(req, |r| {
        match r {
            Ok(Record::Event(e)) => {
                seen += 1;
                chunk.push(e);
                if chunk.len() == INGEST_CHUNK {
                    // The next chunk starts at full size: a chunk grown by doubling would
                    // copy its events again at every growth.
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(INGEST_CHUNK));
                    if let Err(f) = flush(full, &mut s, &mut at) {
                        stop = Some(f);
                        return Ok(false);
                    }
                    progress(at);
                }
            }
            Ok(_) => {}
            Err(b) if req.on_error == OnError::Fail => {
                // The input changed since the validation pass.
                stop = Some(Failure::BadLine(b, Box::new(s.clone())));
                return Ok(false);
            }
            Err(_) => {}
        }
        Ok(true)
    });
    if let Some(f) = stop {
        return Err(f);
    }
    if let Err(e) = scanned {
        return Err(Failure::Store(e, Box::new(s), 0));
    }
    if seen != expected {
        return Err(Failure::Store(
            Error::state(format!(
                "{} changed during the load: the validation pass read {expected} events, the \
                 write pass {seen}",
                req.name.display()
            )),
            Box::new(s),
            0,
        ));
    }
    if !chunk.is_empty() {
        flush(chunk, &mut s, &mut at)?;
        progress(at);
    }
    Ok(s)
}

/// The error payload of a failed load: the engine's (or the bad line's) payload with the
/// summary of what was read and committed in `details`, and how to go on.
pub fn failure_payload(f: &Failure, name: &Path) -> Value {
    match f {
        Failure::BadLine(b, s) => {
            let mut d = s.to_json();
            d["file"] = json!(name.display().to_string());
            for (k, v) in b.to_json().as_object().into_iter().flatten() {
                d[k] = v.clone();
            }
            d["events_committed"] = json!(s.committed + s.already_committed);
            json!({
                "error": "E_INVALID_ARG",
                "message": format!(
                    "{}:{}: {}; {} (fix the line, or give --on-error skip to leave bad lines out)",
                    name.display(), b.line, b.reason(),
                    if s.committed == 0 { "nothing was written".to_string() } else {
                        format!("{} events were committed before it", s.committed)
                    }
                ),
                "details": d,
            })
        }
        Failure::Store(e, s, in_doubt) => {
            let mut p = tgms_operators::error::store_payload(e);
            let mut d = s.to_json();
            d["file"] = json!(name.display().to_string());
            d["events_committed"] = json!(s.committed + s.already_committed);
            d["in_doubt"] = json!(in_doubt);
            d["resume"] = json!(format!(
                "{} events of this input are in the store{}; re-run the same command: {}",
                s.committed + s.already_committed,
                if *in_doubt > 0 {
                    format!(" and the {in_doubt} of the chunk being written may be")
                } else {
                    String::new()
                },
                if s.batch_key.is_some() {
                    "committed chunks are skipped and the load resumes after them"
                } else {
                    "without batch keys (--no-batch-key) it loads everything again"
                }
            ));
            if let (Some(pd), Some(dm)) = (p["details"].as_object_mut(), d.as_object()) {
                for (k, v) in dm {
                    pd.entry(k.clone()).or_insert(v.clone());
                }
            } else {
                p["details"] = d;
            }
            p
        }
        Failure::Input(e) => tgms_operators::error::store_payload(e),
    }
}
