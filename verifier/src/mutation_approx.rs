//! The mutation class `approximate_as_exact` of the verifier mutation experiment
//! (`mutations.rs`, `docs/approximate.md`): a clean mechanical answer to a sample-mode motif
//! count ("about N (95% interval a–b)") is restated as exact — its count claim marked
//! `complete: true`, "about" replaced by "exactly", the typed answer marked complete — and
//! the mutant is detected when the verifier no longer backs every claim.

use crate::claims::{mechanical_answer, verify, Ctx};
use crate::exec::{execute, ExecOptions, ResultStore};
use crate::plan::Plan;
use serde_json::{json, Value};
use tgms_engine::Snapshot;

/// (motif, answer path) of the sample-mode plans the class mutates.
const TARGETS: [(&str, &str); 6] = [
    ("all", "s1.count"),
    ("all", "s1.counts.M_5_1"),
    ("M_triangle_cyclic", "s1.count"),
    ("M_2node_pingpong", "s1.count"),
    ("M_path_3", "s1.count"),
    ("M_star_out_3", "s1.count"),
];

/// The sample-mode plans of the class over `snap` (empty without an extent).
pub fn plans(snap: Snapshot<'_>, seeds: u64) -> Vec<Value> {
    let st = snap.stats();
    let (Some(lo), Some(hi)) = (st.vt_min, st.vt_max) else {
        return vec![];
    };
    let delta = ((hi - lo) / 50).max(1);
    let mut out = Vec::new();
    for seed in 0..seeds {
        for (motif, from) in TARGETS {
            out.push(json!({"plan_id": format!("approx-{motif}-{seed}"),
                "steps": [{"id": "s1", "op": "count_temporal_motifs", "args": {"motif": motif,
                    "delta": delta, "window": {"t_a": lo, "t_b": hi + 1}, "mode": "sample",
                    "seed": seed}}],
                "answer_spec": {"kind": "count", "from": from}}));
        }
    }
    out
}

/// Runs up to `max` mutants: (cases, detected), verified with truncation taint honoured or
/// not (the `taint_ignored` ablation of the mutation table).
pub fn approximate_as_exact(
    snap: Snapshot<'_>,
    rs: &ResultStore,
    max: usize,
    honor_truncation: bool,
) -> (usize, usize) {
    let (mut cases, mut detected) = (0, 0);
    let seeds = (max / TARGETS.len() + 1).min(20) as u64;
    for p in plans(snap, seeds) {
        if cases >= max {
            break;
        }
        let Ok(plan) = Plan::from_json(&p) else {
            continue;
        };
        let Ok(ex) = execute(&plan, snap, rs, &ExecOptions::default()) else {
            continue;
        };
        let trace = ex.trace;
        if trace["ok"] != Value::Bool(true) || trace.get("answer_interval").is_none() {
            continue;
        }
        let ctx = Ctx {
            trace: &trace,
            results: rs,
            snap: Some(snap),
            honor_truncation,
        };
        let clean = mechanical_answer(&plan.answer_kind, &plan.answer_from, &trace);
        if rejected(&verify(&ctx, &clean)) {
            continue;
        }
        let mut m = clean.clone();
        m["claims"][0]["complete"] = json!(true);
        if let Some(t) = m["text"].as_str() {
            m["text"] = json!(t.replacen("about ", "exactly ", 1));
        }
        if m.get("answer").is_some() {
            m["answer"]["complete"] = json!(true);
        }
        cases += 1;
        if rejected(&verify(&ctx, &m)) {
            detected += 1;
        }
    }
    (cases, detected)
}

fn rejected(out: &Value) -> bool {
    out["claims"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["verdict"] == "unsupported" || c["verdict"] == "unverifiable")
    })
}
