//! The verifier's one error enum. Every variant maps to a spec error code
//! (`plans-and-claims.md` §6, `operators.md` §5.2); [`Error::payload`] is the one place that
//! builds the agent-facing `{"error", "message", "details"}` of a trace's step record, the
//! CLI and the servers. The `Display` text of every variant is the payload's `message`.

use serde_json::{json, Value};
use tgms_operators::{Code, OpError};

/// Result alias for the verifier.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the verifier fails with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operator call or an operator-layer check (time strings) failed; its payload is the
    /// operator's.
    #[error("{}", .0.message)]
    Op(#[from] OpError),
    /// A `$ref` path that breaks the grammar of §4.2, or a `$ref` value that is not a string
    /// (`E_INVALID_ARG`).
    #[error("{message}")]
    RefSyntax {
        /// The §4.2 message (`bad $ref 's1'`, `bad $ref segment ...`).
        message: String,
    },
    /// A `$ref` path that cannot be evaluated against its step's output (`E_INVALID_ARG`).
    #[error("$ref '{raw}': {reason}")]
    RefEval {
        /// The path as written.
        raw: String,
        /// What failed: a field not found, not a list, an index out of range, no output.
        reason: String,
    },
    /// A `$ref` path that the producing operator's declared output contract does not have
    /// (§5 6c, `E_SCHEMA`).
    #[error("{message}")]
    Contract {
        /// What is wrong, without the `$ref '<raw>': ` prefix the static verifier adds.
        message: String,
        /// The legal field names at the failing segment (empty where none apply).
        available: Vec<String>,
    },
    /// Plan text that is not JSON (`E_SCHEMA`; `details.path` is the `plan` argument).
    #[error("plan is not valid JSON: {reason}")]
    PlanNotJson {
        /// The JSON parser's message.
        reason: String,
    },
    /// A plan of more than `MAX_STEPS` steps; it is refused without a trace (`E_LIMIT`).
    #[error("plan exceeds 12 steps")]
    TooManySteps,
    /// The plan's wall clock ran out before a step started (`E_LIMIT`).
    #[error("plan wall clock {elapsed_s:.1}s > 60s")]
    WallClock {
        /// Seconds since the plan started.
        elapsed_s: f64,
    },
    /// The rows the plan's steps returned went over `max_total_rows` (`E_LIMIT`).
    #[error("materialized rows {rows} > {max_total_rows}")]
    TotalRows {
        /// The rows returned so far.
        rows: i64,
        /// The ceiling.
        max_total_rows: i64,
    },
    /// A reducer over a truncated input: it would make one number of a part (`E_LIMIT`).
    #[error("compute {reducer} would reduce a truncated result to one number; page through the input with cursor, raise the producing step's limit, or narrow the window/grouping so the input is complete")]
    TaintedReducer {
        /// The reducer (`fn` of the `compute` step).
        reducer: String,
    },
    /// A reducer whose input's complete result has more rows than `max_reducer_rows`
    /// (`E_LIMIT`, with a narrowing repair).
    #[error("compute {reducer}: the complete result of '{input}' has {rows_total} rows, over the executor's max_reducer_rows {max_reducer_rows}; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_rows in the ceilings")]
    ReducerRows {
        /// The reducer (`fn` of the `compute` step).
        reducer: String,
        /// The ref of its input, as written.
        input: String,
        /// Rows of the complete result.
        rows_total: i64,
        /// The ceiling.
        max_reducer_rows: i64,
        /// The producing step's literal window `(t_a, t_b)`, when it has one.
        window: Option<(i64, i64)>,
    },
    /// A reducer whose input's complete result is estimated to need more memory than
    /// `max_reducer_bytes` (`E_LIMIT`, with a narrowing repair).
    #[error("compute {reducer}: the complete result of '{input}' has {rows_total} rows, estimated to need {peak_bytes} bytes of memory as the reducer's input, over the executor's max_reducer_bytes {max_reducer_bytes}; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_bytes in the ceilings if the machine has the memory")]
    ReducerBytes {
        /// The reducer (`fn` of the `compute` step).
        reducer: String,
        /// The ref of its input, as written.
        input: String,
        /// Rows of the complete result.
        rows_total: i64,
        /// The estimated peak bytes of the reducer over it.
        peak_bytes: i64,
        /// The ceiling.
        max_reducer_bytes: i64,
        /// The producing step's literal window `(t_a, t_b)`, when it has one.
        window: Option<(i64, i64)>,
    },
    /// A step skipped because a step it depends on did not succeed (`E_UPSTREAM`).
    #[error("a dependency failed")]
    Upstream,
    /// A step's result could not be stored in the result store (`E_INTERNAL`).
    #[error("cannot store the result: {0}")]
    Store(#[source] std::io::Error),
    /// A claim field that does not have the shape its type needs (`E_INVALID_ARG`); the
    /// message shows the first 80 characters of `detail`.
    #[error("malformed claim ({})", first_chars(.detail, 80))]
    MalformedClaim {
        /// Which field is wrong, and how.
        detail: String,
    },
    /// A claim's `from` names a step whose evidence is not loaded (`E_NOT_FOUND`).
    #[error("evidence step unavailable")]
    EvidenceUnavailable {
        /// The step id.
        step: String,
    },
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

impl Error {
    /// The operator code; `None` for `E_UPSTREAM`, which only a trace's step record has.
    fn op_code(&self) -> Option<Code> {
        Some(match self {
            Error::Op(e) => e.code,
            Error::RefSyntax { .. } | Error::RefEval { .. } | Error::MalformedClaim { .. } => {
                Code::InvalidArg
            }
            Error::Contract { .. } | Error::PlanNotJson { .. } => Code::Schema,
            Error::TooManySteps
            | Error::WallClock { .. }
            | Error::TotalRows { .. }
            | Error::TaintedReducer { .. }
            | Error::ReducerRows { .. }
            | Error::ReducerBytes { .. } => Code::Limit,
            Error::Store(_) => Code::Internal,
            Error::EvidenceUnavailable { .. } => Code::NotFound,
            Error::Upstream => return None,
        })
    }

    /// The spec error code (`E_LIMIT`, `E_UPSTREAM`, ...).
    pub fn code(&self) -> &'static str {
        self.op_code().map_or("E_UPSTREAM", Code::as_str)
    }

    /// The payload's `details` object.
    pub fn details(&self) -> Value {
        match self {
            Error::Op(e) => e.details.clone(),
            Error::Contract { available, .. } => json!({"repair": {"available": available}}),
            Error::PlanNotJson { .. } => json!({"path": ["plan"]}),
            Error::ReducerRows {
                input,
                rows_total,
                max_reducer_rows,
                window,
                ..
            } => json!({"ref": input, "rows_total": rows_total,
                "max_reducer_rows": max_reducer_rows,
                "repair": narrowing(json!({"max_reducer_rows": rows_total}), *window,
                    *max_reducer_rows as f64 / *rows_total as f64)}),
            Error::ReducerBytes {
                input,
                rows_total,
                peak_bytes,
                max_reducer_bytes,
                window,
                ..
            } => json!({"ref": input, "rows_total": rows_total,
                "estimated_peak_bytes": peak_bytes, "max_reducer_bytes": max_reducer_bytes,
                "repair": narrowing(json!({"max_reducer_bytes": peak_bytes}), *window,
                    *max_reducer_bytes as f64 / *peak_bytes as f64)}),
            _ => json!({}),
        }
    }

    /// The agent-facing payload `{"error", "message", "details"}`.
    pub fn payload(&self) -> Value {
        json!({"error": self.code(), "message": self.to_string(), "details": self.details()})
    }

    /// This error as an operator error with the same payload, for surfaces that report
    /// operator errors (`E_UPSTREAM`, which operators do not have, becomes `E_INTERNAL`).
    pub fn into_op_error(self) -> OpError {
        match self {
            Error::Op(e) => e,
            other => OpError::with(
                other.op_code().unwrap_or(Code::Internal),
                other.to_string(),
                other.details(),
            ),
        }
    }
}

/// The repair of a reducer over budget: narrow the producing step, or raise the ceiling
/// (`raise`); with a literal window, that window cut to the budget's share `frac`.
fn narrowing(raise: Value, window: Option<(i64, i64)>, frac: f64) -> Value {
    let mut repair = json!({"narrow": ["a smaller window", "rel_types",
        "an endpoint_filter cohort", "coarser grouping"], "or_raise_ceiling": raise});
    if let Some((a, b)) = window.filter(|(a, b)| a < b) {
        let nb = a + (((b - a) as f64) * frac).floor().max(1.0) as i64;
        repair["window"] = json!({"t_a": a, "t_b": nb});
    }
    repair
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_has_its_code_and_payload() {
        let narrow = json!([
            "a smaller window",
            "rel_types",
            "an endpoint_filter cohort",
            "coarser grouping"
        ]);
        let cases = [
            (
                Error::Op(OpError::with(Code::Cost, "too dear", json!({"ceiling": 5}))),
                json!({"error": "E_COST", "message": "too dear", "details": {"ceiling": 5}}),
            ),
            (
                Error::RefSyntax {
                    message: "bad $ref 's1'".into(),
                },
                json!({"error": "E_INVALID_ARG", "message": "bad $ref 's1'", "details": {}}),
            ),
            (
                Error::RefEval {
                    raw: "s1.x".into(),
                    reason: "field 'x' not found".into(),
                },
                json!({"error": "E_INVALID_ARG", "message": "$ref 's1.x': field 'x' not found",
                    "details": {}}),
            ),
            (
                Error::Contract {
                    message: "op outputs no field 'x' (available: rows)".into(),
                    available: vec!["rows".into()],
                },
                json!({"error": "E_SCHEMA", "message": "op outputs no field 'x' (available: rows)",
                    "details": {"repair": {"available": ["rows"]}}}),
            ),
            (
                Error::PlanNotJson {
                    reason: "EOF while parsing a value at line 1 column 0".into(),
                },
                json!({"error": "E_SCHEMA",
                    "message": "plan is not valid JSON: EOF while parsing a value at line 1 column 0",
                    "details": {"path": ["plan"]}}),
            ),
            (
                Error::TooManySteps,
                json!({"error": "E_LIMIT", "message": "plan exceeds 12 steps", "details": {}}),
            ),
            (
                Error::WallClock { elapsed_s: 61.04 },
                json!({"error": "E_LIMIT", "message": "plan wall clock 61.0s > 60s",
                    "details": {}}),
            ),
            (
                Error::TotalRows {
                    rows: 11,
                    max_total_rows: 10,
                },
                json!({"error": "E_LIMIT", "message": "materialized rows 11 > 10", "details": {}}),
            ),
            (
                Error::TaintedReducer {
                    reducer: "sum".into(),
                },
                json!({"error": "E_LIMIT", "message": "compute sum would reduce a truncated result to one number; page through the input with cursor, raise the producing step's limit, or narrow the window/grouping so the input is complete",
                    "details": {}}),
            ),
            (
                Error::ReducerRows {
                    reducer: "count".into(),
                    input: "s1.rows".into(),
                    rows_total: 400,
                    max_reducer_rows: 100,
                    window: Some((1000, 2000)),
                },
                json!({"error": "E_LIMIT", "message": "compute count: the complete result of 's1.rows' has 400 rows, over the executor's max_reducer_rows 100; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_rows in the ceilings",
                    "details": {"ref": "s1.rows", "rows_total": 400, "max_reducer_rows": 100,
                        "repair": {"narrow": narrow, "or_raise_ceiling": {"max_reducer_rows": 400},
                            "window": {"t_a": 1000, "t_b": 1250}}}}),
            ),
            (
                Error::ReducerBytes {
                    reducer: "median".into(),
                    input: "s2.rows".into(),
                    rows_total: 10,
                    peak_bytes: 3000,
                    max_reducer_bytes: 1000,
                    window: None,
                },
                json!({"error": "E_LIMIT", "message": "compute median: the complete result of 's2.rows' has 10 rows, estimated to need 3000 bytes of memory as the reducer's input, over the executor's max_reducer_bytes 1000; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_bytes in the ceilings if the machine has the memory",
                    "details": {"ref": "s2.rows", "rows_total": 10, "estimated_peak_bytes": 3000,
                        "max_reducer_bytes": 1000,
                        "repair": {"narrow": narrow, "or_raise_ceiling": {"max_reducer_bytes": 3000}}}}),
            ),
            (
                Error::Upstream,
                json!({"error": "E_UPSTREAM", "message": "a dependency failed", "details": {}}),
            ),
            (
                Error::Store(std::io::Error::other("disk full")),
                json!({"error": "E_INTERNAL", "message": "cannot store the result: disk full",
                    "details": {}}),
            ),
            (
                Error::MalformedClaim {
                    detail: format!("unknown type {}", "x".repeat(100)),
                },
                json!({"error": "E_INVALID_ARG",
                    "message": format!("malformed claim (unknown type {})", "x".repeat(67)),
                    "details": {}}),
            ),
            (
                Error::EvidenceUnavailable { step: "s3".into() },
                json!({"error": "E_NOT_FOUND", "message": "evidence step unavailable",
                    "details": {}}),
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.payload(), want, "{e:?}");
            assert_eq!(e.code(), want["error"], "{e:?}");
            let op = e.into_op_error();
            if want["error"] != "E_UPSTREAM" {
                assert_eq!(op.payload(), want);
            }
        }
    }

    #[test]
    fn a_window_too_short_to_cut_keeps_one_microsecond() {
        let over = |window| Error::ReducerRows {
            reducer: "count".into(),
            input: "s1.rows".into(),
            rows_total: 1_000_000,
            max_reducer_rows: 1,
            window,
        };
        let repair = |e: Error| e.details()["repair"].clone();
        assert_eq!(
            repair(over(Some((5, 10))))["window"],
            json!({"t_a": 5, "t_b": 6})
        );
        assert!(repair(over(Some((10, 5)))).get("window").is_none());
    }
}
