//! Typed access to validated, default-filled arguments. The schema has been checked before a
//! kernel runs, so a mismatch here is a registry bug and becomes `E_INTERNAL`, never a panic.

use crate::error::{Code, OpError};
use serde_json::{Map, Value};
use tgms_engine::OPEN_END;

/// The filled arguments of one call.
#[derive(Clone, Debug)]
pub struct Args(pub Map<String, Value>);

fn bad(name: &str, want: &str) -> OpError {
    OpError::internal(format!("argument '{name}' is not {want} after validation"))
}

impl Args {
    /// The raw value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// A required integer.
    pub fn int(&self, name: &str) -> Result<i64, OpError> {
        self.0
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| bad(name, "an integer"))
    }

    /// A required string.
    pub fn str(&self, name: &str) -> Result<&str, OpError> {
        self.0
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(name, "a string"))
    }

    /// A string or null/absent.
    pub fn opt_str(&self, name: &str) -> Result<Option<&str>, OpError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(name, "a string or null")),
        }
    }

    /// A boolean (absent = false).
    pub fn bool(&self, name: &str) -> Result<bool, OpError> {
        match self.0.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(name, "a boolean")),
        }
    }

    /// A list of strings, or `None` for null/absent.
    pub fn str_list(&self, name: &str) -> Result<Option<Vec<String>>, OpError> {
        str_list_of(self.0.get(name), name)
    }

    /// A `WINDOW` argument as `(t_a, t_b)`, or `None` for null/absent.
    pub fn window(&self, name: &str) -> Result<Option<(i64, i64)>, OpError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(w) => match (
                w.get("t_a").and_then(Value::as_i64),
                w.get("t_b").and_then(Value::as_i64),
            ) {
                (Some(a), Some(b)) => Ok(Some((a, b))),
                _ => Err(bad(name, "a window")),
            },
        }
    }

    /// `as_of_tt` (default `OPEN_END`).
    pub fn as_of_tt(&self) -> i64 {
        self.0
            .get("as_of_tt")
            .and_then(Value::as_i64)
            .unwrap_or(OPEN_END)
    }

    /// `limit` (default 100).
    pub fn limit(&self) -> usize {
        self.0
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(100, |l| l as usize)
    }

    /// The page offset of `cursor` (§6.1): null, absent or `""` → 0; otherwise a decimal
    /// integer string `>= 0`, else `ERR(E_INVALID_ARG, "bad cursor: '<cursor>'")`.
    pub fn offset(&self) -> Result<usize, OpError> {
        match self.0.get("cursor") {
            None | Some(Value::Null) => Ok(0),
            Some(Value::String(s)) if s.is_empty() => Ok(0),
            Some(Value::String(s)) if s.bytes().all(|b| b.is_ascii_digit()) => {
                // Offsets past any list are legal (empty page); saturate huge ones.
                Ok(s.parse::<usize>().unwrap_or(usize::MAX))
            }
            Some(Value::String(s)) => {
                Err(OpError::new(Code::InvalidArg, format!("bad cursor: '{s}'")))
            }
            Some(other) => Err(OpError::new(
                Code::InvalidArg,
                format!("bad cursor: '{}'", crate::json::to_string(other)),
            )),
        }
    }
}

/// A list of strings from a value, `None` for null/absent.
pub fn str_list_of(v: Option<&Value>, name: &str) -> Result<Option<Vec<String>>, OpError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(name, "a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(bad(name, "a list of strings")),
    }
}
