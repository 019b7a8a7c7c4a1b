//! Brute-force oracles for entity_history, version_history, state_at, snapshot_subgraph,
//! diff_snapshots and the traversal and pattern operators (§12–§15, §19, §25), written from `spec/operators.md` over a plain `Vec` of stored version
//! rows (taken from the store's digest rows, not from the read paths the operators use),
//! compared byte-for-byte with the operators on randomized stores with corrections,
//! retractions, interval edges and ingests — at least 500 (store, args) cases per operator.
//! Also: diff composition and bi-temporal immutability (metamorphic), and bad input.

mod common;
use common::kit::*;
use common::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::{Store, OPEN_END};

fn o_entity_history(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

fn o_version_history(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

fn o_state_at(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

fn o_snapshot_subgraph(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

fn o_diff(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

// ---------------------------------------------------------------------------------------
// Traversal and pattern operators (§12–§15, §19, §25): brute-force oracles over plain rows,
// written from the spec, independent of `tgms_operators::kernels`.

use common::patterns_oracle::*;

fn o_weighted(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let seed = args["seed"].as_str().unwrap();
    if !registered(rows, seed) {
        return Err(unknown(seed));
    }
    let t = args["t"].as_i64().unwrap();
    let types = ["entity", "semantic", "temporal", "causal"];
    let mut mult = [1.2, 0.8, 0.8, 1.5];
    for (i, ty) in types.iter().enumerate() {
        if let Some(x) = args["multipliers"][*ty].as_f64() {
            mult[i] = x;
        }
    }
    let links: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, q.a()) && r.vt_s <= t && t < r.vt_e && r.src != r.dst)
        .filter(|r| {
            args["rel_types"]
                .as_array()
                .is_none_or(|rs| rs.iter().any(|x| x == r.rel.as_str()))
        })
        .collect();
    let usable = |r: &Row| -> Option<(usize, f64)> {
        let k = types
            .iter()
            .position(|x| r.props["link_type"].as_str() == Some(*x))?;
        let w = match r.props.get("weight") {
            None => 1.0,
            Some(Value::Number(n)) => n.as_f64().filter(|x| *x >= 0.0)?,
            Some(_) => return None,
        };
        Some((k, w))
    };
    let dir = args["direction"].as_str().unwrap_or("out");
    let max_depth = args["max_depth"].as_u64().unwrap_or(3) as usize;
    // Every node-simple path as (nodes, links), with examined unusable links.
    let mut skipped: BTreeSet<String> = BTreeSet::new();
    let mut paths: Vec<(Vec<String>, Vec<&Row>)> = Vec::new();
    let mut stack: Vec<(Vec<String>, Vec<&Row>)> = vec![(vec![seed.to_string()], vec![])];
    while let Some((nodes, es)) = stack.pop() {
        if es.len() >= max_depth {
            continue;
        }
        let u = nodes.last().unwrap().clone();
        for l in &links {
            let other = if dir != "in" && l.src == u {
                Some(&l.dst)
            } else {
                None
            };
            let back = if dir != "out" && l.dst == u {
                Some(&l.src)
            } else {
                None
            };
            for v in [other, back].into_iter().flatten() {
                if usable(l).is_none() {
                    skipped.insert(l.vid.clone());
                    continue;
                }
                if nodes.contains(v) {
                    continue;
                }
                let mut n2 = nodes.clone();
                n2.push(v.clone());
                let mut e2 = es.clone();
                e2.push(l);
                paths.push((n2.clone(), e2.clone()));
                stack.push((n2, e2));
            }
        }
    }
    // uid → (score, depth, eids, nodes, types)
    type B = (f64, usize, Vec<String>, Vec<String>, Vec<&'static str>);
    let mut best: BTreeMap<String, B> = BTreeMap::new();
    for (nodes, es) in &paths {
        let mut s = 1.0f64;
        let mut tys = Vec::new();
        for e in es {
            let (k, w) = usable(e).unwrap();
            s *= mult[k] * w;
            tys.push(types[k]);
        }
        let s = tgms_operators::json::round9(s).unwrap();
        let eids: Vec<String> = es.iter().map(|e| e.eid.clone()).collect();
        let v = nodes.last().unwrap().clone();
        let cand: B = (s, es.len(), eids, nodes.clone(), tys);
        let replace = match best.get(&v) {
            None => true,
            Some(b) => s > b.0 || (s == b.0 && (cand.1, &cand.2) < (b.1, &b.2)),
        };
        if replace {
            best.insert(v, cand);
        }
    }
    let min_score = args["min_score"].as_f64().unwrap_or(0.0);
    let mut out: Vec<(&String, &B)> = best.iter().filter(|(_, b)| b.0 >= min_score).collect();
    out.sort_by(|x, y| {
        y.1 .0
            .partial_cmp(&x.1 .0)
            .unwrap()
            .then(x.1 .1.cmp(&y.1 .1))
            .then(x.0.cmp(y.0))
    });
    let rows_out: Vec<Value> = out
        .iter()
        .map(|(u, b)| {
            json!({"uid": u, "score": tgms_operators::json::float(b.0), "depth": b.1,
                "path": b.3, "link_types": b.4})
        })
        .collect();
    let mut p = Map::new();
    page(&mut p, rows_out, "uid", &q)?;
    let mut m = Map::new();
    for (i, ty) in types.iter().enumerate() {
        m.insert(ty.to_string(), tgms_operators::json::float(mult[i]));
    }
    p.insert("multipliers".into(), Value::Object(m));
    p.insert("skipped_edges".into(), json!(skipped.len()));
    Ok(Value::Object(p))
}

fn window_arg(r: &mut Rng) -> Value {
    let x = r.int(0, 60);
    json!({"t_a": x, "t_b": if r.chance(5) { x } else { x + r.int(1, 60) }})
}

/// A window that mostly covers the event times of [`grow_dense`] (sometimes invalid).
fn event_window(r: &mut Rng) -> Value {
    let x = r.int(0, 15);
    if r.chance(5) {
        window_arg(r)
    } else {
        json!({"t_a": x, "t_b": x + r.int(5, 50)})
    }
}

/// Mostly an edge endpoint (a–d), sometimes a node-only or unknown uid.
fn edge_uid(r: &mut Rng) -> &'static str {
    if r.chance(15) {
        uid_arg(r)
    } else {
        r.pick(&UIDS[..4])
    }
}

fn motif_arg(r: &mut Rng, with_all: bool) -> String {
    match r.below(10) {
        0..=3 => r
            .pick(&[
                "M_2node_pingpong",
                "M_path_3",
                "M_star_out_3",
                "M_triangle_acyclic_1",
                "M_triangle_cyclic",
            ])
            .to_string(),
        4..=5 if with_all => "all".to_string(),
        _ => format!("M_{}_{}", r.int(1, 7), r.int(1, 7)),
    }
}

fn motif_args_for(r: &mut Rng, with_all: bool) -> Value {
    let mut v = json!({"motif": motif_arg(r, with_all), "delta": r.int(1, 40), "window": event_window(r),
        "tie_mode": r.pick(&["ordered", "strict"])});
    if r.chance(30) {
        let n = r.int(0, 4);
        let f: Vec<&str> = (0..n).map(|_| uid_arg(r)).collect();
        v["node_filter"] = json!(f);
    }
    // Sample mode is estimated (operators/tests/approx_motifs.rs); here only the instance
    // finder's refusal of it is compared (the draw stays, so later cases are unchanged).
    if r.chance(4) && !with_all {
        v["mode"] = json!("sample");
    }
    v
}

/// Arguments of the traversal and pattern operators (schema-valid).
fn args_for_traversal(op: &str, r: &mut Rng) -> Value {
    match op {
        "temporal_reachability" => {
            let mut v = json!({"src": edge_uid(r), "window": event_window(r),
                "direction": r.pick(&["out", "in", "both"])});
            if r.chance(40) {
                v["delta_max_wait"] = json!(r.int(1, 15));
            }
            v
        }
        "temporal_paths" => {
            json!({"src": edge_uid(r), "dst": edge_uid(r), "window": event_window(r),
            "k": r.int(1, 6), "max_hops": r.int(1, 5)})
        }
        "count_temporal_motifs" => motif_args_for(r, true),
        "find_temporal_motif_instances" => motif_args_for(r, false),
        "co_active" => {
            let spec = |r: &mut Rng| {
                let mut s = json!({});
                for k in ["src", "dst"] {
                    if r.chance(30) {
                        s[k] = if r.chance(20) {
                            json!("")
                        } else {
                            json!(uid_arg(r))
                        };
                    }
                }
                if r.chance(30) {
                    s["rel_type"] = json!(r.pick(&RELS));
                }
                s
            };
            let (a, b) = (spec(r), spec(r));
            let rel = r.pick(&["overlaps", "during", "before", "meets"]);
            let mut ar = json!({"relation": rel});
            if r.chance(if rel == "before" { 90 } else { 30 }) {
                ar["gap"] = json!(r.int(1, 30));
            }
            json!({"a_spec": a, "b_spec": b, "allen_relation": ar})
        }
        _ => {
            let mut v = json!({"seed": edge_uid(r), "t": r.int(0, 40), "max_depth": r.int(1, 4),
                "direction": r.pick(&["out", "in", "both"])});
            if r.chance(40) {
                let mut m = json!({});
                for k in ["entity", "semantic", "temporal", "causal"] {
                    if r.chance(50) {
                        m[k] = json!(0.5 * r.below(5) as f64);
                    }
                }
                v["multipliers"] = m;
            }
            if r.chance(30) {
                v["rel_types"] = json!([r.pick(&RELS)]);
            }
            if r.chance(30) {
                v["min_score"] = json!(0.25 * r.below(5) as f64);
            }
            v
        }
    }
}

// ---------------------------------------------------------------------------------------
// Random arguments (schema-valid; defaults filled by the oracle side explicitly).

fn as_of(r: &mut Rng, s: &Store) -> Value {
    let last = s.last_tt().unwrap_or(0);
    if r.chance(40) {
        json!(OPEN_END)
    } else {
        json!(r.int(0, last + 2))
    }
}

fn paging(r: &mut Rng, o: &mut Value) {
    o["limit"] = json!(if r.chance(50) { r.int(1, 4) } else { 100 });
    o["cursor"] = match r.below(10) {
        0..=4 => Value::Null,
        5 => json!(""),
        6 => json!("x1"),
        _ => json!(r.int(0, 6).to_string()),
    };
}

fn uid_arg(r: &mut Rng) -> &'static str {
    if r.chance(8) {
        "zz"
    } else {
        r.pick(&UIDS)
    }
}

fn args_for(op: &str, r: &mut Rng, s: &Store) -> Value {
    let mut o = match op {
        "entity_history" => json!({"uid": uid_arg(r), "include_edges": r.chance(50)}),
        "version_history" => {
            let kind = if r.chance(50) { "node" } else { "edge" };
            let mut v = json!({"kind": kind, "belief": r.pick(&["current", "superseded", "all"])});
            v["window"] = if r.chance(50) {
                Value::Null
            } else {
                let x = r.int(0, 60);
                json!({"t_a": x, "t_b": if r.chance(10) { x } else { x + r.int(1, 40) }})
            };
            v["uid"] = if r.chance(50) {
                Value::Null
            } else {
                json!(uid_arg(r))
            };
            v["rel_types"] = if r.chance(70) {
                Value::Null
            } else {
                json!([r.pick(&RELS)])
            };
            v
        }
        "aggregate_events" => agg_args(r),
        "state_at" => json!({"uid": uid_arg(r), "at": r.int(0, 70),
            "rel_type": if r.chance(60) { Value::Null } else { json!(r.pick(&RELS)) },
            "direction": r.pick(&["out", "in", "both"])}),
        "snapshot_subgraph" => {
            let n = r.int(1, 4);
            let mut seeds: Vec<&str> = vec![uid_arg(r)];
            seeds.extend((1..n).map(|_| r.pick(&UIDS[..4])));
            json!({"seeds": seeds, "hops": r.int(0, 4), "t_valid": r.int(0, 70),
                "rel_types": if r.chance(70) { Value::Null } else { json!([r.pick(&RELS)]) }})
        }
        "graph_metric_timeseries"
        | "burst_detection"
        | "neighborhood_evolution"
        | "resolve_entities" => args_for_series(op, r),
        "diff_snapshots" => {
            let scope = if r.chance(60) {
                Value::Null
            } else {
                let n = r.int(1, 3);
                let seeds: Vec<&str> = (0..n).map(|_| uid_arg(r)).collect();
                json!({"seeds": seeds, "hops": r.int(0, 4)})
            };
            json!({"t1": r.int(0, 70), "t2": r.int(0, 70), "scope": scope, "limit": if r.chance(50) { r.int(1, 4) } else { 100 }})
        }
        _ => args_for_traversal(op, r),
    };
    o["as_of_tt"] = as_of(r, s);
    if ![
        "diff_snapshots",
        "neighborhood_evolution",
        "temporal_paths",
        "count_temporal_motifs",
    ]
    .contains(&op)
    {
        paging(r, &mut o);
    }
    o
}

type Oracle = fn(&[Row], &Value) -> Result<Value, Value>;

const OPS: [(&str, Oracle); 16] = [
    ("entity_history", o_entity_history),
    ("version_history", o_version_history),
    ("state_at", o_state_at),
    ("snapshot_subgraph", o_snapshot_subgraph),
    ("diff_snapshots", o_diff),
    ("graph_metric_timeseries", o_series),
    ("burst_detection", o_burst),
    ("neighborhood_evolution", o_nbr),
    ("resolve_entities", o_resolve),
    ("aggregate_events", o_aggregate),
    ("temporal_reachability", o_reach),
    ("temporal_paths", o_paths),
    ("count_temporal_motifs", o_count_motifs),
    ("find_temporal_motif_instances", o_find_motifs),
    ("co_active", o_co_active),
    ("weighted_traverse", o_weighted),
];

#[test]
fn operators_match_their_oracles_on_random_stores() {
    let mut r = Rng(0x7467_6d73);
    let mut cases: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for store_no in 0..120 {
        let (_d, mut s) = new_store();
        let n = r.int(3, 25) as usize;
        grow(&mut s, &mut r, n);
        let rows = plain_rows(&s);
        for (op, oracle) in OPS {
            for _ in 0..5 {
                let args = args_for(op, &mut r, &s);
                let got = call(&s, op, args.clone());
                let want = match oracle(&rows, &args) {
                    Ok(p) => p,
                    Err(e) => e,
                };
                let got_cmp = if got.get("error").is_some() {
                    got.clone()
                } else {
                    payload(&got)
                };
                assert_eq!(
                    canon(&got_cmp),
                    canon(&want),
                    "store #{store_no}, {op} {args}\nrows: {rows:#?}"
                );
                let c = cases.entry(op).or_default();
                c.0 += 1;
                if got.get("error").is_none() {
                    c.1 += 1;
                }
            }
        }
    }
    for (op, (n, ok)) in &cases {
        assert!(*n >= 500, "{op}: only {n} cases");
        assert!(*ok >= 250, "{op}: only {ok} successful cases of {n}");
    }
}

/// Event-heavy workload for the traversal and pattern operators: the random batches of
/// [`grow`] (corrections, retractions, interval edges) around several ingests of 3–12 events
/// over four nodes with times in [0, 30) — many equal times, self loops, interval events.
fn grow_dense(s: &mut Store, r: &mut Rng) {
    let n = r.int(1, 8) as usize;
    grow(s, r, n);
    for _ in 0..r.int(2, 6) {
        let k = r.int(3, 13);
        let events: Vec<Value> = (0..k)
            .map(|_| {
                let t = r.int(0, 30);
                let mut ev = json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
                    "rel_type": r.pick(&RELS), "vt_s": t});
                if r.chance(35) {
                    ev["vt_e"] = json!(t + r.int(1, 40));
                }
                if r.chance(70) {
                    // Mostly typed links (weighted_traverse), some unusable.
                    let mut p = json!({"link_type": r.pick(&["entity", "semantic", "temporal", "causal", "causal", "friend"])});
                    match r.below(5) {
                        0 => {}
                        1 => p["weight"] = if r.chance(50) { json!("high") } else { json!(true) },
                        _ => p["weight"] = json!(0.25 * r.below(9) as f64),
                    }
                    ev["props"] = p;
                }
                ev
            })
            .collect();
        let tt = s.last_tt().unwrap_or(0) + 1;
        s.write_at(
            tt,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
        let m = r.int(0, 3) as usize;
        grow(s, r, m);
    }
}

/// The operators of issue #5, exercised on event-heavy stores.
const TRAVERSAL: [&str; 6] = [
    "temporal_reachability",
    "temporal_paths",
    "count_temporal_motifs",
    "find_temporal_motif_instances",
    "co_active",
    "weighted_traverse",
];

#[test]
fn traversal_operators_match_their_oracles_on_event_heavy_stores() {
    let mut r = Rng(0x6f70_7335);
    let mut cases: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for store_no in 0..120 {
        let (_d, mut s) = new_store();
        grow_dense(&mut s, &mut r);
        let rows = plain_rows(&s);
        for &(op, oracle) in OPS.iter().filter(|(op, _)| TRAVERSAL.contains(op)) {
            for _ in 0..5 {
                let args = args_for(op, &mut r, &s);
                let got = call(&s, op, args.clone());
                let want = match oracle(&rows, &args) {
                    Ok(p) => p,
                    Err(e) => e,
                };
                let got_cmp = if got.get("error").is_some() {
                    got.clone()
                } else {
                    payload(&got)
                };
                assert_eq!(
                    canon(&got_cmp),
                    canon(&want),
                    "store #{store_no}, {op} {args}\nrows: {rows:#?}"
                );
                let c = cases.entry(op).or_default();
                c.0 += 1;
                if got.get("error").is_none() {
                    c.1 += 1;
                }
                let found = got["rows_total"].as_i64().or(got["count"].as_i64());
                if found.is_some_and(|n| n > 0) {
                    c.2 += 1;
                }
            }
        }
    }
    for (op, (n, ok, found)) in &cases {
        eprintln!("{op}: {n} cases, {ok} answered, {found} non-empty");
        assert!(*n >= 500, "{op}: only {n} cases");
        assert!(*ok >= 250, "{op}: only {ok} successful cases of {n}");
        assert!(*found >= 75, "{op}: only {found} non-empty results");
    }
}

fn set_of(v: &Value, k: &str) -> BTreeSet<String> {
    v[k].as_array()
        .unwrap()
        .iter()
        .map(|x| {
            x.as_str()
                .map_or_else(|| x["eid"].as_str().unwrap().to_string(), str::to_string)
        })
        .collect()
}

#[test]
fn diffs_compose() {
    let mut r = Rng(42);
    for _ in 0..60 {
        let (_d, mut s) = new_store();
        let n = r.int(5, 25) as usize;
        grow(&mut s, &mut r, n);
        let asof = as_of(&mut r, &s);
        let (t1, t2, t3) = (r.int(0, 70), r.int(0, 70), r.int(0, 70));
        let d = |x: i64, y: i64| {
            call(
                &s,
                "diff_snapshots",
                json!({"t1": x, "t2": y, "as_of_tt": asof, "limit": 10000}),
            )
        };
        let (d12, d23, d13) = (d(t1, t2), d(t2, t3), d(t1, t3));
        for (add, rem) in [
            ("nodes_added", "nodes_removed"),
            ("edges_added", "edges_removed"),
        ] {
            let (a12, r12, a23, r23) = (
                set_of(&d12, add),
                set_of(&d12, rem),
                set_of(&d23, add),
                set_of(&d23, rem),
            );
            let added: BTreeSet<String> = a12
                .difference(&r23)
                .cloned()
                .chain(
                    a23.iter()
                        .filter(|x| !a12.contains(*x) && !r12.contains(*x))
                        .cloned(),
                )
                .collect();
            assert_eq!(added, set_of(&d13, add), "{add} at {t1},{t2},{t3}");
            let removed: BTreeSet<String> = r12
                .difference(&a23)
                .cloned()
                .chain(
                    r23.iter()
                        .filter(|x| !r12.contains(*x) && !a12.contains(*x))
                        .cloned(),
                )
                .collect();
            assert_eq!(removed, set_of(&d13, rem), "{rem} at {t1},{t2},{t3}");
        }
    }
}

#[test]
fn results_pinned_to_a_past_belief_state_never_change() {
    let mut r = Rng(7);
    let mut pinned = 0;
    for _ in 0..30 {
        let (_d, mut s) = new_store();
        let n = r.int(5, 20) as usize;
        grow(&mut s, &mut r, n);
        let pin = s.last_tt().unwrap_or(0);
        let mut calls = Vec::new();
        for (op, _) in OPS {
            for _ in 0..4 {
                let mut args = args_for(op, &mut r, &s);
                args["as_of_tt"] = json!(pin);
                let mut env = call(&s, op, args.clone());
                // Only results are pinned: an unknown-uid refusal legitimately changes once
                // the uid is registered by a later write (the call then answers with the
                // empty past belief state).
                if env.get("error").is_some() {
                    continue;
                }
                if let Some(m) = env.as_object_mut() {
                    m.remove("dataset_extent");
                }
                calls.push((op, args, canon(&env)));
            }
        }
        // Later corrections, retractions, asserts and ingests.
        let more = r.int(3, 15) as usize;
        grow(&mut s, &mut r, more);
        pinned += calls.len();
        for (op, args, before) in calls {
            let mut env = call(&s, op, args.clone());
            if let Some(m) = env.as_object_mut() {
                m.remove("dataset_extent");
            }
            assert_eq!(
                canon(&env),
                before,
                "{op} {args} changed after later writes"
            );
        }
    }
    assert!(pinned >= 300, "only {pinned} pinned results");
}

#[test]
fn pages_concatenate_to_the_complete_list_and_certificates_hold() {
    let mut r = Rng(2024);
    let mut paged_calls = 0;
    for _ in 0..40 {
        let (_d, mut s) = new_store();
        let n = r.int(10, 30) as usize;
        grow(&mut s, &mut r, n);
        // Event-heavy half: long lists for the traversal and pattern operators.
        if r.chance(50) {
            grow_dense(&mut s, &mut r);
        }
        for op in [
            "entity_history",
            "version_history",
            "state_at",
            "snapshot_subgraph",
            "temporal_reachability",
            "find_temporal_motif_instances",
            "co_active",
            "weighted_traverse",
        ] {
            for _ in 0..3 {
                let mut args = args_for(op, &mut r, &s);
                args["cursor"] = Value::Null;
                args["limit"] = json!(10000);
                let full = call(&s, op, args.clone());
                if full.get("error").is_some() {
                    continue;
                }
                // Walk the pages with a small limit.
                args["limit"] = json!(r.int(1, 3));
                let mut rows: Vec<Value> = Vec::new();
                let mut pages = 0;
                loop {
                    let pg = call(&s, op, args.clone());
                    assert_eq!(pg["rows_total"], full["rows_total"], "{op} {args}");
                    assert_eq!(pg["set_digest"], full["set_digest"], "{op} {args}");
                    rows.extend(pg["rows"].as_array().unwrap().iter().cloned());
                    pages += 1;
                    match &pg["cursor"] {
                        Value::Null => {
                            // snapshot_subgraph: a capped `nodes` list also sets it (§10).
                            let nodes_cut = pg["nodes_truncated"] == true;
                            assert_eq!(pg["truncated"], nodes_cut, "{op} {args}");
                            break;
                        }
                        c => {
                            assert_eq!(pg["truncated"], true);
                            args["cursor"] = c.clone();
                        }
                    }
                    assert!(pages < 10_000);
                }
                assert_eq!(Value::Array(rows), full["rows"], "{op} {args}");
                paged_calls += pages;
                // §6.3: a uid-keyed capped list equals the complete set iff the count and
                // the certificate match.
                if op == "snapshot_subgraph" {
                    let uids: Vec<Value> = full["nodes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n["uid"].clone())
                        .collect();
                    assert_eq!(json!(uids.len()), full["nodes_total"]);
                    assert_eq!(json!(oracle_set_digest(&uids)), full["nodes_set_digest"]);
                    let capped = call(&s, op, args.clone());
                    assert_eq!(capped["nodes_set_digest"], full["nodes_set_digest"]);
                    assert_eq!(capped["nodes_total"], full["nodes_total"]);
                }
            }
        }
    }
    assert!(paged_calls >= 200, "only {paged_calls} pages walked");
}

// ---------------------------------------------------------------------------------------
// Oracles of graph_metric_timeseries (§16), burst_detection (§17), neighborhood_evolution
// (§18) and resolve_entities (§20), written from the spec over the plain rows.

fn o_ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

fn o_window(args: &Value) -> Result<(i64, i64), Value> {
    let (a, b) = (
        args["window"]["t_a"].as_i64().unwrap(),
        args["window"]["t_b"].as_i64().unwrap(),
    );
    if a >= b {
        return Err(err(
            "E_INVALID_ARG",
            format!("window requires t_a < t_b, got [{a}, {b})"),
            json!({}),
        ));
    }
    Ok((a, b))
}

/// The buckets of §8, or the cap refusal.
fn o_buckets(a: i64, b: i64, stride: i64) -> Result<Vec<(i64, i64)>, Value> {
    let n = o_ceil_div(b - a, stride);
    if n > 2000 {
        return Err(err(
            "E_LIMIT",
            format!(
                "bucket count {n} exceeds cap 2000; use stride >= {} for this window",
                o_ceil_div(b - a, 2000)
            ),
            json!({}),
        ));
    }
    let mut v = Vec::new();
    let mut x = a;
    while x < b {
        v.push((x, (x + stride).min(b)));
        x += stride;
    }
    Ok(v)
}

fn o_series(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let (t_a, t_b) = o_window(args)?;
    let bks = o_buckets(t_a, t_b, args["stride"].as_i64().unwrap())?;
    let a = q.a();
    let nodes: Vec<&Row> = rows.iter().filter(|r| r.node && believed(r, a)).collect();
    let edges: Vec<&Row> = rows.iter().filter(|r| !r.node && believed(r, a)).collect();
    let valid = |r: &&&Row, t: i64| r.vt_s <= t && t < r.vt_e;
    let mut births: BTreeMap<&str, i64> = BTreeMap::new();
    for n in &nodes {
        let b = births.entry(n.uid.as_str()).or_insert(n.vt_s);
        *b = (*b).min(n.vt_s);
    }
    let metric = args["metric"].as_str().unwrap();
    let mut out = Vec::new();
    for &(ba, bb) in &bks {
        let nc = nodes.iter().filter(|r| valid(r, ba)).count();
        let ec = edges.iter().filter(|r| valid(r, ba)).count();
        let starting: Vec<&&Row> = edges
            .iter()
            .filter(|r| ba <= r.vt_s && r.vt_s < bb)
            .collect();
        let value = match metric {
            "node_count" => json!(nc),
            "active_edge_count" => json!(ec),
            "mean_out_degree" => {
                json!(o_round9(if nc == 0 { 0.0 } else { ec as f64 / nc as f64 }))
            }
            "edge_event_count" => json!(starting.len()),
            "new_node_rate" => json!(births.values().filter(|&&b| ba <= b && b < bb).count()),
            _ => {
                let p: BTreeSet<(&str, &str)> = starting
                    .iter()
                    .map(|r| (r.src.as_str(), r.dst.as_str()))
                    .collect();
                let rec = p.iter().filter(|(s, d)| p.contains(&(*d, *s))).count();
                json!(if p.is_empty() {
                    0.0
                } else {
                    o_round9(rec as f64 / p.len() as f64)
                })
            }
        };
        out.push(json!({"t_a": ba, "t_b": bb, "value": value}));
    }
    let mut p = Map::new();
    page(&mut p, out, "t_a", &q)?;
    p.insert("n_buckets".into(), json!(bks.len()));
    Ok(Value::Object(p))
}

fn o_burst(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let (t_a, t_b) = o_window(args)?;
    let target = &args["target"];
    let kind = target["kind"].as_str().unwrap();
    let uid = target["uid"].as_str().unwrap_or("");
    if kind == "node_activity" && uid.is_empty() {
        return Err(err(
            "E_INVALID_ARG",
            "target.kind='node_activity' requires target.uid".into(),
            json!({}),
        ));
    }
    let bks = o_buckets(t_a, t_b, args["stride"].as_i64().unwrap())?;
    if kind == "node_activity" && !registered(rows, uid) {
        return Err(unknown(uid));
    }
    let a = q.a();
    let rel = target["rel_type"].as_str().unwrap_or("");
    let x: Vec<i64> = bks
        .iter()
        .map(|&(ba, bb)| {
            rows.iter()
                .filter(|r| !r.node && believed(r, a) && ba <= r.vt_s && r.vt_s < bb)
                .filter(|r| rel.is_empty() || r.rel == rel)
                .filter(|r| kind != "node_activity" || r.src == uid || r.dst == uid)
                .count() as i64
        })
        .collect();
    let params = &args["params"];
    let w = params["w"].as_i64().unwrap_or(10) as usize;
    let method = args["method"].as_str().unwrap_or("zscore");
    let mut out = Vec::new();
    for b in 1..x.len() {
        let n = b.min(w);
        let h = &x[b - n..b];
        let (score, thr) = if method == "zscore" {
            let s1: i128 = h.iter().map(|&v| v as i128).sum();
            let s2: i128 = h.iter().map(|&v| (v as i128).pow(2)).sum();
            let v = n as i128 * s2 - s1 * s1;
            let num = n as i128 * x[b] as i128 - s1;
            let sc = if v > 0 {
                num.abs() as f64 / (v as f64).sqrt()
            } else if num == 0 {
                0.0
            } else {
                1e9
            };
            (sc, params["z"].as_f64().unwrap_or(3.0))
        } else {
            let mut s = h.to_vec();
            s.sort();
            let med = if n % 2 == 1 {
                s[n / 2] as f64
            } else {
                (s[n / 2 - 1] + s[n / 2]) as f64 / 2.0
            };
            let sc = if med > 0.0 {
                x[b] as f64 / med
            } else if x[b] > 0 {
                1e9
            } else {
                0.0
            };
            (sc, params["r"].as_f64().unwrap_or(3.0))
        };
        if o_round9(score) >= thr {
            out.push(
                json!({"t_a": bks[b].0, "t_b": bks[b].1, "value": x[b] as f64,
                "score": o_round9(score)}),
            );
        }
    }
    let mut p = Map::new();
    page(&mut p, out, "t_a", &q)?;
    p.insert("n_buckets".into(), json!(bks.len()));
    Ok(Value::Object(p))
}

fn o_nbr(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let uid = args["uid"].as_str().unwrap();
    let (t1, t2) = (args["t1"].as_i64().unwrap(), args["t2"].as_i64().unwrap());
    if t1 >= t2 {
        return Err(err(
            "E_INVALID_ARG",
            format!("neighborhood_evolution requires t1 < t2, got t1={t1}, t2={t2}"),
            json!({}),
        ));
    }
    if !registered(rows, uid) {
        return Err(unknown(uid));
    }
    let stride = args["stride"].as_i64().unwrap_or(((t2 - t1) / 20).max(1));
    let n = o_ceil_div(t2 - t1, stride);
    if n > 2000 {
        return Err(err(
            "E_LIMIT",
            format!("bucket count {n} exceeds cap 2000; increase stride"),
            json!({}),
        ));
    }
    let a = q.a();
    let inc: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && (r.src == uid || r.dst == uid))
        .collect();
    let nb = |t: i64| -> BTreeSet<String> {
        let mut s = BTreeSet::new();
        for r in inc.iter().filter(|r| r.vt_s <= t && t < r.vt_e) {
            if r.src == uid {
                s.insert(r.dst.clone());
            }
            if r.dst == uid {
                s.insert(r.src.clone());
            }
        }
        s.remove(uid);
        s
    };
    let (n1, n2) = (nb(t1), nb(t2));
    let gained: Vec<Value> = n2.difference(&n1).map(|u| json!(u)).collect();
    let lost: Vec<Value> = n1.difference(&n2).map(|u| json!(u)).collect();
    let mut series = Vec::new();
    let mut t = t1;
    while t < t2 {
        let d = inc.iter().filter(|r| r.vt_s <= t && t < r.vt_e).count();
        series.push(json!({"t": t, "degree": d}));
        t += stride;
    }
    let mut p = Map::new();
    let g = cap(
        &mut p,
        "neighbors_gained",
        gained.clone(),
        gained,
        &q,
        false,
    );
    let l = cap(&mut p, "neighbors_lost", lost.clone(), lost, &q, false);
    p.insert("degree_series".into(), Value::Array(series));
    p.insert("stride".into(), json!(stride));
    p.insert("truncated".into(), json!(g || l));
    Ok(Value::Object(p))
}

fn o_resolve(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let query = args["query"].as_str().unwrap();
    let lq = query.to_lowercase();
    let a = q.a();
    let mut by_uid: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.node && believed(r, a)) {
        by_uid.entry(r.uid.as_str()).or_default().push(r);
    }
    let mut hits: Vec<(i64, Value)> = Vec::new();
    for (uid, vs) in by_uid {
        let best = vs
            .iter()
            .filter_map(|r| {
                if r.uid == query {
                    Some(0)
                } else if r.uid.to_lowercase().contains(&lq) {
                    Some(1)
                } else {
                    match r.props.get("name") {
                        Some(Value::String(nm))
                            if !nm.is_empty() && nm.to_lowercase().contains(&lq) =>
                        {
                            Some(2)
                        }
                        _ => None,
                    }
                }
            })
            .min();
        let Some(m) = best else { continue };
        let latest = vs
            .iter()
            .max_by(|x, y| (x.vt_s, &x.vid).cmp(&(y.vt_s, &y.vid)))
            .unwrap();
        if let Some(l) = args["label"].as_str() {
            if latest.label != l {
                continue;
            }
        }
        let name = latest.props.get("name").cloned().unwrap_or(Value::Null);
        hits.push((
            m,
            json!({"uid": uid, "label": latest.label, "name": name, "match": m}),
        ));
    }
    hits.sort_by_key(|h| h.0); // stable: uid order within a match class
    let mut p = Map::new();
    page(&mut p, hits.into_iter().map(|h| h.1).collect(), "uid", &q)?;
    Ok(Value::Object(p))
}

fn series_window_arg(r: &mut Rng) -> Value {
    let x = r.int(0, 60);
    json!({"t_a": x, "t_b": if r.chance(8) { (x - r.int(0, 3)).max(0) } else { x + r.int(1, 50) }})
}

fn args_for_series(op: &str, r: &mut Rng) -> Value {
    match op {
        "graph_metric_timeseries" => {
            let metric = r.pick(&METRICS);
            if r.chance(4) {
                return json!({"metric": metric, "window": {"t_a": 0, "t_b": r.int(2001, 5000)}, "stride": 1});
            }
            json!({"metric": metric, "window": series_window_arg(r), "stride": r.int(1, 25)})
        }
        "burst_detection" => {
            let kind = r.pick(&["edge_event_rate", "node_activity"]);
            let mut target = json!({"kind": kind});
            match r.below(4) {
                0 => target["rel_type"] = Value::Null,
                1 => target["rel_type"] = json!(r.pick(&["R", "S", "", "Q"])),
                _ => {}
            }
            match r.below(10) {
                0 => target["uid"] = Value::Null,
                1 => target["uid"] = json!(""),
                2 | 3 => {}
                _ => target["uid"] = json!(uid_arg(r)),
            }
            let mut params = json!({});
            if r.chance(70) {
                params["w"] = json!(r.int(2, 7));
            }
            if r.chance(60) {
                params["z"] = json!(r
                    .pick(&["0.1", "0.5", "1", "1.414213562", "1.414213563", "2.5"])
                    .parse::<f64>()
                    .unwrap());
            }
            if r.chance(60) {
                params["r"] = json!(r.pick(&["1", "1.5", "2", "3"]).parse::<f64>().unwrap());
            }
            let mut o = json!({"target": target, "window": series_window_arg(r), "stride": r.int(1, 8),
                "params": params});
            if r.chance(70) {
                o["method"] = json!(r.pick(&["zscore", "ratio"]));
            }
            if r.chance(15) {
                o.as_object_mut().unwrap().remove("params");
            }
            if r.chance(3) {
                o["window"] = json!({"t_a": 0, "t_b": r.int(2001, 5000)});
                o["stride"] = json!(1);
            }
            o
        }
        "neighborhood_evolution" => {
            let t1 = r.int(0, 60);
            let t2 = if r.chance(8) {
                (t1 - r.int(0, 3)).max(0)
            } else {
                t1 + r.int(1, 45)
            };
            let stride = match r.below(10) {
                0..=3 => Value::Null,
                4 => json!(1),
                _ => json!(r.int(1, 15)),
            };
            let mut o = json!({"uid": uid_arg(r), "t1": t1, "t2": t2, "stride": stride,
                "limit": if r.chance(50) { r.int(1, 3) } else { 100 }});
            if r.chance(3) {
                o["t2"] = json!(t1 + 2001);
                o["stride"] = json!(1);
            }
            o
        }
        _ => {
            let query = r.pick(&["a", "A", "é", "É", "b", "AL", "ét", "zz", "e", "Ph", "ab"]);
            let label = if r.chance(70) {
                Value::Null
            } else {
                json!(r.pick(&["L", "M", "Node"]))
            };
            json!({"query": query, "label": label})
        }
    }
}

// ---------------------------------------------------------------------------------------
// aggregate_events (§22), brute force over the plain rows.

/// An exact decimal rendering of `n / d` (d > 0, |n|, d < 2^120) parsed as binary64: the
/// correctly rounded quotient, computed independently of the operator's binary division.
fn dec_ratio(n: i128, d: i128) -> f64 {
    assert!(d > 0);
    let neg = n < 0;
    let n = n.unsigned_abs();
    let d = d as u128;
    let mut s = format!("{}.", n / d);
    let mut r = n % d;
    let mut digits = 0;
    while r != 0 && digits < 400 {
        r *= 10;
        s.push(char::from(b'0' + (r / d) as u8));
        r %= d;
        digits += 1;
    }
    if r != 0 {
        s.push('1'); // sticky digit: never a tie
    }
    let x: f64 = s.parse().unwrap();
    if neg {
        -x
    } else {
        x
    }
}

/// `fl(fl(q) + fl(r/n))` with `(q, r) = floor_divmod(s, n)`.
fn o_float_mean(s: i128, n: i128) -> f64 {
    let q = (s as f64 / n as f64).floor() as i128;
    // fix q exactly
    let mut q = q;
    while q * n > s {
        q -= 1;
    }
    while (q + 1) * n <= s {
        q += 1;
    }
    let r = s - q * n;
    q as f64 + dec_ratio(r, n)
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum OKey {
    Int(i64),
    Str(String),
    Label(Option<String>),
}

fn o_agg_err(m: &str) -> Value {
    err("E_INVALID_ARG", m.to_string(), json!({}))
}

fn ostr<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn onn(v: &Value, k: &str) -> bool {
    v.get(k).is_some_and(|x| !x.is_null())
}

fn o_agg_col(a: &Value) -> String {
    let agg = ostr(a, "agg").unwrap();
    match (agg, ostr(a, "of")) {
        ("count_distinct", Some(of)) => format!("distinct_{of}"),
        ("min" | "max" | "mean", Some("prop")) => {
            format!("{agg}_prop_{}", ostr(a, "prop").unwrap())
        }
        ("min" | "max" | "mean", Some(of)) => format!("{agg}_{of}"),
        _ => agg.to_string(),
    }
}

/// Exact order of two JSON numbers of the oracle's domain (ints, and floats that are
/// multiples of 1/8).
fn o_num_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    let eighths = |v: &Value| -> Option<i128> {
        let t = v.as_number()?.as_str();
        if let Ok(i) = t.parse::<i128>() {
            return i.checked_mul(8);
        }
        let f: f64 = t.parse().ok()?;
        let e = f * 8.0;
        (e.fract() == 0.0 && e.abs() < 1e30).then_some(e as i128)
    };
    match (eighths(a), eighths(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let f = |v: &Value| v.as_number().unwrap().as_str().parse::<f64>().unwrap();
            f(a).partial_cmp(&f(b)).unwrap()
        }
    }
}

fn o_aggregate(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let w = &args["window"];
    let (t_a, t_b) = (w["t_a"].as_i64().unwrap(), w["t_b"].as_i64().unwrap());
    if t_a >= t_b {
        return Err(o_agg_err(&format!(
            "window requires t_a < t_b, got [{t_a}, {t_b})"
        )));
    }
    let dims = args["group_by"].as_array().unwrap();
    for d in dims {
        let dim = ostr(d, "dim").unwrap();
        if onn(d, "unit") && dim != "calendar_unit" {
            return Err(o_agg_err("unit is only valid for calendar_unit"));
        }
        if onn(d, "tz_offset_minutes") && dim != "calendar_unit" {
            return Err(o_agg_err(
                "tz_offset_minutes is only valid for calendar_unit",
            ));
        }
        if dim == "calendar_unit" && !onn(d, "unit") {
            return Err(o_agg_err("calendar_unit requires unit"));
        }
        if (dim == "endpoint" || dim == "label") && !onn(d, "role") {
            return Err(o_agg_err(&format!("{dim} requires role src or dst")));
        }
        if !(dim == "endpoint" || dim == "label") && onn(d, "role") {
            return Err(o_agg_err("role is only valid for endpoint and label"));
        }
    }
    fn dkey(d: &Value) -> (Option<&str>, Option<&str>, Option<&str>) {
        (ostr(d, "dim"), ostr(d, "role"), ostr(d, "unit"))
    }
    for j in 1..dims.len() {
        if dims[..j].iter().any(|d| dkey(d) == dkey(&dims[j])) {
            return Err(o_agg_err(&format!(
                "duplicate dimension {}",
                ostr(&dims[j], "dim").unwrap()
            )));
        }
    }
    let aggs = args["aggregates"].as_array().unwrap();
    for a in aggs {
        let agg = ostr(a, "agg").unwrap();
        let of = ostr(a, "of");
        let checks: [(bool, String); 9] = [
            (
                onn(a, "prop") && of != Some("prop"),
                "prop is only valid with of='prop'".into(),
            ),
            (
                onn(a, "span") && agg != "max_in_window",
                "span is only valid for max_in_window".into(),
            ),
            (
                onn(a, "gap") && agg != "max_session_span",
                "gap is only valid for max_session_span".into(),
            ),
            (
                agg.starts_with("max_") && of.is_some(),
                format!("{agg} takes no 'of'"),
            ),
            (
                (agg == "max_in_window" && !onn(a, "span"))
                    || (agg == "max_session_span" && !onn(a, "gap")),
                format!(
                    "{agg} requires {}",
                    if agg == "max_in_window" {
                        "span"
                    } else {
                        "gap"
                    }
                ),
            ),
            (agg == "count" && of.is_some(), "count takes no 'of'".into()),
            (
                agg == "count_distinct" && of != Some("src") && of != Some("dst"),
                "count_distinct requires of 'src' or 'dst'".into(),
            ),
            (
                (agg == "min" || agg == "max" || agg == "mean")
                    && !matches!(of, Some("vt_s") | Some("duration") | Some("prop")),
                format!("{agg} requires of 'vt_s', 'duration' or 'prop'"),
            ),
            (
                of == Some("prop") && !onn(a, "prop"),
                "of='prop' requires prop".into(),
            ),
        ];
        if let Some((_, m)) = checks.iter().find(|c| c.0) {
            return Err(o_agg_err(m));
        }
    }
    let cols: Vec<String> = aggs.iter().map(o_agg_col).collect();
    for (i, c) in cols.iter().enumerate() {
        if cols[..i].contains(c) {
            return Err(o_agg_err(&format!("duplicate aggregate output '{c}'")));
        }
    }
    let pf = &args["prop_filter"];
    if pf.is_object()
        && !(pf["value"].is_number() || pf["value"].is_string() || pf["value"].is_boolean())
    {
        return Err(o_agg_err(
            "prop_filter.value must be a number, string or boolean",
        ));
    }
    let pm = args["pair_mode"].as_str();
    if pm.is_some() {
        // The pair, alone or with one time / rel_type dimension before or after it.
        let pair = vec![json!(["endpoint", "src"]), json!(["endpoint", "dst"])];
        let got: Vec<Value> = dims.iter().map(|d| json!([d["dim"], d["role"]])).collect();
        let other = |v: &Value| {
            ["time_bucket", "calendar_unit", "rel_type"].contains(&v[0].as_str().unwrap_or(""))
        };
        let ok = got == pair
            || (got.len() == 3 && got[..2] == pair[..] && other(&got[2]))
            || (got.len() == 3 && got[1..] == pair[..] && other(&got[0]));
        if !ok {
            return Err(o_agg_err(
                "pair_mode requires group_by [endpoint src, endpoint dst], optionally with one time_bucket, calendar_unit or rel_type dimension before or after the pair",
            ));
        }
    }
    let has_bucket = dims.iter().any(|d| d["dim"] == "time_bucket");
    let stride = args["stride"].as_i64();
    if has_bucket {
        let Some(st) = stride else {
            return Err(o_agg_err("time_bucket requires stride"));
        };
        let n = (t_b - t_a + st - 1) / st;
        if n > 2000 {
            return Err(err(
                "E_LIMIT",
                format!(
                    "bucket count {n} exceeds cap 2000; use stride >= {} for this window",
                    (t_b - t_a + 1999) / 2000
                ),
                json!({}),
            ));
        }
    } else if stride.is_some() {
        return Err(o_agg_err("stride requires a time_bucket dimension"));
    }
    let a = q.a();
    let rels = args["rel_types"].as_array();
    let mut coercion: BTreeMap<String, u64> = BTreeMap::new();
    if pf.is_object() {
        coercion.insert(pf["prop"].as_str().unwrap().to_string(), 0);
    }
    for g in aggs {
        if g["of"] == "prop" {
            coercion.insert(g["prop"].as_str().unwrap().to_string(), 0);
        }
    }
    // 0.
    let mut evs: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && t_a <= r.vt_s && r.vt_s < t_b)
        .filter(|r| rels.is_none_or(|rs| rs.iter().any(|x| x == r.rel.as_str())))
        .collect();
    evs.sort_by(|x, y| (x.vt_s, &x.eid).cmp(&(y.vt_s, &y.eid)));
    // 1.
    if pf.is_object() {
        let prop = pf["prop"].as_str().unwrap();
        let lit = &pf["value"];
        let cls = |v: &Value| -> u8 {
            if v.is_number() {
                1
            } else if v.is_string() {
                2
            } else if v.is_boolean() {
                3
            } else {
                0
            }
        };
        let mut kept = Vec::new();
        for e in evs {
            let v = e.props.get(prop).cloned().unwrap_or(Value::Null);
            if cls(&v) == 0 || cls(&v) != cls(lit) {
                *coercion.get_mut(prop).unwrap() += 1;
                continue;
            }
            let o = match (&v, lit) {
                (Value::String(x), Value::String(y)) => x.cmp(y),
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                _ => o_num_cmp(&v, lit),
            };
            use std::cmp::Ordering::*;
            let keep = match pf["cmp"].as_str().unwrap() {
                "eq" => o == Equal,
                "ne" => o != Equal,
                "lt" => o == Less,
                "le" => o != Greater,
                "gt" => o == Greater,
                _ => o != Less,
            };
            if keep {
                kept.push(e);
            }
        }
        evs = kept;
    }
    // 2.
    if let Some(ef) = args["endpoint_filter"].as_object() {
        let uids: Vec<&str> = ef["uids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap())
            .collect();
        let role = ef["role"].as_str().unwrap();
        evs.retain(|e| {
            let (x, y) = (
                uids.contains(&e.src.as_str()),
                uids.contains(&e.dst.as_str()),
            );
            (role == "src" && x) || (role == "dst" && y) || (role == "either" && (x || y))
        });
    }
    // 3.
    if pm == Some("reciprocal") {
        let all = evs.clone();
        evs.retain(|e| e.src == e.dst || all.iter().any(|f| f.src == e.dst && f.dst == e.src));
    }
    let label_of = |uid: &str, t: i64| -> Option<String> {
        rows.iter()
            .find(|r| r.node && r.uid == uid && believed(r, a) && r.vt_s <= t && t < r.vt_e)
            .map(|r| r.label.clone())
    };
    let mut groups: BTreeMap<Vec<OKey>, Vec<&Row>> = BTreeMap::new();
    if dims.is_empty() {
        groups.insert(vec![], evs.clone());
    }
    for e in &evs {
        if dims.is_empty() {
            break;
        }
        let (mut s, mut d) = (e.src.clone(), e.dst.clone());
        if pm.is_some() && d < s {
            std::mem::swap(&mut s, &mut d);
        }
        let key: Vec<OKey> = dims
            .iter()
            .map(|dm| {
                let role_src = dm["role"] == "src";
                match dm["dim"].as_str().unwrap() {
                    "time_bucket" => OKey::Int((e.vt_s - t_a) / stride.unwrap()),
                    "calendar_unit" => {
                        let local =
                            e.vt_s + dm["tz_offset_minutes"].as_i64().unwrap_or(0) * 60_000_000;
                        let day = local.div_euclid(86_400_000_000);
                        OKey::Int(match dm["unit"].as_str().unwrap() {
                            "hour_of_day" => local.div_euclid(3_600_000_000).rem_euclid(24),
                            "day_of_week" => (day + 3).rem_euclid(7),
                            _ => {
                                // walk the civil calendar from 1970 (small test ranges)
                                let (mut y, mut dd) = (1970i64, day);
                                let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
                                loop {
                                    let n = if leap(y) { 366 } else { 365 };
                                    if dd < 0 {
                                        y -= 1;
                                        dd += if leap(y) { 366 } else { 365 };
                                    } else if dd >= n {
                                        dd -= n;
                                        y += 1;
                                    } else {
                                        break;
                                    }
                                }
                                let ml = [
                                    31,
                                    if leap(y) { 29 } else { 28 },
                                    31,
                                    30,
                                    31,
                                    30,
                                    31,
                                    31,
                                    30,
                                    31,
                                    30,
                                    31,
                                ];
                                let mut m = 0;
                                while dd >= ml[m] {
                                    dd -= ml[m];
                                    m += 1;
                                }
                                m as i64
                            }
                        })
                    }
                    "rel_type" => OKey::Str(e.rel.clone()),
                    "endpoint" => OKey::Str(if role_src { s.clone() } else { d.clone() }),
                    _ => OKey::Label(label_of(if role_src { &e.src } else { &e.dst }, e.vt_s)),
                }
            })
            .collect();
        groups.entry(key).or_default().push(e);
    }
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let mut out = Vec::new();
    let mut keys = Vec::new();
    for (key, members) in &groups {
        let mut row = Map::new();
        let mut kv = Vec::new();
        for (dm, k) in dims.iter().zip(key) {
            let role = dm["role"].as_str().unwrap_or("");
            let cols: Vec<(String, Value)> = match (dm["dim"].as_str().unwrap(), k) {
                ("time_bucket", OKey::Int(i)) => {
                    let lo = t_a + i * stride.unwrap();
                    vec![
                        ("t_a".into(), json!(lo)),
                        ("t_b".into(), json!((lo + stride.unwrap()).min(t_b))),
                    ]
                }
                ("calendar_unit", OKey::Int(i)) => {
                    let u = dm["unit"].as_str().unwrap();
                    let v = match u {
                        "hour_of_day" => json!(i),
                        "day_of_week" => json!(DAYS[*i as usize]),
                        _ => json!(MONTHS[*i as usize]),
                    };
                    vec![(u.to_string(), v)]
                }
                ("rel_type", OKey::Str(x)) => vec![("rel_type".into(), json!(x))],
                ("endpoint", OKey::Str(x)) => vec![(role.to_string(), json!(x))],
                (_, OKey::Label(x)) => vec![(format!("{role}_label"), json!(x))],
                _ => unreachable!(),
            };
            for (c, v) in cols {
                kv.push(v.clone());
                row.insert(c, v);
            }
        }
        let mut times: Vec<i64> = members.iter().map(|e| e.vt_s).collect();
        times.sort();
        for (g, col) in aggs.iter().zip(&cols) {
            let agg = g["agg"].as_str().unwrap();
            let of = g["of"].as_str().unwrap_or("");
            let v = match agg {
                "count" => json!(members.len()),
                "count_distinct" => {
                    let set: BTreeSet<&String> = members
                        .iter()
                        .map(|e| if of == "src" { &e.src } else { &e.dst })
                        .collect();
                    json!(set.len())
                }
                "max_gap" => {
                    if times.len() < 2 {
                        Value::Null
                    } else {
                        json!((1..times.len())
                            .map(|i| times[i] - times[i - 1])
                            .max()
                            .unwrap())
                    }
                }
                "max_in_window" => {
                    let s = g["span"].as_i64().unwrap().min(t_b - t_a);
                    json!(times
                        .iter()
                        .map(|&t| times.iter().filter(|&&u| t <= u && u < t + s).count())
                        .max()
                        .unwrap_or(0))
                }
                "max_session_span" => {
                    let gp = g["gap"].as_i64().unwrap().min(t_b - t_a);
                    if times.is_empty() {
                        Value::Null
                    } else {
                        let mut best = 0;
                        let mut start = 0;
                        for i in 0..times.len() {
                            if i > 0 && times[i] - times[i - 1] > gp {
                                start = i;
                            }
                            best = best.max(times[i] - times[start]);
                        }
                        json!(best)
                    }
                }
                _ if of == "prop" => {
                    let p = g["prop"].as_str().unwrap();
                    let mut vals: Vec<Value> = Vec::new();
                    for e in members {
                        match e.props.get(p) {
                            Some(v) if v.is_number() => vals.push(v.clone()),
                            _ => *coercion.get_mut(p).unwrap() += 1,
                        }
                    }
                    if vals.is_empty() {
                        Value::Null
                    } else if agg == "mean" {
                        let ints: Option<Vec<i128>> = vals
                            .iter()
                            .map(|v| v.as_number().unwrap().as_str().parse::<i128>().ok())
                            .collect();
                        let n = vals.len() as i128;
                        match ints {
                            Some(is) => {
                                let s: i128 = is.iter().sum();
                                if s.rem_euclid(n) == 0 {
                                    serde_json::from_str(&(s.div_euclid(n)).to_string()).unwrap()
                                } else {
                                    json!(o_float_mean(s, n))
                                }
                            }
                            None => {
                                // every value is a multiple of 1/8 here: the naive sum is exact
                                let s: f64 = vals.iter().map(|v| v.as_f64().unwrap()).sum();
                                json!(s / vals.len() as f64)
                            }
                        }
                    } else {
                        let mut best = vals[0].clone();
                        for v in &vals[1..] {
                            let o = o_num_cmp(v, &best);
                            if (agg == "min" && o.is_lt()) || (agg == "max" && o.is_gt()) {
                                best = v.clone();
                            }
                        }
                        best
                    }
                }
                _ => {
                    let vals: Vec<i64> = if of == "vt_s" {
                        members.iter().map(|e| e.vt_s).collect()
                    } else {
                        members
                            .iter()
                            .filter(|e| e.vt_e != OPEN_END)
                            .map(|e| e.vt_e - e.vt_s)
                            .collect()
                    };
                    if vals.is_empty() {
                        Value::Null
                    } else {
                        match agg {
                            "min" => json!(vals.iter().min().unwrap()),
                            "max" => json!(vals.iter().max().unwrap()),
                            _ => json!(o_float_mean(
                                vals.iter().map(|&v| v as i128).sum(),
                                vals.len() as i128
                            )),
                        }
                    }
                }
            };
            row.insert(col.clone(), v);
        }
        out.push(Value::Object(row));
        keys.push(Value::Array(kv));
    }
    let mut p = Map::new();
    let off = q.offset()?;
    let total = out.len();
    let pg: Vec<Value> = out.into_iter().skip(off).take(q.limit()).collect();
    let end = off + pg.len();
    p.insert("rows".into(), Value::Array(pg));
    p.insert("rows_total".into(), json!(total));
    p.insert("truncated".into(), json!(end < total));
    p.insert(
        "cursor".into(),
        if end < total {
            json!(end.to_string())
        } else {
            Value::Null
        },
    );
    p.insert("set_digest".into(), json!(oracle_set_digest(&keys)));
    if !coercion.is_empty() {
        p.insert("prop_coercion".into(), json!(coercion));
    }
    let mut v = Value::Object(p);
    o_round9_all(&mut v);
    Ok(v)
}

/// `round9` of §1.3 from the exact binary value: `m · 2^e · 10^9` rounded half-even.
fn o_round9(x: f64) -> f64 {
    if x.abs() >= 9007199254740992.0 || x == 0.0 {
        return x;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    if e >= 0 {
        return x;
    }
    let k = (-e) as u32;
    let p = m as u128 * 1_000_000_000u128;
    let qv = if k >= 128 {
        0
    } else {
        let mut qv = p >> k;
        let rem = p & ((1u128 << k) - 1);
        let half = 1u128 << (k - 1);
        if rem > half || (rem == half && qv % 2 == 1) {
            qv += 1;
        }
        qv
    };
    let r: f64 = format!("{qv}e-9").parse().unwrap();
    if x < 0.0 {
        -r
    } else {
        r
    }
}

fn o_round9_all(v: &mut Value) {
    match v {
        Value::Number(n) if n.as_str().contains(['.', 'e', 'E']) => {
            let x: f64 = n.as_str().parse().unwrap();
            *v = json!(o_round9(x));
        }
        Value::Array(a) => a.iter_mut().for_each(o_round9_all),
        Value::Object(m) => m.values_mut().for_each(o_round9_all),
        _ => {}
    }
}

fn agg_args(r: &mut Rng) -> Value {
    let mut dims: Vec<Value> = Vec::new();
    let nd = r.below(4);
    for _ in 0..nd {
        let n = 5 + u64::from(r.chance(15));
        let mut d = match r.below(n) {
            0 => json!({"dim": "time_bucket"}),
            1 => {
                json!({"dim": "calendar_unit", "unit": r.pick(&["hour_of_day", "day_of_week", "month_of_year"]),
                "tz_offset_minutes": if r.chance(50) { Value::Null } else { json!(r.int(-1440, 1441)) }})
            }
            2 => json!({"dim": "rel_type"}),
            3 => json!({"dim": "endpoint", "role": r.pick(&["src", "dst"])}),
            4 => json!({"dim": "label", "role": r.pick(&["src", "dst"])}),
            _ => json!({"dim": r.pick(&["endpoint", "rel_type", "calendar_unit", "label"])}),
        };
        if r.chance(4) {
            d["unit"] = json!("hour_of_day");
        }
        if r.chance(4) {
            d["role"] = json!("src");
        }
        dims.push(d);
    }
    let pair = r.chance(15);
    if pair {
        dims = vec![
            json!({"dim": "endpoint", "role": "src"}),
            json!({"dim": "endpoint", "role": "dst"}),
        ];
        // Day × pair and the like: a third dimension before or after the pair.
        if r.chance(50) {
            let third = match r.below(3) {
                0 => json!({"dim": "time_bucket"}),
                1 => json!({"dim": "calendar_unit", "unit": "hour_of_day"}),
                _ => json!({"dim": "rel_type"}),
            };
            if r.chance(50) {
                dims.push(third);
            } else {
                dims.insert(0, third);
            }
        }
    }
    let na = r.int(1, 5);
    let mut aggs: Vec<Value> = (0..na)
        .map(|_| {
            let n = if r.chance(80) { 10 } else { 12 };
            r.below(n)
        })
        .collect::<Vec<u64>>()
        .into_iter()
        .map(|c| match c {
            0 | 1 => json!({"agg": "count"}),
            2 => json!({"agg": "count_distinct", "of": r.pick(&["src", "dst"])}),
            3 | 4 => json!({"agg": r.pick(&["min", "max", "mean"]), "of": r.pick(&["vt_s", "duration"])}),
            5 | 6 => json!({"agg": r.pick(&["min", "max", "mean"]), "of": "prop", "prop": r.pick(&["p", "q"])}),
            7 => json!({"agg": "max_gap"}),
            8 => json!({"agg": "max_in_window", "span": r.int(1, 30)}),
            9 => json!({"agg": "max_session_span", "gap": r.int(1, 15)}),
            10 => json!({"agg": r.pick(&["count", "max_gap", "min", "count_distinct"]), "of": r.pick(&["src", "prop", "vt_s"])}),
            _ => json!({"agg": r.pick(&["max_in_window", "max_session_span", "mean"]), "span": 3}),
        })
        .collect();
    if r.chance(85) {
        let mut seen = Vec::new();
        aggs.retain(|a| {
            let k = (a["agg"].clone(), a["of"].clone(), a["prop"].clone());
            let new = !seen.contains(&k);
            seen.push(k);
            new
        });
    }
    let t_a = r.int(0, 40);
    let t_b = if r.chance(3) {
        t_a
    } else if r.chance(3) {
        100_000
    } else {
        t_a + r.int(1, 50)
    };
    let has_bucket = dims.iter().any(|d| d["dim"] == "time_bucket");
    let stride = if has_bucket != r.chance(5) {
        json!(r.int(1, 20))
    } else {
        Value::Null
    };
    let mut o = json!({"group_by": dims, "aggregates": aggs, "window": {"t_a": t_a, "t_b": t_b}, "stride": stride});
    o["rel_types"] = if r.chance(70) {
        Value::Null
    } else {
        json!([r.pick(&RELS)])
    };
    o["prop_filter"] = if r.chance(70) {
        Value::Null
    } else {
        let v = match r.below(6) {
            0 => json!(r.below(3)),
            1 => json!(0.125 * r.below(9) as f64),
            2 => json!("x"),
            3 => json!(r.chance(50)),
            4 => json!(1.0),
            _ => json!(null),
        };
        json!({"prop": r.pick(&["p", "q"]), "cmp": r.pick(&["eq", "ne", "lt", "le", "gt", "ge"]), "value": v})
    };
    o["endpoint_filter"] = if r.chance(75) {
        Value::Null
    } else {
        let n = r.int(0, 4);
        let uids: Vec<&str> = (0..n).map(|_| uid_arg(r)).collect();
        json!({"role": r.pick(&["src", "dst", "either"]), "uids": uids})
    };
    o["pair_mode"] = if pair || r.chance(5) {
        json!(r.pick(&["undirected", "reciprocal"]))
    } else {
        Value::Null
    };
    o
}

// ---------------------------------------------------------------------------------------
// compute (§21): an independent reference evaluator over plain serde_json values. Its
// numeric domain is the generator's: ints below 2^72 and floats that are multiples of 1/8
// (so exact comparisons and exact sums can be done on eighths in i128, and correctly
// rounded quotients through an exact decimal expansion parsed by the standard library).

fn ce(m: impl Into<String>) -> Value {
    err("E_INVALID_ARG", m.into(), json!({}))
}

fn c_int(i: i128) -> Value {
    serde_json::from_str(&i.to_string()).unwrap()
}

fn c_is_float(v: &Value) -> bool {
    v.as_number()
        .is_some_and(|n| n.as_str().contains(['.', 'e', 'E']))
}

fn c_i(v: &Value) -> Option<i128> {
    if c_is_float(v) {
        None
    } else {
        v.as_number().map(|n| n.as_str().parse().unwrap())
    }
}

fn c_f(v: &Value) -> f64 {
    v.as_number().unwrap().as_str().parse().unwrap()
}

/// A numeric-or-boolean as a JSON number (booleans 1/0), for filter comparisons.
fn c_numlike(v: &Value) -> Option<Value> {
    match v {
        Value::Bool(b) => Some(json!(i32::from(*b))),
        Value::Number(_) => Some(v.clone()),
        _ => None,
    }
}

fn c_render(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        other => canon(other),
    }
}

/// Mixed-order rank: null < boolean < float < int < string.
fn c_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) if c_is_float(v) => 2,
        Value::Number(_) => 3,
        _ => 4,
    }
}

fn c_key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    c_rank(a).cmp(&c_rank(b)).then_with(|| match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Number(_), Value::Number(_)) => o_num_cmp(a, b),
        _ => std::cmp::Ordering::Equal,
    })
}

fn c_key_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => o_num_cmp(a, b).is_eq(),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

fn c_scalar(v: &Value) -> bool {
    !(v.is_array() || v.is_object())
}

fn c_quot(n: &Value, d: &Value) -> Result<Value, Value> {
    if c_f(d) == 0.0 {
        return Err(ce("division by zero"));
    }
    match (c_i(n), c_i(d)) {
        (Some(a), Some(b)) => {
            let mut q = a / b;
            if a % b != 0 && ((a < 0) != (b < 0)) {
                q -= 1;
            }
            let r = a - q * b;
            if r == 0 {
                Ok(c_int(q))
            } else {
                let frac = if b < 0 {
                    dec_ratio(-r, -b)
                } else {
                    dec_ratio(r, b)
                };
                Ok(json!(q as f64 + frac))
            }
        }
        _ => Ok(json!(c_f(n) / c_f(d))),
    }
}

fn c_mean(vals: &[Value]) -> Result<Value, Value> {
    let n = vals.len() as i128;
    if vals.iter().all(|v| c_i(v).is_some()) {
        let s: i128 = vals.iter().map(|v| c_i(v).unwrap()).sum();
        return c_quot(&c_int(s), &c_int(n));
    }
    let s8: i128 = vals
        .iter()
        .map(|v| match c_i(v) {
            // each value converted to binary64 first (exact for these magnitudes)
            Some(i) => (i as f64) as i128 * 8,
            None => {
                let e = c_f(v) * 8.0;
                assert!(
                    e.fract() == 0.0,
                    "oracle domain: floats are multiples of 1/8"
                );
                e as i128
            }
        })
        .sum();
    let fsum = if s8 < 0 {
        -dec_ratio(-s8, 8)
    } else {
        dec_ratio(s8, 8)
    };
    Ok(json!(fsum / vals.len() as f64))
}

fn c_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if c_is_float(v) => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn c_feq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (c_numlike(a), c_numlike(b)) {
        return o_num_cmp(&x, &y).is_eq();
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| c_feq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| c_feq(p, q)))
        }
        _ => false,
    }
}

fn c_ford(a: &Value, b: &Value) -> Result<std::cmp::Ordering, Value> {
    if let (Some(x), Some(y)) = (c_numlike(a), c_numlike(b)) {
        return Ok(o_num_cmp(&x, &y));
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Array(x), Value::Array(y)) => {
            let n = x.len().min(y.len());
            for i in 0..n {
                if !c_feq(&x[i], &y[i]) {
                    return c_ford(&x[i], &y[i]);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => Err(ce(format!("cannot order {} and {}", c_type(a), c_type(b)))),
    }
}

fn c_rows_payload(rows: Vec<Value>, limit: usize) -> Value {
    let total = rows.len();
    let mut p = Map::new();
    p.insert("set_digest".into(), json!(oracle_set_digest(&rows)));
    let pg: Vec<Value> = rows.into_iter().take(limit).collect();
    let tr = pg.len() < total;
    p.insert(
        "cursor".into(),
        if tr {
            json!(pg.len().to_string())
        } else {
            Value::Null
        },
    );
    p.insert("rows".into(), Value::Array(pg));
    p.insert("rows_total".into(), json!(total));
    p.insert("truncated".into(), json!(tr));
    Value::Object(p)
}

/// Distinct members by key equality, first occurrence kept, in canonical mixed order.
fn c_distinct(vals: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in vals {
        if !out.iter().any(|o| c_key_eq(o, v)) {
            out.push(v.clone());
        }
    }
    out.sort_by(c_key_order);
    out
}

/// Groups rows by column `g`: (key, members) in canonical key order.
fn c_groups(input: &[Value], g: &str) -> Result<Vec<(Value, Vec<Value>)>, Value> {
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for r in input {
        let Some(k) = r.get(g).filter(|_| r.is_object()) else {
            return Err(ce(format!("group_by: row without column '{g}'")));
        };
        if !c_scalar(k) {
            return Err(ce("group_by keys must be scalars"));
        }
        match groups.iter_mut().find(|x| c_key_eq(&x.0, k)) {
            Some(x) => x.1.push(r.clone()),
            None => groups.push((k.clone(), vec![r.clone()])),
        }
    }
    groups.sort_by(|a, b| c_key_order(&a.0, &b.0));
    Ok(groups)
}

fn c_reduce(f: &str, rows: &[Value], field: Option<&str>) -> Result<Value, Value> {
    let mut vals = Vec::new();
    for r in rows {
        let v = match field {
            Some(k) => match r.as_object().and_then(|m| m.get(k)) {
                Some(v) => v,
                None => return Err(ce(format!("compute {f}: row has no field '{k}'"))),
            },
            None => r,
        };
        if !v.is_number() {
            return Err(ce(format!(
                "compute {f} needs numeric values, got {}",
                c_render(v)
            )));
        }
        vals.push(v.clone());
    }
    if vals.is_empty() {
        return if f == "sum" {
            Ok(json!(0))
        } else {
            Err(ce("empty input"))
        };
    }
    match f {
        "sum" => {
            let mut acc = json!(0);
            for v in &vals {
                acc = match (c_i(&acc), c_i(v)) {
                    (Some(a), Some(b)) => c_int(a + b),
                    _ => json!(c_f(&acc) + c_f(v)),
                };
            }
            Ok(acc)
        }
        "min" | "max" => {
            let mut best = vals[0].clone();
            for v in &vals[1..] {
                let o = o_num_cmp(v, &best);
                if (f == "min" && o.is_lt()) || (f == "max" && o.is_gt()) {
                    best = v.clone();
                }
            }
            Ok(best)
        }
        "mean" => c_mean(&vals),
        _ => {
            let mut s = vals.clone();
            s.sort_by(o_num_cmp);
            let n = s.len();
            if n % 2 == 1 {
                Ok(s[n / 2].clone())
            } else {
                c_mean(&s[n / 2 - 1..n / 2 + 1])
            }
        }
    }
}

/// `floor(n · P / 100)` and whether it was exact, from pct's canonical decimal text, by
/// decimal string arithmetic.
fn c_pct_floor(n: usize, pct: &Value) -> (u128, bool) {
    let t = canon(pct);
    let (mant, e) = match t.find('e') {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().unwrap()),
        None => (t.as_str(), 0),
    };
    let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
    let d: u128 = format!("{ip}{fp}").parse().unwrap();
    // P = d · 10^(e − len(fp)); n·P/100 = n·d · 10^(e − len(fp) − 2)
    let shift = e - fp.len() as i64 - 2;
    let prod = (n as u128 * d).to_string();
    if shift >= 0 {
        return ((prod + &"0".repeat(shift as usize)).parse().unwrap(), true);
    }
    let cut = (-shift) as usize;
    let padded = format!("{}{}", "0".repeat(cut), prod);
    let (int, frac) = padded.split_at(padded.len() - cut);
    (int.parse().unwrap_or(0), frac.bytes().all(|b| b == b'0'))
}

fn o_compute(args: &Value) -> Result<Value, Value> {
    let a = |k: &str| args.get(k).filter(|v| !v.is_null());
    let s = |k: &str| a(k).and_then(Value::as_str);
    let f = args["fn"].as_str().unwrap();
    let limit = args["limit"].as_u64().unwrap_or(100) as usize;
    let gb = s("group_by");
    if gb.is_some() && !["count", "sum", "min", "max", "mean", "median", "topk"].contains(&f) {
        return Err(ce(
            "group_by is only supported for count, sum, min, max, mean, median, topk",
        ));
    }
    let scalar = |v: Value| json!({"value": v, "truncated": false});
    let res: Value = match f {
        "interval_relation" => {
            let iv = |k: &str| {
                a(k).map(|o| (c_i(&o["start"]).unwrap(), c_i(&o["end"]).unwrap()))
                    .filter(|(x, y)| x < y)
            };
            let (Some((as_, ae)), Some((bs, be))) = (iv("a"), iv("b")) else {
                return Err(ce("interval_relation requires a and b with start < end"));
            };
            let rel = if ae < bs {
                "before"
            } else if ae == bs {
                "meets"
            } else if be < as_ {
                "after"
            } else if be == as_ {
                "met_by"
            } else if (as_, ae) == (bs, be) {
                "equals"
            } else if as_ == bs {
                ["started_by", "starts"][usize::from(ae < be)]
            } else if ae == be {
                ["finished_by", "finishes"][usize::from(as_ > bs)]
            } else if bs < as_ && ae < be {
                "during"
            } else if as_ < bs && be < ae {
                "contains"
            } else {
                ["overlapped_by", "overlaps"][usize::from(as_ < bs)]
            };
            scalar(json!(rel))
        }
        "derive" => {
            let ok = a("input").is_some()
                && s("field").is_some()
                && s("op").is_some()
                && s("into").is_some()
                && (a("field2").is_some() ^ a("value").is_some());
            if !ok {
                return Err(ce(
                    "derive requires input, field, op, into and exactly one of field2 or value",
                ));
            }
            let (field, op, into) = (s("field").unwrap(), s("op").unwrap(), s("into").unwrap());
            let mut out = Vec::new();
            for row in a("input").unwrap().as_array().unwrap() {
                let Some(m) = row.as_object() else {
                    return Err(ce("derive rows must be objects"));
                };
                if m.contains_key(into) {
                    return Err(ce(format!("derive: column '{into}' already exists")));
                }
                let Some(l) = m.get(field) else {
                    return Err(ce(format!("derive: row has no field '{field}'")));
                };
                let r = match s("field2") {
                    Some(f2) => match m.get(f2) {
                        Some(r) => r.clone(),
                        None => return Err(ce(format!("derive: row has no field '{f2}'"))),
                    },
                    None => a("value").unwrap().clone(),
                };
                let v = if op == "concat" {
                    let rd = |v: &Value| match v {
                        Value::String(x) => x.clone(),
                        Value::Null => "None".into(),
                        Value::Bool(true) => "True".into(),
                        Value::Bool(false) => "False".into(),
                        other => canon(other),
                    };
                    json!(format!("{}|{}", rd(l), rd(&r)))
                } else {
                    if !(l.is_number() && r.is_number()) {
                        return Err(ce(format!("derive {op} needs numbers")));
                    }
                    match op {
                        "div" => c_quot(l, &r)?,
                        "floordiv" => match (c_i(l), c_i(&r)) {
                            (Some(x), Some(y)) => {
                                if y == 0 {
                                    return Err(ce("division by zero"));
                                }
                                // floor(x / y): the largest q with q·y <= x (y > 0) / >= x (y < 0)
                                let mut q = x / y;
                                while (y > 0 && q * y > x) || (y < 0 && q * y < x) {
                                    q -= 1;
                                }
                                c_int(q)
                            }
                            _ => {
                                let (x, w) = (c_f(l), c_f(&r));
                                if w == 0.0 {
                                    return Err(ce("division by zero"));
                                }
                                let m = x % w;
                                let mut d = (x - m) / w;
                                if m != 0.0 && ((w < 0.0) != (m < 0.0)) {
                                    d -= 1.0;
                                }
                                let fl = if d != 0.0 {
                                    let mut fl = d.floor();
                                    if d - fl > 0.5 {
                                        fl += 1.0;
                                    }
                                    fl
                                } else {
                                    0.0f64.copysign(x / w)
                                };
                                json!(fl)
                            }
                        },
                        _ => match (c_i(l), c_i(&r)) {
                            (Some(x), Some(y)) => {
                                let v = match op {
                                    "add" => x.checked_add(y),
                                    "sub" => x.checked_sub(y),
                                    _ => x.checked_mul(y),
                                };
                                match v {
                                    Some(v) => c_int(v),
                                    None => return Err(ce("integer out of supported range")),
                                }
                            }
                            _ => {
                                let (x, y) = (c_f(l), c_f(&r));
                                json!(match op {
                                    "add" => x + y,
                                    "sub" => x - y,
                                    _ => x * y,
                                })
                            }
                        },
                    }
                };
                let mut m = m.clone();
                m.insert(into.to_string(), v);
                out.push(Value::Object(m));
            }
            c_rows_payload(out, limit)
        }
        "join" => {
            let (Some(input), Some(other), Some(on)) = (a("input"), a("other"), s("on")) else {
                return Err(ce("join requires input, other and on"));
            };
            let (input, other) = (input.as_array().unwrap(), other.as_array().unwrap());
            let oon = s("other_on").unwrap_or(on);
            let check = |rows: &Vec<Value>, k: &str, side: &str| -> Result<(), Value> {
                for r in rows {
                    match r.as_object().and_then(|m| m.get(k)) {
                        None => return Err(ce(format!("join: {side} row without key '{k}'"))),
                        Some(x) if !c_scalar(x) => return Err(ce("join keys must be scalars")),
                        _ => {}
                    }
                }
                for (i, r) in rows.iter().enumerate() {
                    if rows[..i].iter().any(|p| c_key_eq(&p[k], &r[k])) {
                        // Issue 21: the repair names the cardinality to declare (the
                        // oracle's calls declare none).
                        let fix = if side == "other" {
                            "one_to_many"
                        } else {
                            "many_to_one"
                        };
                        return Err(err(
                            "E_INVALID_ARG",
                            format!("join: duplicate key {} in {side}", c_render(&r[k])),
                            json!({"repair": {"cardinality": fix}}),
                        ));
                    }
                }
                Ok(())
            };
            check(other, oon, "other")?;
            check(input, on, "input")?;
            let prefix = args["other_prefix"].as_str().unwrap_or("r_");
            let mut cols: BTreeSet<String> = other
                .iter()
                .flat_map(|r| r.as_object().unwrap().keys().cloned())
                .collect();
            cols.insert(oon.to_string());
            let mut left: Vec<&Value> = input.iter().collect();
            left.sort_by(|x, y| c_key_order(&x[on], &y[on]));
            let mut out = Vec::new();
            for l in left {
                let mut m = l.as_object().unwrap().clone();
                let add: Vec<(String, Value)> =
                    match other.iter().find(|o| c_key_eq(&o[oon], &l[on])) {
                        Some(o) => o
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                        None if args["how"] == "left" => cols
                            .iter()
                            .map(|c| (c.clone(), args["fill"].clone()))
                            .collect(),
                        None => continue,
                    };
                for (c, v) in add {
                    let name = format!("{prefix}{c}");
                    if m.contains_key(&name) {
                        return Err(ce(format!("join: column '{name}' already exists in input")));
                    }
                    m.insert(name, v);
                }
                out.push(Value::Object(m));
            }
            c_rows_payload(out, limit)
        }
        "intersect" | "difference" | "union" => {
            let (Some(input), Some(other)) = (a("input"), a("other")) else {
                return Err(ce(format!("{f} requires input and other")));
            };
            let proj = |rows: &Value, fld: Option<&str>| -> Result<Vec<Value>, Value> {
                let mut out = Vec::new();
                for r in rows.as_array().unwrap() {
                    let m = match fld {
                        None => r.clone(),
                        Some(k) => match r.as_object().and_then(|o| o.get(k)) {
                            Some(x) => x.clone(),
                            None => return Err(ce(format!("{f}: row has no field '{k}'"))),
                        },
                    };
                    if !c_scalar(&m) {
                        return Err(ce("set members must be scalars"));
                    }
                    out.push(m);
                }
                Ok(out)
            };
            let xs = proj(input, s("field"))?;
            let ys = proj(other, s("other_field").or(s("field")))?;
            let members: Vec<Value> = match f {
                "union" => xs.iter().chain(&ys).cloned().collect(),
                "intersect" => xs
                    .iter()
                    .filter(|x| ys.iter().any(|y| c_key_eq(x, y)))
                    .cloned()
                    .collect(),
                _ => xs
                    .iter()
                    .filter(|x| !ys.iter().any(|y| c_key_eq(x, y)))
                    .cloned()
                    .collect(),
            };
            c_rows_payload(c_distinct(&members), limit)
        }
        "ratio" | "diff" | "percent" => {
            let (Some(x), Some(y)) = (a("x"), a("y")) else {
                return Err(ce(format!("{f} requires x and y")));
            };
            scalar(match f {
                "ratio" => c_quot(x, y)?,
                "diff" => match (c_i(x), c_i(y)) {
                    (Some(p), Some(q)) => c_int(p - q),
                    _ => json!(c_f(x) - c_f(y)),
                },
                _ => {
                    let hx = match c_i(x) {
                        Some(p) => c_int(p * 100),
                        None => json!(100.0 * c_f(x)),
                    };
                    c_quot(&hx, y)?
                }
            })
        }
        _ => {
            let Some(input) = a("input") else {
                return Err(ce(format!("compute fn={f} requires input")));
            };
            let input = input.as_array().unwrap();
            let field = s("field");
            match (f, gb) {
                ("topk", _) => {
                    if a("k").is_some() == a("pct").is_some() {
                        return Err(ce("topk takes exactly one of k or pct"));
                    }
                    let Some(field) = field else {
                        return Err(ce("topk requires field"));
                    };
                    let groups: Vec<Vec<Value>> = match gb {
                        Some(g) => c_groups(input, g)?.into_iter().map(|x| x.1).collect(),
                        None => vec![input.clone()],
                    };
                    let mut out = Vec::new();
                    for mut g in groups {
                        let num = |r: &Value| -> Value {
                            match r.as_object().and_then(|m| m.get(field)) {
                                Some(Value::Bool(b)) => json!(i32::from(*b)),
                                Some(v @ Value::Number(_)) => v.clone(),
                                _ => json!(0),
                            }
                        };
                        g.sort_by(|x, y| {
                            o_num_cmp(&num(y), &num(x)).then_with(|| canon(x).cmp(&canon(y)))
                        });
                        let n = g.len();
                        let top = args["side"].as_str().unwrap_or("top") == "top";
                        let (lo, hi) = match a("k") {
                            Some(k) => {
                                let k = k.as_u64().unwrap() as usize;
                                if top {
                                    (0, k.min(n))
                                } else {
                                    (n.saturating_sub(k), n)
                                }
                            }
                            None => {
                                let (fl, exact) = c_pct_floor(n, a("pct").unwrap());
                                if top {
                                    let c = fl as usize + usize::from(!exact);
                                    (0, c.min(n))
                                } else {
                                    (n - fl as usize, n)
                                }
                            }
                        };
                        let mut cut = g[lo..hi].to_vec();
                        if !top {
                            // Issue 21: the bottom rows read ascending (value, then canonical JSON).
                            cut.sort_by(|x, y| {
                                o_num_cmp(&num(x), &num(y)).then_with(|| canon(x).cmp(&canon(y)))
                            });
                        }
                        out.extend(cut);
                    }
                    c_rows_payload(out, limit)
                }
                (_, Some(g)) => {
                    let groups = c_groups(input, g)?;
                    if f != "count" && field.is_none() {
                        return Err(ce(format!("compute fn={f} with group_by requires field")));
                    }
                    let mut out = Vec::new();
                    for (k, members) in groups {
                        let v = if f == "count" {
                            json!(members.len())
                        } else {
                            c_reduce(f, &members, field)?
                        };
                        let mut m = Map::new();
                        m.insert(g.to_string(), k);
                        m.insert(f.to_string(), v);
                        out.push(Value::Object(m));
                    }
                    c_rows_payload(out, limit)
                }
                ("count", None) => scalar(json!(input.len())),
                ("filter", None) => {
                    let Some(cmp) = s("cmp") else {
                        return Err(ce("filter requires cmp"));
                    };
                    if a("field2").is_some() && a("value").is_some() {
                        return Err(ce("filter takes field2 or value, not both"));
                    }
                    let col = |r: &Value, k: &str| {
                        r.as_object()
                            .and_then(|m| m.get(k))
                            .cloned()
                            .unwrap_or(Value::Null)
                    };
                    let mut out = Vec::new();
                    for r in input {
                        let x = field.map_or_else(|| r.clone(), |k| col(r, k));
                        let v = match s("field2") {
                            Some(k) => col(r, k),
                            None => args["value"].clone(),
                        };
                        let keep = match cmp {
                            "is_null" => x.is_null(),
                            "not_null" => !x.is_null(),
                            "contains" => match (&x, &v) {
                                (Value::String(p), Value::String(q)) => p.contains(q.as_str()),
                                (Value::Array(p), _) => p.iter().any(|e| c_feq(e, &v)),
                                _ => false,
                            },
                            _ => {
                                if x.is_null() || v.is_null() {
                                    return Err(ce("cannot compare a null; use is_null/not_null"));
                                }
                                match cmp {
                                    "eq" => c_feq(&x, &v),
                                    "ne" => !c_feq(&x, &v),
                                    "lt" => c_ford(&x, &v)?.is_lt(),
                                    "le" => c_ford(&x, &v)?.is_le(),
                                    "gt" => c_ford(&x, &v)?.is_gt(),
                                    _ => c_ford(&x, &v)?.is_ge(),
                                }
                            }
                        };
                        if keep {
                            out.push(r.clone());
                        }
                    }
                    c_rows_payload(out, limit)
                }
                _ => scalar(c_reduce(f, input, field)?),
            }
        }
    };
    let mut res = res;
    o_round9_all(&mut res);
    Ok(res)
}

fn c_num(r: &mut Rng) -> Value {
    match r.below(20) {
        0..=11 => json!(r.int(-6, 7)),
        12..=16 => json!(r.int(-40, 41) as f64 / 8.0),
        17 | 18 => c_int((1i128 << 62) * if r.chance(50) { 1 } else { -1 } + r.int(-3, 4) as i128),
        _ => c_int((1i128 << 69) + r.int(0, 5) as i128),
    }
}

fn c_scalar_v(r: &mut Rng) -> Value {
    match r.below(10) {
        0..=4 => c_num(r),
        5 => json!(r.chance(50)),
        6 => Value::Null,
        _ => json!(r.pick(&["a", "b", "u0", "é", "", "it's"])),
    }
}

fn c_value(r: &mut Rng) -> Value {
    match r.below(12) {
        0 => {
            let n = r.int(0, 3);
            Value::Array((0..n).map(|_| c_scalar_v(r)).collect())
        }
        1 => json!({"x": c_scalar_v(r)}),
        _ => c_scalar_v(r),
    }
}

fn c_row(r: &mut Rng, numeric: bool) -> Value {
    if r.chance(3) {
        return c_value(r);
    }
    let mut m = Map::new();
    for k in ["v", "w", "g", "s"] {
        if r.chance(if k == "s" { 40 } else { 90 }) {
            let v = match k {
                "v" | "w" if numeric && r.chance(93) => c_num(r),
                "g" => [
                    json!(1),
                    json!(1.0),
                    json!("a"),
                    json!("b"),
                    json!(true),
                    Value::Null,
                    json!(2),
                    json!(0.5),
                ][r.below(8) as usize]
                    .clone(),
                _ => c_value(r),
            };
            m.insert(k.to_string(), v);
        }
    }
    Value::Object(m)
}

fn compute_args(r: &mut Rng) -> Value {
    let fns = [
        "count",
        "sum",
        "min",
        "max",
        "mean",
        "median",
        "topk",
        "filter",
        "ratio",
        "diff",
        "percent",
        "intersect",
        "difference",
        "union",
        "derive",
        "join",
        "interval_relation",
    ];
    let f = fns[r.below(fns.len() as u64) as usize];
    let mut o = json!({"fn": f});
    let n = r.int(0, 9);
    let numeric = r.chance(85);
    let rows: Vec<Value> = (0..n).map(|_| c_row(r, numeric)).collect();
    match f {
        "count" | "sum" | "min" | "max" | "mean" | "median" => {
            if r.chance(40) {
                o["input"] = Value::Array(
                    (0..n)
                        .map(|_| if r.chance(95) { c_num(r) } else { c_value(r) })
                        .collect(),
                );
            } else {
                o["input"] = json!(rows);
                o["field"] = json!(if r.chance(90) { "v" } else { "zz" });
                if r.chance(30) {
                    o["group_by"] = json!("g");
                }
                if r.chance(5) {
                    o["field"] = Value::Null;
                }
            }
            if r.chance(4) {
                o["input"] = Value::Null;
            }
        }
        "topk" => {
            o["input"] = json!(rows);
            o["field"] = json!(r.pick(&["v", "v", "v", "s", "g"]));
            if r.chance(50) {
                o["k"] = json!(r.int(1, 8));
            } else {
                let pcts = [
                    json!(28),
                    json!(50),
                    json!(40),
                    json!(60),
                    json!(12.5),
                    json!(33.3),
                    json!(100),
                    json!(0.5),
                    json!(99.9),
                    json!(1e-20),
                    json!(28.0),
                    json!(1.0),
                    json!(0.1),
                    json!(66.66666666666667),
                ];
                o["pct"] = pcts[r.below(pcts.len() as u64) as usize].clone();
            }
            if r.chance(5) {
                o["k"] = json!(2);
            }
            if r.chance(3) {
                o["field"] = Value::Null;
            }
            o["side"] = json!(r.pick(&["top", "bottom"]));
            if r.chance(25) {
                o["group_by"] = json!("g");
            }
        }
        "filter" => {
            if r.chance(30) {
                o["input"] = Value::Array((0..n).map(|_| c_value(r)).collect());
            } else {
                o["input"] = json!(rows);
                o["field"] = json!(r.pick(&["v", "s", "w", "zz"]));
            }
            o["cmp"] =
                json!(r.pick(&[
                    "eq", "ne", "lt", "le", "gt", "ge", "contains", "is_null", "not_null"
                ]));
            if r.chance(3) {
                o["cmp"] = Value::Null;
            }
            if r.chance(25) {
                o["field2"] = json!("w");
            } else {
                o["value"] = c_value(r);
            }
            if r.chance(3) {
                o["value"] = json!(1);
                o["field2"] = json!("w");
            }
        }
        "ratio" | "diff" | "percent" => {
            o["x"] = c_num(r);
            o["y"] = if r.chance(10) { json!(0) } else { c_num(r) };
            if r.chance(5) {
                o["y"] = Value::Null;
            }
        }
        "intersect" | "difference" | "union" => {
            let m = r.int(0, 8);
            if r.chance(50) {
                o["input"] = Value::Array((0..n).map(|_| c_scalar_v(r)).collect());
                o["other"] = Value::Array((0..m).map(|_| c_scalar_v(r)).collect());
            } else {
                o["input"] = json!(rows);
                o["other"] = Value::Array((0..m).map(|_| c_row(r, true)).collect());
                o["field"] = json!("g");
                if r.chance(30) {
                    o["other_field"] = json!("v");
                }
            }
            if r.chance(5) {
                o["input"] = Value::Array(vec![json!([1])]);
            }
            if r.chance(4) {
                o["other"] = Value::Null;
            }
        }
        "derive" => {
            o["input"] = json!(rows);
            o["field"] = json!("v");
            o["op"] = json!(r.pick(&["add", "sub", "mul", "div", "floordiv", "concat"]));
            o["into"] = json!(if r.chance(95) { "z" } else { "w" });
            if r.chance(40) {
                o["field2"] = json!("w");
            } else {
                o["value"] = if r.chance(80) { c_num(r) } else { c_value(r) };
            }
            if r.chance(4) {
                o["op"] = Value::Null;
            }
        }
        "join" => {
            let keys = [
                json!(1),
                json!(1.0),
                json!("a"),
                json!("b"),
                json!(true),
                Value::Null,
                json!(2),
                json!(0.5),
                json!("c"),
            ];
            let pick_rows = |r: &mut Rng, k: &str, n: i64| -> Vec<Value> {
                let mut used: Vec<Value> = Vec::new();
                let mut out = Vec::new();
                for _ in 0..n {
                    let key = keys[r.below(keys.len() as u64) as usize].clone();
                    if r.chance(90) && used.iter().any(|u| c_key_eq(u, &key)) {
                        continue;
                    }
                    used.push(key.clone());
                    let mut row = json!({k: key, "v": c_num(r)});
                    if r.chance(30) {
                        row["r_v"] = json!(1);
                    }
                    if r.chance(30) {
                        row["w"] = c_value(r);
                    }
                    out.push(row);
                }
                out
            };
            let on_other = if r.chance(50) { "k2" } else { "k" };
            let m = r.int(0, 7);
            o["input"] = json!(pick_rows(r, "k", n));
            o["other"] = json!(pick_rows(r, on_other, m));
            o["on"] = json!("k");
            o["other_on"] = if on_other == "k2" {
                json!("k2")
            } else if r.chance(50) {
                json!("k")
            } else {
                Value::Null
            };
            o["how"] = json!(r.pick(&["inner", "left"]));
            o["fill"] = c_value(r);
            if r.chance(40) {
                o["other_prefix"] = json!(r.pick(&["r_", "x_", "é"]));
            }
            if r.chance(5) {
                o["on"] = Value::Null;
            }
        }
        _ => {
            let iv = |r: &mut Rng| {
                if r.chance(8) {
                    Value::Null
                } else {
                    let s = r.int(0, 10);
                    json!({"start": s, "end": if r.chance(8) { s } else { s + r.int(1, 8) }})
                }
            };
            o["a"] = iv(r);
            o["b"] = iv(r);
        }
    }
    if r.chance(8) && f != "topk" {
        o["group_by"] = json!("g");
    }
    o["limit"] = json!(if r.chance(40) { r.int(1, 6) } else { 100 });
    o
}

#[test]
fn compute_matches_its_oracle() {
    let mut r = Rng(0x636f_6d70);
    let (_d, s) = new_store();
    let mut per_fn: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in 0..4000 {
        let args = compute_args(&mut r);
        let got = call(&s, "compute", args.clone());
        let got = if got.get("error").is_some() {
            got
        } else {
            payload(&got)
        };
        let want = o_compute(&args).unwrap_or_else(|e| e);
        assert_eq!(canon(&got), canon(&want), "case {case}: compute {args}");
        let c = per_fn
            .entry(args["fn"].as_str().unwrap().to_string())
            .or_default();
        c.0 += 1;
        if got.get("error").is_none() {
            c.1 += 1;
        }
    }
    let (n, ok): (usize, usize) = per_fn.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!(
        n >= 500 && ok >= n / 2,
        "{n} cases, {ok} successful: {per_fn:?}"
    );
    for (f, (n, ok)) in &per_fn {
        assert!(*ok >= 40, "{f}: only {ok} successful cases of {n}");
    }
}

/// aggregate_events groups fixed-size chunks of events in parallel and merges them in chunk
/// order: the envelope must not depend on the rayon thread count (several chunks here).
#[test]
fn aggregate_events_is_independent_of_the_thread_count() {
    let (_d, mut s) = new_store();
    let mut r = Rng(0x0061_6767);
    let nodes: Vec<Value> = (0..40)
        .map(|i| json!({"op": "assert_node", "uid": format!("n{i}"), "label": if i % 3 == 0 { "L" } else { "M" },
            "vt_s": 0, "vt_e": if i % 4 == 0 { json!(400_000) } else { json!(OPEN_END) }}))
        .collect();
    s.write_at(1, ops(nodes)).unwrap();
    for b in 0..3 {
        let events: Vec<Value> = (0..40_000)
            .map(|_| {
                let t = r.int(0, 1_000_000);
                let mut ev = json!({"src": format!("n{}", r.below(50)), "dst": format!("n{}", r.below(50)),
                    "rel_type": r.pick(&["R", "S", "T"]), "vt_s": t});
                if r.chance(30) {
                    ev["vt_e"] = json!(t + r.int(1, 5000));
                }
                if r.chance(50) {
                    ev["props"] = if r.chance(50) { json!({"w": r.int(0, 9)}) } else { json!({"w": 0.25 * r.int(0, 9) as f64}) };
                }
                ev
            })
            .collect();
        s.write_at(
            2 + b,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
    }
    let w = json!({"t_a": 1000, "t_b": 990_000});
    let pair = json!([{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}]);
    let calls = [
        json!({"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}], "stride": 9890, "limit": 1000, "window": w,
            "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}]}),
        json!({"group_by": pair, "pair_mode": "undirected", "window": w, "limit": 10000,
            "aggregates": [{"agg": "count_distinct", "of": "src"}, {"agg": "mean", "of": "vt_s"}, {"agg": "max_gap"}, {"agg": "max", "of": "prop", "prop": "w"}]}),
        json!({"group_by": pair, "pair_mode": "reciprocal", "window": w, "rel_types": ["R", "S"],
            "aggregates": [{"agg": "count"}, {"agg": "max_in_window", "span": 20_000}, {"agg": "max_session_span", "gap": 300}]}),
        json!({"group_by": [{"dim": "label", "role": "src"}, {"dim": "calendar_unit", "unit": "hour_of_day", "tz_offset_minutes": -90}],
            "window": w, "aggregates": [{"agg": "mean", "of": "duration"}, {"agg": "min", "of": "prop", "prop": "w"}, {"agg": "mean", "of": "prop", "prop": "w"}]}),
        json!({"group_by": [], "window": w, "prop_filter": {"prop": "w", "cmp": "ge", "value": 1},
            "endpoint_filter": {"role": "either", "uids": ["n1", "n2", "n3", "zz"]},
            "aggregates": [{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "w"}, {"agg": "max", "of": "duration"}, {"agg": "max_gap"}]}),
    ];
    // The chunked, merged grouping equals the brute-force oracle at this size too (calls
    // whose oracle stays sub-quadratic: no reciprocal pairs, labels or max_in_window).
    let rows = plain_rows(&s);
    for i in [0, 1, 4] {
        let got = payload(&call(&s, "aggregate_events", calls[i].clone()));
        let want = o_aggregate(&rows, &calls[i]).unwrap_or_else(|e| e);
        assert_eq!(canon(&got), canon(&want), "{}", calls[i]);
    }
    for args in calls {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let snap = s.snapshot();
            pool.install(|| {
                let env = tgms_operators::call_operator(
                    snap,
                    "aggregate_events",
                    &args,
                    &tgms_operators::CallOptions::default(),
                )
                .unwrap_or_else(|e| e.payload());
                canon(&env)
            })
        };
        let one = run(1);
        assert!(!one.contains("\"error\""), "{args} → {one}");
        assert!(one.contains("\"rows_total\""));
        for n in [2, 4] {
            assert_eq!(run(n), one, "{args}: {n} threads differ from 1");
        }
    }
}

/// resolve_entities reads a lowercase uid heap that the store caches per uid set: after a
/// search, uids added by later batches are found, and a uid interned by a batch that then
/// failed (rolled back) is not. Every answer is checked against the oracle.
#[test]
fn resolve_entities_follows_the_uid_set_after_a_search() {
    let mut r = Rng(0x7265_736f);
    let (_d, mut s) = new_store();
    grow(&mut s, &mut r, 6);
    let uids = |s: &Store, q: &str| -> Vec<String> {
        let args = json!({"query": q, "limit": 10000});
        let got = payload(&call(s, "resolve_entities", args.clone()));
        let want = o_resolve(&plain_rows(s), &args).unwrap();
        assert_eq!(canon(&got), canon(&want), "query {q}");
        got["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["uid"].as_str().unwrap().to_string())
            .collect()
    };
    let node = |uid: &str| json!({"op": "assert_node", "uid": uid, "label": "L", "vt_s": 0});
    assert!(!uids(&s, "xÉ").contains(&"ÉXÉ-1".to_string()));
    let tt = s.last_tt().unwrap_or(0) + 1;
    s.write_at(tt, ops(vec![node("ÉXÉ-1")])).unwrap();
    assert!(uids(&s, "xÉ").contains(&"ÉXÉ-1".to_string()));
    // The first op interns the uid, the second fails: the batch is rolled back.
    let failed = s.write_at(
        tt + 1,
        ops(vec![
            node("éxé-2"),
            json!({"op": "retract", "ref": {"kind": "node", "uid": "never-seen"}, "t": 1, "reason": "x"}),
        ]),
    );
    assert!(failed.is_err());
    assert_eq!(uids(&s, "XÉ"), vec!["ÉXÉ-1".to_string()]);
    s.write_at(tt + 2, ops(vec![node("éxé-3")])).unwrap();
    assert_eq!(
        uids(&s, "XÉ"),
        vec!["ÉXÉ-1".to_string(), "éxé-3".to_string()]
    );
}
