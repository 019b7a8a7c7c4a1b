//! The two small evaluation datasets with explicit transaction times (the spec's `evaluation.md`):
//! the state-at-T regression (§5) and the incident-reconstruction scenario (§6), as TGMS
//! JSONL event logs (`data-model.md` §13.1, with our `reason` keys), and their evaluations.
//!
//! The incident log is shipped as `datasets/incident-checkout.eventlog.jsonl`; a test checks
//! that the shipped file equals [`incident_log`] byte for byte. Both logs import (through
//! [`import_text`], the same conversion as `tgms import-eventlog`) into stores whose digests
//! are the TV20 values [`INCIDENT_DIGEST`] and [`STATE_REGRESSION_DIGEST`].

use serde_json::{json, Value};
use tgms_engine::{canon, eventlog, Result, Store, OPEN_END};
use tgms_operators::{call_operator, CallOptions};

/// TV20: the incident scenario's store digest.
pub const INCIDENT_DIGEST: &str =
    "eb6d5f92c5aa923d7855a13b1ec9845cb55fac4af14aa610d94c571a875ec8ca";
/// TV20: the state-at-T regression store digest.
pub const STATE_REGRESSION_DIGEST: &str =
    "042834226a3c7ac2e9f5c55bdabd542e15297328664637c04fe1fc50a72364a3";

/// The outage instant of §6 (2026-03-15T08:00Z).
pub const T_OUT: i64 = 1_773_561_600_000_000;
/// The (corrected) change instant of CHG-2291 (2026-03-10T14:30Z).
pub const T_CHANGE: i64 = 1_773_153_000_000_000;
/// The instant first recorded for CHG-2291 (2026-03-11T09:00Z).
pub const T_CHANGE_FIRST: i64 = 1_773_219_600_000_000;
/// The rollback instant (2026-03-16T15:00Z).
pub const T_ROLLBACK: i64 = 1_773_673_200_000_000;
/// The `tt` of the pager-alert batch (during the incident, before the postmortem).
pub const TT_PAGER: i64 = 1_773_562_320_000_000;
const V0: i64 = 1_761_955_200_000_000;

fn audit(mut op: Value, reason: &str) -> Value {
    op["source"] = json!("ingest");
    op["provenance_ref"] = Value::Null;
    op["reason"] = json!(reason);
    op
}

fn node(uid: &str, label: &str, props: Value, vt_s: i64, reason: &str) -> Value {
    audit(
        json!({"op": "assert_node", "uid": uid, "label": label, "props": props,
            "vt_s": vt_s, "vt_e": OPEN_END}),
        reason,
    )
}

fn edge(src: &str, dst: &str, rel: &str, props: Value, vt: (i64, i64), reason: &str) -> Value {
    audit(
        json!({"op": "assert_edge", "src": src, "dst": dst, "rel_type": rel, "disc": "",
            "props": props, "vt_s": vt.0, "vt_e": vt.1}),
        reason,
    )
}

fn eref(src: &str, dst: &str, rel: &str) -> Value {
    json!({"kind": "edge", "src": src, "dst": dst, "rel_type": rel, "disc": ""})
}

fn retract(src: &str, dst: &str, rel: &str, t: i64, reason: &str) -> Value {
    audit(
        json!({"op": "retract", "ref": eref(src, dst, rel), "t": t}),
        reason,
    )
}

/// Renders batches `(tt, ops)` as a TGMS JSONL event log (header, one canonical line each).
pub fn render_log(batches: &[(i64, Vec<Value>)]) -> String {
    let mut s = String::from(eventlog::HEADER);
    s.push('\n');
    for (tt, ops) in batches {
        let id = tgms_engine::op::batch_id(*tt, ops);
        s.push_str(&canon::to_string(
            &json!({"batch_id": id, "ops": ops, "tt": tt}),
        ));
        s.push('\n');
    }
    s
}

/// The batches of the incident scenario (§6.1).
pub fn incident_batches() -> Vec<(i64, Vec<Value>)> {
    const API: &str = "checkout-api";
    const T3: &str = "instance:t3.large";
    const M5: &str = "instance:m5.xlarge";
    const IT: &str = "HAS_INSTANCE_TYPE";
    const MR: &str = "HAS_MIN_REPLICAS";
    let r1 = "initial CMDB import";
    let r2 = "CHG-2104: raise min replicas from 3 to 4 ahead of the spring promotion";
    let r3 = "CHG-2291: resize checkout-api from t3.large to m5.xlarge";
    let r4 = "pager alert";
    let r5 = "postmortem INC-4711: deploy log shows CHG-2291 completed 2026-03-10T14:30Z, not 2026-03-11T09:00Z";
    let r6 = "CHG-2320: roll back checkout-api to t3.large after INC-4711";
    let open = (V0, OPEN_END);
    vec![
        (
            1_767_607_200_000_000,
            vec![
                node(
                    API,
                    "Service",
                    json!({"name": "Checkout API", "tier": "critical"}),
                    V0,
                    r1,
                ),
                node(
                    T3,
                    "InstanceType",
                    json!({"name": "t3.large", "vcpu": 2, "memory_gib": 8}),
                    V0,
                    r1,
                ),
                node(
                    M5,
                    "InstanceType",
                    json!({"name": "m5.xlarge", "vcpu": 4, "memory_gib": 16}),
                    V0,
                    r1,
                ),
                node(
                    "replicas:3",
                    "ConfigValue",
                    json!({"name": "min replicas 3"}),
                    V0,
                    r1,
                ),
                node(
                    "replicas:4",
                    "ConfigValue",
                    json!({"name": "min replicas 4"}),
                    V0,
                    r1,
                ),
                node(
                    "dbpool:50",
                    "ConfigValue",
                    json!({"name": "db pool size 50"}),
                    V0,
                    r1,
                ),
                edge(API, T3, IT, json!({}), open, r1),
                edge(API, "replicas:3", MR, json!({}), open, r1),
                edge(API, "dbpool:50", "USES_DB_POOL", json!({}), open, r1),
            ],
        ),
        (
            1_771_585_500_000_000,
            vec![
                retract(API, "replicas:3", MR, 1_771_585_200_000_000, r2),
                edge(
                    API,
                    "replicas:4",
                    MR,
                    json!({"change": "CHG-2104"}),
                    (1_771_585_200_000_000, OPEN_END),
                    r2,
                ),
            ],
        ),
        (
            1_773_220_500_000_000,
            vec![
                retract(API, T3, IT, T_CHANGE_FIRST, r3),
                edge(
                    API,
                    M5,
                    IT,
                    json!({"change": "CHG-2291"}),
                    (T_CHANGE_FIRST, OPEN_END),
                    r3,
                ),
            ],
        ),
        (
            TT_PAGER,
            vec![
                node(
                    "INC-4711",
                    "Incident",
                    json!({"name": "Checkout outage", "severity": "SEV1"}),
                    T_OUT,
                    r4,
                ),
                edge(
                    "INC-4711",
                    API,
                    "AFFECTED",
                    json!({}),
                    (T_OUT, 1_773_567_600_000_000),
                    r4,
                ),
            ],
        ),
        (
            1_773_655_200_000_000,
            vec![
                audit(
                    json!({"op": "correct", "ref": eref(API, M5, IT),
                        "props": {"change": "CHG-2291", "evidence": "deploy-log"},
                        "vt_s": T_CHANGE, "vt_e": OPEN_END}),
                    r5,
                ),
                retract(API, T3, IT, T_CHANGE, r5),
            ],
        ),
        (
            1_773_673_500_000_000,
            vec![
                retract(API, M5, IT, T_ROLLBACK, r6),
                edge(API, T3, IT, json!({}), (T_ROLLBACK, OPEN_END), r6),
            ],
        ),
    ]
}

/// The incident scenario's event log (the shipped `incident-checkout.eventlog.jsonl`).
pub fn incident_log() -> String {
    render_log(&incident_batches())
}

/// The incident's oracle plan (`evaluation.md` §6.2), for the verifier's `tgms plan run`.
pub fn incident_plan() -> Value {
    json!({"plan_id": "incident-config-at-outage",
        "question": "What was the checkout-api service's configuration when the outage began at 2026-03-15 08:00 UTC (1773561600000000), and which configuration change came last before it?",
        "steps": [
            {"id": "s1", "op": "state_at", "args": {"uid": "checkout-api", "at": T_OUT}, "depends_on": []},
            {"id": "s2", "op": "compute", "args": {"fn": "topk", "input": {"$ref": "s1.rows"}, "field": "vt_s", "k": 1}, "depends_on": ["s1"]},
            {"id": "s3", "op": "version_history", "args": {"kind": "edge", "window": {"t_a": V0, "t_b": 1_775_001_600_000_000i64}, "belief": "all", "rel_types": ["HAS_INSTANCE_TYPE"]}, "depends_on": []}],
        "answer_spec": {"kind": "value", "from": "s2.rows[0].dst"}})
}

/// State regression constants (§5.1).
pub const B: i64 = 1_767_225_600_000_000;
/// One day in µs.
pub const DAY: i64 = 86_400_000_000;
const HOUR: i64 = 3_600_000_000;
const FIVE_MIN: i64 = 300_000_000;
const ATTRS: [(&str, &str, [&str; 6]); 3] = [
    (
        "HAS_INSTANCE_TYPE",
        "instance:",
        [
            "t3.medium",
            "t3.large",
            "m5.large",
            "m5.xlarge",
            "c5.xlarge",
            "r5.large",
        ],
    ),
    (
        "OWNED_BY",
        "team:",
        [
            "payments", "checkout", "platform", "search", "identity", "growth",
        ],
    ),
    (
        "DEPLOYED_VERSION",
        "version:",
        ["1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0", "2.2.0"],
    ),
];

/// One state transition of §5.1.
#[derive(Clone, Debug)]
pub struct Transition {
    /// `12a + (i − 1)`.
    pub k: usize,
    /// The service whose attribute changes: `svc-01` … `svc-12`.
    pub svc: String,
    /// The attribute's relation type: `HAS_INSTANCE_TYPE`, `OWNED_BY` or `DEPLOYED_VERSION`.
    pub rel_type: &'static str,
    /// The attribute value before the change (the edge's `dst`, e.g. `instance:t3.large`).
    pub old: String,
    /// The attribute value from the change on.
    pub new: String,
    /// The change instant `C(i, a)` (valid time, µs).
    pub c: i64,
    /// The recording lag (µs; 3 days when `k mod 4 = 3`, else five minutes).
    pub lag: i64,
}

/// The 36 transitions in `k` order.
pub fn transitions() -> Vec<Transition> {
    let mut out = Vec::new();
    for (a, (rel, prefix, vocab)) in ATTRS.iter().enumerate() {
        for i in 1..=12usize {
            let k = 12 * a + (i - 1);
            out.push(Transition {
                k,
                svc: format!("svc-{i:02}"),
                rel_type: rel,
                old: format!("{prefix}{}", vocab[(i + a) % 6]),
                new: format!("{prefix}{}", vocab[(i + a + 1) % 6]),
                c: B + (10 + 2 * (i as i64 - 1) + 30 * a as i64) * DAY + 9 * HOUR,
                lag: if k % 4 == 3 { 3 * DAY } else { FIVE_MIN },
            });
        }
    }
    out
}

/// The batches of the state-at-T regression dataset (§5.1).
pub fn state_regression_batches() -> Vec<(i64, Vec<Value>)> {
    let r = "initial inventory";
    let mut first = Vec::new();
    for i in 1..=12 {
        let s = format!("svc-{i:02}");
        first.push(node(&s, "Service", json!({ "name": s }), B, r));
    }
    for (_, prefix, vocab) in ATTRS {
        for w in vocab {
            first.push(node(
                &format!("{prefix}{w}"),
                "Value",
                json!({ "name": w }),
                B,
                r,
            ));
        }
    }
    let ts = transitions();
    for t in &ts {
        first.push(edge(
            &t.svc,
            &t.old,
            t.rel_type,
            json!({}),
            (B, OPEN_END),
            r,
        ));
    }
    let mut batches = vec![(B - DAY, first)];
    let mut rest: Vec<(i64, Vec<Value>)> = ts
        .iter()
        .map(|t| {
            let reason = format!(
                "CHG-{}: {} of {} changed from {} to {}",
                1000 + t.k,
                t.rel_type,
                t.svc,
                t.old,
                t.new
            );
            (
                t.c + t.lag,
                vec![
                    retract(&t.svc, &t.old, t.rel_type, t.c, &reason),
                    edge(
                        &t.svc,
                        &t.new,
                        t.rel_type,
                        json!({}),
                        (t.c, OPEN_END),
                        &reason,
                    ),
                ],
            )
        })
        .collect();
    rest.sort_by_key(|b| b.0);
    batches.extend(rest);
    batches
}

/// The state-at-T regression dataset as an event log.
pub fn state_regression_log() -> String {
    render_log(&state_regression_batches())
}

/// Imports an event log given as text through `tgms import-eventlog`'s conversion (the text
/// is written next to the store as `<store>.eventlog.jsonl`, imported, and removed).
pub fn import_text(store: &mut Store, text: &str) -> Result<eventlog::ImportReport> {
    let dir = store.dir().to_path_buf();
    let name = format!(
        "{}.eventlog.jsonl",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "store".into())
    );
    let path = dir.with_file_name(name);
    std::fs::write(&path, text).map_err(|e| tgms_engine::Error::io(&path, e))?;
    let r = eventlog::import(store, &path, &mut |_| {});
    let _ = std::fs::remove_file(&path);
    r
}

/// One check of an evaluation: what was expected, what came out, whether they agree.
#[derive(Clone, Debug)]
pub struct Check {
    /// What the check asserts, in words.
    pub name: String,
    /// The expected value, rendered as text.
    pub expected: String,
    /// The value that came out, rendered as text.
    pub got: String,
    /// `expected == got`.
    pub ok: bool,
}

impl Check {
    fn new(name: &str, expected: impl Into<String>, got: impl Into<String>) -> Check {
        let (expected, got) = (expected.into(), got.into());
        Check {
            name: name.into(),
            ok: expected == got,
            expected,
            got,
        }
    }

    /// The check as JSON.
    pub fn to_json(&self) -> Value {
        json!({"check": self.name, "expected": self.expected, "got": self.got, "ok": self.ok})
    }
}

fn call(store: &Store, op: &str, args: Value) -> std::result::Result<Value, String> {
    call_operator(store.snapshot(), op, &args, &CallOptions::default())
        .map_err(|e| canon::to_string(&e.payload()))
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => canon::to_string(other),
    }
}

/// An audit row of the incident (one stored `HAS_INSTANCE_TYPE` version).
#[derive(Clone, Debug)]
pub struct AuditRow {
    /// The instance type the version records.
    pub dst: String,
    /// Valid-time start (µs, inclusive).
    pub vt_s: i64,
    /// Valid-time end (µs, exclusive; `OPEN_END` when open).
    pub vt_e: i64,
    /// Transaction time the version was recorded (µs).
    pub tt_s: i64,
    /// Transaction time the version stopped being believed (µs; `OPEN_END` while current).
    pub tt_e: i64,
    /// The kind of write that created the version: `assert`, `retract`, `correct` or `ingest`.
    pub origin: String,
    /// The reason given with that write (`null` when none; the evaluation requires one for
    /// `retract` and `correct`).
    pub reason: String,
    /// The kind of write that closed the version; `null` while it is current.
    pub closed_by: String,
    /// The reason given by the closing write; `null` while the version is current.
    pub close_reason: String,
}

/// What the incident evaluation found (§6.3).
#[derive(Clone, Debug)]
pub struct IncidentReport {
    /// The store digest of the incident dataset (checked against the published one).
    pub store_digest: String,
    /// The instance type at outage time (current beliefs).
    pub answer: String,
    /// The last configuration change before the outage: `(dst, rel_type, vt_s, change id)`.
    pub preceding_change: (String, String, i64, String),
    /// What was believed during the incident (as of the pager alert).
    pub believed_during_incident: (String, i64),
    /// The naive "latest vt_s per rel_type" answer.
    pub naive_answer: String,
    /// The `version_history` rows of `HAS_INSTANCE_TYPE`, ordered by `(tt_s, vt_s)`.
    pub audit: Vec<AuditRow>,
    /// The `state_at` envelope of plan step s1.
    pub s1: Value,
    /// The `version_history` envelope of plan step s3 (the audit trail).
    pub s3: Value,
    /// Every check made, in order; the evaluation passes when all hold.
    pub checks: Vec<Check>,
}

impl IncidentReport {
    /// True when every check holds.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// The evaluation record.
    pub fn to_json(&self) -> Value {
        json!({
            "store_digest": self.store_digest,
            "answer": self.answer,
            "preceding_change": {"dst": self.preceding_change.0, "rel_type": self.preceding_change.1,
                "vt_s": self.preceding_change.2, "reason": self.preceding_change.3},
            "believed_during_incident": {"dst": self.believed_during_incident.0,
                "vt_s": self.believed_during_incident.1},
            "naive_answer": self.naive_answer,
            "checks": self.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
            "ok": self.ok(),
        })
    }
}

/// Runs the incident evaluation (§6.3, the parts that need no verifier) on a store built
/// from [`incident_log`].
pub fn eval_incident(store: &Store) -> std::result::Result<IncidentReport, String> {
    let mut checks = Vec::new();
    let digest = store.digest();
    checks.push(Check::new(
        "store digest as published",
        INCIDENT_DIGEST,
        &digest,
    ));
    let s1 = call(
        store,
        "state_at",
        json!({"uid": "checkout-api", "at": T_OUT}),
    )?;
    let rows = s1["rows"].as_array().cloned().unwrap_or_default();
    let facts: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} [{}, {}) applicable={}",
                s(&r["dst"]),
                s(&r["rel_type"]),
                s(&r["vt_s"]),
                s(&r["vt_e"]),
                s(&r["applicable"])
            )
        })
        .collect();
    checks.push(Check::new(
        "s1.rows at outage time",
        format!(
            "dbpool:50 USES_DB_POOL [{V0}, {OPEN_END}) applicable=true; \
             replicas:4 HAS_MIN_REPLICAS [1771585200000000, {OPEN_END}) applicable=true; \
             instance:m5.xlarge HAS_INSTANCE_TYPE [{T_CHANGE}, {T_ROLLBACK}) applicable=true"
        ),
        facts.join("; "),
    ));
    let later: Vec<String> = s1["later_facts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{} [{}, {}) applicable={}",
                s(&r["dst"]),
                s(&r["vt_s"]),
                s(&r["vt_e"]),
                s(&r["applicable"])
            )
        })
        .collect();
    checks.push(Check::new(
        "s1.later_facts",
        format!("instance:t3.large [{T_ROLLBACK}, {OPEN_END}) applicable=false"),
        later.join("; "),
    ));
    checks.push(Check::new(
        "s1.node is checkout-api's version",
        "Service Checkout API",
        format!(
            "{} {}",
            s(&s1["node"]["label"]),
            s(&s1["node"]["props"]["name"])
        ),
    ));
    // s2: topk by vt_s, k = 1 (the latest fact starting before the outage).
    let latest = rows
        .iter()
        .max_by_key(|r| r["vt_s"].as_i64().unwrap_or(i64::MIN))
        .cloned()
        .unwrap_or(Value::Null);
    let answer = s(&latest["dst"]);
    checks.push(Check::new(
        "answer: instance type at outage time",
        "instance:m5.xlarge",
        &answer,
    ));
    let change_vt = latest["vt_s"].as_i64().unwrap_or(i64::MAX);
    checks.push(Check::new(
        "preceding change starts before the outage",
        format!("{T_CHANGE} < {T_OUT}"),
        format!(
            "{change_vt} {} {T_OUT}",
            if change_vt < T_OUT { "<" } else { ">=" }
        ),
    ));
    // s3: the audit trail.
    let s3 = call(
        store,
        "version_history",
        json!({"kind": "edge", "window": {"t_a": V0, "t_b": 1_775_001_600_000_000i64},
            "belief": "all", "rel_types": ["HAS_INSTANCE_TYPE"]}),
    )?;
    let s3rows = s3["rows"].as_array().cloned().unwrap_or_default();
    checks.push(Check::new(
        "s3 returns 7 rows",
        "7",
        s3rows.len().to_string(),
    ));
    let nonempty = |v: &Value| v.as_str().is_some_and(|t| !t.trim().is_empty());
    let mut bad = Vec::new();
    let mut audit_rows = Vec::new();
    for r in &s3rows {
        let origin = s(&r["origin"]);
        if matches!(origin.as_str(), "retract" | "correct") && !nonempty(&r["reason"]) {
            bad.push(format!(
                "{} {}: {} without reason",
                s(&r["dst"]),
                s(&r["vt_s"]),
                origin
            ));
        }
        let superseded = r["tt_e"].as_i64() != Some(OPEN_END);
        if superseded
            && (!matches!(s(&r["closed_by"]).as_str(), "retract" | "correct")
                || !nonempty(&r["close_reason"]))
        {
            bad.push(format!(
                "{} {}: superseded without an invalidation reason",
                s(&r["dst"]),
                s(&r["vt_s"])
            ));
        }
        audit_rows.push(AuditRow {
            dst: s(&r["dst"]),
            vt_s: r["vt_s"].as_i64().unwrap_or(0),
            vt_e: r["vt_e"].as_i64().unwrap_or(0),
            tt_s: r["tt_s"].as_i64().unwrap_or(0),
            tt_e: r["tt_e"].as_i64().unwrap_or(0),
            origin,
            reason: s(&r["reason"]),
            closed_by: s(&r["closed_by"]),
            close_reason: s(&r["close_reason"]),
        });
    }
    audit_rows.sort_by_key(|a| (a.tt_s, a.vt_s));
    let superseded = audit_rows.iter().filter(|a| a.tt_e != OPEN_END).count();
    checks.push(Check::new(
        "every invalidation carries a reason",
        "none missing",
        if bad.is_empty() {
            "none missing".to_string()
        } else {
            bad.join("; ")
        },
    ));
    checks.push(Check::new(
        "superseded HAS_INSTANCE_TYPE rows",
        "4",
        superseded.to_string(),
    ));
    // Belief-time variant (§6.3 item 6).
    let pinned = call(
        store,
        "state_at",
        json!({"uid": "checkout-api", "at": T_OUT, "as_of_tt": TT_PAGER,
            "rel_type": "HAS_INSTANCE_TYPE"}),
    )?;
    let prow = &pinned["rows"][0];
    let believed = (s(&prow["dst"]), prow["vt_s"].as_i64().unwrap_or(0));
    checks.push(Check::new(
        "believed during the incident (as_of_tt = pager alert)",
        format!("instance:m5.xlarge from {T_CHANGE_FIRST}, 0 later facts"),
        format!(
            "{} from {}, {} later facts",
            believed.0,
            believed.1,
            pinned["later_facts"].as_array().map_or(0, Vec::len)
        ),
    ));
    // Naive baseline (§6.3 item 7): latest vt_s among current beliefs of the rel_type.
    let naive = naive_latest(store, "checkout-api", "HAS_INSTANCE_TYPE", None)
        .unwrap_or_else(|| "none".into());
    checks.push(Check::new(
        "naive latest-valid_from lookup is wrong (reports t3.large)",
        "instance:t3.large",
        &naive,
    ));
    let preceding = (
        answer.clone(),
        s(&latest["rel_type"]),
        change_vt,
        format!(
            "{} (props {})",
            s(&latest["props"]["change"]),
            canon::to_string(&latest["props"])
        ),
    );
    Ok(IncidentReport {
        store_digest: digest,
        answer,
        preceding_change: preceding,
        believed_during_incident: believed,
        naive_answer: naive,
        audit: audit_rows,
        s1,
        s3,
        checks,
    })
}

/// The naive baseline: among the currently believed facts `(uid, rel_type)` (out-edges), the
/// `dst` of the one with the greatest `vt_s`, ignoring any instant. With `at`, only facts with
/// `vt_s <= at` count (the "valid-time only" baseline, still ignoring `as_of_tt`).
pub fn naive_latest(store: &Store, uid: &str, rel_type: &str, at: Option<i64>) -> Option<String> {
    let snap = store.snapshot();
    snap.edge_history_touching(uid)
        .into_iter()
        .filter(|e| {
            e.src() == uid
                && e.rel_type() == rel_type
                && e.tt_e() == OPEN_END
                && at.is_none_or(|t| e.vt_s() <= t)
        })
        .max_by_key(|e| (e.vt_s(), e.vid()))
        .map(|e| e.dst().to_string())
}

/// Per class: `(correct, total)` for each of the three systems of §5.3.
#[derive(Clone, Debug, Default)]
pub struct RegressionReport {
    /// The digest of the regression store (TV20 when built as published).
    pub store_digest: String,
    /// Class names in table order: before, boundary, after, pinned.
    pub classes: Vec<&'static str>,
    /// `state_at`, naive latest valid_from, valid-time only: per class `(correct, total)`.
    pub state_at: Vec<(u32, u32)>,
    /// The naive latest-valid_from lookup (`naive_latest` without `at`): per class
    /// `(correct, total)`.
    pub naive: Vec<(u32, u32)>,
    /// The valid-time-only lookup (`naive_latest` with `at`): per class `(correct, total)`.
    pub valid_time_only: Vec<(u32, u32)>,
    /// The first few `state_at` failures (should be none).
    pub failures: Vec<String>,
}

impl RegressionReport {
    fn total(v: &[(u32, u32)]) -> (u32, u32) {
        v.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }

    /// `(errors, questions)` of `state_at`.
    pub fn state_at_errors(&self) -> (u32, u32) {
        let (c, t) = Self::total(&self.state_at);
        (t - c, t)
    }

    /// `(errors, questions)` of the naive lookup.
    pub fn naive_errors(&self) -> (u32, u32) {
        let (c, t) = Self::total(&self.naive);
        (t - c, t)
    }

    /// `(errors, questions)` of the valid-time-only lookup.
    pub fn valid_time_errors(&self) -> (u32, u32) {
        let (c, t) = Self::total(&self.valid_time_only);
        (t - c, t)
    }

    /// True when the store digest matches TV20 and `state_at` answers all 117 correctly.
    pub fn ok(&self) -> bool {
        self.store_digest == STATE_REGRESSION_DIGEST && self.state_at_errors() == (0, 117)
    }

    /// The evaluation record.
    pub fn to_json(&self) -> Value {
        let sys = |v: &[(u32, u32)]| {
            let mut m = serde_json::Map::new();
            for (c, (ok, n)) in self.classes.iter().zip(v) {
                m.insert((*c).into(), json!({"correct": ok, "total": n}));
            }
            let (ok, n) = Self::total(v);
            m.insert("total".into(), json!({"correct": ok, "total": n}));
            Value::Object(m)
        };
        json!({
            "store_digest": self.store_digest,
            "store_digest_ok": self.store_digest == STATE_REGRESSION_DIGEST,
            "systems": {"state_at": sys(&self.state_at), "naive_latest_valid_from": sys(&self.naive),
                "valid_time_only": sys(&self.valid_time_only)},
            "failures": self.failures,
            "ok": self.ok(),
        })
    }
}

/// Runs the 117 questions of §5.2 against `state_at` and the two baselines of §5.3.
pub fn eval_state_regression(store: &Store) -> std::result::Result<RegressionReport, String> {
    let mut rep = RegressionReport {
        store_digest: store.digest(),
        classes: vec!["before", "boundary", "after", "pinned"],
        state_at: vec![(0, 0); 4],
        naive: vec![(0, 0); 4],
        valid_time_only: vec![(0, 0); 4],
        failures: Vec::new(),
    };
    let score = |v: &mut Vec<(u32, u32)>, class: usize, ok: bool| {
        v[class].1 += 1;
        if ok {
            v[class].0 += 1;
        }
    };
    for t in transitions() {
        let mut qs: Vec<(usize, i64, Option<i64>, &String)> = vec![
            (0, t.c - DAY, None, &t.old),
            (1, t.c, None, &t.new),
            (2, t.c + DAY, None, &t.new),
        ];
        if t.k % 4 == 3 {
            qs.push((3, t.c + DAY, Some(t.c + t.lag - 1), &t.old));
        }
        for (class, at, as_of, expected) in qs {
            let mut args = json!({"uid": t.svc, "rel_type": t.rel_type, "at": at});
            if let Some(a) = as_of {
                args["as_of_tt"] = json!(a);
            }
            let env = call(store, "state_at", args)?;
            let got = s(&env["rows"][0]["dst"]);
            let ok = &got == expected;
            // Before: later_facts must carry the new fact, not applicable.
            let ok = ok
                && (class != 0
                    || (s(&env["later_facts"][0]["dst"]) == t.new
                        && env["later_facts"][0]["applicable"] == json!(false)));
            if !ok && rep.failures.len() < 10 {
                rep.failures.push(format!(
                    "{} {} at {at}: expected {expected}, got {got}",
                    t.svc, t.rel_type
                ));
            }
            score(&mut rep.state_at, class, ok);
            let naive = naive_latest(store, &t.svc, t.rel_type, None);
            score(&mut rep.naive, class, naive.as_ref() == Some(expected));
            let vto = naive_latest(store, &t.svc, t.rel_type, Some(at));
            score(
                &mut rep.valid_time_only,
                class,
                vto.as_ref() == Some(expected),
            );
        }
    }
    Ok(rep)
}

/// Builds a store at `dir` from an event log text (the directory must not exist or be empty).
pub fn build_store(dir: &std::path::Path, log: &str) -> Result<Store> {
    let mut st = Store::create(dir)?;
    import_text(&mut st, log)?;
    Ok(st)
}
