//! Oracles of graph_metric_timeseries (§16), burst_detection (§17), neighborhood_evolution
//! (§18) and resolve_entities (§20), written from the spec over the plain rows.

use crate::common::kit::*;
use crate::common::*;
use crate::{o_round9, uid_arg};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::Store;

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

pub(crate) fn o_series(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub(crate) fn o_burst(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub(crate) fn o_nbr(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub(crate) fn o_resolve(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub(crate) fn args_for_series(op: &str, r: &mut Rng) -> Value {
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

/// resolve_entities reads a lowercase uid heap that the store caches per uid set: after a
/// search, uids added by later batches are found, and a uid interned by a batch that then
/// failed (rolled back) is not. Every answer is checked against the oracle.
#[test]
fn resolve_entities_follows_the_uid_set_after_a_search() {
    let mut r = Rng::new(0x7265_736f);
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
