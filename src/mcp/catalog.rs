//! What the server lists: one tool per operator generated from the registry (real argument
//! schema as `inputSchema`, the envelope schema as `outputSchema`), the six plan-level
//! tools, the two resources and the two resource templates (agent-surface §9.1–§9.3).
//! Order is deterministic: operators sorted by name, then the plan tools in the order of
//! [`PLAN_TOOLS`].

use super::backend::{ASK_TOOL, PLAN_TOOLS, RESULT_PREFIX, TRACE_PREFIX};
use serde_json::{json, Value};
use tgms_operators::tools::{tool, ToolFormat};

const PLAN_SCHEMA_NOTE: &str = "A plan object {\"plan_id\", \"question\"?, \"steps\": [{\"id\", \"op\", \"args\", \"depends_on\"}], \"answer_spec\": {\"kind\", \"from\"}} (see the tgms://manual resource), or JSON text of one.";

fn plan_prop() -> Value {
    json!({"type": ["object", "string"], "description": PLAN_SCHEMA_NOTE})
}

fn uids_prop() -> Value {
    json!({"type": ["array", "null"], "items": {"type": "string"},
        "description": "The uids the question names (the only literal uids the plan may use). Null or absent: the registered uids that occur in the plan's question; no grounding check when the plan has no question."})
}

fn hex_prop(what: &str) -> Value {
    json!({"type": "string", "pattern": "^[0-9a-f]{64}$", "description": what})
}

/// The definition of one plan-level tool (MCP shape).
fn plan_tool(name: &str) -> Value {
    let (desc, props, required): (&str, Value, Vec<&str>) = match name {
        "validate_plan" => (
            "Statically verify a plan against the operator contracts and this store without running it. Returns {valid, violations}; each violation names the step, the problem and a concrete repair.",
            json!({"plan": plan_prop(), "task_input_uids": uids_prop()}),
            vec!["plan"],
        ),
        "run_plan" => (
            "Verify and execute a plan on one snapshot of the store. Invalid plans return {valid: false, violations}. Valid plans return {valid: true, plan_id, trace_id, ok, answer, answer_error, answer_complete, trace}; with report: true also the mechanical answer object (claims backed by the trace) and its verification. The trace is kept: verify_answer, get_trace and tgms://trace/{trace_id} find it.",
            json!({"plan": plan_prop(), "task_input_uids": uids_prop(),
                "report": {"type": "boolean", "default": false,
                    "description": "Also return the mechanical answer object and its claim verification."}}),
            vec!["plan"],
        ),
        "verify_answer" => (
            "Check every claim of an answer object against a stored trace (no trace, no claim). Returns each claim's verdict and reason, the metrics, and gated_answer_object: the answer with every unsupported claim removed.",
            json!({"trace_id": hex_prop("The trace_id run_plan returned."),
                "answer_object": {"type": ["object", "string"],
                    "description": "{\"text\", \"claims\": [{\"id\", \"type\", ..., \"evidence\": [step ids]}]} as in the tgms://manual resource."}}),
            vec!["trace_id", "answer_object"],
        ),
        "get_trace" => (
            "The stored trace of a plan run: every step with its resolved args, status, result digest, evidence and taint, and the answer.",
            json!({"trace_id": hex_prop("The trace_id run_plan returned.")}),
            vec!["trace_id"],
        ),
        "get_result" => (
            "The stored envelope of an operator call or plan step, by its result_digest.",
            json!({"result_digest": hex_prop("The result_digest of an envelope.")}),
            vec!["result_digest"],
        ),
        _ => (
            "The dataset card: valid-time extent (µs and ISO-8601 UTC), counts, rel types, the transaction-time range with batch counts, and the text that explains the store's two clocks. Read it before choosing windows or as_of_tt.",
            json!({}),
            vec![],
        ),
    };
    json!({"name": name, "description": desc,
        "inputSchema": {"type": "object", "properties": props, "required": required,
            "additionalProperties": false},
        "annotations": {"readOnlyHint": true, "openWorldHint": false}})
}

/// The `ask` tool's definition (offered only when a model is configured).
fn ask_tool() -> Value {
    json!({"name": ASK_TOOL,
        "description": "Ask a question in plain words: tgms's agent loop has the configured model write a plan, verifies and runs it, has the answer written, and removes every claim and sentence the trace does not support. Returns the gated answer object, the final plan, its trace_id (get_trace finds it) and the ask id.",
        "inputSchema": {"type": "object", "additionalProperties": false, "required": ["question"],
            "properties": {"question": {"type": "string"}, "task_input_uids": uids_prop(),
                "as_of_tt": {"type": ["integer", "string", "null"],
                    "pattern": tgms_operators::timeparse::TIME_PATTERN,
                    "description": "Answer as the store believed at this transaction time (µs since 1970 UTC, or ISO-8601 such as \"2004-07-22T21:28:00Z\")."}}},
        "annotations": {"readOnlyHint": true, "openWorldHint": true}})
}

/// Every tool definition, in listing order, as MCP JSON: the operators, the plan tools,
/// then `ask` when `with_ask`.
pub fn tools_json(with_ask: bool) -> Vec<Value> {
    let mut out: Vec<Value> = tgms_operators::registry()
        .iter()
        .map(|s| {
            let mut t = tool(s, ToolFormat::Mcp);
            t["annotations"] = json!({"readOnlyHint": true, "openWorldHint": false});
            t
        })
        .collect();
    out.extend(PLAN_TOOLS.iter().map(|n| plan_tool(n)));
    if with_ask {
        out.push(ask_tool());
    }
    out
}

/// The resources (MCP JSON).
pub fn resources_json() -> Vec<Value> {
    vec![
        json!({"uri": super::backend::CARD_URI, "name": "dataset-card", "title": "Dataset card",
            "mimeType": "application/json",
            "description": "Extent, counts, rel types, transaction-time range and the two-clocks text of this store."}),
        json!({"uri": super::backend::MANUAL_URI, "name": "manual", "title": "Operator manual",
            "mimeType": "text/markdown",
            "description": "The planner's operator manual, generated from the operator registry."}),
    ]
}

/// The resource templates (MCP JSON).
pub fn resource_templates_json() -> Vec<Value> {
    vec![
        json!({"uriTemplate": format!("{TRACE_PREFIX}{{trace_id}}"), "name": "trace",
            "title": "Plan trace", "mimeType": "application/json",
            "description": "A trace stored by run_plan."}),
        json!({"uriTemplate": format!("{RESULT_PREFIX}{{result_digest}}"), "name": "result",
            "title": "Result envelope", "mimeType": "application/json",
            "description": "An envelope stored by an operator call or a plan step."}),
    ]
}
