//! The plan IR of `plans-and-claims.md` §4.1: a JSON DAG of at most 12 steps with an answer
//! spec. [`Plan::from_json`] checks the plan JSON Schema (the §5.3 message of the first
//! violation) and the step-id pattern.

use crate::Error;
use serde_json::{json, Value};
use tgms_operators::schema;

/// `MAX_STEPS`.
pub const MAX_STEPS: usize = 12;

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The step id: `s` followed by digits (`s1`, `s12`); `validate_static` rejects
    /// duplicates.
    pub id: String,
    /// The operator the step calls (a registry name).
    pub op: String,
    /// The operator arguments as given: a JSON object, possibly holding `$ref` objects.
    pub args: Value,
    /// The explicit `depends_on` entries, then every other step of the plan that a `$ref`
    /// in `args` targets (inferred, issue 21 item 7), in first-reference order.
    pub depends_on: Vec<String>,
}

/// A plan that passed the schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The plan's `plan_id` (non-empty).
    pub plan_id: String,
    /// The natural-language question the plan answers, when given.
    pub question: Option<String>,
    /// The steps in the order given (1 to `MAX_STEPS` of them).
    pub steps: Vec<Step>,
    /// `answer_spec.kind`: one of `ANSWER_KINDS`.
    pub answer_kind: String,
    /// `answer_spec.from`: a step id, or a `$ref` path into a step's envelope.
    pub answer_from: String,
    /// The plan as given (for `plan_digest`).
    pub raw: Value,
}

/// The answer kinds.
pub const ANSWER_KINDS: [&str; 7] = [
    "count",
    "value",
    "entity_set",
    "interval",
    "series",
    "paths",
    "text",
];

/// The plan JSON Schema of §4.1 (the id pattern is checked separately).
pub fn plan_schema() -> Value {
    json!({
        "type": "object", "additionalProperties": false,
        "required": ["plan_id", "steps", "answer_spec"],
        "properties": {
            "plan_id": {"type": "string", "minLength": 1},
            "question": {"type": "string"},
            "steps": {"type": "array", "minItems": 1, "maxItems": MAX_STEPS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["id", "op", "args"],
                "properties": {
                    "id": {"type": "string"},
                    "op": {"type": "string", "minLength": 1},
                    "args": {"type": "object"},
                    "depends_on": {"type": "array", "items": {"type": "string"}}
                }
            }},
            "answer_spec": {"type": "object", "additionalProperties": false,
                "required": ["kind", "from"],
                "properties": {
                    "kind": {"type": "string", "enum": ANSWER_KINDS},
                    "from": {"type": "string"}
                }}
        }
    })
}

/// A schema failure: the message (without the `plan schema: ` prefix) and the instance path.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaError {
    /// The §5.3 message of the first violation, without the `plan schema: ` prefix.
    pub message: String,
    /// The JSON location of the violation: object keys and array indices from the root.
    pub path: Vec<Value>,
}

fn is_step_id(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('s') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

impl Plan {
    /// Checks the schema and builds the IR.
    pub fn from_json(v: &Value) -> Result<Plan, SchemaError> {
        let mut vs = Vec::new();
        let order = ["plan_id", "question", "steps", "answer_spec"];
        schema::validate(&plan_schema(), v, &mut Vec::new(), Some(&order), &mut vs);
        if let Some(e) = schema::first_violation(vs) {
            return Err(SchemaError {
                message: e.message,
                path: e.path,
            });
        }
        let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
        let mut steps = Vec::new();
        for (i, st) in v["steps"].as_array().into_iter().flatten().enumerate() {
            let id = s(&st["id"]);
            if !is_step_id(&id) {
                return Err(SchemaError {
                    message: format!(
                        "{} does not match '^s[0-9]+$'",
                        tgms_operators::json::render_str(&id)
                    ),
                    path: vec![json!("steps"), json!(i), json!("id")],
                });
            }
            steps.push(Step {
                id,
                op: s(&st["op"]),
                args: st["args"].clone(),
                depends_on: st
                    .get("depends_on")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(s).collect())
                    .unwrap_or_default(),
            });
        }
        // Infer dependencies from refs to steps of this plan. Refs to unknown steps are left
        // to the verifier, which names the existing steps in its repair.
        let ids: Vec<String> = steps.iter().map(|s| s.id.clone()).collect();
        for st in &mut steps {
            for r in crate::refpath::find_refs(&st.args) {
                if let Ok(rp) = r.parsed {
                    if ids.contains(&rp.step) && !st.depends_on.contains(&rp.step) {
                        st.depends_on.push(rp.step);
                    }
                }
            }
        }
        Ok(Plan {
            plan_id: s(&v["plan_id"]),
            question: v.get("question").and_then(Value::as_str).map(String::from),
            steps,
            answer_kind: s(&v["answer_spec"]["kind"]),
            answer_from: s(&v["answer_spec"]["from"]),
            raw: v.clone(),
        })
    }

    /// The step of `id`.
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The source step of `answer_spec.from` (§5 check 7): the first step whose id equals
    /// `from` or is followed in `from` by `.`.
    pub fn answer_source(&self) -> Option<&Step> {
        let f = &self.answer_from;
        self.steps.iter().find(|s| {
            f == &s.id || (f.starts_with(s.id.as_str()) && f[s.id.len()..].starts_with('.'))
        })
    }

    /// Kahn waves in plan order (D-E1): the execution order, and the steps that can never
    /// run (cycle members and steps depending on unknown ids or on them).
    pub fn run_order(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.steps.len();
        let mut done = vec![false; n];
        let mut order = Vec::new();
        loop {
            let wave: Vec<usize> = (0..n)
                .filter(|&i| {
                    !done[i]
                        && self.steps[i].depends_on.iter().all(|d| {
                            self.steps
                                .iter()
                                .position(|s| &s.id == d)
                                .is_some_and(|j| done[j])
                        })
                })
                .collect();
            if wave.is_empty() {
                break;
            }
            for &i in &wave {
                done[i] = true;
            }
            order.extend(wave);
        }
        let stuck = (0..n).filter(|&i| !done[i]).collect();
        (order, stuck)
    }

    /// Whether the dependency graph (restricted to known ids) has a cycle.
    pub fn has_cycle(&self) -> bool {
        let n = self.steps.len();
        let mut done = vec![false; n];
        let mut progress = true;
        while progress {
            progress = false;
            for i in 0..n {
                if done[i] {
                    continue;
                }
                let ready = self.steps[i].depends_on.iter().all(|d| {
                    match self.steps.iter().position(|s| &s.id == d) {
                        None => true,
                        Some(j) => done[j],
                    }
                });
                if ready {
                    done[i] = true;
                    progress = true;
                }
            }
        }
        done.iter().any(|d| !d)
    }
}

/// Parses plan text: JSON errors are [`Error::PlanNotJson`] (`E_SCHEMA`).
pub fn parse_plan_text(text: &str) -> crate::Result<Value> {
    tgms_engine::canon::parse(text).map_err(|e| Error::PlanNotJson {
        reason: e.to_string(),
    })
}
