//! The incident and state-at-T regression datasets: shipped file, TV20 digests, evaluations.

use tgms_bench::scenarios::*;

#[test]
fn shipped_incident_log_is_the_generated_one() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../datasets/incident-checkout.eventlog.jsonl"
    );
    if std::env::var_os("TGMS_UPDATE_DATASETS").is_some() {
        std::fs::write(path, incident_log()).unwrap();
    }
    let shipped = std::fs::read_to_string(path).expect("datasets/incident-checkout.eventlog.jsonl");
    assert_eq!(shipped, incident_log());
}

#[test]
fn shipped_state_regression_log_is_the_generated_one() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../datasets/state-regression.eventlog.jsonl"
    );
    if std::env::var_os("TGMS_UPDATE_DATASETS").is_some() {
        std::fs::write(path, state_regression_log()).unwrap();
    }
    let shipped = std::fs::read_to_string(path).expect("datasets/state-regression.eventlog.jsonl");
    assert_eq!(shipped, state_regression_log());
}

#[test]
fn incident_store_digest_and_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let st = build_store(&dir.path().join("s"), &incident_log()).unwrap();
    let s = st.stats();
    assert_eq!(
        (s.n_entities, s.n_node_versions, s.n_edge_versions),
        (7, 7, 12)
    );
    assert_eq!(st.digest(), INCIDENT_DIGEST);
    let r = eval_incident(&st).unwrap();
    for c in &r.checks {
        assert!(c.ok, "{c:?}");
    }
    assert_eq!(r.answer, "instance:m5.xlarge");
    assert_eq!(r.naive_answer, "instance:t3.large");
    assert_eq!(r.audit.len(), 7);
}

#[test]
fn state_regression_digest_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let st = build_store(&dir.path().join("s"), &state_regression_log()).unwrap();
    let s = st.stats();
    assert_eq!(
        (s.n_entities, s.n_node_versions, s.n_edge_versions),
        (30, 30, 108)
    );
    assert_eq!(st.digest(), STATE_REGRESSION_DIGEST);
    let r = eval_state_regression(&st).unwrap();
    assert_eq!(
        r.state_at,
        vec![(36, 36), (36, 36), (36, 36), (9, 9)],
        "{:?}",
        r.failures
    );
    assert_eq!(r.naive, vec![(0, 36), (36, 36), (36, 36), (0, 9)]);
    assert_eq!(
        r.valid_time_only,
        vec![(36, 36), (36, 36), (36, 36), (0, 9)]
    );
    assert!(r.ok());
}

#[test]
fn incident_plan_steps_of_registered_operators_validate() {
    let plan = incident_plan();
    let steps = plan["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(plan["answer_spec"]["from"], "s2.rows[0].dst");
    // Fully literal step arguments are schema-checked here; arguments with a `$ref` are the
    // static verifier's business (they are typed only after resolution).
    fn has_ref(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
            serde_json::Value::Array(a) => a.iter().any(has_ref),
            _ => false,
        }
    }
    let mut literal = 0;
    for s in steps {
        let op = s["op"].as_str().unwrap();
        assert!(tgms_operators::lookup(op).is_some(), "{op} is registered");
        if !has_ref(&s["args"]) {
            tgms_operators::pipeline::prepare(op, &s["args"]).unwrap();
            literal += 1;
        }
    }
    assert!(
        literal >= 2,
        "the state_at and version_history steps are literal"
    );
}
