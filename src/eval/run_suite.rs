//! `tgms eval run-suite` (`evaluation.md` §3.10): runs one system over one split of a suite,
//! scores every task (§3.9), caches the rows per configuration and refuses a second run of
//! the test split unless forced; the campaign metrics of `plans-and-claims.md` §10.2.

use super::baselines::{Baselines, Retrieval};
use super::score::{prediction, score};
use super::suite::run_oracle;
use crate::ask::{self, AskConfig, ChatModel, InputUids};
use anyhow::bail;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tgms_engine::{canon, Snapshot, Store};
use tgms_verifier::claims;

/// The systems, in the order a campaign runs them.
pub const SYSTEMS: [&str; 9] = [
    "oracle",
    "latest-state",
    "ours",
    "ours-noverify",
    "ours-nomem",
    "ours-contracts-off",
    "ours-taint-ignored",
    "sql-bitemporal",
    "vector-rag",
];

/// True for the systems that need a model.
pub fn needs_model(system: &str) -> bool {
    !matches!(system, "oracle" | "latest-state")
}

/// How to run a suite.
pub struct RunArgs<'m> {
    /// The system to run: one of `SYSTEMS`.
    pub system: String,
    /// `dev` or `test`.
    pub split: String,
    /// Run the test split again although this configuration already ran it.
    pub force: bool,
    /// Rows are cached under `cache_dir/<config hash>/`.
    pub cache_dir: PathBuf,
    /// The model configuration (model systems).
    pub ask: AskConfig,
    /// The chat model; required by the systems `needs_model` names.
    pub model: Option<&'m dyn ChatModel>,
    /// The Python with `duckdb` for `sql-bitemporal` (and the embedding model for
    /// `vector-rag --retrieval minilm`).
    pub python: String,
    /// How `vector-rag` retrieves.
    pub retrieval: Retrieval,
    /// Run only the first `limit` tasks of the split (a small campaign).
    pub limit: Option<usize>,
}

/// The tasks of one split (a frozen suite's `tasks` count as `test`).
pub fn split_tasks(suite: &Value, split: &str) -> Vec<Value> {
    match suite.get(split).and_then(Value::as_array) {
        Some(a) => a.clone(),
        None if split == "test" => suite["tasks"].as_array().cloned().unwrap_or_default(),
        None => Vec::new(),
    }
}

/// The configuration hash: system, model, dataset, seed, split and the test split's sha,
/// plus the retrieval when it is not BM25 and the task limit when there is one (absent keys
/// keep the hashes of plain configurations unchanged).
pub fn config_hash(suite: &Value, system: &str, model: Option<&str>, split: &str) -> String {
    config_hash_with(suite, system, model, split, Retrieval::Bm25, None)
}

/// [`config_hash`] with the retrieval and task limit.
pub fn config_hash_with(
    suite: &Value,
    system: &str,
    model: Option<&str>,
    split: &str,
    retrieval: Retrieval,
    limit: Option<usize>,
) -> String {
    let mut c = json!({"system": system, "model": model, "dataset": suite["dataset"],
        "seed": suite["seed"], "split": split, "test_split_sha": suite["test_split_sha"]});
    if system == "vector-rag" && retrieval != Retrieval::Bm25 {
        c["retrieval"] = json!(retrieval.name());
    }
    if let Some(n) = limit {
        c["limit"] = json!(n);
    }
    canon::digest(&c)
}

/// The template of a task (its plan id without the trailing `-<i>`).
pub fn template_of(task: &Value) -> String {
    let id = task["oracle_plan"]["plan_id"].as_str().unwrap_or_default();
    id.rsplit_once('-').map_or(id, |(t, _)| t).to_string()
}

fn probe_mode(task: &Value) -> Value {
    let id = task["id"].as_str().unwrap_or_default();
    if id.contains("-probe-before-") {
        json!("before")
    } else if id.contains("-probe-now-") {
        json!("now")
    } else {
        Value::Null
    }
}

/// What one system produced for one task, before scoring.
#[derive(Default)]
pub struct Outcome {
    /// The answer object the user would see (gated, or raw for `ours-noverify`).
    pub answer: Option<Value>,
    /// A prediction read directly (baselines have no answer object).
    pub pred: Option<Value>,
    /// The system declined (page-capped or cost-refused oracle plan).
    pub refused: bool,
    /// The claim verifier's report on the answer before gating (`None` without a verifier).
    pub verification_before: Option<Value>,
    /// The claim verifier's report on the gated answer.
    pub verification_after: Option<Value>,
    /// Plan validity rate input: the first plan emission passed the static verifier.
    pub pvr: Option<bool>,
    /// Execution success rate input: the final trace is `ok`.
    pub esr: Option<bool>,
    /// Why the system failed to produce anything for the task, if it did.
    pub error: Option<String>,
    /// What the baseline ran (SQL text, retrieved fact count, …).
    pub detail: Value,
}

fn has_unsupported(v: &Option<Value>) -> bool {
    v.as_ref().is_some_and(|v| {
        v["claims"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["verdict"] == "unsupported"))
    })
}

/// Scores an outcome into a row.
pub fn row_of(task: &Value, o: Outcome) -> Value {
    let kind = task["answer_kind"].as_str().unwrap_or_default();
    let gold = &task["gold"];
    let (emitted, pred) = match (&o.answer, &o.pred) {
        (Some(a), _) => (
            a["claims"].as_array().is_some_and(|c| !c.is_empty()),
            prediction(kind, a),
        ),
        (None, Some(p)) => (!p.is_null(), p.clone()),
        (None, None) => (false, Value::Null),
    };
    let s = score(kind, gold, &pred);
    // Unanswered (nothing emitted) scores 0 (§10.2 overall accuracy).
    let (em, f1) = if emitted { (s.em, s.f1) } else { (0.0, 0.0) };
    let metric = |k: &str| {
        o.verification_after
            .as_ref()
            .map_or(Value::Null, |v| v["metrics"][k].clone())
    };
    json!({
        "task_id": task["id"], "family": task["family"], "kind": kind,
        "difficulty": task["difficulty"], "template": template_of(task),
        "probe": probe_mode(task), "gold": gold, "pred": pred,
        "em": tgms_operators::json::float(em), "f1": tgms_operators::json::float(f1),
        "emitted": emitted, "refused": o.refused,
        "verifier": o.verification_before.is_some(),
        "unsupported_before": has_unsupported(&o.verification_before),
        "unsupported_after": has_unsupported(&o.verification_after),
        "ucr": metric("ucr"), "coverage": metric("coverage"),
        "pvr": o.pvr, "esr": o.esr, "error": o.error, "detail": o.detail,
    })
}

/// `oracle` (the task's plan) and `latest-state` (the same plan with every `as_of_tt`
/// removed: the current belief state only). A page-capped answer is refused.
pub fn run_plan_system(snap: Snapshot<'_>, task: &Value, latest: bool) -> Outcome {
    let mut plan = task["oracle_plan"].clone();
    if latest {
        for st in plan["steps"].as_array_mut().into_iter().flatten() {
            if let Some(m) = st["args"].as_object_mut() {
                m.remove("as_of_tt");
            }
        }
    }
    let uids: Vec<String> = task["input_uids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u.as_str().map(str::to_string))
        .collect();
    let run = match run_oracle(snap, &plan, &uids) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Outcome {
                refused: true,
                pvr: Some(false),
                esr: Some(false),
                detail: json!({"refusal": "cost"}),
                ..Outcome::default()
            }
        }
        Err(e) => {
            return Outcome {
                error: Some(e.to_string()),
                pvr: Some(false),
                ..Outcome::default()
            }
        }
    };
    let ok = run.trace["ok"] == Value::Bool(true);
    if !ok || run.trace["answer_complete"] == Value::Bool(false) {
        return Outcome {
            refused: true,
            pvr: Some(true),
            esr: Some(ok),
            detail: json!({"refusal": if ok { "page-capped answer" } else { "trace not ok" }}),
            ..Outcome::default()
        };
    }
    let ans = claims::mechanical_answer(&run.kind, &run.from, &run.trace);
    let vctx = claims::Ctx {
        trace: &run.trace,
        results: &run.results,
        snap: Some(snap),
        honor_truncation: true,
    };
    let before = claims::verify(&vctx, &ans);
    let (gated, after) = claims::gate(&vctx, &ans);
    Outcome {
        answer: Some(gated),
        verification_before: Some(before),
        verification_after: Some(after),
        pvr: Some(true),
        esr: Some(true),
        ..Outcome::default()
    }
}

/// The `ours*` systems through the ask loop.
pub fn run_ask_system(store: &Store, task: &Value, args: &RunArgs<'_>) -> Outcome {
    let Some(model) = args.model else {
        return Outcome {
            error: Some("no model configured".into()),
            ..Outcome::default()
        };
    };
    let sys = args.system.as_str();
    let mut cfg = args.ask.clone();
    cfg.input_uids = InputUids::Given(
        task["input_uids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u.as_str().map(str::to_string))
            .collect(),
    );
    cfg.save_record = false;
    cfg.use_memory = sys != "ours-nomem";
    cfg.check_output_fields = sys != "ours-contracts-off";
    cfg.honor_truncation = sys != "ours-taint-ignored";
    let q = task["question_text"].as_str().unwrap_or_default();
    match ask::ask_with(store, q, &cfg, model) {
        Err(e) => Outcome {
            error: Some(e.to_string()),
            ..Outcome::default()
        },
        Ok(out) => {
            let rec = out.record;
            let nonnull = |v: &Value| (!v.is_null()).then(|| v.clone());
            let (answer, after) = if sys == "ours-noverify" {
                (rec["answer_object"].clone(), nonnull(&rec["verification"]))
            } else {
                (
                    rec["gated_answer_object"].clone(),
                    nonnull(&rec["final_verification"]),
                )
            };
            Outcome {
                answer: Some(answer),
                verification_before: nonnull(&rec["verification"]),
                verification_after: after,
                pvr: Some(rec["plan_result"]["first_emission_valid"] == Value::Bool(true)),
                esr: Some(rec["ok"] == Value::Bool(true)),
                detail: json!({"ask_id": rec["ask_id"], "final_plan": rec["plan_result"]["plan"]}),
                ..Outcome::default()
            }
        }
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> Value {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() {
        Value::Null
    } else {
        tgms_operators::json::float(v.iter().sum::<f64>() / v.len() as f64)
    }
}

fn ratio(n: usize, d: usize) -> Value {
    if d == 0 {
        Value::Null
    } else {
        tgms_operators::json::float(n as f64 / d as f64)
    }
}

/// Campaign metrics over rows (§10.2): coverage, conditional and overall accuracy, mean F1,
/// unsupported-claim rate before and after gating, PVR, ESR, mean `ucr` and prose coverage,
/// accuracy per family, kind and difficulty, and probe accuracy before / now.
pub fn metrics(rows: &[Value]) -> Value {
    let em = |r: &Value| r["em"].as_f64().unwrap_or(0.0);
    let emitted: Vec<&Value> = rows.iter().filter(|r| r["emitted"] == true).collect();
    let with_data: Vec<&&Value> = emitted.iter().filter(|r| r["verifier"] == true).collect();
    let flag = |k: &str| {
        let v: Vec<bool> = rows.iter().filter_map(|r| r[k].as_bool()).collect();
        ratio(v.iter().filter(|b| **b).count(), v.len())
    };
    let group = |key: &str| {
        let mut g: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
        for r in rows {
            if let Some(k) = r[key].as_str() {
                g.entry(k.to_string()).or_default().push(r);
            }
        }
        g.into_iter()
            .map(|(k, rs)| {
                (
                    k,
                    json!({"runs": rs.len(), "accuracy": mean(rs.iter().map(|r| em(r))),
                        "mean_f1": mean(rs.iter().map(|r| r["f1"].as_f64().unwrap_or(0.0)))}),
                )
            })
            .collect::<serde_json::Map<String, Value>>()
    };
    json!({
        "runs": rows.len(),
        "refused": rows.iter().filter(|r| r["refused"] == true).count(),
        "errors": rows.iter().filter(|r| !r["error"].is_null()).count(),
        "emitted": emitted.len(),
        "answer_coverage": ratio(emitted.len(), rows.len()),
        "conditional_accuracy": mean(emitted.iter().map(|r| em(r))),
        "overall_accuracy": mean(rows.iter().map(em)),
        "mean_f1": mean(rows.iter().map(|r| r["f1"].as_f64().unwrap_or(0.0))),
        "unsupported_claim_rate": ratio(with_data.iter().filter(|r| r["unsupported_before"] == true).count(), with_data.len()),
        "unsupported_claim_rate_gated": ratio(with_data.iter().filter(|r| r["unsupported_after"] == true).count(), with_data.len()),
        "pvr": flag("pvr"),
        "esr": flag("esr"),
        "mean_ucr": mean(rows.iter().filter_map(|r| r["ucr"].as_f64())),
        "mean_coverage": mean(rows.iter().filter_map(|r| r["coverage"].as_f64())),
        "by_family": group("family"),
        "by_kind": group("kind"),
        "by_difficulty": group("difficulty"),
        "probes": group("probe"),
    })
}

/// Runs `args.system` over the split of `suite`; returns the run object
/// `{kind: "eval_run", system, model, dataset, seed, split, config_hash, test_split_sha,
/// metrics, rows}`.
pub fn run(store: &Store, suite: &Value, args: &RunArgs<'_>) -> anyhow::Result<Value> {
    let sys = args.system.as_str();
    if !SYSTEMS.contains(&sys) {
        bail!("unknown system '{sys}'; known: {}", SYSTEMS.join(", "))
    }
    if args.split != "dev" && args.split != "test" {
        bail!("unknown split '{}'; use dev or test", args.split)
    }
    if needs_model(sys) && args.model.is_none() {
        bail!("system {sys} needs a model: pass --model NAME --endpoint URL (an OpenAI-compatible server, see docs/eval.md)")
    }
    let model_name = args.model.map(|m| m.name().to_string());
    let hash = config_hash_with(
        suite,
        sys,
        model_name.as_deref(),
        &args.split,
        args.retrieval,
        args.limit,
    );
    let dir = args.cache_dir.join(&hash);
    let marker = dir.join("test.done");
    if args.split == "test" && marker.exists() {
        if !args.force {
            bail!(
                "the test split of this configuration ({sys}, model {}, config {hash}) was already run \
                 (rows in {}); a second run of the test split is refused: pass --force to run it again, \
                 or use --split dev while iterating",
                model_name.as_deref().unwrap_or("none"),
                dir.display()
            )
        }
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut tasks = split_tasks(suite, &args.split);
    if let Some(n) = args.limit {
        tasks.truncate(n);
    }
    let snap = store.snapshot();
    let mut baselines: Option<Baselines> = None;
    let mut rows = Vec::new();
    for task in &tasks {
        let id = task["id"].as_str().unwrap_or_default();
        let cached = dir.join(format!("{}.json", sanitize(id)));
        if let Some(row) = std::fs::read_to_string(&cached)
            .ok()
            .and_then(|t| canon::parse(&t).ok())
        {
            rows.push(row);
            continue;
        }
        let outcome = match sys {
            "oracle" => run_plan_system(snap, task, false),
            "latest-state" => run_plan_system(snap, task, true),
            "sql-bitemporal" | "vector-rag" => {
                if baselines.is_none() {
                    baselines = Some(Baselines::new(
                        store,
                        &dir,
                        &args.python,
                        sys,
                        args.retrieval,
                    )?);
                }
                let b = baselines.as_ref().expect("just built");
                let model = args.model.expect("checked above");
                if sys == "sql-bitemporal" {
                    b.sql(model, task)
                } else {
                    b.rag(model, task)
                }
            }
            _ => run_ask_system(store, task, args),
        };
        let row = row_of(task, outcome);
        std::fs::write(&cached, canon::to_string(&row))?;
        rows.push(row);
    }
    if args.split == "test" {
        std::fs::write(&marker, format!("{}\n", rows.len()))?;
    }
    Ok(json!({
        "kind": "eval_run", "system": sys, "model": model_name,
        "dataset": suite["dataset"], "seed": suite["seed"], "split": args.split,
        "config_hash": hash, "test_split_sha": suite["test_split_sha"],
        "retrieval": if sys == "vector-rag" { json!(args.retrieval.name()) } else { Value::Null },
        "limit": args.limit,
        "metrics": metrics(&rows), "rows": rows,
    }))
}

/// A task id as a file name (ids are `[A-Za-z0-9._-]` by construction; anything else → `_`).
fn sanitize(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The human summary of a run.
pub fn summary(run: &Value) -> String {
    let m = &run["metrics"];
    let pct = |v: &Value| {
        v.as_f64()
            .map_or("-".to_string(), |x| format!("{:.1}%", 100.0 * x))
    };
    let mut s = format!(
        "system {} (model {}), {} split of {}: {} tasks, {} emitted, {} refused, {} errors\n",
        run["system"].as_str().unwrap_or_default(),
        run["model"].as_str().unwrap_or("none"),
        run["split"].as_str().unwrap_or_default(),
        run["dataset"].as_str().unwrap_or_default(),
        m["runs"],
        m["emitted"],
        m["refused"],
        m["errors"]
    );
    s.push_str(&format!(
        "  overall accuracy {}  conditional accuracy {}  coverage {}  unsupported before/after gating {} / {}\n",
        pct(&m["overall_accuracy"]),
        pct(&m["conditional_accuracy"]),
        pct(&m["answer_coverage"]),
        pct(&m["unsupported_claim_rate"]),
        pct(&m["unsupported_claim_rate_gated"])
    ));
    for (k, v) in m["by_family"].as_object().into_iter().flatten() {
        s.push_str(&format!(
            "  family {k:<6} {:>4} tasks  accuracy {}\n",
            v["runs"],
            pct(&v["accuracy"])
        ));
    }
    for (k, v) in m["probes"].as_object().into_iter().flatten() {
        s.push_str(&format!(
            "  probes {k:<6} {:>4} tasks  accuracy {}\n",
            v["runs"],
            pct(&v["accuracy"])
        ));
    }
    s
}
