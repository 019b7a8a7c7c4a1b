//! `diff_snapshots` (O3, `operators.md` §11): what changed between the snapshots at `t1` and
//! `t2` under one belief state.
//!
//! Cost follows the answer: with `lo = min(t1, t2)`, `hi = max(t1, t2)`, every change involves
//! only versions whose validity starts or ends inside `(lo, hi]` — a version valid at both
//! instants is the same row at both (and by invariant I1 no other version of its identity is
//! valid at either), so it can never be added, removed or changed. The kernel therefore reads
//! `node_boundaries` / `edge_boundaries` (engine read API) instead of materializing two
//! snapshots; with a `scope` it walks adjacency from the seeds instead. The in-memory engine
//! answers the boundary calls with an integer-only row scan; a segment store answers them from
//! a `vt_s`- and a `vt_e`-sorted permutation per segment in O(result).

use super::snapshot_subgraph::bfs;
use super::{stored_json, valid_at_edge, valid_at_node};
use crate::args::{str_list_of, Args};
use crate::cost::scan_estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use tgms_engine::{EdgeVersion, Identity, NodeVersion, Version};

const MANUAL: &str = "Compares the snapshots at instants `t1` and `t2` (same belief state): nodes and edges that appeared or disappeared, and identities whose properties changed. Every list is capped at `limit`; read `<list>_total` for exact counts. Optional `scope` restricts the diff to the `hops`-neighbourhood of `seeds` in either snapshot. Example: `{\"t1\": 1700000000000000, \"t2\": 1700600000000000, \"limit\": 1000}` → read `nodes_added_total`.";

const EDGE_ELEM: &str = "obj{eid: hex, src: uid, dst: uid, rel_type: str}";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "diff_snapshots",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("t1", frag::timestamp()),
            ArgDecl::req("t2", frag::timestamp()),
            common::as_of_tt(),
            ArgDecl::opt(
                "scope",
                json!({"type": ["object", "null"], "additionalProperties": false,
                    "properties": {"seeds": frag::uid_list(),
                                   "hops": {"type": "integer", "minimum": 0, "maximum": 3}},
                    "required": ["seeds", "hops"]}),
                Value::Null,
            )
            .uids(&[".seeds[*]"]),
            common::limit(),
        ],
        validators: vec![],
        cost: Some(scan_estimate),
        coeff: 115.0,
        outputs: Outputs::default()
            .capped("nodes_added", "uid", RowKey::Row, false)
            .capped("nodes_removed", "uid", RowKey::Row, false)
            .capped("edges_added", EDGE_ELEM, RowKey::Field("eid"), false)
            .capped("edges_removed", EDGE_ELEM, RowKey::Field("eid"), false)
            .capped(
                "props_changed",
                "obj{kind: str, id: str, from: obj{*}, to: obj{*}}",
                RowKey::Fields(&["kind", "id"]),
                false,
            )
            .field("truncated", "bool")
            .build(),
        kernel,
    }
}

fn add_edge<'s>(
    e: EdgeVersion<'s>,
    t1: i64,
    t2: i64,
    edges: &mut BTreeMap<String, Presence<EdgeVersion<'s>>>,
) {
    let (v1, v2) = (valid_at_edge(&e, t1), valid_at_edge(&e, t2));
    if !v1 && !v2 {
        return;
    }
    let p = edges.entry(e.eid()).or_default();
    if v1 {
        p.at1 = Some(e);
    }
    if v2 {
        p.at2 = Some(e);
    }
}

/// Per identity: the version valid at t1 and the one valid at t2 (each at most one, I1).
struct Presence<V> {
    at1: Option<V>,
    at2: Option<V>,
}

impl<V> Default for Presence<V> {
    fn default() -> Self {
        Presence {
            at1: None,
            at2: None,
        }
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let (t1, t2) = (args.int("t1")?, args.int("t2")?);
    let a = args.as_of_tt();
    let (lo, hi) = (t1.min(t2), t1.max(t2));
    let span = Some((lo, hi.saturating_add(1)));

    // The allowed node set of a scope: union of the BFS visits at t1 and at t2.
    let allowed: Option<HashSet<String>> = match args.get("scope") {
        None | Some(Value::Null) => None,
        Some(scope) => {
            let seeds = str_list_of(scope.get("seeds"), "scope.seeds")?.unwrap_or_default();
            let hops = scope.get("hops").and_then(Value::as_i64).unwrap_or(0);
            let v1 = bfs(snap, &seeds, hops, t1, a, None)?;
            let v2 = bfs(snap, &seeds, hops, t2, a, None)?;
            Some(v1.nodes.into_keys().chain(v2.nodes.into_keys()).collect())
        }
    };

    let mut nodes: BTreeMap<String, Presence<NodeVersion<'_>>> = BTreeMap::new();
    let mut edges: BTreeMap<String, Presence<EdgeVersion<'_>>> = BTreeMap::new();
    match &allowed {
        None => {
            for n in snap.node_boundaries(lo, hi, a) {
                let (v1, v2) = (valid_at_node(&n, t1), valid_at_node(&n, t2));
                if v1 || v2 {
                    let p = nodes.entry(n.uid().to_string()).or_default();
                    if v1 {
                        p.at1 = Some(n);
                    }
                    if v2 {
                        p.at2 = Some(n);
                    }
                }
            }
            for e in snap.edge_boundaries(lo, hi, a) {
                add_edge(e, t1, t2, &mut edges);
            }
        }
        Some(allowed) => {
            for u in allowed {
                let p = nodes.entry(u.clone()).or_default();
                for v in snap.versions_of(&Identity::Node(u.clone()), a) {
                    if let Version::Node(n) = v {
                        if valid_at_node(&n, t1) {
                            p.at1 = Some(n);
                        }
                        if valid_at_node(&n, t2) {
                            p.at2 = Some(n);
                        }
                    }
                }
                for e in snap.out_edges(u, span, a) {
                    if allowed.contains(e.dst()) {
                        add_edge(e, t1, t2, &mut edges);
                    }
                }
            }
        }
    }

    let mut nodes_added = Vec::new();
    let mut nodes_removed = Vec::new();
    let mut changed = Vec::new();
    for (uid, p) in &nodes {
        match (&p.at1, &p.at2) {
            (None, Some(_)) => nodes_added.push(Value::from(uid.as_str())),
            (Some(_), None) => nodes_removed.push(Value::from(uid.as_str())),
            (Some(x), Some(y)) => {
                let differs = x.label() != y.label() || x.props() != y.props();
                if differs && (x.tt_s(), x.vt_s()) != (y.tt_s(), y.vt_s()) {
                    changed.push(json!({"kind": "node", "id": uid,
                        "from": {"label": x.label(), "props": stored_json(x.props())?},
                        "to": {"label": y.label(), "props": stored_json(y.props())?}}));
                }
            }
            (None, None) => {}
        }
    }
    let brief = |e: &EdgeVersion<'_>, eid: &str| json!({"eid": eid, "src": e.src(), "dst": e.dst(), "rel_type": e.rel_type()});
    let mut edges_added = Vec::new();
    let mut edges_removed = Vec::new();
    for (eid, p) in &edges {
        match (&p.at1, &p.at2) {
            (None, Some(y)) => edges_added.push(brief(y, eid)),
            (Some(x), None) => edges_removed.push(brief(x, eid)),
            (Some(x), Some(y)) => {
                if x.props() != y.props() && (x.tt_s(), x.vt_s()) != (y.tt_s(), y.vt_s()) {
                    changed.push(json!({"kind": "edge", "id": eid,
                        "from": {"props": stored_json(x.props())?},
                        "to": {"props": stored_json(y.props())?}}));
                }
            }
            (None, None) => {}
        }
    }
    let mut truncated = false;
    truncated |= out.capped("nodes_added", nodes_added)?;
    truncated |= out.capped("nodes_removed", nodes_removed)?;
    truncated |= out.capped("edges_added", edges_added)?;
    truncated |= out.capped("edges_removed", edges_removed)?;
    truncated |= out.capped("props_changed", changed)?;
    out.set("truncated", Value::Bool(truncated));
    Ok(())
}
