//! Answers and claims (`plans-and-claims.md` §7–§10): the answer object schema, the
//! mechanical reporter (D-A1), the claim verifier with the four support levels, capping by
//! taint / truncation / approximation, completeness certificates (D-V5), typed-answer
//! verification, gating of every claim type (D-V6) and the per-answer metrics (D-A2).

use crate::approx::{self, Interval};
use crate::exec::{path_complete, record, ResultStore};
use crate::refpath::RefPath;
use crate::Error;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use tgms_engine::{canon, Snapshot, OPEN_END};
use tgms_operators::pipeline::{call_operator, CallOptions};
use tgms_operators::registry::{lookup, RowKey};
use tgms_operators::schema;
use tgms_operators::tools::{DIGEST_FIELDS, UID_ROW_FIELDS};

/// Verdict: the cited evidence establishes the claim.
pub const SUPPORTED: &str = "supported";
/// Verdict: the claim agrees with evidence that is incomplete (truncated or approximate), so
/// it cannot be certified.
pub const WEAK: &str = "weakly_supported";
/// Verdict: the cited evidence contradicts the claim, or the claim is malformed.
pub const UNSUPPORTED: &str = "unsupported";
/// Verdict: the claim cannot be checked (e.g. a pattern claim without a store to re-check it
/// against).
pub const UNVERIFIABLE: &str = "unverifiable";

/// The answer object JSON Schema of §7.1 (`relation` and interval shapes are checked by
/// the type checks).
pub fn answer_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["text", "claims"],
    "properties": {
        "text": {"type": "string"},
        "claims": {"type": "array", "items": {"type": "object", "additionalProperties": false,
            "required": ["id", "type", "evidence"],
            "properties": {
                "id": {"type": "string"},
                "type": {"type": "string", "enum": ["count", "value", "entity", "ordering", "temporal_pattern"]},
                "value": {"type": ["number", "string", "boolean", "null"]},
                "from": {"type": "string"},
                "uids": {"type": "array", "items": {"type": "string"}},
                "complete": {"type": "boolean"},
                "a": {"type": "object"}, "b": {"type": "object"},
                "relation": {"type": ["string", "object"]},
                "assertion": {"type": "string", "enum": ["burst", "concentration", "trend"]},
                "direction": {"type": "string", "enum": ["increasing", "decreasing"]},
                "interval": {"type": "object"},
                "evidence": {"type": "array", "minItems": 1, "items": {"type": "string"}}
            }}},
        "answer": {"type": "object", "additionalProperties": false,
            "required": ["kind", "value", "from", "evidence"],
            "properties": {
                "kind": {"type": "string", "enum": crate::plan::ANSWER_KINDS},
                "value": {}, "from": {"type": "string"},
                "evidence": {"type": "array", "items": {"type": "string"}},
                "complete": {"type": "boolean"}}}
    }})
}

/// Everything the verifier reads.
pub struct Ctx<'a> {
    /// The execution trace the answer cites (its `steps` records name the result digests).
    pub trace: &'a Value,
    /// Where the cited steps' envelopes are read, by result digest.
    pub results: &'a ResultStore,
    /// The store snapshot used to re-check `temporal_pattern` claims; `None` makes them
    /// `unverifiable`.
    pub snap: Option<Snapshot<'a>>,
    /// Downgrade a claim whose evidence is incomplete (truncated or approximate) to
    /// `weakly_supported`; `false` is an ablation (the mutation harness's `taint_ignored`).
    pub honor_truncation: bool,
}

/// One loaded cited step.
struct Loaded {
    id: String,
    env: std::sync::Arc<Value>,
    desc: Value,
    ref_truncations: bool,
}

impl Loaded {
    fn complete(&self) -> bool {
        self.desc["complete"] == Value::Bool(true)
    }
    fn tainted(&self) -> bool {
        self.desc["upstream_truncated"] == Value::Bool(true)
            || self.desc["approximate"] == Value::Bool(true)
            || self.ref_truncations
    }
}

fn load(ctx: &Ctx<'_>, id: &str) -> Option<Loaded> {
    let r = record(ctx.trace, id)?;
    if r["status"] != "ok" {
        return None;
    }
    let d = r["result_digest"].as_str()?;
    let env = ctx.results.envelope_shared(d)?;
    Some(Loaded {
        id: id.to_string(),
        env,
        desc: r["evidence"].clone(),
        ref_truncations: r
            .get("ref_truncations")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
    })
}

fn verdict(v: &str, reason: impl Into<String>) -> (String, String) {
    (v.to_string(), reason.into())
}

fn step_prefix(from: &str) -> &str {
    from.split_once('.').map_or(from, |x| x.0)
}

/// Numbers as exact-ish values: integers exactly, floats as binary64.
#[derive(Clone, Copy, Debug)]
enum Num {
    I(i128),
    F(f64),
}

fn num_of(v: &Value) -> Option<Num> {
    match v {
        Value::Number(n) if !canon::number_is_float(n) => n.as_str().parse().ok().map(Num::I),
        Value::Number(n) => n.as_str().parse().ok().map(Num::F),
        _ => None,
    }
}

fn num_f(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

fn num_eq(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::I(x), Num::I(y)) => x == y,
        _ => num_f(a) == num_f(b),
    }
}

fn numeric_leaves(v: &Value, out: &mut Vec<Num>) {
    match v {
        Value::Number(_) => out.extend(num_of(v)),
        Value::Array(a) => a.iter().for_each(|x| numeric_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| numeric_leaves(x, out)),
        _ => {}
    }
}

fn is_digest_key(k: &str) -> bool {
    DIGEST_FIELDS.contains(&k) || k.ends_with("_set_digest")
}

fn string_leaves(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| string_leaves(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if !is_digest_key(k) {
                    string_leaves(x, out);
                }
            }
        }
        _ => {}
    }
}

/// Strings under uid-typed row field names at any depth.
pub fn uid_strings(v: &Value, under: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) if under => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| uid_strings(x, under, out)),
        Value::Object(m) => {
            for (k, x) in m {
                uid_strings(x, under || UID_ROW_FIELDS.contains(&k.as_str()), out);
            }
        }
        _ => {}
    }
}

/// The uids of a list value: strings themselves; for objects, the strings under uid-typed
/// row field names (code-point order within an element); first appearance, no duplicates.
pub fn uids_of_list(v: &[Value]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in v {
        let mut here = Vec::new();
        match e {
            Value::String(s) => here.push(s.clone()),
            other => {
                uid_strings(other, false, &mut here);
                here.sort();
            }
        }
        for u in here {
            if seen.insert(u.clone()) {
                out.push(u);
            }
        }
    }
    out
}

/// An interval object read per §7.1.
fn interval(v: &Value) -> Option<(i64, i64)> {
    let n = |x: &Value| -> Option<i64> {
        match num_of(x)? {
            Num::I(i) => i64::try_from(i).ok(),
            Num::F(f) if f.is_finite() => Some(f.trunc() as i64),
            Num::F(_) => None,
        }
    };
    let m = v.as_object()?;
    if m.contains_key("start") && m.contains_key("end") {
        return Some((n(&m["start"])?, n(&m["end"])?));
    }
    if let Some(t) = m.get("t") {
        let t = n(t)?;
        return Some((t, t.checked_add(1)?));
    }
    if m.contains_key("t_a") && m.contains_key("t_b") {
        return Some((n(&m["t_a"])?, n(&m["t_b"])?));
    }
    None
}

/// The stated endpoints of an interval object (grounding, D-V4).
fn stated_endpoints(v: &Value) -> Vec<Value> {
    let m = match v.as_object() {
        Some(m) => m,
        None => return vec![],
    };
    if m.contains_key("start") && m.contains_key("end") {
        return vec![m["start"].clone(), m["end"].clone()];
    }
    if let Some(t) = m.get("t") {
        return vec![t.clone()];
    }
    if m.contains_key("t_a") && m.contains_key("t_b") {
        return vec![m["t_a"].clone(), m["t_b"].clone()];
    }
    vec![]
}

/// The Allen relation of `a` vs `b` (`operators.md` §21.4): the same rule `compute` uses.
pub fn allen(a: (i64, i64), b: (i64, i64)) -> &'static str {
    tgms_operators::ops::compute::allen(a.0.into(), a.1.into(), b.0.into(), b.1.into())
}

fn show(vs: &[String]) -> String {
    let v: Vec<Value> = vs.iter().take(5).map(|s| json!(s)).collect();
    canon::to_string(&Value::Array(v))
}

fn malformed(detail: &str) -> (String, String) {
    let e = Error::MalformedClaim {
        detail: detail.to_string(),
    };
    verdict(UNVERIFIABLE, e.to_string())
}

fn values_match(claim: &Value, cand: &Value) -> bool {
    // A yes/no claim matches a yes/no answer (`compute` `compare`) only by the same truth
    // value.
    if let (Value::Bool(a), Value::Bool(b)) = (claim, cand) {
        return a == b;
    }
    let cv = match claim {
        Value::Bool(b) => Some(Num::I(*b as i128)),
        other => num_of(other),
    };
    match (cv, cand) {
        // `|c − v| <= 1e-9` read exactly: two integers match only when equal (in f64,
        // 2^62 − 1 and 2^62, the open end of transaction time, would be the same number).
        (Some(v), Value::Number(_)) => num_of(cand).is_some_and(|c| match (c, v) {
            (Num::I(a), Num::I(b)) => a == b,
            _ => (num_f(c) - num_f(v)).abs() <= 1e-9,
        }),
        (None, Value::String(s)) => claim.as_str() == Some(s.as_str()),
        _ => false,
    }
}

/// The list facts of §8.5 for a path: (list name, n, total, certificate, uid-keyed, key).
struct ListFacts {
    n: usize,
    total: Option<i64>,
    digest: Option<String>,
    uid_key: Option<Option<&'static str>>,
}

fn list_facts(env: &Value, rp: &RefPath) -> Option<ListFacts> {
    let spec = lookup(env["op"].as_str()?)?;
    let decl = spec.output(rp.first_field())?;
    let l = decl.list.as_ref()?;
    let elem = match &decl.contract {
        tgms_operators::contract::Contract::List(t) => (**t).clone(),
        other => other.clone(),
    };
    use tgms_operators::contract::Contract;
    let uid_key = match l.key {
        RowKey::Field(f)
            if ["uid", "src", "dst"].contains(&f)
                && elem
                    .fields()
                    .is_some_and(|fs| fs.iter().any(|(n, t)| n == f && *t == Contract::Uid)) =>
        {
            Some(Some(f))
        }
        RowKey::Row if elem == Contract::Uid => Some(None),
        _ => None,
    };
    Some(ListFacts {
        n: env.get(rp.first_field())?.as_array()?.len(),
        total: env.get(&l.total_field).and_then(Value::as_i64),
        digest: env
            .get(&l.digest_field)
            .and_then(Value::as_str)
            .map(String::from),
        uid_key,
    })
}

/// The verdict of a complete-set comparison (§8.5 steps 3–6): (verdict, reason).
fn set_verdict(
    env: &Value,
    rp: &RefPath,
    vals: &[Value],
    claimed: &BTreeSet<String>,
) -> (String, String) {
    let diff = |f: &[String]| {
        let fs: BTreeSet<String> = f.iter().cloned().collect();
        let missing: Vec<String> = fs.difference(claimed).cloned().collect();
        let extra: Vec<String> = claimed.difference(&fs).cloned().collect();
        (missing, extra)
    };
    let facts = list_facts(env, rp);
    let full = facts.as_ref().is_none_or(|f| f.total == Some(f.n as i64));
    if full {
        let (m, e) = diff(&uids_of_list(vals));
        if m.is_empty() && e.is_empty() {
            return verdict(SUPPORTED, "set equals the evidence");
        }
        return verdict(
            UNSUPPORTED,
            format!(
                "set differs from evidence: missing {}, extra {}",
                show(&m),
                show(&e)
            ),
        );
    }
    let f = facts.expect("checked above");
    if let Some(key) = f.uid_key {
        let path_ok = rp.segments.len() == 1 && rp.segments[0].index.is_none()
            || (rp.segments.len() == 2
                && rp.segments[0].index == Some(crate::refpath::Index::All)
                && rp.segments[1].index.is_none()
                && Some(rp.segments[1].name.as_str()) == key);
        if path_ok {
            let keys: Vec<Value> = claimed.iter().map(|u| json!(u)).collect();
            let d = tgms_operators::json::set_digest(keys.iter());
            if f.total == Some(claimed.len() as i64) && f.digest.as_deref() == Some(d.as_str()) {
                return verdict(SUPPORTED, "set matches the complete result (certificate)");
            }
            return verdict(
                UNSUPPORTED,
                "set does not match the complete result (certificate)",
            );
        }
    }
    let (m, e) = diff(&uids_of_list(vals));
    if m.is_empty() && e.is_empty() {
        verdict(
            WEAK,
            "evidence incomplete; completeness cannot be certified",
        )
    } else {
        verdict(
            UNSUPPORTED,
            format!(
                "set differs from evidence: missing {}, extra {}",
                show(&m),
                show(&e)
            ),
        )
    }
}

fn check_claim(ctx: &Ctx<'_>, c: &Value) -> (String, String) {
    let cited: Vec<&str> = c["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let from = c.get("from").and_then(Value::as_str);
    if let Some(f) = from {
        if !cited.contains(&step_prefix(f)) {
            return verdict(UNVERIFIABLE, "provenance pointer names an uncited step");
        }
    }
    let loaded: Vec<Loaded> = cited.iter().filter_map(|id| load(ctx, id)).collect();
    if loaded.is_empty() {
        return verdict(UNVERIFIABLE, "evidence steps unavailable");
    }
    let ty = c["type"].as_str().unwrap_or_default();
    let complete_entity = ty == "entity" && c.get("complete") == Some(&Value::Bool(true));
    let (v, reason) = match ty {
        "count" | "value" => check_value(c, from, &loaded),
        "entity" if complete_entity => check_complete_entity(c, from, &loaded),
        "entity" => check_entity(c, &loaded),
        "ordering" => check_ordering(c, &loaded),
        "temporal_pattern" => check_pattern(ctx, c, &loaded),
        other => malformed(&format!("unknown type {other}")),
    };
    if v != SUPPORTED {
        return (v, reason);
    }
    let incomplete = match (ty, from) {
        ("count" | "value", Some(f)) => {
            let l = loaded.iter().find(|l| l.id == step_prefix(f));
            let rp = RefPath::parse(f).ok();
            l.is_some_and(|l| !path_complete(&l.desc, l.ref_truncations, rp.as_ref()))
        }
        ("entity", _) if complete_entity => {
            let l = from.and_then(|f| loaded.iter().find(|l| l.id == step_prefix(f)));
            l.is_some_and(Loaded::tainted)
        }
        _ => loaded.iter().any(|l| !l.complete()),
    };
    // `complete: true` on a count/value claim states the number as exact (D-V11, ours):
    // evidence that is approximate or otherwise incomplete cannot back that.
    if matches!(ty, "count" | "value")
        && c.get("complete") == Some(&Value::Bool(true))
        && incomplete
    {
        return verdict(
            UNSUPPORTED,
            "value stated as exact (complete: true) but the evidence is approximate or incomplete",
        );
    }
    if !ctx.honor_truncation {
        return (v, reason);
    }
    if incomplete {
        (WEAK.to_string(), format!("{reason} (evidence incomplete)"))
    } else {
        (v, reason)
    }
}

fn resolve_from<'l>(f: &str, loaded: &'l [Loaded]) -> crate::Result<(Value, RefPath, &'l Loaded)> {
    let rp = RefPath::parse(f)?;
    let l = loaded
        .iter()
        .find(|l| l.id == rp.step)
        .ok_or_else(|| Error::EvidenceUnavailable {
            step: rp.step.clone(),
        })?;
    let v = rp.eval(&l.env)?;
    Ok((v, rp, l))
}

fn check_value(c: &Value, from: Option<&str>, loaded: &[Loaded]) -> (String, String) {
    let value = c.get("value").unwrap_or(&Value::Null);
    if value.is_null() {
        return verdict(UNVERIFIABLE, "claim has no value");
    }
    // An estimate of approximate evidence is checked against its interval instead of
    // its point value (`docs/approximate.md`).
    let mut intervals: Vec<Interval> = Vec::new();
    let cands: Vec<Value> = match from {
        Some(f) => match resolve_from(f, loaded) {
            Ok((v, rp, l)) => match approx::interval_of(&l.env, &rp) {
                Some(iv) => {
                    intervals.push(iv);
                    vec![]
                }
                None => vec![v],
            },
            Err(m) => return verdict(UNVERIFIABLE, format!("bad from-path ({m})")),
        },
        None => loaded
            .iter()
            .flat_map(|l| {
                let count = RefPath::parse(&format!("{}.count", l.id))
                    .ok()
                    .and_then(|rp| approx::interval_of(&l.env, &rp));
                let estimated = count.is_some();
                intervals.extend(count);
                ["count", "value", "rows_total"]
                    .into_iter()
                    .filter(move |k| !(estimated && *k == "count"))
                    .filter_map(|k| l.env.get(k).cloned())
                    .collect::<Vec<_>>()
            })
            .collect(),
    };
    let claimed_num = num_of(value).map(num_f);
    let within = claimed_num.and_then(|x| intervals.iter().find(|iv| iv.contains(x)));
    if cands.iter().any(|x| values_match(value, x)) {
        verdict(SUPPORTED, "value matches the cited evidence")
    } else if let Some(iv) = within {
        if c.get("complete") == Some(&Value::Bool(true)) {
            verdict(
                UNSUPPORTED,
                format!(
                    "an approximate estimate stated as exact (complete: true); the evidence gives {}",
                    iv.describe()
                ),
            )
        } else {
            verdict(
                WEAK,
                format!("value within {} of an approximate estimate", iv.describe()),
            )
        }
    } else if let Some(iv) = intervals.first() {
        verdict(
            UNSUPPORTED,
            format!(
                "value {} outside {} of an approximate estimate",
                canon::to_string(value),
                iv.describe()
            ),
        )
    } else {
        let shown: Vec<Value> = cands.into_iter().take(5).collect();
        verdict(
            UNSUPPORTED,
            format!(
                "value {} not in evidence (candidates {})",
                canon::to_string(value),
                canon::to_string(&Value::Array(shown))
            ),
        )
    }
}

fn claimed_uids(c: &Value) -> crate::Result<Vec<String>> {
    match c.get("uids") {
        None => Ok(vec![]),
        Some(Value::Array(a)) => Ok(a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()),
        Some(_) => Err(Error::MalformedClaim {
            detail: "uids is not a list".into(),
        }),
    }
}

fn check_entity(c: &Value, loaded: &[Loaded]) -> (String, String) {
    let uids = match claimed_uids(c) {
        Ok(u) => u,
        Err(e) => return verdict(UNVERIFIABLE, e.to_string()),
    };
    if uids.is_empty() {
        return verdict(UNVERIFIABLE, "entity claim lists no uids");
    }
    let mut lex = BTreeSet::new();
    for l in loaded {
        string_leaves(&l.env, &mut lex);
    }
    let missing: Vec<String> = uids.iter().filter(|u| !lex.contains(*u)).cloned().collect();
    if missing.is_empty() {
        verdict(SUPPORTED, "every uid occurs in the evidence")
    } else {
        verdict(
            UNSUPPORTED,
            format!("uids not in evidence: {}", show(&missing)),
        )
    }
}

fn check_complete_entity(c: &Value, from: Option<&str>, loaded: &[Loaded]) -> (String, String) {
    let Some(f) = from else {
        return verdict(UNVERIFIABLE, "complete entity claim needs from");
    };
    let uids = match claimed_uids(c) {
        Ok(u) => u,
        Err(e) => return verdict(UNVERIFIABLE, e.to_string()),
    };
    let (v, rp, l) = match resolve_from(f, loaded) {
        Ok(x) => x,
        Err(m) => return verdict(UNVERIFIABLE, format!("bad from-path ({m})")),
    };
    let Value::Array(vals) = v else {
        return verdict(UNVERIFIABLE, "from does not name a list");
    };
    let claimed: BTreeSet<String> = uids.into_iter().collect();
    set_verdict(&l.env, &rp, &vals, &claimed)
}

fn check_ordering(c: &Value, loaded: &[Loaded]) -> (String, String) {
    let (Some(a), Some(b), Some(rel)) = (c.get("a"), c.get("b"), c.get("relation")) else {
        return verdict(UNVERIFIABLE, "ordering claim needs a, b and relation");
    };
    let (Some(ia), Some(ib)) = (interval(a), interval(b)) else {
        return malformed("unparsable interval");
    };
    let mut leaves = Vec::new();
    for l in loaded {
        numeric_leaves(&l.env, &mut leaves);
    }
    let stated: Vec<Value> = stated_endpoints(a)
        .into_iter()
        .chain(stated_endpoints(b))
        .collect();
    let ungrounded: Vec<Value> = stated
        .iter()
        .filter(|x| num_of(x).is_none_or(|n| !leaves.iter().any(|l| num_eq(*l, n))))
        .cloned()
        .collect();
    if !ungrounded.is_empty() {
        return verdict(
            UNVERIFIABLE,
            format!(
                "claimed timestamps not grounded in evidence: {}",
                canon::to_string(&Value::Array(ungrounded))
            ),
        );
    }
    match rel {
        Value::String(r) => {
            let actual = allen(ia, ib);
            if actual == r {
                verdict(SUPPORTED, format!("relation is {actual}"))
            } else {
                verdict(UNSUPPORTED, format!("relation is {actual}, not {r}"))
            }
        }
        Value::Object(m) => match m.get("within").and_then(num_of) {
            Some(Num::I(w)) if m.len() == 1 => {
                let d = (ia.0 as i128 - ib.0 as i128).abs();
                if d <= w {
                    verdict(SUPPORTED, format!("starts {d} apart, within {w}"))
                } else {
                    verdict(UNSUPPORTED, format!("starts {d} apart, not within {w}"))
                }
            }
            _ => malformed("relation object must be {within: integer}"),
        },
        _ => malformed("relation"),
    }
}

fn check_pattern(ctx: &Ctx<'_>, c: &Value, loaded: &[Loaded]) -> (String, String) {
    let Some(snap) = ctx.snap else {
        return verdict(UNVERIFIABLE, "no store to re-check patterns");
    };
    let Some(iv) = c.get("interval") else {
        return verdict(UNVERIFIABLE, "temporal_pattern claim needs interval");
    };
    let Some((start, end)) = interval(iv) else {
        return malformed("unparsable interval");
    };
    let st = snap.stats();
    let (Some(lo), Some(hi)) = (st.vt_min, st.vt_max) else {
        return verdict(UNVERIFIABLE, "store has no extent");
    };
    if hi <= lo {
        return verdict(UNVERIFIABLE, "store has no extent");
    }
    let span = (end.saturating_sub(start)).max(1);
    let ca = lo.max(start.saturating_sub(span.saturating_mul(10)));
    let cb = hi.min(end.saturating_add(span.saturating_mul(10)));
    if ca >= cb {
        return verdict(UNVERIFIABLE, "empty context window");
    }
    // D-V6: re-check under the belief state the evidence was computed in.
    let as_of = loaded[0].env["args_echo"]
        .get("as_of_tt")
        .and_then(Value::as_i64)
        .unwrap_or(OPEN_END);
    let opts = CallOptions {
        skip_cost: true,
        ..CallOptions::default()
    };
    let overlaps = |a: i64, b: i64| a < end && start < b;
    let bucket = |r: &Value| -> Option<(i64, i64)> {
        Some((r.get("t_a")?.as_i64()?, r.get("t_b")?.as_i64()?))
    };
    let assertion = c
        .get("assertion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match assertion {
        "burst" => {
            let args = json!({"target": {"kind": "edge_event_rate"}, "window": {"t_a": ca, "t_b": cb},
                "stride": span, "limit": 10000, "as_of_tt": as_of});
            match call_operator(snap, "burst_detection", &args, &opts) {
                Err(e) => verdict(UNVERIFIABLE, format!("re-detection failed: {}", e.message)),
                Ok(env) => {
                    let rows = env["rows"].as_array().cloned().unwrap_or_default();
                    let hit = rows.iter().any(|r| {
                        r.get("flagged").and_then(Value::as_bool).unwrap_or(true)
                            && bucket(r).is_some_and(|(a, b)| overlaps(a, b))
                    });
                    if hit {
                        verdict(SUPPORTED, "a flagged bucket overlaps the interval")
                    } else {
                        verdict(UNSUPPORTED, "no flagged bucket overlaps the interval")
                    }
                }
            }
        }
        "concentration" | "trend" => {
            let args = json!({"metric": "edge_event_count", "window": {"t_a": ca, "t_b": cb},
                "stride": span, "limit": 10000, "as_of_tt": as_of});
            let env = match call_operator(snap, "graph_metric_timeseries", &args, &opts) {
                Err(e) => {
                    return verdict(UNVERIFIABLE, format!("re-detection failed: {}", e.message))
                }
                Ok(env) => env,
            };
            let rows = env["rows"].as_array().cloned().unwrap_or_default();
            let vals: Vec<(Option<(i64, i64)>, f64)> = rows
                .iter()
                .map(|r| {
                    (
                        bucket(r),
                        r.get("value").and_then(num_of).map(num_f).unwrap_or(0.0),
                    )
                })
                .collect();
            if assertion == "concentration" {
                if vals.is_empty() {
                    return verdict(UNSUPPORTED, "no buckets in the context window");
                }
                let mut best = 0;
                for (i, v) in vals.iter().enumerate() {
                    if v.1 > vals[best].1 {
                        best = i;
                    }
                }
                match vals[best].0 {
                    Some((a, b)) if overlaps(a, b) => {
                        verdict(SUPPORTED, format!("peak bucket [{a}, {b}) overlaps"))
                    }
                    Some((a, b)) => verdict(UNSUPPORTED, format!("peak bucket is [{a}, {b})")),
                    None => verdict(UNVERIFIABLE, "series rows without buckets"),
                }
            } else {
                let n = vals.len();
                if n < 4 {
                    return verdict(UNVERIFIABLE, "fewer than 4 buckets");
                }
                let h = n / 2;
                let mean = |xs: &[(Option<(i64, i64)>, f64)]| {
                    xs.iter().map(|x| x.1).sum::<f64>() / xs.len() as f64
                };
                let d = mean(&vals[n - h..]) - mean(&vals[..h]);
                let obs = if d > 0.0 { "increasing" } else { "decreasing" };
                let want = c
                    .get("direction")
                    .and_then(Value::as_str)
                    .unwrap_or("increasing");
                if obs == want {
                    verdict(SUPPORTED, format!("trend is {obs}"))
                } else {
                    verdict(UNSUPPORTED, format!("trend is {obs}, not {want}"))
                }
            }
        }
        other => verdict(UNVERIFIABLE, format!("unknown assertion '{other}'")),
    }
}

/// The typed answer's verdict (§8.6).
fn check_answer(ctx: &Ctx<'_>, a: &Value) -> (String, String) {
    let from = a["from"].as_str().unwrap_or_default();
    let step = step_prefix(from);
    let cited: Vec<&str> = a["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !cited.contains(&step) {
        return verdict(UNVERIFIABLE, "answer source step is not cited");
    }
    let Some(l) = load(ctx, step) else {
        return verdict(UNVERIFIABLE, "evidence steps unavailable");
    };
    let (actual, rp) = if from.contains('.') {
        match RefPath::parse(from).and_then(|rp| Ok((rp.eval(&l.env)?, Some(rp)))) {
            Ok(x) => x,
            Err(e) => return verdict(UNVERIFIABLE, format!("bad from-path ({e})")),
        }
    } else {
        (tgms_operators::pipeline::quoted_result_of(&l.env), None)
    };
    let claimed_complete = a.get("complete") == Some(&Value::Bool(true));
    let mut certified = false;
    if a["kind"] == "entity_set" {
        let (Value::Array(vals), Some(rp)) = (&actual, rp.as_ref()) else {
            return if deep_eq(&a["value"], &actual) {
                verdict(SUPPORTED, "value equals the evidence")
            } else {
                verdict(UNSUPPORTED, "value differs from the evidence")
            };
        };
        let claimed: BTreeSet<String> = match a["value"].as_array() {
            Some(v) => uids_of_list(v).into_iter().collect(),
            None => return verdict(UNSUPPORTED, "entity_set value is not a list"),
        };
        let (v, r) = set_verdict(&l.env, rp, vals, &claimed);
        if v == UNSUPPORTED {
            return (v, r);
        }
        // A sample cannot certify a complete set.
        certified = v == SUPPORTED && !approx::is_approximate(&l.env);
    } else if !deep_eq(&a["value"], &actual) {
        return verdict(UNSUPPORTED, "value differs from the evidence");
    }
    let complete = path_complete(&l.desc, l.ref_truncations, rp.as_ref());
    if claimed_complete && !complete && !certified {
        return verdict(
            UNSUPPORTED,
            "answer claims completeness the evidence does not have",
        );
    }
    if claimed_complete {
        verdict(SUPPORTED, "answer equals the evidence")
    } else {
        verdict(WEAK, "answer equals the evidence; not complete")
    }
}

fn deep_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => match (num_of(a), num_of(b)) {
            (Some(x), Some(y)) => (num_f(x) - num_f(y)).abs() <= 1e-9,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| deep_eq(p, q)))
        }
        _ => a == b,
    }
}

/// Numbers in prose: the matches of `\b\d[\d,]*\.?\d*\b`, commas removed, as floats,
/// distinct in order of first occurrence.
pub fn prose_numbers(text: &str) -> Vec<f64> {
    let cs: Vec<char> = text.chars().collect();
    let word = |i: usize| cs.get(i).is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let boundary = |i: usize| (i > 0 && word(i - 1)) != word(i);
    let mut out: Vec<f64> = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        if !(cs[i].is_ascii_digit() && boundary(i)) {
            i += 1;
            continue;
        }
        let mut kmax = 0;
        while i + 1 + kmax < cs.len()
            && (cs[i + 1 + kmax].is_ascii_digit() || cs[i + 1 + kmax] == ',')
        {
            kmax += 1;
        }
        let digits_from = |p: usize| {
            let mut j = 0;
            while p + j < cs.len() && cs[p + j].is_ascii_digit() {
                j += 1;
            }
            j
        };
        let mut found = None;
        'outer: for k in (0..=kmax).rev() {
            let p = i + 1 + k;
            if cs.get(p) == Some(&'.') {
                for j in (0..=digits_from(p + 1)).rev() {
                    if boundary(p + 1 + j) {
                        found = Some(p + 1 + j);
                        break 'outer;
                    }
                }
            }
            for j in (0..=digits_from(p)).rev() {
                if boundary(p + j) {
                    found = Some(p + j);
                    break 'outer;
                }
            }
        }
        match found {
            Some(e) => {
                let s: String = cs[i..e].iter().filter(|c| **c != ',').collect();
                if let Ok(x) = s.parse::<f64>() {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
                i = e.max(i + 1);
            }
            None => i += 1,
        }
    }
    out
}

/// The numbers written as percentages in prose (`95%`, `99.5 %`): each is also covered by a
/// claim of its hundredth (`0.95`), so a confidence level can be written as people write it.
pub fn prose_percents(text: &str) -> Vec<f64> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        if *c != '%' {
            continue;
        }
        let mut e = i;
        while e > 0 && cs[e - 1] == ' ' {
            e -= 1;
        }
        let mut b = e;
        while b > 0 && (cs[b - 1].is_ascii_digit() || cs[b - 1] == '.' || cs[b - 1] == ',') {
            b -= 1;
        }
        let s: String = cs[b..e].iter().filter(|c| **c != ',').collect();
        if let Ok(x) = s.trim_end_matches('.').parse::<f64>() {
            out.push(x);
        }
    }
    out
}

/// Is prose number `x` covered by a claimed number, directly or (for a percentage) as its
/// hundredth?
pub fn number_covered(x: f64, claimed: &[f64], percents: &[f64]) -> bool {
    claimed.contains(&x)
        || (percents.contains(&x) && claimed.iter().any(|c| (c * 100.0 - x).abs() <= 1e-9))
}

/// Does `u` occur in `text` as a whole token, not preceded or followed by an ASCII letter,
/// digit or `_`? An empty `u` never does.
pub fn token_occurs(text: &str, u: &str) -> bool {
    if u.is_empty() {
        return false;
    }
    let w = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(u)
        .any(|(i, _)| !w(text[..i].chars().next_back()) && !w(text[i + u.len()..].chars().next()))
}

/// Prose coverage (§10.1): (coverage, uncovered assertions).
fn coverage(ctx: &Ctx<'_>, ans: &Value) -> (f64, Vec<Value>) {
    let text = ans["text"].as_str().unwrap_or_default();
    let claims = ans["claims"].as_array().cloned().unwrap_or_default();
    let mut claimed = Vec::new();
    for c in &claims {
        if let Value::Object(m) = c {
            for (k, v) in m {
                if k != "id" && k != "evidence" {
                    numeric_leaves(v, &mut claimed);
                }
            }
        }
    }
    let mut lex = BTreeSet::new();
    for r in ctx.trace["steps"].as_array().into_iter().flatten() {
        if r["status"] != "ok" {
            continue;
        }
        if let Some(env) = r["result_digest"]
            .as_str()
            .and_then(|d| ctx.results.envelope_shared(d))
        {
            let mut v = Vec::new();
            uid_strings(&env, false, &mut v);
            lex.extend(v);
        }
    }
    let mentions: Vec<&String> = lex.iter().filter(|u| token_occurs(text, u)).collect();
    let claim_uids: BTreeSet<String> = claims
        .iter()
        .flat_map(|c| c["uids"].as_array().cloned().unwrap_or_default())
        .filter_map(|u| u.as_str().map(String::from))
        .collect();
    let claimed_f: Vec<f64> = claimed.iter().map(|c| num_f(*c)).collect();
    let percents = prose_percents(text);
    // Companions of claimed times (the reporter's "(2004-04-15T06:00:00Z)") are no numbers.
    let numbers = prose_numbers(&mask_utc_companions(text, &claimed_f));
    let mut unc: Vec<Value> = numbers
        .iter()
        .filter(|x| !number_covered(**x, &claimed_f, &percents))
        .map(|x| tgms_operators::json::float(*x))
        .collect();
    unc.extend(
        mentions
            .iter()
            .filter(|u| !claim_uids.contains(**u))
            .map(|u| json!(u)),
    );
    let denom = numbers.len() + mentions.len();
    let cov = if denom == 0 {
        1.0
    } else {
        1.0 - unc.len() as f64 / denom as f64
    };
    (cov, unc)
}

/// The first claim whose id an earlier claim of a schema-valid answer object already
/// uses, as a schema violation naming the id and both positions. Verdicts, gating and ask
/// records name claims by id, so two claims may not share one (D-V10, ours: the spec's
/// answer schema does not require unique ids).
fn duplicate_claim_id(ans: &Value) -> Option<String> {
    let mut first = std::collections::HashMap::new();
    for (i, c) in ans["claims"].as_array()?.iter().enumerate() {
        let id = c["id"].as_str()?;
        if let Some(j) = first.insert(id, i) {
            first.insert(id, j);
            return Some(format!(
                "claims[{i}].id {} repeats the id of claims[{j}]: give every claim its own id",
                canon::to_string(&Value::from(id))
            ));
        }
    }
    None
}

/// `verify(answer_object, trace, result_store, store?, honor_truncation)` (§8.7).
pub fn verify(ctx: &Ctx<'_>, ans: &Value) -> Value {
    let mut vs = Vec::new();
    schema::validate(
        &answer_schema(),
        ans,
        &mut Vec::new(),
        Some(&["text", "claims", "answer"]),
        &mut vs,
    );
    let violation = schema::first_violation(vs)
        .map(|e| e.message)
        .or_else(|| duplicate_claim_id(ans));
    if let Some(error) = violation {
        return json!({"schema_valid": false, "error": error, "claims": [],
            "metrics": {"ucr": 1.0, "coverage": 0.0, "n_claims": 0}});
    }
    let claims = ans["claims"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    let mut n_unsup = 0usize;
    for c in &claims {
        let (v, reason) = check_claim(ctx, c);
        if v == UNSUPPORTED {
            n_unsup += 1;
        }
        out.push(json!({"id": c["id"], "type": c["type"], "verdict": v, "reason": reason}));
    }
    let answer_verdict = match ans.get("answer") {
        Some(a) => {
            let (v, r) = check_answer(ctx, a);
            json!({"verdict": v, "reason": r})
        }
        None => Value::Null,
    };
    let n = claims.len();
    let ucr = if n == 0 {
        0.0
    } else {
        n_unsup as f64 / n as f64
    };
    let (cov, unc) = coverage(ctx, ans);
    let f = tgms_operators::json::float;
    json!({"schema_valid": true, "claims": out,
        "answer_verdict": answer_verdict.get("verdict").cloned().unwrap_or(Value::Null),
        "answer_reason": answer_verdict.get("reason").cloned().unwrap_or(Value::Null),
        "metrics": {"n_claims": n, "ucr": f(ucr), "ucr_gated": f(ucr), "coverage": f(cov),
            "uncovered_assertions": unc}})
}

/// Gating (§9): drops every `unsupported` claim (all types, D-V6) and an `unsupported`
/// typed answer, then re-verifies. Returns (gated answer object, its verification).
pub fn gate(ctx: &Ctx<'_>, ans: &Value) -> (Value, Value) {
    let first = verify(ctx, ans);
    if first["schema_valid"] != Value::Bool(true) {
        // An answer object the verifier cannot read has no claim it could check: nothing
        // of it is passed on (D-V9, ours; the spec left the object unchanged).
        let empty = json!({"text": "", "claims": []});
        let second = verify(ctx, &empty);
        return (empty, second);
    }
    let mut gated = ans.clone();
    let verdicts = first["claims"].as_array().cloned().unwrap_or_default();
    if let Some(Value::Array(cs)) = gated.get_mut("claims") {
        let kept: Vec<Value> = cs
            .iter()
            .zip(verdicts.iter())
            .filter(|(_, v)| v["verdict"] != UNSUPPORTED)
            .map(|(c, _)| c.clone())
            .collect();
        *cs = kept;
    }
    if first["answer_verdict"] == UNSUPPORTED {
        if let Value::Object(m) = &mut gated {
            m.remove("answer");
        }
    }
    let second = verify(ctx, &gated);
    (gated, second)
}

/// The mechanical reporter (§7.2): the answer object of a plan's trace.
pub fn mechanical_answer(kind: &str, from: &str, trace: &Value) -> Value {
    let step = step_prefix(from).to_string();
    let ans = trace.get("answer").cloned().unwrap_or(Value::Null);
    let dotted = from.contains('.');
    let mut claims = Vec::new();
    let with_from = |mut c: Map<String, Value>| {
        if dotted {
            c.insert("from".into(), json!(from));
        }
        Value::Object(c)
    };
    let base = |ty: &str, v: &Value| -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("id".into(), json!("c1"));
        m.insert("type".into(), json!(ty));
        m.insert("value".into(), v.clone());
        m.insert("evidence".into(), json!([step]));
        m
    };
    let text = match (kind, &ans) {
        // An estimate of approximate evidence is phrased as one, with its interval; every
        // number of the sentence is backed by a claim (`docs/approximate.md`).
        ("count" | "value", Value::Number(_)) if trace.get("answer_interval").is_some() => {
            approximate_claims(kind, from, &step, &trace["answer_interval"], &mut claims)
        }
        // A count whose answer is not a number falls through to the text case (a claim
        // value must be a scalar, §7.1).
        ("count" | "value", Value::Number(_)) => {
            claims.push(with_from(base(kind, &ans)));
            format!(
                "The answer is {}{}.",
                canon::to_string(&ans),
                utc_companion(last_field(from), &ans)
            )
        }
        // A yes/no answer (`compute` `compare`): the claim carries the boolean itself.
        ("value", Value::Bool(b)) => {
            claims.push(with_from(base("value", &ans)));
            format!("The answer is {} ({b}).", if *b { "yes" } else { "no" })
        }
        ("value", Value::String(s)) => {
            claims.push(with_from(base("value", &ans)));
            format!("The answer is {s}.")
        }
        ("entity_set", _) if !ans.is_null() => {
            let u = match &ans {
                Value::Array(a) => uids_of_list(a),
                other => uids_of_list(std::slice::from_ref(other)),
            };
            let mut m = Map::new();
            m.insert("id".into(), json!("c1"));
            m.insert("type".into(), json!("entity"));
            m.insert("uids".into(), json!(u));
            m.insert("evidence".into(), json!([step]));
            if dotted {
                m.insert("complete".into(), json!(true));
            }
            claims.push(with_from(m));
            if u.is_empty() {
                "The entities are: (none).".into()
            } else {
                format!("The entities are: {}.", u.join(", "))
            }
        }
        ("interval", Value::Object(o))
            if (o.contains_key("t_a") && o.contains_key("t_b"))
                || (o.contains_key("start") && o.contains_key("end")) =>
        {
            let (ka, kb) = if o.contains_key("t_a") && o.contains_key("t_b") {
                ("t_a", "t_b")
            } else {
                ("start", "end")
            };
            if dotted {
                for (id, k) in [("c1", ka), ("c2", kb)] {
                    claims.push(json!({"id": id, "type": "value", "value": o[k], "from": format!("{from}.{k}"), "evidence": [step]}));
                }
            }
            let iso = |v: &Value| {
                v.as_i64()
                    .filter(|&us| reads_as_date(us))
                    .map(tgms_operators::timefmt::iso_utc)
            };
            let utc = match (iso(&o[ka]), iso(&o[kb])) {
                (Some(a), Some(b)) => format!(" ({a} to {b})"),
                _ => String::new(),
            };
            format!(
                "The interval is [{}, {}){utc}.",
                canon::to_string(&o[ka]),
                canon::to_string(&o[kb])
            )
        }
        (_, Value::Null) => "No answer.".into(),
        _ => canon::to_string(&ans).chars().take(400).collect(),
    };
    let mut out = json!({"text": text, "claims": claims});
    if !ans.is_null() {
        out["answer"] = json!({"kind": kind, "value": ans, "from": from, "evidence": [step],
            "complete": trace["answer_complete"] == Value::Bool(true)});
    }
    out
}

/// The last field name of a from-path (`s1.rows[0].min_vt_s` → `min_vt_s`).
fn last_field(from: &str) -> &str {
    let f = from.rsplit('.').next().unwrap_or(from);
    f.split('[').next().unwrap_or(f)
}

/// Whether the reporter writes the UTC reading of instant `us`: from 10^11 µs
/// (1970-01-02T03:46:40Z) on, so the small synthetic times of test stores (and the spec's
/// test vectors) read as before.
fn reads_as_date(us: i64) -> bool {
    us >= tgms_operators::seconds_guard::SECONDS_MAX
}

/// ` (<ISO-8601 UTC>)` after an integer instant of field `key` (docs/times.md: people read
/// times beside the integer), else nothing. Only in prose: JSON keeps the integer alone.
fn utc_companion(key: &str, v: &Value) -> String {
    use tgms_operators::timefmt::{field_kind, iso_utc, FieldKind};
    match (field_kind(key), v.as_i64()) {
        (Some(FieldKind::Instant), Some(us)) if reads_as_date(us) => {
            format!(" ({})", iso_utc(us))
        }
        _ => String::new(),
    }
}

/// `text` with every ISO-8601 UTC instant that writes one of the `claimed` numbers (µs)
/// blanked: the reporter's companions of claimed times assert nothing beyond the claim. An
/// instant that writes no claimed number stays and its digits count as assertions.
pub fn mask_utc_companions(text: &str, claimed: &[f64]) -> String {
    let is_iso = |c: char| c.is_ascii_digit() || matches!(c, '-' | ':' | '.' | 'T' | 'Z');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (head, tail) = rest.split_at(start);
        out.push_str(head);
        let run_len = tail.find(|c: char| !is_iso(c)).unwrap_or(tail.len());
        // The instant ends at its last `Z` (a sentence's period may follow it).
        let token = &tail[..run_len];
        let end = token.rfind('Z').map_or(0, |z| z + 1);
        let us = (end >= 20)
            .then(|| tgms_operators::timeparse::parse_instant_us(&token[..end]).ok())
            .flatten();
        match us {
            Some(us) if claimed.contains(&(us as f64)) => {
                out.push(' ');
                rest = &tail[end..];
            }
            _ => {
                out.push_str(token);
                rest = &tail[run_len..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A number as a JSON integer when it is one (interval ends of counts), else a float.
fn int_or_float(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        tgms_operators::json::float(x)
    }
}

/// The mechanical claims and sentence of an approximate answer `iv` (the trace's
/// `answer_interval`): `c1` the estimate rounded to an integer when the interval ends are
/// integers (clamped into the interval), `c2`/`c3` the interval's ends, `c4` its confidence;
/// "The answer is about N (95% interval a–b)."
fn approximate_claims(
    kind: &str,
    from: &str,
    step: &str,
    iv: &Value,
    claims: &mut Vec<Value>,
) -> String {
    let g = |k: &str| iv[k].as_f64().unwrap_or(0.0);
    let (est, lo, hi, conf) = (g("estimate"), g("ci_low"), g("ci_high"), g("confidence"));
    let integral = lo.fract() == 0.0 && hi.fract() == 0.0;
    let shown = if integral {
        int_or_float(est.round().clamp(lo, hi))
    } else {
        tgms_operators::json::float(est)
    };
    let path = iv["path"].as_str().unwrap_or_default();
    let (lo_v, hi_v) = (int_or_float(lo), int_or_float(hi));
    claims
        .push(json!({"id": "c1", "type": kind, "value": shown, "from": from, "evidence": [step]}));
    claims.push(json!({"id": "c2", "type": "value", "value": lo_v, "from": format!("{path}.ci_low"), "evidence": [step]}));
    claims.push(json!({"id": "c3", "type": "value", "value": hi_v, "from": format!("{path}.ci_high"), "evidence": [step]}));
    claims.push(
        json!({"id": "c4", "type": "value", "value": tgms_operators::json::float(conf),
        "from": format!("{step}.error_bound.confidence"), "evidence": [step]}),
    );
    format!(
        "The answer is about {} ({}% interval {}–{}).",
        canon::to_string(&shown),
        approx::percent(conf),
        canon::to_string(&lo_v),
        canon::to_string(&hi_v)
    )
}

/// One task run for the campaign metrics (§10.2).
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The answer object's verification before gating (§8.7), if the verifier ran.
    pub verification: Option<Value>,
    /// The gated answer object (§9), if any.
    pub gated_answer: Option<Value>,
    /// The verification of the gated object.
    pub gated_verification: Option<Value>,
    /// Exact match of the answer against the gold (`evaluation.md` §3.9).
    pub exact_match: f64,
}

/// Campaign-level metrics (§10.2): emitted answers, answer coverage, conditional accuracy,
/// the unsupported-claim rate ungated and gated, overall accuracy.
pub fn campaign_metrics(runs: &[RunRecord]) -> Value {
    let has_unsup = |v: &Option<Value>| {
        v.as_ref().is_some_and(|v| {
            v["claims"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["verdict"] == UNSUPPORTED))
        })
    };
    let emitted: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| {
            r.gated_answer
                .as_ref()
                .and_then(|a| a["claims"].as_array())
                .is_some_and(|c| !c.is_empty())
        })
        .collect();
    let with_data: Vec<&&RunRecord> = emitted
        .iter()
        .filter(|r| r.verification.is_some())
        .collect();
    let ratio = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let f = tgms_operators::json::float;
    let cond = if emitted.is_empty() {
        0.0
    } else {
        emitted.iter().map(|r| r.exact_match).sum::<f64>() / emitted.len() as f64
    };
    let overall = if runs.is_empty() {
        0.0
    } else {
        emitted.iter().map(|r| r.exact_match).sum::<f64>() / runs.len() as f64
    };
    json!({
        "runs": runs.len(),
        "emitted": emitted.len(),
        "answer_coverage": f(ratio(emitted.len(), runs.len())),
        "conditional_accuracy": f(cond),
        "overall_accuracy": f(overall),
        "unsupported_claim_rate": f(ratio(with_data.iter().filter(|r| has_unsup(&r.verification)).count(), with_data.len())),
        "unsupported_claim_rate_gated": f(ratio(with_data.iter().filter(|r| has_unsup(&r.gated_verification)).count(), with_data.len())),
    })
}
