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

fn window_of(args: &Value) -> Result<(i64, i64), Value> {
    let w = &args["window"];
    let (x, y) = (w["t_a"].as_i64().unwrap(), w["t_b"].as_i64().unwrap());
    if x >= y {
        return Err(err(
            "E_INVALID_ARG",
            format!("window requires t_a < t_b, got [{x}, {y})"),
            json!({}),
        ));
    }
    Ok((x, y))
}

/// Candidate edges of §12: believed edge versions overlapping the window.
fn candidates(rows: &[Row], a: i64, ta: i64, tb: i64) -> Vec<&Row> {
    rows.iter()
        .filter(|r| !r.node && believed(r, a) && r.vt_e > ta && r.vt_s < tb)
        .collect()
}

/// Label search of §12 over states `(node, label)`; `fwd` = earliest arrivals, else latest
/// departures. Without a wait cap: fixpoint of the best label per node; with one: every
/// distinct state, breadth-first.
fn o_labels(
    c: &[&Row],
    src: &str,
    ta: i64,
    tb: i64,
    fwd: bool,
    wait: Option<i64>,
) -> BTreeMap<String, i64> {
    let start = (src.to_string(), if fwd { ta } else { tb - 1 });
    // One step from (u, l): the states it yields.
    let step = |u: &str, l: i64, from_start: bool| -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for e in c {
            let (here, there) = if fwd {
                (&e.src, &e.dst)
            } else {
                (&e.dst, &e.src)
            };
            if here != u {
                continue;
            }
            let (tau, ok) = if fwd {
                let tau = l.max(e.vt_s);
                (tau, tau < e.vt_e && tau < tb)
            } else {
                let tau = l.min(e.vt_e - 1);
                (tau, tau >= e.vt_s && tau >= ta)
            };
            let waited = if fwd { tau - l } else { l - tau };
            if ok && (from_start || wait.is_none_or(|d| waited <= d)) {
                out.push((there.clone(), tau));
            }
        }
        out
    };
    let better = |x: i64, y: i64| if fwd { x < y } else { x > y };
    let mut best: BTreeMap<String, i64> = BTreeMap::new();
    match wait {
        None => {
            best.insert(start.0.clone(), start.1);
            loop {
                let mut changed = false;
                let snapshot: Vec<(String, i64)> =
                    best.iter().map(|(k, v)| (k.clone(), *v)).collect();
                for (u, l) in snapshot {
                    for (v, tau) in step(&u, l, true) {
                        if best.get(&v).is_none_or(|&b| better(tau, b)) {
                            best.insert(v, tau);
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        Some(_) => {
            let mut seen: BTreeSet<(String, i64)> = BTreeSet::new();
            let mut queue = std::collections::VecDeque::new();
            seen.insert(start.clone());
            queue.push_back(start.clone());
            while let Some((u, l)) = queue.pop_front() {
                let from_start = (u.as_str(), l) == (start.0.as_str(), start.1);
                for st in step(&u, l, from_start) {
                    if seen.insert(st.clone()) {
                        queue.push_back(st);
                    }
                }
            }
            for (u, l) in seen {
                if best.get(&u).is_none_or(|&b| better(l, b)) {
                    best.insert(u, l);
                }
            }
        }
    }
    best.remove(src);
    best
}

fn o_reach(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let (ta, tb) = window_of(args)?;
    let src = args["src"].as_str().unwrap();
    if !registered(rows, src) {
        return Err(unknown(src));
    }
    let c = candidates(rows, q.a(), ta, tb);
    let wait = args["delta_max_wait"].as_i64();
    let dir = args["direction"].as_str().unwrap_or("out");
    let fw = o_labels(&c, src, ta, tb, true, wait);
    let bw = o_labels(&c, src, ta, tb, false, wait);
    let mut f: Vec<(&i64, &String)> = fw.iter().map(|(u, l)| (l, u)).collect();
    f.sort();
    let mut b: Vec<(i64, &String)> = bw.iter().map(|(u, l)| (-*l, u)).collect();
    b.sort();
    let out: Vec<Value> = match dir {
        "out" => f
            .iter()
            .map(|(l, u)| json!({"uid": u, "earliest_arrival": l}))
            .collect(),
        "in" => b
            .iter()
            .map(|(l, u)| json!({"uid": u, "latest_departure": -l}))
            .collect(),
        _ => f
            .iter()
            .map(|(l, u)| json!({"uid": u, "earliest_arrival": l, "latest_departure": bw.get(*u)}))
            .chain(
                b.iter().filter(|(_, u)| !fw.contains_key(*u)).map(
                    |(l, u)| json!({"uid": u, "earliest_arrival": null, "latest_departure": -l}),
                ),
            )
            .collect(),
    };
    let mut p = Map::new();
    page(&mut p, out, "uid", &q)?;
    Ok(Value::Object(p))
}

fn o_paths(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let (ta, tb) = window_of(args)?;
    let (src, dst) = (args["src"].as_str().unwrap(), args["dst"].as_str().unwrap());
    for u in [src, dst] {
        if !registered(rows, u) {
            return Err(unknown(u));
        }
    }
    let k = args["k"].as_u64().unwrap_or(5) as usize;
    let max_hops = args["max_hops"].as_u64().unwrap_or(4) as usize;
    let c = candidates(rows, q.a(), ta, tb);
    // (arrival, path edges)
    let mut found: Vec<(i64, Vec<&Row>)> = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn dfs<'r>(
        c: &[&'r Row],
        u: &str,
        a: i64,
        tb: i64,
        dst: &str,
        max_hops: usize,
        visited: &mut Vec<String>,
        path: &mut Vec<&'r Row>,
        found: &mut Vec<(i64, Vec<&'r Row>)>,
    ) {
        for e in c.iter().filter(|e| e.src == u) {
            if visited.contains(&e.dst) {
                continue;
            }
            let tau = a.max(e.vt_s);
            if !(tau < e.vt_e && tau < tb) {
                continue;
            }
            path.push(e);
            if e.dst == dst {
                found.push((tau, path.clone()));
            } else if path.len() < max_hops {
                visited.push(e.dst.clone());
                dfs(c, &e.dst, tau, tb, dst, max_hops, visited, path, found);
                visited.pop();
            }
            path.pop();
        }
    }
    if src != dst {
        let mut visited = vec![src.to_string()];
        dfs(
            &c,
            src,
            ta,
            tb,
            dst,
            max_hops,
            &mut visited,
            &mut Vec::new(),
            &mut found,
        );
    }
    found.sort_by(|x, y| {
        let kx: Vec<(i64, &String)> = x.1.iter().map(|e| (e.vt_s, &e.eid)).collect();
        let ky: Vec<(i64, &String)> = y.1.iter().map(|e| (e.vt_s, &e.eid)).collect();
        (x.0, x.1.len(), kx).cmp(&(y.0, y.1.len(), ky))
    });
    let keys: Vec<Value> = found
        .iter()
        .map(|(_, es)| json!(es.iter().map(|e| e.eid.clone()).collect::<Vec<_>>()))
        .collect();
    let rows_out: Vec<Value> = found
        .iter()
        .take(k)
        .map(|(arr, es)| {
            json!({"arrival": arr, "hops": es.len(), "edges": es.iter().map(|e| json!({
                "src": e.src, "dst": e.dst, "rel_type": e.rel, "eid": e.eid, "t": e.vt_s})).collect::<Vec<_>>()})
        })
        .collect();
    Ok(
        json!({"rows": rows_out, "rows_total": found.len(), "truncated": found.len() > k,
        "cursor": null, "set_digest": oracle_set_digest(&keys)}),
    )
}

/// The named motifs of §14.2 as (src var, dst var) per event.
fn named_pattern(m: &str) -> Option<[(u8, u8); 3]> {
    Some(match m {
        "M_triangle_cyclic" => [(0, 1), (1, 2), (2, 0)],
        "M_triangle_acyclic_1" => [(0, 1), (0, 2), (1, 2)],
        "M_2node_pingpong" => [(0, 1), (1, 0), (0, 1)],
        "M_star_out_3" => [(0, 1), (0, 2), (0, 3)],
        "M_path_3" => [(0, 1), (1, 2), (2, 3)],
        _ => return None,
    })
}

/// Does some binding of the pattern's variables to pairwise distinct uids match?
fn binds(pat: &[(u8, u8); 3], ev: [(&str, &str); 3]) -> bool {
    let mut bind: [Option<&str>; 4] = [None; 4];
    for (i, &(vs, vd)) in pat.iter().enumerate() {
        for (var, uid) in [(vs, ev[i].0), (vd, ev[i].1)] {
            match bind[var as usize] {
                None => {
                    if bind.iter().flatten().any(|b| *b == uid) {
                        return false;
                    }
                    bind[var as usize] = Some(uid);
                }
                Some(b) if b == uid => {}
                Some(_) => return false,
            }
        }
    }
    true
}

/// The catalogue class `(i, j)` of §14.5.
fn o_classify(ev: [(&str, &str); 3]) -> Option<(usize, usize)> {
    if ev.iter().any(|(s, d)| s == d) {
        return None;
    }
    let mut names: Vec<&str> = vec![ev[0].0, ev[0].1];
    for (s, d) in &ev[1..] {
        for x in [s, d] {
            if !names.contains(x) {
                names.push(x);
            }
        }
    }
    if names.len() > 3 {
        return None;
    }
    let ix = |x: &str| names.iter().position(|n| *n == x).unwrap();
    let e2 = (ix(ev[1].0), ix(ev[1].1));
    let e3 = (ix(ev[2].0), ix(ev[2].1));
    let rows = [(2, 1), (1, 2), (2, 0), (0, 2), (1, 0), (0, 1)];
    let cols = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)];
    let i = rows.iter().position(|x| *x == e2)? + 1;
    let j = cols.iter().position(|x| *x == e3)? + 1;
    Some((i, j))
}

/// §14.3 steps 1–3 and §14.1: the events in (t, eid) order.
fn o_events<'r>(rows: &'r [Row], args: &Value, cap: bool) -> Result<Vec<&'r Row>, Value> {
    let q = Q { args };
    let (ta, tb) = window_of(args)?;
    if args["mode"] == "sample" {
        return Err(err(
            "E_INVALID_ARG",
            "mode='sample' is not available in this build; use node_filter".into(),
            json!({}),
        ));
    }
    let filter: Option<Vec<&str>> = args["node_filter"]
        .as_array()
        .map(|f| f.iter().map(|x| x.as_str().unwrap()).collect());
    if let Some(f) = &filter {
        let mut bad: Vec<&str> = f.iter().copied().filter(|u| !registered(rows, u)).collect();
        bad.sort();
        if let Some(u) = bad.first() {
            return Err(unknown(u));
        }
    }
    let mut ev: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, q.a()) && ta <= r.vt_s && r.vt_s < tb)
        .filter(|r| {
            filter
                .as_ref()
                .is_none_or(|f| f.contains(&r.src.as_str()) && f.contains(&r.dst.as_str()))
        })
        .collect();
    assert!(!cap || ev.len() <= 5_000_000);
    ev.sort_by(|x, y| (x.vt_s, &x.eid).cmp(&(y.vt_s, &y.eid)));
    Ok(ev)
}

/// Every instance triple (in (e1, e2, e3) order) with its catalogue class.
fn o_triples<'r>(ev: &[&'r Row], args: &Value) -> Vec<[&'r Row; 3]> {
    let delta = args["delta"].as_i64().unwrap();
    let strict = args["tie_mode"] == "strict";
    let mut out = Vec::new();
    for i in 0..ev.len() {
        for j in i + 1..ev.len() {
            for k in j + 1..ev.len() {
                let (a, b, c) = (ev[i], ev[j], ev[k]);
                if c.vt_s - a.vt_s > delta {
                    continue;
                }
                if strict && !(a.vt_s < b.vt_s && b.vt_s < c.vt_s) {
                    continue;
                }
                out.push([a, b, c]);
            }
        }
    }
    out
}

fn o_matches(m: &str, t: &[&Row; 3]) -> bool {
    let e = [
        (t[0].src.as_str(), t[0].dst.as_str()),
        (t[1].src.as_str(), t[1].dst.as_str()),
        (t[2].src.as_str(), t[2].dst.as_str()),
    ];
    match named_pattern(m) {
        Some(p) => binds(&p, e),
        None => o_classify(e).is_some_and(|(i, j)| format!("M_{i}_{j}") == m),
    }
}

fn o_count_motifs(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let m = args["motif"].as_str().unwrap();
    let ev = o_events(rows, args, named_pattern(m).is_some())?;
    let triples = o_triples(&ev, args);
    let mut p = json!({"n_events_in_window": ev.len(), "truncated": false});
    if m == "all" {
        let mut counts = Map::new();
        for i in 1..=6 {
            for j in 1..=6 {
                counts.insert(format!("M_{i}_{j}"), json!(0));
            }
        }
        let mut total = 0;
        for t in &triples {
            let e = [
                (t[0].src.as_str(), t[0].dst.as_str()),
                (t[1].src.as_str(), t[1].dst.as_str()),
                (t[2].src.as_str(), t[2].dst.as_str()),
            ];
            if let Some((i, j)) = o_classify(e) {
                let c = &mut counts[&format!("M_{i}_{j}")];
                *c = json!(c.as_i64().unwrap() + 1);
                total += 1;
            }
        }
        p["counts"] = Value::Object(counts);
        p["count"] = json!(total);
    } else {
        p["count"] = json!(triples.iter().filter(|t| o_matches(m, t)).count());
    }
    Ok(p)
}

fn o_find_motifs(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let m = args["motif"].as_str().unwrap();
    let ev = o_events(rows, args, true)?;
    let found: Vec<[&Row; 3]> = o_triples(&ev, args)
        .into_iter()
        .filter(|t| o_matches(m, t))
        .collect();
    let out: Vec<Value> = found
        .iter()
        .map(|t| {
            json!({"edges": t.iter().map(|e| json!({"src": e.src, "dst": e.dst, "t": e.vt_s,
            "eid": e.eid, "rel_type": e.rel})).collect::<Vec<_>>()})
        })
        .collect();
    let keys: Vec<Value> = found
        .iter()
        .map(|t| json!(t.iter().map(|e| json!([e.vt_s, e.eid])).collect::<Vec<_>>()))
        .collect();
    let mut p = Map::new();
    let with_keys: Vec<Value> = out
        .into_iter()
        .zip(keys)
        .map(|(mut r, k)| {
            r["__key"] = k;
            r
        })
        .collect();
    page(&mut p, with_keys, "__key", &q)?;
    if let Some(Value::Array(rs)) = p.get_mut("rows") {
        for r in rs {
            r.as_object_mut().unwrap().remove("__key");
        }
    }
    Ok(Value::Object(p))
}

fn o_co_active(rows: &[Row], args: &Value) -> Result<Value, Value> {
    let q = Q { args };
    let rel = args["allen_relation"]["relation"].as_str().unwrap();
    let gap = args["allen_relation"]["gap"].as_i64();
    if rel == "before" && gap.is_none() {
        return Err(err(
            "E_INVALID_ARG",
            "allen_relation 'before' requires gap".into(),
            json!({}),
        ));
    }
    let f = |s: &str, k: &str| -> Option<String> {
        args[s][k]
            .as_str()
            .filter(|x| !x.is_empty())
            .map(str::to_string)
    };
    for (s, k) in [
        ("a_spec", "src"),
        ("a_spec", "dst"),
        ("b_spec", "src"),
        ("b_spec", "dst"),
    ] {
        if let Some(u) = f(s, k) {
            if !registered(rows, &u) {
                return Err(unknown(&u));
            }
        }
    }
    let sel = |s: &str| -> Vec<&Row> {
        rows.iter()
            .filter(|r| !r.node && believed(r, q.a()))
            .filter(|r| f(s, "src").is_none_or(|u| r.src == u))
            .filter(|r| f(s, "dst").is_none_or(|u| r.dst == u))
            .filter(|r| f(s, "rel_type").is_none_or(|u| r.rel == u))
            .collect()
    };
    let (aa, bb) = (sel("a_spec"), sel("b_spec"));
    let mut pairs: Vec<(&Row, &Row)> = Vec::new();
    for a in &aa {
        for b in &bb {
            let holds = match rel {
                "overlaps" => a.vt_s < b.vt_s && b.vt_s < a.vt_e && a.vt_e < b.vt_e,
                "during" => b.vt_s < a.vt_s && a.vt_e < b.vt_e,
                "meets" => a.vt_e == b.vt_s,
                _ => 0 < b.vt_s - a.vt_e && b.vt_s - a.vt_e <= gap.unwrap(),
            };
            if holds && a.vid != b.vid {
                pairs.push((a, b));
            }
        }
    }
    assert!(pairs.len() <= 50_000);
    pairs.sort_by(|x, y| {
        (x.0.vt_s, &x.0.vid, x.1.vt_s, &x.1.vid).cmp(&(y.0.vt_s, &y.0.vid, y.1.vt_s, &y.1.vid))
    });
    let desc = |r: &Row| json!({"eid": r.eid, "vid": r.vid, "src": r.src, "dst": r.dst, "rel_type": r.rel, "vt_s": r.vt_s, "vt_e": r.vt_e});
    let out: Vec<Value> = pairs
        .iter()
        .map(|(a, b)| json!({"a": desc(a), "b": desc(b), "__key": [a.vid, b.vid]}))
        .collect();
    let mut p = Map::new();
    page(&mut p, out, "__key", &q)?;
    if let Some(Value::Array(rs)) = p.get_mut("rows") {
        for r in rs {
            r.as_object_mut().unwrap().remove("__key");
        }
    }
    Ok(Value::Object(p))
}

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
    if r.chance(4) {
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
    if !["diff_snapshots", "temporal_paths", "count_temporal_motifs"].contains(&op) {
        paging(r, &mut o);
    }
    o
}

type Oracle = fn(&[Row], &Value) -> Result<Value, Value>;

const OPS: [(&str, Oracle); 11] = [
    ("entity_history", o_entity_history),
    ("version_history", o_version_history),
    ("state_at", o_state_at),
    ("snapshot_subgraph", o_snapshot_subgraph),
    ("diff_snapshots", o_diff),
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

#[test]
fn traversal_operators_match_their_oracles_on_event_heavy_stores() {
    let mut r = Rng(0x6f70_7335);
    let mut cases: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for store_no in 0..120 {
        let (_d, mut s) = new_store();
        grow_dense(&mut s, &mut r);
        let rows = plain_rows(&s);
        for &(op, oracle) in &OPS[5..] {
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
