//! Edge predicates in the pattern operators (issue 21 item 3): on randomized stores,
//! `count_temporal_motifs`, `find_temporal_motif_instances`, `temporal_paths`,
//! `temporal_reachability` and `co_active` with `prop_filter` and/or `self_loops` equal the
//! spec's brute-force oracles run over the row list with every event the predicate rejects
//! made invisible (the predicate evaluated here, from `operators.md` §11, not by tgms), plus
//! `prop_coercion` counted here. Bad predicates are structured errors; calls without the new
//! arguments keep their `args_echo`; a `prop_filter` never lowers a cost estimate.

mod common;
use common::kit::*;
use common::patterns_oracle::*;
use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tgms_engine::Store;

/// A store of random writes (corrections, retractions, interval edges) plus event bursts
/// whose `w` property is an int, a float, a string, a boolean or absent.
fn store(r: &mut Rng) -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let n = r.int(1, 6) as usize;
    grow(&mut s, r, n);
    for _ in 0..r.int(2, 6) {
        let k = r.int(3, 14);
        let events: Vec<Value> = (0..k)
            .map(|_| {
                let t = r.int(0, 30);
                let mut ev = json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
                    "rel_type": r.pick(&RELS), "vt_s": t});
                if r.chance(35) {
                    ev["vt_e"] = json!(t + r.int(1, 40));
                }
                match r.below(6) {
                    0 | 1 => ev["props"] = json!({"w": r.int(-3, 4)}),
                    2 => ev["props"] = json!({"w": 0.5 * r.int(-4, 5) as f64}),
                    3 => ev["props"] = json!({"w": r.pick(&["x", "y", "é"])}),
                    4 => ev["props"] = json!({"w": r.chance(50)}),
                    _ => {}
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

/// Random predicate arguments (at least one of the two).
fn predicate(r: &mut Rng) -> Value {
    let mut p = json!({});
    let with_prop = r.chance(70);
    if with_prop {
        let value = match r.below(5) {
            0 | 1 => json!(r.int(-3, 4)),
            2 => json!(0.5 * r.int(-4, 5) as f64),
            3 => json!(r.pick(&["x", "y"])),
            _ => json!(r.chance(50)),
        };
        // `p` is the property of `kit::grow`'s edges: a second property name.
        let prop = if r.chance(85) { "w" } else { "p" };
        p["prop_filter"] = json!({"prop": prop,
            "cmp": r.pick(&["eq", "ne", "lt", "le", "gt", "ge"]), "value": value});
    }
    if !with_prop || r.chance(50) {
        p["self_loops"] = json!(r.pick(&["include", "exclude", "only"]));
    }
    p
}

/// §11 rule 1 and the self-loop rule, written here: `Some(keep)`, or `None` when the
/// property is absent or of another type class (coerced). Self loops are tested first.
fn verdict(row: &Row, pred: &Value) -> Option<bool> {
    let is_loop = row.src == row.dst;
    match pred["self_loops"].as_str() {
        Some("exclude") if is_loop => return Some(false),
        Some("only") if !is_loop => return Some(false),
        _ => {}
    }
    let pf = &pred["prop_filter"];
    if pf.is_null() {
        return Some(true);
    }
    let v = row.props.get(pf["prop"].as_str().unwrap())?;
    let lit = &pf["value"];
    use std::cmp::Ordering;
    // The values are small ints and halves: binary64 compares them exactly.
    let o: Ordering = match (v, lit) {
        (Value::Number(a), Value::Number(b)) => {
            a.as_f64().unwrap().partial_cmp(&b.as_f64().unwrap())?
        }
        (Value::String(a), Value::String(b)) => a.chars().cmp(b.chars()),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => return None,
    };
    Some(match pf["cmp"].as_str().unwrap() {
        "eq" => o.is_eq(),
        "ne" => o.is_ne(),
        "lt" => o.is_lt(),
        "le" => o.is_le(),
        "gt" => o.is_gt(),
        _ => o.is_ge(),
    })
}

/// The rows with every edge version the predicate does not keep made invisible (never
/// believed); node rows and uid registration are unchanged.
fn hide(rows: &[Row], pred: &Value) -> Vec<Row> {
    rows.iter()
        .cloned()
        .map(|mut r| {
            if !r.node && verdict(&r, pred) != Some(true) {
                r.tt_e = i64::MIN;
            }
            r
        })
        .collect()
}

fn merged(base: &Value, pred: &Value) -> Value {
    let mut a = base.clone();
    for (k, v) in pred.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}

/// The versions a call's predicate examines, for `prop_coercion`.
fn examined<'r>(op: &str, rows: &'r [Row], args: &Value) -> Vec<&'r Row> {
    let a = Q { args }.a();
    let edges = rows.iter().filter(move |r| !r.node && believed(r, a));
    match op {
        "temporal_reachability" => {
            let (ta, tb) = (
                args["window"]["t_a"].as_i64().unwrap(),
                args["window"]["t_b"].as_i64().unwrap(),
            );
            edges.filter(|r| r.vt_e > ta && r.vt_s < tb).collect()
        }
        "co_active" => {
            let f = |s: &str, k: &str| {
                args[s][k]
                    .as_str()
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
            };
            let mut seen = BTreeSet::new();
            edges
                .filter(|r| {
                    ["a_spec", "b_spec"].iter().any(|s| {
                        f(s, "src").is_none_or(|u| r.src == u)
                            && f(s, "dst").is_none_or(|u| r.dst == u)
                            && f(s, "rel_type").is_none_or(|u| r.rel == u)
                    })
                })
                .filter(|r| seen.insert(r.vid.clone()))
                .collect()
        }
        _ => {
            let (ta, tb) = (
                args["window"]["t_a"].as_i64().unwrap(),
                args["window"]["t_b"].as_i64().unwrap(),
            );
            let nf: Option<Vec<&str>> = args["node_filter"]
                .as_array()
                .map(|f| f.iter().map(|x| x.as_str().unwrap()).collect());
            edges
                .filter(|r| ta <= r.vt_s && r.vt_s < tb)
                .filter(|r| {
                    nf.as_ref()
                        .is_none_or(|f| f.contains(&r.src.as_str()) && f.contains(&r.dst.as_str()))
                })
                .collect()
        }
    }
}

fn window(r: &mut Rng) -> Value {
    let a = r.int(0, 25);
    json!({"t_a": a, "t_b": a + r.int(1, 40)})
}

fn motif_base(r: &mut Rng, with_all: bool) -> Value {
    let mut motifs: Vec<String> = [
        "M_2node_pingpong",
        "M_path_3",
        "M_star_out_3",
        "M_triangle_acyclic_1",
        "M_triangle_cyclic",
        "M_1_1",
        "M_5_1",
        "M_2_4",
        "M_3_6",
        "M_6_2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if with_all {
        motifs.push("all".into());
        motifs.push("all".into());
    }
    let m = motifs[r.below(motifs.len() as u64) as usize].clone();
    let mut a = json!({"motif": m, "delta": r.int(1, 30), "window": window(r),
        "tie_mode": r.pick(&["ordered", "strict"])});
    if r.chance(25) {
        a["node_filter"] = json!([r.pick(&UIDS[..4]), r.pick(&UIDS[..4]), r.pick(&UIDS[..4])]);
    }
    if !with_all {
        a["limit"] = json!(r.int(1, 8));
    }
    a
}

fn base_args(op: &str, r: &mut Rng) -> Value {
    match op {
        "temporal_reachability" => {
            let mut v = json!({"src": r.pick(&UIDS[..4]), "window": window(r),
                "direction": r.pick(&["out", "in", "both"])});
            if r.chance(30) {
                v["delta_max_wait"] = json!(r.int(1, 15));
            }
            v
        }
        "temporal_paths" => json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
            "window": window(r), "k": r.int(1, 6), "max_hops": r.int(1, 5)}),
        "count_temporal_motifs" => motif_base(r, true),
        "find_temporal_motif_instances" => motif_base(r, false),
        _ => {
            let spec = |r: &mut Rng| {
                let mut s = json!({});
                for k in ["src", "dst"] {
                    if r.chance(30) {
                        s[k] = json!(r.pick(&UIDS[..4]));
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
            if rel == "before" {
                ar["gap"] = json!(r.int(1, 30));
            }
            json!({"a_spec": a, "b_spec": b, "allen_relation": ar})
        }
    }
}

type Oracle = fn(&[Row], &Value) -> Result<Value, Value>;

const OPS: [(&str, Oracle); 5] = [
    ("count_temporal_motifs", o_count_motifs),
    ("find_temporal_motif_instances", o_find_motifs),
    ("temporal_paths", o_paths),
    ("temporal_reachability", o_reach),
    ("co_active", o_co_active),
];

#[test]
fn pattern_operators_with_predicates_match_the_oracles_over_the_visible_rows() {
    let mut r = Rng::new(0x7072_6564);
    // op → (cases, answered, non-empty, predicate changed the answer)
    let mut seen: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for store_no in 0..90 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        for (op, oracle) in OPS {
            for _ in 0..6 {
                let base = base_args(op, &mut r);
                let pred = predicate(&mut r);
                let args = merged(&base, &pred);
                let got = call(&s, op, args.clone());
                let hidden = hide(&rows, &pred);
                let want = match oracle(&hidden, &base) {
                    Ok(mut p) => {
                        let pf = &pred["prop_filter"];
                        if !pf.is_null() && op != "temporal_paths" {
                            let n = examined(op, &rows, &args)
                                .into_iter()
                                .filter(|row| verdict(row, &pred).is_none())
                                .count();
                            p["prop_coercion"] = json!({pf["prop"].as_str().unwrap(): n});
                        }
                        p
                    }
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
                    "store #{store_no}, {op} {args}"
                );
                let c = seen.entry(op).or_default();
                c[0] += 1;
                if got.get("error").is_none() {
                    c[1] += 1;
                    let n = got_cmp["rows_total"].as_i64().or(got_cmp["count"].as_i64());
                    if n.is_some_and(|n| n > 0) {
                        c[2] += 1;
                    }
                    let unfiltered = payload(&call(&s, op, base.clone()));
                    let key = if got_cmp.get("count").is_some() {
                        "count"
                    } else {
                        "rows_total"
                    };
                    if unfiltered[key] != got_cmp[key] {
                        c[3] += 1;
                    }
                }
            }
        }
    }
    for (op, [n, ok, found, changed]) in &seen {
        eprintln!(
            "{op}: {n} cases, {ok} answered, {found} non-empty, {changed} changed by the predicate"
        );
        assert!(*ok >= 300, "{op}: only {ok} answered");
        assert!(*found >= 40, "{op}: only {found} non-empty");
        assert!(
            *changed >= 40,
            "{op}: the predicate changed only {changed} answers"
        );
    }
}

#[test]
fn calls_without_predicates_keep_their_args_echo() {
    let mut r = Rng::new(0x6563_686f);
    let (_d, s) = store(&mut r);
    for (op, _) in OPS {
        let base = base_args(op, &mut r);
        let env = call(&s, op, base.clone());
        let echo = env["args_echo"]
            .as_object()
            .expect("envelope has args_echo");
        assert!(
            !echo.contains_key("prop_filter") && !echo.contains_key("self_loops"),
            "{op}: {echo:?}"
        );
        assert!(env.get("prop_coercion").is_none() && payload(&env).get("prop_coercion").is_none());
        // self_loops alone reads no property: no prop_coercion either.
        let env = call(&s, op, merged(&base, &json!({"self_loops": "exclude"})));
        assert!(payload(&env).get("prop_coercion").is_none(), "{op}: {env}");
    }
}

#[test]
fn bad_predicates_are_structured_errors() {
    let mut r = Rng::new(0x6261_6421);
    let (_d, s) = store(&mut r);
    for (op, _) in OPS {
        let base = base_args(op, &mut r);
        let cases = [
            (
                json!({"prop_filter": {"prop": "w", "cmp": "eq", "value": null}}),
                "E_INVALID_ARG",
                "prop_filter.value must be a number, string or boolean",
            ),
            (
                json!({"prop_filter": {"prop": "w", "cmp": "eq", "value": [1]}}),
                "E_INVALID_ARG",
                "prop_filter.value must be a number, string or boolean",
            ),
            (
                json!({"prop_filter": {"prop": "w", "cmp": "like", "value": 1}}),
                "E_SCHEMA",
                "cmp",
            ),
            (
                json!({"prop_filter": {"prop": "", "cmp": "eq", "value": 1}}),
                "E_SCHEMA",
                "prop",
            ),
            (
                json!({"prop_filter": {"prop": "w", "value": 1}}),
                "E_SCHEMA",
                "cmp",
            ),
            (json!({"prop_filter": "w > 1"}), "E_SCHEMA", "prop_filter"),
            (json!({"self_loops": "never"}), "E_SCHEMA", "self_loops"),
            (json!({"self_loops": true}), "E_SCHEMA", "self_loops"),
        ];
        for (pred, code, needle) in cases {
            let got = call(&s, op, merged(&base, &pred));
            assert_eq!(got["error"], code, "{op} {pred}: {got}");
            let text = canon(&got);
            assert!(text.contains(needle), "{op} {pred}: {text}");
        }
    }
}

#[test]
fn a_prop_filter_never_lowers_the_cost_estimate() {
    let mut r = Rng::new(0x636f_7374);
    let (_d, s) = store(&mut r);
    let snap = s.snapshot();
    let stats = snap.stats();
    for (op, _) in OPS {
        for _ in 0..20 {
            let base = base_args(op, &mut r);
            let with = merged(
                &base,
                &json!({"prop_filter": {"prop": "w", "cmp": "ge", "value": 0}}),
            );
            let est = |a: &Value| {
                let (spec, args) = tgms_operators::pipeline::prepare(op, a).unwrap();
                (spec.cost.unwrap())(&args, stats)
            };
            let (e0, e1) = (est(&base), est(&with));
            assert!(e1.rows_scanned_est >= e0.rows_scanned_est, "{op}");
            assert!(
                e1.expansions_est >= e0.expansions_est,
                "{op}: {e0:?} {e1:?}"
            );
            assert!(
                e1.time_est_ms.unwrap_or(0) >= e0.time_est_ms.unwrap_or(0),
                "{op}"
            );
            // self_loops alone is priced like the plain call.
            let loops = merged(&base, &json!({"self_loops": "exclude"}));
            assert_eq!(est(&loops), e0, "{op}");
        }
    }
}
