//! The agent loop `ask` (`agent-surface.md` §2): a model plans and reports; tgms validates,
//! executes, verifies and gates, and keeps an ask record of everything for the trace viewer.
//!
//! question → dataset card + memory notes → planner prompt → reply parsing (fences stripped)
//! → static verifier → up to `max_repairs` repairs sharing one budget of `max_repairs + 1`
//! plan emissions, static and runtime (`E_COST`, `E_NOT_FOUND`, `E_LIMIT`, `E_INVALID_ARG`,
//! `E_SCHEMA`) → execute → reporter (the model, or the mechanical reporter) → claim verifier
//! → claim gating → prose gating (D-V8) → the final answer.
//!
//! Library entry points: [`ask`] (HTTP model from an [`AskConfig`]) and [`ask_with`] (any
//! [`ChatModel`]). A read-only store keeps envelopes and traces in memory and writes
//! nothing; a writable one stores them, and the ask record, in the store directory.

pub mod fence;
pub mod guided;
pub mod memory;
pub mod parse;
pub mod prompt;
pub mod record;
pub mod transport;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tgms_engine::Store;
use tgms_verifier::exec::{self, ResultStore};
use tgms_verifier::plan::Plan;
use tgms_verifier::validate::{validate_static, Options};
use tgms_verifier::{claims, prose};
pub use transport::{
    ChatModel, ChatRequest, Guided, HttpModel, LlmSettings, Message, Purpose, Reply,
};

/// Errors of the agent loop. Each names the problem and, where there is one, the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// Planning needs a model and none is configured.
    #[error("no model configured: {fix}")]
    NoModel {
        /// How to configure one (flags or environment variables).
        fix: String,
    },
    /// A setting (flag or environment variable) is malformed.
    #[error("invalid setting {setting}: {message}; {fix}")]
    Config {
        /// The setting at fault, e.g. `llm base URL`, `guided` or an environment variable name.
        setting: String,
        /// What is wrong with the value given.
        message: String,
        /// What to give instead.
        fix: String,
    },
    /// The LLM endpoint failed after retries, or answered with something that is not a chat
    /// completion.
    #[error("LLM transport: {detail} (POST {url}, {tries} tries)")]
    Transport {
        /// The chat-completions URL posted to.
        url: String,
        /// The last failure: the HTTP status and body start, the client error, or what the
        /// response lacked.
        detail: String,
        /// Tries made, the first included.
        tries: u32,
    },
    /// A file of the store directory (ask record, memory file) could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file that could not be read or written.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The memory file exists but does not parse.
    #[error("memory file {} is damaged: {message}", path.display())]
    Memory {
        /// The memory file.
        path: PathBuf,
        /// The parse error, or what the file lacks.
        message: String,
    },
    /// The store is open read-only and the action writes.
    #[error("{} is open read-only; cannot {what}", path.display())]
    ReadOnly {
        /// The store directory.
        path: PathBuf,
        /// The refused action, in words (e.g. `build or refresh memory notes`).
        what: String,
    },
    /// An operator the memory builder calls refused.
    #[error("operator {op} failed: {}", payload["message"].as_str().unwrap_or(""))]
    Operator {
        /// The operator called.
        op: String,
        /// Its error payload `{"error", "message", "details"}`, passed on as is.
        payload: Value,
    },
    /// A store error (from the engine, with its own payload).
    #[error("{0}")]
    Store(#[from] tgms_engine::Error),
}

impl AskError {
    /// The spec error payload `{"error", "message", "details"}` (`operators.md` §5.1).
    pub fn payload(&self) -> Value {
        match self {
            AskError::NoModel { fix } => {
                json!({"error": "E_INVALID_ARG", "message": self.to_string(),
                "details": {"fix": fix}})
            }
            AskError::Config { setting, fix, .. } => json!({"error": "E_INVALID_ARG",
                "message": self.to_string(), "details": {"setting": setting, "fix": fix}}),
            AskError::Transport { url, tries, .. } => json!({"error": "E_INTERNAL",
                "message": self.to_string(), "details": {"url": url, "tries": tries}}),
            AskError::Io { path, .. } => json!({"error": "E_INTERNAL", "message": self.to_string(),
                "details": {"path": path.display().to_string()}}),
            AskError::Memory { path, .. } => {
                json!({"error": "E_STATE", "message": self.to_string(),
                "details": {"path": path.display().to_string(),
                    "fix": "remove the file and run `tgms memory build STORE`"}})
            }
            AskError::ReadOnly { path, .. } => {
                json!({"error": "E_STATE", "message": self.to_string(),
                "details": {"path": path.display().to_string(),
                    "fix": "run it without --read-only, or when no other process holds the writer lock"}})
            }
            AskError::Operator { payload, .. } => payload.clone(),
            AskError::Store(e) => tgms_operators::error::store_payload(e),
        }
    }
}

/// The task input uids the grounding check admits (`agent-surface.md` §11.3).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum InputUids {
    /// The registered uids the question names at token boundaries.
    #[default]
    FromQuestion,
    /// Exactly these.
    Given(BTreeSet<String>),
    /// No grounding check.
    NoGrounding,
}

/// Who writes the answer object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReporterMode {
    /// The model (falling back to the mechanical reporter after two invalid replies).
    #[default]
    Model,
    /// The mechanical reporter of `plans-and-claims.md` §7.2 (deterministic, no model call).
    Mechanical,
}

/// Everything `ask` is configured by.
#[derive(Clone, Debug)]
pub struct AskConfig {
    /// The model endpoint; `None` means no model is configured (planning is refused).
    pub llm: Option<LlmSettings>,
    /// Repairs after the first emission; the budget is `max_repairs + 1` emissions.
    pub max_repairs: usize,
    /// Which uids the grounding check admits as task inputs.
    pub input_uids: InputUids,
    /// Ask of the belief state at this transaction time: pinned on every step that takes
    /// `as_of_tt` and does not set it.
    pub as_of_tt: Option<i64>,
    /// Who writes the answer object.
    pub reporter: ReporterMode,
    /// Retrieve evolution-memory notes for the planner.
    pub use_memory: bool,
    /// Store the ask record in the store directory (writable stores only).
    pub save_record: bool,
    /// Cost ceilings of the static verifier and the executor (the MCP server's
    /// `--ceilings`; default: the registry's).
    pub ceilings: tgms_operators::cost::Ceilings,
    /// The static verifier checks `$ref` and `answer_spec.from` paths against operator output
    /// contracts; `false` is the "output contracts off" ablation of `tgms eval run-suite`.
    pub check_output_fields: bool,
    /// Truncation taint caps claims (`plans-and-claims.md` §8.4); `false` is the "taint
    /// ignored" ablation of `tgms eval run-suite`.
    pub honor_truncation: bool,
}

impl Default for AskConfig {
    fn default() -> Self {
        AskConfig {
            llm: None,
            max_repairs: 3,
            input_uids: InputUids::FromQuestion,
            as_of_tt: None,
            reporter: ReporterMode::Model,
            use_memory: true,
            save_record: true,
            ceilings: tgms_operators::cost::Ceilings::default(),
            check_output_fields: true,
            honor_truncation: true,
        }
    }
}

/// Transport settings given on the command line; each overrides its environment variable.
#[derive(Clone, Debug, Default)]
pub struct LlmFlags {
    /// `--model` (over `TGMS_LLM_MODEL`); without a model no LLM is configured.
    pub model: Option<String>,
    /// `--llm-base-url` (over `TGMS_LLM_BASE_URL`): an http(s) URL ending in the API root.
    pub base_url: Option<String>,
    /// `--guided` (over `TGMS_LLM_GUIDED`): `none`, `openai`, `vllm` or `llamacpp`.
    pub guided: Option<String>,
    /// `--llm-extra-body` (over `TGMS_LLM_EXTRA_BODY`): JSON object text merged into
    /// every request.
    pub extra_body: Option<String>,
    /// `--llm-timeout-s` (over `TGMS_LLM_TIMEOUT_S`): per-request timeout in seconds,
    /// raised to at least 1.
    pub timeout_s: Option<u64>,
    /// Retries after the first try (over `TGMS_LLM_RETRIES`), capped at 16.
    pub retries: Option<u32>,
    /// `--llm-cache-dir` (over `TGMS_LLM_CACHE_DIR`): the planner response cache.
    pub cache_dir: Option<PathBuf>,
}

/// The environment variables read by [`AskConfig::from_env`].
pub const ENV_VARS: [&str; 9] = [
    "TGMS_LLM_MODEL",
    "TGMS_LLM_BASE_URL",
    "TGMS_LLM_API_KEY",
    "OPENAI_API_KEY",
    "TGMS_LLM_GUIDED",
    "TGMS_LLM_EXTRA_BODY",
    "TGMS_LLM_TIMEOUT_S",
    "TGMS_LLM_RETRIES",
    "TGMS_LLM_CACHE_DIR",
];

impl AskConfig {
    /// The configuration from the process environment (no flags).
    pub fn from_env() -> Result<AskConfig, AskError> {
        Self::resolve(&LlmFlags::default(), |k| std::env::var(k).ok())
    }

    /// Flags over environment (`env` looks a variable up; tests pass a map). A model comes
    /// from `--model` or `TGMS_LLM_MODEL`; without one `llm` is `None`.
    pub fn resolve(
        flags: &LlmFlags,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AskConfig, AskError> {
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let model = flags.model.clone().or_else(|| env("TGMS_LLM_MODEL"));
        let mut cfg = AskConfig::default();
        let Some(model) = model else {
            return Ok(cfg);
        };
        let mut s = LlmSettings::new(&model);
        if let Some(u) = flags.base_url.clone().or_else(|| env("TGMS_LLM_BASE_URL")) {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(AskError::Config {
                    setting: "llm base URL".into(),
                    message: format!("'{u}' is not an http(s) URL"),
                    fix: "give the server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1"
                        .into(),
                });
            }
            s.base_url = u;
        }
        if let Some(k) = env("TGMS_LLM_API_KEY").or_else(|| env("OPENAI_API_KEY")) {
            s.api_key = k;
        }
        if let Some(g) = flags.guided.clone().or_else(|| env("TGMS_LLM_GUIDED")) {
            s.guided = Guided::parse(&g)?;
        }
        if let Some(x) = flags
            .extra_body
            .clone()
            .or_else(|| env("TGMS_LLM_EXTRA_BODY"))
        {
            match tgms_engine::canon::parse(&x) {
                Ok(v @ Value::Object(_)) => s.extra_body = v,
                _ => {
                    return Err(AskError::Config {
                        setting: "llm extra body".into(),
                        message: format!("'{}' is not a JSON object", fence::cap(&x, 80)),
                        fix: "pass a JSON object such as '{\"top_p\": 1}'".into(),
                    })
                }
            }
        }
        let num = |name: &str, flag: Option<u64>| -> Result<Option<u64>, AskError> {
            match flag {
                Some(v) => Ok(Some(v)),
                None => env(name)
                    .map(|v| {
                        v.trim().parse::<u64>().map_err(|_| AskError::Config {
                            setting: name.into(),
                            message: format!("'{v}' is not a non-negative integer"),
                            fix: format!("set {name} to a whole number"),
                        })
                    })
                    .transpose(),
            }
        };
        if let Some(t) = num("TGMS_LLM_TIMEOUT_S", flags.timeout_s)? {
            s.timeout = Duration::from_secs(t.max(1));
        }
        if let Some(r) = num("TGMS_LLM_RETRIES", flags.retries.map(u64::from))? {
            s.retries = r.min(16) as u32;
        }
        s.cache_dir = flags
            .cache_dir
            .clone()
            .or_else(|| env("TGMS_LLM_CACHE_DIR").map(PathBuf::from));
        cfg.llm = Some(s);
        Ok(cfg)
    }

    /// True when a model is configured (the MCP server offers its `ask` tool only then).
    pub fn model_configured(&self) -> bool {
        self.llm.is_some()
    }
}

/// The outcome of one question.
pub struct AskOutcome {
    /// The ask record (§2 step 6 content plus the planning history); see `docs/ask.md`.
    pub record: Value,
    /// `digest` of the record without timing fields.
    pub ask_id: String,
    /// Where the record was stored (writable stores with `save_record`).
    pub record_path: Option<PathBuf>,
    /// The final trace is `ok`.
    pub ok: bool,
    /// The envelopes and traces of this run (in memory for a read-only store).
    pub results: ResultStore,
    /// Loop time spent outside model calls, in ms.
    pub overhead_ms: f64,
}

impl AskOutcome {
    /// The gated answer object (what a user may be shown).
    pub fn answer(&self) -> &Value {
        &self.record["gated_answer_object"]
    }
}

/// The repairable runtime codes (§2 step 3b).
pub const REPAIRABLE: [&str; 5] = [
    "E_COST",
    "E_NOT_FOUND",
    "E_LIMIT",
    "E_INVALID_ARG",
    "E_SCHEMA",
];

/// Asks `question` of `store` with the HTTP model of `config.llm`.
pub fn ask(store: &Store, question: &str, config: &AskConfig) -> Result<AskOutcome, AskError> {
    let Some(s) = &config.llm else {
        return Err(AskError::NoModel {
            fix: "pass --model NAME (and --llm-base-url URL) or set TGMS_LLM_MODEL and TGMS_LLM_BASE_URL to an OpenAI-compatible server".into(),
        });
    };
    let model = HttpModel::new(s.clone());
    ask_with(store, question, config, &model)
}

/// The registered uids that `question` names at token boundaries (the CLI's and the MCP
/// server's rule, [`crate::grounding::uids_in_text`]).
pub fn question_uids(store: &Store, question: &str) -> BTreeSet<String> {
    crate::grounding::uids_in_text(store.snapshot(), question)
}

/// One planning session: the emissions so far against the shared budget.
struct Planning<'a> {
    model: &'a dyn ChatModel,
    budget: usize,
    emissions: Vec<Value>,
    first_valid: Option<bool>,
    model_ms: f64,
}

struct Ctx<'a> {
    store: &'a Store,
    ceilings: tgms_operators::cost::Ceilings,
    uids: Option<BTreeSet<String>>,
    as_of_tt: Option<i64>,
    check_output_fields: bool,
}

/// Pins `as_of_tt` on every step whose operator takes it and does not set it.
fn pin_as_of(plan: &mut Value, tt: i64) {
    for s in plan["steps"].as_array_mut().into_iter().flatten() {
        let takes = s["op"]
            .as_str()
            .and_then(tgms_operators::registry::lookup)
            .is_some_and(|spec| spec.args.iter().any(|a| a.name == "as_of_tt"));
        if let (true, Some(args)) = (takes, s.get_mut("args").and_then(Value::as_object_mut)) {
            args.entry("as_of_tt").or_insert(json!(tt));
        }
    }
}

impl Planning<'_> {
    /// Parses and statically verifies one reply: Ok((plan json, IR)) or Err((error payload,
    /// plan json if it parsed)).
    fn evaluate(&self, raw: &str, ctx: &Ctx<'_>) -> Result<(Value, Plan), (Value, Option<Value>)> {
        let mut v = parse::parse_reply(raw).map_err(|m| {
            (
                json!({"error": "E_SCHEMA", "message": format!("not valid JSON: {m}")}),
                None,
            )
        })?;
        if let Some(tt) = ctx.as_of_tt {
            pin_as_of(&mut v, tt);
        }
        let report = validate_static(
            &v,
            &Options {
                stats: Some(ctx.store.stats()),
                task_input_uids: ctx.uids.as_ref(),
                ceilings: ctx.ceilings,
                check_output_fields: ctx.check_output_fields,
            },
        );
        match (report.valid(), report.plan.clone()) {
            (true, Some(p)) => Ok((v, p)),
            _ => Err((report.repair_payload(), Some(v))),
        }
    }

    /// Emits plans until one passes or the budget is spent (§4.2). `messages` ends with the
    /// user turn that asks for the plan; rejected turns are appended to it.
    fn run(
        &mut self,
        messages: &mut Vec<Message>,
        reason: &str,
        ctx: &Ctx<'_>,
    ) -> Result<Option<(Value, Plan)>, AskError> {
        let schema = guided::guided_plan_schema();
        let mut reason = reason.to_string();
        while self.emissions.len() < self.budget {
            let guided = self.model.guided() != Guided::None;
            let t = Instant::now();
            let reply = self.model.chat(&ChatRequest {
                messages,
                schema: guided.then_some(("plan", &schema)),
                purpose: Purpose::Planner,
            });
            self.model_ms += t.elapsed().as_secs_f64() * 1000.0;
            let reply = reply?;
            let mut e = json!({"n": self.emissions.len() + 1, "reason": reason, "raw": reply.text,
                "call": reply.telemetry});
            let got = self.evaluate(&reply.text, ctx);
            self.first_valid.get_or_insert(got.is_ok());
            match got {
                Ok((v, p)) => {
                    e["valid"] = json!(true);
                    e["plan_json"] = v.clone();
                    self.emissions.push(e);
                    return Ok(Some((v, p)));
                }
                Err((err, pj)) => {
                    e["valid"] = json!(false);
                    e["error"] = err.clone();
                    if let Some(pj) = pj {
                        e["plan_json"] = pj;
                    }
                    if self.emissions.len() + 1 < self.budget {
                        let m = prompt::static_repair_message(&err);
                        messages.push(Message::assistant(&reply.text));
                        messages.push(Message::user(&m));
                        e["repair_message"] = json!(m);
                    }
                    self.emissions.push(e);
                    reason = "static_repair".into();
                }
            }
        }
        Ok(None)
    }
}

/// The first repairable error of a trace in execution order.
fn repairable_error(trace: &Value) -> Option<Value> {
    trace["steps"]
        .as_array()?
        .iter()
        .find(|r| {
            r["error"]["error"]
                .as_str()
                .is_some_and(|c| REPAIRABLE.contains(&c))
        })
        .map(|r| r["error"].clone())
}

/// The LLM reporter (§5.1): two attempts, then `None` (the caller falls back to the
/// mechanical answer). Returns (answer object or None, attempts).
fn llm_report(
    model: &dyn ChatModel,
    question: &str,
    summary: &str,
    model_ms: &mut f64,
) -> Result<(Option<Value>, Vec<Value>), AskError> {
    let schema = claims::answer_schema();
    let mut messages = vec![
        Message::system(prompt::REPORTER_PROMPT),
        Message::user(&prompt::reporter_user_message(question, summary)),
    ];
    let mut attempts = Vec::new();
    for _ in 0..2 {
        let guided = model.guided() != Guided::None;
        let t = Instant::now();
        let reply = model.chat(&ChatRequest {
            messages: &messages,
            schema: guided.then_some(("answer_object", &schema)),
            purpose: Purpose::Reporter,
        });
        *model_ms += t.elapsed().as_secs_f64() * 1000.0;
        let reply = reply?;
        let checked = parse::parse_reply(&reply.text).and_then(|mut v| {
            if let Value::Object(m) = &mut v {
                // The typed answer is system-owned (D-A1).
                m.remove("answer");
            }
            let mut vs = Vec::new();
            tgms_operators::schema::validate(
                &schema,
                &v,
                &mut Vec::new(),
                Some(&["text", "claims", "answer"]),
                &mut vs,
            );
            match tgms_operators::schema::first_violation(vs) {
                Some(e) => Err(e.message),
                None => Ok(v),
            }
        });
        match checked {
            Ok(v) => {
                attempts.push(json!({"raw": reply.text, "valid": true, "call": reply.telemetry}));
                return Ok((Some(v), attempts));
            }
            Err(e) => {
                attempts.push(
                    json!({"raw": reply.text, "valid": false, "error": e, "call": reply.telemetry}),
                );
                messages.push(Message::assistant(&reply.text));
                messages.push(Message::user(&format!(
                    "Invalid answer object ({e}). Emit corrected JSON only."
                )));
            }
        }
    }
    Ok((None, attempts))
}

/// Asks `question` of `store` with `model` (§2). Errors are transport and store failures;
/// a question no plan could answer is an `Ok` outcome whose final answer says so.
pub fn ask_with(
    store: &Store,
    question: &str,
    config: &AskConfig,
    model: &dyn ChatModel,
) -> Result<AskOutcome, AskError> {
    let t0 = Instant::now();
    let stats = store.stats();
    let card = prompt::dataset_card(stats);
    let notes: Vec<Value> = if config.use_memory {
        memory::notes_for_question(store, question)?
    } else {
        Vec::new()
    };
    let note_texts: Vec<String> = notes
        .iter()
        .map(|n| n["text"].as_str().unwrap_or_default().to_string())
        .collect();
    let uids = match &config.input_uids {
        InputUids::FromQuestion => Some(question_uids(store, question)),
        InputUids::Given(s) => Some(s.clone()),
        InputUids::NoGrounding => None,
    };
    let ctx = Ctx {
        store,
        uids: uids.clone(),
        as_of_tt: config.as_of_tt,
        ceilings: config.ceilings,
        check_output_fields: config.check_output_fields,
    };
    let exec_opts = exec::ExecOptions {
        call: tgms_operators::pipeline::CallOptions {
            ceilings: config.ceilings,
            ..Default::default()
        },
        ..Default::default()
    };
    let system = Message::system(prompt::system_message());
    let user = Message::user(&prompt::user_message(
        &card,
        &note_texts,
        question,
        config.as_of_tt,
    ));
    let base = vec![system, user];
    let rs = if store.is_read_only() {
        ResultStore::memory()
    } else {
        ResultStore::in_dir(store.dir())
    };
    let mut planning = Planning {
        model,
        budget: config.max_repairs + 1,
        emissions: Vec::new(),
        first_valid: None,
        model_ms: 0.0,
    };
    let mut messages = base.clone();
    let mut planned = planning.run(&mut messages, "initial", &ctx)?;
    let mut runtime_turns: Vec<Message> = Vec::new();
    let mut executions = Vec::new();
    let mut last: Option<(Plan, Value)> = None;
    let mut final_plan = Value::Null;
    let snap = store.snapshot();
    while let Some((v, p)) = planned.take() {
        final_plan = v;
        let trace = match exec::execute(&p, snap, &rs, &exec_opts) {
            Ok(ex) => ex.trace,
            // Only a plan over 12 steps has no trace, and the static verifier refuses those.
            Err(e) => json!({"plan_id": p.plan_id, "steps": [], "ok": false, "answer": null,
                "answer_error": e.to_string(), "error": e.payload()}),
        };
        let err = repairable_error(&trace);
        executions.push(
            json!({"emission": planning.emissions.len(), "trace_id": trace["trace_id"],
            "ok": trace["ok"], "runtime_error": err}),
        );
        last = Some((p, trace));
        let Some(err) = err else { break };
        if planning.emissions.len() >= planning.budget {
            break;
        }
        let raw = planning
            .emissions
            .last()
            .map(|e| e["raw"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        let m = prompt::runtime_repair_message(&err);
        if let Some(e) = planning.emissions.last_mut() {
            e["repair_message"] = json!(m);
        }
        runtime_turns.push(Message::assistant(&raw));
        runtime_turns.push(Message::user(&m));
        // Earlier static-rejection turns are not replayed (§4.3).
        messages = base.iter().chain(runtime_turns.iter()).cloned().collect();
        planned = planning.run(&mut messages, "runtime_repair", &ctx)?;
        if planned.is_none() {
            final_plan = Value::Null;
        }
    }
    let mut model_ms = planning.model_ms;
    let mut reporter = json!({"source": "none", "attempts": []});
    let (
        trace,
        answer_object,
        verification,
        gated,
        gated_verification,
        prose_report,
        final_answer,
        final_verification,
    ) = match &last {
        None => {
            let a = json!({"text": "No plan passed verification; no answer was computed.", "claims": []});
            reporter = json!({"source": "none", "attempts": []});
            (
                Value::Null,
                a.clone(),
                Value::Null,
                a.clone(),
                Value::Null,
                Value::Null,
                a,
                Value::Null,
            )
        }
        Some((p, trace)) => {
            let mechanical = claims::mechanical_answer(&p.answer_kind, &p.answer_from, trace);
            let mut ans = mechanical.clone();
            if config.reporter == ReporterMode::Model {
                let summary = prompt::trace_summary(trace, &rs, &p.raw["answer_spec"]);
                let (got, attempts) = llm_report(model, question, &summary, &mut model_ms)?;
                reporter = json!({"source": if got.is_some() { "model" } else { "mechanical_fallback" }, "attempts": attempts});
                if let Some(mut g) = got {
                    if let Some(a) = mechanical.get("answer") {
                        g["answer"] = a.clone();
                    }
                    ans = g;
                }
            } else {
                reporter = json!({"source": "mechanical", "attempts": []});
            }
            let vctx = claims::Ctx {
                trace,
                results: &rs,
                snap: Some(snap),
                honor_truncation: config.honor_truncation,
            };
            let verification = claims::verify(&vctx, &ans);
            let (gated, gv) = claims::gate(&vctx, &ans);
            let lex = prose::uid_lexicon(trace, &rs);
            let pg = prose::gate_text(&gated, &gv, &lex);
            let fv = claims::verify(&vctx, &pg.answer);
            (
                trace.clone(),
                ans,
                verification,
                gated,
                gv,
                pg.report(),
                pg.answer,
                fv,
            )
        }
    };
    let ok = trace["ok"] == Value::Bool(true);
    let mut rec = json!({
        "kind": "ask_record",
        "question": question,
        "model": model.name(),
        "guided": model.guided().name(),
        "config": {"max_repairs": config.max_repairs, "as_of_tt": config.as_of_tt,
            "task_input_uids": uids.map(|u| json!(u)).unwrap_or(Value::Null),
            "reporter": match config.reporter { ReporterMode::Model => "model", ReporterMode::Mechanical => "mechanical" },
            "use_memory": config.use_memory},
        "store": {"last_tt": stats.last_tt, "n_batches": stats.n_batches,
            "extent": {"vt_min": stats.vt_min, "vt_max": stats.vt_max}, "read_only": store.is_read_only()},
        "dataset_card": card,
        "memory_notes": notes,
        "system_prompt_sha": record::sha256_hex(prompt::system_message()),
        "plan_result": {"plan": final_plan, "attempts": planning.emissions,
            "first_emission_valid": planning.first_valid.unwrap_or(false)},
        "executions": executions,
        "trace": trace,
        "reporter": reporter,
        "answer_object": answer_object,
        "verification": verification,
        "claim_gated_answer_object": gated,
        "claim_gated_verification": gated_verification,
        "prose_gating": prose_report,
        "gated_answer_object": final_answer,
        "final_verification": final_verification,
        "ok": ok,
    });
    // The ablation switches are recorded only when off, so default records keep their ids.
    for (k, on) in [
        ("check_output_fields", config.check_output_fields),
        ("honor_truncation", config.honor_truncation),
    ] {
        if !on {
            rec["config"][k] = json!(false);
        }
    }
    let ask_id = record::ask_id(&rec);
    rec["ask_id"] = json!(ask_id);
    let overhead_ms = (t0.elapsed().as_secs_f64() * 1000.0 - model_ms).max(0.0);
    rec["timing"] = json!({"total_ms": tgms_operators::json::float(((t0.elapsed().as_secs_f64() * 1e6).round()) / 1000.0),
        "model_ms": tgms_operators::json::float((model_ms * 1000.0).round() / 1000.0),
        "overhead_ms": tgms_operators::json::float((overhead_ms * 1000.0).round() / 1000.0)});
    let record_path = if config.save_record && !store.is_read_only() {
        Some(record::save(store.dir(), &ask_id, &rec)?)
    } else {
        None
    };
    Ok(AskOutcome {
        record: rec,
        ask_id,
        record_path,
        ok,
        results: rs,
        overhead_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: std::collections::BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn settings_from_env_and_flags() {
        let none = AskConfig::resolve(&LlmFlags::default(), env(&[])).unwrap();
        assert!(!none.model_configured());
        let e = env(&[
            ("TGMS_LLM_MODEL", "m-env"),
            ("TGMS_LLM_BASE_URL", "http://h:1/v1"),
            ("OPENAI_API_KEY", "sk-open"),
            ("TGMS_LLM_GUIDED", "vllm"),
            ("TGMS_LLM_TIMEOUT_S", "9"),
            ("TGMS_LLM_RETRIES", "2"),
        ]);
        let c = AskConfig::resolve(&LlmFlags::default(), &e).unwrap();
        let s = c.llm.unwrap();
        assert_eq!(
            (s.model.as_str(), s.base_url.as_str(), s.api_key.as_str()),
            ("m-env", "http://h:1/v1", "sk-open")
        );
        assert_eq!(
            (s.guided, s.timeout, s.retries),
            (Guided::Vllm, Duration::from_secs(9), 2)
        );
        let flags = LlmFlags {
            model: Some("m-flag".into()),
            guided: Some("llamacpp".into()),
            extra_body: Some("{\"max_tokens\": 5}".into()),
            ..LlmFlags::default()
        };
        let s = AskConfig::resolve(&flags, &e).unwrap().llm.unwrap();
        assert_eq!((s.model.as_str(), s.guided), ("m-flag", Guided::LlamaCpp));
        assert_eq!(s.extra_body, json!({"max_tokens": 5}));
        // TGMS_LLM_API_KEY wins over OPENAI_API_KEY.
        let k = AskConfig::resolve(
            &flags,
            env(&[("TGMS_LLM_API_KEY", "tg"), ("OPENAI_API_KEY", "oa")]),
        )
        .unwrap();
        assert_eq!(k.llm.unwrap().api_key, "tg");
        for (flags, setting) in [
            (
                LlmFlags {
                    model: Some("m".into()),
                    base_url: Some("ftp://x".into()),
                    ..Default::default()
                },
                "llm base URL",
            ),
            (
                LlmFlags {
                    model: Some("m".into()),
                    extra_body: Some("[1]".into()),
                    ..Default::default()
                },
                "llm extra body",
            ),
            (
                LlmFlags {
                    model: Some("m".into()),
                    guided: Some("tgi".into()),
                    ..Default::default()
                },
                "guided",
            ),
        ] {
            match AskConfig::resolve(&flags, env(&[])) {
                Err(AskError::Config { setting: s, .. }) => assert_eq!(s, setting),
                other => panic!("{setting}: {other:?}", other = other.map(|_| ())),
            }
        }
        let bad = AskConfig::resolve(
            &LlmFlags::default(),
            env(&[("TGMS_LLM_MODEL", "m"), ("TGMS_LLM_TIMEOUT_S", "soon")]),
        );
        assert!(matches!(bad, Err(AskError::Config { .. })));
        assert_eq!(
            AskError::NoModel { fix: "f".into() }.payload()["error"],
            "E_INVALID_ARG"
        );
    }

    #[test]
    fn request_body_merges_extra_and_guided_members() {
        let mut s = LlmSettings::new("m");
        s.extra_body = json!({"max_tokens": 7, "top_p": 1});
        s.guided = Guided::LlamaCpp;
        let schema = json!({"type": "object"});
        let msgs = [Message::system("sys"), Message::user("u")];
        let b = transport::request_body(
            &s,
            &ChatRequest {
                messages: &msgs,
                schema: Some(("plan", &schema)),
                purpose: Purpose::Planner,
            },
        );
        assert_eq!(
            b,
            json!({"model": "m", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "u"}],
            "temperature": 0.0, "seed": 0, "max_tokens": 7, "top_p": 1,
            "response_format": {"type": "json_object", "schema": {"type": "object"}}})
        );
    }
}
