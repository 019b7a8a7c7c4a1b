//! `snapshot_subgraph` (O2, `operators.md` §10): the k-hop undirected neighbourhood of seed
//! nodes in the snapshot `G(t_valid, as_of_tt)`. Walks adjacency from the seeds (cost follows
//! the answer): each visited node costs its degree in the instant, never a store scan.

use super::{edge_brief, sort_vt_vid, valid_at_node};
use crate::args::Args;
use crate::cost::{adjacency_estimate, Estimate};
use crate::error::{Code, OpError};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::HashMap;
use tgms_engine::{Identity, Snapshot, Version};

const MANUAL: &str = "The neighbourhood of `seeds` up to `hops` (0–3) undirected hops in the snapshot at instant `t_valid` under belief state `as_of_tt`: induced edges in `rows`, visited nodes with their hop distance in `nodes`. Only nodes that exist (have a node version) at `t_valid` are visited. Example: `{\"seeds\": [{\"$ref\": \"s1.rows[0].uid\"}], \"hops\": 2, \"t_valid\": 1700000000000000}`.";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "snapshot_subgraph",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("seeds", frag::uid_list()).uids(&["[*]"]),
            ArgDecl::opt(
                "hops",
                json!({"type": "integer", "minimum": 0, "maximum": 3}),
                json!(1),
            ),
            ArgDecl::req("t_valid", frag::timestamp()),
            common::as_of_tt(),
            common::rel_types(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![validate_hops],
        cost: Some(cost),
        coeff: 115.0,
        outputs: Outputs::default()
            .rows(
                "obj{eid: hex, vid: hex, src: uid, dst: uid, rel_type: str, vt_s: int, vt_e: int}",
                RowKey::Field("vid"),
            )
            .capped(
                "nodes",
                "obj{uid: uid, label: str, hop: int}",
                RowKey::Field("uid"),
                true,
            )
            .build(),
        kernel,
    }
}

/// The seeds' adjacency for `hops` hops (`cost::adjacency_estimate`).
fn cost(args: &Args, stats: &tgms_engine::Stats) -> Estimate {
    let seeds = args
        .get("seeds")
        .and_then(serde_json::Value::as_array)
        .map_or(1, Vec::len);
    adjacency_estimate(stats, seeds, args.int("hops").unwrap_or(1))
}

fn validate_hops(args: &Args) -> Result<(), OpError> {
    if args.int("hops")? > 3 {
        return Err(OpError::new(Code::Limit, "hops capped at 3"));
    }
    Ok(())
}

/// The nodes visited by the §10 breadth-first search: uid → (hop, label).
pub struct Visited {
    /// Every visited node: uid → (hops from the nearest seed, its label at `t`).
    pub nodes: HashMap<String, (i64, String)>,
}

/// Runs the §10 BFS in the snapshot at `t` under `as_of_tt`. Unknown seeds are
/// `E_NOT_FOUND` (the first in argument order); seeds without a node version valid at `t`
/// are dropped.
pub fn bfs(
    snap: Snapshot<'_>,
    seeds: &[String],
    hops: i64,
    t: i64,
    as_of_tt: i64,
    rels: Option<&[String]>,
) -> Result<Visited, OpError> {
    if let Some(s) = seeds.iter().find(|s| !snap.has_uid(s)) {
        return Err(OpError::unknown_uid(s));
    }
    let mut label_cache: HashMap<String, Option<String>> = HashMap::new();
    let mut snapshot_label = |uid: &str| -> Option<String> {
        label_cache
            .entry(uid.to_string())
            .or_insert_with(|| {
                snap.versions_of(&Identity::Node(uid.to_string()), as_of_tt)
                    .into_iter()
                    .find_map(|v| match v {
                        Version::Node(n) if valid_at_node(&n, t) => Some(n.label().to_string()),
                        _ => None,
                    })
            })
            .clone()
    };
    let mut nodes: HashMap<String, (i64, String)> = HashMap::new();
    let mut frontier: Vec<String> = Vec::new();
    for s in seeds {
        if nodes.contains_key(s) {
            continue;
        }
        if let Some(l) = snapshot_label(s) {
            nodes.insert(s.clone(), (0, l));
            frontier.push(s.clone());
        }
    }
    let w = Some((t, t + 1));
    let rel_ok = |r: &str| rels.is_none_or(|rs| rs.iter().any(|x| x == r));
    for h in 1..=hops {
        let mut next = Vec::new();
        for u in &frontier {
            let outs = snap
                .out_edges(u, w, as_of_tt)
                .into_iter()
                .map(|e| (e, true));
            let ins = snap
                .in_edges(u, w, as_of_tt)
                .into_iter()
                .map(|e| (e, false));
            for (e, out) in outs.chain(ins) {
                if !rel_ok(e.rel_type()) {
                    continue;
                }
                let other = if out { e.dst() } else { e.src() };
                if nodes.contains_key(other) {
                    continue;
                }
                if let Some(l) = snapshot_label(other) {
                    nodes.insert(other.to_string(), (h, l));
                    next.push(other.to_string());
                }
            }
        }
        frontier = next;
    }
    Ok(Visited { nodes })
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let seeds = args.str_list("seeds")?.unwrap_or_default();
    let t = args.int("t_valid")?;
    let a = args.as_of_tt();
    let rels = args.str_list("rel_types")?;
    let visited = bfs(ctx.snap, &seeds, args.int("hops")?, t, a, rels.as_deref())?;
    // Every induced edge is an out-edge of its visited source.
    let mut rows: Vec<Value> = Vec::new();
    for u in visited.nodes.keys() {
        for e in ctx.snap.out_edges(u, Some((t, t + 1)), a) {
            if rels
                .as_ref()
                .is_some_and(|rs| !rs.iter().any(|x| x == e.rel_type()))
            {
                continue;
            }
            if visited.nodes.contains_key(e.dst()) {
                rows.push(edge_brief(&e));
            }
        }
    }
    sort_vt_vid(&mut rows);
    let rows_truncated = out.paged("rows", rows)?;
    let mut nodes: Vec<(i64, &String, &String)> =
        visited.nodes.iter().map(|(u, (h, l))| (*h, u, l)).collect();
    nodes.sort();
    let nodes: Vec<Value> = nodes
        .into_iter()
        .map(|(h, u, l)| json!({"uid": u, "label": l, "hop": h}))
        .collect();
    let nodes_truncated = out.capped("nodes", nodes)?;
    out.set("truncated", Value::Bool(rows_truncated || nodes_truncated));
    Ok(())
}
