//! The embedding API (docs/library.md): typed op builders beside JSON ([`OpBuild`]), operator
//! calls and plan runs on a store or a snapshot ([`Query`]), and a typed view of the operator
//! envelope ([`Envelope`]). Everything here is a thin layer over the engine, the operators and
//! the verifier: a call through it returns the bytes `tgms call` prints, a plan run the trace
//! `tgms plan run` records.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use tgms_engine::{Op, Snapshot, Store};
use tgms_operators::{CallOptions, OpError};
use tgms_verifier::{exec, plan::Plan, validate};

/// Errors of the embedding API. Each carries the structured error of the layer that refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The store refused (I/O, corruption, an invalid write batch, a read-only handle).
    #[error("store: {0}")]
    Store(#[from] tgms_engine::Error),
    /// An operator call failed (`E_SCHEMA`, `E_INVALID_ARG`, `E_COST`, …); its
    /// [`OpError::payload`] is the JSON `tgms call` prints.
    #[error("operator: {0}")]
    Op(#[from] OpError),
    /// The plan did not pass the static verifier; `report` is `{"valid": false,
    /// "violations": [...]}` with a repair for each violation.
    #[error("plan invalid: {report}")]
    PlanInvalid {
        /// The static verifier's report.
        report: Value,
    },
}

/// A successful operator envelope (`operators.md` §4) with typed accessors. The JSON is kept
/// as the pipeline produced it; [`Envelope::json`] is byte for byte `tgms call`'s output.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope(Value);

impl Envelope {
    /// Wraps an envelope JSON value (as returned by [`tgms_operators::call_operator`]).
    pub fn from_json(v: Value) -> Self {
        Envelope(v)
    }
    /// The envelope JSON.
    pub fn json(&self) -> &Value {
        &self.0
    }
    /// The envelope JSON, owned.
    pub fn into_json(self) -> Value {
        self.0
    }
    /// The operator name.
    pub fn op(&self) -> &str {
        self.0["op"].as_str().unwrap_or_default()
    }
    /// One output field.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field)
    }
    /// The returned page of `rows` (empty for operators without rows).
    pub fn rows(&self) -> &[Value] {
        self.0["rows"].as_array().map_or(&[], Vec::as_slice)
    }
    /// The rows deserialized into `T` (a struct with the row contract's fields).
    pub fn rows_as<T: serde::de::DeserializeOwned>(&self) -> Result<Vec<T>, serde_json::Error> {
        self.rows()
            .iter()
            .map(|r| serde_json::from_value(r.clone()))
            .collect()
    }
    /// `rows_total`: the size of the complete list the page was cut from.
    pub fn rows_total(&self) -> Option<u64> {
        self.0["rows_total"].as_u64()
    }
    /// `truncated`: more rows exist than this page holds.
    pub fn truncated(&self) -> bool {
        self.0["truncated"].as_bool().unwrap_or(false)
    }
    /// The cursor of the next page, when there is one.
    pub fn cursor(&self) -> Option<&str> {
        self.0["cursor"].as_str()
    }
    /// `result_digest`: SHA-256 of the canonical payload; equal digests, equal results.
    pub fn result_digest(&self) -> &str {
        self.0["result_digest"].as_str().unwrap_or_default()
    }
    /// Whether the envelope is the complete result (plans-and-claims §3.2): not truncated,
    /// not approximate, and every certified list returned in full.
    pub fn complete(&self) -> bool {
        exec::descriptor(&self.0, "", false, false)["complete"] == Value::Bool(true)
    }
}

/// The outcome of a plan run: the trace (as `tgms plan run --trace-out` writes it) and the
/// envelope of every step that ran.
#[derive(Clone, Debug)]
pub struct PlanRun {
    /// The trace JSON, with `ok`, `steps` and `trace_id`.
    pub trace: Value,
    /// The envelope of every step that ran, by step id.
    pub envelopes: BTreeMap<String, Envelope>,
}

impl PlanRun {
    /// Whether every step succeeded.
    pub fn ok(&self) -> bool {
        self.trace["ok"] == Value::Bool(true)
    }
    /// The plan's answer value (`answer_from` resolved on the trace).
    pub fn answer(&self) -> &Value {
        &self.trace["answer"]
    }
    /// Whether the answer was computed from complete results.
    pub fn answer_complete(&self) -> bool {
        self.trace["answer_complete"] == Value::Bool(true)
    }
    /// The content address of the trace.
    pub fn trace_id(&self) -> &str {
        self.trace["trace_id"].as_str().unwrap_or_default()
    }
}

/// Operator calls and plan runs, on a [`Store`] (each call on a fresh snapshot) or on one
/// [`Snapshot`] (every call sees the same generation). Arguments are the JSON of `tgms call`;
/// times may be µs or ISO-8601 strings (docs/times.md).
pub trait Query {
    /// Calls operator `op` with `args` under the default ceilings.
    fn call(&self, op: &str, args: &Value) -> Result<Envelope, OpError>;
    /// Validates `plan` (the static verifier, with this store's statistics) and runs it on
    /// one snapshot. Results and traces are kept in memory, not in the store directory.
    fn run_plan(&self, plan: &Value) -> Result<PlanRun, EmbedError>;
}

impl Query for Snapshot<'_> {
    fn call(&self, op: &str, args: &Value) -> Result<Envelope, OpError> {
        tgms_operators::call_operator(*self, op, args, &CallOptions::default()).map(Envelope)
    }

    fn run_plan(&self, plan: &Value) -> Result<PlanRun, EmbedError> {
        run_plan_with(*self, plan, &exec::ResultStore::memory())
    }
}

/// [`Query::run_plan`] on `snap`, keeping envelopes and the trace in `results` (e.g.
/// [`exec::ResultStore::in_dir`], where `tgms verify` and `tgms view` find them).
pub fn run_plan_with(
    snap: Snapshot<'_>,
    plan: &Value,
    results: &exec::ResultStore,
) -> Result<PlanRun, EmbedError> {
    let report = validate::validate_static(
        plan,
        &validate::Options {
            stats: Some(snap.stats()),
            ..validate::Options::default()
        },
    );
    let ir: Plan = match (report.valid(), report.plan.clone()) {
        (true, Some(p)) => p,
        _ => {
            return Err(EmbedError::PlanInvalid {
                report: report.to_json(),
            })
        }
    };
    let ran = exec::execute(&ir, snap, results, &exec::ExecOptions::default())
        .map_err(tgms_verifier::Error::into_op_error)?;
    Ok(PlanRun {
        trace: ran.trace,
        envelopes: ran
            .envelopes
            .into_iter()
            .map(|(k, v)| (k, Envelope(std::sync::Arc::unwrap_or_clone(v))))
            .collect(),
    })
}

impl Query for Store {
    fn call(&self, op: &str, args: &Value) -> Result<Envelope, OpError> {
        self.snapshot().call(op, args)
    }

    fn run_plan(&self, plan: &Value) -> Result<PlanRun, EmbedError> {
        self.snapshot().run_plan(plan)
    }
}

/// Typed constructors of write ops, beside [`Op::parse`] of JSON: `Op::assert_edge("a", "b",
/// "MSG").valid_from(t).build()?`. A builder fills the JSON object of the op and
/// [`OpBuilder::build`] normalizes and validates it with the engine's own parser, so a built
/// op and the same op written as JSON are one and the same.
pub trait OpBuild {
    /// `assert_node` of `uid` with `label`.
    fn assert_node(uid: &str, label: &str) -> OpBuilder;
    /// `assert_edge` from `src` to `dst` of `rel_type`.
    fn assert_edge(src: &str, dst: &str, rel_type: &str) -> OpBuilder;
    /// `retract` of node `uid` from instant `t_us` on.
    fn retract_node(uid: &str, t_us: i64) -> OpBuilder;
    /// `retract` of the edge `(src, dst, rel_type)` from instant `t_us` on.
    fn retract_edge(src: &str, dst: &str, rel_type: &str, t_us: i64) -> OpBuilder;
    /// `correct` of node `uid` (give the corrected props and valid interval).
    fn correct_node(uid: &str) -> OpBuilder;
    /// `correct` of the edge `(src, dst, rel_type)`.
    fn correct_edge(src: &str, dst: &str, rel_type: &str) -> OpBuilder;
}

impl OpBuild for Op {
    fn assert_node(uid: &str, label: &str) -> OpBuilder {
        OpBuilder::of(json!({"op": "assert_node", "uid": uid, "label": label}))
    }
    fn assert_edge(src: &str, dst: &str, rel_type: &str) -> OpBuilder {
        OpBuilder::of(json!({"op": "assert_edge", "src": src, "dst": dst, "rel_type": rel_type}))
    }
    fn retract_node(uid: &str, t_us: i64) -> OpBuilder {
        OpBuilder::of(json!({"op": "retract", "ref": {"kind": "node", "uid": uid}, "t": t_us}))
    }
    fn retract_edge(src: &str, dst: &str, rel_type: &str, t_us: i64) -> OpBuilder {
        OpBuilder::of(json!({"op": "retract",
            "ref": {"kind": "edge", "src": src, "dst": dst, "rel_type": rel_type}, "t": t_us}))
    }
    fn correct_node(uid: &str) -> OpBuilder {
        OpBuilder::of(json!({"op": "correct", "ref": {"kind": "node", "uid": uid}}))
    }
    fn correct_edge(src: &str, dst: &str, rel_type: &str) -> OpBuilder {
        OpBuilder::of(json!({"op": "correct",
            "ref": {"kind": "edge", "src": src, "dst": dst, "rel_type": rel_type}}))
    }
}

/// The op object being built (see [`OpBuild`]).
#[derive(Clone, Debug)]
pub struct OpBuilder(Map<String, Value>);

impl OpBuilder {
    fn of(v: Value) -> Self {
        match v {
            Value::Object(m) => OpBuilder(m),
            _ => OpBuilder(Map::new()),
        }
    }
    fn set(mut self, k: &str, v: Value) -> Self {
        self.0.insert(k.into(), v);
        self
    }
    /// The valid interval `[vt_s_us, vt_e_us)`.
    pub fn valid(self, vt_s_us: i64, vt_e_us: i64) -> Self {
        self.set("vt_s", json!(vt_s_us)).set("vt_e", json!(vt_e_us))
    }
    /// Valid from `vt_s_us` on (open end).
    pub fn valid_from(self, vt_s_us: i64) -> Self {
        self.set("vt_s", json!(vt_s_us))
    }
    /// The props object (replaces earlier props).
    pub fn props(self, props: Value) -> Self {
        self.set("props", props)
    }
    /// One prop.
    pub fn prop(mut self, key: &str, value: Value) -> Self {
        let props = self.0.entry("props").or_insert_with(|| json!({}));
        if let Value::Object(m) = props {
            m.insert(key.into(), value);
        }
        self
    }
    /// The edge discriminator (parallel edges of one `(src, dst, rel_type)`); for a
    /// retract or correct, of the target edge.
    pub fn disc(mut self, disc: &str) -> Self {
        if let Some(Value::Object(r)) = self.0.get_mut("ref") {
            r.insert("disc".into(), json!(disc));
            return self;
        }
        self.set("disc", json!(disc))
    }
    /// The audit reason.
    pub fn reason(self, reason: &str) -> Self {
        self.set("reason", json!(reason))
    }
    /// The audit source (default `"ingest"`).
    pub fn source(self, source: &str) -> Self {
        self.set("source", json!(source))
    }
    /// The op as JSON (what a batch file holds).
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }
    /// Normalizes and validates the op (the engine's [`Op::parse`], `data-model.md` §6.8).
    pub fn build(self) -> Result<Op, tgms_engine::Error> {
        Op::parse(&Value::Object(self.0))
    }
}

// Readers are shared across threads: a `Snapshot` is `Send + Sync` (it borrows the store's
// immutable generation), and so is a read-only `Store`. Checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Snapshot<'static>>();
    send_sync::<Store>();
    send_sync::<Envelope>();
};
