//! aggregate_events (§22), brute force over the plain rows.

use crate::common::kit::*;
use crate::common::*;
use crate::{dec_ratio, o_num_cmp, o_round9_all, uid_arg};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::OPEN_END;

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

pub(crate) fn o_aggregate(rows: &[Row], args: &Value) -> Result<Value, Value> {
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

pub(crate) fn agg_args(r: &mut Rng) -> Value {
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

/// aggregate_events groups fixed-size chunks of events in parallel and merges them in chunk
/// order: the envelope must not depend on the rayon thread count (several chunks here).
#[test]
fn aggregate_events_is_independent_of_the_thread_count() {
    let (_d, mut s) = new_store();
    let mut r = Rng::new(0x0061_6767);
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

/// Calls grouped by `rel_type` and `time_bucket` only take a path that looks a group up only
/// where the rel type changes inside one bucket's stretch of events; it must equal the
/// brute-force oracle with more rel types than that path remembers per stretch, events in
/// and out of time order, and rows in the mapped image and in the memtable above it.
#[test]
fn aggregate_events_by_rel_and_bucket_equals_the_oracle() {
    let (_d, mut s) = new_store();
    let mut r = Rng::new(0x7265_6c62);
    let rels: Vec<String> = (0..20).map(|i| format!("R{i:02}")).collect();
    let mut t = 0i64;
    for b in 0..4 {
        let events: Vec<Value> = (0..5_000)
            .map(|_| {
                // Batches 0 and 2 in time order (long stretches per bucket), 1 and 3 not.
                let vt_s = if b % 2 == 0 {
                    t += r.int(0, 60);
                    t
                } else {
                    r.int(0, 600_000)
                };
                // Mostly three rel types, sometimes any of twenty.
                let rel = if r.chance(80) {
                    &rels[r.below(3) as usize]
                } else {
                    &rels[r.below(20) as usize]
                };
                json!({"src": format!("n{}", r.below(300)), "dst": format!("n{}", r.below(300)),
                    "rel_type": rel, "vt_s": vt_s})
            })
            .collect();
        s.write_at(
            1 + b,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
        if b == 2 {
            s.compact().unwrap();
        }
    }
    let w = json!({"t_a": 500, "t_b": 590_000});
    let rel = json!({"dim": "rel_type"});
    let bucket = json!({"dim": "time_bucket"});
    let aggs = json!([{"agg": "count"}, {"agg": "count_distinct", "of": "dst"},
        {"agg": "count_distinct", "of": "src"}, {"agg": "min", "of": "vt_s"}]);
    let calls = [
        json!({"group_by": [rel, bucket], "stride": 7_000, "window": w, "aggregates": aggs, "limit": 10000}),
        json!({"group_by": [bucket, rel], "stride": 50_000, "window": w, "aggregates": aggs, "limit": 10000}),
        json!({"group_by": [rel], "window": w, "aggregates": aggs, "limit": 10000}),
        json!({"group_by": [bucket], "stride": 3_000, "window": w, "aggregates": aggs, "limit": 10000}),
        json!({"group_by": [], "window": w, "aggregates": aggs}),
        json!({"group_by": [rel, bucket], "stride": 7_000, "window": w, "rel_types": ["R01", "R07"],
            "aggregates": [{"agg": "count"}], "limit": 10000}),
    ];
    let rows = plain_rows(&s);
    for args in &calls {
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        let want = o_aggregate(&rows, args).unwrap_or_else(|e| e);
        assert!(!canon(&got).contains("\"error\""), "{args} → {got}");
        assert_eq!(canon(&got), canon(&want), "{args}");
    }
}
