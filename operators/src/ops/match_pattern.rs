//! `match_pattern` (issue 21 item 4, ours): small static multi-edge patterns over the window's
//! edge events. A pattern is 2–4 directed edges between the variables `A`–`D` (connected,
//! variables bound to pairwise distinct nodes), optionally time-ordered (`ordered` or
//! `strict`, with an optional `delta` span), with optional *absent* edges ("A rated B and B
//! rated C, but A never rated C": no event of that pair in the same window and belief state).
//!
//! Semantics (documented in `docs/plans-changes.md` §6):
//! - events = believed edge versions with `t_a <= vt_s < t_b` (with `node_filter`: both
//!   endpoints in it; with `prop_filter` / `self_loops`: the ones the predicate keeps), in the
//!   total order `(vt_s, eid)`;
//! - an **embedding** assigns one event to each pattern edge: its `src`/`dst` are the nodes of
//!   the edge's variables, its `rel_type` the edge's `rel_type` when given; the events are
//!   pairwise distinct; with `time_order: "ordered"` they increase in `(vt_s, eid)` order in
//!   the order the edges are listed, with `"strict"` their `vt_s` strictly increase; with
//!   `delta` the last minus the first `vt_s` is at most `delta`;
//! - a **match** (a row) is a binding of the variables to distinct nodes that has at least one
//!   embedding and, for every absent edge, no event from its `src` node to its `dst` node
//!   (of its `rel_type` when given). Rows are in binding order (the variables' uids in
//!   `A, B, C, D` order, code point); each row gives its number of embeddings and the first
//!   embedding in `(e1, e2, …)` order as `witness`.
//!
//! The kernel enumerates bindings over the static pair graph (each new variable extends a
//! bound one along its adjacency) and counts embeddings per binding by a chain count over
//! the merged event lists, under a work budget of [`MATCH_BUDGET`] units (binding extensions
//! plus event steps).

use super::edge_pred::{self, apply_opt, EdgePred};
use super::tgraph::{budget_error, sat, windowed_edges, Graph};
use super::validate_window;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use tgms_engine::Stats;

const MANUAL: &str = "Static multi-edge patterns: 2–4 directed `edges` between variables `A`–`D` (e.g. `[{\"src\": \"A\", \"dst\": \"B\"}, {\"src\": \"B\", \"dst\": \"C\"}]`), each matched by an edge event starting in `window` (optionally of one `rel_type`); variables bind to distinct nodes. `absent` edges must have NO event in the same window (\"A rated B and B rated C, but A never rated C\": `\"absent\": [{\"src\": \"A\", \"dst\": \"C\"}]`). `time_order: \"ordered\"` (or `\"strict\"`: strictly increasing times) makes the events follow the listed edge order, optionally within `delta` µs. One row per binding of the variables (`binding`), with its number of `embeddings` (event choices) and the first one as `witness`; count matches with `rows_total`, embeddings with `n_embeddings`. `node_filter`, `prop_filter` and `self_loops` narrow the events as in the motif operators. Example: `{\"edges\": [{\"src\": \"A\", \"dst\": \"B\"}, {\"src\": \"B\", \"dst\": \"C\"}], \"absent\": [{\"src\": \"A\", \"dst\": \"C\"}], \"window\": {...}, \"limit\": 10}` → `rows_total`.";

/// Work units (binding extensions plus event steps of the chain counts) one call may spend.
pub const MATCH_BUDGET: u64 = 20_000_000;
const SUGGESTIONS: &[&str] = &[
    "narrow the window",
    "add a node_filter or rel_type",
    "use fewer edges",
];

const VARS: [&str; 4] = ["A", "B", "C", "D"];

fn pattern_edge_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
        "properties": {"src": {"type": "string", "enum": VARS}, "dst": {"type": "string", "enum": VARS},
            "rel_type": {"type": ["string", "null"]}},
        "required": ["src", "dst"]})
}

const EVENT: &str = "obj{src: uid, dst: uid, t: int, eid: hex, rel_type: str}";

/// The row key: the bound uids in variable order.
fn binding_key(row: &Value) -> Value {
    let b = &row["binding"];
    Value::Array(
        VARS.iter()
            .filter_map(|v| b.get(*v).cloned())
            .collect::<Vec<_>>(),
    )
}

/// The registry entry.
pub fn spec() -> OpSpec {
    let mut args = vec![
        ArgDecl::req(
            "edges",
            json!({"type": "array", "items": pattern_edge_schema(), "minItems": 2, "maxItems": 4}),
        ),
        ArgDecl::req("window", frag::window()),
        ArgDecl::opt(
            "absent",
            json!({"type": ["array", "null"], "items": pattern_edge_schema(), "maxItems": 4}),
            Value::Null,
        ),
        ArgDecl::opt(
            "time_order",
            json!({"type": "string", "enum": ["none", "ordered", "strict"]}),
            json!("none"),
        ),
        ArgDecl::opt(
            "delta",
            frag::duration(
                true,
                "max span of an embedding's event times (with time_order)",
            ),
            Value::Null,
        ),
        ArgDecl::opt(
            "node_filter",
            json!({"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 10000}),
            Value::Null,
        )
        .uids(&["[*]"]),
        common::as_of_tt(),
        common::limit(),
        common::cursor(),
    ];
    args.extend(edge_pred::pattern_args());
    OpSpec {
        name: "match_pattern",
        manual: MANUAL,
        args,
        validators: vec![
            validate_window,
            edge_pred::validate_prop_filter,
            validate_pattern,
        ],
        cost: Some(cost),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows(
                &format!("obj{{binding: obj{{*}}, embeddings: int, witness: list<{EVENT}>}}"),
                RowKey::Derived {
                    spec: "[binding.A, binding.B, binding.C, binding.D] (bound variables only)",
                    of: binding_key,
                },
            )
            .field("n_embeddings", "int")
            .field("n_events_in_window", "int")
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

/// One pattern edge over variable indices.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PEdge {
    s: usize,
    d: usize,
    rel: Option<String>,
}

fn var_of(v: &Value, k: &str) -> Option<usize> {
    let name = v.get(k)?.as_str()?;
    VARS.iter().position(|x| *x == name)
}

fn pedges(args: &Args, name: &str) -> Vec<PEdge> {
    args.get(name)
        .and_then(Value::as_array)
        .map(|es| {
            es.iter()
                .filter_map(|e| {
                    Some(PEdge {
                        s: var_of(e, "src")?,
                        d: var_of(e, "dst")?,
                        rel: e
                            .get("rel_type")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn show(e: &PEdge) -> String {
    format!("{}→{}", VARS[e.s], VARS[e.d])
}

/// The pattern rules the schema cannot say.
fn validate_pattern(args: &Args) -> Result<(), OpError> {
    let edges = pedges(args, "edges");
    let absent = pedges(args, "absent");
    let mut used = [false; 4];
    for (i, e) in edges.iter().enumerate() {
        if e.s == e.d {
            return Err(OpError::invalid(format!(
                "pattern edge {i} ({}) joins a variable to itself; variables bind to distinct nodes, use self_loops to select self loops",
                show(e)
            )));
        }
        used[e.s] = true;
        used[e.d] = true;
    }
    // Connected: every used variable reachable from edge 0's source.
    let mut reach = [false; 4];
    if let Some(e) = edges.first() {
        reach[e.s] = true;
    }
    for _ in 0..4 {
        for e in &edges {
            if reach[e.s] || reach[e.d] {
                reach[e.s] = true;
                reach[e.d] = true;
            }
        }
    }
    if let Some(v) = (0..4).find(|&v| used[v] && !reach[v]) {
        return Err(OpError::invalid(format!(
            "pattern edges must connect all their variables; {} is not connected to {}",
            VARS[v], VARS[edges[0].s]
        )));
    }
    for (i, a) in absent.iter().enumerate() {
        if a.s == a.d || !used[a.s] || !used[a.d] {
            return Err(OpError::invalid(format!(
                "absent edge {i} ({}) must join two different variables of the pattern edges",
                show(a)
            )));
        }
        if let Some(j) = edges
            .iter()
            .position(|e| e.s == a.s && e.d == a.d && (a.rel.is_none() || a.rel == e.rel))
        {
            return Err(OpError::invalid(format!(
                "absent edge {i} ({}) excludes what pattern edge {j} requires; no binding can match",
                show(a)
            )));
        }
    }
    let order = args.str("time_order").unwrap_or("none");
    if order == "none" {
        if args.get("delta").is_some_and(|d| !d.is_null()) {
            return Err(OpError::invalid(
                "delta requires time_order 'ordered' or 'strict'",
            ));
        }
        for (i, x) in edges.iter().enumerate() {
            for (j, y) in edges.iter().enumerate().skip(i + 1) {
                if x.s == y.s && x.d == y.d && x.rel != y.rel {
                    return Err(OpError::invalid(format!(
                        "pattern edges {i} and {j} join {} with different rel_types; without a time_order give them the same rel_type",
                        show(x)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `e_w` windowed events, `b = max(1, e_w / n_entities)`, `v` pattern variables, `m` edges:
/// `expansions = e_w · b^(v−2) + m · e_w` (binding enumeration along the adjacency, then the
/// chain counts), clamped at 2^40, with the `prop_filter` surcharge.
fn cost(args: &Args, stats: &Stats) -> Estimate {
    let e_w = windowed_edges(args, stats);
    let b = (e_w as f64 / sat(stats.n_entities).max(1) as f64).max(1.0);
    let edges = pedges(args, "edges");
    let mut used = [false; 4];
    for e in &edges {
        used[e.s] = true;
        used[e.d] = true;
    }
    let v = used.iter().filter(|&&u| u).count().max(2) as i32;
    let cap = (1u64 << 40) as f64;
    let x = (e_w as f64 * b.powi(v - 2) + edges.len() as f64 * e_w as f64).min(cap);
    edge_pred::priced(Estimate::new(e_w, x as i64), args, e_w)
}

/// The chain count and first chain of one binding.
struct Embeddings {
    count: u64,
    witness: Vec<u32>,
}

/// Per-call state: the events and the static pair graph.
struct Matcher<'g> {
    /// Events in `(t, eid)` order: `(t, src, dst, rel id)`.
    ev: &'g [(i64, u32, u32, u32)],
    pairs: HashMap<(u32, u32), Vec<u32>>,
    out_adj: Vec<Vec<u32>>,
    in_adj: Vec<Vec<u32>>,
    /// Pattern edges' rel_type as event rel ids (`None` = any; `Some(None)` = a rel_type no
    /// event has).
    rels: Vec<Option<Option<u32>>>,
    absent_rels: Vec<Option<Option<u32>>>,
    work: u64,
}

impl Matcher<'_> {
    fn spend(&mut self, units: u64) -> Result<(), OpError> {
        self.work = self.work.saturating_add(units);
        if self.work > MATCH_BUDGET {
            return Err(budget_error(
                "match_pattern",
                MATCH_BUDGET,
                self.work,
                SUGGESTIONS,
            ));
        }
        Ok(())
    }

    /// The events of `(u, v)` with the rel restriction `rel`.
    fn list(&self, u: u32, v: u32, rel: &Option<Option<u32>>) -> Vec<u32> {
        let all = self.pairs.get(&(u, v)).map(Vec::as_slice).unwrap_or(&[]);
        match rel {
            None => all.to_vec(),
            Some(None) => Vec::new(),
            Some(Some(r)) => all
                .iter()
                .copied()
                .filter(|&i| self.ev[i as usize].3 == *r)
                .collect(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    None,
    Ordered,
    Strict,
}

fn overflow() -> OpError {
    OpError::new(
        crate::error::Code::Limit,
        "embedding count exceeds 2^64 − 1; narrow the window or add a delta",
    )
}

/// Embeddings of one binding given each pattern edge's event list (ascending).
fn embeddings(
    m: &mut Matcher<'_>,
    lists: &[Vec<u32>],
    edges: &[PEdge],
    order: Order,
    delta: Option<i64>,
) -> Result<Embeddings, OpError> {
    let k = lists.len();
    if order == Order::None {
        // Identical pattern edges (same variables, same rel: enforced by validation) form a
        // group of size g choosing distinct events: falling factorial |L|·(|L|−1)…; the
        // witness gives the group's j-th edge the group's j-th event.
        let mut count: u64 = 1;
        let mut witness = Vec::with_capacity(k);
        for (i, e) in edges.iter().enumerate() {
            let before = edges[..i].iter().filter(|x| *x == e).count();
            let n = lists[i].len() as u64;
            if (before as u64) >= n {
                return Ok(Embeddings {
                    count: 0,
                    witness: Vec::new(),
                });
            }
            count = count.checked_mul(n - before as u64).ok_or_else(overflow)?;
            witness.push(lists[i][before]);
        }
        m.spend(k as u64)?;
        return Ok(Embeddings { count, witness });
    }
    // Merged events with the pattern positions each can fill (bit i = edge i).
    let mut merged: Vec<(u32, u8)> = Vec::new();
    for (i, l) in lists.iter().enumerate() {
        for &x in l {
            merged.push((x, 1 << i));
        }
    }
    merged.sort_unstable();
    let mut dedup: Vec<(u32, u8)> = Vec::with_capacity(merged.len());
    for (x, b) in merged {
        match dedup.last_mut() {
            Some(last) if last.0 == x => last.1 |= b,
            _ => dedup.push((x, b)),
        }
    }
    let t = |x: u32| m.ev[x as usize].0;
    let strict = order == Order::Strict;
    // Chains e1 < … < ek over `dedup`, events with t <= `t_max`: with `first = Some(s)`
    // e1 is `dedup[s]`, else any event from the start.
    let n = dedup.len();
    let chains = |first: Option<usize>, t_max: i64| -> Result<(u64, u64), OpError> {
        let mut dp = vec![0u64; k + 1];
        let (mut i, lowest) = match first {
            Some(s) => {
                dp[1] = 1;
                let mut i = s + 1;
                while strict && i < n && t(dedup[i].0) == t(dedup[s].0) {
                    i += 1;
                }
                (i, 2)
            }
            None => {
                dp[0] = 1;
                (0, 1)
            }
        };
        let mut steps = 0u64;
        while i < n && t(dedup[i].0) <= t_max {
            // A group: one event (ordered) or all events of one time (strict), which
            // extend only chains that ended before the group.
            let mut j = i + 1;
            while strict && j < n && t(dedup[j].0) == t(dedup[i].0) {
                j += 1;
            }
            let before = if strict { dp.clone() } else { Vec::new() };
            for &(_, bits) in &dedup[i..j] {
                steps += 1;
                // Descending, so one event fills at most one position of a chain.
                for p in (lowest..=k).rev() {
                    if bits & (1 << (p - 1)) != 0 {
                        let add = if strict { before[p - 1] } else { dp[p - 1] };
                        dp[p] = dp[p].checked_add(add).ok_or_else(overflow)?;
                    }
                }
            }
            i = j;
        }
        Ok((dp[k], steps))
    };
    let mut count = 0u64;
    match delta {
        None => {
            let (c, steps) = chains(None, i64::MAX)?;
            m.spend(steps.saturating_mul(k as u64))?;
            count = c;
        }
        Some(d) => {
            for (s, &(x, bits)) in dedup.iter().enumerate() {
                if bits & 1 == 0 {
                    continue;
                }
                let (c, steps) = chains(Some(s), t(x).saturating_add(d))?;
                m.spend(steps.saturating_mul(k as u64).max(1))?;
                count = count.checked_add(c).ok_or_else(overflow)?;
            }
        }
    }
    if count == 0 {
        return Ok(Embeddings {
            count,
            witness: Vec::new(),
        });
    }
    // The first embedding: the first e1 from which the greedy earliest continuation fits.
    for &e1 in &lists[0] {
        let t_max = delta.map_or(i64::MAX, |d| t(e1).saturating_add(d));
        let mut chain = vec![e1];
        for l in &lists[1..] {
            let cur = *chain.last().unwrap_or(&e1);
            let next = l
                .iter()
                .copied()
                .find(|&x| if strict { t(x) > t(cur) } else { x > cur });
            match next.filter(|&x| t(x) <= t_max) {
                Some(x) => chain.push(x),
                None => break,
            }
        }
        if chain.len() == k {
            return Ok(Embeddings {
                count,
                witness: chain,
            });
        }
    }
    Err(OpError::internal(
        "match_pattern: embeddings counted but no witness found",
    ))
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing"))?;
    let filter = args.str_list("node_filter")?;
    if let Some(f) = &filter {
        let mut unknown: Vec<&String> = f.iter().filter(|u| !snap.has_uid(u)).collect();
        unknown.sort();
        if let Some(u) = unknown.first() {
            return Err(OpError::unknown_uid(u));
        }
    }
    let edges = pedges(args, "edges");
    let absent = pedges(args, "absent");
    let order = match args.str("time_order")? {
        "ordered" => Order::Ordered,
        "strict" => Order::Strict,
        _ => Order::None,
    };
    let delta = args.get("delta").and_then(Value::as_i64);
    let pred = EdgePred::parse(args)?;
    let versions: Vec<_> = snap
        .edge_scan(&tgms_engine::EdgeScan {
            as_of_tt: args.as_of_tt(),
            vt_window: Some((t_a, t_b)),
            rel_types: None,
            touching: filter.as_deref().map(|f| (f, tgms_engine::Touch::Both)),
        })
        .into_iter()
        .filter(|e| t_a <= e.vt_s() && e.vt_s() < t_b)
        .collect();
    let (mut versions, coerced) = apply_opt(pred.as_ref(), versions)?;
    versions.sort_by_cached_key(|e| (e.vt_s(), e.eid_bytes()));
    let g = Graph::from_versions(versions);
    // rel ids: in order of first appearance.
    let mut rel_ids: HashMap<&str, u32> = HashMap::new();
    let ev: Vec<(i64, u32, u32, u32)> = g
        .edges
        .iter()
        .zip(&g.versions)
        .map(|(e, v)| {
            let n = rel_ids.len() as u32;
            let r = *rel_ids.entry(v.rel_type()).or_insert(n);
            (e.t, e.src, e.dst, r)
        })
        .collect();
    let rel_of =
        |e: &PEdge| -> Option<Option<u32>> { e.rel.as_deref().map(|r| rel_ids.get(r).copied()) };
    let mut m = Matcher {
        ev: &ev,
        pairs: HashMap::new(),
        out_adj: vec![Vec::new(); g.n()],
        in_adj: vec![Vec::new(); g.n()],
        rels: edges.iter().map(rel_of).collect(),
        absent_rels: absent.iter().map(rel_of).collect(),
        work: 0,
    };
    for (i, &(_, s, d, _)) in ev.iter().enumerate() {
        let l = m.pairs.entry((s, d)).or_default();
        if l.is_empty() && s != d {
            m.out_adj[s as usize].push(d);
            m.in_adj[d as usize].push(s);
        }
        l.push(i as u32);
    }
    for a in m.out_adj.iter_mut().chain(m.in_adj.iter_mut()) {
        a.sort_unstable();
    }
    // Edge order for the enumeration: each edge after the first touches a bound variable.
    let mut plan: Vec<usize> = vec![0];
    let mut bound = [false; 4];
    bound[edges[0].s] = true;
    bound[edges[0].d] = true;
    while plan.len() < edges.len() {
        let next = (0..edges.len())
            .find(|i| !plan.contains(i) && (bound[edges[*i].s] || bound[edges[*i].d]))
            .ok_or_else(|| OpError::internal("pattern not connected after validation"))?;
        bound[edges[next].s] = true;
        bound[edges[next].d] = true;
        plan.push(next);
    }
    // Bindings with their embeddings.
    let mut found: Vec<([Option<u32>; 4], Embeddings)> = Vec::new();
    let mut bind: [Option<u32>; 4] = [None; 4];
    enumerate(
        &mut m, &edges, &absent, &plan, 0, &mut bind, order, delta, &mut found,
    )?;
    found.sort_by_key(|(b, _)| *b);
    let total_embeddings = found
        .iter()
        .try_fold(0u64, |acc, (_, e)| acc.checked_add(e.count))
        .ok_or_else(overflow)?;
    let uid = |v: u32| g.uids[v as usize];
    let keys: Vec<Value> = found
        .iter()
        .map(|(b, _)| Value::Array(b.iter().flatten().map(|&v| json!(uid(v))).collect()))
        .collect();
    out.paged_lazy("rows", keys, |range| {
        Ok(found[range]
            .iter()
            .map(|(b, e)| {
                let mut binding = Map::new();
                for (i, v) in b.iter().enumerate() {
                    if let Some(v) = v {
                        binding.insert(VARS[i].to_string(), json!(uid(*v)));
                    }
                }
                let witness: Vec<Value> = e
                    .witness
                    .iter()
                    .map(|&x| {
                        let v = &g.versions[x as usize];
                        json!({"src": v.src(), "dst": v.dst(), "t": v.vt_s(), "eid": v.eid(),
                            "rel_type": v.rel_type()})
                    })
                    .collect();
                json!({"binding": binding, "embeddings": e.count, "witness": witness})
            })
            .collect())
    })?;
    out.set("n_embeddings", json!(total_embeddings));
    out.set("n_events_in_window", json!(ev.len()));
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    Ok(())
}

/// Backtracking over the pattern edges in `plan` order; a complete binding is checked for
/// absent edges and its embeddings counted.
#[allow(clippy::too_many_arguments)]
fn enumerate(
    m: &mut Matcher<'_>,
    edges: &[PEdge],
    absent: &[PEdge],
    plan: &[usize],
    k: usize,
    bind: &mut [Option<u32>; 4],
    order: Order,
    delta: Option<i64>,
    found: &mut Vec<([Option<u32>; 4], Embeddings)>,
) -> Result<(), OpError> {
    if k == plan.len() {
        for (a, rel) in absent.iter().zip(m.absent_rels.clone()) {
            let (Some(u), Some(v)) = (bind[a.s], bind[a.d]) else {
                return Err(OpError::internal("absent edge over an unbound variable"));
            };
            if !m.list(u, v, &rel).is_empty() {
                return Ok(());
            }
        }
        let lists: Vec<Vec<u32>> = edges
            .iter()
            .zip(m.rels.clone())
            .map(|(e, rel)| match (bind[e.s], bind[e.d]) {
                (Some(u), Some(v)) => m.list(u, v, &rel),
                _ => Vec::new(),
            })
            .collect();
        if lists.iter().any(Vec::is_empty) {
            return Ok(());
        }
        let e = embeddings(m, &lists, edges, order, delta)?;
        if e.count > 0 {
            found.push((*bind, e));
        }
        return Ok(());
    }
    let e = &edges[plan[k]];
    let used = |bind: &[Option<u32>; 4], x: u32| bind.contains(&Some(x));
    match (bind[e.s], bind[e.d]) {
        (Some(u), Some(v)) => {
            m.spend(1)?;
            if m.pairs.contains_key(&(u, v)) {
                enumerate(m, edges, absent, plan, k + 1, bind, order, delta, found)?;
            }
        }
        (Some(u), None) => {
            let next = m.out_adj[u as usize].clone();
            for v in next {
                m.spend(1)?;
                if !used(bind, v) {
                    bind[e.d] = Some(v);
                    enumerate(m, edges, absent, plan, k + 1, bind, order, delta, found)?;
                    bind[e.d] = None;
                }
            }
        }
        (None, Some(v)) => {
            let next = m.in_adj[v as usize].clone();
            for u in next {
                m.spend(1)?;
                if !used(bind, u) {
                    bind[e.s] = Some(u);
                    enumerate(m, edges, absent, plan, k + 1, bind, order, delta, found)?;
                    bind[e.s] = None;
                }
            }
        }
        (None, None) => {
            let starts: Vec<u32> = (0..m.out_adj.len() as u32).collect();
            for u in starts {
                let next = m.out_adj[u as usize].clone();
                for v in next {
                    m.spend(1)?;
                    bind[e.s] = Some(u);
                    bind[e.d] = Some(v);
                    enumerate(m, edges, absent, plan, k + 1, bind, order, delta, found)?;
                    bind[e.s] = None;
                    bind[e.d] = None;
                }
            }
        }
    }
    Ok(())
}
