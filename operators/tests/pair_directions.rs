//! `aggregate_events` `pair_directions` (issue 21 item 2): on randomized stores, every pair's
//! per-direction counts, first/last times, initiator, reciprocity lag and property sum / last
//! value equal a brute force over the store's edge rows; calls without the new aggregate keep
//! their bytes; bad combinations are structured errors.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::OPEN_END;

use common::kit::Rng;

/// One event row of the store: (vt_s, eid, src, dst, props.w).
type Ev = (i64, String, String, String, Option<Value>);

fn random_store(r: &mut Rng) -> (tempfile::TempDir, tgms_engine::Store, Vec<Ev>) {
    let (d, mut s) = new_store();
    let uids = 2 + r.below(8);
    let n = 5 + r.below(120);
    let events: Vec<Value> = (0..n)
        .map(|_| {
            let mut e = json!({"src": format!("n{}", r.below(uids)), "dst": format!("n{}", r.below(uids)),
                "rel_type": "M", "vt_s": r.below(60)});
            match r.below(5) {
                0 => e["props"] = json!({"w": r.below(7) as i64 - 3}),
                1 => e["props"] = json!({"w": 0.25 * r.below(9) as f64}),
                2 => e["props"] = json!({"w": "x"}),
                3 => e["props"] = json!({"w": r.below(5)}),
                _ => {}
            }
            e
        })
        .collect();
    for (b, c) in events.chunks(40).enumerate() {
        s.write_at(
            1 + b as i64,
            ops(vec![json!({"op": "ingest_events", "events": c})]),
        )
        .unwrap();
    }
    let snap = s.snapshot();
    let rows: Vec<Ev> = snap
        .all_edges()
        .into_iter()
        .map(|e| tgms_engine::Version::Edge(e).to_json())
        .filter(|o| o["tt_e"] == OPEN_END)
        .map(|o| {
            (
                o["vt_s"].as_i64().unwrap(),
                o["eid"].as_str().unwrap().to_string(),
                o["src"].as_str().unwrap().to_string(),
                o["dst"].as_str().unwrap().to_string(),
                o["props"].get("w").cloned(),
            )
        })
        .collect();

    (d, s, rows)
}

fn num(v: &Option<Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

/// The brute force: rows in (src, dst) order with the columns of `pair_directions`.
fn oracle(rows: &[Ev], t_a: i64, t_b: i64, reciprocal: bool, prop: bool) -> (Vec<Value>, u64) {
    let pop: Vec<&Ev> = rows.iter().filter(|e| t_a <= e.0 && e.0 < t_b).collect();
    let directed: Vec<(&str, &str)> = pop.iter().map(|e| (e.2.as_str(), e.3.as_str())).collect();
    let pop: Vec<&Ev> = pop
        .into_iter()
        .filter(|e| !reciprocal || directed.contains(&(e.3.as_str(), e.2.as_str())))
        .collect();
    let mut pairs: BTreeMap<(String, String), Vec<&Ev>> = BTreeMap::new();
    for e in pop {
        let k = if e.2 <= e.3 {
            (e.2.clone(), e.3.clone())
        } else {
            (e.3.clone(), e.2.clone())
        };
        pairs.entry(k).or_default().push(e);
    }
    let mut out = Vec::new();
    let mut excluded = 0u64;
    for ((lo, hi), mut evs) in pairs {
        evs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let mut row = json!({"src": lo, "dst": hi, "count": evs.len()});
        let mut firsts = [None, None];
        for (d, name) in [(0, "lo_hi"), (1, "hi_lo")] {
            let mine: Vec<&&Ev> = evs
                .iter()
                .filter(|e| if d == 0 { e.2 == lo } else { e.2 != lo })
                .collect();
            firsts[d] = mine.first().map(|e| e.0);
            row[format!("{name}_count")] = json!(mine.len());
            row[format!("{name}_first_vt_s")] = json!(mine.first().map(|e| e.0));
            row[format!("{name}_last_vt_s")] = json!(mine.last().map(|e| e.0));
            if prop {
                let nums: Vec<&&&Ev> = mine.iter().filter(|e| num(&e.4).is_some()).collect();
                excluded += (mine.len() - nums.len()) as u64;
                let all_int = nums.iter().all(|e| e.4.as_ref().unwrap().is_i64());
                row[format!("{name}_sum_prop_w")] = if nums.is_empty() {
                    Value::Null
                } else if all_int {
                    json!(nums
                        .iter()
                        .map(|e| e.4.as_ref().unwrap().as_i64().unwrap())
                        .sum::<i64>())
                } else {
                    json!(nums.iter().map(|e| num(&e.4).unwrap()).sum::<f64>())
                };
                row[format!("{name}_last_prop_w")] =
                    nums.last().map_or(Value::Null, |e| e.4.clone().unwrap());
            }
        }
        row["initiator"] = json!(evs[0].2);
        row["reciprocity_lag_us"] = match firsts {
            [Some(a), Some(b)] => json!((a - b).abs()),
            _ => Value::Null,
        };
        out.push(row);
    }
    (out, excluded)
}

#[test]
fn pair_directions_match_a_brute_force_over_the_rows() {
    let mut r = Rng::new(0x7061_6972);
    let mut with_lag = 0;
    for case in 0..150 {
        let (_d, s, rows) = random_store(&mut r);
        let (t_a, t_b) = if r.below(3) == 0 {
            (0, 60)
        } else {
            let a = r.below(40) as i64;
            (a, a + 1 + r.below(40) as i64)
        };
        let reciprocal = r.below(2) == 0;
        let prop = r.below(2) == 0;
        let mut agg = json!({"agg": "pair_directions"});
        if prop {
            agg = json!({"agg": "pair_directions", "of": "prop", "prop": "w"});
        }
        let args = json!({"group_by": [{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}],
            "aggregates": [{"agg": "count"}, agg], "window": {"t_a": t_a, "t_b": t_b},
            "pair_mode": if reciprocal { "reciprocal" } else { "undirected" }, "limit": 10000});
        let got = call(&s, "aggregate_events", args.clone());
        let (want, excluded) = oracle(&rows, t_a, t_b, reciprocal, prop);
        let ctx = format!("case {case}: {args}");
        assert_eq!(canon(&got["rows"]), canon(&json!(want)), "{ctx}");
        if prop {
            assert_eq!(got["prop_coercion"], json!({"w": excluded}), "{ctx}");
        } else {
            assert!(got.get("prop_coercion").is_none(), "{ctx}");
        }
        with_lag += want
            .iter()
            .filter(|w| w["reciprocity_lag_us"].is_i64())
            .count();
    }
    assert!(with_lag > 100, "only {with_lag} pairs with a reply");
}

#[test]
fn calls_without_pair_directions_keep_their_bytes() {
    // The envelope of a pair_mode call without the new aggregate, pinned before the change
    // (TV9's store): neither its args_echo nor its payload move.
    let (_d, s) = tv9();
    let args = json!({"group_by": [{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}],
        "aggregates": [{"agg": "count"}], "window": {"t_a": 0, "t_b": 100}, "pair_mode": "undirected"});
    let got = call(&s, "aggregate_events", args);
    assert_eq!(
        got["args_echo"],
        json!({"aggregates": [{"agg": "count"}], "as_of_tt": OPEN_END, "cursor": null,
            "endpoint_filter": null, "group_by": [{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}],
            "limit": 100, "pair_mode": "undirected", "prop_filter": null, "rel_types": null,
            "stride": null, "window": {"t_a": 0, "t_b": 100}})
    );
    assert!(got["rows"][0].get("lo_hi_count").is_none());
}

#[test]
fn pair_directions_bad_input_is_a_structured_error() {
    let (_d, s) = tv9();
    let pairs = json!([{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}]);
    let w = json!({"t_a": 0, "t_b": 100});
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pairs, "aggregates": [{"agg": "pair_directions"}], "window": w}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG");
    assert_eq!(e["message"], "pair_directions requires pair_mode");
    assert_eq!(e["details"]["repair"]["pair_mode"], "undirected");
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pairs, "aggregates": [{"agg": "pair_directions", "of": "src"}],
            "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(e["message"], "pair_directions takes no 'of' or of 'prop'");
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pairs, "aggregates": [{"agg": "pair_directions", "of": "prop"}],
            "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(e["message"], "of='prop' requires prop");
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pairs, "aggregates": [{"agg": "pair_directions"},
            {"agg": "pair_directions", "of": "prop", "prop": "w"}], "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(e["message"], "duplicate aggregate output 'lo_hi_count'");
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pairs, "aggregates": [{"agg": "pair_directions", "span": 3}],
            "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(e["message"], "span is only valid for max_in_window");
}
