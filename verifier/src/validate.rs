//! The static plan verifier of `plans-and-claims.md` §5 (`validate_static`): every check in
//! the spec's order with its error code, plus a concrete `repair` in each violation's
//! `details` (legal field names, the resolver step to add, the narrower window, the minimum
//! legal stride, the legal args).

use crate::plan::Plan;
use crate::refpath::{find_refs, ref_of};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use tgms_engine::{canon, Stats, OPEN_END};
use tgms_operators::cost::{ceil_div, Ceilings};
use tgms_operators::registry::{lookup, names};
use tgms_operators::schema;
use tgms_operators::tools::UID_ROW_FIELDS;

/// One violation.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The error code (`E_SCHEMA`, `E_INVALID_ARG`, `E_GROUNDING`, `E_COST`, ...).
    pub code: &'static str,
    /// The human-readable message of the check that failed.
    pub message: String,
    /// The step the violation is about; `None` for plan-level checks.
    pub step_id: Option<String>,
    /// Extra context, usually a `repair` object with the concrete fix.
    pub details: Option<Value>,
}

impl Violation {
    fn new(code: &'static str, message: String, step: Option<&str>) -> Self {
        Violation {
            code,
            message,
            step_id: step.map(String::from),
            details: None,
        }
    }
    fn details(mut self, d: Value) -> Self {
        self.details = Some(d);
        self
    }
    /// `{"code", "message", "step_id"?, "details"?}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code));
        m.insert("message".into(), json!(self.message));
        if let Some(s) = &self.step_id {
            m.insert("step_id".into(), json!(s));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        Value::Object(m)
    }
}

/// The options of `validate_static`.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The store's statistics (extent, counts) for the window, seconds and cost checks;
    /// `None` skips them (the seconds guard is then reported in `notes`).
    pub stats: Option<&'a Stats>,
    /// `None` disables grounding; an empty set rejects every literal uid.
    pub task_input_uids: Option<&'a BTreeSet<String>>,
    /// Check `$ref` paths and a dotted `answer_spec.from` against the output contract of
    /// the operator they point into (§5 6c); `true` by default.
    pub check_output_fields: bool,
    /// The cost ceilings a step's estimated cost must stay under (§5 6i).
    pub ceilings: Ceilings,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            stats: None,
            task_input_uids: None,
            check_output_fields: true,
            ceilings: Ceilings::default(),
        }
    }
}

/// The verifier's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Every violation found, in check order; empty for a valid plan.
    pub violations: Vec<Violation>,
    /// The plan IR when the schema passed.
    pub plan: Option<Plan>,
    /// Checks that could not run, one object each (the seconds guard without store
    /// statistics); shown in [`Report::to_json`] only when there is one.
    pub notes: Vec<Value>,
}

impl Report {
    /// True when there is no violation.
    pub fn valid(&self) -> bool {
        self.violations.is_empty()
    }
    /// `{"valid", "violations"}`.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"valid": self.valid(),
            "violations": self.violations.iter().map(Violation::to_json).collect::<Vec<_>>()});
        if !self.notes.is_empty() {
            v["notes"] = json!(self.notes);
        }
        v
    }
    /// The repair payload given to the planner: `{"error": "E_PLAN_INVALID", "violations"}`.
    pub fn repair_payload(&self) -> Value {
        json!({"error": "E_PLAN_INVALID",
            "violations": self.violations.iter().map(Violation::to_json).collect::<Vec<_>>()})
    }
}

fn int_of(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) if !canon::number_is_float(n) => n.as_str().parse().ok(),
        _ => None,
    }
}

fn contains_ref(v: &Value) -> bool {
    if ref_of(v).is_some() {
        return true;
    }
    match v {
        Value::Array(a) => a.iter().any(contains_ref),
        Value::Object(m) => m.values().any(contains_ref),
        _ => false,
    }
}

/// Literal strings at a uid path relative to an argument (`""`, `"[*]"`, `".uids[*]"`).
fn uid_strings_at<'v>(v: &'v Value, path: &str, out: &mut Vec<&'v str>) {
    if ref_of(v).is_some() {
        return;
    }
    if path.is_empty() {
        match v {
            Value::String(s) => out.push(s),
            // A uid list given where one uid is declared is still checked element-wise.
            Value::Array(a) => a.iter().for_each(|x| uid_strings_at(x, "", out)),
            _ => {}
        }
        return;
    }
    if let Some(rest) = path.strip_prefix("[*]") {
        if let Value::Array(a) = v {
            for x in a {
                uid_strings_at(x, rest, out);
            }
        }
    } else if let Some(rest) = path.strip_prefix('.') {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        if let Some(x) = v.get(&rest[..end]) {
            uid_strings_at(x, &rest[end..], out);
        }
    }
}

/// Literal strings under uid-typed row field names at any depth (compute literal rows).
fn row_uid_strings<'v>(v: &'v Value, under: bool, out: &mut Vec<&'v str>) {
    if ref_of(v).is_some() {
        return;
    }
    match v {
        Value::String(s) if under => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| row_uid_strings(x, under, out)),
        Value::Object(m) => {
            for (k, x) in m {
                row_uid_strings(x, under || UID_ROW_FIELDS.contains(&k.as_str()), out);
            }
        }
        _ => {}
    }
}

/// The literal uids of one step's args, in uid-typed positions derived from the registry
/// (D-V2).
pub fn literal_uids(op: &str, args: &Value) -> Vec<String> {
    let mut out: Vec<&str> = Vec::new();
    if let Some(spec) = lookup(op) {
        for a in &spec.args {
            if let Some(v) = args.get(a.name) {
                for p in a.uid_paths {
                    uid_strings_at(v, p, &mut out);
                }
            }
        }
    }
    if op == "compute" {
        for k in ["input", "other"] {
            if let Some(v) = args.get(k) {
                row_uid_strings(v, false, &mut out);
            }
        }
        let field_is_uid = args
            .get("field")
            .and_then(Value::as_str)
            .is_some_and(|f| UID_ROW_FIELDS.contains(&f));
        if let (true, Some(Value::String(s))) = (field_is_uid, args.get("value")) {
            out.push(s);
        }
    }
    let mut seen = BTreeSet::new();
    out.into_iter()
        .filter(|s| seen.insert(*s))
        .map(String::from)
        .collect()
}

fn schema_violation(msg: String, path: Vec<Value>) -> Violation {
    Violation::new("E_SCHEMA", format!("plan schema: {msg}"), None).details(
        json!({"path": path, "repair": "rewrite the plan to the shape of docs/plans.md#plan-shape"}),
    )
}

/// Runs `validate_static` on a plan given as JSON. It never fails; it only reports.
pub fn validate_static(plan: &Value, opts: &Options<'_>) -> Report {
    let mut out = Vec::new();
    // 1. schema (stop)
    let plan = match Plan::from_json(plan) {
        Ok(p) => p,
        Err(e) => {
            return Report {
                violations: vec![schema_violation(e.message, e.path)],
                plan: None,
                notes: Vec::new(),
            }
        }
    };
    // 2. duplicate ids (stop)
    let mut ids = BTreeSet::new();
    if !plan.steps.iter().all(|s| ids.insert(s.id.as_str())) {
        return Report {
            violations: vec![
                Violation::new("E_SCHEMA", "duplicate step ids".into(), None)
                    .details(json!({"repair": "give every step a distinct id s1, s2, ..."})),
            ],
            plan: Some(plan),
            notes: Vec::new(),
        };
    }
    // 3. cycle
    if plan.has_cycle() {
        out.push(
            Violation::new("E_SCHEMA", "dependency cycle".into(), None).details(
                json!({"repair": "remove a depends_on entry so that the steps form a DAG"}),
            ),
        );
    }
    // 4. unknown dependencies
    for s in &plan.steps {
        for d in &s.depends_on {
            if !ids.contains(d.as_str()) {
                out.push(
                    Violation::new("E_SCHEMA", format!("unknown dependency '{d}'"), Some(&s.id))
                        .details(json!({"repair": {"remove_dependency": d,
                            "known_steps": plan.steps.iter().map(|x| x.id.clone()).collect::<Vec<_>>()}})),
                );
            }
        }
    }
    // 5. statistics: `opts.stats`.
    let extent = opts.stats.and_then(|st| Some((st.vt_min?, st.vt_max?)));
    // 6. per step
    let mut notes = Vec::new();
    for s in &plan.steps {
        check_step(&plan, s, opts, extent, &mut out);
        // Without the store's extent the seconds guard cannot decide; the report says which
        // integer it left to the executor's run-time check.
        let unchecked = lookup(&s.op)
            .zip(s.args.as_object())
            .and_then(|(spec, args)| tgms_operators::seconds_guard::unchecked(spec, args));
        if let (None, Some((path, v))) = (opts.stats, unchecked) {
            notes.push(json!({"check": "seconds_guard", "step_id": s.id, "path": path, "value": v,
                "message": format!("{path} = {v} was not checked for a time in seconds: the validator has no store statistics; the executor checks it against the store at run time (docs/times.md#an-integer-that-looks-like-seconds)")}));
        }
    }
    // 7. answer_spec
    let from = &plan.answer_from;
    match plan.answer_source() {
        None => out.push(
            Violation::new(
                "E_SCHEMA",
                format!("answer_spec.from '{from}' references no step"),
                None,
            )
            .details(json!({"repair": {"known_steps":
                plan.steps.iter().map(|x| x.id.clone()).collect::<Vec<_>>()}})),
        ),
        Some(src) if from.contains('.') && opts.check_output_fields => {
            match crate::refpath::RefPath::parse(from) {
                Err(e) => out.push(Violation::new(
                    "E_SCHEMA",
                    format!("answer_spec.from '{from}': {e}"),
                    None,
                )),
                Ok(rp) => {
                    if let Some(spec) = lookup(&src.op) {
                        if let Err(e) = rp.check_contract(spec) {
                            out.push(
                                Violation::new(
                                    "E_SCHEMA",
                                    format!("answer_spec.from '{from}': {e}"),
                                    None,
                                )
                                .details(e.details()),
                            );
                        }
                    }
                }
            }
        }
        Some(_) => {}
    }
    Report {
        violations: out,
        plan: Some(plan),
        notes,
    }
}

fn check_step(
    plan: &Plan,
    s: &crate::plan::Step,
    opts: &Options<'_>,
    extent: Option<(i64, i64)>,
    out: &mut Vec<Violation>,
) {
    let before = out.len();
    let sid = Some(s.id.as_str());
    // 6a
    let Some(spec) = lookup(&s.op) else {
        out.push(
            Violation::new("E_NOT_FOUND", format!("unknown operator '{}'", s.op), sid)
                .details(json!({"repair": {"known_operators": names()}})),
        );
        return;
    };
    // Time strings (docs/times.md) are resolved to µs first, so every check below sees the
    // integers the executor will pass; a malformed one is reported with the accepted forms.
    let resolved_step;
    let s = match tgms_operators::timeparse::resolve_times(spec, &s.args) {
        Ok(None) => s,
        Ok(Some(args)) => {
            resolved_step = crate::plan::Step { args, ..s.clone() };
            &resolved_step
        }
        Err(e) => {
            out.push(Violation::new(e.code.as_str(), e.message.clone(), sid).details(e.details));
            return;
        }
    };
    // The seconds guard (docs/times.md#an-integer-that-looks-like-seconds), static where the
    // store's extent is known, as the executor applies it at run time.
    if let (Some(st), Some(args)) = (opts.stats, s.args.as_object()) {
        if let Err(e) = tgms_operators::seconds_guard::check(spec, args, st.vt_min, st.vt_max) {
            out.push(Violation::new(e.code.as_str(), e.message.clone(), sid).details(e.details));
            return;
        }
    }
    // 6b, 6c
    let refs = find_refs(&s.args);
    for r in &refs {
        let rp = match &r.parsed {
            Err(e) => {
                out.push(
                    Violation::new("E_SCHEMA", e.to_string(), sid).details(json!({
                        "path": r.path,
                        "repair": "a $ref is sN.field[.field...] with optional [i] or one [*]"})),
                );
                continue;
            }
            Ok(rp) => rp,
        };
        if plan.step(&rp.step).is_none() {
            let known: Vec<&str> = plan.steps.iter().map(|x| x.id.as_str()).collect();
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!(
                        "$ref '{}' targets step '{}', which is not in the plan (steps: {})",
                        rp.raw,
                        rp.step,
                        known.join(", ")
                    ),
                    sid,
                )
                .details(json!({"repair": {"existing_steps": known}})),
            );
            continue;
        }
        // Dependencies are inferred from refs (`Plan::from_json`), so this holds for every
        // plan built there; it still guards IR built by hand.
        if !s.depends_on.contains(&rp.step) {
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!("$ref '{}' targets step not in depends_on", rp.raw),
                    sid,
                )
                .details(json!({"repair": {"add_dependency": rp.step}})),
            );
            continue;
        }
        if !opts.check_output_fields {
            continue;
        }
        let Some(target) = plan.step(&rp.step) else {
            continue;
        };
        if let Some(tspec) = lookup(&target.op) {
            if let Err(e) = rp.check_contract(tspec) {
                out.push(
                    Violation::new("E_SCHEMA", format!("$ref '{}': {e}", rp.raw), sid)
                        .details(e.details()),
                );
            }
        }
    }
    let args = s.args.as_object().cloned().unwrap_or_default();
    let legal: Vec<&str> = spec.args.iter().map(|a| a.name).collect();
    // 6d
    for k in args.keys() {
        if !legal.contains(&k.as_str()) {
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!("unknown arg '{k}' for {}", spec.name),
                    sid,
                )
                .details(json!({"repair": {"remove_arg": k, "legal_args": legal}})),
            );
        }
    }
    // 6e
    for a in spec.args.iter().filter(|a| a.required) {
        if !args.contains_key(a.name) {
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!("missing required arg '{}' for {}", a.name, spec.name),
                    sid,
                )
                .details(json!({"repair": {"add_arg": a.name, "schema": a.schema}})),
            );
        }
    }
    // 6f
    if let Some(w) = args.get("window") {
        if w.is_object() && !contains_ref(w) {
            if let (Some(ta), Some(tb)) = (w.get("t_a"), w.get("t_b")) {
                let text = canon::to_string(w);
                match (int_of(ta), int_of(tb)) {
                    (Some(a), Some(b)) if a < b => {
                        if let Some((lo, hi)) = extent {
                            if b <= lo as i128 || a >= hi as i128 {
                                out.push(
                                    Violation::new(
                                        "E_INVALID_ARG",
                                        format!(
                                            "window {text} does not intersect dataset extent [{lo}, {hi})"
                                        ),
                                        sid,
                                    )
                                    .details(json!({"repair": {"window": {"t_a": lo, "t_b": hi}},
                                        "extent": {"vt_min": lo, "vt_max": hi}})),
                                );
                            }
                        }
                    }
                    (a, b) => {
                        let repair = match (a, b) {
                            (Some(a), Some(b)) if a > b => json!({"window": {"t_a": b, "t_b": a}}),
                            (Some(a), Some(_)) => json!({"window": {"t_a": a, "t_b": a + 1}}),
                            _ => json!("give t_a and t_b as integers with t_a < t_b"),
                        };
                        out.push(
                            Violation::new(
                                "E_INVALID_ARG",
                                format!("window requires t_a < t_b, got {text}"),
                                sid,
                            )
                            .details(json!({ "repair": repair })),
                        );
                    }
                }
            }
        }
    }
    if let Some(d) = args.get("delta").and_then(int_of) {
        if d <= 0 {
            out.push(
                Violation::new("E_INVALID_ARG", "delta must be > 0".into(), sid)
                    .details(json!({"repair": {"delta": 1, "minimum": 1}})),
            );
        }
    }
    if let Some(t) = args.get("as_of_tt").and_then(int_of) {
        if !(0..=OPEN_END as i128).contains(&t) {
            let fix = if t < 0 { 0 } else { OPEN_END };
            out.push(
                Violation::new("E_INVALID_ARG", "as_of_tt out of range".into(), sid)
                    .details(json!({"repair": {"as_of_tt": fix, "range": [0, OPEN_END]}})),
            );
        }
    }
    if s.op == "diff_snapshots" {
        if let (Some(a), Some(b)) = (
            args.get("t1").and_then(int_of),
            args.get("t2").and_then(int_of),
        ) {
            if a == b {
                out.push(
                    Violation::new(
                        "E_INVALID_ARG",
                        "diff_snapshots with t1 == t2 is vacuous".into(),
                        sid,
                    )
                    .details(json!({"repair": "choose t2 != t1 (the instants to compare)"})),
                );
            }
        }
    }
    // Bucket cap (operators.md §8): the minimum legal stride for a literal window.
    if spec.args.iter().any(|a| a.name == "stride") {
        out.extend(bucket_violation(&s.args, sid));
    }
    let no_refs = refs.is_empty();
    // 6g: literal args against the schema (D-V7), then the semantic validators.
    let mut prepared = None;
    if out.len() == before && no_refs {
        let order: Vec<&str> = spec.args.iter().map(|a| a.name).collect();
        let mut vs = Vec::new();
        schema::validate(
            &spec.arg_schema(),
            &s.args,
            &mut Vec::new(),
            Some(&order),
            &mut vs,
        );
        if let Some(v) = schema::first_violation(vs) {
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!("invalid args for {}: {}", spec.name, v.message),
                    sid,
                )
                .details(json!({"path": v.path, "repair": {"schema": spec.arg_schema()}})),
            );
        } else {
            match tgms_operators::pipeline::prepare(&s.op, &s.args) {
                Ok(p) => prepared = Some(p),
                Err(e) => out.push(
                    Violation::new(e.code.as_str(), e.message.clone(), sid)
                        .details(json!({"repair": e.details})),
                ),
            }
        }
    } else if out.len() == before {
        check_args_with_refs(plan, spec, s, opts, out);
    }
    // 6h grounding
    if let Some(set) = opts.task_input_uids {
        for u in literal_uids(&s.op, &s.args) {
            if !set.contains(&u) {
                out.push(
                    Violation::new(
                        "E_GROUNDING",
                        format!("literal uid '{u}' not in task input; obtain uids via resolve_entities and a $ref"),
                        sid,
                    )
                    .details(json!({"repair": {
                        "add_step": {"op": "resolve_entities", "args": {"query": u}},
                        "then_use": {"$ref": "<new step id>.rows[0].uid"},
                        "task_input_uids": set}})),
                );
            }
        }
    }
    // 6i cost with the runtime estimator and ceilings (D-V3)
    if let (Some(stats), Some((spec, args)), Some(cost)) = (opts.stats, prepared, spec.cost) {
        let est = cost(&args, stats).with_time(spec.coeff, opts.ceilings.time_coeff_scale);
        if let Err(e) = opts.ceilings.check(spec.name, &est) {
            let estj = est.to_json();
            let over: Map<String, Value> = e.details["ceilings"]
                .as_object()
                .map(|m| m.keys().map(|k| (k.clone(), estj[k].clone())).collect())
                .unwrap_or_default();
            let mut details = e.details.clone();
            if let (Some(w), Some(t), Some(c)) = (
                args.get("window").and_then(|w| w.as_object()),
                est.time_est_ms,
                opts.ceilings.time_est_ms,
            ) {
                if let (Some(a), Some(b)) = (
                    w.get("t_a").and_then(Value::as_i64),
                    w.get("t_b").and_then(Value::as_i64),
                ) {
                    if t > 0 {
                        let frac = (c as f64 / t as f64).min(1.0);
                        let nb = a + (((b - a) as f64) * frac).floor().max(1.0) as i64;
                        details["repair"] = json!({"window": {"t_a": a, "t_b": nb}});
                    }
                }
            }
            tgms_operators::ops::count_temporal_motifs_sample::add_cost_repair(
                spec.name,
                &args,
                stats,
                &mut details,
            );
            out.push(
                Violation::new(
                    "E_COST",
                    format!(
                        "estimated cost for {} exceeds ceilings: {}",
                        spec.name,
                        canon::to_string(&Value::Object(over))
                    ),
                    sid,
                )
                .details(details),
            );
        }
    }
}

/// 6g for args that contain refs (issue 21 item 7): the ref-free top-level args against
/// their schemas (so a literal `k` of 1150 fails here, not at run time), and every arg that
/// is one whole ref against its schema's `type`, through the declared output type of the
/// referenced field (a list where a number is expected fails; `any` passes).
fn check_args_with_refs(
    plan: &Plan,
    spec: &tgms_operators::OpSpec,
    s: &crate::plan::Step,
    opts: &Options<'_>,
    out: &mut Vec<Violation>,
) {
    let Some(args) = s.args.as_object() else {
        return;
    };
    let sid = Some(s.id.as_str());
    let literal: Map<String, Value> = args
        .iter()
        .filter(|(_, v)| !contains_ref(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut arg_schema = spec.arg_schema();
    if let Some(m) = arg_schema.as_object_mut() {
        m.remove("required");
    }
    let order: Vec<&str> = spec.args.iter().map(|a| a.name).collect();
    let mut vs = Vec::new();
    schema::validate(
        &arg_schema,
        &Value::Object(literal),
        &mut Vec::new(),
        Some(&order),
        &mut vs,
    );
    if let Some(v) = schema::first_violation(vs) {
        let arg = v.path.first().and_then(Value::as_str).unwrap_or_default();
        let legal = spec
            .args
            .iter()
            .find(|a| a.name == arg)
            .map(|a| a.published_schema())
            .unwrap_or(Value::Null);
        out.push(
            Violation::new(
                "E_SCHEMA",
                format!("invalid args for {}: {}", spec.name, v.message),
                sid,
            )
            .details(json!({"path": v.path, "repair": {"arg": arg, "schema": legal}})),
        );
        return;
    }
    if !opts.check_output_fields {
        return;
    }
    for a in &spec.args {
        let Some(Ok(rp)) = args
            .get(a.name)
            .and_then(ref_of)
            .map(crate::refpath::parse_ref_value)
        else {
            continue;
        };
        let Some(ty) = plan
            .step(&rp.step)
            .and_then(|t| lookup(&t.op))
            .and_then(|tspec| rp.contract_type(tspec))
        else {
            continue;
        };
        let takes: Vec<&str> = match a.schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if !contract_fits(&ty, &takes) {
            out.push(
                Violation::new(
                    "E_SCHEMA",
                    format!(
                        "invalid args for {}: $ref '{}' yields {} but '{}' takes {}",
                        spec.name,
                        rp.raw,
                        contract_name(&ty),
                        a.name,
                        takes.join(" or ")
                    ),
                    sid,
                )
                .details(json!({"path": [a.name], "repair": {"arg": a.name,
                    "schema": a.published_schema()}})),
            );
        }
    }
}

/// Whether values of the declared type can satisfy a schema `type` list (`null` aside: a
/// nullable type fits when its non-null part does).
fn contract_fits(c: &tgms_operators::contract::Contract, takes: &[&str]) -> bool {
    use tgms_operators::contract::Contract as C;
    let has = |t: &str| takes.contains(&t);
    match c {
        C::Nullable(t) => contract_fits(t, takes),
        C::Any => true,
        C::Int => has("integer") || has("number"),
        // A declared float or number may hold an integral value only by accident.
        C::Float | C::Number => has("number"),
        C::Bool => has("boolean"),
        C::Str | C::Uid | C::Hex => has("string"),
        C::List(_) => has("array"),
        C::Obj(_) | C::OpenObj => has("object"),
    }
}

/// A short name of a declared type for messages.
fn contract_name(c: &tgms_operators::contract::Contract) -> String {
    use tgms_operators::contract::Contract as C;
    match c {
        C::Int => "an int".into(),
        C::Float => "a float".into(),
        C::Number => "a number".into(),
        C::Bool => "a bool".into(),
        C::Str | C::Uid | C::Hex => "a string".into(),
        C::Any => "any value".into(),
        C::Nullable(t) => format!("{} or null", contract_name(t)),
        C::List(_) => "a list".into(),
        C::Obj(_) | C::OpenObj => "an object".into(),
    }
}

/// The bucket-cap check of literal `window` + `stride` args (`operators.md` §8): more than
/// `MAX_BUCKETS` buckets → `E_LIMIT` with the minimum legal stride as the repair.
pub fn bucket_violation(args: &Value, step_id: Option<&str>) -> Option<Violation> {
    let w = args.get("window")?;
    let st = args.get("stride").and_then(int_of)?;
    let (a, b) = (
        w.get("t_a").and_then(int_of)?,
        w.get("t_b").and_then(int_of)?,
    );
    if a >= b || st < 1 || b - a > i64::MAX as i128 || st > i64::MAX as i128 {
        return None;
    }
    let span = (b - a) as i64;
    let n = ceil_div(span, st as i64);
    let cap = tgms_operators::ops::MAX_BUCKETS;
    if n <= cap {
        return None;
    }
    let min = ceil_div(span, cap);
    Some(
        Violation::new(
            "E_LIMIT",
            format!("bucket count {n} exceeds cap {cap}; use stride >= {min} for this window"),
            step_id,
        )
        .details(json!({"repair": {"stride": min}})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_legal_stride_repair() {
        let v = bucket_violation(
            &json!({"window": {"t_a": 0, "t_b": 100000}, "stride": 1}),
            Some("s1"),
        )
        .unwrap();
        assert_eq!(v.code, "E_LIMIT");
        assert_eq!(
            v.message,
            "bucket count 100000 exceeds cap 2000; use stride >= 50 for this window"
        );
        assert_eq!(v.details.unwrap()["repair"]["stride"], 50);
        assert!(bucket_violation(
            &json!({"window": {"t_a": 0, "t_b": 100000}, "stride": 50}),
            None
        )
        .is_none());
        assert!(
            bucket_violation(&json!({"window": {"$ref": "s1.x"}, "stride": 1}), None).is_none()
        );
    }

    #[test]
    fn literal_uids_from_registry_positions() {
        assert_eq!(
            literal_uids("entity_history", &json!({"uid": "x"})),
            vec!["x"]
        );
        assert_eq!(
            literal_uids(
                "snapshot_subgraph",
                &json!({"seeds": ["a", {"$ref": "s1.rows[0].uid"}, "b"]})
            ),
            vec!["a", "b"]
        );
        assert_eq!(
            literal_uids(
                "compute",
                &json!({"input": [{"uid": "u", "n": "v"}], "field": "src", "value": "w"})
            ),
            vec!["u", "w"]
        );
    }
}
