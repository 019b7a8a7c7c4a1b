//! tgms-operators: the operator framework of `spec/operators.md` Part I — one registry entry
//! per operator ([`registry`]), from which argument schemas, tool definitions and verifier
//! contracts are generated ([`tools`]); the call pipeline with envelope, errors, pagination,
//! completeness certificates and cost guardrail ([`pipeline`]) — and the operators
//! themselves ([`ops`]), one module each.
//!
//! Adding an operator: write `ops/<name>.rs` exposing `pub fn spec() -> OpSpec` (arguments,
//! validators, cost, outputs, kernel) and add it to [`ops::all`]. Nothing else changes.
#![forbid(unsafe_code)]

pub mod args;
pub mod contract;
pub mod cost;
pub mod error;
pub mod json;
pub mod ops;
pub mod output;
pub mod pipeline;
pub mod registry;
pub mod schema;
pub mod tools;

pub use cost::{Ceilings, Estimate};
pub use error::{Code, OpError};
pub use pipeline::{call_operator, CallOptions};
pub use registry::{lookup, registry, OpSpec};
