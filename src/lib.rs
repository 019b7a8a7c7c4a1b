//! tgms: an embedded, agent-native bi-temporal temporal-graph database. This crate is the one
//! library to depend on: it re-exports the storage engine ([`engine`]), the operator algebra
//! ([`operators`]) and the plan verifier ([`verifier`]) under one API ([`prelude`]), and holds
//! the CLI's loaders, harnesses, MCP server and agent loop ([`ask`]).
//!
//! # Embedding guide
//!
//! A store is a directory. [`Store::create`] makes one, [`Store::open`] opens it for writing
//! (one writer per store: a lock file), [`Store::open_read_only`] for reading (any number of
//! readers, also across processes). Times are µs since 1970-01-01 UTC ([`time`] reads and
//! writes ISO-8601); the open end of an interval is [`OPEN_END`].
//!
//! ```
//! use serde_json::json;
//! use tgms::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(dir.path())?;
//!
//! // Write ops: typed builders, or the same ops as JSON.
//! let t0 = tgms::time::parse_instant_us("2004-07-22T21:28:00Z")?;
//! let batch = vec![
//!     Op::assert_edge("alice", "bob", "MSG").valid(t0, t0 + 1).build()?,
//!     Op::parse(&json!({"op": "assert_edge", "src": "bob", "dst": "carol",
//!         "rel_type": "MSG", "vt_s": t0 + 60_000_000, "vt_e": t0 + 60_000_001}))?,
//! ];
//! let tt = store.write(batch)?; // the batch's transaction time
//!
//! // Call an operator: the envelope `tgms call` prints, with typed accessors.
//! let env = store.call("entity_history", &json!({"uid": "alice", "include_edges": true}))?;
//! assert_eq!(env.op(), "entity_history");
//! assert!(env.complete());
//! assert_eq!(env.result_digest().len(), 64);
//!
//! // Time arguments take µs or ISO-8601; the envelope is the same either way.
//! let a = store.call("state_at", &json!({"uid": "bob", "at": t0 + 1}))?;
//! let b = store.call("state_at", &json!({"uid": "bob", "at": "2004-07-22T21:28:00.000001Z"}))?;
//! assert_eq!(a, b);
//!
//! // Correct a fact; the old belief stays readable at the earlier transaction time.
//! store.write(vec![Op::correct_edge("alice", "bob", "MSG")
//!     .valid(t0, t0 + 1)
//!     .props(json!({"chars": 13}))
//!     .reason("miscounted")
//!     .build()?])?;
//! let args = json!({"uid": "alice", "include_edges": true});
//! let then = store.call("entity_history", &json!({"uid": "alice", "include_edges": true, "as_of_tt": tt}))?;
//! let now = store.call("entity_history", &args)?;
//! assert_ne!(then.result_digest(), now.result_digest());
//! # Ok(())
//! # }
//! ```
//!
//! # Plans
//!
//! [`Query::run_plan`] validates a plan with the static verifier (with the store's
//! statistics) and runs it on one snapshot; the trace is the one `tgms plan run` records.
//!
//! ```
//! use serde_json::json;
//! use tgms::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(dir.path())?;
//! store.write(vec![Op::assert_edge("a", "b", "MSG").valid(10, 11).build()?])?;
//! let plan = json!({"plan_id": "p1", "steps": [
//!     {"id": "s1", "op": "entity_history", "args": {"uid": "a", "include_edges": true}}],
//!     "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
//! let run = store.run_plan(&plan)?;
//! assert!(run.ok());
//! assert_eq!(run.answer(), &json!(1));
//! assert!(run.envelopes.contains_key("s1"));
//!
//! // A plan the verifier refuses is an error with a repair for each violation.
//! let bad = json!({"plan_id": "p2", "steps": [
//!     {"id": "s1", "op": "state_at", "args": {"uid": "a", "at": "2004-13-01"}}],
//!     "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
//! assert!(matches!(store.run_plan(&bad), Err(EmbedError::PlanInvalid { .. })));
//! # Ok(())
//! # }
//! ```
//!
//! # Threads
//!
//! A [`Snapshot`] is `Copy + Send + Sync`: take one with [`Store::snapshot`] and share it
//! with any number of reader threads (every call on it sees the same generation; results
//! are identical with 1 and N threads). [`Store`] is `Send + Sync` too, but writes need
//! `&mut Store`: one writer at a time, readers of older snapshots are never blocked. Both
//! facts are asserted at compile time in [`embed`].
//!
//! ```
//! use serde_json::json;
//! use tgms::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(dir.path())?;
//! store.write(vec![Op::assert_node("n1", "Person").valid_from(0).build()?])?;
//! let snap = store.snapshot();
//! let digests: Vec<String> = std::thread::scope(|s| {
//!     let hs: Vec<_> = (0..4)
//!         .map(|_| s.spawn(move || snap.call("entity_history", &json!({"uid": "n1"}))))
//!         .collect();
//!     hs.into_iter()
//!         .map(|h| h.join().unwrap().unwrap().result_digest().to_string())
//!         .collect()
//! });
//! assert!(digests.windows(2).all(|w| w[0] == w[1]));
//! # Ok(())
//! # }
//! ```
//!
//! A complete program is `examples/embed.rs` (`cargo run --release --example embed`); the
//! guide with installation is `docs/library.md`.

pub use tgms_engine as engine;
pub use tgms_operators as operators;
pub use tgms_verifier as verifier;

pub use embed::{EmbedError, Envelope, OpBuild, OpBuilder, PlanRun, Query};
pub use tgms_engine::{Op, Snapshot, Store, OPEN_END};

/// Everything an embedding program needs: `use tgms::prelude::*;`.
pub mod prelude {
    pub use crate::embed::{EmbedError, Envelope, OpBuild, OpBuilder, PlanRun, Query};
    pub use tgms_engine::{Op, Snapshot, Store, OPEN_END};
    pub use tgms_operators::OpError;
}

/// Time input and output (docs/times.md): ISO-8601 and durations to µs, µs to ISO-8601.
pub mod time {
    pub use tgms_operators::timefmt::{duration, iso_utc};
    pub use tgms_operators::timeparse::{parse_duration_us, parse_instant_us, TimeError};
}

pub mod arrow_rows;
pub mod ask;
pub mod benchmcp;
pub mod benchrun;
pub mod cli_ceilings;
pub mod cli_time;
pub mod demo;
pub mod embed;
pub mod eval;
pub mod export_rows;
pub mod export_typed;
pub mod grounding;
pub mod import_rows;
pub mod ingest;
pub mod ingest_cli;
pub mod load;
pub mod load_columns;
pub mod load_par;
pub mod mcp;
pub mod soak;
pub mod store_env;
pub mod store_json;
pub mod trace_graph;
pub mod trace_list;
pub mod trace_view;
pub mod verified;
