//! The two model baselines of `tgms eval run-suite`: `sql-bitemporal` (the model writes
//! DuckDB SQL over the Parquet export of every version row, both clocks as columns; DuckDB
//! runs it in a Python with the `duckdb` package) and `vector-rag` (BM25 retrieval over the
//! version rows serialized as text facts, optionally re-ranked by a MiniLM embedding model;
//! the model answers from the retrieved facts).

use super::run_suite::Outcome;
use crate::ask::parse::{parse_reply, strip_fences};
use crate::ask::{ChatModel, ChatRequest, Message, Purpose};
use crate::export_rows::{visit_rows, write_parquet};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tgms_engine::{canon, Store};

/// How `vector-rag` retrieves its facts (`--retrieval`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Retrieval {
    /// BM25 over the serialized version rows (no model; the default).
    #[default]
    Bm25,
    /// BM25 candidates re-ranked by all-MiniLM-L6-v2 similarity ([`super::embed`]).
    MiniLm,
}

impl Retrieval {
    /// The name recorded in the run object and the prompt.
    pub fn name(self) -> &'static str {
        match self {
            Retrieval::Bm25 => "bm25",
            Retrieval::MiniLm => "bm25+minilm",
        }
    }
    /// `bm25` or `minilm`.
    pub fn parse(s: &str) -> anyhow::Result<Retrieval> {
        match s {
            "bm25" => Ok(Retrieval::Bm25),
            "minilm" => Ok(Retrieval::MiniLm),
            other => anyhow::bail!("unknown retrieval '{other}'; use bm25 or minilm"),
        }
    }
}
/// Facts handed to the model per question.
pub const TOP_K: usize = 20;
/// A DuckDB query is stopped after this long.
pub const SQL_TIMEOUT: Duration = Duration::from_secs(60);

/// The DuckDB runner: `python -c RUNNER PARQUET SQL` prints the result rows as a JSON list of
/// objects (at most 1000).
pub const RUNNER: &str = r#"
import json, sys
import duckdb
con = duckdb.connect()
con.execute("CREATE VIEW rows AS SELECT * FROM read_parquet('" + sys.argv[1].replace("'", "''") + "')")
res = con.execute(sys.argv[2])
cols = [d[0] for d in res.description]
print(json.dumps([dict(zip(cols, r)) for r in res.fetchmany(1000)], default=str))
"#;

/// The schema card of the `rows` table given to the SQL baseline.
pub fn schema_card() -> String {
    format!(
        "Table `rows`: one row per stored version of a node or an edge (believed and superseded).\n\
         Columns: kind ('node' or 'edge'), vid, uid (nodes), label (nodes), eid, src, dst, rel_type, disc (edges),\n\
         vt_s, vt_e BIGINT: valid time [vt_s, vt_e) in µs since 1970-01-01 UTC ({open} = open end);\n\
         tt_s, tt_e BIGINT: transaction time [tt_s, tt_e) in µs: the row is believed now when tt_e = {open},\n\
         and was believed as of transaction time T when tt_s <= T < tt_e;\n\
         props (JSON text), source, provenance_ref, origin, reason, closed_by, close_reason.\n\
         An edge event's valid time is [vt_s, vt_s + 1).",
        open = tgms_engine::OPEN_END
    )
}

/// A BM25 index (k1 = 1.2, b = 0.75) over text facts.
pub struct Bm25 {
    docs: Vec<String>,
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    avg_len: f64,
}

/// Lower-case alphanumeric tokens.
pub fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Bm25 {
    /// Indexes `docs` (document `i` is `docs[i]`) by their `tokens`.
    pub fn new(docs: Vec<String>) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        for (i, d) in docs.iter().enumerate() {
            let toks = tokens(d);
            doc_len.push(toks.len() as u32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in toks {
                *tf.entry(t).or_default() += 1;
            }
            for (t, n) in tf {
                postings.entry(t).or_default().push((i as u32, n));
            }
        }
        let avg_len = doc_len.iter().map(|&l| l as f64).sum::<f64>() / doc_len.len().max(1) as f64;
        Bm25 {
            docs,
            postings,
            doc_len,
            avg_len,
        }
    }

    /// The `k` best documents for `query`, best first (ties by document order).
    pub fn search(&self, query: &str, k: usize) -> Vec<&str> {
        let (k1, b) = (1.2, 0.75);
        let n = self.docs.len() as f64;
        let mut score: HashMap<u32, f64> = HashMap::new();
        let mut q = tokens(query);
        q.sort();
        q.dedup();
        for t in q {
            let Some(p) = self.postings.get(&t) else {
                continue;
            };
            let df = p.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(d, tf) in p {
                let len = self.doc_len[d as usize] as f64;
                let tf = tf as f64;
                *score.entry(d).or_default() +=
                    idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / self.avg_len));
            }
        }
        let mut ranked: Vec<(u32, f64)> = score.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(k)
            .map(|(d, _)| self.docs[d as usize].as_str())
            .collect()
    }
}

/// The prepared side of a baseline: the Parquet export or the fact index.
pub struct Baselines {
    parquet: PathBuf,
    python: String,
    index: Option<Bm25>,
    retrieval: Retrieval,
}

fn chat(model: &dyn ChatModel, system: &str, user: &str) -> Result<String, String> {
    let msgs = [Message::system(system), Message::user(user)];
    model
        .chat(&ChatRequest {
            messages: &msgs,
            schema: None,
            purpose: Purpose::Reporter,
        })
        .map(|r| r.text)
        .map_err(|e| e.to_string())
}

/// The prediction read from SQL result rows for an answer kind.
pub fn sql_prediction(kind: &str, rows: &[Value]) -> Value {
    let first = rows.first().and_then(Value::as_object);
    match kind {
        "count" | "value" => first
            .and_then(|r| r.values().next().cloned())
            .unwrap_or(Value::Null),
        "entity_set" => {
            let mut u: Vec<String> = rows
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|r| r.values().filter_map(|v| v.as_str().map(str::to_string)))
                .collect();
            u.sort();
            u.dedup();
            json!(u)
        }
        "interval" => {
            let Some(r) = first else { return Value::Null };
            for (a, b) in [("t_a", "t_b"), ("start", "end")] {
                if let (Some(x), Some(y)) = (r.get(a), r.get(b)) {
                    return json!({"t_a": x, "t_b": y});
                }
            }
            let nums: Vec<&Value> = r.values().filter(|v| v.is_number()).collect();
            match nums.as_slice() {
                [x, y, ..] => json!({"t_a": x, "t_b": y}),
                _ => Value::Null,
            }
        }
        _ => json!(rows),
    }
}

/// The prediction read from a free-form model reply: `{"answer": …}` when it parses, else a
/// number for count/value replies that are one, else the text.
pub fn reply_prediction(kind: &str, text: &str) -> Value {
    if let Ok(v) = parse_reply(text) {
        if let Some(a) = v.get("answer") {
            return a.clone();
        }
    }
    let t = strip_fences(text).trim().to_string();
    if kind == "count" || kind == "value" {
        if let Ok(n) = canon::parse(&t) {
            if n.is_number() {
                return n;
            }
        }
    }
    if t.is_empty() {
        Value::Null
    } else {
        json!(t)
    }
}

const RAG_SYSTEM: &str = "You answer questions about a temporal graph from the retrieved facts only. \
Times are µs since 1970-01-01 UTC; intervals are half-open [start, end). Reply with one JSON object \
{\"answer\": VALUE}: a number for counts and values, a uid string for one node, a list of uid strings \
for a set of nodes, {\"t_a\": µs, \"t_b\": µs} for a time bucket.";

const SQL_SYSTEM: &str =
    "You write one DuckDB SQL query that answers a question about a bi-temporal \
graph. Reply with the SQL only (one SELECT statement, no prose). For a count or value select one \
column of one row; for a set of nodes select one row per uid; for a time bucket select columns t_a \
and t_b.";

/// Every version row of `store` serialized as one text fact (what `vector-rag` retrieves).
pub fn facts(store: &Store) -> anyhow::Result<Vec<String>> {
    let mut docs = Vec::new();
    visit_rows::<()>(store, |r| {
        let c = |i: usize| r.cells[i].unwrap_or("");
        let [vs, ve, ts, te] = r.times;
        docs.push(if c(0) == "node" {
            format!(
                "node {} label {} valid [{vs}, {ve}) believed [{ts}, {te}) props {}",
                c(2),
                c(3),
                c(13)
            )
        } else {
            format!(
                "edge {} -> {} {} valid [{vs}, {ve}) believed [{ts}, {te}) props {}",
                c(5),
                c(6),
                c(7),
                c(13)
            )
        });
        Ok(())
    })
    .map_err(|_| anyhow::anyhow!("reading the version rows"))?;
    Ok(docs)
}

impl Baselines {
    /// Prepares `system`'s side: the Parquet export in `dir` (`sql-bitemporal`) or the BM25
    /// index of the version rows (`vector-rag`).
    pub fn new(
        store: &Store,
        dir: &Path,
        python: &str,
        system: &str,
        retrieval: Retrieval,
    ) -> anyhow::Result<Baselines> {
        let parquet = dir.join("rows.parquet");
        let mut index = None;
        if system == "sql-bitemporal" {
            let f = std::fs::File::create(&parquet)?;
            write_parquet(store, std::io::BufWriter::new(f))
                .map_err(|e| anyhow::anyhow!("exporting the version rows to Parquet: {e}"))?;
        } else {
            index = Some(Bm25::new(facts(store)?));
        }
        Ok(Baselines {
            parquet,
            python: python.to_string(),
            index,
            retrieval,
        })
    }

    /// Runs `sql` with DuckDB; the result rows, or the error text.
    pub fn run_sql(&self, sql: &str) -> Result<Vec<Value>, String> {
        let mut child = std::process::Command::new(&self.python)
            .arg("-c")
            .arg(RUNNER)
            .arg(&self.parquet)
            .arg(sql)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {}: {e}; install DuckDB with bench/eval/duckdb-venv.sh and pass --python VENV/bin/python",
                    self.python
                )
            })?;
        let t0 = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if t0.elapsed() > SQL_TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("the query ran over {} s", SQL_TIMEOUT.as_secs()));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(e.to_string()),
            }
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(err.lines().last().unwrap_or("duckdb failed").to_string());
        }
        match canon::parse(String::from_utf8_lossy(&out.stdout).trim()) {
            Ok(Value::Array(rows)) => Ok(rows),
            _ => Err("the DuckDB runner printed no JSON list".into()),
        }
    }

    /// `sql-bitemporal` on one task.
    pub fn sql(&self, model: &dyn ChatModel, task: &Value) -> Outcome {
        let kind = task["answer_kind"].as_str().unwrap_or_default();
        let q = task["question_text"].as_str().unwrap_or_default();
        let system = format!("{SQL_SYSTEM}\n\n{}", schema_card());
        let user = format!("QUESTION: {q}\nANSWER KIND: {kind}\nReply with one SELECT statement.");
        let reply = match chat(model, &system, &user) {
            Ok(r) => r,
            Err(e) => {
                return Outcome {
                    error: Some(e),
                    ..Outcome::default()
                }
            }
        };
        let sql = strip_fences(&reply);
        match self.run_sql(&sql) {
            Ok(rows) => Outcome {
                pred: Some(sql_prediction(kind, &rows)),
                pvr: Some(true),
                esr: Some(true),
                detail: json!({"sql": sql, "result_rows": rows.len()}),
                ..Outcome::default()
            },
            Err(e) => Outcome {
                pred: Some(Value::Null),
                pvr: Some(false),
                esr: Some(false),
                detail: json!({"sql": sql, "sql_error": e}),
                ..Outcome::default()
            },
        }
    }

    /// `vector-rag` on one task.
    pub fn rag(&self, model: &dyn ChatModel, task: &Value) -> Outcome {
        let kind = task["answer_kind"].as_str().unwrap_or_default();
        let q = task["question_text"].as_str().unwrap_or_default();
        let facts = match (self.index.as_ref(), self.retrieval) {
            (None, _) => Vec::new(),
            (Some(ix), Retrieval::Bm25) => ix.search(q, TOP_K),
            (Some(ix), Retrieval::MiniLm) => {
                let cands = ix.search(q, super::embed::RERANK_CANDIDATES);
                match super::embed::rerank(&self.python, q, &cands, TOP_K) {
                    Ok(f) => f,
                    Err(e) => {
                        return Outcome {
                            error: Some(e),
                            ..Outcome::default()
                        }
                    }
                }
            }
        };
        let user = format!(
            "FACTS ({} retrieved by {}):\n{}\n\nQUESTION: {q}\nANSWER KIND: {kind}",
            facts.len(),
            self.retrieval.name(),
            facts.join("\n")
        );
        match chat(model, RAG_SYSTEM, &user) {
            Ok(r) => Outcome {
                pred: Some(reply_prediction(kind, &r)),
                detail: json!({"facts": facts.len()}),
                ..Outcome::default()
            },
            Err(e) => Outcome {
                error: Some(e),
                ..Outcome::default()
            },
        }
    }
}
