//! The operator error payload of `operators.md` §5: `{"error", "message", "details"}`.

use serde_json::{json, Map, Value};
use tgms_engine::error::ErrorCode;

/// The spec's error codes (§5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Code {
    Schema,
    InvalidArg,
    NotFound,
    Cost,
    Limit,
    State,
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
    pub code: Code,
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
        Error::NotFound { details, .. } | Error::State { details, .. } => details.clone(),
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
}
