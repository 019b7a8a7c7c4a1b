//! Property tests: random well-formed plans never make the verifier, the executor or the
//! claim verifier panic, and runs are deterministic; random byte strings as plans are
//! parse or schema errors.

mod common;
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use tgms_verifier::claims::{mechanical_answer, Ctx};
use tgms_verifier::exec::ResultStore;
use tgms_verifier::plan::parse_plan_text;
use tgms_verifier::validate::{validate_static, Options};

const OPS: [&str; 6] = [
    "entity_history",
    "version_history",
    "state_at",
    "snapshot_subgraph",
    "diff_snapshots",
    "nope",
];
const UIDS: [&str; 4] = ["a", "b", "c", "zz"];
const REFS: [&str; 8] = [
    "rows[0].uid",
    "rows[*].uid",
    "rows_total",
    "nodes[0].uid",
    "rows[3].src",
    "nodes",
    "bogus.x",
    "rows[0]",
];

fn arg_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0usize..4).prop_map(|i| json!(UIDS[i])),
        (-5i64..120).prop_map(|n| json!(n)),
        Just(json!(null)),
        Just(json!(true)),
        (0i64..120, 0i64..120).prop_map(|(a, b)| json!({"t_a": a, "t_b": b})),
        (0usize..4).prop_map(|i| json!([UIDS[i]])),
    ]
}

fn step_strategy(i: usize) -> impl Strategy<Value = Value> {
    let names = [
        "uid",
        "seeds",
        "t_valid",
        "at",
        "t1",
        "t2",
        "window",
        "limit",
        "hops",
        "as_of_tt",
        "include_edges",
        "belief",
        "extra",
    ];
    (
        0usize..OPS.len(),
        prop::collection::vec((0usize..names.len(), arg_value()), 0..5),
        prop::option::of((0usize..8, 0usize..REFS.len(), 0usize..names.len())),
        prop::collection::vec(0usize..8, 0..3),
    )
        .prop_map(move |(op, args, r, deps)| {
            let mut m = serde_json::Map::new();
            for (k, v) in args {
                m.insert(names[k].to_string(), v);
            }
            if let Some((t, p, k)) = r {
                m.insert(
                    names[k].to_string(),
                    json!({"$ref": format!("s{}.{}", t + 1, REFS[p])}),
                );
            }
            let deps: Vec<String> = deps
                .into_iter()
                .map(|d| format!("s{}", d + 1))
                .filter(|d| *d != format!("s{}", i + 1))
                .collect();
            json!({"id": format!("s{}", i + 1), "op": OPS[op], "args": m, "depends_on": deps})
        })
}

fn plan_strategy() -> impl Strategy<Value = Value> {
    (1usize..6)
        .prop_flat_map(|n| ((0..n).map(step_strategy).collect::<Vec<_>>(), 0..n, 0usize..REFS.len(), any::<bool>()))
        .prop_map(|(steps, src, r, bare)| {
            let from = if bare { format!("s{}", src + 1) } else { format!("s{}.{}", src + 1, REFS[r]) };
            json!({"plan_id": "p", "steps": steps, "answer_spec": {"kind": "entity_set", "from": from}})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_plans_never_panic_and_rerun_identically(p in plan_strategy()) {
        let (_d, s) = tv8();
        let set: std::collections::BTreeSet<String> = ["a".to_string()].into();
        let r = validate_static(&p, &Options { stats: Some(s.stats()), task_input_uids: Some(&set), ..Options::default() });
        let _ = r.to_json();
        let rs = ResultStore::memory();
        let t1 = run(&s, &p, &rs).trace;
        let t2 = run(&s, &p, &ResultStore::memory()).trace;
        prop_assert_eq!(&t1["trace_id"], &t2["trace_id"]);
        let from = p["answer_spec"]["from"].as_str().unwrap();
        let ans = mechanical_answer("entity_set", from, &t1);
        let ctx = Ctx { trace: &t1, results: &rs, snap: Some(s.snapshot()), honor_truncation: true };
        let out = tgms_verifier::claims::verify(&ctx, &ans);
        prop_assert_eq!(&out["schema_valid"], &json!(true));
        let _ = tgms_verifier::claims::gate(&ctx, &ans);
    }

    #[test]
    fn random_bytes_are_parse_or_schema_errors(b in prop::collection::vec(any::<u8>(), 0..64)) {
        let text = String::from_utf8_lossy(&b);
        match parse_plan_text(&text) {
            Err(m) => prop_assert!(m.to_string().starts_with("plan is not valid JSON")),
            Ok(v) => {
                let r = validate_static(&v, &Options::default());
                prop_assert!(!r.valid());
                prop_assert!(r.violations[0].message.starts_with("plan schema: "));
            }
        }
    }

    #[test]
    fn random_answer_objects_never_panic_the_claim_verifier(
        claims in prop::collection::vec((0usize..5, arg_value(), prop::option::of(0usize..REFS.len()),
            prop::collection::vec(0usize..6, 0..3), arg_value(), arg_value(), any::<bool>()), 0..6),
        text in "[a-z0-9 ,.]{0,40}",
    ) {
        let (_d, s) = tv8();
        let p = plan(&[("s1", "snapshot_subgraph", json!({"seeds": ["a"], "hops": 1, "t_valid": 30, "limit": 1}), &[]),
            ("s2", "entity_history", json!({"uid": "a"}), &[])], "count", "s1.rows_total");
        let rs = ResultStore::memory();
        let t = run(&s, &p, &rs).trace;
        let types = ["count", "value", "entity", "ordering", "temporal_pattern"];
        let cs: Vec<Value> = claims.into_iter().enumerate().map(|(i, (ty, v, from, ev, a, b, complete))| {
            let mut c = json!({"id": format!("c{i}"), "type": types[ty], "value": if v.is_array() { json!(null) } else { v.clone() },
                "evidence": ev.iter().map(|e| format!("s{e}")).collect::<Vec<_>>(),
                "a": a, "b": b, "relation": "before", "interval": {"t_a": 1, "t_b": 5}, "assertion": "trend",
                "uids": ["a", "b"], "complete": complete});
            if let Some(f) = from {
                c["from"] = json!(format!("s1.{}", REFS[f]));
            }
            if !c["a"].is_object() { c["a"] = json!({"t": 1}); }
            if !c["b"].is_object() { c["b"] = json!({"t": 2}); }
            c
        }).collect();
        let ans = json!({"text": text, "claims": cs});
        let ctx = Ctx { trace: &t, results: &rs, snap: Some(s.snapshot()), honor_truncation: true };
        let out = tgms_verifier::claims::verify(&ctx, &ans);
        let _ = tgms_verifier::claims::gate(&ctx, &ans);
        prop_assert!(out.get("metrics").is_some());
    }

    #[test]
    fn random_ref_strings_parse_or_fail_cleanly(s in "[s0-9a-z_.\\[\\]*]{0,16}") {
        if let Ok(p) = tgms_verifier::refpath::RefPath::parse(&s) {
            prop_assert!(!p.segments.is_empty());
            let _ = p.eval(&json!({"rows": [{"uid": "a"}], "x": 1}));
        }
    }
}
