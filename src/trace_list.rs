//! The traces and ask records kept in a store directory (`traces/<trace_id>`,
//! `asks/<ask_id>.json`): listed newest first for `tgms traces`, and looked up by a unique
//! id prefix for `tgms view`.
//!
//! Both are content-addressed and carry no wall-clock time of their own, so the time listed
//! is when the file was written (its modification time): the first run that produced it
//! (re-running the same plan on the same store state finds the file and leaves it as it is).

use crate::eval::utc;
use serde_json::{json, Value};
use std::path::Path;
use std::time::UNIX_EPOCH;
use tgms_engine::canon;

/// What a stored id names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A verifier trace (`tgms plan run`, `tgms demo`, the MCP server, `tgms ask`).
    Trace,
    /// An ask record (`tgms ask`): the question, planning history and gated answers.
    Ask,
}

impl Kind {
    /// `trace` or `ask`, as listings and JSON show it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Trace => "trace",
            Kind::Ask => "ask",
        }
    }
}

/// One stored trace or ask record.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Trace or ask record.
    pub kind: Kind,
    /// The full id (64 hex digits).
    pub id: String,
    /// When the file was written, µs since the epoch (transaction-time-like wall clock of
    /// this machine, not a store clock).
    pub written_us: i64,
    /// The plan id (of the plan that ran, for an ask record; empty when none ran).
    pub plan_id: String,
    /// `ok`, `failed` (a step failed or the answer could not be computed), `no plan ran`
    /// (an ask whose planning never produced a valid plan) or `unreadable: ...`.
    pub status: String,
    /// The question (ask records only: a trace does not record it).
    pub question: String,
    /// The trace of an ask record (empty when no plan ran).
    pub trace_id: String,
}

impl Entry {
    /// The entry as JSON, plus `id_prefix` (the first 12 digits) and `written_utc`.
    pub fn to_json(&self) -> Value {
        json!({"kind": self.kind.name(), "id": self.id, "id_prefix": &self.id[..12.min(self.id.len())],
            "written_us": self.written_us, "written_utc": iso_utc(self.written_us),
            "plan_id": self.plan_id, "status": self.status, "question": self.question,
            "trace_id": self.trace_id})
    }
}

/// `YYYY-MM-DD HH:MM:SS` UTC, for the table.
fn seconds_utc(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .map_or_else(|| utc(us), |d| d.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// ISO-8601 UTC to the microsecond, for JSON.
fn iso_utc(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || utc(us),
        |d| d.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

fn is_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn written_us(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

fn trace_status(t: &Value) -> String {
    if t["ok"] == Value::Bool(true) {
        "ok".into()
    } else {
        "failed".into()
    }
}

/// Every trace and ask record in `store`, newest first (ties by id). A file that cannot be
/// read or parsed is listed with status `unreadable: ...`, never skipped.
pub fn list(store: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for (kind, sub, suffix) in [(Kind::Trace, "traces", ""), (Kind::Ask, "asks", ".json")] {
        let Ok(rd) = std::fs::read_dir(store.join(sub)) else {
            continue;
        };
        for de in rd.flatten() {
            let name = de.file_name().to_string_lossy().to_string();
            let Some(id) = name.strip_suffix(suffix).filter(|i| is_id(i)) else {
                continue; // temporary files (`.ID.tmp`) and anything not ours
            };
            let path = de.path();
            let mut e = Entry {
                kind,
                id: id.to_ascii_lowercase(),
                written_us: written_us(&path),
                plan_id: String::new(),
                status: String::new(),
                question: String::new(),
                trace_id: String::new(),
            };
            match std::fs::read_to_string(&path)
                .map_err(|x| x.to_string())
                .and_then(|s| canon::parse(&s).map_err(|x| x.to_string()))
            {
                Err(why) => e.status = format!("unreadable: {why}"),
                Ok(v) => match kind {
                    Kind::Trace => {
                        e.plan_id = v["plan_id"].as_str().unwrap_or("").into();
                        e.status = trace_status(&v);
                    }
                    Kind::Ask => {
                        e.question = v["question"].as_str().unwrap_or("").into();
                        e.plan_id = v["trace"]["plan_id"].as_str().unwrap_or("").into();
                        e.trace_id = v["trace"]["trace_id"].as_str().unwrap_or("").into();
                        e.status = if v["trace"].is_null() {
                            "no plan ran".into()
                        } else {
                            trace_status(&v["trace"])
                        };
                    }
                },
            }
            out.push(e);
        }
    }
    out.sort_by(|a, b| {
        b.written_us
            .cmp(&a.written_us)
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| a.kind.name().cmp(b.kind.name()))
    });
    out
}

/// A prefix that names no stored id, or more than one.
#[derive(Debug, Clone, PartialEq)]
pub enum PrefixError {
    /// Not 1–64 hex digits.
    NotHex {
        /// The prefix as given.
        given: String,
    },
    /// No stored trace or ask record starts with it.
    Unknown {
        /// The prefix as given.
        given: String,
        /// The newest stored entries (at most 10), newest first.
        recent: Vec<Entry>,
    },
    /// Several do.
    Ambiguous {
        /// The prefix as given.
        given: String,
        /// Every entry whose id starts with it, newest first.
        matches: Vec<Entry>,
    },
}

/// How many candidates an error lists.
const LISTED: usize = 10;

impl PrefixError {
    /// The structured error payload (`{error, message, details}`).
    pub fn payload(&self) -> Value {
        let ids = |v: &[Entry]| -> Vec<Value> {
            v.iter()
                .take(LISTED)
                .map(|e| {
                    json!({"kind": e.kind.name(), "id": e.id, "plan_id": e.plan_id,
                    "status": e.status, "written_utc": iso_utc(e.written_us)})
                })
                .collect()
        };
        let fix = "run `tgms traces STORE` to list the stored ids, then give a longer prefix or the full id";
        match self {
            PrefixError::NotHex { given } => json!({"error": "E_INVALID_ARG",
                "message": format!("'{given}' is not a trace or ask id: an id is 64 hex digits, and any unique prefix of one is accepted"),
                "details": {"given": given, "problem": "not an id prefix", "repair": fix}}),
            PrefixError::Unknown { given, recent } => json!({"error": "E_NOT_FOUND",
                "message": format!("unknown trace or ask id '{given}': no stored trace or ask record starts with it"),
                "details": {"given": given, "candidates": ids(recent),
                    "candidates_are": "the newest stored ids", "repair": fix}}),
            PrefixError::Ambiguous { given, matches } => json!({"error": "E_INVALID_ARG",
                "message": format!("the id prefix '{given}' matches {} stored ids", matches.len()),
                "details": {"given": given, "problem": "ambiguous id prefix", "candidates": ids(matches),
                    "n_matches": matches.len(), "repair": fix}}),
        }
    }
}

/// The one stored trace or ask record whose id starts with `prefix` (case-insensitive).
/// An ask record and its own trace never share an id, so a full id is always unique.
pub fn resolve(store: &Path, prefix: &str) -> Result<Entry, PrefixError> {
    let p = prefix.to_ascii_lowercase();
    if p.is_empty() || p.len() > 64 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PrefixError::NotHex {
            given: prefix.into(),
        });
    }
    let all = list(store);
    let mut matches: Vec<Entry> = all
        .iter()
        .filter(|e| e.id.starts_with(&p))
        .cloned()
        .collect();
    match matches.len() {
        0 => Err(PrefixError::Unknown {
            given: prefix.into(),
            recent: all.into_iter().take(LISTED).collect(),
        }),
        1 => Ok(matches.remove(0)),
        _ => Err(PrefixError::Ambiguous {
            given: prefix.into(),
            matches,
        }),
    }
}

/// The listing as a table for people: newest first, ids shortened to 12 digits.
pub fn table(entries: &[Entry]) -> String {
    let mut rows = vec![[
        "kind".to_string(),
        "id".into(),
        "written (UTC)".into(),
        "status".into(),
        "plan_id".into(),
        "question / trace".into(),
    ]];
    for e in entries {
        let what = match e.kind {
            Kind::Ask if e.trace_id.is_empty() => e.question.clone(),
            Kind::Ask => format!(
                "{} → trace {}",
                e.question,
                &e.trace_id[..12.min(e.trace_id.len())]
            ),
            Kind::Trace => String::new(),
        };
        rows.push([
            e.kind.name().into(),
            e.id[..12].into(),
            seconds_utc(e.written_us),
            e.status.clone(),
            e.plan_id.clone(),
            what,
        ]);
    }
    let mut w = [0usize; 6];
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    if entries.is_empty() {
        s.push_str("(no traces or ask records in this store yet: `tgms plan run` and `tgms ask` keep them)\n");
    }
    s.trim_end().to_string()
}
