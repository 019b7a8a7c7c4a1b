//! The derived part of the extended mutation pool (`mutations.rs`, `docs/eval.md`): more
//! clean answers drawn from the real executed traces of the base pool, never from made-up
//! traces. Two kinds:
//!
//! - **entity answers**: every uid-bearing list that an ok step of a pool trace returned
//!   becomes an `entity_set` answer of that same trace (`answer_spec.from` = the list), so
//!   the entity classes get one case per distinct list instead of one per entity-set task;
//! - **count plans**: every list output (paged `rows` or a capped list such as `nodes`,
//!   `edges`, `later_facts`) of an ok step without `$ref` arguments whose total is above 3
//!   becomes a two-step plan "that step, then `compute count` of that list", which the
//!   executor runs like any plan; these are the cases of `truncated_count`.

use crate::claims::uids_of_list;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms_engine::canon;
use tgms_operators::registry::lookup;

use crate::exec::ResultStore;

/// Operators too expensive to run again for each derived count plan (motif and path
/// enumerations take seconds per call on a real dataset).
pub const EXPENSIVE: [&str; 5] = [
    "find_temporal_motif_instances",
    "count_temporal_motifs",
    "match_pattern",
    "temporal_paths",
    "co_active",
];

/// At most this many derived count plans (each is executed for the pool and again, paged,
/// for every configuration of the table).
pub const MAX_COUNT_PLANS: usize = 160;

/// A derived entity answer: the plan (its `answer_spec` re-pointed at the list) and the trace
/// with that list as its answer.
pub struct EntityAnswer {
    /// The plan JSON, its `answer_spec` pointing at the entity list.
    pub plan: Value,
    /// The plan's trace JSON, with that list as its `answer`.
    pub trace: Value,
}

fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
        Value::Array(a) => a.iter().any(has_ref),
        _ => false,
    }
}

/// The entity answers of one executed trace: one per ok step and uid-bearing list output
/// (at least one uid), skipping the plan's own answer and lists already seen in `seen`
/// (keyed by the trace's result digests and the list, so the same list in the same
/// context — equal steps of different plans — counts once).
pub fn entity_answers(
    plan: &Value,
    trace: &Value,
    rs: &ResultStore,
    seen: &mut BTreeSet<(String, String)>,
) -> Vec<EntityAnswer> {
    let mut out = Vec::new();
    let own = plan["answer_spec"]["from"].as_str().unwrap_or_default();
    let context: Vec<&str> = trace["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["result_digest"].as_str())
        .collect();
    let context = context.join(",");
    for r in trace["steps"].as_array().into_iter().flatten() {
        if r["status"] != "ok" {
            continue;
        }
        let (Some(op), Some(digest), Some(sid)) = (
            r["op"].as_str().and_then(lookup),
            r["result_digest"].as_str(),
            r["step_id"].as_str(),
        ) else {
            continue;
        };
        let Some(env) = rs.envelope(digest) else {
            continue;
        };
        for name in op.output_names() {
            let Some(decl) = op.output(name) else {
                continue;
            };
            let (Some(list), Some(Value::Array(vals))) = (&decl.list, env.get(name)) else {
                continue;
            };
            let from = format!("{sid}.{name}");
            if from == own || uids_of_list(vals).is_empty() {
                continue;
            }
            if !seen.insert((context.clone(), format!("{digest}.{name}"))) {
                continue;
            }
            let complete =
                env.get(&list.total_field).and_then(Value::as_i64) == Some(vals.len() as i64);
            let mut t = trace.clone();
            t["answer"] = Value::Array(vals.clone());
            t["answer_complete"] = json!(complete);
            let mut p = plan.clone();
            p["plan_id"] = json!(format!(
                "{}~{from}",
                plan["plan_id"].as_str().unwrap_or("plan")
            ));
            p["answer_spec"] = json!({"kind": "entity_set", "from": from});
            out.push(EntityAnswer { plan: p, trace: t });
        }
    }
    out
}

/// The count plans of one executed trace (see the module doc), skipping (step, list) pairs
/// whose canonical `(op, args, list)` is in `seen`.
pub fn count_plans(
    plan: &Value,
    trace: &Value,
    rs: &ResultStore,
    seen: &mut BTreeSet<String>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for st in plan["steps"].as_array().into_iter().flatten() {
        let (Some(sid), Some(op)) = (st["id"].as_str(), st["op"].as_str()) else {
            continue;
        };
        if EXPENSIVE.contains(&op) || op == "compute" || has_ref(&st["args"]) {
            continue;
        }
        let (Some(spec), Some(rec)) = (lookup(op), crate::exec::record(trace, sid)) else {
            continue;
        };
        if rec["status"] != "ok" {
            continue;
        }
        let Some(env) = rec["result_digest"].as_str().and_then(|d| rs.envelope(d)) else {
            continue;
        };
        for name in spec.output_names() {
            let Some(list) = spec.output(name).and_then(|d| d.list.as_ref()) else {
                continue;
            };
            let total = env.get(&list.total_field).and_then(Value::as_i64);
            if !env.get(name).is_some_and(Value::is_array) || total.is_none_or(|n| n <= 3) {
                continue;
            }
            let mut args = st["args"].clone();
            if let Some(m) = args.as_object_mut() {
                m.insert("limit".into(), json!(10000));
            }
            let key = canon::to_string(&json!([op, args, name]));
            if !seen.insert(key) {
                continue;
            }
            out.push(json!({"plan_id": format!("derived-count-{}", seen.len()),
                "steps": [{"id": "s1", "op": op, "args": args},
                    {"id": "s2", "op": "compute", "args": {"fn": "count", "input": {"$ref": format!("s1.{name}")}},
                     "depends_on": ["s1"]}],
                "answer_spec": {"kind": "count", "from": "s2.value"}}));
        }
    }
    out
}
