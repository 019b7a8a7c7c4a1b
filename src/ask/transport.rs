//! LLM transport (`agent-surface.md` §7): OpenAI-compatible chat completions over a blocking
//! HTTP client with `serde_json::Value` bodies (no typed SDK, so local servers that add or
//! omit fields still work), retries with backoff on connection errors, timeouts, HTTP 408,
//! 429 and 5xx, a per-request timeout, guided decoding per server family, and a response
//! cache keyed by model, prompt hash, temperature and seed.

use super::AskError;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tgms_engine::canon;

/// How guided (schema-constrained) decoding is requested; servers disagree on the shape
/// (see `docs/ask.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guided {
    /// No constraint: the reply is parsed and repaired.
    None,
    /// `response_format: {type: json_schema, json_schema: {name, schema}}` (OpenAI).
    OpenAi,
    /// `structured_outputs: {json: schema}` (vLLM ≥ 0.12 ignores the older `guided_json`).
    Vllm,
    /// `response_format: {type: json_object, schema}` (llama-cpp-python's server rejects the
    /// `json_schema` form with HTTP 500).
    LlamaCpp,
}

impl Guided {
    /// Parses `none|openai|vllm|llamacpp`.
    pub fn parse(s: &str) -> Result<Guided, AskError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "none" | "" => Guided::None,
            "openai" => Guided::OpenAi,
            "vllm" => Guided::Vllm,
            "llamacpp" | "llama.cpp" | "llama-cpp" => Guided::LlamaCpp,
            other => {
                return Err(AskError::Config {
                    setting: "guided".into(),
                    message: format!("unknown guided decoding mode '{other}'"),
                    fix: "use one of none, openai, vllm, llamacpp".into(),
                })
            }
        })
    }
    /// The flag spelling.
    pub fn name(self) -> &'static str {
        match self {
            Guided::None => "none",
            Guided::OpenAi => "openai",
            Guided::Vllm => "vllm",
            Guided::LlamaCpp => "llamacpp",
        }
    }
}

/// Transport settings (§7).
#[derive(Clone, Debug)]
pub struct LlmSettings {
    /// `…/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <api_key>` (`EMPTY` by default, for local servers).
    pub api_key: String,
    /// The model name of the request's `model` member.
    pub model: String,
    /// How a schema is attached to requests that carry one.
    pub guided: Guided,
    /// Merged into every request object (top-level keys replace).
    pub extra_body: Value,
    /// The whole-request timeout of one try (at least 1 s when set from flags or env).
    pub timeout: Duration,
    /// Retries after the first try.
    pub retries: u32,
    /// The wait before retry `i` (0-based) is `backoff_base · 2^i`.
    pub backoff_base: Duration,
    /// The sampling temperature sent (0 by default); part of the planner cache key.
    pub temperature: f64,
    /// The sampling seed sent; part of the planner cache key.
    pub seed: i64,
    /// The `max_tokens` completion limit sent.
    pub max_tokens: u64,
    /// The planner's response cache directory, if any.
    pub cache_dir: Option<PathBuf>,
}

/// Default base URL (§7).
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8000/v1";
/// Default per-request timeout (§7).
pub const DEFAULT_TIMEOUT_S: u64 = 3600;
/// Most bytes read of one response body.
const MAX_RESPONSE_BYTES: u64 = 64 << 20;

impl LlmSettings {
    /// Defaults for `model`.
    pub fn new(model: &str) -> LlmSettings {
        LlmSettings {
            base_url: DEFAULT_BASE_URL.into(),
            api_key: "EMPTY".into(),
            model: model.into(),
            guided: Guided::None,
            extra_body: json!({}),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
            retries: 4,
            backoff_base: Duration::from_secs(1),
            temperature: 0.0,
            seed: 0,
            max_tokens: 4096,
            cache_dir: None,
        }
    }
}

/// One chat message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    /// The message text.
    pub content: String,
}

impl Message {
    /// A `system` message with text `c`.
    pub fn system(c: &str) -> Message {
        Message {
            role: "system",
            content: c.into(),
        }
    }
    /// A `user` message with text `c`.
    pub fn user(c: &str) -> Message {
        Message {
            role: "user",
            content: c.into(),
        }
    }
    /// An `assistant` message with text `c` (an earlier reply replayed to the model).
    pub fn assistant(c: &str) -> Message {
        Message {
            role: "assistant",
            content: c.into(),
        }
    }
}

/// Who is asking: the cache covers the planner only (§7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A plan emission or repair; served from and written to the response cache.
    Planner,
    /// The answer-object writer; never cached.
    Reporter,
}

/// One chat request: the messages and, with guided decoding on, the schema (name, schema).
pub struct ChatRequest<'a> {
    /// The conversation so far, in order.
    pub messages: &'a [Message],
    /// The schema's name and JSON Schema the reply must follow, attached per `Guided` mode.
    pub schema: Option<(&'a str, &'a Value)>,
    /// Which side of the loop asks (decides whether the cache applies).
    pub purpose: Purpose,
}

/// One reply: its text (`choices[0].message.content`, null → "") and its telemetry
/// `{prompt_sha, latency_ms, prompt_tokens, completion_tokens, cached, tries}`.
#[derive(Clone, Debug)]
pub struct Reply {
    /// `choices[0].message.content`; a null content is `""`.
    pub text: String,
    /// `{prompt_sha, latency_ms, prompt_tokens, completion_tokens, cached, tries}`
    /// (`latency_ms` 0 and `tries` 0 for a cache hit).
    pub telemetry: Value,
}

/// A chat model. [`HttpModel`] speaks OpenAI-compatible HTTP; hosts may plug their own.
pub trait ChatModel: Send + Sync {
    /// The model name recorded in the ask record.
    fn name(&self) -> &str;
    /// The guided decoding mode (the loop passes schemas only when it is on).
    fn guided(&self) -> Guided;
    /// One completion.
    fn chat(&self, req: &ChatRequest<'_>) -> Result<Reply, AskError>;
}

/// The request object of §7 for `messages` (and the schema when guided decoding is on).
pub fn request_body(s: &LlmSettings, req: &ChatRequest<'_>) -> Value {
    let msgs: Vec<Value> = req
        .messages
        .iter()
        .map(|m| json!({"role": m.role, "content": m.content}))
        .collect();
    let mut body = json!({"model": s.model, "messages": msgs,
        "temperature": tgms_operators::json::float(s.temperature), "seed": s.seed,
        "max_tokens": s.max_tokens});
    if let Some((name, schema)) = req.schema {
        match s.guided {
            Guided::None => {}
            Guided::OpenAi => {
                body["response_format"] = json!({"type": "json_schema",
                    "json_schema": {"name": name, "schema": schema}})
            }
            Guided::Vllm => body["structured_outputs"] = json!({"json": schema}),
            Guided::LlamaCpp => {
                body["response_format"] = json!({"type": "json_object", "schema": schema})
            }
        }
    }
    if let (Value::Object(b), Value::Object(extra)) = (&mut body, &s.extra_body) {
        for (k, v) in extra {
            b.insert(k.clone(), v.clone());
        }
    }
    body
}

fn sha256_hex(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The OpenAI-compatible HTTP client.
pub struct HttpModel {
    settings: LlmSettings,
    agent: ureq::Agent,
}

/// What one HTTP try gave.
enum Try {
    Ok(String),
    /// Worth retrying (connection error, timeout, 408, 429, 5xx).
    Retry(String),
    Fatal(String),
}

impl HttpModel {
    /// A client for `settings`; nothing is sent until the first `chat`.
    pub fn new(settings: LlmSettings) -> HttpModel {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(settings.timeout))
            .http_status_as_error(false)
            .build();
        HttpModel {
            agent: ureq::Agent::new_with_config(config),
            settings,
        }
    }

    /// The settings the client was built with.
    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.settings.base_url.trim_end_matches('/')
        )
    }

    fn try_once(&self, body: &str) -> Try {
        let sent = self
            .agent
            .post(self.url())
            .header("Content-Type", "application/json")
            .header("Authorization", format!("Bearer {}", self.settings.api_key))
            .send(body);
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                return match e {
                    ureq::Error::BadUri(_)
                    | ureq::Error::Http(_)
                    | ureq::Error::InvalidProxyUrl => Try::Fatal(e.to_string()),
                    other => Try::Retry(other.to_string()),
                }
            }
        };
        let status = resp.status().as_u16();
        let text = resp
            .into_body()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string();
        match (status, text) {
            (200..=299, Ok(t)) => Try::Ok(t),
            (200..=299, Err(e)) => Try::Retry(format!("reading the response: {e}")),
            (408 | 429 | 500..=599, t) => {
                Try::Retry(format!("HTTP {status}: {}", short(&t.unwrap_or_default())))
            }
            (_, t) => Try::Fatal(format!("HTTP {status}: {}", short(&t.unwrap_or_default()))),
        }
    }

    fn cache_path(&self, prompt_sha: &str) -> Option<PathBuf> {
        let dir = self.settings.cache_dir.as_ref()?;
        let key = canon::digest(&json!([
            self.settings.model,
            prompt_sha,
            tgms_operators::json::float(self.settings.temperature),
            self.settings.seed
        ]));
        Some(dir.join(key))
    }
}

fn short(s: &str) -> String {
    super::fence::cap(s.trim(), 300)
}

impl ChatModel for HttpModel {
    fn name(&self) -> &str {
        &self.settings.model
    }
    fn guided(&self) -> Guided {
        self.settings.guided
    }
    fn chat(&self, req: &ChatRequest<'_>) -> Result<Reply, AskError> {
        let body = request_body(&self.settings, req);
        // The prompt hash covers everything sent except model, temperature and seed (which
        // are the other parts of the cache key).
        let mut prompt = body.clone();
        if let Value::Object(m) = &mut prompt {
            for k in ["model", "temperature", "seed"] {
                m.remove(k);
            }
        }
        let prompt_sha = sha256_hex(&canon::to_string(&prompt));
        let cache = match req.purpose {
            Purpose::Planner => self.cache_path(&prompt_sha),
            Purpose::Reporter => None,
        };
        if let Some(text) = cache.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
            return Ok(Reply {
                text,
                telemetry: json!({"prompt_sha": prompt_sha, "latency_ms": 0, "prompt_tokens": null,
                    "completion_tokens": null, "cached": true, "tries": 0}),
            });
        }
        let text = canon::to_string(&body);
        let t0 = Instant::now();
        let mut tries = 0u32;
        let raw = loop {
            tries += 1;
            match self.try_once(&text) {
                Try::Ok(t) => break t,
                Try::Retry(d) if tries <= self.settings.retries => {
                    let wait = self.settings.backoff_base * 2u32.saturating_pow(tries - 1);
                    eprintln!("tgms ask: LLM call failed ({d}); retry {tries} in {wait:?}");
                    std::thread::sleep(wait);
                }
                Try::Retry(d) | Try::Fatal(d) => {
                    return Err(AskError::Transport {
                        url: self.url(),
                        detail: d,
                        tries,
                    })
                }
            }
        };
        let latency_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let v: Value = canon::parse(&raw).map_err(|e| AskError::Transport {
            url: self.url(),
            detail: format!("the response is not JSON: {e}"),
            tries,
        })?;
        let content = &v["choices"][0]["message"]["content"];
        let text = match content {
            Value::String(s) => s.clone(),
            Value::Null if v["choices"][0].is_object() => String::new(),
            _ => {
                return Err(AskError::Transport {
                    url: self.url(),
                    detail: format!("no choices[0].message in the response: {}", short(&raw)),
                    tries,
                })
            }
        };
        if let Some(p) = &cache {
            if let Some(dir) = p.parent() {
                let tmp = dir.join(format!(".{}.tmp", prompt_sha));
                let _ = std::fs::create_dir_all(dir)
                    .and_then(|_| std::fs::write(&tmp, &text))
                    .and_then(|_| std::fs::rename(&tmp, p));
            }
        }
        Ok(Reply {
            text,
            telemetry: json!({"prompt_sha": prompt_sha,
                "latency_ms": tgms_operators::json::float((latency_ms * 1000.0).round() / 1000.0),
                "prompt_tokens": v["usage"]["prompt_tokens"], "completion_tokens": v["usage"]["completion_tokens"],
                "cached": false, "tries": tries}),
        })
    }
}
