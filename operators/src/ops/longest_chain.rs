//! `longest_chain` (issue 21 item 5): the longest time-respecting chain of events starting in
//! a window — events `e1 … ek` with `dst(ei) = src(ei+1)` and strictly increasing start times
//! (and, with `max_wait`, `t(ei+1) − t(ei) ≤ max_wait`); nodes may repeat.
//!
//! One pass over the events in `(t, eid)` order: the longest chain ending with an event is one
//! more than the longest chain ending, strictly earlier (and within `max_wait`), at its
//! source. Per node a monotone deque of those arrivals (length non-increasing, time
//! increasing) answers "the longest arrival still within `max_wait`" in amortized O(1), so the
//! pass is linear in the events. Ties are broken deterministically: the chain ends at the
//! first event in `(t, eid)` order among those ending a longest chain, and each event's
//! predecessor is the first in `(t, eid)` order among its longest valid predecessors.

use super::edge_pred::{self, EdgePred};
use super::tgraph::{windowed_edges, Graph};
use super::validate_window;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::{Code, OpError};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::VecDeque;
use tgms_engine::Stats;

const MANUAL: &str = "The longest time-respecting chain of events starting in `window`: events e1…ek where each event leaves the node the previous one reached (`dst(ei) = src(ei+1)`, nodes may repeat) at a strictly later start time, and, with `max_wait` (µs or a duration such as `\"1d\"`), at most `max_wait` after it. `length` is k; `rows` are the chain's events in order (`eid`, `src`, `dst`, `rel_type`, `t`), paged. Ties: the chain ending at the earliest event (by time, then eid), each step's predecessor the earliest among the longest. Example: `{\"window\": {\"t_a\": \"2004-05-01\", \"t_b\": \"2004-05-02\"}, \"max_wait\": \"1h\"}` → `length`. Edge predicates: `prop_filter` and `self_loops` as in `count_temporal_motifs`.";

/// Events a call may examine (the work budget; one unit per event and deque operation).
pub const EVENT_BUDGET: u64 = 20_000_000;

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "longest_chain",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("window", frag::window()),
            ArgDecl::opt(
                "max_wait",
                frag::duration(true, "max time between consecutive events of the chain"),
                Value::Null,
            ),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ]
        .into_iter()
        .chain(edge_pred::pattern_args())
        .collect(),
        validators: vec![validate_window, edge_pred::validate_prop_filter],
        cost: Some(cost),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows(
                "obj{eid: hex, src: uid, dst: uid, rel_type: str, t: int}",
                RowKey::Field("eid"),
            )
            .field("length", "int")
            .field("n_events_in_window", "int")
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

/// `rows = int(n_edge_versions · wf)` (the window's share of the edge versions, loaded once);
/// `expansions = 2 · rows` (each event is queried once and pushed once).
fn cost(args: &Args, stats: &Stats) -> Estimate {
    let rows = windowed_edges(args, stats);
    edge_pred::priced(Estimate::new(rows, rows.saturating_mul(2)), args, rows)
}

/// One arrival at a node: (time, chain length ending there, event index).
type Arrival = (i64, u32, u32);

/// The longest chain over `evs` (sorted by `(t, eid)`, given as (src, dst, t)): the event
/// indices in chain order. Deterministic as the module doc says.
pub fn longest(evs: &[(u32, u32, i64)], n_nodes: usize, max_wait: Option<i64>) -> Vec<u32> {
    let mut arrivals: Vec<VecDeque<Arrival>> = vec![VecDeque::new(); n_nodes];
    let mut len = vec![0u32; evs.len()];
    let mut pred = vec![u32::MAX; evs.len()];
    let mut i = 0;
    while i < evs.len() {
        // A group of equal start times: no event of it may precede another.
        let t = evs[i].2;
        let mut j = i;
        while j < evs.len() && evs[j].2 == t {
            let q = &mut arrivals[evs[j].0 as usize];
            if let Some(w) = max_wait {
                while q.front().is_some_and(|a| t - a.0 > w) {
                    q.pop_front();
                }
            }
            match q.front() {
                Some(&(_, l, k)) => {
                    len[j] = l + 1;
                    pred[j] = k;
                }
                None => len[j] = 1,
            }
            j += 1;
        }
        for k in i..j {
            let q = &mut arrivals[evs[k].1 as usize];
            // Keep the earliest among equal lengths: drop only strictly shorter arrivals.
            while q.back().is_some_and(|a| a.1 < len[k]) {
                q.pop_back();
            }
            q.push_back((t, len[k], k as u32));
        }
        i = j;
    }
    let Some(best) = len.iter().copied().max() else {
        return Vec::new();
    };
    let mut chain = Vec::with_capacity(best as usize);
    let mut e = len
        .iter()
        .position(|&l| l == best)
        .map_or(u32::MAX, |p| p as u32);
    while e != u32::MAX {
        chain.push(e);
        e = pred[e as usize];
    }
    chain.reverse();
    chain
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing"))?;
    let max_wait = args.get("max_wait").and_then(Value::as_i64);
    let pred = EdgePred::parse(args)?;
    let (g, coerced) =
        Graph::load_where(ctx.snap, Some((t_a, t_b)), args.as_of_tt(), pred.as_ref())?;
    // Events = versions starting in the window, in (t, eid) order.
    let mut order: Vec<u32> = (0..g.edges.len() as u32)
        .filter(|&i| (t_a..t_b).contains(&g.edges[i as usize].t))
        .collect();
    if order.len() as u64 > EVENT_BUDGET {
        return Err(OpError::with(
            Code::Limit,
            format!(
                "longest_chain: {} events in the window exceed the work budget of {EVENT_BUDGET}; narrow the window or add a prop_filter",
                order.len()
            ),
            json!({"budget": EVENT_BUDGET, "events": order.len(),
                "repair": {"narrow": ["a smaller window", "prop_filter", "self_loops: exclude"]}}),
        ));
    }
    order.sort_unstable_by(|&x, &y| {
        let (a, b) = (&g.edges[x as usize], &g.edges[y as usize]);
        (a.t, a.eid).cmp(&(b.t, b.eid))
    });
    let evs: Vec<(u32, u32, i64)> = order
        .iter()
        .map(|&i| {
            let e = &g.edges[i as usize];
            (e.src, e.dst, e.t)
        })
        .collect();
    let chain = longest(&evs, g.n(), max_wait);
    let rows: Vec<Value> = chain
        .iter()
        .map(|&k| {
            let v = &g.versions[order[k as usize] as usize];
            json!({"eid": v.eid(), "src": v.src(), "dst": v.dst(), "rel_type": v.rel_type(),
                "t": v.vt_s()})
        })
        .collect();
    out.set("length", json!(chain.len()));
    out.set("n_events_in_window", json!(evs.len()));
    out.paged("rows", rows)?;
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    Ok(())
}
