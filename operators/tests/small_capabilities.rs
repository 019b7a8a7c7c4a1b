//! Smaller capabilities of issue 21 item 5, each against a brute force over the store's rows
//! on randomized stores: the two-event δ-motif `M_2event_reciprocal` of
//! `count_temporal_motifs` (u→v then v→u within δ; `"all"` keeps its 36 keys; equal to
//! `match_pattern`'s embeddings of A→B, B→A), and in `aggregate_events` the `min_gap`
//! aggregate (shortest time between two consecutive events of a group), grouping by an
//! account in either role, and the sliding-window distinct count `max_distinct_in_window`;
//! plus their bad-input errors.
mod common;
use common::kit::*;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::Store;

fn store(r: &mut Rng) -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let n = r.int(1, 5) as usize;
    grow(&mut s, r, n);
    for _ in 0..r.int(2, 6) {
        let k = r.int(3, 15);
        let events: Vec<Value> = (0..k)
            .map(|_| {
                let t = r.int(0, 30);
                json!({"src": r.pick(&UIDS[..4]), "dst": r.pick(&UIDS[..4]),
                    "rel_type": r.pick(&RELS), "vt_s": t})
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

/// Believed edge versions starting in `[ta, tb)`, in `(vt_s, eid)` order.
fn events(rows: &[Row], ta: i64, tb: i64) -> Vec<&Row> {
    let a = tgms_engine::OPEN_END - 1;
    let mut ev: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && ta <= r.vt_s && r.vt_s < tb)
        .collect();
    ev.sort_by(|x, y| (x.vt_s, &x.eid).cmp(&(y.vt_s, &y.eid)));
    ev
}

#[test]
fn the_reciprocal_two_event_motif_equals_the_brute_force() {
    let mut r = Rng::new(0x7265_6369);
    let (mut cases, mut positive) = (0, 0);
    for _ in 0..120 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        for _ in 0..5 {
            let ta = r.int(0, 20);
            let tb = ta + r.int(1, 40);
            let delta = r.int(1, 25);
            let strict = r.chance(50);
            let mut args = json!({"motif": "M_2event_reciprocal", "delta": delta,
                "window": {"t_a": ta, "t_b": tb}, "tie_mode": if strict { "strict" } else { "ordered" }});
            let mut ev = events(&rows, ta, tb);
            if r.chance(25) {
                let f = [r.pick(&UIDS[..4]), r.pick(&UIDS[..4]), r.pick(&UIDS[..4])];
                let f: Vec<&str> = f.into_iter().filter(|u| registered(&rows, u)).collect();
                ev.retain(|e| f.contains(&e.src.as_str()) && f.contains(&e.dst.as_str()));
                args["node_filter"] = json!(f);
            }
            let mut want = 0u64;
            for i in 0..ev.len() {
                for j in i + 1..ev.len() {
                    let (a, b) = (ev[i], ev[j]);
                    if a.src != a.dst
                        && a.src == b.dst
                        && a.dst == b.src
                        && b.vt_s - a.vt_s <= delta
                        && (!strict || a.vt_s < b.vt_s)
                    {
                        want += 1;
                    }
                }
            }
            let got = payload(&call(&s, "count_temporal_motifs", args.clone()));
            assert_eq!(
                canon(&got),
                canon(&json!({"count": want, "n_events_in_window": ev.len(), "truncated": false})),
                "{args}"
            );
            // The same pairs as match_pattern's embeddings of A→B, B→A (ordered, within δ).
            let mut mp = json!({"edges": [{"src": "A", "dst": "B"}, {"src": "B", "dst": "A"}],
                "time_order": if strict { "strict" } else { "ordered" }, "delta": delta,
                "window": {"t_a": ta, "t_b": tb}, "limit": 1});
            if let Some(f) = args.get("node_filter") {
                mp["node_filter"] = f.clone();
            }
            let m = payload(&call(&s, "match_pattern", mp));
            assert_eq!(m["n_embeddings"], json!(want), "{args}");
            cases += 1;
            positive += usize::from(want > 0);
        }
    }
    assert!(positive >= 100, "{positive} of {cases} cases non-zero");
}

#[test]
fn all_keeps_its_36_counts_and_find_instances_does_not_take_the_two_event_motif() {
    let mut r = Rng::new(3);
    let (_d, s) = store(&mut r);
    let got = payload(&call(
        &s,
        "count_temporal_motifs",
        json!({"motif": "all", "delta": 10, "window": {"t_a": 0, "t_b": 60}}),
    ));
    let keys: Vec<&String> = got["counts"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 36);
    assert!(keys.iter().all(|k| k.starts_with("M_") && k.len() == 5));
    let e = call(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "M_2event_reciprocal", "delta": 10, "window": {"t_a": 0, "t_b": 60}}),
    );
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
}

#[test]
fn min_gap_equals_the_brute_force() {
    let mut r = Rng::new(0x6d69_6e67);
    let mut non_null = 0;
    for _ in 0..80 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        let ta = r.int(0, 20);
        let tb = ta + r.int(1, 40);
        let role = r.pick(&["src", "dst"]);
        let args = json!({"group_by": [{"dim": "endpoint", "role": role}],
            "aggregates": [{"agg": "min_gap"}, {"agg": "max_gap"}, {"agg": "count"}],
            "window": {"t_a": ta, "t_b": tb}, "limit": 1000});
        let mut by: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for e in events(&rows, ta, tb) {
            let k = if role == "src" { &e.src } else { &e.dst };
            by.entry(k.clone()).or_default().push(e.vt_s);
        }
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        let got_rows = got["rows"].as_array().unwrap();
        assert_eq!(got_rows.len(), by.len(), "{args}: {got}");
        for (row, (uid, mut ts)) in got_rows.iter().zip(by) {
            ts.sort();
            let gaps: Vec<i64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
            assert_eq!(row[role], json!(uid), "{args}");
            assert_eq!(row["count"], json!(ts.len()), "{args}");
            assert_eq!(row["min_gap"], json!(gaps.iter().min()), "{args} {uid}");
            assert_eq!(row["max_gap"], json!(gaps.iter().max()), "{args} {uid}");
            non_null += usize::from(!gaps.is_empty());
        }
    }
    assert!(non_null >= 100, "only {non_null} groups with a gap");
}

#[test]
fn min_gap_takes_no_of() {
    let mut r = Rng::new(5);
    let (_d, s) = store(&mut r);
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "min_gap", "of": "vt_s"}], "window": {"t_a": 0, "t_b": 60}}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert!(canon(&e).contains("min_gap takes no 'of'"), "{e}");
}

#[test]
fn grouping_by_an_account_in_either_role_equals_the_brute_force() {
    let mut r = Rng::new(0x6569_7468);
    let mut two_roles = 0;
    for _ in 0..80 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        let ta = r.int(0, 20);
        let tb = ta + r.int(1, 40);
        let with_rel = r.chance(40);
        let mut group_by = vec![json!({"dim": "endpoint", "role": "either"})];
        if with_rel {
            group_by.push(json!({"dim": "rel_type"}));
        }
        let args = json!({"group_by": group_by,
            "aggregates": [{"agg": "count"}, {"agg": "min_gap"}, {"agg": "max_gap"}, {"agg": "count_distinct", "of": "src"}],
            "window": {"t_a": ta, "t_b": tb}, "limit": 1000});
        // (uid, rel or "") → (times, sources); an event joins each distinct endpoint's group.
        type Acc = (Vec<i64>, std::collections::BTreeSet<String>);
        let mut by: BTreeMap<(String, String), Acc> = BTreeMap::new();
        for e in events(&rows, ta, tb) {
            let mut ends = vec![e.src.clone()];
            if e.dst != e.src {
                ends.push(e.dst.clone());
            }
            for u in ends {
                let rel = if with_rel {
                    e.rel.clone()
                } else {
                    String::new()
                };
                let acc = by.entry((u, rel)).or_default();
                acc.0.push(e.vt_s);
                acc.1.insert(e.src.clone());
            }
        }
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        let got_rows = got["rows"].as_array().unwrap();
        assert_eq!(got_rows.len(), by.len(), "{args}: {got}");
        for (row, ((uid, rel), (mut ts, srcs))) in got_rows.iter().zip(by) {
            ts.sort();
            let gaps: Vec<i64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
            assert_eq!(row["uid"], json!(uid), "{args}");
            if with_rel {
                assert_eq!(row["rel_type"], json!(rel), "{args}");
            }
            assert_eq!(row["count"], json!(ts.len()), "{args} {uid}");
            assert_eq!(row["min_gap"], json!(gaps.iter().min()), "{args} {uid}");
            assert_eq!(row["max_gap"], json!(gaps.iter().max()), "{args} {uid}");
            assert_eq!(row["distinct_src"], json!(srcs.len()), "{args} {uid}");
            two_roles += usize::from(srcs.iter().any(|x| *x != uid) && srcs.contains(&uid));
        }
    }
    assert!(
        two_roles >= 50,
        "only {two_roles} accounts seen in both roles"
    );
}

#[test]
fn role_either_is_only_for_endpoint() {
    let mut r = Rng::new(6);
    let (_d, s) = store(&mut r);
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [{"dim": "label", "role": "either"}], "aggregates": [{"agg": "count"}], "window": {"t_a": 0, "t_b": 60}}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert!(
        canon(&e).contains("role either is only valid for endpoint"),
        "{e}"
    );
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [{"dim": "endpoint", "role": "either"}, {"dim": "endpoint", "role": "dst"}],
            "aggregates": [{"agg": "count"}], "window": {"t_a": 0, "t_b": 60}, "pair_mode": "undirected"}),
    );
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
}

#[test]
fn max_distinct_in_window_equals_the_brute_force() {
    let mut r = Rng::new(0x736c_6964);
    let mut above_one = 0;
    for _ in 0..80 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        let ta = r.int(0, 20);
        let tb = ta + r.int(1, 40);
        let span = r.int(1, 20);
        let (role, of) = if r.chance(50) {
            ("src", "dst")
        } else {
            ("dst", "src")
        };
        let mut args = json!({"group_by": [{"dim": "endpoint", "role": role}],
            "aggregates": [{"agg": "max_distinct_in_window", "of": of, "span": span}],
            "window": {"t_a": ta, "t_b": tb}, "limit": 1000});
        let rel = if r.chance(30) {
            Some(r.pick(&RELS))
        } else {
            None
        };
        if let Some(x) = rel {
            // Not the plain path: the rel_type restriction builds the event list.
            args["rel_types"] = json!([x]);
        }
        let mut by: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
        for e in events(&rows, ta, tb)
            .into_iter()
            .filter(|e| rel.is_none_or(|x| e.rel == x))
        {
            let (k, o) = if role == "src" {
                (&e.src, &e.dst)
            } else {
                (&e.dst, &e.src)
            };
            by.entry(k.clone()).or_default().push((e.vt_s, o.clone()));
        }
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        let got_rows = got["rows"].as_array().unwrap();
        assert_eq!(got_rows.len(), by.len(), "{args}: {got}");
        let col = format!("max_distinct_{of}_in_window");
        for (row, (uid, evs)) in got_rows.iter().zip(by) {
            let best = evs
                .iter()
                .map(|(t0, _)| {
                    evs.iter()
                        .filter(|(t, _)| *t0 <= *t && *t < t0 + span)
                        .map(|(_, o)| o.as_str())
                        .collect::<std::collections::BTreeSet<_>>()
                        .len()
                })
                .max()
                .unwrap();
            assert_eq!(row[role], json!(uid), "{args}");
            assert_eq!(row[&col], json!(best), "{args} {uid}");
            above_one += usize::from(best > 1);
        }
    }
    assert!(above_one >= 50, "only {above_one} groups above one");
}

#[test]
fn max_distinct_in_window_needs_span_and_of() {
    let mut r = Rng::new(8);
    let (_d, s) = store(&mut r);
    let w = json!({"t_a": 0, "t_b": 60});
    for (agg, msg) in [
        (
            json!({"agg": "max_distinct_in_window", "of": "dst"}),
            "max_distinct_in_window requires span",
        ),
        (
            json!({"agg": "max_distinct_in_window", "span": 5}),
            "max_distinct_in_window requires of 'src' or 'dst'",
        ),
        (
            json!({"agg": "max_distinct_in_window", "of": "vt_s", "span": 5}),
            "max_distinct_in_window requires of 'src' or 'dst'",
        ),
        (
            json!({"agg": "count", "span": 5}),
            "span is only valid for max_in_window",
        ),
    ] {
        let e = call(
            &s,
            "aggregate_events",
            json!({"group_by": [], "aggregates": [agg], "window": w}),
        );
        assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
        assert!(canon(&e).contains(msg), "{e}");
    }
}

/// Three grouping dimensions: `[time_bucket, endpoint src, endpoint dst]` and
/// `[rel_type, endpoint dst, calendar hour]` (any order), plain and with `pair_mode`
/// (day × pair), against a brute force; rows in the order of the key tuple.
#[test]
fn three_grouping_dimensions_equal_the_brute_force() {
    let mut r = Rng::new(0x0003_d135);
    let mut multi = 0;
    for _ in 0..80 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        let ta = r.int(0, 10);
        let tb = ta + r.int(5, 40);
        let stride = r.int(2, 12);
        let fold = r.chance(50);
        let bucket = json!({"dim": "time_bucket"});
        let (src, dst) = (
            json!({"dim": "endpoint", "role": "src"}),
            json!({"dim": "endpoint", "role": "dst"}),
        );
        // (dims, the key of an event as sortable strings/ints).
        let dims: Vec<Value> = match (fold, r.below(3)) {
            (true, 0) => vec![bucket, src, dst],
            (true, 1) => vec![src, dst, bucket],
            (true, _) => vec![json!({"dim": "rel_type"}), src, dst],
            (false, 0) => vec![bucket, json!({"dim": "rel_type"}), dst],
            (false, 1) => vec![dst, bucket, src],
            (false, _) => vec![
                json!({"dim": "rel_type"}),
                src,
                json!({"dim": "calendar_unit", "unit": "hour_of_day"}),
            ],
        };
        let mut args = json!({"group_by": dims, "aggregates": [{"agg": "count"}, {"agg": "max", "of": "vt_s"}],
            "window": {"t_a": ta, "t_b": tb}, "limit": 1000});
        if dims.iter().any(|d| d["dim"] == "time_bucket") {
            args["stride"] = json!(stride);
        }
        if fold {
            args["pair_mode"] = json!("undirected");
        }
        // The brute force: key parts as (int, string) per dimension, in dimension order.
        let mut want: BTreeMap<Vec<(i64, String)>, (u64, i64)> = BTreeMap::new();
        for e in events(&rows, ta, tb) {
            let (mut a, mut b) = (e.src.clone(), e.dst.clone());
            if fold && b < a {
                std::mem::swap(&mut a, &mut b);
            }
            let key: Vec<(i64, String)> = dims
                .iter()
                .map(|d| match (d["dim"].as_str().unwrap(), d["role"].as_str()) {
                    ("time_bucket", _) => ((e.vt_s - ta) / stride, String::new()),
                    ("calendar_unit", _) => (e.vt_s.div_euclid(3_600_000_000) % 24, String::new()),
                    ("rel_type", _) => (0, e.rel.clone()),
                    (_, Some("src")) => (0, a.clone()),
                    _ => (0, b.clone()),
                })
                .collect();
            let g = want.entry(key).or_insert((0, i64::MIN));
            g.0 += 1;
            g.1 = g.1.max(e.vt_s);
        }
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        let got_rows = got["rows"].as_array().unwrap();
        assert_eq!(got_rows.len(), want.len(), "{args}: {got}");
        for (row, (key, (n, max))) in got_rows.iter().zip(&want) {
            for (d, (i, sv)) in dims.iter().zip(key) {
                match (d["dim"].as_str().unwrap(), d["role"].as_str()) {
                    ("time_bucket", _) => {
                        assert_eq!(row["t_a"], json!(ta + i * stride), "{args}: {row}")
                    }
                    ("calendar_unit", _) => assert_eq!(row["hour_of_day"], json!(i), "{args}"),
                    ("rel_type", _) => assert_eq!(row["rel_type"], json!(sv), "{args}"),
                    (_, Some(role)) => assert_eq!(row[role], json!(sv), "{args}: {row}"),
                    _ => unreachable!(),
                }
            }
            assert_eq!(row["count"], json!(n), "{args}: {row}");
            assert_eq!(row["max_vt_s"], json!(max), "{args}: {row}");
        }
        multi += usize::from(want.len() > 2);
    }
    assert!(multi >= 40, "only {multi} calls with more than two groups");
}
