//! The trace viewer (the spec's `agent-surface.md` §10, issue 20 item 7): one self-contained HTML
//! page (inline CSS and script, no external fetch) rendering one verifier trace the way an
//! auditor reads it — a **summary** first (question, final gated answer, claim verdicts at a
//! glance, completeness and taint, ok), then **the plan as a step graph** (inline SVG, see
//! [`crate::trace_graph`]), then **the step details**, collapsed (literal and resolved args,
//! status, digests, evidence descriptors, the stored result envelopes), then the answer and
//! its claims, the planning history of an ask record, and integrity. Used by `tgms view`,
//! `tgms plan run --html`, `tgms ask --html` and `tgms demo`; `docs/viewer.md` is its guide.
//!
//! Safety: every store-derived string goes through [`esc`]; embedded JSON sits in
//! `<script type="application/json">` with `<` written as `\u003c`. The one inline script
//! only pretty-prints that JSON, adds copy buttons beside digests and opens the step a link
//! points to; the page reads the same without it (a digest is shown abbreviated, but its
//! element holds the full value: hover shows it, selecting copies it).

use crate::trace_graph;
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
    /// The claim verifier's report on `answer_object` (§8.7), when any.
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

/// A µs instant as ISO-8601 UTC to the microsecond (`open` for `OPEN_END`).
fn iso(us: i64) -> String {
    if us >= OPEN_END {
        return "open".into();
    }
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || format!("{us} µs (outside the calendar range)"),
        |d| d.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

/// A content digest (64 hex digits).
fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A digest shown abbreviated by CSS: the element holds the full value (hover shows it as
/// the title, selecting copies it; the script adds a copy button).
fn dg(s: &str) -> String {
    let e = esc(s);
    format!("<code class=\"dg\" title=\"{e}\">{e}</code>")
}

const VALID_KEYS: [&str; 11] = [
    "vt_s", "vt_e", "t", "at", "t_a", "t_b", "t1", "t2", "t_valid", "vt_min", "vt_max",
];
const TT_KEYS: [&str; 6] = ["tt_s", "tt_e", "as_of_tt", "last_tt", "first_tt", "tt"];

/// A value under `key`, with both clocks for time fields and digests abbreviated.
fn cell(key: &str, v: &Value) -> String {
    // `min_vt_s`, `first_vt_s`, `lo_hi_last_vt_s`… are valid times too.
    let kind = if VALID_KEYS.contains(&key) || key.ends_with("_vt_s") || key.ends_with("_vt_e") {
        Some("valid time")
    } else if TT_KEYS.contains(&key) {
        Some("transaction time")
    } else {
        None
    };
    match (kind, v.as_i64()) {
        (Some(k), Some(x)) if x >= OPEN_END => format!("open <small>({k})</small>"),
        (Some(k), Some(x)) => format!(
            "<span class=\"t\">{}</span><br><small>{x} µs · {k}</small>",
            esc(&iso(x))
        ),
        _ => match v {
            Value::String(s) if is_digest(s) => dg(s),
            Value::String(s) => esc(s),
            other => format!("<code>{}</code>", ej(other)),
        },
    }
}

fn kv_table(h: &mut String, rows: &[(&str, String)]) {
    h.push_str("<div class=\"tw\"><table class=\"kv\">");
    for (k, v) in rows {
        let _ = write!(h, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    }
    h.push_str("</table></div>");
}

/// An object as a key/value table, without the keys in `skip` (shown elsewhere already).
fn obj_table(h: &mut String, v: &Value, skip: &[&str]) {
    let Some(m) = v.as_object() else {
        let _ = write!(h, "<code>{}</code>", ej(v));
        return;
    };
    h.push_str("<div class=\"tw\"><table class=\"kv\">");
    for (k, x) in m.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
        let shown = match x {
            Value::Object(_) if x.as_object().is_some_and(|o| !o.is_empty()) => {
                let mut inner = String::new();
                obj_table(&mut inner, x, skip);
                inner
            }
            _ => cell(k, x),
        };
        let _ = write!(h, "<tr><th>{}</th><td>{shown}</td></tr>", esc(k));
    }
    h.push_str("</table></div>");
}

const AUDIT: [&str; 5] = [
    "origin",
    "reason",
    "closed_by",
    "close_reason",
    "ingestion_lag_us",
];

/// The first 50 rows of a list of objects (or scalars) as a table that scrolls sideways
/// inside its own box.
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
        "<details open><summary>{} ({} shown of {} returned)</summary><div class=\"tw\"><table class=\"rows\">",
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
    h.push_str("</table></div></details>");
}

/// Embedded JSON, safe inside a `<script type="application/json">`; the script
/// pretty-prints it into the `<pre>` beside it.
fn embed(h: &mut String, id: &str, v: &Value) {
    let raw = canon::to_string(v).replace('<', "\\u003c");
    let _ = write!(
        h,
        "<details><summary>{} (JSON)</summary><script type=\"application/json\" id=\"j-{id}\">{raw}</script><pre class=\"json\" id=\"p-{id}\"></pre></details>",
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
                    let _ = write!(s, "<span class=\"bad\">{}</span> ", esc(&e.to_string()));
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

fn ok_badge(ok: bool, yes: &str, no: &str) -> String {
    if ok {
        format!("<span class=\"ok\">{}</span>", esc(yes))
    } else {
        format!("<span class=\"bad\">{}</span>", esc(no))
    }
}

/// Renders the page.
pub fn render(v: &TraceView<'_>) -> String {
    render_inner(v, None)
}

/// The page of one ask record (`tgms ask --html`, `tgms view STORE ASK_ID`): the trace of
/// the plan that ran (if any) with the planning history, the reporter's attempts and the
/// gated answers.
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

/// The claims of the answer object with their verdicts, and whether gating dropped each.
fn claim_rows<'a>(v: &TraceView<'a>) -> Vec<(&'a Value, &'a Value, bool)> {
    let (Some(a), Some(ver)) = (v.answer_object, v.verification) else {
        return Vec::new();
    };
    let kept: Option<Vec<&Value>> = v.gated.map(|(g, _)| {
        g["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| &c["id"])
            .collect()
    });
    let verdicts = ver["claims"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    a["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(verdicts.iter())
        .map(|(c, vd)| {
            let dropped = kept.as_ref().is_some_and(|k| !k.contains(&&c["id"]));
            (c, vd, dropped)
        })
        .collect()
}

/// The summary an auditor reads first: question, final gated answer, claim verdicts at a
/// glance, completeness and taint, ok; then the run header (ids, store state, wall time).
fn summary(h: &mut String, v: &TraceView<'_>, ask: Option<&Value>) {
    let t = v.trace;
    h.push_str("<section id=\"summary\"><h2>Summary</h2><div class=\"sum\">");
    let question = v
        .plan
        .and_then(|p| p.get("question"))
        .or_else(|| ask.map(|r| &r["question"]))
        .and_then(Value::as_str);
    let _ = write!(
        h,
        "<p class=\"q\"><span class=\"lbl\">Question</span> {}</p>",
        question.map_or(
            "<small>(not recorded in the trace; the plan carries it when given)</small>"
                .to_string(),
            |q| format!("<b>{}</b>", esc(q))
        )
    );
    // The final text: the prose-gated answer of an ask, else the claim-gated answer object.
    let final_text = ask
        .map(|r| &r["gated_answer_object"]["text"])
        .or(v.gated.map(|(g, _)| &g["text"]))
        .or(v.answer_object.map(|a| &a["text"]))
        .and_then(Value::as_str);
    let _ = write!(
        h,
        "<div class=\"answer\"><span class=\"lbl\">Final answer (after gating)</span> {}</div>",
        final_text.map_or_else(
            || format!(
                "<small>no answer object; the trace's typed answer is</small> <code>{}</code>",
                ej(&t["answer"])
            ),
            |s| format!("<span class=\"txt\">{}</span>", esc(s))
        )
    );
    let claims = claim_rows(v);
    h.push_str("<p><span class=\"lbl\">Claims</span> ");
    if claims.is_empty() {
        h.push_str("<small>none checked</small>");
    }
    for (i, (c, vd, dropped)) in claims.iter().enumerate() {
        let _ = write!(
            h,
            "<a class=\"chip {}\" href=\"#claim-{i}\" title=\"{}\">{} · {}{}</a> ",
            verdict_class(&vd["verdict"]),
            esc(vd["reason"].as_str().unwrap_or("")),
            esc(c["id"].as_str().unwrap_or("")),
            esc(vd["verdict"].as_str().unwrap_or("")),
            if *dropped { " · dropped" } else { "" }
        );
    }
    if let Some(av) = v.verification.map(|x| &x["answer_verdict"]) {
        if !av.is_null() {
            let _ = write!(
                h,
                " <span class=\"chip {}\">typed answer · {}</span>",
                verdict_class(av),
                esc(av.as_str().unwrap_or(""))
            );
        }
    }
    h.push_str("</p>");
    // Status, completeness and taint.
    let steps: Vec<&Value> = t["steps"].as_array().into_iter().flatten().collect();
    let n_ok = steps.iter().filter(|s| s["status"] == "ok").count();
    let trunc: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            let sid = esc(s["step_id"].as_str().unwrap_or(""));
            let why = if s["truncated"] == Value::Bool(true) {
                "truncated"
            } else if s.get("ref_truncations").is_some() {
                "input list cut"
            } else if s["upstream_truncated"] == Value::Bool(true) {
                "tainted by a truncated input"
            } else {
                return None;
            };
            Some(format!("<a href=\"#step-{sid}\">{sid}</a> {why}"))
        })
        .collect();
    let failed: Vec<String> = steps
        .iter()
        .filter(|s| s["status"] != "ok")
        .map(|s| {
            let sid = esc(s["step_id"].as_str().unwrap_or(""));
            format!(
                "<a href=\"#step-{sid}\">{sid}</a> {} <small>{}</small>",
                esc(s["status"].as_str().unwrap_or("")),
                esc(s["error"]["error"].as_str().unwrap_or(""))
            )
        })
        .collect();
    let _ = write!(
        h,
        "<p class=\"st\"><span class=\"lbl\">Status</span> ok: {} · steps ok: {n_ok} of {} · answer complete: {} · taint: {}{}</p>",
        ok_badge(t["ok"] == Value::Bool(true), "true", &canon::to_string(&t["ok"])),
        steps.len(),
        ok_badge(t["answer_complete"] == Value::Bool(true), "yes", "no"),
        if trunc.is_empty() {
            "<span class=\"ok\">none</span>".to_string()
        } else {
            format!("<span class=\"weak\">{}</span>", trunc.join(", "))
        },
        if failed.is_empty() {
            String::new()
        } else {
            format!(" · <span class=\"bad\">not ok:</span> {}", failed.join(", "))
        }
    );
    h.push_str("</div>");
    // The run header.
    let st = &t["store"];
    let plan_digest = t["plan_digest"].as_str().unwrap_or("");
    let plan_match = v.plan.map(|p| canon::digest(p) == plan_digest);
    let mut rows: Vec<(&str, String)> = vec![
        (
            "plan_id",
            format!("<code>{}</code>", esc(t["plan_id"].as_str().unwrap_or(""))),
        ),
        ("trace_id", dg(t["trace_id"].as_str().unwrap_or(""))),
        (
            "plan_digest",
            format!(
                "{}{}",
                dg(plan_digest),
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
        ("wall_ms (total)", ej(&t["wall_ms"])),
    ];
    if let Some(rec) = ask {
        rows.insert(0, ("ask_id", dg(rec["ask_id"].as_str().unwrap_or(""))));
    }
    h.push_str(
        "<details class=\"run\" open><summary>Run header: ids, store state, wall time</summary>",
    );
    kv_table(h, &rows);
    h.push_str("</details></section>");
}

/// The planning history and the gated answers of an ask record.
fn ask_sections(h: &mut String, rec: &Value) {
    h.push_str("<section id=\"planning\"><h2>Planning history</h2>");
    kv_table(
        h,
        &[
            ("model", esc(rec["model"].as_str().unwrap_or(""))),
            ("guided decoding", esc(rec["guided"].as_str().unwrap_or(""))),
            (
                "system prompt sha256",
                dg(rec["system_prompt_sha"].as_str().unwrap_or("")),
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
    for e in rec["plan_result"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let valid = e["valid"] == Value::Bool(true);
        let _ = write!(
            h,
            "<details class=\"step\"{}><summary><b>Emission {} — {}</b> <span class=\"{}\">{}</span></summary>",
            if valid { "" } else { " open" },
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
        h.push_str("</details>");
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
    h.push_str("</section>");
}

/// One step's details, collapsed: a one-line summary (id, op, status, rows, time, taint)
/// that opens onto the args, digests, error, evidence descriptor and stored envelope.
fn step_details(h: &mut String, v: &TraceView<'_>, r: &Value) {
    let sid = r["step_id"].as_str().unwrap_or("");
    let status = r["status"].as_str().unwrap_or("");
    let tainted = r["truncated"] == Value::Bool(true)
        || r["upstream_truncated"] == Value::Bool(true)
        || r.get("ref_truncations").is_some();
    let _ = write!(
        h,
        "<details class=\"step\" id=\"step-{0}\"><summary><b>{0}</b> <code>{1}</code> <span class=\"{2}\">{3}</span> <small>{4}{5}{6}</small></summary>",
        esc(sid),
        esc(r["op"].as_str().unwrap_or("")),
        if status == "ok" { "ok" } else { "bad" },
        esc(status),
        r["rows_returned"].as_i64().map_or(String::new(), |n| format!("· {n} rows ")),
        r["wall_ms"].as_f64().map_or(String::new(), |ms| format!("· {ms} ms ")),
        if tainted { "· <span class=\"weak\">truncated/tainted</span>" } else { "" }
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
        rows.push(("resolved_args_digest", dg(d)));
    }
    for k in [
        "result_digest",
        "wall_ms",
        "rows_returned",
        "truncated",
        "upstream_truncated",
    ] {
        if let Some(x) = r.get(k) {
            let shown = match x.as_str() {
                Some(s) if is_digest(s) => dg(s),
                Some(s) => format!("<code>{}</code>", esc(s)),
                None => format!("<code>{}</code>", ej(x)),
            };
            rows.push((k, shown));
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
    kv_table(h, &rows);
    // The descriptor repeats the step's own digests (shown once, above) and the list set
    // digests of the envelope (shown once, with the envelope's totals, when it is stored).
    let shown_above = ["result_digest", "resolved_args_digest"];
    let envelope = r["result_digest"]
        .as_str()
        .and_then(|d| v.results.envelope(d));
    if let Some(ev) = r.get("evidence") {
        h.push_str("<details open><summary>evidence descriptor</summary>");
        let in_envelope = ["result_digest", "resolved_args_digest", "set_digest"];
        obj_table(
            h,
            ev,
            if envelope.is_some() {
                &in_envelope
            } else {
                &shown_above
            },
        );
        h.push_str("</details>");
    }
    if let Some(env) = envelope {
        if let Some(m) = env.as_object() {
            let mut scalars = serde_json::Map::new();
            for (k, x) in m {
                match x {
                    Value::Array(a) if a.iter().any(Value::is_object) || k != "args_echo" => {
                        rows_table(h, k, a)
                    }
                    Value::Object(_) if k != "args_echo" => {
                        let _ = write!(h, "<details open><summary>{}</summary>", esc(k));
                        obj_table(h, x, &[]);
                        h.push_str("</details>");
                    }
                    _ => {
                        scalars.insert(k.clone(), x.clone());
                    }
                }
            }
            h.push_str("<details open><summary>totals and scalars</summary>");
            obj_table(h, &Value::Object(scalars), &shown_above);
            h.push_str("</details>");
        }
        embed(h, &format!("env-{sid}"), &env);
    }
    h.push_str("</details>");
}

/// The answer: the trace's typed answer, the answer object's text, every claim with its
/// verdict, gating and the metrics.
fn answer_section(h: &mut String, v: &TraceView<'_>) {
    let t = v.trace;
    h.push_str("<section id=\"answer\"><h2>Answer and claims</h2>");
    // An answer read from a time field shows its UTC reading beside the integer.
    let from_field = v
        .plan
        .and_then(|p| p["answer_spec"]["from"].as_str())
        .and_then(|f| f.rsplit('.').next())
        .map(|f| f.split('[').next().unwrap_or(f))
        .unwrap_or("");
    let shown_answer = match t["answer"].as_i64() {
        Some(_)
            if tgms_operators::timefmt::field_kind(from_field)
                == Some(tgms_operators::timefmt::FieldKind::Instant) =>
        {
            cell(from_field, &t["answer"])
        }
        _ => format!("<code>{}</code>", ej(&t["answer"])),
    };
    kv_table(
        h,
        &[
            ("trace.answer", shown_answer),
            ("answer_complete", ej(&t["answer_complete"])),
            ("answer_error", ej(&t["answer_error"])),
        ],
    );
    if let Some(p) = v.plan {
        let _ = write!(
            h,
            "<p>answer_spec: <code>{}</code></p>",
            ej(&p["answer_spec"])
        );
    }
    match (v.answer_object, v.verification) {
        (Some(a), Some(ver)) => {
            let _ = write!(
                h,
                "<p>answer text: <b>{}</b></p><h3>Claims</h3><div class=\"tw\"><table class=\"claims\"><tr><th>id</th><th>type</th><th>content</th><th>cited steps</th><th>verdict</th><th>reason</th></tr>",
                esc(a["text"].as_str().unwrap_or(""))
            );
            for (i, (c, vd, dropped)) in claim_rows(v).into_iter().enumerate() {
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
                    "<tr id=\"claim-{i}\"><td>{}{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
                    esc(c["id"].as_str().unwrap_or("")),
                    if dropped { "<br><small>dropped by gating</small>" } else { "" },
                    esc(c["type"].as_str().unwrap_or("")),
                    ej(&Value::Object(content)),
                    cited.join(", "),
                    verdict_class(&vd["verdict"]),
                    esc(vd["verdict"].as_str().unwrap_or("")),
                    esc(vd["reason"].as_str().unwrap_or(""))
                );
            }
            h.push_str("</table></div>");
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
            obj_table(h, &ver["metrics"], &[]);
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
                obj_table(h, &gv["metrics"], &[]);
            }
            embed(h, "answer-object", a);
        }
        _ => h.push_str("<p><small>No answer object was given for this trace: no claim verdicts are shown. (<code>tgms view … --plan PLAN.json</code> verifies the mechanical answer; <code>--answer FILE</code> verifies a given one.)</small></p>"),
    }
    h.push_str("</section>");
}

fn render_inner(v: &TraceView<'_>, ask: Option<&Value>) -> String {
    let t = v.trace;
    let plan_id = t["plan_id"].as_str().unwrap_or("");
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>tgms trace — {0}</title><style>{STYLE}</style></head><body><header><h1>tgms trace <code>{0}</code></h1><nav><a href=\"#summary\">summary</a> · <a href=\"#graph\">step graph</a> · <a href=\"#steps\">steps</a> · <a href=\"#answer\">answer and claims</a>{1} · <a href=\"#integrity\">integrity</a></nav></header>",
        esc(plan_id),
        if ask.is_some() { " · <a href=\"#planning\">planning history</a>" } else { "" }
    );
    summary(&mut h, v, ask);
    // The plan as a step graph.
    let (nodes, edges) = trace_graph::graph(t, v.plan);
    h.push_str("<section id=\"graph\"><h2>Plan step graph</h2><p><small>Each box is a step (green ok, amber truncated or tainted, red not ok); an arrow runs from a step to the step that reads it (solid: through a <code>$ref</code>, dashed: <code>depends_on</code> only). Click a box for its details.</small></p>");
    h.push_str(&trace_graph::svg(&nodes, &edges, v.plan.is_some()));
    h.push_str("</section>");
    // Step details, collapsed.
    h.push_str("<section id=\"steps\"><h2>Step details</h2><p><small>Collapsed: open a step for its literal and resolved args, digests, error, evidence descriptor and stored result (first 50 rows, all totals).</small></p>");
    for r in t["steps"].as_array().into_iter().flatten() {
        step_details(&mut h, v, r);
    }
    h.push_str("</section>");
    answer_section(&mut h, v);
    if let Some(rec) = ask {
        ask_sections(&mut h, rec);
    }
    // Integrity.
    h.push_str("<section id=\"integrity\"><h2>Integrity</h2><p>Each digest is shown once, abbreviated; hover shows it in full, selecting it copies the full value, and the copy button beside it copies it too. <code>tgms plan run STORE PLAN.json</code> on the same store state reproduces every <code>result_digest</code>, <code>resolved_args_digest</code>, the <code>plan_digest</code> and the <code>trace_id</code> (the digest of the trace without <code>trace_id</code> and <code>wall_ms</code>); <code>tgms verify STORE ANSWER.json --trace TRACE_ID</code> reproduces the claim verdicts. The whole trace, with every digest in full:</p>");
    embed(&mut h, "trace", t);
    h.push_str("</section>");
    let _ = writeln!(h, "<script>{SCRIPT}</script></body></html>");
    h
}

/// The page's style: readable from 600 px up; wide tables and long values scroll or wrap
/// inside their own box, never the page.
const STYLE: &str = "*{box-sizing:border-box}\
body{font:14px/1.45 system-ui,sans-serif;overflow-wrap:break-word;margin:0 auto;padding:1em 1.2em;max-width:1280px;color:#222}\
h1{font-size:1.35em;margin:.2em 0;overflow-wrap:anywhere}h2{font-size:1.15em;border-bottom:1px solid #dde;padding-bottom:.2em;margin:1.4em 0 .6em}h3{font-size:1em}\
nav{font-size:13px}a{color:#235}\
.tw{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;font-size:13px;text-align:left}th{background:#f3f3f3}\
table.kv td{overflow-wrap:anywhere}table.claims td{overflow-wrap:break-word}table.kv th{min-width:7em;max-width:14em;font-weight:600}\
table.rows td{white-space:nowrap}\
code{background:#f4f4f6;padding:1px 3px;border-radius:3px;overflow-wrap:anywhere}\
pre{background:#f4f4f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere;max-height:32em;overflow:auto;margin:.3em 0}\
.dg{display:inline-block;max-width:14ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}\
button.cp{font:11px system-ui,sans-serif;margin-left:3px;padding:0 5px;cursor:pointer;border:1px solid #aab;border-radius:3px;background:#fff}\
.ok{color:#070;font-weight:bold}.weak{color:#a60;font-weight:bold}.bad{color:#b00;font-weight:bold}\
.audit{background:#fff8e0}.ref{background:#e0ecff}small{color:#666}details{margin:.4em 0}summary{cursor:pointer}\
.sum{border:1px solid #ccd;border-radius:8px;padding:.6em 1em;background:#fafbff}.sum p{margin:.45em 0}\
.lbl{display:inline-block;min-width:6.5em;color:#556;font-size:12px;text-transform:uppercase;letter-spacing:.03em}\
.answer{font-size:1.12em;margin:.45em 0;overflow-wrap:anywhere}\
.chip{display:inline-block;border:1px solid currentColor;border-radius:1em;padding:0 .6em;margin:1px 2px;text-decoration:none;font-size:13px}\
.chip.ok{background:#eef8ee}.chip.weak{background:#fff4dc}.chip.bad{background:#fdeeee}\
.graph{overflow-x:auto;margin:.4em 0}.graph svg{display:block;max-width:100%;height:auto}\
.graph text{font:13px system-ui,sans-serif;fill:#222}.graph .sid{font-weight:bold}.graph .sop{font-family:ui-monospace,monospace;font-size:12px}\
.graph rect{fill:#f2fbf2;stroke:#070;stroke-width:1.5}.graph .weak rect{fill:#fff6e4;stroke:#a60}.graph .bad rect{fill:#fff0f0;stroke:#b00}\
.graph a:hover rect{stroke-width:3}.graph .e{fill:none;stroke:#557;stroke-width:1.5}.graph .e.dep{stroke-dasharray:5 4}\
details.step{border:1px solid #ccd;border-left:4px solid #99b;border-radius:4px;padding:.15em .7em;margin:.5em 0}\
details.step>summary{padding:.25em 0;overflow-wrap:anywhere}details.step[open]>summary{border-bottom:1px solid #eee;margin-bottom:.4em}\
details.step:target{border-left-color:#36c}\
@media (max-width:700px){body{padding:.6em;font-size:13px}td,th{padding:2px 4px}.lbl{display:block}}";

/// The page's one script: pretty-prints the embedded JSON, adds a copy button beside each
/// digest and opens the collapsed step a link points to. The page reads the same without it.
const SCRIPT: &str = "for(const s of document.querySelectorAll('script[type=\"application/json\"]')){const p=document.getElementById('p-'+s.id.slice(2));if(p)p.textContent=JSON.stringify(JSON.parse(s.textContent),null,1);}\
function sel(e){const r=document.createRange();r.selectNodeContents(e);const s=getSelection();s.removeAllRanges();s.addRange(r);}\
for(const d of document.querySelectorAll('code.dg')){const b=document.createElement('button');b.type='button';b.className='cp';b.textContent='copy';b.title='copy the full digest';\
b.addEventListener('click',()=>{const done=()=>{b.textContent='copied';setTimeout(()=>{b.textContent='copy';},1200);};\
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(d.textContent).then(done,()=>sel(d));}else{sel(d);}});d.after(b);}\
function openHash(){const id=decodeURIComponent(location.hash.slice(1));const e=id&&document.getElementById(id);if(!e)return;for(let p=e;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}e.scrollIntoView();}\
addEventListener('hashchange',openHash);openHash();";
