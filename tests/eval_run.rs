//! `tgms eval run-suite` with model systems, end to end against the replay chat server of
//! the ask-loop tests (recorded replies, no model): the `ours*` systems through the ask loop
//! (gating, the output-contract ablation), `vector-rag` (BM25 facts in the prompt, the reply
//! parsed and scored), `sql-bitemporal` (recorded SQL run by DuckDB over the Parquet export;
//! skipped when DuckDB cannot be installed), and `eval report` over the runs.

mod ask_support;
mod eval_support;
mod export_support;

use ask_support::{Act, Replay};
use eval_support::*;
use export_support::duckdb_python;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use tgms::ask::{AskConfig, HttpModel, LlmFlags};
use tgms::eval::baselines::Retrieval;
use tgms::eval::run_suite::{self, RunArgs};
use tgms::eval::{embed, report, suite};
use tgms_engine::{canon, Store, OPEN_END};

struct Fx {
    _t: tempfile::TempDir,
    dir: PathBuf,
    /// The small store's suite reduced to a few tasks (all in `dev`).
    suite: Value,
}

/// Three tasks: an event count, a reach count and a "before" probe.
fn fixture() -> Fx {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let mut st = small_store(&dir);
    let full = suite::generate(
        &mut st,
        &suite::SuiteArgs {
            dataset: "small".into(),
            seed: 0,
            planted: None,
        },
    )
    .unwrap();
    let mut tasks = full["dev"].as_array().unwrap().clone();
    tasks.extend(full["test"].as_array().unwrap().iter().cloned());
    let pick = |tmpl: &str| {
        tasks
            .iter()
            .find(|t| run_suite::template_of(t) == tmpl)
            .unwrap_or_else(|| panic!("no {tmpl} task"))
            .clone()
    };
    let chosen = vec![
        pick("event_count"),
        pick("reach_count"),
        pick("probe_before"),
    ];
    let suite = json!({"dataset": "small", "seed": 0, "n_dev": 3, "n_test": 0,
        "dev": chosen, "test": [], "test_split_sha": full["test_split_sha"]});
    Fx { _t: t, dir, suite }
}

fn q(task: &Value) -> &str {
    task["question_text"].as_str().unwrap()
}

fn run_with(fx: &Fx, system: &str, srv: &Replay, python: &str) -> Value {
    run_retrieving(fx, system, srv, python, Retrieval::Bm25)
}

fn run_retrieving(
    fx: &Fx,
    system: &str,
    srv: &Replay,
    python: &str,
    retrieval: Retrieval,
) -> Value {
    let flags = LlmFlags {
        model: Some("replay-model".into()),
        base_url: Some(srv.base_url.clone()),
        retries: Some(0),
        timeout_s: Some(10),
        ..LlmFlags::default()
    };
    let cfg = AskConfig::resolve(&flags, |_| None).unwrap();
    let model = HttpModel::new(cfg.llm.clone().unwrap());
    let st = Store::open_read_only(&fx.dir).unwrap();
    run_suite::run(
        &st,
        &fx.suite,
        &RunArgs {
            system: system.into(),
            split: "dev".into(),
            force: false,
            cache_dir: fx
                .dir
                .with_extension(format!("runs-{system}-{}", retrieval.name())),
            ask: cfg,
            model: Some(&model),
            python: python.into(),
            retrieval,
            limit: None,
        },
    )
    .unwrap()
}

fn row<'a>(run: &'a Value, task: &Value) -> &'a Value {
    run["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task_id"] == task["id"])
        .unwrap()
}

/// The answer object a reporter would write: the mechanical one without the typed answer.
fn reporter_reply(task: &Value, bump: i64) -> String {
    let mut a = task["gold_answer_object"].clone();
    a.as_object_mut().unwrap().remove("answer");
    if bump != 0 {
        let v = &a["claims"][0]["value"];
        let wrong = match v.as_i64() {
            Some(i) if !v.to_string().contains('.') => json!(i + bump),
            _ => tgms_operators::json::float(v.as_f64().unwrap() + bump as f64),
        };
        a["text"] = json!(format!("The answer is {}.", canon::to_string(&wrong)));
        a["claims"][0]["value"] = wrong;
    }
    canon::to_string(&a)
}

#[test]
fn ours_systems_through_the_ask_loop() {
    let fx = fixture();
    let tasks = fx.suite["dev"].as_array().unwrap().clone();
    let (ev, reach, probe) = (&tasks[0], &tasks[1], &tasks[2]);
    let plan = |t: &Value| canon::to_string(&t["oracle_plan"]);
    // The reach task's first plan cites an invented output field: the static verifier
    // rejects it (contracts on) and the repaired plan follows; with contracts off it runs.
    let mut invented = reach["oracle_plan"].clone();
    invented["answer_spec"]["from"] = json!("s1.reach_total");
    let script = |wrong_reporter: bool| {
        vec![
            (format!("planner|{}|q", q(ev)), vec![Act::Reply(plan(ev))]),
            (
                format!("reporter|{}|q", q(ev)),
                vec![Act::Reply(reporter_reply(
                    ev,
                    if wrong_reporter { 1 } else { 0 },
                ))],
            ),
            (
                format!("planner|{}|q", q(reach)),
                vec![Act::Reply(canon::to_string(&invented))],
            ),
            (
                format!("planner|{}|q,rej", q(reach)),
                vec![Act::Reply(plan(reach))],
            ),
            (
                format!("planner|{}|q,rt", q(reach)),
                vec![Act::Reply(plan(reach))],
            ),
            (
                format!("reporter|{}|q", q(reach)),
                vec![Act::Reply(reporter_reply(reach, 0))],
            ),
            (
                format!("planner|{}|q", q(probe)),
                vec![Act::Reply(plan(probe))],
            ),
            (
                format!("reporter|{}|q", q(probe)),
                vec![Act::Reply(reporter_reply(probe, 0))],
            ),
        ]
    };
    // ours: a wrong reporter claim is unsupported before gating and gone after; the
    // repaired plan answers the reach task.
    let srv = Replay::start(script(true));
    let ours = run_with(&fx, "ours", &srv, "python3");
    let r = row(&ours, ev);
    assert_eq!(
        (
            r["unsupported_before"].clone(),
            r["unsupported_after"].clone()
        ),
        (json!(true), json!(false)),
        "{r}"
    );
    assert_eq!(r["emitted"], false, "the only claim was gated out: {r}");
    assert_eq!(row(&ours, reach)["em"], json!(1.0));
    assert_eq!(
        row(&ours, reach)["pvr"],
        json!(false),
        "first emission was rejected"
    );
    assert_eq!(row(&ours, probe)["em"], json!(1.0));
    let m = &ours["metrics"];
    assert_eq!(m["unsupported_claim_rate_gated"], json!(0.0));
    // ours-noverify: the raw answer is emitted, unsupported claim and all.
    let srv = Replay::start(script(true));
    let nov = run_with(&fx, "ours-noverify", &srv, "python3");
    let r = row(&nov, ev);
    assert_eq!(
        (r["emitted"].clone(), r["unsupported_after"].clone()),
        (json!(true), json!(true)),
        "{r}"
    );
    // ours-contracts-off: the invented field passes the static verifier (no rejection turn).
    let srv = Replay::start(script(false));
    let off = run_with(&fx, "ours-contracts-off", &srv, "python3");
    assert_eq!(row(&off, reach)["pvr"], json!(true), "{}", row(&off, reach));
    assert!(
        !srv.keys().iter().any(|k| k.ends_with(",rej")),
        "{:?}",
        srv.keys()
    );
    // ours-nomem and ours-taint-ignored answer these (untruncated) tasks exactly.
    for sys in ["ours-nomem", "ours-taint-ignored"] {
        let srv = Replay::start(script(false));
        let run = run_with(&fx, sys, &srv, "python3");
        for t in &tasks {
            assert_eq!(row(&run, t)["em"], json!(1.0), "{sys}: {}", row(&run, t));
        }
    }
}

#[test]
fn vector_rag_retrieves_facts_and_scores_the_reply() {
    let fx = fixture();
    let tasks = fx.suite["dev"].as_array().unwrap().clone();
    let srv = Replay::start(vec![
        (
            format!("other|{}|q", q(&tasks[0])),
            vec![Act::Reply(canon::to_string(
                &json!({"answer": tasks[0]["gold"]}),
            ))],
        ),
        (
            format!("other|{}|q", q(&tasks[1])),
            vec![Act::Reply("```json\n{\"answer\": 99999}\n```".into())],
        ),
        (
            format!("other|{}|q", q(&tasks[2])),
            vec![Act::Reply("3".into())],
        ),
    ]);
    let run = run_with(&fx, "vector-rag", &srv, "python3");
    assert_eq!(run["retrieval"], "bm25");
    assert_eq!(row(&run, &tasks[0])["em"], json!(1.0));
    assert_eq!(row(&run, &tasks[1])["em"], json!(0.0));
    // The probe's gold is 1 (before the correction); the reply "3" is today's count.
    assert_eq!(row(&run, &tasks[2])["pred"], json!(3));
    assert_eq!(row(&run, &tasks[2])["em"], json!(0.0));
    let bodies = srv.bodies();
    let user = bodies[1]["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("FACTS (20 retrieved by bm25)"), "{user}");
    let src = tasks[1]["input_uids"][0].as_str().unwrap();
    assert!(
        user.contains(&format!("edge {src} -> ")),
        "a fact about the question's uid is retrieved"
    );
    assert_eq!(run["rows"][0]["verifier"], false);
}

/// all-MiniLM-L6-v2 through `embed.py` reproduces the cosine similarities published with the
/// model (the sentence-transformers usage example: 0.6660, 0.1046, 0.1411), so the numpy
/// forward pass, the pooling and the normalisation are the model's.
#[test]
fn minilm_embeddings_match_the_published_similarities() {
    let Some(py) = duckdb_python() else { return };
    let s = [
        "The weather is lovely today.",
        "It's so sunny outside!",
        "He drove to the stadium.",
    ];
    let e = embed::embed(py.to_str().unwrap(), &s).unwrap();
    assert_eq!(e.len(), 3);
    for v in &e {
        assert_eq!(v.len(), embed::DIM);
        assert!((embed::cosine(v, v) - 1.0).abs() < 1e-4);
    }
    for ((i, j), want) in [((0, 1), 0.6660), ((0, 2), 0.1046), ((1, 2), 0.1411)] {
        let got = embed::cosine(&e[i], &e[j]);
        assert!(
            (got - want).abs() < 5e-4,
            "cos({i}, {j}) = {got}, published {want}"
        );
    }
    // A bad interpreter is an error naming the fix, not a panic.
    let err = embed::embed("/nonexistent/python", &s).unwrap_err();
    assert!(err.contains("bench/eval/duckdb-venv.sh"), "{err}");
}

/// `--retrieval minilm`: the facts in the prompt are BM25's candidates re-ranked by the
/// embedding model (recorded as `bm25+minilm`), and the reply is scored as with BM25.
#[test]
fn vector_rag_with_minilm_reranks_the_bm25_candidates() {
    let Some(py) = duckdb_python() else { return };
    let fx = fixture();
    let tasks = fx.suite["dev"].as_array().unwrap().clone();
    let srv = Replay::start(vec![
        (
            format!("other|{}|q", q(&tasks[0])),
            vec![Act::Reply(canon::to_string(
                &json!({"answer": tasks[0]["gold"]}),
            ))],
        ),
        (
            format!("other|{}|q", q(&tasks[1])),
            vec![Act::Reply("{\"answer\": 99999}".into())],
        ),
        (
            format!("other|{}|q", q(&tasks[2])),
            vec![Act::Reply("3".into())],
        ),
    ]);
    let run = run_retrieving(
        &fx,
        "vector-rag",
        &srv,
        py.to_str().unwrap(),
        Retrieval::MiniLm,
    );
    assert_eq!(run["retrieval"], "bm25+minilm");
    assert_eq!(row(&run, &tasks[0])["em"], json!(1.0), "{run}");
    assert_eq!(row(&run, &tasks[1])["em"], json!(0.0));
    let bodies = srv.bodies();
    let user = bodies[1]["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("retrieved by bm25+minilm"), "{user}");
    // The facts are among BM25's candidates for the question, in non-increasing similarity
    // to it.
    let st = Store::open_read_only(&fx.dir).unwrap();
    let ix = tgms::eval::baselines::Bm25::new(tgms::eval::baselines::facts(&st).unwrap());
    let cands = ix.search(q(&tasks[1]), embed::RERANK_CANDIDATES);
    let facts: Vec<&str> = user
        .split("):\n")
        .nth(1)
        .unwrap()
        .split("\n\nQUESTION")
        .next()
        .unwrap()
        .lines()
        .collect();
    assert_eq!(facts.len(), 20.min(cands.len()), "{user}");
    assert!(facts.iter().all(|f| cands.contains(f)), "{user}");
    let mut texts = vec![q(&tasks[1])];
    texts.extend(&facts);
    let e = embed::embed(py.to_str().unwrap(), &texts).unwrap();
    let sims: Vec<f64> = e[1..].iter().map(|v| embed::cosine(&e[0], v)).collect();
    assert!(sims.windows(2).all(|w| w[0] >= w[1] - 1e-4), "{sims:?}");
}

#[test]
fn sql_bitemporal_runs_recorded_sql_with_duckdb_and_report_renders() {
    let fx = fixture();
    let tasks = fx.suite["dev"].as_array().unwrap().clone();
    let (ev, reach, probe) = (&tasks[0], &tasks[1], &tasks[2]);
    let w = &ev["oracle_plan"]["steps"][0]["args"]["window"];
    // Hand-written SQL: the event count from the version rows (current beliefs), and the
    // probe's version count as of its transaction time — the same information tgms has.
    let sql_count = format!(
        "```sql\nSELECT count(*) AS n FROM rows WHERE kind = 'edge' AND tt_e = {OPEN_END} AND vt_s >= {} AND vt_s < {}\n```",
        w["t_a"], w["t_b"]
    );
    let pa = &probe["oracle_plan"]["steps"][0]["args"];
    let sql_probe = format!(
        "SELECT count(*) FROM rows WHERE kind = 'node' AND uid = '{}' AND tt_s <= {tt} AND tt_e > {tt}",
        pa["uid"].as_str().unwrap(),
        tt = pa["as_of_tt"]
    );
    let srv = Replay::start(vec![
        (format!("other|{}|q", q(ev)), vec![Act::Reply(sql_count)]),
        (
            format!("other|{}|q", q(reach)),
            vec![Act::Reply("SELECT nonsense FROM nowhere".into())],
        ),
        (format!("other|{}|q", q(probe)), vec![Act::Reply(sql_probe)]),
    ]);
    let Some(py) = duckdb_python() else { return };
    let sql = run_with(&fx, "sql-bitemporal", &srv, py.to_str().unwrap());
    assert_eq!(row(&sql, ev)["em"], json!(1.0), "{}", row(&sql, ev));
    assert_eq!(row(&sql, probe)["em"], json!(1.0), "{}", row(&sql, probe));
    let bad = row(&sql, reach);
    assert_eq!(
        (bad["esr"].clone(), bad["em"].clone()),
        (json!(false), json!(0.0)),
        "{bad}"
    );
    assert!(bad["detail"]["sql_error"]
        .as_str()
        .is_some_and(|e| !e.is_empty()));
    // The report puts it beside the oracle.
    let st = Store::open_read_only(&fx.dir).unwrap();
    let oracle = run_suite::run(
        &st,
        &fx.suite,
        &RunArgs {
            system: "oracle".into(),
            split: "dev".into(),
            force: false,
            cache_dir: fx.dir.with_extension("runs-oracle"),
            ask: Default::default(),
            model: None,
            python: "python3".into(),
            retrieval: tgms::eval::baselines::Retrieval::Bm25,
            limit: None,
        },
    )
    .unwrap();
    let runs = vec![oracle, sql];
    let md = report::markdown(&runs);
    assert!(md.contains("| oracle | small | dev | 3 | 100.0% |"), "{md}");
    assert!(md.contains("sql-bitemporal (replay-model)"), "{md}");
    assert!(md.contains("no claims (baseline)"), "{md}");
    let html = report::html(&runs);
    assert_eq!(html.matches("<svg").count(), 2);
    assert!(!html.contains("<script"));
}

#[test]
fn cli_report_and_run_suite_errors() {
    let fx = fixture();
    let t = tempfile::tempdir().unwrap();
    let suite_path = t.path().join("suite.json");
    std::fs::write(&suite_path, canon::to_string(&fx.suite)).unwrap();
    let run_path = t.path().join("run.json");
    let out = Command::new(bin())
        .args(["eval", "run-suite"])
        .arg(&fx.dir)
        .arg("--suite")
        .arg(&suite_path)
        .args(["--system", "oracle", "--split", "dev", "--json"])
        .arg(&run_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("overall accuracy 100.0%"));
    let md = t.path().join("r.md");
    let st = Command::new(bin())
        .args(["eval", "report"])
        .arg(&run_path)
        .arg("--out")
        .arg(&md)
        .output()
        .unwrap();
    assert!(st.status.success());
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("## Accuracy by family"));
    let bad = Command::new(bin())
        .args(["eval", "report"])
        .arg(&run_path)
        .arg("--out")
        .arg(t.path().join("r.txt"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("report.md or report.html"));
    let unknown = Command::new(bin())
        .args(["eval", "run-suite"])
        .arg(&fx.dir)
        .arg("--suite")
        .arg(&suite_path)
        .args(["--system", "gpt-magic"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("known: oracle, latest-state"));
}
