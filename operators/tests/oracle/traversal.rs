//! Traversal and pattern operators (§12–§15, §19, §25): brute-force oracles over plain rows,
//! written from the spec, independent of `tgms_operators::kernels`.
//! Most of these oracles are in `common/patterns_oracle.rs` (shared with other tests); here
//! are weighted_traverse's and the random arguments of all of them.

use crate::common::kit::*;
use crate::uid_arg;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn o_weighted(rows: &[Row], args: &Value) -> Result<Value, Value> {
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
pub(crate) fn args_for_traversal(op: &str, r: &mut Rng) -> Value {
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
