//! The operator error payload of `operators.md` §5: `{"error", "message", "details"}`.

use serde_json::{json, Map, Value};
use tgms_engine::error::ErrorCode;

/// The spec's error codes (§5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Code {
    /// `E_SCHEMA`: the arguments do not match the operator's JSON Schema.
    Schema,
    /// `E_INVALID_ARG`: well-typed arguments that cannot be used (unknown operator, bad
    /// time string, inverted window, ...).
    InvalidArg,
    /// `E_NOT_FOUND`: a named entity, result or trace does not exist.
    NotFound,
    /// `E_COST`: the cost estimate exceeds a ceiling; the call is refused before it runs.
    Cost,
    /// `E_LIMIT`: a hard cap of the operator or executor (bucket count, row budget) is
    /// exceeded.
    Limit,
    /// `E_STATE`: the store's state (lock, damage, I/O, an unknown outcome).
    State,
    /// `E_INTERNAL`: a bug or an unexpected failure.
    Internal,
}

impl Code {
    /// The spec spelling (`E_SCHEMA`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Schema => "E_SCHEMA",
            Code::InvalidArg => "E_INVALID_ARG",
            Code::NotFound => "E_NOT_FOUND",
            Code::Cost => "E_COST",
            Code::Limit => "E_LIMIT",
            Code::State => "E_STATE",
            Code::Internal => "E_INTERNAL",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operator error; returned (never thrown across the tool boundary) as its payload.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct OpError {
    /// The error code.
    pub code: Code,
    /// What went wrong, in words (the payload's `message`).
    pub message: String,
    /// Always a JSON object (possibly empty).
    pub details: Value,
}

impl OpError {
    /// An error with empty details.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        OpError {
            code,
            message: message.into(),
            details: Value::Object(Map::new()),
        }
    }

    /// An error with details (an object).
    pub fn with(code: Code, message: impl Into<String>, details: Value) -> Self {
        OpError {
            code,
            message: message.into(),
            details,
        }
    }

    /// `E_INVALID_ARG` with empty details.
    pub fn invalid(message: impl Into<String>) -> Self {
        OpError::new(Code::InvalidArg, message)
    }

    /// `E_INTERNAL`: a bug; the message says where.
    pub fn internal(message: impl Into<String>) -> Self {
        OpError::new(Code::Internal, message)
    }

    /// `ERR(E_NOT_FOUND, "unknown uid: <uid>", {"uid": <uid>})`.
    pub fn unknown_uid(uid: &str) -> Self {
        OpError::with(
            Code::NotFound,
            format!("unknown uid: {uid}"),
            json!({ "uid": uid }),
        )
    }

    /// The spec payload `{"error", "message", "details"}`.
    pub fn payload(&self) -> Value {
        json!({"error": self.code.as_str(), "message": self.message, "details": self.details})
    }
}

impl From<tgms_engine::Error> for OpError {
    fn from(e: tgms_engine::Error) -> Self {
        OpError::with(store_code(&e), e.message(), store_details(&e))
    }
}

/// The spec payload `{"error", "message", "details"}` of an engine error: what the CLI, the
/// servers and the Python package report for it.
pub fn store_payload(e: &tgms_engine::Error) -> Value {
    json!({"error": store_code(e).as_str(), "message": e.message(), "details": store_details(e)})
}

/// The operator code of an engine error's spec code.
fn store_code(e: &tgms_engine::Error) -> Code {
    match e.code() {
        ErrorCode::InvalidArg => Code::InvalidArg,
        ErrorCode::NotFound => Code::NotFound,
        ErrorCode::State => Code::State,
    }
}

/// The `details` object of an engine error's payload, from the variant's fields.
fn store_details(e: &tgms_engine::Error) -> Value {
    use tgms_engine::Error;
    match e {
        Error::State { about, .. } => state_details(about),
        Error::LogDamaged {
            file,
            record,
            offset,
            kind,
        } => json!({"file": file.display().to_string(), "record": record, "offset": offset,
            "kind": kind.to_string()}),
        Error::Corruption { file, offset, kind } => {
            json!({"file": file.display().to_string(), "offset": offset, "kind": kind.to_string()})
        }
        Error::BadInput { file, line, reason } => {
            json!({"file": file.display().to_string(), "line": line, "reason": reason})
        }
        Error::BadOp {
            index,
            field,
            suggestion,
            ..
        } => json!({"index": index, "field": field, "suggestion": suggestion}),
        Error::OutcomeUnknown {
            seq,
            tt,
            record,
            batch_key,
            cause,
        } => json!({"outcome": "unknown", "seq": seq, "tt": tt, "record": record,
            "batch_key": batch_key, "cause": cause}),
        Error::Io { path, source } => {
            json!({"file": path.display().to_string(), "os_error": source.to_string()})
        }
        // InvalidArg, Poisoned, and variants a later engine adds: no details.
        _ => json!({}),
    }
}

/// The `details` of an `E_STATE` error from what it is about.
fn state_details(about: &tgms_engine::StateAbout) -> Value {
    use tgms_engine::StateAbout as A;
    let path = |p: &std::path::Path| p.display().to_string();
    match about {
        A::Locked {
            holder_pid,
            lock_file,
        } => json!({"holder_pid": holder_pid, "lock_file": path(lock_file)}),
        A::NotEmpty { path: p } | A::NoStore { path: p } => json!({"path": path(p)}),
        A::ShortenedLog {
            file,
            log_good_bytes,
            log_good_records,
            checkpoint_offset,
            checkpoint_record,
        } => json!({
            "file": path(file),
            "log_good_bytes": log_good_bytes, "log_good_records": log_good_records,
            "checkpoint_offset": checkpoint_offset, "checkpoint_record": checkpoint_record,
            "fix": "restore wal.log from a backup, or rerun with --salvage",
        }),
        A::NotAnEventLog { file } => json!({"file": path(file)}),
        A::BatchIdMismatch {
            file,
            line,
            found,
            expected,
        } => json!({"file": path(file), "line": line, "batch_id": found, "expected": expected}),
        A::AtLine { file, line, about } => {
            // The inner details with the file and line of the event log set over them.
            let mut d = match state_details(about) {
                Value::Object(d) => d,
                _ => serde_json::Map::new(),
            };
            d.insert("file".into(), json!(path(file)));
            d.insert("line".into(), json!(line));
            Value::Object(d)
        }
        // Nothing, and kinds a later engine adds: no details.
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgms_engine::{CorruptionKind, Error};

    #[test]
    fn a_corrupt_file_payload_names_the_file_offset_and_kind() {
        let kinds = [
            (
                CorruptionKind::BadMagic { format: "segment" },
                "bad magic: not a tgms segment",
            ),
            (
                CorruptionKind::ChecksumMismatch {
                    what: "chunk 12".into(),
                },
                "chunk 12 checksum mismatch",
            ),
            (
                CorruptionKind::UnsupportedVersion {
                    what: "log format major",
                    version: 9,
                    reads: Some(1),
                },
                "log format major version 9 is not supported (this build reads 1)",
            ),
            (
                CorruptionKind::from("value -7 at index 0 is not an id below 4").in_chunk(73),
                "chunk 73: value -7 at index 0 is not an id below 4",
            ),
        ];
        for (kind, text) in kinds {
            let e = Error::Corruption {
                file: "s/seg-1.tgs".into(),
                offset: 80,
                kind,
            };
            let want = json!({"error": "E_STATE",
                "message": format!("corrupt store file s/seg-1.tgs at offset 80: {text}"),
                "details": {"file": "s/seg-1.tgs", "offset": 80, "kind": text}});
            assert_eq!(store_payload(&e), want);
            assert_eq!(OpError::from(e).payload(), want);
        }
    }

    #[test]
    fn a_damaged_log_payload_has_the_exact_message() {
        let e = Error::LogDamaged {
            file: "s/wal.tgl".into(),
            record: 3,
            offset: 100,
            kind: "record checksum mismatch".into(),
        };
        let want = json!({"error": "E_STATE", "message": "event log damaged at record 3",
            "details": {"file": "s/wal.tgl", "record": 3, "offset": 100,
                "kind": "record checksum mismatch"}});
        assert_eq!(store_payload(&e), want);
    }

    #[test]
    fn state_payloads_are_the_hand_written_ones() {
        use tgms_engine::StateAbout as A;
        let st = |message: &str, about: A| Error::State {
            message: message.into(),
            about,
        };
        let cases = [
            (st("m", A::Nothing), json!({})),
            (
                st(
                    "store is locked by another writer",
                    A::Locked {
                        holder_pid: Some(42),
                        lock_file: "s/LOCK".into(),
                    },
                ),
                json!({"holder_pid": 42, "lock_file": "s/LOCK"}),
            ),
            (
                st(
                    "m",
                    A::Locked {
                        holder_pid: None,
                        lock_file: "s/LOCK".into(),
                    },
                ),
                json!({"holder_pid": null, "lock_file": "s/LOCK"}),
            ),
            (
                st("m", A::NotEmpty { path: "d".into() }),
                json!({"path": "d"}),
            ),
            (
                st("m", A::NoStore { path: "d".into() }),
                json!({"path": "d"}),
            ),
            (
                st(
                    "m",
                    A::ShortenedLog {
                        file: "s/wal.tgl".into(),
                        log_good_bytes: 10,
                        log_good_records: 1,
                        checkpoint_offset: 20,
                        checkpoint_record: 2,
                    },
                ),
                json!({"file": "s/wal.tgl", "log_good_bytes": 10, "log_good_records": 1,
                    "checkpoint_offset": 20, "checkpoint_record": 2,
                    "fix": "restore wal.log from a backup, or rerun with --salvage"}),
            ),
            (
                st(
                    "m",
                    A::NotAnEventLog {
                        file: "l.jsonl".into(),
                    },
                ),
                json!({"file": "l.jsonl"}),
            ),
            (
                st(
                    "m",
                    A::BatchIdMismatch {
                        file: "l.jsonl".into(),
                        line: 4,
                        found: "ab".into(),
                        expected: "cd".into(),
                    },
                ),
                json!({"file": "l.jsonl", "line": 4, "batch_id": "ab", "expected": "cd"}),
            ),
            (
                st(
                    "m",
                    A::AtLine {
                        file: "l.jsonl".into(),
                        line: 5,
                        about: Box::new(A::NoStore { path: "d".into() }),
                    },
                ),
                json!({"path": "d", "file": "l.jsonl", "line": 5}),
            ),
            (
                st(
                    "m",
                    A::AtLine {
                        file: "l.jsonl".into(),
                        line: 5,
                        about: Box::new(A::NotAnEventLog { file: "x".into() }),
                    },
                ),
                json!({"file": "l.jsonl", "line": 5}),
            ),
        ];
        for (e, details) in cases {
            let want = json!({"error": "E_STATE", "message": e.message(), "details": details});
            assert_eq!(store_payload(&e), want);
            assert_eq!(OpError::from(e).payload(), want);
        }
        let nf = Error::not_found("no version");
        assert_eq!(
            store_payload(&nf),
            json!({"error": "E_NOT_FOUND", "message": "no version", "details": {}})
        );
    }
}
