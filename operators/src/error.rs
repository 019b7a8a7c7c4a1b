//! The operator error payload of `operators.md` §5: `{"error", "message", "details"}`.

use serde_json::{json, Map, Value};

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
        let code = match e.code() {
            "E_INVALID_ARG" => Code::InvalidArg,
            "E_NOT_FOUND" => Code::NotFound,
            "E_STATE" => Code::State,
            _ => Code::Internal,
        };
        OpError::with(code, e.message(), e.details())
    }
}
