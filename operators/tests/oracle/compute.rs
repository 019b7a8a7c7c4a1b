//! compute (§21): an independent reference evaluator over plain serde_json values. Its
//! numeric domain is the generator's: ints below 2^72 and floats that are multiples of 1/8
//! (so exact comparisons and exact sums can be done on eighths in i128, and correctly
//! rounded quotients through an exact decimal expansion parsed by the standard library).

use crate::common::kit::*;
use crate::common::*;
use crate::{dec_ratio, o_num_cmp, o_round9_all};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

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
    let mut r = Rng::new(0x636f_6d70);
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
