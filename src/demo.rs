//! `tgms demo [--dir DIR] [--html FILE]` (the spec's `agent-surface.md` §11.5): offline, on the
//! shipped data. Builds the CollegeMsg store with its eight correction probes (the replay log
//! of `evaluation.md` §7.2, imported), the incident store (§6) and the state-at-T store (§5),
//! then shows (a) a correction probe before/after, (b) three plans run through the verifier
//! (validate → execute → mechanical answer → claim verdicts → gating, with one deliberately
//! wrong claim each), (c) the incident reconstruction with §6.3 item 4 through the claim
//! verifier, (d) the state-at-T regression against the naive lookup, (e) an operator latency
//! table; writes the trace viewer page ([`crate::trace_view`]) of the correction-probe plan.
//! Exit 0 only if every check shown passed.

use crate::eval::{self, mark, paint, utc, wrap, WorkDir};
use crate::trace_view::{self, TraceView};
use crate::verified::{self, DemoPlan, ExtraClaim, Verified};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tgms_bench::registry::{self, Params, Protocol, Query};
use tgms_engine::{canon, Store};
use tgms_operators::{call_operator, CallOptions};
use tgms_verifier::claims::{SUPPORTED, UNSUPPORTED};

/// TV20: the imported CollegeMsg replay log's store digest.
pub const COLLEGEMSG_DIGEST: &str =
    "da717ee9940ec86ac48b6e83f3f0cd7473818faf0667dae69b7884a38f977285";

/// One check shown by the demo.
#[derive(Clone, Debug)]
pub struct DemoCheck {
    /// The demo section it belongs to: `setup`, or `a` … `e` as in the module docs.
    pub section: &'static str,
    /// What the check asserts, in words.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was observed (shown next to the mark).
    pub detail: String,
}

/// What the demo did.
#[derive(Clone, Debug)]
pub struct DemoReport {
    /// The work directory holding the demo's stores (kept after the run).
    pub dir: PathBuf,
    /// The trace viewer page written (default: `demo-trace.html` in `dir`).
    pub html: PathBuf,
    /// Every check made, in order; the demo passes when all hold.
    pub checks: Vec<DemoCheck>,
}

impl DemoReport {
    /// True when every check passed.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

/// Width of the demo's output in columns.
const COLUMNS: usize = 100;

fn heading(s: &str) {
    println!();
    let line = format!(
        "━━ {s} {}",
        "━".repeat(COLUMNS.saturating_sub(4 + s.chars().count()))
    );
    println!("{}", paint(&line, "1"));
}

/// `s` cut to `n` characters, `…` marking a cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
}

fn call(st: &Store, op: &str, args: Value) -> anyhow::Result<Value> {
    call_operator(st.snapshot(), op, &args, &CallOptions::default())
        .map_err(|e| anyhow::anyhow!("{op}: {}", canon::to_string(&e.payload())))
}

/// A correction probe of the replay log: `(tt, uid, vt_s, vt_e)`.
fn probes(log: &str) -> Vec<(i64, String, i64, i64)> {
    log.lines()
        .skip(1)
        .filter_map(|l| canon::parse(l).ok())
        .filter_map(|b| {
            let op = b["ops"].get(0)?;
            (op["op"] == "correct").then(|| {
                (
                    b["tt"].as_i64().unwrap_or(0),
                    op["ref"]["uid"].as_str().unwrap_or("").to_string(),
                    op["vt_s"].as_i64().unwrap_or(0),
                    op["vt_e"].as_i64().unwrap_or(0),
                )
            })
        })
        .collect()
}

fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{elapsed_precise}] {bar:40} {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(msg.to_string());
    pb
}

/// Runs the demo in `dir` (default: a new temporary directory; kept either way and named at
/// the end); `collegemsg_text` is the shipped SNAP file, decompressed.
pub fn run(
    dir: Option<PathBuf>,
    html: Option<PathBuf>,
    collegemsg_text: &str,
) -> anyhow::Result<DemoReport> {
    if let Some(d) = &dir {
        if d.exists() && std::fs::read_dir(d)?.next().is_some() {
            anyhow::bail!("E_STATE: {} exists and is not empty", d.display());
        }
    }
    let work = WorkDir::new(
        Some(dir.unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            std::env::temp_dir().join(format!("tgms-demo-{}-{nanos}", std::process::id()))
        })),
        "demo",
    )?;
    let mut checks: Vec<DemoCheck> = Vec::new();
    // Checks of sections (c) and (d) are printed by their renderings; the others here.
    let mut check = |section: &'static str, name: &str, ok: bool, detail: String| {
        if !matches!(section, "c" | "d" | "setup") {
            let room = COLUMNS.saturating_sub(12 + name.chars().count()).max(16);
            println!("  [{}] {name} — {}", mark(ok), cut(&detail, room));
        }
        checks.push(DemoCheck {
            section,
            name: name.to_string(),
            ok,
            detail,
        });
    };

    println!(
        "{}",
        paint("tgms demo — a graph database that remembers what was true when, and what it believed when", "1")
    );
    println!(
        "{}",
        wrap(
            "",
            "",
            "Every fact carries valid time (when it was true) and transaction time (when the \
             store believed it); corrections close old beliefs instead of overwriting them. \
             Each [PASS] below is a check the demo makes on its own output."
        )
    );
    println!("working directory: {}", work.path.display());

    // ---- build the stores ----
    let log_path = work.path.join("collegemsg.eventlog.jsonl");
    let mut log = Vec::new();
    tgms_bench::collegemsg_log::write_collegemsg_log(collegemsg_text, &mut log)?;
    let log = String::from_utf8(log)?;
    std::fs::write(&log_path, &log)?;
    let mut cm = crate::store_env::create(&work.path.join("collegemsg"))?;
    let pb = spinner("import CollegeMsg replay log (59,835 messages + 8 corrections)");
    pb.set_length(log.lines().count().saturating_sub(1) as u64);
    let r = tgms_engine::eventlog::import(&mut cm, &log_path, &mut |n| {
        pb.set_position(n.saturating_sub(1))
    });
    pb.finish_and_clear();
    let r = r?;
    let digest = cm.digest();
    eprintln!(
        "built collegemsg: {} batches, {} edge versions, digest {}",
        r.batches,
        cm.stats().n_edge_versions,
        &digest[..16]
    );
    let pb = spinner("build incident and state-at-T stores");
    pb.set_length(2);
    let (inc_store, inc) = eval::incident(&work)?;
    pb.inc(1);
    let (_reg_store, reg) = eval::state_regression(&work)?;
    pb.finish_and_clear();
    println!(
        "  [{}] CollegeMsg store digest — {digest}",
        mark(digest == COLLEGEMSG_DIGEST)
    );
    check(
        "setup",
        "CollegeMsg store digest as published (da717ee9…)",
        digest == COLLEGEMSG_DIGEST,
        digest.clone(),
    );

    // ---- (a) correction probe ----
    heading("(a) correction probe: the same question before and after a correction");
    let ps = probes(&log);
    if let Some((tt, uid, vs, ve)) = ps.first() {
        let at = vs + (ve - vs) / 2;
        println!(
            "{}",
            wrap(
                "",
                "  ",
                &format!(
                    "Question: what were {uid}'s attributes at {} UTC (valid time {at})? A later \
                     correction changed them; tgms still answers what it believed before.",
                    utc(at)
                )
            )
        );
        let before = call(
            &cm,
            "state_at",
            json!({"uid": uid, "at": at, "as_of_tt": tt - 1, "limit": 1}),
        )?;
        let after = call(&cm, "state_at", json!({"uid": uid, "at": at, "limit": 1}))?;
        let pb_ = canon::to_string(&before["node"]["props"]);
        let pa = canon::to_string(&after["node"]["props"]);
        println!(
            "  believed before the correction (as of tt {}):  node.props = {pb_}",
            tt - 1
        );
        println!("  believed now:  node.props = {pa}");
        println!(
            "      written by {}, reason: {}",
            after["node"]["origin"].as_str().unwrap_or(""),
            after["node"]["reason"].as_str().unwrap_or("none")
        );
        check(
            "a",
            &format!("{uid}: before = {{}}, after = the corrected props"),
            pb_ == "{}" && pa == r#"{"note":"correction probe","revised":true}"#,
            format!("before {pb_}, after {pa}"),
        );
    }
    println!(
        "\n  All eight corrected users: versions believed before the correction, and stored now"
    );
    println!(
        "  {:<7} {:<18} {:<37} {:>7} {:>5}",
        "uid", "corrected at (tt)", "corrected valid time", "before", "now"
    );
    let mut all_ok = !ps.is_empty();
    for (tt, uid, vs, ve) in &ps {
        let b = call(
            &cm,
            "entity_history",
            json!({"uid": uid, "as_of_tt": tt - 1}),
        )?;
        let n = call(&cm, "entity_history", json!({ "uid": uid }))?;
        let (bn, nn) = (b["rows_total"].as_i64(), n["rows_total"].as_i64());
        all_ok &= bn == Some(1) && nn == Some(3);
        println!(
            "  {:<7} {:<18} {:<37} {:>7} {:>5}",
            uid,
            tt,
            format!("[{}, {})", utc(*vs), utc(*ve)),
            bn.unwrap_or(-1),
            nn.unwrap_or(-1)
        );
    }
    check(
        "a",
        "all eight probes: 1 version before, 3 now",
        all_ok,
        format!("{} probes", ps.len()),
    );

    // ---- (b) verified plans ----
    heading("(b) verified plans: checked, run, answered, every claim checked against the evidence");
    println!(
        "{}",
        wrap(
            "",
            "",
            "Each plan is checked before it runs, runs with a recorded trace, and its answer's \
             claims are checked against that trace. Each plan also gets one deliberately wrong \
             claim: it must come out unsupported and be removed before the answer is shown."
        )
    );
    let plans_dir = work.path.join("plans");
    std::fs::create_dir_all(&plans_dir)?;
    let mut html_run: Option<Verified> = None;
    match ps.first() {
        None => check(
            "b",
            "correction probes found for the plans",
            false,
            "none".into(),
        ),
        Some(probe) => {
            let stats = cm.stats();
            let (lo, hi) = (stats.vt_min.unwrap_or(0), stats.vt_max.unwrap_or(1));
            for dp in collegemsg_plans(lo, hi, probe) {
                let v = verified::run(&cm, &dp)?;
                show_verified("b", &v, &plans_dir, &mut check)?;
                // The page of `--html`: the correction-probe plan (both clocks, four steps).
                if v.plan["plan_id"] == "demo-correction-probe" {
                    html_run = Some(v);
                }
            }
        }
    }

    // ---- (c) incident ----
    heading("(c) incident reconstruction (checkout-api outage, INC-4711)");
    print!("{}", eval::render_incident(&inc));
    for c in &inc.checks {
        check("c", &c.name, c.ok, c.got.clone());
    }
    println!();
    println!("  The same answer as a verified plan, its claims checked against the trace:");
    let (inc_plan, note) = incident_verifier_plan();
    println!("{}", wrap("  ", "  ", &note));
    let v = verified::run(&inc_store, &inc_plan)?;
    show_verified("c4", &v, &plans_dir, &mut check)?;

    // ---- (d) state-at-T regression ----
    heading("(d) state-at-T regression: tgms state_at vs a naive \"latest valid_from\" lookup");
    print!("{}", eval::render_regression(&reg));
    let (se, sn) = reg.state_at_errors();
    let (ne, _) = reg.naive_errors();
    check(
        "d",
        "state-at-T store digest as published (04283422…)",
        reg.store_digest == tgms_bench::scenarios::STATE_REGRESSION_DIGEST,
        reg.store_digest.clone(),
    );
    check(
        "d",
        "state_at: 0 errors",
        se == 0 && sn == 117,
        format!("{se}/{sn}"),
    );
    check(
        "d",
        "naive lookup: > 0 errors",
        ne > 0,
        format!("{ne}/{sn}"),
    );

    // ---- (e) latency ----
    heading("(e) operator latency on CollegeMsg (1 warm-up, then 5 timed runs per query)");
    let (queries, left_out) = demo_queries(&cm)?;
    let recs = crate::benchrun::run_queries(&cm, &queries, Protocol::QUICK, true);
    print!("{}", crate::benchrun::render_table(&recs));
    for l in &left_out {
        println!("{}", wrap("  not timed: ", "    ", l));
    }
    let failed: Vec<String> = recs
        .iter()
        .filter(|r| r.available && !r.ok)
        .map(|r| format!("{}: {}", r.id, r.error.clone().unwrap_or_default()))
        .collect();
    check(
        "e",
        "every registered operator answered",
        failed.is_empty(),
        if failed.is_empty() {
            format!(
                "{} answered, {} not available in this build",
                recs.iter().filter(|r| r.ok).count(),
                recs.iter().filter(|r| !r.available).count()
            )
        } else {
            failed.join("; ")
        },
    );

    // ---- HTML trace ----
    let html_path = html.unwrap_or_else(|| work.path.join("demo-trace.html"));
    if let Some(v) = &html_run {
        let rs = tgms_verifier::exec::ResultStore::in_dir(cm.dir());
        std::fs::write(
            &html_path,
            trace_view::render(&TraceView {
                trace: &v.trace,
                results: &rs,
                plan: Some(&v.plan),
                answer_object: Some(&v.answer_object),
                verification: Some(&v.verification),
                gated: Some((&v.gated, &v.gated_verification)),
            }),
        )?;
    }

    heading("summary");
    let passed = checks.iter().filter(|c| c.ok).count();
    for c in &checks {
        if !c.ok {
            println!("  [FAIL] ({}) {} — {}", c.section, c.name, c.detail);
        }
    }
    println!(
        "  {passed}/{} checks passed — {}",
        checks.len(),
        mark(passed == checks.len())
    );
    println!("  HTML trace page: {}", html_path.display());
    println!("  stores kept in:  {}", work.path.display());
    let report = DemoReport {
        dir: work.path.clone(),
        html: html_path,
        checks,
    };
    Ok(report)
}

const DAY: i64 = 86_400_000_000;

/// The benchmark registry's queries with arguments that return rows on CollegeMsg, and the
/// queries left out with the reason. The registry's own arguments (`bench run`) ask at the
/// middle of the extent, where CollegeMsg's instantaneous messages leave `n1` with no edge
/// valid; here the instants are two of `n1`'s own messages.
fn demo_queries(cm: &Store) -> anyhow::Result<(Vec<Query>, Vec<String>)> {
    let h = call(
        cm,
        "entity_history",
        json!({"uid": "n1", "include_edges": true, "limit": 1000}),
    )?;
    let edges = h["edges"].as_array().cloned().unwrap_or_default();
    let at = |i: usize| edges.get(i).and_then(|e| e["vt_s"].as_i64());
    let (Some(t1), Some(t2)) = (at(0), at(edges.len().saturating_sub(1))) else {
        anyhow::bail!("n1 has fewer than two messages in the CollegeMsg store");
    };
    let mut queries = Vec::new();
    let mut left_out = Vec::new();
    for mut q in registry::queries(&Params::from_store(cm)) {
        match q.id {
            "snap.hop2" => q.args["t_valid"] = json!(t1),
            "state.at" => q.args["at"] = json!(t1),
            "nbr.evolution" => {
                q.args["t1"] = json!(t1);
                q.args["t2"] = json!(t2);
            }
            "coactive.narrow" => {
                q.args["b_spec"] = json!({"dst": "n1"});
                q.args["allen_relation"] = json!({"relation": "before", "gap": DAY});
            }
            "wtrav.seed" => {
                left_out.push(
                    "wtrav.seed (weighted_traverse follows links with props.link_type and \
                     props.weight; CollegeMsg's messages have none)"
                        .to_string(),
                );
                continue;
            }
            _ => {}
        }
        queries.push(q);
    }
    Ok((queries, left_out))
}

fn claim(v: Value, expect: &'static str, note: &'static str) -> ExtraClaim {
    ExtraClaim {
        claim: v,
        expect,
        note,
    }
}

fn total(envs: &BTreeMap<String, std::sync::Arc<Value>>, step: &str, field: &str) -> i64 {
    envs.get(step).and_then(|e| e[field].as_i64()).unwrap_or(0)
}

/// Which days carried a burst of messages (daily buckets, z-score ≥ 3 against the
/// previous 7 days); the answer is the first flagged day.
fn burst_plan(lo: i64, hi: i64) -> DemoPlan {
    DemoPlan {
        plan: json!({"plan_id": "demo-burst-days",
            "question": "On which days did the CollegeMsg message rate burst (daily buckets, z-score at least 3 against the previous 7 days), and when was the first?",
            "steps": [{"id": "s1", "op": "burst_detection", "args": {
                "target": {"kind": "edge_event_rate"}, "window": {"t_a": lo, "t_b": hi},
                "stride": DAY, "method": "zscore", "params": {"w": 7, "z": 3.0}, "limit": 2000}}],
            "answer_spec": {"kind": "value", "from": "s1.rows[0].t_a"}}),
        input_uids: vec![],
        extra: Box::new(|envs| {
            let n = total(envs, "s1", "rows_total");
            vec![
                claim(
                    json!({"type": "count", "value": n, "from": "s1.rows_total", "evidence": ["s1"]}),
                    SUPPORTED,
                    "number of burst days",
                ),
                claim(
                    json!({"type": "count", "value": n + 1, "from": "s1.rows_total", "evidence": ["s1"]}),
                    UNSUPPORTED,
                    "DELIBERATELY WRONG: count + 1",
                ),
            ]
        }),
    }
}

/// Who exchanged messages with the probe node, and how many messages.
fn contacts_plan(uid: &str) -> DemoPlan {
    DemoPlan {
        plan: json!({"plan_id": "demo-contacts",
            "question": format!("Who exchanged messages with {uid}, and how many messages were there?"),
            "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": uid, "include_edges": true, "limit": 10000}}],
            "answer_spec": {"kind": "count", "from": "s1.edges_total"}}),
        input_uids: vec![uid.to_string()],
        extra: Box::new({
            let uid = uid.to_string();
            move |envs| {
                let contacts: BTreeSet<String> = envs
                    .get("s1")
                    .and_then(|e| e["edges"].as_array().cloned())
                    .unwrap_or_default()
                    .iter()
                    .flat_map(|e| [e["src"].clone(), e["dst"].clone()])
                    .filter_map(|u| u.as_str().map(String::from))
                    .filter(|u| *u != uid)
                    .collect();
                vec![
                    claim(
                        json!({"type": "entity", "uids": contacts, "evidence": ["s1"]}),
                        SUPPORTED,
                        "the contacts",
                    ),
                    claim(
                        json!({"type": "entity", "uids": ["n999999"], "evidence": ["s1"]}),
                        UNSUPPORTED,
                        "DELIBERATELY WRONG: fabricated entity",
                    ),
                ]
            }
        }),
    }
}

/// The correction probe through the verifier: the node's attributes and its stored
/// versions as believed just before the correction (`as_of_tt`) and now.
fn probe_plan(probe: &(i64, String, i64, i64)) -> DemoPlan {
    let (tt, uid, vs, ve) = probe;
    let at = vs + (ve - vs) / 2;
    DemoPlan {
        plan: json!({"plan_id": "demo-correction-probe",
            "question": format!("What did tgms believe about {uid}'s attributes at {} UTC, just before the correction at transaction time {tt} and now, and how many versions were stored then and now?", utc(at)),
            "steps": [
                {"id": "s1", "op": "state_at", "args": {"uid": uid, "at": at, "as_of_tt": tt - 1}},
                {"id": "s2", "op": "state_at", "args": {"uid": uid, "at": at}},
                {"id": "s3", "op": "entity_history", "args": {"uid": uid, "as_of_tt": tt - 1}},
                {"id": "s4", "op": "entity_history", "args": {"uid": uid}}],
            "answer_spec": {"kind": "value", "from": "s2.node.props.note"}}),
        input_uids: vec![uid.clone()],
        extra: Box::new(|envs| {
            let (b, n) = (
                total(envs, "s3", "rows_total"),
                total(envs, "s4", "rows_total"),
            );
            vec![
                claim(
                    json!({"type": "count", "value": b, "from": "s3.rows_total", "evidence": ["s3"]}),
                    SUPPORTED,
                    "versions believed before the correction",
                ),
                claim(
                    json!({"type": "count", "value": n, "from": "s4.rows_total", "evidence": ["s4"]}),
                    SUPPORTED,
                    "versions stored now",
                ),
                claim(
                    json!({"type": "count", "value": n, "from": "s3.rows_total", "evidence": ["s3"]}),
                    UNSUPPORTED,
                    "DELIBERATELY WRONG: today's count claimed for before the correction",
                ),
            ]
        }),
    }
}

/// The three plans of (b). Each is one builder; replacing one (e.g. by a
/// temporal_reachability → motif count plan) is a change to this list and one new builder.
fn collegemsg_plans(lo: i64, hi: i64, probe: &(i64, String, i64, i64)) -> Vec<DemoPlan> {
    vec![
        burst_plan(lo, hi),
        contacts_plan(&probe.1),
        probe_plan(probe),
    ]
}

/// The incident plan for the verifier (the oracle plan of `evaluation.md` §6.2) and a line
/// saying what it runs.
fn incident_verifier_plan() -> (DemoPlan, String) {
    let plan = tgms_bench::scenarios::incident_plan();
    let note = "The plan: s1 state_at (the facts at the outage), s2 compute topk (the latest \
                change), s3 version_history (every version of it)."
        .to_string();
    let dp = DemoPlan {
        plan,
        input_uids: vec!["checkout-api".into()],
        extra: Box::new(|_| {
            vec![claim(
                json!({"type": "ordering", "a": {"t": 1_773_153_000_000_000i64},
                    "b": {"t": tgms_bench::scenarios::T_OUT}, "relation": "before", "evidence": ["s1"]}),
                SUPPORTED,
                "the change precedes the outage",
            )]
        }),
    };
    (dp, note)
}

/// A share in [0, 1] as a whole percentage.
fn percent(v: &Value) -> String {
    format!("{:.0} %", 100.0 * v.as_f64().unwrap_or(0.0))
}

/// Prints one verified run with its checks; writes its plan and answer object to `dir`
/// (`tgms view STORE TRACE_ID --plan …` re-renders the page).
fn show_verified(
    section: &'static str,
    v: &Verified,
    dir: &Path,
    check: &mut dyn FnMut(&'static str, &str, bool, String),
) -> anyhow::Result<()> {
    let id = v.plan["plan_id"].as_str().unwrap_or("").to_string();
    println!();
    println!("  Plan {id}");
    println!(
        "{}",
        wrap(
            "    Q: ",
            "       ",
            v.plan["question"].as_str().unwrap_or("")
        )
    );
    std::fs::write(
        dir.join(format!("{id}.plan.json")),
        canon::to_string(&v.plan) + "\n",
    )?;
    check(
        section,
        &format!("{id}: plan valid (static verifier)"),
        v.valid,
        format!("{} violations", v.violations.as_array().map_or(0, Vec::len)),
    );
    if !v.valid {
        println!("    violations: {}", canon::to_string(&v.violations));
        return Ok(());
    }
    for r in v.trace["steps"].as_array().into_iter().flatten() {
        let head = format!(
            "    {:<3} {:<20} {:<6} ",
            r["step_id"].as_str().unwrap_or(""),
            r["op"].as_str().unwrap_or(""),
            r["status"].as_str().unwrap_or(""),
        );
        let args = canon::to_string(
            &v.plan["steps"]
                .as_array()
                .and_then(|a| a.iter().find(|s| s["id"] == r["step_id"]))
                .map_or(Value::Null, |s| s["args"].clone()),
        );
        println!("{head}{}", cut(&args, COLUMNS - head.chars().count()));
    }
    let trace_id = v.trace["trace_id"].as_str().unwrap_or("").to_string();
    println!("    trace: {trace_id}");
    check(
        section,
        &format!("{id}: trace ok"),
        v.trace["ok"] == Value::Bool(true),
        "every step ok, the answer resolved".to_string(),
    );
    std::fs::write(
        dir.join(format!("{id}.answer.json")),
        canon::to_string(&v.answer_object) + "\n",
    )?;
    let ans = &v.trace["answer"];
    let when = ans
        .as_i64()
        .filter(|_| {
            v.plan["answer_spec"]["from"]
                .as_str()
                .is_some_and(|f| f.ends_with("t_a"))
        })
        .map(|x| format!("  ({} UTC, valid time)", utc(x)))
        .unwrap_or_default();
    println!("    answer: {}{when}", canon::to_string(ans));
    println!(
        "            (complete: {}; typed answer verdict: {})",
        v.trace["answer_complete"],
        v.verification["answer_verdict"].as_str().unwrap_or("—")
    );
    println!(
        "{}",
        wrap(
            "    text:  ",
            "           ",
            v.answer_object["text"].as_str().unwrap_or("")
        )
    );
    println!("    claims:");
    let rows = v.rows();
    let dropped = v.dropped();
    let mut emitted_ok = true;
    let mut wrong_ok = true;
    let mut n_wrong = 0;
    for (c, verdict, reason, expect, note) in &rows {
        let cid = c["id"].as_str().unwrap_or("");
        let mut content = c.as_object().cloned().unwrap_or_default();
        for k in ["id", "type", "evidence"] {
            content.remove(k);
        }
        let body = cut(&canon::to_string(&Value::Object(content)), 56);
        println!(
            "      {cid:<3} {:<9} {body:<56} → {}",
            c["type"].as_str().unwrap_or(""),
            paint(verdict, if *verdict == SUPPORTED { "32" } else { "33" })
        );
        println!(
            "{}",
            cut(&format!("          {note}; reason: {reason}"), COLUMNS)
        );
        if *expect == UNSUPPORTED {
            n_wrong += 1;
            wrong_ok &= verdict == UNSUPPORTED && dropped.contains(cid);
        } else {
            emitted_ok &= verdict == SUPPORTED;
        }
    }
    check(
        section,
        &format!("{id}: every emitted claim supported"),
        emitted_ok && v.verification["answer_verdict"] == SUPPORTED,
        format!("{} claims + typed answer", rows.len() - n_wrong),
    );
    if n_wrong > 0 {
        println!(
            "    unsupported claims: {} before gating, {} after",
            percent(&v.verification["metrics"]["ucr"]),
            percent(&v.gated_verification["metrics"]["ucr"])
        );
        check(
            section,
            &format!("{id}: the deliberately wrong claim is rejected"),
            wrong_ok,
            format!(
                "unsupported, dropped: {}",
                dropped.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    Ok(())
}
