//! Loop-overhead benchmark of `tgms ask` (issue 18 target: < 20 ms per question on the
//! CollegeMsg store, model time excluded): the twelve CollegeMsg questions of
//! `questions.json`, each answered by an in-process scripted model (planner: the reference
//! plan; reporter: a count claim on the final answer), so every millisecond measured is the
//! loop's own — prompt rendering, memory retrieval, parsing, static verification, execution,
//! trace summary, claim verification, claim and prose gating, the ask record.
//!
//! Run: `cargo run --release --example ask_overhead -- STORE [REPS]` (STORE: a CollegeMsg
//! store, e.g. `tgms init /tmp/cm && tgms ingest /tmp/cm --dataset collegemsg`).

use serde_json::{json, Value};
use std::time::Instant;
use tgms::ask::{self, AskConfig, AskError, ChatModel, ChatRequest, Guided, Purpose, Reply};
use tgms_engine::Store;

struct Scripted {
    plan: String,
}

impl ChatModel for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn guided(&self) -> Guided {
        Guided::None
    }
    fn chat(&self, req: &ChatRequest<'_>) -> Result<Reply, AskError> {
        let text = match req.purpose {
            Purpose::Planner => self.plan.clone(),
            Purpose::Reporter => {
                // The final line of the fenced trace summary carries the final answer.
                let user = &req.messages[1].content;
                let line = user
                    .lines()
                    .find(|l| l.starts_with("{\"answer_complete\""))
                    .unwrap_or("{}");
                let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
                let from = v["answer_spec"]["from"]
                    .as_str()
                    .unwrap_or("s1")
                    .to_string();
                let step = from.split('.').next().unwrap_or("s1").to_string();
                match &v["final_answer"] {
                    Value::Number(n) => json!({"text": format!("The result is {n}."),
                        "claims": [{"id": "c1", "type": "count", "value": n, "from": from, "evidence": [step]}]}),
                    _ => json!({"text": "The plan ran; see the typed answer.", "claims": []}),
                }
                .to_string()
            }
        };
        Ok(Reply {
            text,
            telemetry: json!({"cached": false, "latency_ms": 0, "tries": 1}),
        })
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: ask_overhead STORE [REPS]");
        std::process::exit(2);
    };
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(20);
    let qs: Vec<Value> =
        serde_json::from_str(include_str!("questions.json")).expect("questions.json");
    for (mode, st) in [
        (
            "writable",
            Store::open(std::path::Path::new(dir)).expect("open STORE"),
        ),
        (
            "read-only",
            Store::open_read_only(std::path::Path::new(dir)).expect("open STORE"),
        ),
    ] {
        println!(
            "## {mode} store, {reps} reps after 2 warm-ups (ms per question; model time excluded)"
        );
        println!("| # | plan | ok | overhead median | overhead p95 | wall median |");
        println!("|---|---|---|---|---|---|");
        let mut medians = Vec::new();
        for (i, q) in qs.iter().enumerate() {
            let model = Scripted {
                plan: q["plan"].to_string(),
            };
            let cfg = AskConfig::default();
            let question = q["question"].as_str().unwrap();
            let mut over = Vec::new();
            let mut wall = Vec::new();
            let mut ok = false;
            for r in 0..reps + 2 {
                let t = Instant::now();
                let o = ask::ask_with(&st, question, &cfg, &model).expect("ask");
                let w = t.elapsed().as_secs_f64() * 1000.0;
                ok = o.ok;
                if r >= 2 {
                    over.push(o.overhead_ms);
                    wall.push(w);
                }
            }
            let m = pct(&mut over, 0.5);
            medians.push(m);
            println!(
                "| {} | {} | {ok} | {m:.2} | {:.2} | {:.2} |",
                i + 1,
                q["plan"]["plan_id"].as_str().unwrap_or(""),
                pct(&mut over, 0.95),
                pct(&mut wall, 0.5)
            );
        }
        println!(
            "max median overhead: {:.2} ms\n",
            medians.iter().cloned().fold(0.0, f64::max)
        );
        drop(st);
    }
}
