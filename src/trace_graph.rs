//! The plan as a step graph for the trace viewer: the DAG of a plan's steps and their
//! `$ref` / `depends_on` edges, laid out in layers (a step sits one layer below the deepest
//! step it depends on) and drawn as inline SVG — no external resources, every label
//! escaped. Each box links to the step's details on the page.

use crate::trace_view::esc;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tgms_verifier::refpath::find_refs;

/// One step as the graph shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The step id.
    pub id: String,
    /// The operator the step called.
    pub op: String,
    /// The step's status in the trace (`ok`, `error`, `skipped`, ...).
    pub status: String,
    /// The step's result is truncated or tainted by a truncated input.
    pub tainted: bool,
}

/// One edge: `to` reads `from` (through a `$ref`, a `depends_on` entry, or both).
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// The step read from.
    pub from: String,
    /// The step that reads it.
    pub to: String,
    /// The `$ref` strings of `to` that point into `from` (empty: `depends_on` only).
    pub refs: Vec<String>,
}

/// The nodes (in trace order) and the edges of a trace, with the edges read from the plan
/// when it is known (a trace records no dependencies of its own).
pub fn graph(trace: &Value, plan: Option<&Value>) -> (Vec<Node>, Vec<Edge>) {
    let nodes: Vec<Node> = trace["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Node {
            id: r["step_id"].as_str().unwrap_or("").to_string(),
            op: r["op"].as_str().unwrap_or("").to_string(),
            status: r["status"].as_str().unwrap_or("").to_string(),
            tainted: r["truncated"] == Value::Bool(true)
                || r["upstream_truncated"] == Value::Bool(true)
                || r.get("ref_truncations").is_some(),
        })
        .collect();
    let mut edges: Vec<Edge> = Vec::new();
    for s in plan
        .and_then(|p| p["steps"].as_array())
        .into_iter()
        .flatten()
    {
        let to = s["id"].as_str().unwrap_or("");
        let mut add = |from: &str, r: Option<String>| {
            if !nodes.iter().any(|n| n.id == from) || from == to {
                return;
            }
            let i = match edges.iter().position(|e| e.from == from && e.to == to) {
                Some(i) => i,
                None => {
                    edges.push(Edge {
                        from: from.to_string(),
                        to: to.to_string(),
                        refs: Vec::new(),
                    });
                    edges.len() - 1
                }
            };
            if let Some(r) = r {
                if !edges[i].refs.contains(&r) {
                    edges[i].refs.push(r);
                }
            }
        };
        for d in s["depends_on"].as_array().into_iter().flatten() {
            add(d.as_str().unwrap_or(""), None);
        }
        for r in find_refs(&s["args"]) {
            if let Ok(p) = r.parsed {
                add(&p.step, Some(p.raw));
            }
        }
    }
    (nodes, edges)
}

/// The layer of each node: 0 for a step with no inputs, else one more than its deepest
/// input. A cycle (rejected by the static verifier, so only in a hand-made trace) cannot
/// loop: layers are capped at the number of nodes.
fn layers(nodes: &[Node], edges: &[Edge]) -> BTreeMap<String, usize> {
    let mut layer: BTreeMap<String, usize> = nodes.iter().map(|n| (n.id.clone(), 0)).collect();
    for _ in 0..nodes.len() {
        let mut changed = false;
        for e in edges {
            let want = (layer[&e.from] + 1).min(nodes.len());
            if layer[&e.to] < want {
                layer.insert(e.to.clone(), want);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    layer
}

const NODE_W: usize = 176;
const NODE_H: usize = 46;
const GAP_X: usize = 24;
const GAP_Y: usize = 44;
const PAD: usize = 8;

/// Shortens a label to `max` characters (the full text is in the box's title).
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The graph as an inline SVG figure (it scales down to the width of its box), with the
/// edges also listed as text below it.
pub fn svg(nodes: &[Node], edges: &[Edge], have_plan: bool) -> String {
    let mut h = String::new();
    if nodes.is_empty() {
        h.push_str("<p><small>No step ran.</small></p>");
        return h;
    }
    let layer = layers(nodes, edges);
    let depth = layer.values().copied().max().unwrap_or(0) + 1;
    let mut rows: Vec<Vec<&Node>> = vec![Vec::new(); depth];
    for n in nodes {
        rows[layer[&n.id]].push(n);
    }
    let widest = rows.iter().map(Vec::len).max().unwrap_or(1);
    let width_px = PAD * 2 + widest * NODE_W + (widest - 1) * GAP_X;
    let height_px = PAD * 2 + depth * NODE_H + (depth - 1) * GAP_Y;
    // Each layer is centred.
    let mut pos: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (li, row) in rows.iter().enumerate() {
        let row_w = row.len() * NODE_W + row.len().saturating_sub(1) * GAP_X;
        let x0 = (width_px - row_w) / 2;
        for (i, n) in row.iter().enumerate() {
            pos.insert(
                n.id.as_str(),
                (x0 + i * (NODE_W + GAP_X), PAD + li * (NODE_H + GAP_Y)),
            );
        }
    }
    let _ = write!(
        h,
        "<div class=\"graph\"><svg role=\"img\" aria-label=\"plan step graph\" viewBox=\"0 0 {width_px} {height_px}\" width=\"{width_px}\" height=\"{height_px}\"><defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#557\"/></marker></defs>"
    );
    for e in edges {
        let (fx, fy) = pos[e.from.as_str()];
        let (tx, ty) = pos[e.to.as_str()];
        let (x1, y1) = (fx + NODE_W / 2, fy + NODE_H);
        let (x2, y2) = (tx + NODE_W / 2, ty);
        let mid = (y1 + y2) / 2;
        let cls = if e.refs.is_empty() { "e dep" } else { "e" };
        let _ = write!(
            h,
            "<path class=\"{cls}\" data-from=\"{}\" data-to=\"{}\" d=\"M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}\" marker-end=\"url(#arr)\"><title>{} → {}{}</title></path>",
            esc(&e.from),
            esc(&e.to),
            esc(&e.from),
            esc(&e.to),
            if e.refs.is_empty() {
                " (depends_on)".to_string()
            } else {
                format!(" ({})", esc(&e.refs.join(", ")))
            }
        );
    }
    for n in nodes {
        let (x, y) = pos[n.id.as_str()];
        let cls = match (n.status.as_str(), n.tainted) {
            ("ok", false) => "n ok",
            ("ok", true) => "n weak",
            _ => "n bad",
        };
        let _ = write!(
            h,
            "<a href=\"#step-{id}\"><g class=\"{cls}\" data-step=\"{id}\"><title>{id}: {op} — {st}{taint}</title><rect x=\"{x}\" y=\"{y}\" width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"6\"/><text x=\"{tx}\" y=\"{ty1}\" class=\"sid\">{sid} · {sst}</text><text x=\"{tx}\" y=\"{ty2}\" class=\"sop\">{sop}</text></g></a>",
            id = esc(&n.id),
            op = esc(&n.op),
            st = esc(&n.status),
            taint = if n.tainted { ", truncated/tainted" } else { "" },
            tx = x + 8,
            ty1 = y + 19,
            ty2 = y + 37,
            sid = esc(&fit(&n.id, 10)),
            sst = esc(&fit(
                &format!("{}{}", n.status, if n.tainted { " · taint" } else { "" }),
                14
            )),
            sop = esc(&fit(&n.op, 22)),
        );
    }
    h.push_str("</svg></div>");
    if !have_plan {
        h.push_str("<p><small>The trace records no dependencies of its own: give the plan (<code>tgms view … --plan PLAN.json</code>) to draw the <code>$ref</code> and <code>depends_on</code> edges.</small></p>");
    } else if edges.is_empty() {
        h.push_str("<p><small>No step reads another.</small></p>");
    } else {
        h.push_str("<details><summary>edges as text</summary><ul class=\"edges\">");
        for e in edges {
            let _ = write!(
                h,
                "<li><a href=\"#step-{0}\">{0}</a> → <a href=\"#step-{1}\">{1}</a> {2}</li>",
                esc(&e.from),
                esc(&e.to),
                if e.refs.is_empty() {
                    "<small>depends_on</small>".to_string()
                } else {
                    e.refs
                        .iter()
                        .map(|r| format!("<code class=\"ref\">{}</code>", esc(r)))
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            );
        }
        h.push_str("</ul></details>");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edges_come_from_refs_and_depends_on_and_layers_follow_them() {
        let trace = json!({"steps": [
            {"step_id": "s1", "op": "entity_history", "status": "ok"},
            {"step_id": "s2", "op": "state_at", "status": "ok", "truncated": true},
            {"step_id": "s3", "op": "compute", "status": "error"}]});
        let plan = json!({"steps": [
            {"id": "s1", "op": "entity_history", "args": {}},
            {"id": "s2", "op": "state_at", "args": {"uid": {"$ref": "s1.rows[0].uid"}}, "depends_on": ["s1"]},
            {"id": "s3", "op": "compute", "args": {"input": {"$ref": "s2.rows"}}, "depends_on": ["s1", "s2"]}]});
        let (nodes, edges) = graph(&trace, Some(&plan));
        assert_eq!(nodes.len(), 3);
        assert!(nodes[1].tainted && !nodes[0].tainted);
        let pairs: Vec<(&str, &str, usize)> = edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.refs.len()))
            .collect();
        assert_eq!(pairs, [("s1", "s2", 1), ("s1", "s3", 0), ("s2", "s3", 1)]);
        let l = layers(&nodes, &edges);
        assert_eq!((l["s1"], l["s2"], l["s3"]), (0, 1, 2));
        let s = svg(&nodes, &edges, true);
        assert_eq!(s.matches("<path class=\"e").count(), 3);
        assert!(s.contains("class=\"e dep\" data-from=\"s1\" data-to=\"s3\""));
        assert!(s.contains("href=\"#step-s3\""));
    }

    #[test]
    fn a_cycle_in_a_hand_made_plan_terminates() {
        let trace = json!({"steps": [{"step_id": "a", "op": "x", "status": "ok"},
            {"step_id": "b", "op": "y", "status": "ok"}]});
        let plan = json!({"steps": [{"id": "a", "depends_on": ["b"], "args": {}},
            {"id": "b", "depends_on": ["a"], "args": {}}]});
        let (nodes, edges) = graph(&trace, Some(&plan));
        let l = layers(&nodes, &edges);
        assert!(l.values().all(|&x| x <= 2));
        assert!(svg(&nodes, &edges, true).contains("<svg"));
    }
}
