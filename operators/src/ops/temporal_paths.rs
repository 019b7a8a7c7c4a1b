//! `temporal_paths` (O5, `operators.md` §13): the `k` best node-simple time-respecting paths
//! from `src` to `dst`, by the spec's depth-first enumeration ([`crate::kernels::paths`])
//! under the §7.5 budget of 500,000 (frame, candidate out-edge) examinations. `rows` is
//! capped at `k` (no cursor); `rows_total` and `set_digest` cover every recorded path.
//!
//! Candidate out-edges are read per node from the store's adjacency ([`Snapshot::out_edges`]
//! restricted to the window), only for the nodes where a frame opens, so the cost follows
//! the explored frontier rather than the size of the window.

use super::edge_pred::{self, EdgePred, Verdict};
use super::tgraph::{exceeded, windowed_edges, WORK_BUDGET};
use super::validate_window;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::{Code, OpError};
use crate::json::set_digest;
use crate::kernels::paths::{temporal_paths_from, OutEdges};
use crate::kernels::TEdge;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use tgms_engine::{EdgeVersion, Snapshot, Stats};

const MANUAL: &str = "Up to `k` (≤ 20) time-respecting paths from `src` to `dst` inside `window`, each visiting a node at most once and at most `max_hops` (≤ 6) edges, best first (earliest arrival, then fewest hops). `edges[].t` is the edge's valid-time start. Run a reachability check first and keep `max_hops` small: enumeration is exponential in hops. Example: `{\"src\": \"n1\", \"dst\": \"n2\", \"window\": {...}, \"k\": 3, \"max_hops\": 3}`. Edge predicates: `prop_filter` (`{prop, cmp, value}` as in `aggregate_events`; events whose property is absent or of another type are excluded (not counted here)) and `self_loops` (`exclude` or `only`) hide the events they reject from the pattern.";

const SUGGESTIONS: &[&str] = &["narrow the window", "reduce max_hops"];

/// The row key of §13: the list of the path's eids.
fn path_key(row: &Value) -> Value {
    Value::Array(
        row["edges"]
            .as_array()
            .map(|es| es.iter().map(|e| e["eid"].clone()).collect())
            .unwrap_or_default(),
    )
}

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "temporal_paths",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("src", frag::uid()).uids(&[""]),
            ArgDecl::req("dst", frag::uid()).uids(&[""]),
            ArgDecl::req("window", frag::window()),
            ArgDecl::opt(
                "k",
                json!({"type": "integer", "minimum": 1, "maximum": 20}),
                json!(5),
            ),
            ArgDecl::opt(
                "max_hops",
                json!({"type": "integer", "minimum": 1, "maximum": 6}),
                json!(4),
            ),
            common::as_of_tt(),
        ]
        .into_iter()
        .chain(edge_pred::pattern_args())
        .collect(),
        validators: vec![validate_window, validate_caps, edge_pred::validate_prop_filter],
        cost: Some(cost),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows(
                "obj{arrival: int, hops: int, edges: list<obj{src: uid, dst: uid, rel_type: str, eid: hex, t: int}>}",
                RowKey::Derived {
                    spec: "[edges[*].eid]",
                    of: path_key,
                },
            )
            .build(),
        kernel,
    }
}

fn validate_caps(args: &Args) -> Result<(), OpError> {
    if args.int("max_hops")? > 6 {
        return Err(OpError::new(Code::Limit, "max_hops capped at 6"));
    }
    if args.int("k")? > 20 {
        return Err(OpError::new(Code::Limit, "k capped at 20"));
    }
    Ok(())
}

/// §13: `e_w = int(n_edge_versions * wf)`, `b = max(1, e_w / max(1, n_entities))`,
/// `expansions = int(Σ_{i=1..H} b^i)` clamped at 2^40, `rows = e_w`.
fn cost(args: &Args, stats: &Stats) -> Estimate {
    let e_w = windowed_edges(args, stats);
    let ents = super::tgraph::sat(stats.n_entities).max(1);
    let b = (e_w as f64 / ents as f64).max(1.0);
    let h = args.int("max_hops").unwrap_or(4);
    let cap = 1_099_511_627_776.0f64; // 2^40
    let mut s = 0.0f64;
    for i in 1..=h {
        s += b.powi(i as i32);
        if s >= cap {
            s = cap;
            break;
        }
    }
    edge_pred::priced(Estimate::new(e_w, s as i64), args, e_w)
}

/// [`OutEdges`] served from the store: node ids are the snapshot's interned uid ids
/// ([`Snapshot::uid_id`]), edge ids index `edges` / `versions` in load order. A node's edges
/// come in [`Snapshot::out_edges`] order `(vt_s, eid, tt_s)`, the order of a window edge scan.
/// An edge's eid (a hash) is derived only when [`OutEdges::settle`] names it: most loaded
/// candidates are on no path.
struct StoreOut<'s> {
    snap: Snapshot<'s>,
    window: (i64, i64),
    as_of_tt: i64,
    edges: Vec<TEdge>,
    versions: Vec<EdgeVersion<'s>>,
    /// The call's edge predicate: an out-edge it does not keep is never a candidate.
    pred: Option<EdgePred>,
    /// The first error the predicate raised (a stored props text that does not parse).
    err: Option<OpError>,
}

impl OutEdges for StoreOut<'_> {
    fn load(&mut self, u: u32, buf: &mut Vec<u32>) {
        for e in self.snap.out_edges_of(u, Some(self.window), self.as_of_tt) {
            if let Some(p) = &self.pred {
                match p.verdict(&e) {
                    Ok(Verdict::Keep) => {}
                    Ok(_) => continue,
                    Err(x) => {
                        self.err.get_or_insert(x);
                        continue;
                    }
                }
            }
            buf.push(self.edges.len() as u32);
            self.edges.push(TEdge {
                src: u,
                dst: e.dst_id(),
                t: e.vt_s(),
                t_end: e.vt_e(),
                eid: [0; 12],
            });
            self.versions.push(e);
        }
    }
    fn edge(&self, i: u32) -> &TEdge {
        &self.edges[i as usize]
    }
    fn settle(&mut self, ids: &[u32]) {
        for &i in ids {
            self.edges[i as usize].eid = self.versions[i as usize].eid_bytes();
        }
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let (src, dst) = (args.str("src")?, args.str("dst")?);
    let mut ids = [0u32; 2];
    for (id, u) in ids.iter_mut().zip([src, dst]) {
        *id = ctx.snap.uid_id(u).ok_or_else(|| OpError::unknown_uid(u))?;
    }
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing"))?;
    let k = args.int("k")?.max(0) as usize;
    let max_hops = args.int("max_hops")?.max(0) as usize;
    let mut g = StoreOut {
        snap: ctx.snap,
        window: (t_a, t_b),
        as_of_tt: args.as_of_tt(),
        edges: Vec::new(),
        versions: Vec::new(),
        pred: EdgePred::parse(args)?,
        err: None,
    };
    // `src == dst` gives equal ids, hence no paths.
    let r = temporal_paths_from(
        &mut g,
        ids[0],
        ids[1],
        t_a,
        t_b,
        max_hops,
        Some(WORK_BUDGET),
    )
    .map_err(|e| exceeded("temporal_paths", WORK_BUDGET, e, SUGGESTIONS))?;
    if let Some(e) = g.err.take() {
        return Err(e);
    }
    let rows: Vec<Value> = r
        .paths
        .iter()
        .map(|p| {
            let edges: Vec<Value> = p
                .edges
                .iter()
                .map(|&i| {
                    let e = &g.versions[i as usize];
                    json!({"src": e.src(), "dst": e.dst(), "rel_type": e.rel_type(),
                        "eid": e.eid(), "t": e.vt_s()})
                })
                .collect();
            json!({"arrival": p.arrival, "hops": p.edges.len(), "edges": edges})
        })
        .collect();
    let total = rows.len();
    let digest = set_digest(&rows.iter().map(path_key).collect::<Vec<_>>());
    out.set("rows", Value::Array(rows.into_iter().take(k).collect()));
    out.set("rows_total", json!(total));
    out.set("truncated", json!(total > k));
    out.set("cursor", Value::Null);
    out.set("set_digest", json!(digest));
    Ok(())
}
