//! The gaps the question bank found (issue 21): `aggregate_events` `sum`, `median` and
//! `quantile` of a numeric property, `compute` `compare` (a yes/no answer) and `compute`
//! `topk` with `ties: "include"` — each against a brute force over the store's rows or the
//! input list on randomized data, with their bad-input errors; calls without the new
//! arguments keep their bytes.

mod common;
use common::kit::Rng;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::OPEN_END;

/// One event row of the store: (vt_s, src, rel_type, props.w).
type Ev = (i64, String, String, Option<Value>);

/// A store of random events whose `w` is an int, a non-integral float, a string, a boolean
/// or missing.
fn random_store(r: &mut Rng) -> (tempfile::TempDir, tgms_engine::Store, Vec<Ev>) {
    let (d, mut s) = new_store();
    let uids = 1 + r.below(5);
    let n = 1 + r.below(80);
    let events: Vec<Value> = (0..n)
        .map(|_| {
            let mut e = json!({"src": format!("n{}", r.below(uids)), "dst": format!("n{}", r.below(uids)),
                "rel_type": if r.chance(50) { "M" } else { "R" }, "vt_s": r.below(60)});
            match r.below(6) {
                0 | 1 => e["props"] = json!({"w": r.below(21) as i64 - 10}),
                // Quarters off the integers: sums and midpoints stay exact in binary64, and
                // no float equals an int.
                2 => e["props"] = json!({"w": r.below(9) as f64 - 4.0 + 0.25 * (1 + r.below(3)) as f64}),
                3 => e["props"] = json!({"w": "x"}),
                4 => e["props"] = json!({"w": true}),
                _ => {}
            }
            e
        })
        .collect();
    for (b, c) in events.chunks(30).enumerate() {
        s.write_at(
            1 + b as i64,
            ops(vec![json!({"op": "ingest_events", "events": c})]),
        )
        .unwrap();
    }
    let rows: Vec<Ev> = s
        .snapshot()
        .all_edges()
        .into_iter()
        .map(|e| tgms_engine::Version::Edge(e).to_json())
        .filter(|o| o["tt_e"] == OPEN_END)
        .map(|o| {
            (
                o["vt_s"].as_i64().unwrap(),
                o["src"].as_str().unwrap().to_string(),
                o["rel_type"].as_str().unwrap().to_string(),
                o["props"].get("w").cloned(),
            )
        })
        .collect();
    (d, s, rows)
}

/// A numeric value: exact int or float.
#[derive(Clone, Copy, Debug, PartialEq)]
enum N {
    I(i64),
    F(f64),
}

impl N {
    fn f(self) -> f64 {
        match self {
            N::I(i) => i as f64,
            N::F(x) => x,
        }
    }
    fn json(self) -> Value {
        match self {
            N::I(i) => json!(i),
            // Operator output floats are rounded to 9 decimals (`round9`, operators.md §1.3).
            N::F(x) => tgms_operators::json::float(tgms_operators::json::round9(x).unwrap()),
        }
    }
}

fn n_of(v: &Option<Value>) -> Option<N> {
    match v {
        Some(Value::Number(n)) => Some(match n.as_i64() {
            Some(i) if !n.to_string().contains('.') => N::I(i),
            _ => N::F(n.as_f64().unwrap()),
        }),
        _ => None,
    }
}

/// The brute-force statistic `agg` of `vals` (null when empty); `q = qn / qd` exactly.
fn stat(agg: &str, (qn, qd): (u64, u64), vals: &[N]) -> Value {
    if vals.is_empty() {
        return Value::Null;
    }
    let mut s = vals.to_vec();
    s.sort_by(|a, b| a.f().partial_cmp(&b.f()).unwrap());
    let all_int = s.iter().all(|v| matches!(v, N::I(_)));
    let n = s.len();
    match agg {
        "sum" if all_int => json!(s.iter().map(|v| v.f() as i64).sum::<i64>()),
        "sum" => N::F(s.iter().map(|v| v.f()).sum()).json(),
        "median" if n % 2 == 1 => s[n / 2].json(),
        "median" => match (s[n / 2 - 1], s[n / 2]) {
            (N::I(a), N::I(b)) if (a + b) % 2 == 0 => json!((a + b) / 2),
            (a, b) => N::F((a.f() + b.f()) / 2.0).json(),
        },
        _ => {
            // h = q·(n−1) = hn / qd, exactly.
            let hn = qn * (n as u64 - 1);
            let lo = (hn / qd) as usize;
            if hn.is_multiple_of(qd) {
                s[lo].json()
            } else {
                let frac = (hn % qd) as f64 / qd as f64;
                N::F(s[lo].f() + frac * (s[lo + 1].f() - s[lo].f())).json()
            }
        }
    }
}

#[test]
fn sum_median_and_quantile_of_a_prop_equal_the_brute_force() {
    let mut r = Rng::new(0x5355_4d51);
    let mut nonnull = 0;
    for case in 0..300 {
        let (_d, s, rows) = random_store(&mut r);
        let (ta, tb) = (r.int(0, 30), r.int(31, 70));
        let agg = ["sum", "median", "quantile"][r.below(3) as usize];
        let (q, qr) = [
            (json!(0.0), (0, 1)),
            (json!(0.1), (1, 10)),
            (json!(0.25), (25, 100)),
            (json!(0.5), (5, 10)),
            (json!(0.9), (9, 10)),
            (json!(0.95), (95, 100)),
            (json!(1), (1, 1)),
        ][r.below(7) as usize]
            .clone();
        let mut a = json!({"agg": agg, "of": "prop", "prop": "w"});
        let col = if agg == "quantile" {
            a["q"] = json!(q);
            format!("quantile_{}_prop_w", canon(&q).replace('.', "_"))
        } else {
            format!("{agg}_prop_w")
        };
        let dim = ["none", "src", "rel_type"][r.below(3) as usize];
        let group_by = match dim {
            "none" => json!([]),
            "src" => json!([{"dim": "endpoint", "role": "src"}]),
            _ => json!([{"dim": "rel_type"}]),
        };
        let args = json!({"group_by": group_by, "aggregates": [{"agg": "count"}, a],
            "window": {"t_a": ta, "t_b": tb}});
        let mut groups: BTreeMap<String, Vec<&Ev>> = BTreeMap::new();
        for e in rows.iter().filter(|e| ta <= e.0 && e.0 < tb) {
            let k = match dim {
                "src" => e.1.clone(),
                "rel_type" => e.2.clone(),
                _ => String::new(),
            };
            groups.entry(k).or_default().push(e);
        }
        if dim == "none" && groups.is_empty() {
            groups.insert(String::new(), Vec::new());
        }
        let mut excluded = 0u64;
        let want_rows: Vec<Value> = groups
            .iter()
            .map(|(k, evs)| {
                let vals: Vec<N> = evs.iter().filter_map(|e| n_of(&e.3)).collect();
                excluded += (evs.len() - vals.len()) as u64;
                let mut row = json!({"count": evs.len()});
                row[&col] = stat(agg, qr, &vals);
                nonnull += usize::from(!row[&col].is_null());
                match dim {
                    "src" => row["src"] = json!(k),
                    "rel_type" => row["rel_type"] = json!(k),
                    _ => {}
                }
                row
            })
            .collect();
        let got = payload(&call(&s, "aggregate_events", args.clone()));
        assert_eq!(
            canon(&got["rows"]),
            canon(&json!(want_rows)),
            "case {case}: {args}"
        );
        assert_eq!(
            got["prop_coercion"],
            json!({"w": excluded}),
            "case {case}: {args}"
        );
    }
    assert!(nonnull >= 300, "only {nonnull} non-null statistics");
}

#[test]
fn aggregate_bad_inputs_are_structured_errors() {
    let (_d, s) = new_store();
    let w = json!({"t_a": 0, "t_b": 10});
    for (agg, msg) in [
        (json!({"agg": "sum"}), "sum requires of 'prop'"),
        (
            json!({"agg": "median", "of": "vt_s"}),
            "median requires of 'prop'",
        ),
        (
            json!({"agg": "quantile", "of": "prop", "prop": "w"}),
            "quantile requires q",
        ),
        (
            json!({"agg": "median", "of": "prop", "prop": "w", "q": 0.5}),
            "q is only valid for quantile",
        ),
        (
            json!({"agg": "sum", "of": "prop"}),
            "of='prop' requires prop",
        ),
    ] {
        let e = call(
            &s,
            "aggregate_events",
            json!({"group_by": [], "aggregates": [agg], "window": w}),
        );
        assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
        assert!(canon(&e).contains(msg), "{msg}: {e}");
    }
    // q outside [0, 1] is a schema error naming the bound.
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "quantile", "of": "prop", "prop": "w", "q": 1.5}], "window": w}),
    );
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
    // Two quantiles with different q are two columns; the same q twice is a duplicate.
    let two = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "quantile", "of": "prop", "prop": "w", "q": 0.25},
            {"agg": "quantile", "of": "prop", "prop": "w", "q": 0.75}], "window": w}),
    );
    let row = &payload(&two)["rows"][0];
    assert!(row.get("quantile_0_25_prop_w").is_some(), "{two}");
    assert!(row.get("quantile_0_75_prop_w").is_some(), "{two}");
    let dup = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "sum", "of": "prop", "prop": "w"},
            {"agg": "sum", "of": "prop", "prop": "w"}], "window": w}),
    );
    assert!(
        canon(&dup).contains("duplicate aggregate output 'sum_prop_w'"),
        "{dup}"
    );
}

/// A `compute` call (it never reads the store: one empty store serves every call).
fn compute(args: Value) -> Value {
    thread_local! {
        static STORE: (tempfile::TempDir, tgms_engine::Store) = new_store();
    }
    STORE.with(|(_d, s)| call(s, "compute", args))
}

#[test]
fn compare_answers_yes_or_no_like_the_numbers_do() {
    let mut r = Rng::new(0xC0_4D_A2);
    let mut yes = 0;
    for _ in 0..2000 {
        let mk = |r: &mut Rng| -> (Value, f64) {
            if r.chance(60) {
                let i = r.int(-3, 3);
                (json!(i), i as f64)
            } else {
                let x = r.int(-6, 6) as f64 / 2.0;
                (json!(x), x)
            }
        };
        let ((x, xf), (y, yf)) = (mk(&mut r), mk(&mut r));
        let cmp = ["eq", "ne", "lt", "le", "gt", "ge"][r.below(6) as usize];
        let want = match cmp {
            "eq" => xf == yf,
            "ne" => xf != yf,
            "lt" => xf < yf,
            "le" => xf <= yf,
            "gt" => xf > yf,
            _ => xf >= yf,
        };
        yes += usize::from(want);
        let got = payload(&compute(
            json!({"fn": "compare", "x": x, "y": y, "cmp": cmp}),
        ));
        assert_eq!(got["value"], json!(want), "{x} {cmp} {y}");
    }
    assert!((600..1400).contains(&yes), "{yes} yes answers of 2000");
    // Exact integers beyond binary64 compare exactly.
    let got = payload(&compute(
        json!({"fn": "compare", "x": 9007199254740993i64, "y": 9007199254740992i64, "cmp": "gt"}),
    ));
    assert_eq!(got["value"], json!(true));
}

#[test]
fn compare_bad_inputs_are_structured_errors() {
    for (args, code, msg) in [
        (
            json!({"fn": "compare", "x": 1, "cmp": "lt"}),
            "E_INVALID_ARG",
            "compare requires x and y",
        ),
        (
            json!({"fn": "compare", "x": 1, "y": 2}),
            "E_INVALID_ARG",
            "compare requires cmp one of eq, ne, lt, le, gt, ge",
        ),
        (
            json!({"fn": "compare", "x": 1, "y": 2, "cmp": "contains"}),
            "E_INVALID_ARG",
            "compare requires cmp one of eq, ne, lt, le, gt, ge (got 'contains')",
        ),
        (
            json!({"fn": "compare", "x": "1", "y": 2, "cmp": "eq"}),
            "E_SCHEMA",
            "x",
        ),
        (
            json!({"fn": "compare", "x": 1, "y": 2, "cmp": "<"}),
            "E_SCHEMA",
            "cmp",
        ),
    ] {
        let e = compute(args.clone());
        assert_eq!(e["error"], code, "{args}: {e}");
        assert!(canon(&e).contains(msg), "{args}: {e}");
    }
    let e = compute(json!({"fn": "compare", "x": 1, "y": 2}));
    assert_eq!(e["details"]["repair"]["cmp"][0], "eq", "{e}");
}

/// The brute force of `topk` with ties included: every row whose value reaches the k-th
/// value (top) or does not exceed the k-th lowest (bottom).
fn topk_with_ties(rows: &[Value], k: usize, top: bool) -> (Vec<i64>, usize) {
    let mut vals: Vec<i64> = rows.iter().map(|r| r["v"].as_i64().unwrap()).collect();
    vals.sort_unstable();
    if !top {
        vals.reverse();
    }
    // `vals` now runs from the worst to the best for this side.
    let n = vals.len();
    let kth = vals[n - k.min(n)];
    let mut kept: Vec<i64> = rows
        .iter()
        .map(|r| r["v"].as_i64().unwrap())
        .filter(|&v| if top { v >= kth } else { v <= kth })
        .collect();
    kept.sort_unstable();
    let extra = kept.len() - k.min(n);
    (kept, extra)
}

#[test]
fn topk_with_ties_included_returns_every_tied_row() {
    let mut r = Rng::new(0x7135);
    let mut widened = 0;
    for case in 0..500 {
        let n = 1 + r.below(20) as usize;
        let rows: Vec<Value> = (0..n).map(|i| json!({"id": i, "v": r.int(0, 4)})).collect();
        let k = 1 + r.below(n as u64 + 2) as usize;
        let top = r.chance(50);
        let side = if top { "top" } else { "bottom" };
        let args = json!({"fn": "topk", "input": rows, "field": "v", "k": k, "side": side, "ties": "include"});
        let got = payload(&compute(args.clone()));
        let (want, extra) = topk_with_ties(&rows, k, top);
        let mut vals: Vec<i64> = got["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["v"].as_i64().unwrap())
            .collect();
        // Order: descending for the top, ascending for the bottom.
        let mut sorted = vals.clone();
        sorted.sort_unstable();
        if top {
            sorted.reverse();
        }
        assert_eq!(vals, sorted, "case {case}: order {args}");
        vals.sort_unstable();
        assert_eq!(vals, want, "case {case}: {args}");
        assert_eq!(got["ties_included"], json!(extra), "case {case}: {args}");
        widened += usize::from(extra > 0);
        // Without ties (or with ties: break), exactly min(k, n) rows, the old bytes.
        let mut plain = args.clone();
        plain.as_object_mut().unwrap().remove("ties");
        let old = payload(&compute(plain.clone()));
        assert!(old.get("ties_included").is_none(), "{old}");
        assert_eq!(old["rows"].as_array().unwrap().len(), k.min(n));
        plain["ties"] = json!("break");
        assert_eq!(payload(&compute(plain))["rows"], old["rows"], "case {case}");
    }
    assert!(widened >= 100, "only {widened} cases with ties");
}

#[test]
fn ties_outside_topk_is_an_error() {
    let e = compute(json!({"fn": "count", "input": [1, 2], "ties": "include"}));
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert!(canon(&e).contains("ties is only valid for topk"), "{e}");
    let e = compute(json!({"fn": "topk", "input": [], "field": "v", "k": 1, "ties": "all"}));
    assert_eq!(e["error"], "E_SCHEMA", "{e}");
}
