//! The belief-pinned part of the extended mutation pool (`mutations.rs`, `docs/eval.md`): clean
//! answers pinned just before a correction whose value differs from the current belief
//! state, the cases of `wrong_belief_state`. Everything is read from real executed steps:
//!
//! - the corrections: `version_history` of the superseded node and edge versions gives each
//!   closing transaction time (`tt_e`) and the uids it touched;
//! - the plans about them: node-version counts over the whole store and over quarters of its
//!   valid-time extent, and per corrected uid its history, its versions and the end of its
//!   first version, beside every pool plan whose arguments name a corrected uid;
//! - the variants: each such plan pinned (`as_of_tt` on every step that takes it) just
//!   before each correction it can see (every correction for the whole-store plans, the
//!   corrections of its own uids otherwise), kept when its answer differs from the current
//!   one, once per (plan, pinned answer).

use crate::exec::{execute, ExecOptions, ResultStore};
use crate::plan::Plan;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::Snapshot;
use tgms_operators::registry::lookup;

/// At most this many pinned variants are executed (each runs once for the pool and once more,
/// unpinned, per configuration of the table).
pub const MAX_PINNED_RUNS: usize = 400;

/// At most this many pins per plan (a store corrected in more batches is sampled evenly).
pub const MAX_PINS: usize = 16;

/// The corrections of a store: for each closing transaction time, the uids whose versions it
/// closed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Corrections {
    /// Closing transaction time (µs) → the uids whose versions that transaction closed.
    pub uids_by_tt: BTreeMap<i64, BTreeSet<String>>,
}

impl Corrections {
    /// Every corrected uid.
    pub fn uids(&self) -> BTreeSet<&str> {
        self.uids_by_tt
            .values()
            .flatten()
            .map(String::as_str)
            .collect()
    }
    /// The pins (`tt_e − 1`, the belief state just before the correction) of the corrections
    /// touching any uid of `uids`; every pin when `uids` is `None`.
    /// At most [`MAX_PINS`], spread evenly over them.
    pub fn pins(&self, uids: Option<&BTreeSet<&str>>) -> Vec<i64> {
        let all: Vec<i64> = self
            .uids_by_tt
            .iter()
            .filter(|(_, us)| uids.is_none_or(|want| us.iter().any(|u| want.contains(u.as_str()))))
            .map(|(tt, _)| tt - 1)
            .collect();
        if all.len() <= MAX_PINS {
            return all;
        }
        (0..MAX_PINS)
            .map(|k| all[k * all.len() / MAX_PINS])
            .collect()
    }
}

fn run_one(snap: Snapshot<'_>, rs: &ResultStore, p: &Value) -> Option<Value> {
    let plan = Plan::from_json(p).ok()?;
    let ex = execute(&plan, snap, rs, &ExecOptions::default()).ok()?;
    let digest = crate::exec::record(&ex.trace, "s1")?["result_digest"].as_str()?;
    rs.envelope(digest)
}

/// Reads the corrections of `snap` from two real `version_history` calls (superseded node
/// and edge versions, up to 10000 each).
pub fn corrections(snap: Snapshot<'_>, rs: &ResultStore) -> Corrections {
    let mut out = Corrections::default();
    for kind in ["node", "edge"] {
        let p = json!({"plan_id": format!("corrections-{kind}"), "steps": [{"id": "s1",
            "op": "version_history", "args": {"kind": kind, "belief": "superseded", "limit": 10000}}],
            "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
        let Some(env) = run_one(snap, rs, &p) else {
            continue;
        };
        for row in env["rows"].as_array().into_iter().flatten() {
            let Some(tt_e) = row["tt_e"].as_i64() else {
                continue;
            };
            let set = out.uids_by_tt.entry(tt_e).or_default();
            for k in ["uid", "src", "dst"] {
                if let Some(u) = row[k].as_str() {
                    set.insert(u.to_string());
                }
            }
        }
    }
    out
}

fn count_plan(id: String, op: &str, args: Value) -> Value {
    json!({"plan_id": id, "steps": [{"id": "s1", "op": op, "args": args}],
        "answer_spec": {"kind": "count", "from": "s1.rows_total"}})
}

/// The whole-store plans about corrections, at the current belief state: node-version counts
/// over the whole store and over each quarter of `[vt_min, vt_max]` (current, superseded and
/// all versions). Empty for a store without corrections.
pub fn store_plans(c: &Corrections, snap: Snapshot<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    if c.uids_by_tt.is_empty() {
        return out;
    }
    let st = snap.stats();
    let mut windows = vec![Value::Null];
    if let (Some(lo), Some(hi)) = (st.vt_min, st.vt_max) {
        let quarter = ((hi - lo) / 4).max(1);
        for k in 0..4 {
            let t_b = if k == 3 {
                hi + 1
            } else {
                lo + (k + 1) * quarter
            };
            windows.push(json!({"t_a": lo + k * quarter, "t_b": t_b}));
        }
    }
    for (w, window) in windows.iter().enumerate() {
        for belief in ["current", "superseded", "all"] {
            let mut args = json!({"kind": "node", "belief": belief, "limit": 10000});
            if !window.is_null() {
                args["window"] = window.clone();
            }
            out.push(count_plan(
                format!("belief-versions-{belief}-w{w}"),
                "version_history",
                args,
            ));
        }
    }
    out
}

/// The plans about each corrected uid, at the current belief state: the count of its history
/// and of its current and of all its versions, and the end of its first believed version.
pub fn uid_plans(c: &Corrections) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, u) in c.uids().into_iter().enumerate() {
        out.push(count_plan(
            format!("belief-history-{i}"),
            "entity_history",
            json!({"uid": u, "limit": 10000}),
        ));
        for belief in ["current", "all"] {
            out.push(count_plan(
                format!("belief-uid-versions-{belief}-{i}"),
                "version_history",
                json!({"uid": u, "belief": belief, "limit": 10000}),
            ));
        }
        out.push(json!({"plan_id": format!("belief-first-end-{i}"),
            "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": u, "limit": 10000}}],
            "answer_spec": {"kind": "value", "from": "s1.rows[0].vt_e"}}));
    }
    out
}

/// Every string leaf of `v`, at any depth.
pub(crate) fn string_leaves<'v>(v: &'v Value, out: &mut BTreeSet<&'v str>) {
    match v {
        Value::String(s) => {
            out.insert(s);
        }
        Value::Array(a) => a.iter().for_each(|x| string_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| string_leaves(x, out)),
        _ => {}
    }
}

/// Whether a step of `plan` already pins a belief state.
pub fn is_pinned(plan: &Value) -> bool {
    plan["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|s| s["args"].get("as_of_tt").is_some())
}

/// The pins of `plan` (see the module doc): every correction's for a `whole_store` plan (one
/// of [`store_plans`]), else those of the corrected uids its arguments name. `None` when it
/// names none, is already pinned, runs an expensive enumeration, or has a step other than
/// `compute` whose operator takes no `as_of_tt`.
pub fn pins_of(plan: &Value, c: &Corrections, whole_store: bool) -> Option<Vec<i64>> {
    if is_pinned(plan) {
        return None;
    }
    let steps = plan["steps"].as_array()?;
    for s in steps {
        let op = s["op"].as_str().and_then(lookup)?;
        if op.name != "compute" && !op.args.iter().any(|a| a.name == "as_of_tt") {
            return None;
        }
        if crate::mutation_pool::EXPENSIVE.contains(&op.name) {
            return None;
        }
    }
    if whole_store {
        return Some(c.pins(None));
    }
    let corrected = c.uids();
    let mut named = BTreeSet::new();
    for s in steps {
        string_leaves(&s["args"], &mut named);
    }
    let touched: BTreeSet<&str> = named.intersection(&corrected).copied().collect();
    (!touched.is_empty()).then(|| c.pins(Some(&touched)))
}

/// `plan` pinned at `tt`: `as_of_tt` on every step whose operator takes it.
pub fn pinned(plan: &Value, tt: i64) -> Value {
    let mut p = plan.clone();
    p["plan_id"] = json!(format!(
        "{}@tt{tt}",
        plan["plan_id"].as_str().unwrap_or("plan")
    ));
    for st in p["steps"].as_array_mut().into_iter().flatten() {
        let takes = st["op"]
            .as_str()
            .and_then(lookup)
            .is_some_and(|op| op.args.iter().any(|a| a.name == "as_of_tt"));
        if let (true, Some(m)) = (takes, st["args"].as_object_mut()) {
            m.insert("as_of_tt".into(), json!(tt));
        }
    }
    p
}
