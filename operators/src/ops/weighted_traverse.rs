//! `weighted_traverse` (O17, ours, `operators.md` §25, D-O6): nodes around a seed ranked by
//! the best product of (link-type multiplier × weight) along node-simple paths of at most
//! `max_depth` typed links valid at instant `t`. Links are read from the adjacency of the
//! nodes the enumeration can stand at (within `max_depth − 1` usable hops), not by scanning
//! the instant; the
//! enumeration counts one unit of the §7.5 budget (500,000) per (path prefix, candidate
//! link) examination.

use super::stored_json;
use super::tgraph::{budget_error, sat, WORK_BUDGET};
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::json::{float, round9};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use tgms_engine::Stats;

const MANUAL: &str = "Ranks the nodes within `max_depth` (≤ 3) hops of `seed` over links valid at instant `t` whose `props.link_type` is `entity`, `semantic`, `temporal` or `causal`: a node's score is the best product along a path of (type multiplier × `props.weight`), multipliers default to causal 1.5, entity 1.2, semantic 0.8, temporal 0.8 (override with `multipliers`). Rows give the score, the best path and its link types, highest first. Example: `{\"seed\": {\"$ref\": \"s1.rows[0].uid\"}, \"t\": 1773561600000000, \"max_depth\": 2}`.";

const SUGGESTIONS: &[&str] = &[
    "reduce max_depth",
    "restrict rel_types",
    "use direction out or in",
];

/// Link types in the order of the multipliers echo.
const TYPES: [&str; 4] = ["entity", "semantic", "temporal", "causal"];
const DEFAULTS: [f64; 4] = [1.2, 0.8, 0.8, 1.5];

/// The registry entry.
pub fn spec() -> OpSpec {
    let m = || json!({"type": "number", "minimum": 0});
    OpSpec {
        name: "weighted_traverse",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("seed", frag::uid()).uids(&[""]),
            ArgDecl::req("t", frag::timestamp()),
            ArgDecl::opt(
                "max_depth",
                json!({"type": "integer", "minimum": 1, "maximum": 3}),
                json!(3),
            ),
            ArgDecl::opt(
                "direction",
                json!({"type": "string", "enum": ["out", "in", "both"]}),
                json!("out"),
            ),
            ArgDecl::opt(
                "multipliers",
                json!({"type": "object", "additionalProperties": false,
                    "properties": {"entity": m(), "semantic": m(), "temporal": m(), "causal": m()}}),
                json!({}),
            ),
            common::rel_types(),
            ArgDecl::opt(
                "min_score",
                json!({"type": "number", "minimum": 0}),
                json!(0.0),
            ),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![],
        cost: Some(cost),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows(
                "obj{uid: uid, score: float, depth: int, path: list<uid>, link_types: list<str>}",
                RowKey::Field("uid"),
            )
            .field(
                "multipliers",
                "obj{entity: float, semantic: float, temporal: float, causal: float}",
            )
            .field("skipped_edges", "int")
            .build(),
        kernel,
    }
}

/// §25 with the rows of the walk: `rows` = the seed's adjacency for `max_depth` hops
/// (`cost::adjacency_estimate`; §25 says `n_edge_versions`, a store scan this walk never
/// makes); `d = max(1, 2 n_edge_versions / max(1, n_entities))`;
/// `expansions = int(min(Σ_{i=1..max_depth} d^i, 2^40))`.
fn cost(args: &Args, stats: &Stats) -> Estimate {
    let n = sat(stats.n_edge_versions);
    let depth = args.int("max_depth").unwrap_or(3);
    let rows = crate::cost::adjacency_estimate(stats, 1, depth).rows_scanned_est;
    let d = (2.0 * n as f64 / sat(stats.n_entities).max(1) as f64).max(1.0);
    let cap = 1_099_511_627_776.0f64;
    let mut s = 0.0f64;
    for i in 1..=depth {
        s += d.powi(i as i32);
        if s >= cap {
            s = cap;
            break;
        }
    }
    Estimate::new(rows, s.min(cap) as i64)
}

/// One link of the instant: eid, and (type index, weight) when usable.
struct Link {
    eid: String,
    usable: Option<(usize, f64)>,
}

fn usable(props: &Value) -> Option<(usize, f64)> {
    let ty = props.get("link_type").and_then(Value::as_str)?;
    let k = TYPES.iter().position(|x| *x == ty)?;
    let w = match props.get("weight") {
        None => 1.0,
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite() && *x >= 0.0)?,
        Some(_) => return None,
    };
    Some((k, w))
}

struct Best {
    score: f64,
    depth: usize,
    eids: Vec<String>,
    path: Vec<u32>,
    types: Vec<usize>,
}

struct Walk<'a> {
    links: &'a [Link],
    adj: &'a [Vec<(usize, u32)>],
    mult: [f64; 4],
    max_depth: usize,
    units: u64,
    skipped: BTreeSet<usize>,
    on_path: Vec<bool>,
    path: Vec<u32>,
    edges: Vec<usize>,
    best: HashMap<u32, Best>,
}

impl Walk<'_> {
    fn go(&mut self, u: u32, s: f64) -> Result<(), OpError> {
        if self.edges.len() >= self.max_depth {
            return Ok(());
        }
        let adj = self.adj;
        for &(li, v) in &adj[u as usize] {
            self.units += 1;
            if self.units > WORK_BUDGET {
                return Err(budget_error(
                    "weighted_traverse",
                    WORK_BUDGET,
                    self.units,
                    SUGGESTIONS,
                ));
            }
            let l = &self.links[li];
            let Some((k, w)) = l.usable else {
                self.skipped.insert(li);
                continue;
            };
            if self.on_path[v as usize] {
                continue;
            }
            let s2 = s * (self.mult[k] * w);
            self.on_path[v as usize] = true;
            self.path.push(v);
            self.edges.push(li);
            self.record(v, s2);
            self.go(v, s2)?;
            self.edges.pop();
            self.path.pop();
            self.on_path[v as usize] = false;
        }
        Ok(())
    }

    fn record(&mut self, v: u32, s: f64) {
        let score = round9(s).unwrap_or(f64::NAN);
        let depth = self.edges.len();
        let eids: Vec<String> = self
            .edges
            .iter()
            .map(|&i| self.links[i].eid.clone())
            .collect();
        let better = match self.best.get(&v) {
            None => true,
            Some(b) => score > b.score || (score == b.score && (depth, &eids) < (b.depth, &b.eids)),
        };
        if better {
            let types = self
                .edges
                .iter()
                .filter_map(|&i| self.links[i].usable.map(|x| x.0))
                .collect();
            self.best.insert(
                v,
                Best {
                    score,
                    depth,
                    eids,
                    path: self.path.clone(),
                    types,
                },
            );
        }
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let seed = args.str("seed")?;
    if !snap.has_uid(seed) {
        return Err(OpError::unknown_uid(seed));
    }
    let t = args.int("t")?;
    let rels = args.str_list("rel_types")?;
    let mut mult = DEFAULTS;
    if let Some(m) = args.get("multipliers").and_then(Value::as_object) {
        for (i, ty) in TYPES.iter().enumerate() {
            if let Some(x) = m.get(*ty).and_then(Value::as_f64) {
                mult[i] = x;
            }
        }
    }
    let min_score = args.get("min_score").and_then(Value::as_f64).unwrap_or(0.0);
    let as_of = args.as_of_tt();
    let dir = args.str("direction")?;
    let max_depth = args.int("max_depth")?.max(0) as usize;
    let w_t = Some((t, t.saturating_add(1)));
    let rel_ok = |r: &str| rels.as_ref().is_none_or(|rs| rs.iter().any(|x| x == r));
    // The links examined are those of nodes within max_depth − 1 usable hops of the seed:
    // load their adjacency breadth-first (the link set restricted to what the enumeration
    // can see), instead of scanning the instant.
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut uids: Vec<&str> = Vec::new();
    let mut links: Vec<Link> = Vec::new();
    let mut link_ix: HashMap<String, usize> = HashMap::new();
    let mut adj: Vec<Vec<(usize, u32)>> = Vec::new();
    ids.insert(seed, 0);
    uids.push(seed);
    adj.push(Vec::new());
    let mut queued: Vec<bool> = vec![true];
    let mut frontier: Vec<u32> = vec![0];
    for _depth in 0..max_depth {
        let mut next = Vec::new();
        for &u in &frontier {
            let name = uids[u as usize];
            let outs = if dir != "in" {
                snap.out_edges(name, w_t, as_of)
            } else {
                Vec::new()
            };
            let ins = if dir != "out" {
                snap.in_edges(name, w_t, as_of)
            } else {
                Vec::new()
            };
            for (e, out) in outs
                .into_iter()
                .map(|e| (e, true))
                .chain(ins.into_iter().map(|e| (e, false)))
            {
                if e.src() == e.dst() || !rel_ok(e.rel_type()) {
                    continue;
                }
                let eid = e.eid();
                let li = match link_ix.get(&eid) {
                    Some(&i) => i,
                    None => {
                        let props = stored_json(e.props())?;
                        links.push(Link {
                            eid: eid.clone(),
                            usable: usable(&props),
                        });
                        link_ix.insert(eid, links.len() - 1);
                        links.len() - 1
                    }
                };
                let other = if out { e.dst() } else { e.src() };
                let v = match ids.get(other) {
                    Some(&v) => v,
                    None => {
                        let v = uids.len() as u32;
                        ids.insert(other, v);
                        uids.push(other);
                        adj.push(Vec::new());
                        queued.push(false);
                        v
                    }
                };
                if links[li].usable.is_some() && !queued[v as usize] {
                    queued[v as usize] = true;
                    next.push(v);
                }
                adj[u as usize].push((li, v));
            }
        }
        frontier = next;
    }
    let s0 = 0u32;
    let mut w = Walk {
        links: &links,
        adj: &adj,
        mult,
        max_depth,
        units: 0,
        skipped: BTreeSet::new(),
        on_path: vec![false; uids.len()],
        path: vec![s0],
        edges: Vec::new(),
        best: HashMap::new(),
    };
    w.on_path[s0 as usize] = true;
    w.go(s0, 1.0)?;
    let mut best: Vec<(u32, Best)> = w
        .best
        .into_iter()
        .filter(|(_, b)| b.score >= min_score)
        .collect();
    best.sort_by(|(u, x), (v, y)| {
        y.score
            .total_cmp(&x.score)
            .then(x.depth.cmp(&y.depth))
            .then(uids[*u as usize].cmp(uids[*v as usize]))
    });
    let rows: Vec<Value> = best
        .iter()
        .map(|(v, b)| {
            json!({"uid": uids[*v as usize], "score": float(b.score), "depth": b.depth,
                "path": b.path.iter().map(|&x| uids[x as usize]).collect::<Vec<_>>(),
                "link_types": b.types.iter().map(|&k| TYPES[k]).collect::<Vec<_>>()})
        })
        .collect();
    out.paged("rows", rows)?;
    let mut m = serde_json::Map::new();
    for (i, ty) in TYPES.iter().enumerate() {
        m.insert(ty.to_string(), float(mult[i]));
    }
    out.set("multipliers", Value::Object(m));
    out.set("skipped_edges", json!(w.skipped.len()));
    Ok(())
}
