//! `tgms eval suite` (`evaluation.md` §3.1–§3.8): the generation context, correction probes
//! written with explicit transaction times, the T1/T3/T4 families from the templates with
//! gold from executing each oracle plan, degenerate filtering, T2 planted tasks, the split and
//! the suite file. Deterministic: the same store, dataset and seed give the same bytes.

use super::templates::{self, Context, Instance};
use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::{canon, Op, Ref, Snapshot, Store, OPEN_END};
use tgms_verifier::claims::mechanical_answer;
use tgms_verifier::exec::{execute, ExecOptions, ResultStore};
use tgms_verifier::mutations::Rng;
use tgms_verifier::validate::{validate_static, Options};

/// The note that marks a correction probe in the log (§3.5).
pub const PROBE_NOTE: &str = "correction probe";
/// Probes written per suite (§3.5).
pub const N_PROBES: usize = 8;
/// Families and their wanted task counts, in generation order (§3.3).
pub const FAMILIES: [(&str, usize); 3] = [("t1", 60), ("t3", 24), ("t4", 16)];
/// The explicit transaction time of a probe is this long after the store's last batch.
pub const PROBE_TT_STEP_US: i64 = 1_000_000;

/// What a suite is generated for.
#[derive(Clone, Debug)]
pub struct SuiteArgs {
    /// The dataset name written into every task (and used in task ids), e.g. `CollegeMsg`.
    pub dataset: String,
    /// The seed of every random draw (probes, sampling, split); same seed, same suite.
    pub seed: u64,
    /// A planted-pattern manifest (§3.6), for the T2 family.
    pub planted: Option<Value>,
}

/// `build_context(stream)` of §3.2 over the current belief state.
pub fn build_context(snap: Snapshot<'_>, rng: &mut Rng) -> anyhow::Result<Context> {
    let st = snap.stats();
    let (Some(t0), Some(t1)) = (st.vt_min, st.vt_max) else {
        bail!("the store holds no versions; ingest a dataset first (tgms ingest STORE --dataset …)")
    };
    // Degree = currently believed edge versions with the entity as src plus as dst.
    let mut degree: BTreeMap<String, u64> = BTreeMap::new();
    for e in snap.all_edges() {
        if e.tt_e() == OPEN_END {
            *degree.entry(e.src().to_string()).or_default() += 1;
            *degree.entry(e.dst().to_string()).or_default() += 1;
        }
    }
    let active: Vec<String> = degree
        .iter()
        .filter(|(_, d)| **d > 0)
        .map(|(u, _)| u.clone())
        .collect();
    let mut ranked: Vec<(&String, u64)> = degree.iter().map(|(u, d)| (u, *d)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = ranked.iter().take(50).map(|(u, _)| (*u).clone()).collect();
    let extra = rng.sample(&active, active.len().min(100 - top.len()));
    let mut seen = BTreeSet::new();
    let uids: Vec<String> = top
        .into_iter()
        .chain(extra)
        .filter(|u| seen.insert(u.clone()))
        .collect();
    if uids.is_empty() {
        bail!("the store has no entity with a believed edge; the templates need edges")
    }
    Ok(Context {
        t0_us: t0,
        t1_us: t1,
        span_us: t1 - t0,
        uids,
    })
}

/// One correction probe: the corrected uid and the transaction time just before it.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The uid whose fact the probe corrects.
    pub uid: String,
    /// The transaction time (µs) of the last batch before the correction: asking as of it
    /// sees the uncorrected belief.
    pub tt_before: i64,
}

/// The probes already in the store's log (`correct` ops whose props carry the probe note),
/// each with the tt of the batch before it.
pub fn recover_probes(store: &Store) -> anyhow::Result<Vec<Probe>> {
    let mut out = Vec::new();
    let mut prev_tt = 0i64;
    tgms_engine::store::read_log(store.dir(), |b| {
        for op in &b.ops {
            if let Op::Correct(c) = op {
                let note = canon::parse(&c.props)
                    .ok()
                    .and_then(|p| p.get("note").cloned());
                if note.as_ref().and_then(Value::as_str) == Some(PROBE_NOTE) {
                    if let Ref::Node { uid } = &c.target {
                        out.push(Probe {
                            uid: uid.clone(),
                            tt_before: prev_tt,
                        });
                    }
                }
            }
        }
        prev_tt = b.tt;
        Ok(())
    })
    .context("reading the store's log for earlier correction probes")?;
    Ok(out)
}

/// `inject_corrections(stream, n = 8)` of §3.5: recovered from the log when present, else
/// written, one batch each, at explicit transaction times (`last_tt + 1 s`).
pub fn correction_probes(
    store: &mut Store,
    ctx: &Context,
    rng: &mut Rng,
) -> anyhow::Result<Vec<Probe>> {
    let found = recover_probes(store)?;
    if !found.is_empty() {
        return Ok(found);
    }
    let picked = rng.sample(&ctx.uids, ctx.uids.len().min(N_PROBES));
    let mut planned = Vec::new();
    {
        let snap = store.snapshot();
        for u in picked {
            let Some(id) = snap.uid_id(&u) else { continue };
            let mut v: Vec<(i64, String)> = snap
                .node_versions_of_uid(id, OPEN_END)
                .map(|n| (n.vt_s(), n.vid()))
                .collect();
            v.sort();
            let Some((first_vt_s, _)) = v.first() else {
                continue;
            };
            let lo = (*first_vt_s).max(ctx.t0_us);
            let hi = (lo + 2).max(ctx.t1_us);
            let vt_s = lo + rng.randrange(((hi - lo) / 2).max(1) as usize) as i64;
            let vt_e = vt_s + (ctx.span_us / 10).max(2);
            planned.push((u, vt_s, vt_e));
        }
    }
    let mut out = Vec::new();
    for (u, vt_s, vt_e) in planned {
        let tt_before = store.last_tt().unwrap_or(0);
        let op = Op::parse(&json!({"op": "correct", "ref": {"kind": "node", "uid": u},
            "props": {"revised": true, "note": PROBE_NOTE}, "vt_s": vt_s, "vt_e": vt_e,
            "reason": PROBE_NOTE}))
        .map_err(|e| anyhow::anyhow!("building the correction probe for {u}: {e}"))?;
        store
            .write_at(tt_before + PROBE_TT_STEP_US, vec![op])
            .map_err(|e| anyhow::anyhow!("writing the correction probe for {u}: {e}"))?;
        out.push(Probe { uid: u, tt_before });
    }
    Ok(out)
}

/// `{plan_id, question, steps, answer_spec}`.
pub fn oracle_plan(
    plan_id: &str,
    question: &str,
    steps: &[Value],
    kind: &str,
    from: &str,
) -> Value {
    json!({"plan_id": plan_id, "question": question, "steps": steps,
        "answer_spec": {"kind": kind, "from": from}})
}

/// An executed oracle plan.
pub struct OracleRun {
    /// The execution trace.
    pub trace: Value,
    /// The in-memory store of the run's envelopes and trace.
    pub results: ResultStore,
    /// The plan's `answer_spec.kind`.
    pub kind: String,
    /// The plan's `answer_spec.from`.
    pub from: String,
}

/// Statically verifies (with the task's input uids) and executes an oracle plan. `Ok(None)`
/// when the static verifier refuses it for cost only (a degenerate instance); any other
/// rejection is an error.
pub fn run_oracle(
    snap: Snapshot<'_>,
    plan: &Value,
    input_uids: &[String],
) -> anyhow::Result<Option<OracleRun>> {
    let uids: BTreeSet<String> = input_uids.iter().cloned().collect();
    let rep = validate_static(
        plan,
        &Options {
            stats: Some(snap.stats()),
            task_input_uids: Some(&uids),
            ..Options::default()
        },
    );
    let Some(p) = rep.plan.clone().filter(|_| rep.valid()) else {
        if !rep.violations.is_empty() && rep.violations.iter().all(|v| v.code == "E_COST") {
            return Ok(None);
        }
        bail!(
            "oracle plan {} rejected by the static verifier (a generator bug): {}",
            plan["plan_id"],
            rep.to_json()
        )
    };
    let results = ResultStore::memory();
    let ex = execute(&p, snap, &results, &ExecOptions::default())
        .map_err(|e| anyhow::anyhow!("executing oracle plan {}: {e}", plan["plan_id"]))?;
    Ok(Some(OracleRun {
        trace: ex.trace,
        results,
        kind: p.answer_kind.clone(),
        from: p.answer_from.clone(),
    }))
}

/// The gold of an answer: entity sets as sorted uid lists, everything else as computed.
pub fn gold_of(kind: &str, answer: &Value) -> Value {
    if kind == "entity_set" {
        json!(super::score::uid_set(answer))
    } else {
        answer.clone()
    }
}

/// A task object (§3.8) from an executed oracle plan; `None` when degenerate (§3.3 step 3).
#[allow(clippy::too_many_arguments)]
fn task_of(
    snap: Snapshot<'_>,
    id: String,
    family: &str,
    dataset: &str,
    plan: Value,
    input_uids: &[String],
    difficulty: &str,
    manifest_gold: Option<Value>,
) -> anyhow::Result<Option<Value>> {
    let Some(run) = run_oracle(snap, &plan, input_uids)? else {
        return Ok(None);
    };
    let ans = &run.trace["answer"];
    if run.trace["ok"] != Value::Bool(true) || ans.is_null() {
        return Ok(None);
    }
    let gold = manifest_gold
        .clone()
        .unwrap_or_else(|| gold_of(&run.kind, ans));
    if run.kind == "entity_set" && gold.as_array().is_some_and(Vec::is_empty) {
        return Ok(None);
    }
    Ok(Some(json!({
        "id": id, "family": family, "dataset": dataset,
        "question_text": plan["question"], "oracle_plan": plan,
        "answer_kind": run.kind, "gold": gold,
        "gold_answer_object": mechanical_answer(&run.kind, &run.from, &run.trace),
        "input_uids": input_uids, "difficulty": difficulty,
        "gold_source": if manifest_gold.is_some() { "manifest" } else { "oracle_plan" },
    })))
}

/// The probe tasks of §3.5 (`before` pinned to `tt_before`, `now` unpinned) for each probe.
fn probe_tasks(snap: Snapshot<'_>, dataset: &str, probes: &[Probe]) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for (i, p) in probes.iter().enumerate() {
        for mode in ["before", "now"] {
            let mut args = json!({"uid": p.uid, "limit": 10000});
            if mode == "before" {
                args["as_of_tt"] = json!(p.tt_before);
            }
            let steps = vec![
                templates::step("s1", "entity_history", args, &[]),
                templates::step(
                    "s2",
                    "compute",
                    json!({"fn": "count", "input": templates::r("s1.rows")}),
                    &["s1"],
                ),
            ];
            let q = templates::fill(
                templates::paraphrases(&format!("probe_{mode}"))[i % 3],
                &[("x", p.uid.clone()), ("tt", templates::t_text(p.tt_before))],
            );
            let plan = oracle_plan(
                &format!("probe_{mode}-{i}"),
                &q,
                &steps,
                "count",
                "s2.value",
            );
            let id = format!("{dataset}-probe-{mode}-{i:03}");
            match task_of(
                snap,
                id.clone(),
                "probe",
                dataset,
                plan,
                std::slice::from_ref(&p.uid),
                "hard",
                None,
            )? {
                Some(t) => out.push(t),
                None => bail!("probe task {id} did not execute; the store may be damaged"),
            }
        }
    }
    Ok(out)
}

/// Generates the tasks of one family (§3.3 step 2).
fn family_tasks(
    snap: Snapshot<'_>,
    dataset: &str,
    family: &str,
    wanted: usize,
    ctx: &Context,
    rng: &mut Rng,
) -> anyhow::Result<Vec<Value>> {
    let names = templates::family_templates(family);
    let mut out = Vec::new();
    let mut i = 0usize;
    while out.len() < wanted && i < 6 * wanted {
        let name = names[i % names.len()];
        let para = (i / names.len()) % 3;
        let inst: Instance = templates::build(name, para, ctx, rng);
        let plan = oracle_plan(
            &format!("{name}-{i}"),
            &inst.question,
            &inst.steps,
            inst.kind,
            inst.from,
        );
        let id = format!("{dataset}-{family}-{name}-{:03}", out.len());
        if let Some(t) = task_of(
            snap,
            id,
            family,
            dataset,
            plan,
            &inst.input_uids,
            inst.difficulty,
            None,
        )? {
            out.push(t);
        }
        i += 1;
    }
    Ok(out)
}

/// The split of §3.7: per family (sorted), shuffled with the split stream; the first
/// `max(1, n // 5)` go to dev. Both lists sorted by id.
pub fn split(tasks: Vec<Value>, rng: &mut Rng) -> (Vec<Value>, Vec<Value>) {
    let mut by_family: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for t in tasks {
        by_family
            .entry(t["family"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(t);
    }
    let (mut dev, mut test) = (Vec::new(), Vec::new());
    for (_, mut list) in by_family {
        rng.shuffle(&mut list);
        let n_dev = (list.len() / 5).max(1).min(list.len());
        test.extend(list.split_off(n_dev));
        dev.extend(list);
    }
    let by_id = |a: &Value, b: &Value| a["id"].as_str().cmp(&b["id"].as_str());
    dev.sort_by(by_id);
    test.sort_by(by_id);
    (dev, test)
}

/// Generates the suite (writing the correction probes into `store` unless its log already
/// holds them) and returns the suite object of §3.8.
pub fn generate(store: &mut Store, args: &SuiteArgs) -> anyhow::Result<Value> {
    let seed = args.seed;
    let mut corrections = Rng::new(seed ^ 0x00C0_FFEE);
    let mut sampling = Rng::new(seed ^ 0x07A5_C7A5);
    let mut split_rng = Rng::new(seed ^ 0xDEAD_BEEF);
    let mut context = Rng::new(seed);
    let ctx0 = build_context(store.snapshot(), &mut corrections)?;
    let probes = correction_probes(store, &ctx0, &mut corrections)?;
    let ctx = build_context(store.snapshot(), &mut context)?;
    let snap = store.snapshot();
    let mut tasks = Vec::new();
    for (family, wanted) in FAMILIES {
        tasks.extend(family_tasks(
            snap,
            &args.dataset,
            family,
            wanted,
            &ctx,
            &mut sampling,
        )?);
    }
    tasks.extend(probe_tasks(snap, &args.dataset, &probes)?);
    if let Some(m) = &args.planted {
        for (id, plan, uids, gold) in super::planted::t2_plans(m, &args.dataset)? {
            match task_of(snap, id.clone(), "t2", &args.dataset, plan, &uids, "medium", Some(gold))? {
                Some(t) => tasks.push(t),
                None => bail!("planted task {id} did not execute; was the manifest planted into this store (tgms eval plant)?"),
            }
        }
    }
    let (dev, test) = split(tasks, &mut split_rng);
    let sha = canon::digest(&Value::Array(test.clone()));
    Ok(
        json!({"dataset": args.dataset, "seed": seed, "n_dev": dev.len(), "n_test": test.len(),
        "dev": dev, "test": test, "test_split_sha": sha}),
    )
}

/// The tasks of a suite file: `dev` then `test` (or a frozen suite's `tasks`), each with
/// its split.
pub fn suite_tasks(suite: &Value) -> Vec<(String, Value)> {
    ["dev", "test", "tasks"]
        .iter()
        .flat_map(|k| {
            suite
                .get(*k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |t| (k.to_string(), t))
        })
        .collect()
}
