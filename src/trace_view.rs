//! The trace viewer (`spec/agent-surface.md` §10): one self-contained HTML page (inline CSS
//! and script, no external fetch) rendering one verifier trace — run header, the plan's
//! steps with literal and resolved args, status, digests, evidence descriptors and taint,
//! the stored result envelopes, the answer and (when an answer object is given) every
//! claim verdict, gating and the metrics. Used by `tgms view` and `tgms demo`.
//!
//! Safety: every store-derived string goes through [`esc`]; embedded JSON sits in
//! `<script type="application/json">` with `<` written as `\u003c`. Pages of `tgms ask`
//! ([`render_ask`]) add the ask record: the question, every plan emission with its raw
//! reply, parse error or violations and the repair message sent back, the executions, the
//! reporter's attempts, and the raw, claim-gated and prose-gated answers.

use crate::eval::utc;
use serde_json::Value;
use std::fmt::Write as _;
use tgms_engine::{canon, OPEN_END};
use tgms_verifier::exec::ResultStore;
use tgms_verifier::refpath::find_refs;

/// What one page shows.
pub struct TraceView<'a> {
    /// The trace (`plans-and-claims.md` §6.3).
    pub trace: &'a Value,
    /// Where its envelopes and resolved args are stored.
    pub results: &'a ResultStore,
    /// The plan as given, when known (its digest is checked against `plan_digest`).
    pub plan: Option<&'a Value>,
    /// The answer object (§7) and its verification (§8.7), when any.
    pub answer_object: Option<&'a Value>,
    pub verification: Option<&'a Value>,
    /// The gated answer object and its re-verification (§9), when any.
    pub gated: Option<(&'a Value, &'a Value)>,
}

/// HTML-escapes a string.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Canonical JSON, escaped.
fn ej(v: &Value) -> String {
    esc(&canon::to_string(v))
}

const VALID_KEYS: [&str; 11] = [
    "vt_s", "vt_e", "t", "at", "t_a", "t_b", "t1", "t2", "t_valid", "vt_min", "vt_max",
];
const TT_KEYS: [&str; 6] = ["tt_s", "tt_e", "as_of_tt", "last_tt", "first_tt", "tt"];

/// A value under `key`, with both clocks for time fields.
fn cell(key: &str, v: &Value) -> String {
    let kind = if VALID_KEYS.contains(&key) {
        Some("valid time")
    } else if TT_KEYS.contains(&key) {
        Some("transaction time")
    } else {
        None
    };
    match (kind, v.as_i64()) {
        (Some(k), Some(x)) if x >= OPEN_END => format!("open <small>({k})</small>"),
        (Some(k), Some(x)) => format!("{} UTC<br><small>{x} µs · {k}</small>", esc(&utc(x))),
        _ => match v {
            Value::String(s) => esc(s),
            other => format!("<code>{}</code>", ej(other)),
        },
    }
}

fn kv_table(h: &mut String, rows: &[(&str, String)]) {
    h.push_str("<table>");
    for (k, v) in rows {
        let _ = write!(h, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    }
    h.push_str("</table>");
}

fn obj_table(h: &mut String, v: &Value) {
    let Some(m) = v.as_object() else {
        let _ = write!(h, "<code>{}</code>", ej(v));
        return;
    };
    h.push_str("<table>");
    for (k, x) in m {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), cell(k, x));
    }
    h.push_str("</table>");
}

const AUDIT: [&str; 5] = [
    "origin",
    "reason",
    "closed_by",
    "close_reason",
    "ingestion_lag_us",
];

/// The first 50 rows of a list of objects (or scalars) as a table.
fn rows_table(h: &mut String, name: &str, rows: &[Value]) {
    let mut cols: Vec<String> = Vec::new();
    for r in rows.iter().take(50) {
        if let Some(m) = r.as_object() {
            for k in m.keys() {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
    }
    // Audit fields first, prominently.
    cols.sort_by_key(|c| !AUDIT.contains(&c.as_str()));
    let _ = write!(
        h,
        "<details open><summary>{} ({} shown of {} returned)</summary><table>",
        esc(name),
        rows.len().min(50),
        rows.len()
    );
    if cols.is_empty() {
        for r in rows.iter().take(50) {
            let _ = write!(h, "<tr><td>{}</td></tr>", cell(name, r));
        }
    } else {
        h.push_str("<tr>");
        for c in &cols {
            let cls = if AUDIT.contains(&c.as_str()) {
                " class=\"audit\""
            } else {
                ""
            };
            let _ = write!(h, "<th{cls}>{}</th>", esc(c));
        }
        h.push_str("</tr>");
        for r in rows.iter().take(50) {
            h.push_str("<tr>");
            for c in &cols {
                let x = r.get(c.as_str()).unwrap_or(&Value::Null);
                let cls = if AUDIT.contains(&c.as_str()) {
                    " class=\"audit\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{cls}>{}</td>", cell(c, x));
            }
            h.push_str("</tr>");
        }
    }
    h.push_str("</table></details>");
}

/// Embedded JSON, safe inside a `<script type="application/json">`.
fn embed(h: &mut String, id: &str, v: &Value) {
    let raw = canon::to_string(v).replace('<', "\\u003c");
    let _ = write!(
        h,
        "<details><summary>{} (JSON)</summary><script type=\"application/json\" id=\"j-{id}\">{raw}</script><pre id=\"p-{id}\"></pre></details>",
        esc(id)
    );
}

/// Literal args with `$ref`s highlighted and linked to the producing step.
fn literal_args(args: &Value) -> String {
    let mut s = format!("<code>{}</code>", ej(args));
    let refs = find_refs(args);
    if !refs.is_empty() {
        s.push_str("<br>refs: ");
        for r in refs {
            match r.parsed {
                Ok(p) => {
                    let _ = write!(
                        s,
                        "<a class=\"ref\" href=\"#step-{}\">{}</a> ",
                        esc(&p.step),
                        esc(&p.raw)
                    );
                }
                Err(e) => {
                    let _ = write!(s, "<span class=\"bad\">{}</span> ", esc(&e.message));
                }
            }
        }
    }
    s
}

fn verdict_class(v: &Value) -> &'static str {
    match v.as_str() {
        Some("supported") => "ok",
        Some("weakly_supported") => "weak",
        _ => "bad",
    }
}

/// Renders the page.
pub fn render(v: &TraceView<'_>) -> String {
    render_inner(v, None)
}

/// The page of one ask record (`tgms ask --html`): the trace of the plan that ran (if any)
/// with the planning history, the reporter's attempts and the gated answers.
pub fn render_ask(record: &Value, results: &ResultStore) -> String {
    let empty =
        serde_json::json!({"plan_id": "(no plan ran)", "steps": [], "store": record["store"]});
    let trace = if record["trace"].is_null() {
        &empty
    } else {
        &record["trace"]
    };
    let digest = trace["plan_digest"].as_str().unwrap_or("");
    let plan = record["plan_result"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("plan_json"))
        .find(|p| canon::digest(p) == digest)
        .cloned();
    let has_answer = !record["verification"].is_null();
    let gated = (
        &record["claim_gated_answer_object"],
        &record["claim_gated_verification"],
    );
    render_inner(
        &TraceView {
            trace,
            results,
            plan: plan.as_ref(),
            answer_object: has_answer.then_some(&record["answer_object"]),
            verification: has_answer.then_some(&record["verification"]),
            gated: has_answer.then_some(gated),
        },
        Some(record),
    )
}

/// The planning history and the gated answers of an ask record.
fn ask_sections(h: &mut String, rec: &Value) {
    let _ = write!(
        h,
        "<h2>Question and final answer</h2><p>question: <b>{}</b></p><p>final (gated) answer: <b>{}</b></p>",
        esc(rec["question"].as_str().unwrap_or("")),
        esc(rec["gated_answer_object"]["text"].as_str().unwrap_or(""))
    );
    kv_table(
        h,
        &[
            (
                "ask_id",
                format!("<code>{}</code>", esc(rec["ask_id"].as_str().unwrap_or(""))),
            ),
            ("model", esc(rec["model"].as_str().unwrap_or(""))),
            ("guided decoding", esc(rec["guided"].as_str().unwrap_or(""))),
            (
                "system prompt sha256",
                format!(
                    "<code>{}</code>",
                    esc(rec["system_prompt_sha"].as_str().unwrap_or(""))
                ),
            ),
            (
                "first emission valid (PVR)",
                ej(&rec["plan_result"]["first_emission_valid"]),
            ),
            (
                "task input uids",
                format!("<code>{}</code>", ej(&rec["config"]["task_input_uids"])),
            ),
            (
                "memory notes shown to the planner (never evidence)",
                format!("<code>{}</code>", ej(&rec["memory_notes"])),
            ),
            ("timing", format!("<code>{}</code>", ej(&rec["timing"]))),
        ],
    );
    h.push_str("<h2>Planning history</h2>");
    for e in rec["plan_result"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let valid = e["valid"] == Value::Bool(true);
        let _ = write!(
            h,
            "<div class=\"step\"><h3>Emission {} — {} <span class=\"{}\">{}</span></h3>",
            ej(&e["n"]),
            esc(e["reason"].as_str().unwrap_or("")),
            if valid { "ok" } else { "bad" },
            if valid { "valid" } else { "rejected" }
        );
        let mut rows: Vec<(&str, String)> = vec![(
            "raw reply",
            format!("<pre>{}</pre>", esc(e["raw"].as_str().unwrap_or(""))),
        )];
        if let Some(err) = e.get("error") {
            let mut s = format!(
                "<span class=\"bad\">{}</span> {}",
                esc(err["error"].as_str().unwrap_or("")),
                esc(err["message"].as_str().unwrap_or(""))
            );
            for v in err["violations"].as_array().into_iter().flatten() {
                let _ = write!(
                    s,
                    "<br><span class=\"bad\">{}</span> {} {}<br><small>details: <code>{}</code></small>",
                    esc(v["code"].as_str().unwrap_or("")),
                    esc(v["step_id"].as_str().unwrap_or("")),
                    esc(v["message"].as_str().unwrap_or("")),
                    ej(&v["details"])
                );
            }
            rows.push(("error / violations", s));
        }
        if let Some(m) = e.get("repair_message") {
            rows.push((
                "repair message sent back",
                format!("<pre>{}</pre>", esc(m.as_str().unwrap_or(""))),
            ));
        }
        rows.push(("call", format!("<code>{}</code>", ej(&e["call"]))));
        kv_table(h, &rows);
        h.push_str("</div>");
    }
    h.push_str("<h3>Executions</h3>");
    for x in rec["executions"].as_array().into_iter().flatten() {
        let _ = write!(h, "<p><code>{}</code></p>", ej(x));
    }
    h.push_str("<h3>Reporter</h3>");
    let _ = write!(
        h,
        "<p>source: <b>{}</b></p>",
        esc(rec["reporter"]["source"].as_str().unwrap_or(""))
    );
    for a in rec["reporter"]["attempts"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<pre>{}</pre><p><small>{}</small></p>",
            esc(a["raw"].as_str().unwrap_or("")),
            ej(&a["error"])
        );
    }
    h.push_str("<h3>Answers: raw → claims gated → prose gated</h3>");
    kv_table(
        h,
        &[
            (
                "raw text (audit only)",
                esc(rec["answer_object"]["text"].as_str().unwrap_or("")),
            ),
            (
                "after claim gating",
                esc(rec["claim_gated_answer_object"]["text"]
                    .as_str()
                    .unwrap_or("")),
            ),
            (
                "final text (prose gated, D-V8)",
                format!(
                    "<b>{}</b>",
                    esc(rec["gated_answer_object"]["text"].as_str().unwrap_or(""))
                ),
            ),
            (
                "sentences removed / appended",
                format!("<code>{}</code>", ej(&rec["prose_gating"])),
            ),
            (
                "final metrics",
                format!("<code>{}</code>", ej(&rec["final_verification"]["metrics"])),
            ),
        ],
    );
    embed(h, "ask-record", rec);
}

fn render_inner(v: &TraceView<'_>, ask: Option<&Value>) -> String {
    let t = v.trace;
    let plan_id = t["plan_id"].as_str().unwrap_or("");
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>tgms trace — {}</title><style>body{{font:14px system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse;margin:.5em 0}}td,th{{border:1px solid #ccc;padding:3px 6px;vertical-align:top;font-size:13px;text-align:left}}th{{background:#f3f3f3}}code{{background:#f6f6f6;padding:1px 3px;word-break:break-all}}.ok{{color:#070;font-weight:bold}}.weak{{color:#a60;font-weight:bold}}.bad{{color:#b00;font-weight:bold}}.audit{{background:#fff8e0}}.ref{{background:#e0ecff}}.step{{border-left:4px solid #99b;padding-left:1em;margin:1em 0}}small{{color:#666}}details{{margin:.5em 0}}</style></head><body>",
        esc(plan_id)
    );
    let _ = write!(
        h,
        "<h1>tgms trace viewer — <code>{}</code></h1>",
        esc(plan_id)
    );
    // 1. Run header.
    let question = v
        .plan
        .and_then(|p| p.get("question"))
        .or_else(|| ask.map(|r| &r["question"]))
        .and_then(Value::as_str)
        .map_or(
            "<small>(not recorded in the trace)</small>".to_string(),
            esc,
        );
    let st = &t["store"];
    let plan_digest = t["plan_digest"].as_str().unwrap_or("");
    let plan_match = v.plan.map(|p| canon::digest(p) == plan_digest);
    h.push_str("<h2>Run header</h2>");
    kv_table(
        &mut h,
        &[
            ("question", question),
            ("plan_id", format!("<code>{}</code>", esc(plan_id))),
            (
                "trace_id",
                format!("<code>{}</code>", esc(t["trace_id"].as_str().unwrap_or(""))),
            ),
            (
                "plan_digest",
                format!(
                    "<code>{}</code>{}",
                    esc(plan_digest),
                    match plan_match {
                        Some(true) => " <span class=\"ok\">matches the plan shown</span>",
                        Some(false) => " <span class=\"bad\">does NOT match the plan shown</span>",
                        None => "",
                    }
                ),
            ),
            ("store last_tt", cell("last_tt", &st["last_tt"])),
            ("store batches", cell("n_batches", &st["n_batches"])),
            (
                "store extent",
                format!(
                    "[{}, {})",
                    cell("vt_min", &st["extent"]["vt_min"]),
                    cell("vt_max", &st["extent"]["vt_max"])
                ),
            ),
            (
                "ok",
                format!(
                    "<span class=\"{}\">{}</span>",
                    if t["ok"] == Value::Bool(true) {
                        "ok"
                    } else {
                        "bad"
                    },
                    ej(&t["ok"])
                ),
            ),
            ("wall_ms (total)", ej(&t["wall_ms"])),
        ],
    );
    match ask {
        Some(rec) => ask_sections(&mut h, rec),
        None => h.push_str("<p><small>Planning history: none (this trace was produced by <code>tgms plan run</code> / <code>tgms demo</code>, not by an ask loop).</small></p>"),
    }
    // 3 + 4. Plan DAG and results.
    h.push_str("<h2>Plan steps</h2>");
    if let Some(p) = v.plan {
        let _ = write!(
            h,
            "<p>answer_spec: <code>{}</code></p>",
            ej(&p["answer_spec"])
        );
    }
    for r in t["steps"].as_array().into_iter().flatten() {
        let sid = r["step_id"].as_str().unwrap_or("");
        let status = r["status"].as_str().unwrap_or("");
        let _ = write!(
            h,
            "<div class=\"step\" id=\"step-{}\"><h3>Step {} — <code>{}</code> <span class=\"{}\">{}</span></h3>",
            esc(sid),
            esc(sid),
            esc(r["op"].as_str().unwrap_or("")),
            if status == "ok" { "ok" } else { "bad" },
            esc(status)
        );
        let mut rows: Vec<(&str, String)> = Vec::new();
        if let Some(ps) = v
            .plan
            .and_then(|p| p["steps"].as_array())
            .and_then(|a| a.iter().find(|s| s["id"] == sid))
        {
            rows.push(("literal args", literal_args(&ps["args"])));
            rows.push((
                "depends_on",
                ej(&ps
                    .get("depends_on")
                    .cloned()
                    .unwrap_or(Value::Array(vec![]))),
            ));
        }
        if let Some(d) = r["resolved_args_digest"].as_str() {
            let resolved = v
                .results
                .args(d)
                .map_or("<small>(not in the args store)</small>".to_string(), |a| {
                    format!("<code>{}</code>", ej(&a))
                });
            rows.push(("resolved args", resolved));
            rows.push(("resolved_args_digest", format!("<code>{}</code>", esc(d))));
        }
        for k in [
            "result_digest",
            "wall_ms",
            "rows_returned",
            "truncated",
            "upstream_truncated",
        ] {
            if let Some(x) = r.get(k) {
                let shown = x.as_str().map_or_else(|| ej(x), esc);
                rows.push((k, format!("<code>{shown}</code>")));
            }
        }
        if let Some(x) = r.get("ref_truncations") {
            rows.push(("ref_truncations", format!("<code>{}</code>", ej(x))));
        }
        if let Some(e) = r.get("error") {
            rows.push((
                "error",
                format!(
                    "<span class=\"bad\">{}</span>: {}<br>details: <code>{}</code>",
                    esc(e["error"].as_str().unwrap_or("")),
                    esc(e["message"].as_str().unwrap_or("")),
                    ej(&e["details"])
                ),
            ));
        }
        kv_table(&mut h, &rows);
        if let Some(ev) = r.get("evidence") {
            h.push_str("<details open><summary>evidence descriptor</summary>");
            obj_table(&mut h, ev);
            h.push_str("</details>");
        }
        if let Some(env) = r["result_digest"]
            .as_str()
            .and_then(|d| v.results.envelope(d))
        {
            if let Some(m) = env.as_object() {
                let mut scalars = serde_json::Map::new();
                for (k, x) in m {
                    match x {
                        Value::Array(a) if a.iter().any(Value::is_object) || k != "args_echo" => {
                            rows_table(&mut h, k, a)
                        }
                        Value::Object(_) if k != "args_echo" => {
                            let _ = write!(h, "<details open><summary>{}</summary>", esc(k));
                            obj_table(&mut h, x);
                            h.push_str("</details>");
                        }
                        _ => {
                            scalars.insert(k.clone(), x.clone());
                        }
                    }
                }
                h.push_str("<details open><summary>totals and scalars</summary>");
                obj_table(&mut h, &Value::Object(scalars));
                h.push_str("</details>");
            }
            embed(&mut h, &format!("env-{sid}"), &env);
        }
        h.push_str("</div>");
    }
    // 6. Answer.
    h.push_str("<h2>Answer</h2>");
    kv_table(
        &mut h,
        &[
            ("trace.answer", format!("<code>{}</code>", ej(&t["answer"]))),
            ("answer_complete", ej(&t["answer_complete"])),
            ("answer_error", ej(&t["answer_error"])),
        ],
    );
    match (v.answer_object, v.verification) {
        (Some(a), Some(ver)) => {
            let _ = write!(
                h,
                "<p>answer text: <b>{}</b></p><h3>Claims</h3><table><tr><th>id</th><th>type</th><th>content</th><th>cited steps</th><th>verdict</th><th>reason</th></tr>",
                esc(a["text"].as_str().unwrap_or(""))
            );
            let verdicts = ver["claims"].as_array().cloned().unwrap_or_default();
            for (c, vd) in a["claims"]
                .as_array()
                .into_iter()
                .flatten()
                .zip(verdicts.iter())
            {
                let mut content = c.as_object().cloned().unwrap_or_default();
                for k in ["id", "type", "evidence"] {
                    content.remove(k);
                }
                let cited: Vec<String> = c["evidence"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|s| format!("<a href=\"#step-{0}\">{0}</a>", esc(s)))
                    .collect();
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
                    esc(c["id"].as_str().unwrap_or("")),
                    esc(c["type"].as_str().unwrap_or("")),
                    ej(&Value::Object(content)),
                    cited.join(", "),
                    verdict_class(&vd["verdict"]),
                    esc(vd["verdict"].as_str().unwrap_or("")),
                    esc(vd["reason"].as_str().unwrap_or(""))
                );
            }
            h.push_str("</table>");
            if let Some(ta) = a.get("answer") {
                let _ = write!(
                    h,
                    "<p>typed answer: <code>{}</code><br>answer_verdict: <span class=\"{}\">{}</span> — {}</p>",
                    ej(ta),
                    verdict_class(&ver["answer_verdict"]),
                    ej(&ver["answer_verdict"]),
                    esc(ver["answer_reason"].as_str().unwrap_or(""))
                );
            }
            h.push_str("<h3>Metrics (before gating)</h3>");
            obj_table(&mut h, &ver["metrics"]);
            if let Some((g, gv)) = v.gated {
                let kept: Vec<&Value> = g["claims"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| &c["id"])
                    .collect();
                let dropped: Vec<String> = a["claims"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|c| !kept.contains(&&c["id"]))
                    .map(|c| esc(c["id"].as_str().unwrap_or("")))
                    .collect();
                let _ = write!(
                    h,
                    "<h3>Gating</h3><p>claims dropped by gating: <b>{}</b></p>",
                    if dropped.is_empty() {
                        "none".to_string()
                    } else {
                        dropped.join(", ")
                    }
                );
                h.push_str("<p>metrics after gating:</p>");
                obj_table(&mut h, &gv["metrics"]);
            }
            embed(&mut h, "answer-object", a);
        }
        _ => h.push_str("<p><small>No answer object was given for this trace: no claim verdicts are shown. (<code>tgms view … --plan PLAN.json</code> verifies the mechanical answer; <code>--answer FILE</code> verifies a given one.)</small></p>"),
    }
    // 7. Integrity.
    h.push_str("<h2>Integrity</h2><p>Every digest above is shown in full. <code>tgms plan run STORE PLAN.json</code> on the same store state reproduces every <code>result_digest</code>, <code>resolved_args_digest</code>, the <code>plan_digest</code> and the <code>trace_id</code> (the digest of the trace without <code>trace_id</code> and <code>wall_ms</code>); <code>tgms verify STORE ANSWER.json TRACE_ID</code> reproduces the claim verdicts.</p>");
    embed(&mut h, "trace", t);
    h.push_str("<script>for(const s of document.querySelectorAll('script[type=\"application/json\"]')){const p=document.getElementById('p-'+s.id.slice(2));if(p)p.textContent=JSON.stringify(JSON.parse(s.textContent),null,1);}</script></body></html>\n");
    h
}
