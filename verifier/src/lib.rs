//! tgms-verifier: the layer that makes tgms agent-native (`spec/plans-and-claims.md`). The
//! model may only plan and report; the database admits plans ([`validate`]), computes them
//! deterministically with evidence ([`exec`]) and checks every claim ([`claims`]).
//!
//! - [`refpath`]: the `$ref` path grammar, evaluation and contract checks (D-V1).
//! - [`plan`]: the plan IR and its schema; Kahn-wave run order (D-E1).
//! - [`validate`]: `validate_static` with every check, error code and a concrete repair.
//! - [`exec`]: the executor, taint (D-E2), reducer refusal, result / args / trace stores.
//! - [`claims`]: answer objects, the claim verifier (D-V4, D-V5), gating (D-V6), metrics,
//!   the mechanical reporter (D-A1), campaign metrics.
//! - [`prose`]: prose gating (D-V8): the final text asserts only what kept claims back.
//! - [`mutations`]: the verifier mutation experiment of `evaluation.md` §4.
//!
//! Results, resolved args and traces are content-addressed under `results/`, `args/` and
//! `traces/` inside the store directory ([`exec::ResultStore`]). Tests written against
//! operators that are not registered yet (TV12 in full, TV13, TV22's compute cases) check the
//! registry and skip until those operators land.
#![forbid(unsafe_code)]

pub mod claims;
pub mod exec;
pub mod mutations;
pub mod plan;
pub mod prose;
pub mod refpath;
pub mod validate;
