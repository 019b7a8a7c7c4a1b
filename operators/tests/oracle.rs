//! Brute-force oracles for entity_history, version_history, state_at, snapshot_subgraph and
//! diff_snapshots, written from `spec/operators.md` over a plain `Vec` of stored version
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
        "graph_metric_timeseries"
        | "burst_detection"
        | "neighborhood_evolution"
        | "resolve_entities" => args_for_series(op, r),
        _ => {
            let scope = if r.chance(60) {
                Value::Null
            } else {
                let n = r.int(1, 3);
                let seeds: Vec<&str> = (0..n).map(|_| uid_arg(r)).collect();
                json!({"seeds": seeds, "hops": r.int(0, 4)})
            };
            json!({"t1": r.int(0, 70), "t2": r.int(0, 70), "scope": scope, "limit": if r.chance(50) { r.int(1, 4) } else { 100 }})
        }
    };
    o["as_of_tt"] = as_of(r, s);
    if !matches!(op, "diff_snapshots" | "neighborhood_evolution") {
        paging(r, &mut o);
    }
    o
}

type Oracle = fn(&[Row], &Value) -> Result<Value, Value>;

const OPS: [(&str, Oracle); 9] = [
    ("entity_history", o_entity_history),
    ("version_history", o_version_history),
    ("state_at", o_state_at),
    ("snapshot_subgraph", o_snapshot_subgraph),
    ("diff_snapshots", o_diff),
    ("graph_metric_timeseries", o_series),
    ("burst_detection", o_burst),
    ("neighborhood_evolution", o_nbr),
    ("resolve_entities", o_resolve),
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
        for op in [
            "entity_history",
            "version_history",
            "state_at",
            "snapshot_subgraph",
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

/// `round9` of plans-and-claims §1.3 (Python's `round(x, 9)`), written here independently.
fn o_round9(x: f64) -> f64 {
    let t = format!("{x:.9}");
    t.parse::<f64>().unwrap()
}

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

fn window_arg(r: &mut Rng) -> Value {
    let x = r.int(0, 60);
    json!({"t_a": x, "t_b": if r.chance(8) { (x - r.int(0, 3)).max(0) } else { x + r.int(1, 50) }})
}

fn args_for_series(op: &str, r: &mut Rng) -> Value {
    match op {
        "graph_metric_timeseries" => {
            let metric = r.pick(&[
                "node_count",
                "edge_event_count",
                "active_edge_count",
                "mean_out_degree",
                "new_node_rate",
                "reciprocity",
            ]);
            if r.chance(4) {
                return json!({"metric": metric, "window": {"t_a": 0, "t_b": r.int(2001, 5000)}, "stride": 1});
            }
            json!({"metric": metric, "window": window_arg(r), "stride": r.int(1, 25)})
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
            let mut o = json!({"target": target, "window": window_arg(r), "stride": r.int(1, 8),
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
