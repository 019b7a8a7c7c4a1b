//! Oracles of entity_history, version_history, state_at, snapshot_subgraph (the §10 BFS)
//! and diff_snapshots, written from the spec over the plain rows.

use crate::common::kit::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::OPEN_END;

pub(crate) fn o_entity_history(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let uid = args["uid"].as_str().unwrap();
    if !registered(rows, uid) {
        return Err(unknown(uid));
    }
    let a = q.a();
    let mut ns: Vec<&Row> = rows
        .iter()
        .filter(|r| r.node && r.uid == uid && believed(r, a))
        .collect();
    by_vt_vid(&mut ns);
    let out: Vec<Value> = ns
        .iter()
        .map(|r| {
            json!({"vid": r.vid, "uid": r.uid, "label": r.label,
        "vt_s": r.vt_s, "vt_e": r.vt_e, "tt_s": r.tt_s, "tt_e": OPEN_END, "props": r.props,
        "source": r.source, "provenance_ref": r.provenance, "origin": r.origin,
        "reason": r.reason, "ingestion_lag_us": r.tt_s - r.vt_s})
        })
        .collect();
    let mut p = Map::new();
    page(&mut p, out, "vid", &q)?;
    if args["include_edges"] == true {
        let mut es: Vec<&Row> = rows
            .iter()
            .filter(|r| !r.node && (r.src == uid || r.dst == uid) && believed(r, a))
            .collect();
        by_vt_vid(&mut es);
        let keys = es.iter().map(|r| json!(r.vid)).collect();
        let els = es
            .iter()
            .map(|r| {
                json!({"eid": r.eid, "vid": r.vid, "src": r.src, "dst": r.dst,
            "rel_type": r.rel, "vt_s": r.vt_s, "vt_e": r.vt_e})
            })
            .collect();
        cap(&mut p, "edges", els, keys, &q, true);
    }
    Ok(Value::Object(p))
}

pub(crate) fn o_version_history(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let kind_node = args["kind"] == "node";
    if let Some(w) = args["window"].as_object() {
        let (x, y) = (w["t_a"].as_i64().unwrap(), w["t_b"].as_i64().unwrap());
        if x >= y {
            return Err(err(
                "E_INVALID_ARG",
                format!("window requires t_a < t_b, got [{x}, {y})"),
                json!({}),
            ));
        }
    }
    if kind_node && !args["rel_types"].is_null() {
        return Err(err(
            "E_INVALID_ARG",
            "rel_types is only valid for kind 'edge'".into(),
            json!({}),
        ));
    }
    let uid = args["uid"].as_str();
    if let Some(u) = uid {
        if !registered(rows, u) {
            return Err(unknown(u));
        }
    }
    let a = q.a();
    let belief = args["belief"].as_str().unwrap();
    let mut sel: Vec<(&Row, bool)> = Vec::new();
    for r in rows {
        if r.node != kind_node {
            continue;
        }
        if let Some(u) = uid {
            let mine = if r.node {
                r.uid == u
            } else {
                r.src == u || r.dst == u
            };
            if !mine {
                continue;
            }
        }
        if r.tt_s > a {
            continue;
        }
        let sup = r.tt_e <= a;
        let keep = match belief {
            "current" => !sup,
            "superseded" => sup,
            _ => true,
        };
        if !keep {
            continue;
        }
        if let Some(w) = args["window"].as_object() {
            let (x, y) = (w["t_a"].as_i64().unwrap(), w["t_b"].as_i64().unwrap());
            if !(r.vt_s < y && x < r.vt_e) {
                continue;
            }
        }
        if let Some(rs) = args["rel_types"].as_array() {
            if !rs.iter().any(|x| x == r.rel.as_str()) {
                continue;
            }
        }
        sel.push((r, sup));
    }
    sel.sort_by(|x, y| (x.0.tt_s, &x.0.vid).cmp(&(y.0.tt_s, &y.0.vid)));
    let out: Vec<Value> = sel
        .iter()
        .map(|(r, sup)| {
            let mut o = json!({"vid": r.vid, "vt_s": r.vt_s, "vt_e": r.vt_e, "tt_s": r.tt_s,
                "tt_e": if *sup { r.tt_e } else { OPEN_END }, "origin": r.origin, "reason": r.reason,
                "closed_by": if *sup { r.closed_by.clone() } else { Value::Null },
                "close_reason": if *sup { r.close_reason.clone() } else { Value::Null },
                "ingestion_lag_us": r.tt_s - r.vt_s});
            if r.node {
                o["uid"] = json!(r.uid);
                o["label"] = json!(r.label);
            } else {
                for (k, v) in [("eid", &r.eid), ("src", &r.src), ("dst", &r.dst), ("rel_type", &r.rel), ("disc", &r.disc)] {
                    o[k] = json!(v);
                }
            }
            o
        })
        .collect();
    let mut p = Map::new();
    page(&mut p, out, "vid", &q)?;
    Ok(Value::Object(p))
}

fn fact(r: &Row, applicable: bool) -> Value {
    json!({"eid": r.eid, "vid": r.vid, "src": r.src, "dst": r.dst, "rel_type": r.rel,
        "disc": r.disc, "vt_s": r.vt_s, "vt_e": r.vt_e, "tt_s": r.tt_s, "tt_e": OPEN_END,
        "props": r.props, "origin": r.origin, "reason": r.reason,
        "ingestion_lag_us": r.tt_s - r.vt_s, "applicable": applicable})
}

pub(crate) fn o_state_at(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let uid = args["uid"].as_str().unwrap();
    if !registered(rows, uid) {
        return Err(unknown(uid));
    }
    let at = args["at"].as_i64().unwrap();
    let a = q.a();
    let dir = args["direction"].as_str().unwrap();
    let f: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a))
        .filter(|r| match dir {
            "out" => r.src == uid,
            "in" => r.dst == uid,
            _ => r.src == uid || r.dst == uid,
        })
        .filter(|r| args["rel_type"].as_str().is_none_or(|t| r.rel == t))
        .collect();
    let mut now: Vec<&Row> = f
        .iter()
        .copied()
        .filter(|r| r.vt_s <= at && at < r.vt_e)
        .collect();
    let mut later: Vec<&Row> = f.iter().copied().filter(|r| r.vt_s > at).collect();
    by_vt_vid(&mut now);
    by_vt_vid(&mut later);
    let mut p = Map::new();
    page(
        &mut p,
        now.iter().map(|r| fact(r, true)).collect(),
        "vid",
        &q,
    )?;
    p.insert("at".into(), json!(at));
    let node = rows
        .iter()
        .find(|r| r.node && r.uid == uid && believed(r, a) && r.vt_s <= at && at < r.vt_e)
        .map_or(Value::Null, |r| {
            json!({"vid": r.vid, "label": r.label, "props": r.props,
            "vt_s": r.vt_s, "vt_e": r.vt_e, "origin": r.origin, "reason": r.reason})
        });
    p.insert("node".into(), node);
    let keys = later.iter().map(|r| json!(r.vid)).collect();
    cap(
        &mut p,
        "later_facts",
        later.iter().map(|r| fact(r, false)).collect(),
        keys,
        &q,
        false,
    );
    Ok(Value::Object(p))
}

/// The §10 BFS over plain rows: uid → (hop, label).
fn o_bfs(
    rows: &[Row],
    seeds: &[String],
    hops: i64,
    t: i64,
    a: i64,
    rels: Option<&Vec<Value>>,
) -> Result<BTreeMap<String, (i64, String)>, Value> {
    if let Some(s) = seeds.iter().find(|s| !registered(rows, s)) {
        return Err(unknown(s));
    }
    let labels: BTreeMap<&str, &str> = rows
        .iter()
        .filter(|r| r.node && believed(r, a) && r.vt_s <= t && t < r.vt_e)
        .map(|r| (r.uid.as_str(), r.label.as_str()))
        .collect();
    let edges: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && r.vt_s <= t && t < r.vt_e)
        .filter(|r| rels.is_none_or(|rs| rs.iter().any(|x| x == r.rel.as_str())))
        .collect();
    let mut visited: BTreeMap<String, (i64, String)> = BTreeMap::new();
    let mut level: BTreeSet<String> = BTreeSet::new();
    for s in seeds {
        if let Some(l) = labels.get(s.as_str()) {
            visited.insert(s.clone(), (0, l.to_string()));
            level.insert(s.clone());
        }
    }
    for h in 1..=hops {
        let mut next = BTreeSet::new();
        for e in &edges {
            for (x, y) in [(&e.src, &e.dst), (&e.dst, &e.src)] {
                if level.contains(x) && !visited.contains_key(y) {
                    if let Some(l) = labels.get(y.as_str()) {
                        next.insert(y.clone());
                        visited.entry(y.clone()).or_insert((h, l.to_string()));
                    }
                }
            }
        }
        level = next;
    }
    Ok(visited)
}

pub(crate) fn o_snapshot_subgraph(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let seeds: Vec<String> = args["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let t = args["t_valid"].as_i64().unwrap();
    let a = q.a();
    let rels = args["rel_types"].as_array();
    let visited = o_bfs(rows, &seeds, args["hops"].as_i64().unwrap(), t, a, rels)?;
    let mut es: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && r.vt_s <= t && t < r.vt_e)
        .filter(|r| rels.is_none_or(|rs| rs.iter().any(|x| x == r.rel.as_str())))
        .filter(|r| visited.contains_key(&r.src) && visited.contains_key(&r.dst))
        .collect();
    by_vt_vid(&mut es);
    let mut p = Map::new();
    page(
        &mut p,
        es.iter()
            .map(|r| {
                json!({"eid": r.eid, "vid": r.vid, "src": r.src, "dst": r.dst,
        "rel_type": r.rel, "vt_s": r.vt_s, "vt_e": r.vt_e})
            })
            .collect(),
        "vid",
        &q,
    )?;
    let mut ns: Vec<(i64, &String, &String)> =
        visited.iter().map(|(u, (h, l))| (*h, u, l)).collect();
    ns.sort();
    let keys = ns.iter().map(|n| json!(n.1)).collect();
    let nt = cap(
        &mut p,
        "nodes",
        ns.iter()
            .map(|(h, u, l)| json!({"uid": u, "label": l, "hop": h}))
            .collect(),
        keys,
        &q,
        true,
    );
    let rt = p["truncated"] == true;
    p.insert("truncated".into(), json!(rt || nt));
    Ok(Value::Object(p))
}

pub(crate) fn o_diff(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let (t1, t2) = (args["t1"].as_i64().unwrap(), args["t2"].as_i64().unwrap());
    let a = q.a();
    let allowed: Option<BTreeSet<String>> = match args["scope"].as_object() {
        None => None,
        Some(s) => {
            let seeds: Vec<String> = s["seeds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect();
            let h = s["hops"].as_i64().unwrap();
            let v1 = o_bfs(rows, &seeds, h, t1, a, None)?;
            let v2 = o_bfs(rows, &seeds, h, t2, a, None)?;
            Some(v1.into_keys().chain(v2.into_keys()).collect())
        }
    };
    let ok = |u: &str| allowed.as_ref().is_none_or(|s| s.contains(u));
    let at = |t: i64, node: bool| -> BTreeMap<String, &Row> {
        rows.iter()
            .filter(|r| r.node == node && believed(r, a) && r.vt_s <= t && t < r.vt_e)
            .filter(|r| {
                if node {
                    ok(&r.uid)
                } else {
                    ok(&r.src) && ok(&r.dst)
                }
            })
            .map(|r| (if node { r.uid.clone() } else { r.eid.clone() }, r))
            .collect()
    };
    let (n1, n2, e1, e2) = (at(t1, true), at(t2, true), at(t1, false), at(t2, false));
    let mut p = Map::new();
    let mut tr = false;
    let na: Vec<Value> = n2
        .keys()
        .filter(|k| !n1.contains_key(*k))
        .map(|k| json!(k))
        .collect();
    let nr: Vec<Value> = n1
        .keys()
        .filter(|k| !n2.contains_key(*k))
        .map(|k| json!(k))
        .collect();
    tr |= cap(&mut p, "nodes_added", na.clone(), na, &q, false);
    tr |= cap(&mut p, "nodes_removed", nr.clone(), nr, &q, false);
    let brief = |r: &Row| json!({"eid": r.eid, "src": r.src, "dst": r.dst, "rel_type": r.rel});
    let ea: Vec<Value> = e2
        .iter()
        .filter(|(k, _)| !e1.contains_key(*k))
        .map(|(_, r)| brief(r))
        .collect();
    let er: Vec<Value> = e1
        .iter()
        .filter(|(k, _)| !e2.contains_key(*k))
        .map(|(_, r)| brief(r))
        .collect();
    let ka = ea.iter().map(|x| x["eid"].clone()).collect();
    let kr = er.iter().map(|x| x["eid"].clone()).collect();
    tr |= cap(&mut p, "edges_added", ea, ka, &q, false);
    tr |= cap(&mut p, "edges_removed", er, kr, &q, false);
    let mut ch = Vec::new();
    for (u, x) in &n1 {
        if let Some(y) = n2.get(u) {
            if x.vid != y.vid && (x.props != y.props || x.label != y.label) {
                ch.push(json!({"kind": "node", "id": u, "from": {"label": x.label, "props": x.props}, "to": {"label": y.label, "props": y.props}}));
            }
        }
    }
    for (e, x) in &e1 {
        if let Some(y) = e2.get(e) {
            if x.vid != y.vid && x.props != y.props {
                ch.push(json!({"kind": "edge", "id": e, "from": {"props": x.props}, "to": {"props": y.props}}));
            }
        }
    }
    let kc = ch.iter().map(|c| json!([c["kind"], c["id"]])).collect();
    tr |= cap(&mut p, "props_changed", ch, kc, &q, false);
    p.insert("truncated".into(), json!(tr));
    Ok(Value::Object(p))
}
