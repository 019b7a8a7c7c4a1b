//! tgms-operators: the 19 read operators of tgms and their framework — one registry entry
//! per operator ([`mod@registry`]), from which argument schemas, tool definitions, the
//! reference page (`docs/operators.md`, [`mod@reference`]) and verifier contracts are generated
//! ([`tools`]); the call pipeline with envelope, errors, pagination, completeness
//! certificates and cost guardrail ([`pipeline`]); and the operators themselves ([`ops`]),
//! one module each.
//!
//! # Calling an operator
//!
//! [`call_operator`] takes a snapshot, an operator name and JSON arguments, and returns the
//! result *envelope* (canonical JSON with a reproducible `result_digest`) or an [`OpError`]
//! whose payload names the problem and a repair (`docs/errors.md`).
//!
//! ```
//! use serde_json::json;
//! use tgms_engine::{Op, Store};
//! use tgms_operators::{call_operator, CallOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(&dir.path().join("s"))?;
//! store.write(vec![Op::parse(&json!({"op": "ingest_events", "events": [
//!     {"src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10},
//!     {"src": "a", "dst": "c", "rel_type": "MSG", "vt_s": 20}]}))?])?;
//! let env = call_operator(store.snapshot(), "entity_history",
//!     &json!({"uid": "a", "include_edges": true}), &CallOptions::default())
//!     .map_err(|e| e.to_string())?;
//! assert_eq!(env["edges_total"], 2);
//! assert_eq!(env["result_digest"].as_str().map(str::len), Some(64));
//! // Bad input is an error payload, never a panic.
//! let err = call_operator(store.snapshot(), "entity_history", &json!({"uid": "zz"}),
//!     &CallOptions::default()).unwrap_err();
//! assert_eq!(err.payload()["error"], "E_NOT_FOUND");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Adding an operator
//!
//! Write `src/ops/<name>.rs` exposing `pub fn spec() -> OpSpec` and add one line to
//! [`ops::all`]. Nothing else changes: schemas, tool definitions, the manual, the verifier
//! contracts, `tgms call` and `tgms tools` pick it up. A sketch:
//!
//! ```ignore
//! use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
//! pub fn spec() -> OpSpec {
//!     OpSpec {
//!         name: "my_op",
//!         manual: "The manual entry of the spec, verbatim.",
//!         args: vec![
//!             ArgDecl::req("uid", frag::uid()).uids(&[""]),     // uid-typed (§2.2)
//!             ArgDecl::opt("hops", json!({"type": "integer", "minimum": 0, "maximum": 3}), json!(1)),
//!             common::as_of_tt(), common::limit(), common::cursor(),
//!         ],
//!         validators: vec![crate::ops::validate_window],      // step 4, in order
//!         cost: Some(crate::cost::scan_estimate),             // or None (never refused)
//!         coeff: 115.0,                                        // ms per million units
//!         outputs: Outputs::default()
//!             .rows("obj{uid: uid, n: int}", RowKey::Field("uid"))    // paged rows + certificate
//!             .capped("extra", "uid", RowKey::Row, false)              // capped list + certificate
//!             .field("n_buckets", "int")
//!             .build(),
//!         kernel,
//!     }
//! }
//! fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
//!     // read only through ctx.snap (the engine's read API); build the complete ordered list
//!     out.paged("rows", rows)?;          // sets rows, rows_total, truncated, cursor, set_digest
//!     out.capped("extra", extra)?;       // sets extra, extra_total, extra_set_digest
//!     out.set("n_buckets", json!(n));
//!     Ok(())
//! }
//! ```
//!
//! The pipeline ([`pipeline::call_operator`]) does the rest in the spec's order: schema
//! validation with the §5.3 messages ([`schema`]), defaults, validators, statistics, the cost
//! guardrail ([`cost`]), the kernel, `round9` of every float, `result_digest` and the
//! envelope. Errors are [`OpError`] values (`code`, `message`, `details`); a kernel returns
//! `OpError::unknown_uid(uid)`, `OpError::invalid(..)` or `OpError::new(Code::Limit, ..)`.
//! Shared helpers for the operators still to come: [`ops::buckets`] (the §8 bucket rule and
//! its `E_LIMIT` message), [`cost::Budget`] (§7.5 runtime work budgets, `E_COST` per §5.4),
//! [`ops::validate_window`], [`cost::scan_estimate`], [`cost::point_read_estimate`],
//! [`cost::window_fraction`], [`json::round9`] / [`json::float`] for float outputs.
//! Tests: add an oracle function to the operator family's module of `tests/oracle/` (plain
//! rows, written from the spec; workloads, plain rows and the paging/cap/certificate rules
//! are in `tests/common/kit.rs`) and an entry to the `OPS` table and argument generator of
//! `tests/oracle/random_stores.rs`; add the operator's vectors to
//! `tests/vectors.rs`; regenerate `tests/golden/tools_anthropic.json` with
//! `TGMS_UPDATE_GOLDEN=1` and review the diff.
#![forbid(unsafe_code)]

pub mod args;
pub mod calendar;
pub mod contract;
pub mod cost;
pub mod error;
pub mod json;
pub mod kernels;
pub mod ops;
pub mod output;
pub mod page_cache;
pub mod pipeline;
pub mod reference;
pub mod registry;
pub mod schema;
pub mod seconds_guard;
pub mod timefmt;
pub mod timeparse;
pub mod tools;

pub use cost::{Ceilings, Estimate};
pub use error::{Code, OpError};
pub use pipeline::{call_operator, CallOptions};
pub use registry::{lookup, registry, OpSpec};
