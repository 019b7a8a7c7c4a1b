//! Plans run through the verifier stack for `tgms demo` (the spec's `plans-and-claims.md` §5–§9):
//! static validation → execution (envelopes, resolved args and the trace stored in the
//! store directory) → the mechanical answer object (D-A1) plus the demo's own claims →
//! claim verification → gating (D-V6).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::{canon, Store};
use tgms_verifier::validate::{validate_static, Options};
use tgms_verifier::{claims, exec};

/// A claim the demo adds to the mechanical answer object, with the verdict it must get.
pub struct ExtraClaim {
    /// The claim object of §7.1 without its `id` (assigned when it is added).
    pub claim: Value,
    /// `supported` for a claim the demo emits as true; `unsupported` for a deliberately
    /// wrong one (which gating must drop).
    pub expect: &'static str,
    /// What the claim says, shown next to its verdict (e.g. `DELIBERATELY WRONG: count + 1`).
    pub note: &'static str,
}

/// One plan of the demo: the plan JSON, the task input uids it is grounded by and a
/// function giving its extra claims from the executed step envelopes.
pub struct DemoPlan {
    /// The plan JSON.
    pub plan: Value,
    /// The task input uids the static verifier's grounding check admits.
    pub input_uids: Vec<String>,
    /// The demo's extra claims, from the executed step envelopes by step id.
    #[allow(clippy::type_complexity)]
    pub extra: Box<dyn Fn(&BTreeMap<String, std::sync::Arc<Value>>) -> Vec<ExtraClaim>>,
}

/// The outcome of one verified run.
pub struct Verified {
    /// The plan JSON.
    pub plan: Value,
    /// The static verifier's violations (a JSON array; empty for a valid plan).
    pub violations: Value,
    /// The plan passed the static verifier; when false, every field below is null or empty.
    pub valid: bool,
    /// The execution trace.
    pub trace: Value,
    /// The mechanical answer object plus the demo's extra claims.
    pub answer_object: Value,
    /// The claim verifier's report on `answer_object`.
    pub verification: Value,
    /// The answer object after gating (unsupported claims dropped).
    pub gated: Value,
    /// The claim verifier's report on `gated`.
    pub gated_verification: Value,
    /// Per claim id: (expected verdict, note) for the demo's own claims; mechanical claims
    /// expect `supported`.
    pub expected: BTreeMap<String, (&'static str, &'static str)>,
}

impl Verified {
    /// (claim, verdict, reason, expected, note) for every claim of the answer object.
    pub fn rows(&self) -> Vec<(Value, String, String, &'static str, &'static str)> {
        let vs = self.verification["claims"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        self.answer_object["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(vs.iter())
            .map(|(c, v)| {
                let id = c["id"].as_str().unwrap_or("").to_string();
                let (e, n) = self
                    .expected
                    .get(&id)
                    .copied()
                    .unwrap_or((claims::SUPPORTED, "mechanical reporter"));
                (
                    c.clone(),
                    v["verdict"].as_str().unwrap_or("").to_string(),
                    v["reason"].as_str().unwrap_or("").to_string(),
                    e,
                    n,
                )
            })
            .collect()
    }

    /// Ids of the claims gating dropped.
    pub fn dropped(&self) -> BTreeSet<String> {
        let kept: BTreeSet<&str> = self.gated["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .collect();
        self.answer_object["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .filter(|id| !kept.contains(id))
            .map(String::from)
            .collect()
    }
}

/// Validates, executes and verifies `dp` on `st` (results and the trace are stored under
/// the store directory, so `tgms view STORE TRACE_ID` finds them).
pub fn run(st: &Store, dp: &DemoPlan) -> anyhow::Result<Verified> {
    let uids: BTreeSet<String> = dp.input_uids.iter().cloned().collect();
    let stats = st.stats();
    let report = validate_static(
        &dp.plan,
        &Options {
            stats: Some(stats),
            task_input_uids: Some(&uids),
            ..Options::default()
        },
    );
    let violations = report.to_json()["violations"].clone();
    let empty = |valid| Verified {
        plan: dp.plan.clone(),
        violations: violations.clone(),
        valid,
        trace: Value::Null,
        answer_object: Value::Null,
        verification: Value::Null,
        gated: Value::Null,
        gated_verification: Value::Null,
        expected: BTreeMap::new(),
    };
    let (true, Some(p)) = (report.valid(), report.plan.as_ref()) else {
        return Ok(empty(false));
    };
    let rs = exec::ResultStore::in_dir(st.dir());
    let ex = exec::execute(p, st.snapshot(), &rs, &exec::ExecOptions::default())
        .map_err(|e| anyhow::anyhow!("{}", canon::to_string(&e.payload())))?;
    let mut ans = claims::mechanical_answer(&p.answer_kind, &p.answer_from, &ex.trace);
    let mut expected = BTreeMap::new();
    if let Some(Value::Array(cs)) = ans.get_mut("claims") {
        for x in (dp.extra)(&ex.envelopes) {
            let id = format!("c{}", cs.len() + 1);
            let mut c = x.claim;
            c["id"] = json!(id);
            expected.insert(id, (x.expect, x.note));
            cs.push(c);
        }
    }
    let ctx = claims::Ctx {
        trace: &ex.trace,
        results: &rs,
        snap: Some(st.snapshot()),
        honor_truncation: true,
    };
    let verification = claims::verify(&ctx, &ans);
    let (gated, gated_verification) = claims::gate(&ctx, &ans);
    Ok(Verified {
        plan: dp.plan.clone(),
        violations,
        valid: true,
        trace: ex.trace,
        answer_object: ans,
        verification,
        gated,
        gated_verification,
        expected,
    })
}
