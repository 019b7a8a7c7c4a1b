//! The verifier mutation experiment of `evaluation.md` §4: clean pools of mechanical answers
//! to oracle plans (classic, extended with factory ordering / burst claims and the derived
//! and belief-pinned answers of `mutation_pool.rs` / `mutation_belief.rs`), the mutation
//! classes of §4.2 plus `invented_field` (a plan citing an output field its operator does not
//! have), and the detection table for the full verifier and two ablations: taint ignored
//! (`honor_truncation = false`) and output contracts off (`check_output_fields = false`).

use crate::claims::{allen, mechanical_answer, uid_strings, verify, Ctx};
use crate::exec::{execute, record, ExecOptions, ResultStore};
use crate::mutation_pool;
use crate::plan::Plan;
use crate::validate::{validate_static, Options};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::{canon, Snapshot};
use tgms_operators::registry::{lookup, registry};

/// The classes in table order.
pub const CLASSES: [&str; 13] = [
    "count_pm1",
    "fabricated_entity",
    "interval_shift",
    "ordering_invert",
    "uncited_entity",
    "entity_dropped",
    "ordering_swap",
    "interval_units",
    "wrong_step_citation",
    "truncated_count",
    "wrong_belief_state",
    "invented_field",
    "approximate_as_exact",
];

/// Field names a planner might invent; a name some operator really outputs is never used.
const INVENTED: [&str; 8] = [
    "total_count",
    "num_results",
    "n_reachable",
    "answer_value",
    "result_size",
    "node_count",
    "matches",
    "total_rows",
];

/// One verifier configuration of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Truncation taint caps claims (`plans-and-claims.md` §8.4).
    pub honor_truncation: bool,
    /// The static verifier checks paths against operator output contracts.
    pub check_output_fields: bool,
}

/// The full verifier, then the ablations: (name, configuration).
pub const CONFIGS: [(&str, Config); 3] = [
    (
        "full",
        Config {
            honor_truncation: true,
            check_output_fields: true,
        },
    ),
    (
        "taint_ignored",
        Config {
            honor_truncation: false,
            check_output_fields: true,
        },
    ),
    (
        "contracts_off",
        Config {
            honor_truncation: true,
            check_output_fields: false,
        },
    ),
];

/// The SplitMix64 stream of `evaluation.md` §3.1.
pub struct Rng(u64);

impl Rng {
    /// A stream whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Advances the state by the golden-ratio increment and returns its SplitMix64 mix.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// `(next_u64() · n) >> 64`: an integer in `[0, n)` (multiply-shift, no rejection).
    pub fn randrange(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
    /// `(next_u64() >> 11) · 2^-53`, in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// `a + (b − a) · uniform()`.
    pub fn uniform_in(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.uniform()
    }
    /// `list[randrange(len)]` (`list` must not be empty).
    pub fn choice<'l, T>(&mut self, list: &'l [T]) -> &'l T {
        &list[self.randrange(list.len())]
    }
    /// For `j` from `len − 1` down to 1: `swap(j, randrange(j + 1))`.
    pub fn shuffle<T>(&mut self, list: &mut [T]) {
        for j in (1..list.len()).rev() {
            let r = self.randrange(j + 1);
            list.swap(j, r);
        }
    }
    /// `min(k, len)` distinct elements of `list` in draw order: a partial Fisher–Yates
    /// shuffle of a copy, `swap(j, j + randrange(len − j))` for `j` in `0..k`.
    pub fn sample<T: Clone>(&mut self, list: &[T], k: usize) -> Vec<T> {
        let mut v = list.to_vec();
        let k = k.min(v.len());
        for j in 0..k {
            let r = j + self.randrange(v.len() - j);
            v.swap(j, r);
        }
        v.truncate(k);
        v
    }
}

/// One pool answer with its trace and plan.
#[derive(Clone)]
struct Entry {
    plan: Value,
    trace: Value,
    answer: Value,
    /// Per claim of `answer`: the first other ok step of the trace whose result lacks an atom
    /// of the claim (`wrong_step_citation` re-cites the claim to it), if any.
    miscite: Vec<Option<Value>>,
    /// Per entity claim of `answer`: a real uid that its cited results do not hold
    /// (`uncited_entity` adds it), if any.
    uncited: Vec<Option<String>>,
}

/// The result of the experiment.
pub struct Report {
    /// Which pool was run: `"classic"` or `"extended"`.
    pub pool: String,
    /// Answers admitted to the clean pool: trace ok, at least one claim, none of them
    /// `unsupported` or `unverifiable`.
    pub clean: usize,
    /// Clean answers of the derived pool (`mutation_pool.rs`), included in `clean`.
    pub derived: usize,
    /// Clean answers the full verifier rejects (`unsupported` or `unverifiable`) when they
    /// are verified again, unmutated, against a fresh copy of the stored evidence.
    pub false_positives: usize,
    /// Candidate answers not admitted to the clean pool (trace not ok, no claim, or a claim
    /// not supported).
    pub excluded: usize,
    /// The full verifier: (class, cases, detected).
    pub classes: ClassTable,
    /// The `wrong_step_citation` mutants by the type of the re-cited claim: (type, cases).
    pub citation_types: Vec<(String, usize)>,
    /// Wall seconds spent building the pool (`"pool"`), then on each class over all
    /// configurations: a measurement, so in neither [`Report::to_json`] nor the table.
    pub seconds: Vec<(String, f64)>,
    /// The ablations of [`CONFIGS`] after the full verifier: (name, false positives,
    /// (class, cases, detected) per class) over the same mutants.
    pub ablations: Vec<(String, usize, ClassTable)>,
}

/// (class, cases, detected) per class, in [`CLASSES`] order.
pub type ClassTable = Vec<(String, usize, usize)>;

impl Report {
    /// `{"pool", "clean", "false_positives", "classes": [{"class", "cases", "detected"}]}`.
    pub fn to_json(&self) -> Value {
        let rows = |cs: &[(String, usize, usize)]| {
            cs.iter()
                .map(|(c, n, d)| json!({"class": c, "cases": n, "detected": d}))
                .collect::<Vec<_>>()
        };
        json!({"pool": self.pool, "clean": self.clean, "derived": self.derived,
            "false_positives": self.false_positives,
            "excluded": self.excluded, "classes": rows(&self.classes),
            "wrong_step_citation_types": self.citation_types.iter()
                .map(|(t, n)| json!({"type": t, "cases": n})).collect::<Vec<_>>(),
            "ablations": self.ablations.iter().map(|(name, fp, cs)| {
                let cfg = CONFIGS.iter().find(|c| c.0 == name).map(|c| c.1);
                json!({"ablation": name,
                    "honor_truncation": cfg.map(|c| c.honor_truncation),
                    "check_output_fields": cfg.map(|c| c.check_output_fields),
                    "false_positives": fp, "classes": rows(cs)})
            }).collect::<Vec<_>>()})
    }
    /// The human table: detected / cases per class for the full verifier and each ablation.
    pub fn table(&self) -> String {
        let mut s = format!("{:<22} {:>6} {:>9}", "class", "cases", "full");
        for (name, _, _) in &self.ablations {
            s.push_str(&format!(" {name:>14}"));
        }
        s.push('\n');
        for (i, (c, n, d)) in self.classes.iter().enumerate() {
            s.push_str(&format!("{c:<22} {n:>6} {d:>9}"));
            for (_, _, cs) in &self.ablations {
                let (_, an, ad) = &cs[i];
                // The same mutants are replayed under each ablation; a different count would
                // be a harness bug, so it is shown rather than hidden.
                let cell = if an == n {
                    ad.to_string()
                } else {
                    format!("{ad}/{an}")
                };
                s.push_str(&format!(" {cell:>14}"));
            }
            s.push('\n');
        }
        s.push_str(&format!(
            "{:<22} {:>6} {:>9}",
            "false positives", self.clean, self.false_positives
        ));
        for (_, fp, _) in &self.ablations {
            s.push_str(&format!(" {fp:>14}"));
        }
        s.push_str(&format!(
            "\npool {}: clean {} ({} derived), false positives {}, excluded {}",
            self.pool, self.clean, self.derived, self.false_positives, self.excluded
        ));
        let types: Vec<String> = self
            .citation_types
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        s.push_str(&format!(
            "\nwrong_step_citation by claim type: {}",
            if types.is_empty() {
                "none".to_string()
            } else {
                types.join(", ")
            }
        ));
        s
    }
}

/// The built-in oracle plans over a store (deterministic): entity histories, values,
/// neighbourhood entity sets, pairs of histories (with a count and with a value answer), a
/// version count, and belief-pinned probes.
pub fn builtin_plans(snap: Snapshot<'_>) -> Vec<Value> {
    builtin_plans_over(snap, 8)
}

/// Entities the built-in plans cover beside a suite in the extended pool (`eval mutations
/// --suite`): enough for every entity class to reach 100 mutants on CollegeMsg.
pub const EXTENDED_ENTITIES: usize = 48;

/// [`builtin_plans`] over `n` entities spread evenly over the sorted uids.
pub fn builtin_plans_over(snap: Snapshot<'_>, n: usize) -> Vec<Value> {
    let st = snap.stats();
    let (Some(lo), Some(hi)) = (st.vt_min, st.vt_max) else {
        return vec![];
    };
    let mid = lo + (hi - lo) / 2;
    let mut uids: Vec<String> = snap
        .all_nodes()
        .iter()
        .map(|n| n.uid().to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if uids.len() > n {
        let step = uids.len() / n.max(1);
        uids = uids.into_iter().step_by(step).take(n).collect();
    }
    let one = |id: &str, op: &str, args: Value, kind: &str, from: &str| {
        json!({"plan_id": id, "steps": [{"id": "s1", "op": op, "args": args}],
            "answer_spec": {"kind": kind, "from": from}})
    };
    let mut out = Vec::new();
    for (i, u) in uids.iter().enumerate() {
        out.push(one(
            &format!("history-count-{i}"),
            "entity_history",
            json!({"uid": u, "include_edges": true, "limit": 10000}),
            "count",
            "s1.rows_total",
        ));
        out.push(one(
            &format!("history-value-{i}"),
            "entity_history",
            json!({"uid": u}),
            "value",
            "s1.rows[0].uid",
        ));
        for (j, t) in [lo, mid].iter().enumerate() {
            out.push(one(
                &format!("neighbours-{i}-{j}"),
                "snapshot_subgraph",
                json!({"seeds": [u], "hops": 2, "t_valid": t, "limit": 10000}),
                "entity_set",
                "s1.nodes",
            ));
        }
        if let Some(t0) = st.first_tt {
            out.push(one(
                &format!("probe-history-{i}"),
                "entity_history",
                json!({"uid": u, "as_of_tt": t0}),
                "count",
                "s1.rows_total",
            ));
        }
    }
    // Two-step plans over two entities' histories: a claim cites one step, and the other
    // step (a different entity's history) is a real step it can be mis-cited to.
    for (i, pair) in uids.windows(2).enumerate() {
        out.push(json!({"plan_id": format!("history-pair-{i}"), "steps": [
            {"id": "s1", "op": "entity_history", "args": {"uid": pair[0], "include_edges": true, "limit": 10000}},
            {"id": "s2", "op": "entity_history", "args": {"uid": pair[1], "include_edges": true, "limit": 10000}}],
            "answer_spec": {"kind": "count", "from": "s1.rows_total"}}));
        // The same with a value answer (the first entity's uid), so value claims have a
        // step to be mis-cited to as well.
        out.push(
            json!({"plan_id": format!("history-value-pair-{i}"), "steps": [
            {"id": "s1", "op": "entity_history", "args": {"uid": pair[0]}},
            {"id": "s2", "op": "entity_history", "args": {"uid": pair[1]}}],
            "answer_spec": {"kind": "value", "from": "s1.rows[0].uid"}}),
        );
    }
    out.push(one(
        "versions",
        "version_history",
        json!({"limit": 10000}),
        "count",
        "s1.rows_total",
    ));
    out.push(one(
        "diff",
        "diff_snapshots",
        json!({"t1": lo, "t2": mid, "limit": 10000}),
        "entity_set",
        "s1.nodes_added",
    ));
    if let Some(t0) = st.first_tt {
        out.push(one(
            "probe-versions",
            "version_history",
            json!({"as_of_tt": t0, "limit": 10000}),
            "count",
            "s1.rows_total",
        ));
    }
    if lookup("compute").is_some() {
        out.push(json!({"plan_id": "reduce-count", "steps": [
            {"id": "s1", "op": "version_history", "args": {"limit": 10000}},
            {"id": "s2", "op": "compute", "args": {"fn": "count", "input": {"$ref": "s1.rows"}}, "depends_on": ["s1"]}],
            "answer_spec": {"kind": "count", "from": "s2.value"}}));
    }
    out
}

/// The oracle plans of a suite file (`dev` and `test` tasks).
pub fn suite_plans(suite: &Value) -> Vec<Value> {
    ["dev", "test", "tasks"]
        .iter()
        .flat_map(|k| {
            suite
                .get(*k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|t| t.get("oracle_plan").cloned())
        .collect()
}

fn exec_plan(
    p: &Value,
    snap: Snapshot<'_>,
    rs: &ResultStore,
    refuse: bool,
) -> Option<(Plan, Value)> {
    let plan = Plan::from_json(p).ok()?;
    // A truncation mutant reduces the page itself: it reads neither complete results nor
    // gets refused (`evaluation.md` §4).
    let opts = ExecOptions {
        refuse_tainted_reducers: refuse,
        read_complete_results: refuse,
        ..ExecOptions::default()
    };
    let ex = execute(&plan, snap, rs, &opts).ok()?;
    Some((plan, ex.trace))
}

fn verdicts(ctx: &Ctx<'_>, ans: &Value) -> Vec<String> {
    verify(ctx, ans)["claims"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["verdict"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn rejected(vs: &[String]) -> bool {
    vs.iter().any(|v| v == "unsupported" || v == "unverifiable")
}

fn leaves_ge(v: &Value, min: f64, out: &mut Vec<i64>) {
    match v {
        Value::Number(n) if !canon::number_is_float(n) => {
            if let Some(x) = n.as_i64() {
                if x as f64 >= min {
                    out.push(x);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| leaves_ge(x, min, out)),
        Value::Object(m) => m.values().for_each(|x| leaves_ge(x, min, out)),
        _ => {}
    }
}

/// Whether `env` holds every atom `claim` states, compared by brute force over all of its
/// leaves (independent of the verifier): the value of a count/value claim, each uid of an
/// entity claim, each stated endpoint of an ordering claim.
fn holds_atoms(env: &Value, claim: &Value) -> bool {
    let mut leaves: Vec<&Value> = Vec::new();
    fn walk<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            other => out.push(other),
        }
    }
    walk(env, &mut leaves);
    let has = |x: &Value| {
        leaves.iter().any(|l| match (l.as_f64(), x.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => *l == x,
        })
    };
    let mut atoms: Vec<Value> = Vec::new();
    match claim["type"].as_str().unwrap_or_default() {
        "count" | "value" => atoms.push(claim["value"].clone()),
        "entity" => atoms.extend(claim["uids"].as_array().cloned().unwrap_or_default()),
        "ordering" => {
            for side in ["a", "b"] {
                for k in ["t", "start", "end", "t_a", "t_b"] {
                    if let Some(x) = claim[side].get(k) {
                        atoms.push(x.clone());
                    }
                }
            }
        }
        _ => return true,
    }
    atoms.iter().all(has)
}

fn inverse(r: &str) -> &'static str {
    match r {
        "before" => "after",
        "after" => "before",
        "meets" => "met_by",
        "met_by" => "meets",
        "during" => "contains",
        "contains" => "during",
        "overlaps" => "overlapped_by",
        "overlapped_by" => "overlaps",
        "starts" => "started_by",
        "started_by" => "starts",
        "finishes" => "finished_by",
        "finished_by" => "finishes",
        _ => "before",
    }
}

fn shift_interval(iv: &Value, k: f64, div: Option<i64>) -> Value {
    let mut out = iv.clone();
    let keys: Vec<&str> = ["t", "start", "end", "t_a", "t_b"]
        .into_iter()
        .filter(|k| iv.get(*k).is_some())
        .collect();
    let get = |k: &str| iv.get(k).and_then(Value::as_i64).unwrap_or(0);
    let span = if iv.get("t").is_some() {
        1
    } else if iv.get("start").is_some() {
        (get("end") - get("start")).max(1)
    } else {
        (get("t_b") - get("t_a")).max(1)
    };
    for key in keys {
        let x = get(key);
        out[key] = json!(match div {
            Some(d) => x / d,
            None => x.saturating_add((k * span as f64) as i64),
        });
    }
    out
}

/// Runs the experiment on `plans` over one snapshot. `extended` adds the factory claims and
/// makes up to 100 mutants per class.
pub fn run(snap: Snapshot<'_>, plans: &[Value], extended: bool) -> Report {
    let started = std::time::Instant::now();
    let mut seconds: Vec<(String, f64)> = Vec::new();
    let rs = ResultStore::memory();
    let mut pool: Vec<Entry> = Vec::new();
    let mut excluded = 0;
    // A clean answer enters the pool when its trace is ok and every claim is backed.
    let admit = |plan_json: &Value, kind: &str, from: &str, trace: Value, factory: bool| {
        let mut answer = mechanical_answer(kind, from, &trace);
        let ctx = Ctx {
            trace: &trace,
            results: &rs,
            snap: Some(snap),
            honor_truncation: true,
        };
        if factory {
            add_factory_claims(&ctx, &trace, &rs, &mut answer);
        }
        let vs = verdicts(&ctx, &answer);
        if trace["ok"] != Value::Bool(true) || vs.is_empty() || rejected(&vs) {
            return None;
        }
        Some(Entry {
            plan: plan_json.clone(),
            trace,
            answer,
            miscite: Vec::new(),
            uncited: Vec::new(),
        })
    };
    let run_plans = |ps: &[Value], pool: &mut Vec<Entry>| {
        let mut excluded = 0;
        for p in ps {
            let entry = exec_plan(p, snap, &rs, true).and_then(|(plan, trace)| {
                admit(p, &plan.answer_kind, &plan.answer_from, trace, extended)
            });
            match entry {
                Some(e) => pool.push(e),
                None => excluded += 1,
            }
        }
        excluded
    };
    excluded += run_plans(plans, &mut pool);
    // Extended: the derived pool (`mutation_pool.rs`), drawn from the real traces above.
    let mut derived = 0;
    if extended {
        let mut seen = BTreeSet::new();
        let mut counts = Vec::new();
        for e in &pool {
            counts.extend(mutation_pool::count_plans(
                &e.plan, &e.trace, &rs, &mut seen,
            ));
        }
        counts.truncate(mutation_pool::MAX_COUNT_PLANS);
        let before = pool.len();
        run_plans(&counts, &mut pool);
        add_belief_pinned(snap, &rs, &mut pool, &run_plans, &admit);
        let mut seen = BTreeSet::new();
        let mut lists = Vec::new();
        for e in &pool {
            lists.extend(mutation_pool::entity_answers(
                &e.plan, &e.trace, &rs, &mut seen,
            ));
        }
        for l in lists {
            let from = l.plan["answer_spec"]["from"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if let Some(e) = admit(&l.plan, "entity_set", &from, l.trace, false) {
                pool.push(e);
            }
        }
        derived = pool.len() - before;
    }
    let mut uid_pool = BTreeSet::new();
    for e in &pool {
        for r in e.trace["steps"].as_array().into_iter().flatten() {
            if let Some(env) = r["result_digest"].as_str().and_then(|d| rs.envelope(d)) {
                let mut v = Vec::new();
                uid_strings(&env, false, &mut v);
                uid_pool.extend(v);
            }
        }
    }
    let uid_pool: Vec<String> = uid_pool.into_iter().collect();
    for (i, e) in pool.iter_mut().enumerate() {
        e.miscite = miscitations(e, &rs);
        e.uncited = uncited_uids(e, &rs, &uid_pool, i);
    }
    seconds.push(("pool".into(), started.elapsed().as_secs_f64()));
    // False positives: clean answers rejected when verified again, unmutated, against a
    // fresh copy of the stored evidence (per configuration).
    let false_positives = |cfg: Config| {
        pool.iter()
            .filter(|e| {
                let ctx = Ctx {
                    trace: &e.trace,
                    results: &rs,
                    snap: Some(snap),
                    honor_truncation: cfg.honor_truncation,
                };
                rejected(&verdicts(&ctx, &e.answer))
            })
            .count()
    };
    // Extended: 100 mutants per class (or as many as there are applicable cases). Classic:
    // 500 mutants round-robin over the classes applicable to at least one answer.
    let budgets: Vec<usize> = if extended {
        vec![100; CLASSES.len()]
    } else {
        let applicable_classes: Vec<bool> = CLASSES
            .iter()
            .map(|c| match *c {
                "truncated_count" | "wrong_belief_state" | "approximate_as_exact" => {
                    run_class(
                        c,
                        &pool,
                        snap,
                        &rs,
                        usize::MAX,
                        &mut Rng::new(0),
                        false,
                        CONFIGS[0].1,
                        &mut BTreeMap::new(),
                    )
                    .0 > 0
                }
                other => !applicable(other, &pool).is_empty(),
            })
            .collect();
        let n = applicable_classes.iter().filter(|a| **a).count();
        let mut b = vec![0; CLASSES.len()];
        let mut k = 0;
        for _ in 0..if n == 0 { 0 } else { 500 } {
            while !applicable_classes[k % CLASSES.len()] {
                k += 1;
            }
            b[k % CLASSES.len()] += 1;
            k += 1;
        }
        b
    };
    // Each configuration replays the same mutants: the draws do not depend on verdicts.
    let mut tables = Vec::new();
    let mut citation_types = BTreeMap::new();
    for (name, cfg) in CONFIGS {
        let mut classes = Vec::new();
        let mut rng = Rng::new(0);
        for (class, budget) in CLASSES.iter().zip(&budgets) {
            let class_started = std::time::Instant::now();
            let mut types = BTreeMap::new();
            let (cases, detected) = run_class(
                class, &pool, snap, &rs, *budget, &mut rng, !extended, cfg, &mut types,
            );
            if name == "full" && *class == "wrong_step_citation" {
                citation_types = types;
            }
            classes.push((class.to_string(), cases, detected));
            let s = class_started.elapsed().as_secs_f64();
            match seconds.iter_mut().find(|x| x.0 == *class) {
                Some(x) => x.1 += s,
                None => seconds.push((class.to_string(), s)),
            }
        }
        tables.push((name.to_string(), false_positives(cfg), classes));
    }
    let (_, fp, classes) = tables.remove(0);
    Report {
        pool: if extended { "extended" } else { "classic" }.into(),
        clean: pool.len(),
        derived,
        false_positives: fp,
        excluded,
        classes,
        citation_types: citation_types.into_iter().collect(),
        seconds,
        ablations: tables,
    }
}

/// `run`'s admission of a clean answer: (plan, answer kind, answer path, trace, add factory
/// claims) → the pool entry, when the trace is ok and the full verifier backs every claim.
type Admit<'a> = dyn Fn(&Value, &str, &str, Value, bool) -> Option<Entry> + 'a;

/// The belief-pinned answers of the extended pool (`mutation_belief.rs`): the plans about the
/// store's corrections join the pool at the current belief state, then every pool plan about
/// a correction is run pinned just before each correction it can see; a pinned answer joins
/// when it differs from the current one, once per (plan, pinned answer).
fn add_belief_pinned(
    snap: Snapshot<'_>,
    rs: &ResultStore,
    pool: &mut Vec<Entry>,
    run_plans: &dyn Fn(&[Value], &mut Vec<Entry>) -> usize,
    admit: &Admit<'_>,
) {
    use crate::mutation_belief as mb;
    let corrections = mb::corrections(snap, rs);
    if corrections.uids_by_tt.is_empty() {
        return;
    }
    let first_store_plan = pool.len();
    run_plans(&mb::store_plans(&corrections, snap), pool);
    let store_plans = first_store_plan..pool.len();
    run_plans(&mb::uid_plans(&corrections), pool);
    let mut runs = 0;
    let mut seen = BTreeSet::new();
    let mut pinned = Vec::new();
    'plans: for (i, e) in pool.iter().enumerate() {
        let Some(pins) = mb::pins_of(&e.plan, &corrections, store_plans.contains(&i)) else {
            continue;
        };
        for tt in pins {
            if runs >= mb::MAX_PINNED_RUNS {
                break 'plans;
            }
            runs += 1;
            let p = mb::pinned(&e.plan, tt);
            let Some((plan, trace)) = exec_plan(&p, snap, rs, true) else {
                continue;
            };
            if trace["answer"].is_null() || trace["answer"] == e.trace["answer"] {
                continue;
            }
            let key = (
                e.plan["plan_id"].to_string(),
                canon::to_string(&trace["answer"]),
            );
            if !seen.insert(key) {
                continue;
            }
            if let Some(entry) = admit(&p, &plan.answer_kind, &plan.answer_from, trace, true) {
                pinned.push(entry);
            }
        }
    }
    pool.extend(pinned);
}

/// Per claim of `e`'s answer, the first other ok step of its trace whose result does not
/// hold every atom the claim states (`holds_atoms`): citing a step that holds them all is no
/// mutant (it backs the same claim). `temporal_pattern` claims get none (see `applicable`).
fn miscitations(e: &Entry, rs: &ResultStore) -> Vec<Option<Value>> {
    let claims = e.answer["claims"].as_array().cloned().unwrap_or_default();
    let ok: Vec<&Value> = e.trace["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == "ok")
        .collect();
    if ok.len() < 2 {
        return vec![None; claims.len()];
    }
    // Each step's envelope is read once per entry, not once per claim.
    let envs: Vec<(Value, Option<Value>)> = ok
        .iter()
        .map(|r| {
            let env = r["result_digest"].as_str().and_then(|d| rs.envelope(d));
            (r["step_id"].clone(), env)
        })
        .collect();
    claims
        .iter()
        .map(|c| {
            if c["type"] == "temporal_pattern" {
                return None;
            }
            let cur = &c["evidence"][0];
            envs.iter()
                .filter(|(sid, _)| sid != cur)
                .find(|(_, env)| env.as_ref().is_some_and(|env| !holds_atoms(env, c)))
                .map(|(sid, _)| sid.clone())
        })
        .collect()
}

/// Per claim of `e`'s answer, for an entity claim: a uid of `uid_pool` (every uid some pool
/// step returned) that no string anywhere in the claim's cited results equals — found by
/// brute force over all their leaves, independently of the verifier, starting at an offset
/// that varies with `salt` so the added uids vary. `None` for other claims and where the
/// cited results hold every pool uid.
fn uncited_uids(
    e: &Entry,
    rs: &ResultStore,
    uid_pool: &[String],
    salt: usize,
) -> Vec<Option<String>> {
    let mut envs: BTreeMap<String, Option<Value>> = BTreeMap::new();
    let claims = e.answer["claims"].as_array().cloned().unwrap_or_default();
    claims
        .iter()
        .enumerate()
        .map(|(j, c)| {
            if c["type"] != "entity" || uid_pool.is_empty() {
                return None;
            }
            let cited: Vec<&str> = c["evidence"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            for sid in &cited {
                envs.entry(sid.to_string()).or_insert_with(|| {
                    record(&e.trace, sid)
                        .and_then(|r| r["result_digest"].as_str().map(String::from))
                        .and_then(|d| rs.envelope(&d))
                });
            }
            let mut held = BTreeSet::new();
            for sid in &cited {
                crate::mutation_belief::string_leaves(envs.get(*sid)?.as_ref()?, &mut held);
            }
            let start = (salt * 31 + j * 7) % uid_pool.len();
            uid_pool[start..]
                .iter()
                .chain(&uid_pool[..start])
                .find(|u| !held.contains(u.as_str()))
                .cloned()
        })
        .collect()
}

fn add_factory_claims(ctx: &Ctx<'_>, trace: &Value, rs: &ResultStore, answer: &mut Value) {
    let mut extra = Vec::new();
    let mut n = answer["claims"].as_array().map_or(0, Vec::len);
    for r in trace["steps"].as_array().into_iter().flatten() {
        if r["status"] != "ok" {
            continue;
        }
        let Some(env) = r["result_digest"].as_str().and_then(|d| rs.envelope(d)) else {
            continue;
        };
        let sid = r["step_id"].clone();
        let mut leaves = Vec::new();
        leaves_ge(&env, 1e14, &mut leaves);
        if let (Some(&t1), Some(&t2)) = (leaves.iter().min(), leaves.iter().max()) {
            if t1 != t2 {
                n += 1;
                let rel = allen((t1, t1 + 1), (t2, t2.saturating_add(1)));
                extra.push(json!({"id": format!("c{n}"), "type": "ordering", "a": {"t": t1}, "b": {"t": t2},
                    "relation": rel, "evidence": [sid]}));
            }
        }
        if r["op"] == "burst_detection" {
            let flagged: Vec<Value> = env["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|x| x.get("flagged") == Some(&Value::Bool(true)))
                .take(2)
                .cloned()
                .collect();
            for f in flagged {
                n += 1;
                extra.push(
                    json!({"id": format!("c{n}"), "type": "temporal_pattern", "assertion": "burst",
                    "interval": {"t_a": f["t_a"], "t_b": f["t_b"]}, "evidence": [sid]}),
                );
            }
        }
    }
    for c in extra {
        let probe = json!({"text": "", "claims": [c.clone()]});
        if verdicts(ctx, &probe).first().map(String::as_str) == Some("supported") {
            if let Some(a) = answer["claims"].as_array_mut() {
                a.push(c);
            }
        }
    }
}

/// Applicable (pool index, claim index) pairs of a class.
fn applicable(class: &str, pool: &[Entry]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, e) in pool.iter().enumerate() {
        for (j, c) in e.answer["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let ty = c["type"].as_str().unwrap_or_default();
            let ok = match class {
                "count_pm1" => (ty == "count" || ty == "value") && c["value"].is_number(),
                "fabricated_entity" => {
                    ty == "entity" && c["uids"].as_array().is_some_and(|u| !u.is_empty())
                }
                // Only claims whose cited results lack some real uid (`uncited_uids`).
                "uncited_entity" => {
                    ty == "entity"
                        && c["uids"].as_array().is_some_and(|u| !u.is_empty())
                        && e.uncited.get(j).is_some_and(Option::is_some)
                }
                "entity_dropped" => {
                    ty == "entity" && c["uids"].as_array().is_some_and(|u| u.len() >= 2)
                }
                "interval_shift" | "interval_units" => ty == "ordering" || ty == "temporal_pattern",
                "ordering_invert" => ty == "ordering" && c["relation"].is_string(),
                "ordering_swap" => ty == "ordering" && c["relation"] != "equals",
                // Every claim type carries evidence; another ok step must lack an atom of the
                // claim (`miscitations`). A temporal_pattern claim is re-detected from the
                // store under the cited step's belief state (`plans-and-claims.md` §8.3): its
                // citation carries no content, so another step at the same belief state backs
                // it just as well; `miscitations` gives it none.
                "wrong_step_citation" => {
                    c["evidence"].as_array().is_some_and(|v| !v.is_empty())
                        && e.miscite.get(j).is_some_and(Option::is_some)
                }
                // One plan-level case per answer (its first claim stands for the plan).
                "invented_field" => {
                    j == 0
                        && e.plan["answer_spec"]["from"]
                            .as_str()
                            .is_some_and(|f| f.contains('.'))
                }
                _ => false,
            };
            if ok {
                out.push((i, j));
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn run_class(
    class: &str,
    pool: &[Entry],
    snap: Snapshot<'_>,
    rs: &ResultStore,
    max: usize,
    rng: &mut Rng,
    with_replacement: bool,
    cfg: Config,
    types: &mut BTreeMap<String, usize>,
) -> (usize, usize) {
    match class {
        "truncated_count" => return truncated_count(pool, snap, rs, max, cfg),
        "wrong_belief_state" => return wrong_belief(pool, snap, rs, max, cfg),
        "approximate_as_exact" => {
            return crate::mutation_approx::approximate_as_exact(
                snap,
                rs,
                max,
                cfg.honor_truncation,
            )
        }
        _ => {}
    }
    let cands = applicable(class, pool);
    let chosen = if cands.len() > max && class == "wrong_step_citation" {
        by_claim_type(&cands, pool, max, rng)
    } else if cands.len() > max {
        rng.sample(&cands, max)
    } else if with_replacement && !cands.is_empty() {
        // Classic pool: the class's share of the 500 mutants, cycling over its cases (each
        // mutant draws its own variation).
        (0..max).map(|i| cands[i % cands.len()]).collect()
    } else {
        cands
    };
    let mut cases = 0;
    let mut detected = 0;
    for (i, j) in chosen {
        let e = &pool[i];
        if class == "invented_field" {
            if let Some(d) = invented_field(&e.plan, snap, rng, cfg) {
                cases += 1;
                detected += usize::from(d);
            }
            continue;
        }
        let mut m = e.answer.clone();
        let c = &mut m["claims"][j];
        let made = match class {
            "count_pm1" => {
                let old = c["value"].clone();
                let d = if rng.randrange(2) == 0 { -1 } else { 1 };
                let new = match old.as_i64() {
                    Some(x) if !canon::number_is_float(old.as_number().expect("number")) => {
                        json!(x + d)
                    }
                    _ => tgms_operators::json::float(old.as_f64().unwrap_or(0.0) + d as f64),
                };
                c["value"] = new.clone();
                let (o, n) = (canon::to_string(&old), canon::to_string(&new));
                if let Some(t) = m["text"].as_str() {
                    m["text"] = json!(t.replacen(&o, &n, 1));
                }
                true
            }
            "fabricated_entity" => {
                let k = rng.randrange(c["uids"].as_array().map_or(1, Vec::len));
                c["uids"][k] = json!(format!("fabricated-{}", rng.randrange(10000)));
                true
            }
            "uncited_entity" => {
                // A real uid the cited evidence does not contain (`uncited_uids`).
                match e.uncited.get(j).cloned().flatten() {
                    Some(u) => {
                        if let Some(a) = c["uids"].as_array_mut() {
                            a.push(json!(u));
                        }
                        true
                    }
                    None => false,
                }
            }
            "entity_dropped" => {
                let n = c["uids"].as_array().map_or(0, Vec::len);
                let k = rng.randrange(n);
                if let Some(a) = c["uids"].as_array_mut() {
                    a.remove(k);
                }
                true
            }
            "interval_shift" | "interval_units" => {
                let div = (class == "interval_units").then_some(1000);
                let k = if rng.randrange(2) == 0 { 3.0 } else { -3.0 };
                for key in ["a", "b", "interval"] {
                    if let Some(iv) = c.get(key).cloned() {
                        if class == "interval_units" || key != "b" {
                            c[key] = shift_interval(&iv, k, div);
                        }
                    }
                }
                true
            }
            "ordering_invert" => {
                let r = c["relation"].as_str().unwrap_or_default().to_string();
                c["relation"] = json!(inverse(&r));
                true
            }
            "ordering_swap" => {
                let (a, b) = (c["a"].clone(), c["b"].clone());
                c["a"] = b;
                c["b"] = a;
                true
            }
            "wrong_step_citation" => {
                // Only claims with such a step are candidates (`applicable`).
                match e.miscite.get(j).cloned().flatten() {
                    Some(o) => {
                        c["evidence"] = json!([o]);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !made {
            continue;
        }
        cases += 1;
        let ty = m["claims"][j]["type"].as_str().unwrap_or_default();
        *types.entry(ty.to_string()).or_default() += 1;
        let ctx = Ctx {
            trace: &e.trace,
            results: rs,
            snap: Some(snap),
            honor_truncation: cfg.honor_truncation,
        };
        let vs = verdicts(&ctx, &m);
        let weak_counts = class == "entity_dropped";
        if rejected(&vs) || (weak_counts && vs.get(j).is_some_and(|v| v == "weakly_supported")) {
            detected += 1;
        }
    }
    (cases, detected)
}

/// `max` candidates of `wrong_step_citation` drawn round-robin over the claim types (each
/// type's candidates in a random order), so every claim type with candidates is mutated even
/// when one type (the factory ordering claims) outnumbers the others.
fn by_claim_type(
    cands: &[(usize, usize)],
    pool: &[Entry],
    max: usize,
    rng: &mut Rng,
) -> Vec<(usize, usize)> {
    let mut by_type: std::collections::BTreeMap<&str, Vec<(usize, usize)>> = Default::default();
    for &(i, j) in cands {
        let ty = pool[i].answer["claims"][j]["type"]
            .as_str()
            .unwrap_or_default();
        by_type.entry(ty).or_default().push((i, j));
    }
    let mut queues: Vec<Vec<(usize, usize)>> = by_type
        .into_values()
        .map(|v| {
            let mut v = rng.sample(&v, v.len());
            v.reverse();
            v
        })
        .collect();
    let mut out = Vec::new();
    while out.len() < max && queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if out.len() < max {
                out.extend(q.pop());
            }
        }
    }
    out
}

/// The list `field` of `step`'s result in `trace`: (returned, total), read from the stored
/// envelope (the list's length against its declared total field).
fn list_extent(trace: &Value, rs: &ResultStore, step: &str, field: &str) -> Option<(i64, i64)> {
    let rec = record(trace, step)?;
    let env = rs.envelope(rec["result_digest"].as_str()?)?;
    let op = lookup(rec["op"].as_str()?)?;
    let list = op.output(field)?.list.as_ref()?;
    let returned = env.get(field)?.as_array()?.len() as i64;
    Some((returned, env.get(&list.total_field)?.as_i64()?))
}

/// The limits a `truncated_count` case is cut at, in passes: 3 for every plan first, then
/// (while the class has fewer than `max` cases) half of the list's total where that is above
/// 3 — a different page of the same list, so a different wrong count.
const TRUNCATION_PASSES: usize = 2;

/// `truncated_count`: gold = a compute reducer over a list (paged rows or a capped list) of an
/// earlier step; that step's limit is cut (see [`TRUNCATION_PASSES`]) and the plan re-runs
/// with the reducer refusal off. A case is a run whose list really came back short of its
/// total.
fn truncated_count(
    pool: &[Entry],
    snap: Snapshot<'_>,
    rs: &ResultStore,
    max: usize,
    cfg: Config,
) -> (usize, usize) {
    let (mut cases, mut detected) = (0, 0);
    for pass in 0..TRUNCATION_PASSES {
        for e in pool {
            if cases >= max {
                return (cases, detected);
            }
            let Ok(plan) = Plan::from_json(&e.plan) else {
                continue;
            };
            if plan.answer_kind != "count" {
                continue;
            }
            let Some(src) = plan.answer_source() else {
                continue;
            };
            if src.op != "compute" {
                continue;
            }
            let Some((paged, field, total)) =
                crate::refpath::find_refs(&src.args).iter().find_map(|r| {
                    let p = r.parsed.as_ref().ok()?;
                    let (_, total) = list_extent(&e.trace, rs, &p.step, p.first_field())?;
                    Some((p.step.clone(), p.first_field().to_string(), total))
                })
            else {
                continue;
            };
            let limit = if pass == 0 { 3 } else { total / 2 };
            if pass > 0 && limit <= 3 {
                continue;
            }
            let mut mp = e.plan.clone();
            for st in mp["steps"].as_array_mut().into_iter().flatten() {
                if st["id"] == paged.as_str() {
                    st["args"]["limit"] = json!(limit);
                }
            }
            let Some((mplan, trace)) = exec_plan(&mp, snap, rs, false) else {
                continue;
            };
            let cut = list_extent(&trace, rs, &paged, &field)
                .is_some_and(|(returned, all)| returned < all && all == total);
            if trace["ok"] != Value::Bool(true) || !cut {
                continue;
            }
            let ans = mechanical_answer(&mplan.answer_kind, &mplan.answer_from, &trace);
            cases += 1;
            let ctx = Ctx {
                trace: &trace,
                results: rs,
                snap: Some(snap),
                honor_truncation: cfg.honor_truncation,
            };
            let vs = verdicts(&ctx, &ans);
            if rejected(&vs) || vs.iter().any(|v| v == "weakly_supported") {
                detected += 1;
            }
        }
    }
    (cases, detected)
}

fn strip_as_of(p: &Value) -> Value {
    let mut q = p.clone();
    for st in q["steps"].as_array_mut().into_iter().flatten() {
        if let Some(m) = st["args"].as_object_mut() {
            m.remove("as_of_tt");
        }
    }
    q
}

/// `wrong_belief_state`: probes with `as_of_tt` run pinned and unpinned; where the answers
/// differ, the current value is claimed against the pinned trace.
fn wrong_belief(
    pool: &[Entry],
    snap: Snapshot<'_>,
    rs: &ResultStore,
    max: usize,
    cfg: Config,
) -> (usize, usize) {
    let (mut cases, mut detected) = (0, 0);
    for e in pool {
        if cases >= max {
            break;
        }
        let pinned = e.plan["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["args"].get("as_of_tt").is_some());
        if !pinned {
            continue;
        }
        let Some((_, cur)) = exec_plan(&strip_as_of(&e.plan), snap, rs, true) else {
            continue;
        };
        if cur["answer"].is_null() || cur["answer"] == e.trace["answer"] {
            continue;
        }
        let mut m = e.answer.clone();
        let Some(j) = m["claims"].as_array().and_then(|a| {
            a.iter()
                .position(|c| c["type"] == "count" || c["type"] == "value")
        }) else {
            continue;
        };
        m["claims"][j]["value"] = cur["answer"].clone();
        cases += 1;
        let ctx = Ctx {
            trace: &e.trace,
            results: rs,
            snap: Some(snap),
            honor_truncation: cfg.honor_truncation,
        };
        if rejected(&verdicts(&ctx, &m)) {
            detected += 1;
        }
    }
    (cases, detected)
}

/// `invented_field`: the plan's `answer_spec.from` names a field its step's operator does not
/// output (a name no registered operator outputs, drawn from [`INVENTED`]). Detected = the
/// static verifier rejects the plan; with output contracts off it passes and reaches the
/// executor, which can only fail to resolve it. `None` when the plan cannot be mutated.
fn invented_field(plan: &Value, snap: Snapshot<'_>, rng: &mut Rng, cfg: Config) -> Option<bool> {
    let from = plan["answer_spec"]["from"].as_str()?;
    let (step, _) = from.split_once('.')?;
    let real: BTreeSet<&str> = registry().iter().flat_map(|op| op.output_names()).collect();
    let names: Vec<&str> = INVENTED
        .iter()
        .copied()
        .filter(|n| !real.contains(n))
        .collect();
    if names.is_empty() {
        return None;
    }
    let name = names[rng.randrange(names.len())];
    let mut m = plan.clone();
    m["answer_spec"]["from"] = json!(format!("{step}.{name}"));
    let opts = Options {
        stats: Some(snap.stats()),
        check_output_fields: cfg.check_output_fields,
        ..Options::default()
    };
    // Only a plan the verifier admits unmutated makes a mutant (a rejection must be the
    // invented field's).
    if !validate_static(plan, &opts).valid() {
        return None;
    }
    Some(!validate_static(&m, &opts).valid())
}
