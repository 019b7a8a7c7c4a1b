//! `match_pattern` (issue 21 item 4): on randomized stores, every call equals a brute force
//! written here from the documented semantics — every injective binding of the pattern's
//! variables to uids, every tuple of distinct events for its edges (time order, strictness
//! and `delta` checked per tuple), absent edges checked over the same window and belief
//! state — with its paging and certificate; bad patterns are structured errors; a budget
//! overrun is `E_COST`.

mod common;
use common::kit::*;
use common::*;
use serde_json::{json, Map, Value};
use tgms_engine::Store;

const NODES: [&str; 6] = ["a", "b", "c", "d", "é", "e"];

fn store(r: &mut Rng) -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let n = r.int(0, 4) as usize;
    grow(&mut s, r, n);
    for _ in 0..r.int(2, 5) {
        let k = r.int(3, 12);
        let hot = r.int(3, 7) as usize;
        let events: Vec<Value> = (0..k)
            .map(|_| {
                let t = r.int(0, 30);
                let mut ev = json!({"src": NODES[r.below(hot as u64) as usize],
                    "dst": NODES[r.below(hot as u64) as usize], "rel_type": r.pick(&RELS), "vt_s": t});
                if r.chance(30) {
                    ev["vt_e"] = json!(t + r.int(1, 40));
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
        let m = r.int(0, 2) as usize;
        grow(&mut s, r, m);
    }
    (d, s)
}

const VARS: [&str; 4] = ["A", "B", "C", "D"];

/// A valid random pattern call.
fn args(r: &mut Rng) -> Value {
    let n_edges = r.int(2, 5) as usize;
    let mut bound = 2usize;
    let mut edges: Vec<(usize, usize, Option<&str>)> = vec![if r.chance(50) {
        (0, 1, None)
    } else {
        (1, 0, None)
    }];
    while edges.len() < n_edges {
        let from = r.below(bound as u64) as usize;
        let to = if bound < 4 && r.chance(60) {
            bound += 1;
            bound - 1
        } else {
            let mut x = r.below(bound as u64) as usize;
            if x == from {
                x = (x + 1) % bound;
            }
            x
        };
        edges.push(if r.chance(50) {
            (from, to, None)
        } else {
            (to, from, None)
        });
    }
    for e in edges.iter_mut() {
        if r.chance(20) {
            e.2 = Some(r.pick(&RELS));
        }
    }
    let order = r.pick(&["none", "none", "ordered", "strict"]);
    if order == "none" {
        // Same variables need the same rel_type without an order.
        for i in 0..edges.len() {
            for j in 0..i {
                if edges[j].0 == edges[i].0 && edges[j].1 == edges[i].1 {
                    edges[i].2 = edges[j].2;
                }
            }
        }
    }
    let je = |e: &(usize, usize, Option<&str>)| {
        let mut v = json!({"src": VARS[e.0], "dst": VARS[e.1]});
        if let Some(rel) = e.2 {
            v["rel_type"] = json!(rel);
        }
        v
    };
    let a = r.int(0, 20);
    let mut out = json!({"edges": edges.iter().map(je).collect::<Vec<_>>(),
        "window": {"t_a": a, "t_b": a + r.int(5, 40)}, "time_order": order,
        "limit": r.int(1, 12)});
    if r.chance(50) {
        let x = r.below(bound as u64) as usize;
        let mut y = r.below(bound as u64) as usize;
        if x == y {
            y = (y + 1) % bound;
        }
        let rel = if r.chance(25) {
            Some(r.pick(&RELS))
        } else {
            None
        };
        let clash = edges
            .iter()
            .any(|e| e.0 == x && e.1 == y && (rel.is_none() || rel == e.2));
        if !clash {
            out["absent"] = json!([je(&(x, y, rel))]);
        }
    }
    if order != "none" && r.chance(40) {
        out["delta"] = json!(r.int(1, 20));
    }
    if r.chance(20) {
        out["self_loops"] = json!(r.pick(&["include", "exclude", "only"]));
    }
    if r.chance(15) {
        // Replaced by registered uids in the test loop.
        out["node_filter"] = json!([]);
    }
    if r.chance(20) {
        out["cursor"] = json!(r.int(0, 4).to_string());
    }
    out
}

/// The brute force of the documented semantics.
fn oracle(rows: &[Row], args: &Value) -> Value {
    let q = Q { args };
    let (ta, tb) = (
        args["window"]["t_a"].as_i64().unwrap(),
        args["window"]["t_b"].as_i64().unwrap(),
    );
    let nf: Option<Vec<&str>> = args["node_filter"]
        .as_array()
        .map(|f| f.iter().map(|x| x.as_str().unwrap()).collect());
    let mut ev: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, q.a()) && ta <= r.vt_s && r.vt_s < tb)
        .filter(|r| {
            nf.as_ref()
                .is_none_or(|f| f.contains(&r.src.as_str()) && f.contains(&r.dst.as_str()))
        })
        .filter(|r| match args["self_loops"].as_str() {
            Some("exclude") => r.src != r.dst,
            Some("only") => r.src == r.dst,
            _ => true,
        })
        .collect();
    ev.sort_by(|x, y| (x.vt_s, &x.eid).cmp(&(y.vt_s, &y.eid)));
    let pe = |v: &Value| -> Vec<(usize, usize, Option<String>)> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        let ix = |k: &str| VARS.iter().position(|x| *x == e[k]).unwrap();
                        (
                            ix("src"),
                            ix("dst"),
                            e["rel_type"].as_str().map(String::from),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let edges = pe(&args["edges"]);
    let absent = pe(&args["absent"]);
    let used: Vec<usize> = (0..4)
        .filter(|v| edges.iter().any(|e| e.0 == *v || e.1 == *v))
        .collect();
    let order = args["time_order"].as_str().unwrap_or("none");
    let delta = args["delta"].as_i64();
    let mut uids: Vec<&str> = ev
        .iter()
        .flat_map(|r| [r.src.as_str(), r.dst.as_str()])
        .collect();
    uids.sort();
    uids.dedup();
    let fits = |r: &Row, e: &(usize, usize, Option<String>), b: &[&str; 4]| {
        r.src == b[e.0] && r.dst == b[e.1] && e.2.as_ref().is_none_or(|x| *x == r.rel)
    };
    let mut found: Vec<(Vec<String>, Value)> = Vec::new();
    let mut total_emb = 0u64;
    // Every injective assignment of the used variables to uids (odometer).
    let n = uids.len();
    let mut idx = vec![0usize; used.len()];
    'outer: loop {
        let distinct = (0..idx.len()).all(|i| (0..i).all(|j| idx[i] != idx[j]));
        if n > 0 && distinct {
            let mut b = [""; 4];
            for (k, v) in used.iter().enumerate() {
                b[*v] = uids[idx[k]];
            }
            let blocked = absent.iter().any(|a| ev.iter().any(|r| fits(r, a, &b)));
            if !blocked {
                // Tuples of event positions, lexicographic, distinct.
                let lists: Vec<Vec<usize>> = edges
                    .iter()
                    .map(|e| (0..ev.len()).filter(|&i| fits(ev[i], e, &b)).collect())
                    .collect();
                let mut count = 0u64;
                let mut witness: Option<Vec<usize>> = None;
                let mut pos = vec![0usize; lists.len()];
                if lists.iter().all(|l| !l.is_empty()) {
                    loop {
                        let tup: Vec<usize> = pos.iter().zip(&lists).map(|(p, l)| l[*p]).collect();
                        let ok_distinct = (0..tup.len()).all(|i| (0..i).all(|j| tup[i] != tup[j]));
                        let ts: Vec<i64> = tup.iter().map(|&i| ev[i].vt_s).collect();
                        let ok_order = match order {
                            "ordered" => tup.windows(2).all(|w| w[0] < w[1]),
                            "strict" => ts.windows(2).all(|w| w[0] < w[1]),
                            _ => true,
                        };
                        let ok_delta = delta.is_none_or(|d| {
                            ts.iter().max().unwrap() - ts.iter().min().unwrap() <= d
                        });
                        if ok_distinct && ok_order && ok_delta {
                            count += 1;
                            if witness.is_none() {
                                witness = Some(tup.clone());
                            }
                        }
                        // Next tuple, last position fastest (lexicographic).
                        let mut k = pos.len();
                        loop {
                            if k == 0 {
                                break;
                            }
                            k -= 1;
                            pos[k] += 1;
                            if pos[k] < lists[k].len() {
                                break;
                            }
                            pos[k] = 0;
                            if k == 0 {
                                k = usize::MAX;
                                break;
                            }
                        }
                        if k == usize::MAX {
                            break;
                        }
                    }
                }
                if count > 0 {
                    total_emb += count;
                    let mut binding = Map::new();
                    for v in &used {
                        binding.insert(VARS[*v].to_string(), json!(b[*v]));
                    }
                    let w: Vec<Value> = witness
                        .unwrap()
                        .iter()
                        .map(|&i| {
                            let r = ev[i];
                            json!({"src": r.src, "dst": r.dst, "t": r.vt_s, "eid": r.eid, "rel_type": r.rel})
                        })
                        .collect();
                    let key: Vec<String> = used.iter().map(|v| b[*v].to_string()).collect();
                    found.push((
                        key.clone(),
                        json!({"binding": binding, "embeddings": count, "witness": w, "__key": key}),
                    ));
                }
            }
        }
        // Odometer step.
        let mut k = 0;
        loop {
            if k == idx.len() || n == 0 {
                break 'outer;
            }
            idx[k] += 1;
            if idx[k] < n {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
    }
    found.sort_by(|x, y| x.0.cmp(&y.0));
    let mut p = Map::new();
    page(
        &mut p,
        found.into_iter().map(|f| f.1).collect(),
        "__key",
        &q,
    )
    .unwrap();
    if let Some(Value::Array(rs)) = p.get_mut("rows") {
        for r in rs {
            r.as_object_mut().unwrap().remove("__key");
        }
    }
    p.insert("n_embeddings".into(), json!(total_emb));
    p.insert("n_events_in_window".into(), json!(ev.len()));
    Value::Object(p)
}

#[test]
fn match_pattern_equals_the_brute_force() {
    let mut r = Rng::new(0x6d61_7463);
    let (mut cases, mut non_empty, mut blocked_by_absent, mut ordered) = (0, 0, 0, 0);
    for store_no in 0..80 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        for _ in 0..8 {
            let mut a = args(&mut r);
            if a.get("node_filter").is_some() {
                let known: Vec<&str> = NODES
                    .iter()
                    .copied()
                    .filter(|u| registered(&rows, u))
                    .take(4)
                    .collect();
                a["node_filter"] = json!(known);
            }
            let got = call(&s, "match_pattern", a.clone());
            assert!(got.get("error").is_none(), "store #{store_no} {a}: {got}");
            let got = payload(&got);
            let want = oracle(&rows, &a);
            assert_eq!(canon(&got), canon(&want), "store #{store_no} {a}");
            cases += 1;
            if got["rows_total"].as_u64().unwrap() > 0 {
                non_empty += 1;
                if a["time_order"] != "none" {
                    ordered += 1;
                }
            }
            if a.get("absent").is_some() {
                let mut b = a.clone();
                b.as_object_mut().unwrap().remove("absent");
                let without = payload(&call(&s, "match_pattern", b));
                if without["rows_total"] != got["rows_total"] {
                    blocked_by_absent += 1;
                }
            }
        }
    }
    eprintln!("{cases} cases, {non_empty} non-empty, {ordered} ordered non-empty, {blocked_by_absent} changed by absent");
    assert!(non_empty >= 150 && ordered >= 40 && blocked_by_absent >= 30);
}

#[test]
fn bad_patterns_are_structured_errors() {
    let mut r = Rng::new(7);
    let (_d, s) = store(&mut r);
    let w = json!({"t_a": 0, "t_b": 40});
    let e = |x: &str, y: &str| json!({"src": x, "dst": y});
    let cases = [
        (
            json!({"edges": [e("A", "B")], "window": w}),
            "E_SCHEMA",
            "edges",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C"), e("C", "D"), e("D", "A"), e("A", "C")], "window": w}),
            "E_SCHEMA",
            "edges",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "E")], "window": w}),
            "E_SCHEMA",
            "dst",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "B")], "window": w}),
            "E_INVALID_ARG",
            "joins a variable to itself",
        ),
        (
            json!({"edges": [e("A", "B"), e("C", "D")], "window": w}),
            "E_INVALID_ARG",
            "must connect all their variables",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C")], "absent": [e("A", "D")], "window": w}),
            "E_INVALID_ARG",
            "absent edge 0",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C")], "absent": [e("B", "C")], "window": w}),
            "E_INVALID_ARG",
            "excludes what pattern edge 1 requires",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "A")], "delta": 5, "window": w}),
            "E_INVALID_ARG",
            "delta requires time_order",
        ),
        (
            json!({"edges": [e("A", "B"), {"src": "A", "dst": "B", "rel_type": "R"}], "window": w}),
            "E_INVALID_ARG",
            "different rel_types",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C")], "window": {"t_a": 5, "t_b": 5}}),
            "E_INVALID_ARG",
            "window requires t_a < t_b",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C")], "window": w, "node_filter": ["nobody"]}),
            "E_NOT_FOUND",
            "nobody",
        ),
        (
            json!({"edges": [e("A", "B"), e("B", "C")], "window": w, "time_order": "later"}),
            "E_SCHEMA",
            "time_order",
        ),
    ];
    for (a, code, needle) in cases {
        let got = call(&s, "match_pattern", a.clone());
        assert_eq!(got["error"], code, "{a}: {got}");
        assert!(canon(&got).contains(needle), "{a}: {got}");
    }
}

#[test]
fn a_dense_pattern_over_the_budget_is_refused_with_e_cost() {
    // All ordered pairs among 70 hubs: the 4-cycle enumeration exceeds the work budget.
    let (_d, mut s) = new_store();
    let events: Vec<Value> = (0..70)
        .flat_map(|i| (0..70).filter(move |j| *j != i).map(move |j| json!({"src": format!("h{i}"), "dst": format!("h{j}"), "rel_type": "R", "vt_s": i + j})))
        .collect();
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    let e = |x: &str, y: &str| json!({"src": x, "dst": y});
    let a = json!({"edges": [e("A", "B"), e("B", "C"), e("C", "D"), e("D", "A")], "window": {"t_a": 0, "t_b": 100}});
    let got = call(&s, "match_pattern", a);
    let text = canon(&got);
    assert_eq!(got["error"], "E_COST", "{}", &text[..text.len().min(300)]);
    assert!(text.contains("work budget"), "{text}");
}
