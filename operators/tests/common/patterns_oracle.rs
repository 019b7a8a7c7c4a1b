//! Brute-force oracles of the traversal and pattern operators (`operators.md` §12–§15, §19),
//! written from the spec over the plain rows of [`super::kit`], independent of
//! `tgms_operators::kernels`. Shared by `oracle/` and the edge-predicate tests
//! (`pattern_predicates.rs`), which run them over rows the predicate hides.

use super::kit::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
pub fn window_of(args: &Value) -> Result<(i64, i64), Value> {
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
pub fn candidates(rows: &[Row], a: i64, ta: i64, tb: i64) -> Vec<&Row> {
    rows.iter()
        .filter(|r| !r.node && believed(r, a) && r.vt_e > ta && r.vt_s < tb)
        .collect()
}

/// Label search of §12 over states `(node, label)`; `fwd` = earliest arrivals, else latest
/// departures. Without a wait cap: fixpoint of the best label per node; with one: every
/// distinct state, breadth-first.
pub fn o_labels(
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

pub fn o_reach(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub fn o_paths(rows: &[Row], args: &Value) -> Result<Value, Value> {
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
pub fn named_pattern(m: &str) -> Option<[(u8, u8); 3]> {
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
pub fn binds(pat: &[(u8, u8); 3], ev: [(&str, &str); 3]) -> bool {
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
pub fn o_classify(ev: [(&str, &str); 3]) -> Option<(usize, usize)> {
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
pub fn o_events<'r>(rows: &'r [Row], args: &Value, cap: bool) -> Result<Vec<&'r Row>, Value> {
    let q = Q { args };
    let (ta, tb) = window_of(args)?;
    if args["mode"] == "sample" {
        return Err(err(
            "E_INVALID_ARG",
            "mode='sample' is only available for count_temporal_motifs".into(),
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
pub fn o_triples<'r>(ev: &[&'r Row], args: &Value) -> Vec<[&'r Row; 3]> {
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

pub fn o_matches(m: &str, t: &[&Row; 3]) -> bool {
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

pub fn o_count_motifs(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub fn o_find_motifs(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub fn o_co_active(rows: &[Row], args: &Value) -> Result<Value, Value> {
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
