//! tgms-verifier: the layer that makes tgms agent-native (user guide: `docs/plans.md`). The
//! model may only plan and report; the database admits plans ([`validate`]), computes them
//! deterministically with evidence ([`exec`]) and checks every claim ([`claims`]).
//!
//! - [`error`]: the verifier's error enum and the agent-facing payload of each error.
//! - [`refpath`]: the `$ref` path grammar, evaluation and contract checks.
//! - [`plan`]: the plan IR and its schema; Kahn-wave run order.
//! - [`validate`]: `validate_static` with every check, error code and a concrete repair.
//! - [`exec`]: the executor, truncation taint, reducer refusal, result / args / trace stores.
//! - [`memory`]: the estimated memory of a reducer's complete input (`max_reducer_bytes`).
//! - [`claims`]: answer objects, the claim verifier, gating, metrics, the mechanical
//!   reporter, campaign metrics.
//! - [`approx`]: approximate evidence: estimates, their intervals, the descriptor member.
//! - [`prose`]: prose gating: the final text asserts only what kept claims back.
//! - [`mutations`]: the verifier mutation experiment.
//!
//! Results, resolved args and traces are content-addressed under `results/`, `args/` and
//! `traces/` inside the store directory ([`exec::ResultStore::in_dir`]), or kept in memory
//! ([`exec::ResultStore::memory`]).
//!
//! # Validate, run, verify
//!
//! ```
//! use serde_json::json;
//! use tgms_engine::{Op, Store};
//! use tgms_verifier::{claims, exec, validate};
//!
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(&dir.path().join("s"))?;
//! store.write(vec![Op::parse(&json!({"op": "ingest_events", "events": [
//!     {"src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10},
//!     {"src": "a", "dst": "c", "rel_type": "MSG", "vt_s": 20}]}))?])?;
//! let plan = json!({"plan_id": "p", "steps": [
//!     {"id": "s1", "op": "entity_history", "args": {"uid": "a", "include_edges": true}}],
//!     "answer_spec": {"kind": "count", "from": "s1.edges_total"}});
//! // 1. Static verification: violations come with repairs.
//! let report = validate::validate_static(&plan, &validate::Options::default());
//! assert!(report.valid(), "{}", report.to_json());
//! // 2. Deterministic execution with a trace.
//! let results = exec::ResultStore::memory();
//! let run = exec::execute(report.plan.as_ref().unwrap(), store.snapshot(), &results,
//!     &exec::ExecOptions::default())?;
//! assert_eq!(run.trace["answer"], 2);
//! // 3. Claims are checked against the trace; a wrong one is unsupported and gated out.
//! let answer = json!({"text": "a sent 3 messages.", "claims": [
//!     {"id": "c1", "type": "count", "value": 3, "from": "s1.edges_total", "evidence": ["s1"]}]});
//! let ctx = claims::Ctx { trace: &run.trace, results: &results, snap: Some(store.snapshot()),
//!     honor_truncation: true };
//! assert_eq!(claims::verify(&ctx, &answer)["claims"][0]["verdict"], "unsupported");
//! let (gated, _) = claims::gate(&ctx, &answer);
//! assert_eq!(gated["claims"], json!([]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod approx;
pub mod claims;
pub mod error;
pub mod exec;
pub mod memory;
pub mod mutation_approx;
pub mod mutation_belief;
pub mod mutation_pool;
pub mod mutations;
pub mod plan;
pub mod prose;
pub mod refpath;
pub mod validate;

pub use error::{Error, Result};
