//! `co_active` (O11, `operators.md` §19, D-O4): pairs of believed edge versions whose valid
//! intervals stand in a strict Allen relation (`overlaps`, `during`, `meets`, `before` with a
//! gap). No window. The join sorts `B` by `vt_s` and, per `a`, walks only the `vt_s` range
//! the relation allows; the §7.5 budget of 50,000 counts **qualifying** pairs only (D-O4).

use super::edge_brief;
use super::edge_pred::{self, apply_opt, EdgePred, Verdict};
use crate::args::Args;
use crate::cost::{adjacency_estimate, scan_estimate};
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use tgms_engine::{EdgeScan, EdgeVersion};

const MANUAL: &str = "Interval join: pairs of edge versions (a from `a_spec`, b from `b_spec`; null fields match anything) whose valid intervals satisfy `overlaps` (a starts first and ends inside b), `during` (a strictly inside b), `meets` (a ends exactly when b starts) or `before` (b starts within `gap` µs after a ends). No window: all believed versions take part; narrow the specs. Example: `{\"a_spec\": {\"src\": {\"$ref\": \"s1.rows[0].uid\"}}, \"b_spec\": {\"src\": {\"$ref\": \"s1.rows[0].uid\"}}, \"allen_relation\": {\"relation\": \"before\", \"gap\": 3600000000}}` → `rows_total`. Edge predicates: `prop_filter` (`{prop, cmp, value}` as in `aggregate_events`; events whose property is absent or of another type are excluded and counted in `prop_coercion`) and `self_loops` (`exclude` or `only`) hide the events they reject from the pattern.";

/// The §7.5 budget: qualifying pairs.
pub const PAIR_BUDGET: u64 = 50_000;
const SUGGESTIONS: &[&str] = &["narrow a_spec/b_spec (src, dst, rel_type)"];

const DESC: &str =
    "obj{eid: hex, vid: hex, src: uid, dst: uid, rel_type: str, vt_s: int, vt_e: int}";

fn edge_spec() -> Value {
    let f = || json!({"type": ["string", "null"], "default": null});
    json!({"type": "object", "additionalProperties": false,
        "properties": {"src": f(), "dst": f(), "rel_type": f()}})
}

fn allen_relation() -> Value {
    let mut gap = crate::registry::frag::duration(true, "the largest gap of `before`");
    gap["default"] = Value::Null;
    json!({"type": "object", "additionalProperties": false,
        "properties": {
            "relation": {"type": "string", "enum": ["overlaps", "during", "before", "meets"]},
            "gap": gap},
        "required": ["relation"]})
}

fn pair_key(row: &Value) -> Value {
    json!([row["a"]["vid"], row["b"]["vid"]])
}

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "co_active",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("a_spec", edge_spec()).uids(&[".src", ".dst"]),
            ArgDecl::req("b_spec", edge_spec()).uids(&[".src", ".dst"]),
            ArgDecl::req("allen_relation", allen_relation()),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ]
        .into_iter()
        .chain(edge_pred::pattern_args())
        .collect(),
        validators: vec![validate_before_gap, edge_pred::validate_prop_filter],
        cost: Some(cost),
        coeff: 115.0,
        outputs: Outputs::default()
            .rows(
                &format!("obj{{a: {DESC}, b: {DESC}}}"),
                RowKey::Derived {
                    spec: "[a.vid, b.vid]",
                    of: pair_key,
                },
            )
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

/// With a node (`src` or `dst`) in both specs, the two nodes' adjacency
/// (`cost::adjacency_estimate`); otherwise `scan_estimate`; either with the `prop_filter`
/// surcharge (every version read is a candidate).
fn cost(args: &Args, stats: &tgms_engine::Stats) -> crate::cost::Estimate {
    let pinned = |k: &str| {
        let s = args.get(k);
        field(s, "src").or(field(s, "dst")).is_some()
    };
    let est = if pinned("a_spec") && pinned("b_spec") {
        adjacency_estimate(stats, 2, 1)
    } else {
        scan_estimate(args, stats)
    };
    edge_pred::priced(est, args, est.rows_scanned_est)
}

fn gap_of(args: &Args) -> Option<i64> {
    args.get("allen_relation")
        .and_then(|r| r.get("gap"))
        .and_then(Value::as_i64)
}

fn relation(args: &Args) -> &str {
    args.get("allen_relation")
        .and_then(|r| r.get("relation"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn validate_before_gap(args: &Args) -> Result<(), OpError> {
    if relation(args) == "before" && gap_of(args).is_none() {
        return Err(OpError::invalid("allen_relation 'before' requires gap"));
    }
    Ok(())
}

/// A non-empty string field of a spec (null / "" = no constraint).
fn field<'a>(spec: Option<&'a Value>, k: &str) -> Option<&'a str> {
    spec.and_then(|s| s.get(k))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let (sa, sb) = (args.get("a_spec"), args.get("b_spec"));
    for (s, k) in [(sa, "src"), (sa, "dst"), (sb, "src"), (sb, "dst")] {
        if let Some(u) = field(s, k) {
            if !snap.has_uid(u) {
                return Err(OpError::unknown_uid(u));
            }
        }
    }
    let as_of = args.as_of_tt();
    let select = |s: Option<&Value>| -> Vec<EdgeVersion<'_>> {
        let (src, dst, rel) = (field(s, "src"), field(s, "dst"), field(s, "rel_type"));
        let touch: Vec<String> = src.or(dst).map(str::to_string).into_iter().collect();
        let rels: Vec<String> = rel.map(str::to_string).into_iter().collect();
        let scan = EdgeScan {
            as_of_tt: as_of,
            vt_window: None,
            rel_types: rel.map(|_| rels.as_slice()),
            touching: if touch.is_empty() {
                None
            } else {
                Some((touch.as_slice(), tgms_engine::Touch::Either))
            },
        };
        snap.edge_scan(&scan)
            .into_iter()
            .filter(|e| src.is_none_or(|u| e.src() == u) && dst.is_none_or(|u| e.dst() == u))
            .collect()
    };
    // The edge predicate applies to both sides; `prop_coercion` counts each distinct
    // version it dropped as coerced once (a version may be selected by both specs).
    let pred = EdgePred::parse(args)?;
    let (a_set, _) = apply_opt(pred.as_ref(), select(sa))?;
    let (b_set, _) = apply_opt(pred.as_ref(), select(sb))?;
    let coerced = match &pred {
        Some(p) if p.prop.is_some() => {
            let mut seen = std::collections::BTreeSet::new();
            for e in select(sa).into_iter().chain(select(sb)) {
                if p.verdict(&e)? == Verdict::Coerced {
                    seen.insert(e.vid());
                }
            }
            seen.len() as u64
        }
        _ => 0,
    };
    // B sorted by vt_s (edge_scan order is (vt_s, eid)), with vids cached.
    let b_vid: Vec<String> = b_set.iter().map(EdgeVersion::vid).collect();
    let b_s: Vec<i64> = b_set.iter().map(EdgeVersion::vt_s).collect();
    let rel = relation(args).to_string();
    let gap = gap_of(args).unwrap_or(0);
    let max_end = MaxTree::new(&b_set.iter().map(EdgeVersion::vt_e).collect::<Vec<_>>());
    let mut pairs: Vec<(i64, String, i64, usize, usize)> = Vec::new();
    let mut count = 0u64;
    let mut take = |ai: usize, a_vid: &String, bi: usize| -> Result<(), OpError> {
        if b_vid[bi] == *a_vid {
            return Ok(());
        }
        count += 1;
        if count > PAIR_BUDGET {
            return Err(super::tgraph::budget_error(
                "co_active",
                PAIR_BUDGET,
                count,
                SUGGESTIONS,
            ));
        }
        pairs.push((a_set[ai].vt_s(), a_vid.clone(), b_s[bi], bi, ai));
        Ok(())
    };
    if rel == "during" {
        // Sweep A by vt_s; the B versions starting before a.s sit in a set keyed by vt_e, so
        // each a reads exactly the b with b.e > a.e: work O((|A| + |B|) log + pairs), never
        // the |A|·|B| candidate product.
        let mut open: std::collections::BTreeSet<(i64, usize)> = Default::default();
        let mut j = 0usize;
        for (ai, a) in a_set.iter().enumerate() {
            while j < b_set.len() && b_s[j] < a.vt_s() {
                open.insert((b_set[j].vt_e(), j));
                j += 1;
            }
            let a_vid = a.vid();
            let from = a.vt_e().saturating_add(1);
            for &(_, bi) in open.range((from, 0)..) {
                take(ai, &a_vid, bi)?;
            }
        }
    }
    for (ai, a) in a_set.iter().enumerate() {
        if rel == "during" {
            break;
        }
        let (a_s, a_e) = (a.vt_s(), a.vt_e());
        // The half-open range of b.vt_s values the relation allows.
        let (lo, hi): (usize, usize) = match rel.as_str() {
            // a.s < b.s < a.e
            "overlaps" => (
                b_s.partition_point(|&x| x <= a_s),
                b_s.partition_point(|&x| x < a_e),
            ),
            // b.s == a.e
            "meets" => (
                b_s.partition_point(|&x| x < a_e),
                b_s.partition_point(|&x| x <= a_e),
            ),
            // a.e < b.s <= a.e + gap
            _ => (
                b_s.partition_point(|&x| x <= a_e),
                b_s.partition_point(|&x| x <= a_e.saturating_add(gap)),
            ),
        };
        let a_vid = a.vid();
        if rel == "overlaps" {
            // Only the b of the range with b.e > a.e, found through the max-end tree.
            let mut hits = Vec::new();
            max_end.collect(lo, hi, a_e, &mut hits);
            for bi in hits {
                take(ai, &a_vid, bi)?;
            }
            continue;
        }
        for bi in lo..hi {
            take(ai, &a_vid, bi)?;
        }
    }
    pairs.sort_by(|x, y| (x.0, &x.1, x.2, &b_vid[x.3]).cmp(&(y.0, &y.1, y.2, &b_vid[y.3])));
    let rows: Vec<Value> = pairs
        .iter()
        .map(|&(_, _, _, bi, ai)| json!({"a": edge_brief(&a_set[ai]), "b": edge_brief(&b_set[bi])}))
        .collect();
    out.paged("rows", rows)?;
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    Ok(())
}

/// A max segment tree over the B versions' `vt_e` in `vt_s` order: lists the indices of a
/// `vt_s` range whose `vt_e` exceeds a threshold in O((1 + hits) · log |B|), so `overlaps`
/// never walks the candidates that end too early.
struct MaxTree {
    n: usize,
    t: Vec<i64>,
}

impl MaxTree {
    fn new(v: &[i64]) -> MaxTree {
        let n = v.len().next_power_of_two().max(1);
        let mut t = vec![i64::MIN; 2 * n];
        t[n..n + v.len()].copy_from_slice(v);
        for i in (1..n).rev() {
            t[i] = t[2 * i].max(t[2 * i + 1]);
        }
        MaxTree { n, t }
    }

    /// Indices `i` in `[lo, hi)` with `v[i] > thr`, ascending.
    fn collect(&self, lo: usize, hi: usize, thr: i64, out: &mut Vec<usize>) {
        self.walk(1, 0, self.n, lo, hi, thr, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        node: usize,
        l: usize,
        r: usize,
        lo: usize,
        hi: usize,
        thr: i64,
        out: &mut Vec<usize>,
    ) {
        if r <= lo || hi <= l || self.t[node] <= thr {
            return;
        }
        if r - l == 1 {
            out.push(l);
            return;
        }
        let m = (l + r) / 2;
        self.walk(2 * node, l, m, lo, hi, thr, out);
        self.walk(2 * node + 1, m, r, lo, hi, thr, out);
    }
}
