//! `compute` additions of issue 21 item 7: scalar `abs`/`add`/`sub`/`mul`/`div`, `join` on
//! non-unique keys with a declared `cardinality`, each against a brute force on random
//! inputs, and their bad inputs as structured errors.

mod common;
use common::*;
use serde_json::{json, Value};

use common::kit::Rng;

thread_local! {
    /// One empty store for every call (`compute` never reads it).
    static STORE: (tempfile::TempDir, tgms_engine::Store) = new_store();
}

fn compute(args: Value) -> Value {
    let env = STORE.with(|(_, s)| call(s, "compute", args));
    if env.get("error").is_some() {
        return env;
    }
    payload(&env)
}

#[test]
fn scalar_arithmetic_matches_exact_and_binary64_arithmetic() {
    let mut r = Rng::new(11);
    for _ in 0..400 {
        let xi = r.below(2_000_001) as i64 - 1_000_000;
        let yi = r.below(2_001) as i64 - 1_000;
        let xf = xi as f64 / 8.0;
        let ints = r.below(2) == 0;
        let (x, y) = if ints {
            (json!(xi), json!(yi))
        } else {
            (json!(xf), json!(yi))
        };
        let v = |f: &str| compute(json!({"fn": f, "x": x, "y": y}))["value"].clone();
        let a = |f: &str| compute(json!({"fn": f, "x": x}))["value"].clone();
        if ints {
            assert_eq!(v("add"), json!(xi + yi));
            assert_eq!(v("sub"), json!(xi - yi));
            assert_eq!(v("mul"), json!(xi * yi));
            assert_eq!(a("abs"), json!(xi.abs()));
            if yi != 0 {
                // An exact quotient stays an int; otherwise the correctly rounded float.
                if xi % yi == 0 {
                    assert_eq!(v("div"), json!(xi / yi));
                } else {
                    assert_eq!(
                        v("div").as_f64().unwrap(),
                        (xi as f64 / yi as f64 * 1e9).round() / 1e9
                    );
                }
            }
        } else {
            // xf has at most 3 fraction bits: these are exact in binary64.
            assert_eq!(v("add").as_f64().unwrap(), xf + yi as f64);
            assert_eq!(v("sub").as_f64().unwrap(), xf - yi as f64);
            assert_eq!(v("mul").as_f64().unwrap(), xf * yi as f64);
            assert_eq!(a("abs").as_f64().unwrap(), xf.abs());
            assert!(a("abs").is_f64(), "a float stays a float");
        }
    }
    // Bad inputs.
    let e = compute(json!({"fn": "div", "x": 1, "y": 0}));
    assert_eq!(
        (e["error"].as_str(), e["message"].as_str()),
        (Some("E_INVALID_ARG"), Some("division by zero"))
    );
    assert_eq!(
        compute(json!({"fn": "add", "x": 1}))["message"],
        "add requires x and y"
    );
    assert_eq!(compute(json!({"fn": "abs"}))["message"], "abs requires x");
    assert_eq!(
        compute(json!({"fn": "abs", "x": true}))["error"],
        "E_SCHEMA"
    );
    assert_eq!(
        compute(json!({"fn": "abs", "x": -170141183460469231731687303715884105728i128}))["message"],
        "integer out of supported range"
    );
    assert_eq!(
        compute(json!({"fn": "mul", "x": 1, "y": 2, "group_by": "g"}))["message"],
        "group_by is only supported for count, sum, min, max, mean, median, topk"
    );
}

#[test]
fn join_with_a_declared_cardinality_is_the_product_of_matching_rows() {
    let mut r = Rng::new(12);
    let cards = ["one_to_one", "many_to_one", "one_to_many", "many_to_many"];
    let mut ran = 0;
    for _ in 0..400 {
        let card = cards[r.below(4) as usize];
        let left_many = card.starts_with("many");
        let right_many = card.ends_with("many");
        let keys = 1 + r.below(6);
        let gen = |r: &mut Rng, n: u64, side: &str| -> Vec<Value> {
            (0..n)
                .map(|i| json!({"k": r.below(keys), side: i}))
                .collect()
        };
        let (nl, nr) = (r.below(8), r.below(8));
        let left = gen(&mut r, nl, "l");
        let right = gen(&mut r, nr, "r");
        let how = if r.below(2) == 0 { "inner" } else { "left" };
        let got = compute(
            json!({"fn": "join", "input": left, "other": right, "on": "k",
            "how": how, "cardinality": card, "limit": 10000}),
        );
        let dup = |rows: &[Value]| {
            let mut ks: Vec<u64> = rows.iter().map(|x| x["k"].as_u64().unwrap()).collect();
            ks.sort();
            ks.windows(2).any(|w| w[0] == w[1])
        };
        if (!right_many && dup(&right)) || (!left_many && dup(&left)) {
            assert_eq!(got["error"], "E_INVALID_ARG", "{card}: {got}");
            assert!(got["message"]
                .as_str()
                .unwrap()
                .starts_with("join: duplicate key "));
            assert!(got["details"]["repair"]["cardinality"].is_string());
            continue;
        }
        ran += 1;
        // Brute force: left rows by key (stable), each with every matching right row in order.
        let mut ls = left.clone();
        ls.sort_by_key(|x| x["k"].as_u64().unwrap());
        let mut want = Vec::new();
        for l in &ls {
            let ms: Vec<&Value> = right.iter().filter(|x| x["k"] == l["k"]).collect();
            if ms.is_empty() {
                if how == "left" && !right.is_empty() {
                    want.push(json!({"k": l["k"], "l": l["l"], "r_k": null, "r_r": null}));
                } else if how == "left" {
                    want.push(json!({"k": l["k"], "l": l["l"], "r_k": null}));
                }
            }
            for m in ms {
                want.push(json!({"k": l["k"], "l": l["l"], "r_k": m["k"], "r_r": m["r"]}));
            }
        }
        assert_eq!(
            canon(&got["rows"]),
            canon(&json!(want)),
            "{card} {how}\n{left:?}\n{right:?}"
        );
    }
    assert!(ran > 150, "only {ran} joins ran");
    // Without a declared cardinality duplicates are refused, naming the declaration to add.
    let e = compute(
        json!({"fn": "join", "input": [{"k": 1}], "other": [{"k": 1}, {"k": 1}], "on": "k"}),
    );
    assert_eq!(e["message"], "join: duplicate key 1 in other");
    assert_eq!(e["details"]["repair"]["cardinality"], "one_to_many");
    let e = compute(
        json!({"fn": "join", "input": [{"k": 1}, {"k": 1}], "other": [{"k": 1}], "on": "k"}),
    );
    assert_eq!(e["message"], "join: duplicate key 1 in input");
    assert_eq!(e["details"]["repair"]["cardinality"], "many_to_one");
    let e =
        compute(json!({"fn": "join", "input": [], "other": [], "on": "k", "cardinality": "many"}));
    assert_eq!(e["error"], "E_SCHEMA");
}

#[test]
fn a_call_without_cardinality_echoes_no_cardinality() {
    // The new argument has no default, so existing calls keep their args_echo bytes.
    let (_d, s) = new_store();
    let env = call(&s, "compute", json!({"fn": "count", "input": [1, 2]}));
    assert!(env["args_echo"].get("cardinality").is_none());
    assert_eq!(env["value"], 2);
}
