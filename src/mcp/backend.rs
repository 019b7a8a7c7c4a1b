//! The MCP server's core, independent of any transport: the store view (refreshed for
//! read-only servers when the writer publishes), the result store, the server's ceilings,
//! and every tool and resource as JSON in, JSON out (agent-surface §9.1–§9.4).
//!
//! Invariants:
//! - A read-only backend never writes under the store directory: it opens the store with
//!   `Store::open_read_only` (no lock, no recovery) and keeps traces and envelopes in a
//!   bounded in-memory store or under a results directory outside the store.
//! - Each call runs on one snapshot of one view; a refresh swaps in a new view for later
//!   calls while calls in flight keep the view they started on.

use super::card;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tgms_engine::{canon, Store};
use tgms_operators::{call_operator, CallOptions, Ceilings, Code, OpError};
use tgms_verifier::exec::{self, ExecOptions, ResultStore};
use tgms_verifier::validate::{validate_static, Options};
use tgms_verifier::{claims, plan};

/// Entries a read-only server keeps in memory when no results directory is given
/// (agent-surface §9.4).
pub const MEMORY_RESULTS_ENTRIES: usize = 1_000;

/// Where a server keeps the traces and envelopes it produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Results {
    /// The store's own result store (writable servers).
    InStore,
    /// A directory outside the store.
    Dir(PathBuf),
    /// A bounded in-memory LRU of [`MEMORY_RESULTS_ENTRIES`] entries.
    Memory,
}

/// How a backend opens its store.
pub struct BackendOptions {
    /// The store directory.
    pub store: PathBuf,
    /// Open without the writer lock or recovery and never write under `store`.
    pub read_only: bool,
    /// Where envelopes and traces are kept.
    pub results: Results,
    /// The server's cost ceilings for every operator call and plan step.
    pub ceilings: Ceilings,
    /// The agent loop's configuration when a model is configured: the server then offers
    /// the `ask` tool (`docs/ask.md`); `None` leaves it out.
    pub ask: Option<crate::ask::AskConfig>,
}

/// The answer of one tool call: the value for `structuredContent` and whether it is an
/// error payload (`isError`).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The result, or the error payload `{"error", "message", "details"}`.
    pub value: Value,
    /// `value` is an error payload.
    pub is_error: bool,
}

impl Outcome {
    fn ok(value: Value) -> Outcome {
        Outcome {
            value,
            is_error: false,
        }
    }
    fn err(e: OpError) -> Outcome {
        Outcome {
            value: e.payload(),
            is_error: true,
        }
    }
}

/// What identifies one published state of a store directory: length, modification time
/// and inode of the log and of the manifest. Any commit appends to the log; any flush or
/// compaction rewrites or replaces the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp([(u64, i64, i64, u64); 2]);

fn stamp(dir: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let one = |name: &str| {
        std::fs::metadata(dir.join(name)).map_or((0, 0, 0, 0), |m| {
            (m.len(), m.mtime(), m.mtime_nsec(), m.ino())
        })
    };
    Stamp([
        one(tgms_engine::store::WAL_FILE),
        one(tgms_engine::format::manifest::MANIFEST_FILE),
    ])
}

/// One opened state of the store.
struct View {
    store: Store,
    /// The directory's stamp taken before the open (read-only views only): a publication
    /// after it changes the stamp, so the next call reopens.
    stamp: Option<Stamp>,
}

/// The server's state shared by every connection and request.
pub struct Backend {
    dir: PathBuf,
    read_only: bool,
    ceilings: Ceilings,
    results: ResultStore,
    view: RwLock<Arc<View>>,
    /// Serialises reopens so concurrent calls that see a new stamp open the store once.
    reopen: Mutex<()>,
    ask: Option<crate::ask::AskConfig>,
}

/// The tools that are not operators, in the order they are listed (agent-surface §9.2).
pub const PLAN_TOOLS: [&str; 6] = [
    "validate_plan",
    "run_plan",
    "verify_answer",
    "get_trace",
    "get_result",
    "dataset_card",
];

/// The agent loop as a tool, offered only when a model is configured.
pub const ASK_TOOL: &str = "ask";

/// URI of the dataset card resource (JSON; agent-surface §9.3).
pub const CARD_URI: &str = "tgms://dataset-card";
/// URI of the operator manual resource (Markdown).
pub const MANUAL_URI: &str = "tgms://manual";
/// Prefix of the trace resource template: `tgms://trace/{trace_id}`.
pub const TRACE_PREFIX: &str = "tgms://trace/";
/// Prefix of the result resource template: `tgms://result/{result_digest}` (the envelope).
pub const RESULT_PREFIX: &str = "tgms://result/";

/// A resource's text and MIME type.
pub struct ResourceText {
    /// `application/json` or `text/markdown`.
    pub mime_type: &'static str,
    /// The resource's content (canonical JSON for JSON resources).
    pub text: String,
}

fn invalid(msg: impl Into<String>) -> OpError {
    OpError::invalid(msg.into())
}

fn not_found(msg: String, details: Value) -> OpError {
    OpError::with(Code::NotFound, msg, details)
}

impl Backend {
    /// Opens the store (read-only: no lock, no recovery, nothing written; otherwise with
    /// the writer lock and recovery, as every writer opens).
    pub fn open(opts: BackendOptions) -> Result<Backend, tgms_engine::Error> {
        let (store, stamp) = if opts.read_only {
            let s = stamp(&opts.store);
            (crate::store_env::open_read_only(&opts.store)?, Some(s))
        } else {
            (crate::store_env::open(&opts.store)?, None)
        };
        let results = match &opts.results {
            Results::InStore => ResultStore::in_dir(&opts.store),
            Results::Dir(d) => ResultStore::in_dir(d),
            Results::Memory => ResultStore::memory_bounded(MEMORY_RESULTS_ENTRIES),
        };
        Ok(Backend {
            dir: opts.store,
            read_only: opts.read_only,
            ceilings: opts.ceilings,
            results,
            view: RwLock::new(Arc::new(View { store, stamp })),
            reopen: Mutex::new(()),
            ask: opts.ask.filter(crate::ask::AskConfig::model_configured),
        })
    }

    /// True for a read-only server.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn held(&self) -> Arc<View> {
        self.view.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The view a call runs on: for a read-only server, reopened first when the writer has
    /// published since the current view was opened. A failed reopen (say a compaction
    /// removing files mid-open) keeps serving the previous view and says so on stderr; the
    /// next call tries again.
    fn current(&self) -> Arc<View> {
        let view = self.held();
        if !self.read_only || view.stamp == Some(stamp(&self.dir)) {
            return view;
        }
        let _one = self.reopen.lock().unwrap_or_else(|e| e.into_inner());
        let now = stamp(&self.dir);
        let view = self.held();
        if view.stamp == Some(now) {
            return view;
        }
        match crate::store_env::open_read_only(&self.dir) {
            Ok(store) => {
                let fresh = Arc::new(View {
                    store,
                    stamp: Some(now),
                });
                *self.view.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
                fresh
            }
            Err(e) => {
                eprintln!(
                    "tgms serve: reopening {} failed, serving the previous state: {}",
                    self.dir.display(),
                    canon::to_string(&tgms_operators::error::store_payload(&e))
                );
                view
            }
        }
    }

    /// True when `name` is a tool of this server.
    pub fn has_tool(&self, name: &str) -> bool {
        PLAN_TOOLS.contains(&name)
            || tgms_operators::lookup(name).is_some()
            || (name == ASK_TOOL && self.ask.is_some())
    }

    /// True when the server offers the `ask` tool (a model is configured).
    pub fn offers_ask(&self) -> bool {
        self.ask.is_some()
    }

    /// Runs tool `name` with `args` (`None` when the request had none). `None` for an
    /// unknown tool (a protocol error for the caller).
    pub fn call(&self, name: &str, args: Option<Value>) -> Option<Outcome> {
        let args = args.unwrap_or_else(|| json!({}));
        let outcome = match name {
            "validate_plan" => self.validate_plan(&args),
            "run_plan" => self.run_plan(&args),
            "verify_answer" => self.verify_answer(&args),
            "get_trace" => self.get_trace(&args),
            "get_result" => self.get_result(&args),
            "dataset_card" => Ok(self.dataset_card()),
            ASK_TOOL if self.ask.is_some() => return Some(self.ask_tool(&args)),
            op => {
                let spec = tgms_operators::lookup(op)?;
                return Some(self.call_op(spec, args));
            }
        };
        Some(outcome.map_or_else(Outcome::err, Outcome::ok))
    }

    /// One router call (operators §3) with the server's ceilings; the envelope is kept in
    /// the result store so `get_result` and `tgms://result/{digest}` find it.
    fn call_op(&self, spec: &tgms_operators::OpSpec, args: Value) -> Outcome {
        let args = unwrap_legacy(spec, args);
        let view = self.current();
        let opts = CallOptions {
            ceilings: self.ceilings,
            ..CallOptions::default()
        };
        match call_operator(view.store.snapshot(), spec.name, &args, &opts) {
            Ok(env) => {
                if let Err(e) = self.results.put_envelope(&env) {
                    eprintln!("tgms serve: cannot keep result: {e}");
                }
                Outcome::ok(env)
            }
            Err(e) => Outcome::err(e),
        }
    }

    /// The plan argument: an object, or JSON text holding one.
    fn plan_arg(args: &Value) -> Result<Value, OpError> {
        match args.get("plan") {
            Some(Value::Object(_)) => Ok(args["plan"].clone()),
            Some(Value::String(s)) => {
                plan::parse_plan_text(s).map_err(tgms_verifier::Error::into_op_error)
            }
            Some(_) => Err(invalid("plan must be a plan object (or JSON text of one)")),
            None => Err(invalid("plan is required: {\"plan\": {\"plan_id\": ..., \"steps\": [...], \"answer_spec\": {...}}}")),
        }
    }

    /// `task_input_uids`: an array of strings, or absent / null for the uids the plan's
    /// `question` names (the CLI's rule; no grounding check when the plan has no question).
    fn uids_arg(args: &Value) -> Result<Option<BTreeSet<String>>, OpError> {
        match args.get("task_input_uids") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|u| {
                    u.as_str()
                        .map(String::from)
                        .ok_or_else(|| invalid("task_input_uids must be an array of strings"))
                })
                .collect::<Result<BTreeSet<_>, _>>()
                .map(Some),
            Some(_) => Err(invalid(
                "task_input_uids must be an array of strings or null",
            )),
        }
    }

    fn validated(
        &self,
        view: &View,
        args: &Value,
    ) -> Result<(Value, tgms_verifier::validate::Report), OpError> {
        let plan = Self::plan_arg(args)?;
        let snap = view.store.snapshot();
        let uids = crate::grounding::task_input_uids(snap, &plan, Self::uids_arg(args)?);
        let report = validate_static(
            &plan,
            &Options {
                stats: Some(view.store.stats()),
                task_input_uids: uids.as_ref(),
                ceilings: self.ceilings,
                ..Options::default()
            },
        );
        Ok((plan, report))
    }

    fn validate_plan(&self, args: &Value) -> Result<Value, OpError> {
        let view = self.current();
        Ok(self.validated(&view, args)?.1.to_json())
    }

    fn run_plan(&self, args: &Value) -> Result<Value, OpError> {
        let report_wanted = match args.get("report") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid("report must be a boolean")),
        };
        let view = self.current();
        let (_, report) = self.validated(&view, args)?;
        let (true, Some(p)) = (report.valid(), report.plan.as_ref()) else {
            return Ok(json!({"valid": false, "violations": report.to_json()["violations"]}));
        };
        let opts = ExecOptions {
            call: CallOptions {
                ceilings: self.ceilings,
                ..CallOptions::default()
            },
            ..ExecOptions::default()
        };
        let snap = view.store.snapshot();
        let ex = exec::execute(p, snap, &self.results, &opts)
            .map_err(tgms_verifier::Error::into_op_error)?;
        let t = &ex.trace;
        let mut o = json!({"valid": true, "plan_id": t["plan_id"], "trace_id": t["trace_id"],
            "ok": t["ok"], "answer": t["answer"], "answer_error": t["answer_error"],
            "answer_complete": t["answer_complete"], "trace": t});
        if report_wanted {
            let a = claims::mechanical_answer(&p.answer_kind, &p.answer_from, t);
            let ctx = claims::Ctx {
                trace: t,
                results: &self.results,
                snap: Some(snap),
                honor_truncation: true,
            };
            o["verification"] = claims::verify(&ctx, &a);
            o["answer_object"] = a;
        }
        Ok(o)
    }

    /// `ask`: the whole agent loop (plan with the model, verify, execute, report, check and
    /// gate). Returns the gated answer with the ask id, the final plan and its trace id;
    /// the trace and its envelopes are kept, so `get_trace` and `get_result` find them.
    fn ask_tool(&self, args: &Value) -> Outcome {
        let run = || -> Result<Value, Outcome> {
            let mut cfg = self
                .ask
                .clone()
                .ok_or_else(|| Outcome::err(invalid("no model is configured")))?;
            let q = Self::str_arg(args, "question").map_err(Outcome::err)?;
            if let Some(set) = Self::uids_arg(args).map_err(Outcome::err)? {
                cfg.input_uids = crate::ask::InputUids::Given(set);
            }
            match args.get("as_of_tt") {
                None | Some(Value::Null) => {}
                Some(v) => {
                    // µs, or an ISO-8601 string (docs/times.md).
                    let us = match v {
                        Value::String(s) => tgms_operators::timeparse::parse_instant_us(s).ok(),
                        other => other.as_i64(),
                    };
                    cfg.as_of_tt = Some(us.ok_or_else(|| {
                        Outcome::err(invalid(
                            "as_of_tt must be µs since 1970 UTC or ISO-8601 (\"2004-07-22T21:28:00Z\")",
                        ))
                    })?)
                }
            }
            cfg.ceilings = self.ceilings;
            let view = self.current();
            let out = crate::ask::ask(&view.store, q, &cfg).map_err(|e| Outcome {
                value: e.payload(),
                is_error: true,
            })?;
            let trace = &out.record["trace"];
            if trace.is_object() {
                for step in trace["steps"].as_array().into_iter().flatten() {
                    if let Some(env) = step["result_digest"]
                        .as_str()
                        .and_then(|d| out.results.envelope(d))
                    {
                        let _ = self.results.put_envelope(&env);
                    }
                }
                if let Err(e) = self.results.put_trace(trace) {
                    eprintln!("tgms serve: cannot keep the ask trace: {e}");
                }
            }
            Ok(json!({"ask_id": out.ask_id, "ok": out.ok,
                "gated_answer_object": out.answer(),
                "trace_id": trace.get("trace_id").cloned().unwrap_or(Value::Null),
                "plan": out.record["plan_result"]["plan"],
                "plan_emissions": out.record["plan_result"]["attempts"].as_array().map_or(0, Vec::len)}))
        };
        run().map_or_else(|e| e, Outcome::ok)
    }

    fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, OpError> {
        match args.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(invalid(format!("{key} must be a string"))),
            None => Err(invalid(format!("{key} is required"))),
        }
    }

    fn trace_of(&self, id: &str) -> Result<Value, OpError> {
        self.results.trace(id).ok_or_else(|| {
            not_found(
                format!("unknown trace '{id}': run the plan first (run_plan returns its trace_id)"),
                json!({"trace_id": id}),
            )
        })
    }

    fn verify_answer(&self, args: &Value) -> Result<Value, OpError> {
        let id = Self::str_arg(args, "trace_id")?;
        let answer = match args.get("answer_object") {
            Some(a @ Value::Object(_)) => a.clone(),
            Some(Value::String(s)) => canon::parse(s)
                .map_err(|e| invalid(format!("answer_object is not valid JSON: {e}")))?,
            Some(_) => return Err(invalid("answer_object must be an answer object")),
            None => return Err(invalid("answer_object is required")),
        };
        let trace = self.trace_of(id)?;
        let view = self.current();
        let ctx = claims::Ctx {
            trace: &trace,
            results: &self.results,
            snap: Some(view.store.snapshot()),
            honor_truncation: true,
        };
        let mut first = claims::verify(&ctx, &answer);
        let (gated, second) = claims::gate(&ctx, &answer);
        first["gated_answer_object"] = gated;
        first["gated_metrics"] = second["metrics"].clone();
        Ok(first)
    }

    fn get_trace(&self, args: &Value) -> Result<Value, OpError> {
        self.trace_of(Self::str_arg(args, "trace_id")?)
    }

    fn get_result(&self, args: &Value) -> Result<Value, OpError> {
        let d = Self::str_arg(args, "result_digest")?;
        self.results.envelope(d).ok_or_else(|| {
            not_found(
                format!("unknown result '{d}': results are kept for the calls and plans this server ran"),
                json!({"result_digest": d}),
            )
        })
    }

    /// The dataset card of the current state.
    pub fn dataset_card(&self) -> Value {
        card::dataset_card(self.current().store.stats())
    }

    /// The text of resource `uri`, or the reason it has none.
    pub fn read_resource(&self, uri: &str) -> Result<ResourceText, String> {
        let json_text = |v: Value| ResourceText {
            mime_type: "application/json",
            text: canon::to_string(&v),
        };
        if uri == CARD_URI {
            return Ok(json_text(self.dataset_card()));
        }
        if uri == MANUAL_URI {
            return Ok(ResourceText {
                mime_type: "text/markdown",
                text: manual(),
            });
        }
        if let Some(id) = uri.strip_prefix(TRACE_PREFIX) {
            return self.trace_of(id).map(json_text).map_err(|e| e.message);
        }
        if let Some(d) = uri.strip_prefix(RESULT_PREFIX) {
            return self
                .get_result(&json!({ "result_digest": d }))
                .map(json_text)
                .map_err(|e| e.message);
        }
        Err(format!(
            "unknown resource '{uri}': this server has {CARD_URI}, {MANUAL_URI}, \
             {TRACE_PREFIX}{{trace_id}} and {RESULT_PREFIX}{{result_digest}}"
        ))
    }
}

/// The TGMS-style wrapper `{"args": {...}}` (agent-surface §9.1): when the arguments are
/// an object whose only key is `args` holding an object, and the operator has no argument
/// named `args`, the inner object is the arguments.
pub fn unwrap_legacy(spec: &tgms_operators::OpSpec, args: Value) -> Value {
    if spec.args.iter().any(|a| a.name == "args") {
        return args;
    }
    match args {
        Value::Object(mut m) if m.len() == 1 && m.get("args").is_some_and(Value::is_object) => {
            m.remove("args").unwrap_or(Value::Object(Map::new()))
        }
        other => other,
    }
}

/// The `tgms://manual` text: the two clocks, then the planner's operator manual generated
/// from the registry.
pub fn manual() -> String {
    format!(
        "# tgms operator manual\n\n## Two clocks\n\n{}\n\n## Operators\n\n{}\n",
        card::CLOCKS,
        tgms_operators::tools::operator_manual()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgms_engine::Op;

    fn store_with(dir: &Path, ops: &str) {
        let mut st = Store::create(dir).unwrap();
        let v = canon::parse(ops).unwrap();
        let ops: Vec<Op> = v.as_array().unwrap().iter().map(Op::from_json).collect();
        st.write(ops).unwrap();
        st.close().unwrap();
    }

    const EVENTS: &str = r#"[{"op":"ingest_events","events":[
        {"src":"a","dst":"b","rel_type":"MSG","vt_s":10},{"src":"b","dst":"c","rel_type":"MSG","vt_s":20},
        {"src":"c","dst":"a","rel_type":"MSG","vt_s":30}]}]"#;

    fn backend(dir: &Path, ceilings: Ceilings) -> Backend {
        Backend::open(BackendOptions {
            store: dir.to_path_buf(),
            read_only: true,
            results: Results::Memory,
            ceilings,
            ask: None,
        })
        .unwrap()
    }

    #[test]
    fn legacy_wrapper_unwraps_only_a_lone_args_object() {
        let spec = tgms_operators::lookup("entity_history").unwrap();
        let inner = json!({"uid": "a"});
        assert_eq!(unwrap_legacy(spec, json!({"args": inner})), inner);
        // Not a lone object: left as it is (and then refused by the schema).
        let two = json!({"args": inner, "uid": "a"});
        assert_eq!(unwrap_legacy(spec, two.clone()), two);
        assert_eq!(unwrap_legacy(spec, json!({"args": 5})), json!({"args": 5}));
    }

    #[test]
    fn cost_refusal_is_a_tool_error_with_its_repair() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), EVENTS);
        let tight = Ceilings {
            rows_scanned_est: Some(1),
            ..Ceilings::default()
        };
        let b = backend(dir.path(), tight);
        let o = b
            .call(
                "count_temporal_motifs",
                Some(json!({"motif": "all", "delta": 100, "window": {"t_a": 0, "t_b": 100}})),
            )
            .unwrap();
        assert!(o.is_error, "{}", o.value);
        assert_eq!(o.value["error"], "E_COST");
        assert_eq!(o.value["details"]["ceilings"]["rows_scanned_est"], 1);
        assert!(!o.value["details"]["suggestions"]
            .as_array()
            .unwrap()
            .is_empty());
        // The default ceilings run the same call.
        let o = backend(dir.path(), Ceilings::default())
            .call(
                "count_temporal_motifs",
                Some(json!({"motif": "all", "delta": 100, "window": {"t_a": 0, "t_b": 100}})),
            )
            .unwrap();
        assert!(!o.is_error, "{}", o.value);
    }

    #[test]
    fn a_read_only_backend_sees_each_publication_on_its_next_call() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), EVENTS);
        let b = backend(dir.path(), Ceilings::default());
        let n0 = b.dataset_card()["transaction_time"]["n_batches"].clone();
        let miss = b.call("entity_history", Some(json!({"uid": "z"}))).unwrap();
        assert_eq!(miss.value["error"], "E_NOT_FOUND");
        // A writer commits beside the backend (no lock is held by it).
        let mut w = Store::open(dir.path()).unwrap();
        let op = canon::parse(r#"{"op":"assert_node","uid":"z","label":"N","props":{},"vt_s":1}"#)
            .unwrap();
        w.write(vec![Op::from_json(&op)]).unwrap();
        let hit = b.call("entity_history", Some(json!({"uid": "z"}))).unwrap();
        assert!(!hit.is_error, "{}", hit.value);
        assert_eq!(
            b.dataset_card()["transaction_time"]["n_batches"],
            json!(n0.as_u64().unwrap() + 1)
        );
        drop(w);
    }

    #[test]
    fn results_of_calls_and_plans_are_found_again_and_unknown_ones_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), EVENTS);
        let b = backend(dir.path(), Ceilings::default());
        let env = b
            .call("entity_history", Some(json!({"uid": "a"})))
            .unwrap()
            .value;
        let d = env["result_digest"].as_str().unwrap();
        let got = b
            .call("get_result", Some(json!({"result_digest": d})))
            .unwrap();
        assert_eq!(got.value, env);
        let r = b.read_resource(&format!("{RESULT_PREFIX}{d}")).unwrap();
        assert_eq!(canon::parse(&r.text).unwrap(), env);
        let none = b
            .call("get_result", Some(json!({"result_digest": "f".repeat(64)})))
            .unwrap();
        assert!(none.is_error && none.value["error"] == "E_NOT_FOUND");
        assert!(b.read_resource("tgms://elsewhere").is_err());
        assert!(b.call("no_such_tool", None).is_none());
        // Nothing was written under the store: results live in memory.
        assert!(!dir.path().join("results").exists());
    }

    /// A minimal OpenAI-compatible chat server on 127.0.0.1: every request gets `reply` as
    /// the assistant's message. Bounded: it stops after `max` requests or 60 s.
    fn chat_server(reply: &str, max: usize) -> String {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let body = json!({"id": "r", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply}}]})
        .to_string();
        std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            for conn in listener.incoming().take(max) {
                if t0.elapsed().as_secs() > 60 {
                    break;
                }
                let Ok(mut c) = conn else { continue };
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    let lower = h.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut req = vec![0u8; len];
                let _ = r.read_exact(&mut req);
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    body.len(),
                    body
                );
            }
        });
        url
    }

    #[test]
    fn the_ask_tool_is_offered_only_with_a_model_and_runs_the_loop() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), EVENTS);
        assert!(!backend(dir.path(), Ceilings::default()).has_tool(ASK_TOOL));
        let plan = json!({"plan_id": "q", "steps": [{"id": "s1", "op": "entity_history",
            "args": {"uid": "a", "include_edges": true}}],
            "answer_spec": {"kind": "count", "from": "s1.edges_total"}});
        let url = chat_server(&plan.to_string(), 40);
        let flags = crate::ask::LlmFlags {
            model: Some("m".into()),
            base_url: Some(url),
            ..Default::default()
        };
        let cfg = crate::ask::AskConfig::resolve(&flags, |_| None).unwrap();
        let b = Backend::open(BackendOptions {
            store: dir.path().to_path_buf(),
            read_only: true,
            results: Results::Memory,
            ceilings: Ceilings::default(),
            ask: Some(cfg),
        })
        .unwrap();
        assert!(b.has_tool(ASK_TOOL));
        let o = b
            .call(
                ASK_TOOL,
                Some(json!({"question": "How many messages did a exchange?"})),
            )
            .unwrap();
        assert!(!o.is_error, "{}", o.value);
        assert_eq!(o.value["ok"], true, "{}", o.value);
        // The count the gated answer claims equals the operator's own edges_total.
        let env = b
            .call(
                "entity_history",
                Some(json!({"uid": "a", "include_edges": true})),
            )
            .unwrap()
            .value;
        let claims = o.value["gated_answer_object"]["claims"]
            .as_array()
            .unwrap()
            .clone();
        assert!(
            claims.iter().any(|c| c["value"] == env["edges_total"]),
            "{claims:?} vs {}",
            env["edges_total"]
        );
        // Its trace is kept for get_trace; a missing question is an argument error.
        let tid = o.value["trace_id"].as_str().unwrap();
        let t = b.call("get_trace", Some(json!({"trace_id": tid}))).unwrap();
        assert!(!t.is_error, "{}", t.value);
        let bad = b.call(ASK_TOOL, Some(json!({}))).unwrap();
        assert!(bad.is_error && bad.value["error"] == "E_INVALID_ARG");
        assert!(
            !dir.path().join("results").exists(),
            "read-only: nothing written"
        );
    }
}
