//! `diff_snapshots` (O3, `operators.md` §11): what changed between the snapshots at `t1` and
//! `t2` under one belief state.
//!
//! Cost follows the answer: with `lo = min(t1, t2)`, `hi = max(t1, t2)`, every change involves
//! only versions whose validity starts or ends inside `(lo, hi]` — a version valid at both
//! instants is the same row at both (and by invariant I1 no other version of its identity is
//! valid at either), so it can never be added, removed or changed. The kernel therefore reads
//! `node_boundaries` / `edge_boundaries` (engine read API) instead of materializing two
//! snapshots; with a `scope` it walks adjacency from the seeds instead. The engine answers the
//! boundary calls from its valid-time index in O(log n + result). Versions are grouped by
//! identity with a parallel sort on (uid | eid bytes); of each capped list only the rows
//! that survive the cap are rendered, the rest only contribute their keys to the certificate.

use super::snapshot_subgraph::bfs;
use super::stored_json;
use crate::args::{str_list_of, Args};
use crate::cost::scan_estimate;
use crate::error::OpError;
use crate::json::set_digest_by;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use tgms_engine::canon::{hex, write_str};
use tgms_engine::ident::Id12;
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

/// Per identity: the version valid at t1 and the one valid at t2 (each at most one, I1).
struct Presence<V> {
    at1: Option<V>,
    at2: Option<V>,
}

/// A version valid at t1 and/or t2, under its identity key.
type Hit<K, V> = (K, V, bool, bool);

type NodeHit<'s> = Hit<&'s str, NodeVersion<'s>>;
type EdgeHit<'s> = Hit<Id12, EdgeVersion<'s>>;

/// The hit of `v` under `key` when it is valid at `t1` or `t2`.
fn hit<K, V>(key: impl FnOnce() -> K, v: V, s: i64, e: i64, t1: i64, t2: i64) -> Option<Hit<K, V>> {
    let (v1, v2) = (s <= t1 && t1 < e, s <= t2 && t2 < e);
    (v1 || v2).then(|| (key(), v, v1, v2))
}

fn node_hit(n: NodeVersion<'_>, t1: i64, t2: i64) -> Option<NodeHit<'_>> {
    hit(|| n.uid(), n, n.vt_s(), n.vt_e(), t1, t2)
}

fn edge_hit(e: EdgeVersion<'_>, t1: i64, t2: i64) -> Option<EdgeHit<'_>> {
    hit(|| e.eid_bytes(), e, e.vt_s(), e.vt_e(), t1, t2)
}

/// Hits grouped by key, in key order (a parallel sort on (key, position), so the grouping
/// does not depend on the thread count).
fn presence<K: Ord + Send, V: Copy + Send>(hits: Vec<Hit<K, V>>) -> Vec<(K, Presence<V>)> {
    // Ties broken by the hit's position, so an unstable sort is deterministic.
    let mut hits: Vec<(usize, Hit<K, V>)> = hits.into_iter().enumerate().collect();
    hits.par_sort_unstable_by(|a, b| (&a.1 .0, a.0).cmp(&(&b.1 .0, b.0)));
    let hits = hits.into_iter().map(|(_, h)| h);
    let mut out: Vec<(K, Presence<V>)> = Vec::new();
    for (k, v, v1, v2) in hits {
        if out.last().is_none_or(|(last, _)| *last != k) {
            out.push((
                k,
                Presence {
                    at1: None,
                    at2: None,
                },
            ));
        }
        if let Some((_, p)) = out.last_mut() {
            if v1 {
                p.at1 = Some(v);
            }
            if v2 {
                p.at2 = Some(v);
            }
        }
    }
    out
}

/// A `props_changed` entry: the identity and its versions at t1 and t2.
enum Changed<'s> {
    Node(&'s str, NodeVersion<'s>, NodeVersion<'s>),
    Edge(Id12, EdgeVersion<'s>, EdgeVersion<'s>),
}

impl Changed<'_> {
    /// The canonical text of the row key `[kind, id]`.
    fn key(&self, s: &mut String) {
        match self {
            Changed::Node(uid, ..) => {
                s.push_str("[\"node\",");
                write_str(s, uid);
            }
            Changed::Edge(eid, ..) => {
                s.push_str("[\"edge\",\"");
                s.push_str(&hex(eid));
                s.push('"');
            }
        }
        s.push(']');
    }

    fn row(&self) -> Result<Value, OpError> {
        Ok(match self {
            Changed::Node(uid, x, y) => json!({"kind": "node", "id": uid,
                "from": {"label": x.label(), "props": stored_json(x.props())?},
                "to": {"label": y.label(), "props": stored_json(y.props())?}}),
            Changed::Edge(eid, x, y) => json!({"kind": "edge", "id": hex(eid),
                "from": {"props": stored_json(x.props())?},
                "to": {"props": stored_json(y.props())?}}),
        })
    }
}

/// Sets one capped list: the certificate over every row's key text (`key`, rendered in
/// parallel), and rows rendered only up to the cap — the rows past it are counted and
/// certified but never built.
fn emit<T: Sync>(
    out: &mut Output,
    name: &str,
    items: &[T],
    key: impl Fn(&T, &mut String) + Sync,
    row: impl Fn(&T) -> Result<Value, OpError>,
) -> Result<bool, OpError> {
    let digest = set_digest_by(items, key);
    let head = items
        .iter()
        .take(out.limit())
        .map(row)
        .collect::<Result<Vec<Value>, OpError>>()?;
    out.capped_certified(name, head, items.len(), digest)
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

    let node_hit = |n| node_hit(n, t1, t2);
    let edge_hit = |e| edge_hit(e, t1, t2);
    let (node_hits, edge_hits): (Vec<NodeHit<'_>>, Vec<EdgeHit<'_>>) = match &allowed {
        None => (
            snap.node_boundaries(lo, hi, a)
                .into_par_iter()
                .filter_map(node_hit)
                .collect(),
            snap.edge_boundaries(lo, hi, a)
                .into_par_iter()
                .filter_map(edge_hit)
                .collect(),
        ),
        Some(allowed) => {
            let mut nh = Vec::new();
            let mut eh = Vec::new();
            for u in allowed {
                nh.extend(
                    snap.versions_of(&Identity::Node(u.clone()), a)
                        .into_iter()
                        .filter_map(|v| match v {
                            Version::Node(n) => node_hit(n),
                            Version::Edge(_) => None,
                        }),
                );
                eh.extend(
                    snap.out_edges(u, span, a)
                        .into_iter()
                        .filter(|e| allowed.contains(e.dst()))
                        .filter_map(edge_hit),
                );
            }
            (nh, eh)
        }
    };
    let nodes = presence(node_hits);
    let edges = presence(edge_hits);

    let mut nodes_added = Vec::new();
    let mut nodes_removed = Vec::new();
    let mut changed = Vec::new();
    for (uid, p) in &nodes {
        match (p.at1, p.at2) {
            (None, Some(_)) => nodes_added.push(*uid),
            (Some(_), None) => nodes_removed.push(*uid),
            (Some(x), Some(y)) => {
                let differs = x.label() != y.label() || x.props() != y.props();
                if differs && (x.tt_s(), x.vt_s()) != (y.tt_s(), y.vt_s()) {
                    changed.push(Changed::Node(uid, x, y));
                }
            }
            (None, None) => {}
        }
    }
    let mut edges_added = Vec::new();
    let mut edges_removed = Vec::new();
    for (eid, p) in &edges {
        match (p.at1, p.at2) {
            (None, Some(y)) => edges_added.push((*eid, y)),
            (Some(x), None) => edges_removed.push((*eid, x)),
            (Some(x), Some(y)) => {
                if x.props() != y.props() && (x.tt_s(), x.vt_s()) != (y.tt_s(), y.vt_s()) {
                    changed.push(Changed::Edge(*eid, x, y));
                }
            }
            (None, None) => {}
        }
    }
    // Key texts as `set_digest` renders them: a JSON string (the uid; the eid hex).
    let uid_key = |u: &&str, s: &mut String| write_str(s, u);
    let uid_row = |u: &&str| Ok(Value::from(*u));
    let eid_key = |(eid, _): &(Id12, EdgeVersion<'_>), s: &mut String| {
        s.push('"');
        s.push_str(&hex(eid));
        s.push('"');
    };
    let brief = |(eid, e): &(Id12, EdgeVersion<'_>)| {
        Ok(json!({"eid": hex(eid), "src": e.src(), "dst": e.dst(), "rel_type": e.rel_type()}))
    };
    let mut truncated = false;
    truncated |= emit(out, "nodes_added", &nodes_added, uid_key, uid_row)?;
    truncated |= emit(out, "nodes_removed", &nodes_removed, uid_key, uid_row)?;
    truncated |= emit(out, "edges_added", &edges_added, eid_key, brief)?;
    truncated |= emit(out, "edges_removed", &edges_removed, eid_key, brief)?;
    truncated |= emit(out, "props_changed", &changed, Changed::key, Changed::row)?;
    out.set("truncated", Value::Bool(truncated));
    Ok(())
}
