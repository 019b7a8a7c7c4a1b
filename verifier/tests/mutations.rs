//! The mutation experiment (`evaluation.md` §4) on a small pool built over a store with
//! microsecond timestamps and two batches: 100 % detection for the required classes and no
//! false positives on clean answers.

mod common;
use common::*;
use serde_json::json;
use tgms_verifier::mutations::{
    builtin_plans, builtin_plans_over, run, suite_plans, CLASSES, EXTENDED_ENTITIES,
};

fn store() -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    let t0 = 1_700_000_000_000_000i64;
    let ev = |a: &str, b: &str, k: i64| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t0 + k * 1_000_000});
    s.write_at(1, ops(vec![json!({"op": "ingest_events", "events": [ev("a","b",1), ev("b","c",2), ev("c","d",3), ev("a","c",4), ev("d","a",5), ev("e","a",6)]})])).unwrap();
    s.write_at(2, ops(vec![json!({"op": "ingest_events", "events": [ev("a","f",7), ev("f","g",8), ev("g","a",9), ev("b","e",10)]})])).unwrap();
    (d, s)
}

#[test]
fn mutation_classes_are_detected_without_false_positives() {
    let (_d, s) = store();
    let plans = builtin_plans(s.snapshot());
    assert!(!plans.is_empty());
    let r = run(s.snapshot(), &plans, true);
    let j = r.to_json();
    eprintln!("{}", r.table());
    assert!(r.clean >= 10, "{j}");
    assert_eq!(r.false_positives, 0);
    let names: Vec<&str> = r.classes.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, CLASSES);
    let mut required = vec![
        "count_pm1",
        "fabricated_entity",
        "uncited_entity",
        "ordering_swap",
        "interval_units",
        "wrong_belief_state",
        "entity_dropped",
        "ordering_invert",
        "interval_shift",
    ];
    // Every mis-citation the generator makes cites a step that lacks an atom of the claim;
    // the verifier catches each (the old generator also cited steps that back the claim).
    required.push("wrong_step_citation");
    required.push("truncated_count");
    required.push("invented_field");
    required.push("approximate_as_exact");
    for (c, n, d) in &r.classes {
        if required.contains(&c.as_str()) {
            assert!(*n > 0, "class {c} has no cases: {j}");
            assert_eq!(n, d, "class {c}: {d}/{n} detected");
        }
    }
    // The ablations replay the same mutants: taint ignored misses every truncated count,
    // output contracts off miss every invented field; neither adds false positives.
    let names: Vec<&str> = r.ablations.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(names, ["taint_ignored", "contracts_off"]);
    for (name, fp, classes) in &r.ablations {
        assert_eq!(*fp, 0, "{name}");
        for ((c, n, d), (fc, fnn, fd)) in classes.iter().zip(&r.classes) {
            assert_eq!((c, n), (fc, fnn), "{name}: same mutants");
            let missed_by_design = (name == "taint_ignored" && c == "truncated_count")
                || (name == "contracts_off" && c == "invented_field");
            if missed_by_design {
                assert_eq!(*d, 0, "{name} must miss every {c} mutant: {j}");
            } else {
                assert_eq!(
                    d, fd,
                    "{name} / {c}: the ablation changes nothing else here"
                );
            }
        }
    }
    let wsc = r
        .classes
        .iter()
        .find(|c| c.0 == "wrong_step_citation")
        .unwrap();
    assert!(wsc.1 > 0, "{j}");
    // Deterministic.
    assert_eq!(run(s.snapshot(), &plans, true).to_json(), j);
    assert_eq!(
        j["classes"][0],
        json!({"class": "count_pm1", "cases": r.classes[0].1, "detected": r.classes[0].2})
    );
}

#[test]
fn suite_oracle_plans_are_read_from_dev_and_test() {
    let p = json!({"plan_id": "x-0", "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": "a"}}], "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
    let suite =
        json!({"dev": [{"id": "t1", "oracle_plan": p}], "test": [{"id": "t2", "oracle_plan": p}]});
    assert_eq!(suite_plans(&suite).len(), 2);
    let (_d, s) = store();
    let r = run(s.snapshot(), &suite_plans(&suite), false);
    assert_eq!(r.clean, 2);
    assert_eq!(r.pool, "classic");
}

#[test]
fn classic_pool_spreads_500_mutants_over_applicable_classes() {
    let (_d, s) = store();
    let r = run(s.snapshot(), &builtin_plans(s.snapshot()), false);
    let total: usize = r.classes.iter().map(|c| c.1).sum();
    assert!(total > 0 && total <= 500, "{}", r.table());
    assert_eq!(r.false_positives, 0);
    for (c, n, d) in &r.classes {
        if c != "wrong_step_citation" {
            assert_eq!(n, d, "class {c}: {d}/{n}");
        }
    }
}

/// The table over a real store and suite (`TGMS_MUT_STORE`, `TGMS_MUT_SUITE`; e.g. the
/// CollegeMsg suite of `docs/eval.md`): at least 100 mutants in every class that the pool
/// allows, every mutant detected by the full verifier, no false positive, and each ablation
/// missing its class. Long (25 min of a loaded 2-core VM): `--ignored`.
#[test]
#[ignore]
fn real_suite_table_detects_every_mutant() {
    let (Ok(store), Ok(suite)) = (
        std::env::var("TGMS_MUT_STORE"),
        std::env::var("TGMS_MUT_SUITE"),
    ) else {
        panic!("set TGMS_MUT_STORE and TGMS_MUT_SUITE");
    };
    let s = tgms_engine::Store::open_read_only(std::path::Path::new(&store)).unwrap();
    let suite: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(suite).unwrap()).unwrap();
    let mut plans = suite_plans(&suite);
    plans.extend(builtin_plans_over(s.snapshot(), EXTENDED_ENTITIES));
    let r = run(s.snapshot(), &plans, true);
    eprintln!("{}", r.table());
    assert_eq!(r.false_positives, 0);
    for (c, n, d) in &r.classes {
        // Below 100 on CollegeMsg (docs/eval.md): `wrong_belief_state` (the suite corrects 8
        // entities), `truncated_count` (cheap steps with more than 3 rows) and
        // `wrong_step_citation` (steps lacking an atom of the claim). Each still needs cases.
        if [
            "wrong_belief_state",
            "truncated_count",
            "wrong_step_citation",
        ]
        .contains(&c.as_str())
        {
            assert!(*n > 0, "class {c}: no mutants");
        } else {
            assert!(*n >= 100, "class {c}: {n} mutants");
        }
        assert_eq!(n, d, "class {c}: {d}/{n} detected");
    }
    for (name, fp, classes) in &r.ablations {
        assert_eq!(*fp, 0, "{name}");
        for (c, n, d) in classes {
            if (name == "taint_ignored" && c == "truncated_count")
                || (name == "contracts_off" && c == "invented_field")
            {
                assert_eq!(*d, 0, "{name} must miss every {c} mutant");
            } else {
                assert_eq!(n, d, "{name} / {c}");
            }
        }
    }
}
