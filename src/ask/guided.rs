//! The plan schema sent to the model for guided decoding (`--guided`): the verifier's plan
//! schema with the step ids, the operator names and the `depends_on` entries as enums.
//!
//! Why not the verifier's schema itself: the servers' schema-to-grammar converters differ in
//! what they enforce, and llama.cpp's ignores `pattern` (a real 135M model emitted step ids
//! such as `'n1.rows'` and `'3687941200000000'` under it; see bench/RESULTS.md). Every
//! converter enforces `enum`, so the ids `s1`..`s12` and the registry's operator names are
//! spelled out. The schema only narrows what the model can emit; validation still runs the
//! verifier's own schema and checks on every reply, guided or not.

use serde_json::{json, Value};
use tgms_verifier::plan::{plan_schema, MAX_STEPS};

/// The guided-decoding plan schema (see the module docs).
pub fn guided_plan_schema() -> Value {
    let mut schema = plan_schema();
    let ids: Vec<String> = (1..=MAX_STEPS).map(|i| format!("s{i}")).collect();
    let ops = tgms_operators::registry::names();
    let step = &mut schema["properties"]["steps"]["items"]["properties"];
    step["id"] = json!({"type": "string", "enum": ids});
    step["op"] = json!({"type": "string", "enum": ops});
    step["depends_on"] = json!({"type": "array", "items": {"type": "string", "enum": ids}});
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violations(schema: &Value, v: &Value) -> Vec<String> {
        let mut out = Vec::new();
        tgms_operators::schema::validate(schema, v, &mut Vec::new(), None, &mut out);
        out.into_iter().map(|v| v.message).collect()
    }

    #[test]
    fn the_guided_schema_narrows_ids_and_ops_and_admits_every_valid_plan() {
        let s = guided_plan_schema();
        let step = &s["properties"]["steps"]["items"]["properties"];
        assert_eq!(
            step["id"]["enum"],
            json!(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12"])
        );
        let ops = step["op"]["enum"].as_array().unwrap();
        assert_eq!(ops.len(), 19, "the 19 operators");
        assert!(ops.contains(&json!("compute")) && ops.contains(&json!("entity_history")));
        // It never excludes a valid plan: the planner's few-shot plans and the reference
        // plans of the real-model benchmark's questions all pass it.
        let mut plans: Vec<Value> = crate::ask::prompt::fewshot_examples()
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        let bench: Value =
            serde_json::from_str(include_str!("../../bench/llm/questions.json")).unwrap();
        plans.extend(bench.as_array().unwrap().iter().map(|q| q["plan"].clone()));
        assert_eq!(plans.len(), 16);
        for p in &plans {
            assert_eq!(violations(&s, p), Vec::<String>::new(), "{p}");
        }
        // And it rejects what the real model emitted under the verifier's schema.
        for (field, bad) in [
            ("id", "n1.rows"),
            ("id", "3687941200000000"),
            ("op", "reach"),
        ] {
            let mut p = plans[0].clone();
            p["steps"][0][field] = json!(bad);
            assert!(!violations(&s, &p).is_empty(), "{field} = {bad}");
            assert_eq!(violations(&plan_schema(), &p), Vec::<String>::new());
        }
    }
}
