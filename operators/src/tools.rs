//! Artifacts generated from the registry (`operators.md` §2): tool definitions in the
//! Anthropic, OpenAI and MCP shapes, the planner's operator manual, and the verifier's
//! contracts. Nothing here is hand-maintained.

use crate::contract::Contract;
use crate::registry::{registry, Cut, OpSpec, RowKey};
use serde_json::{json, Map, Value};

/// Tool definition shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// `{name, description, input_schema}`.
    Anthropic,
    /// `{type: "function", function: {name, description, parameters}}`.
    OpenAi,
    /// `{name, description, inputSchema, outputSchema}`.
    Mcp,
}

/// The envelope keys of §4 with their contracts; the first five are required.
const ENVELOPE: [(&str, &str); 5] = [
    ("op", "str"),
    ("args_echo", "obj{*}"),
    ("dataset_extent", "obj{vt_min: int|null, vt_max: int|null}"),
    ("truncated", "bool"),
    ("result_digest", "hex"),
];

/// The MCP `outputSchema` of one operator: the envelope keys plus the declared outputs.
pub fn output_schema(spec: &OpSpec) -> Value {
    let mut props = Map::new();
    for (k, c) in ENVELOPE {
        let c = Contract::parse(c).unwrap_or(Contract::Any);
        props.insert(k.into(), c.json_schema());
    }
    for o in &spec.outputs {
        props.insert(o.name.clone(), o.contract.json_schema());
    }
    let required: Vec<&str> = ENVELOPE.iter().map(|e| e.0).collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// One tool definition.
pub fn tool(spec: &OpSpec, format: ToolFormat) -> Value {
    let desc = spec.description();
    match format {
        ToolFormat::Anthropic => {
            json!({"name": spec.name, "description": desc, "input_schema": spec.arg_schema()})
        }
        ToolFormat::OpenAi => json!({"type": "function", "function": {
            "name": spec.name, "description": desc, "parameters": spec.arg_schema()}}),
        ToolFormat::Mcp => json!({"name": spec.name, "description": desc,
            "inputSchema": spec.arg_schema(), "outputSchema": output_schema(spec)}),
    }
}

/// Every tool definition, sorted by name.
pub fn tools(format: ToolFormat) -> Value {
    Value::Array(registry().iter().map(|s| tool(s, format)).collect())
}

/// The planner's operator manual (§2, artifact 4).
pub fn operator_manual() -> String {
    registry()
        .iter()
        .map(|s| format!("### {}\n{}", s.name, s.description()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Uid-typed argument paths of one operator, e.g. `["uid"]`, `["seeds[*]"]`,
/// `["scope.seeds[*]"]`.
pub fn uid_arg_paths(spec: &OpSpec) -> Vec<String> {
    spec.args
        .iter()
        .flat_map(|a| a.uid_paths.iter().map(move |p| format!("{}{p}", a.name)))
        .collect()
}

/// Uid-typed row field names (§2.2).
pub const UID_ROW_FIELDS: [&str; 4] = ["uid", "src", "dst", "path"];

/// Digest-typed field names (§2.2, D-V4), beyond every `<list>_set_digest`.
pub const DIGEST_FIELDS: [&str; 8] = [
    "result_digest",
    "set_digest",
    "eid",
    "vid",
    "resolved_args_sha",
    "resolved_args_digest",
    "trace_id",
    "batch_id",
];

fn key_json(k: &RowKey) -> Value {
    match k {
        RowKey::Field(f) => json!(f),
        RowKey::Fields(fs) => json!(fs),
        RowKey::Row => json!("row"),
        RowKey::Computed(what) => json!(what),
        RowKey::Derived { spec, .. } => json!(spec),
    }
}

/// The verifier contracts of one operator (§2, artifact 5): output contract tree, uid-typed
/// argument paths and row fields, certified lists with their row keys and certificate
/// fields, and whether each list is uid-keyed.
pub fn contract(spec: &OpSpec) -> Value {
    let outputs: Map<String, Value> = spec
        .outputs
        .iter()
        .map(|o| (o.name.clone(), o.contract.json_schema()))
        .collect();
    let lists: Map<String, Value> = spec
        .outputs
        .iter()
        .filter_map(|o| {
            let l = o.list.as_ref()?;
            let elem = match &o.contract {
                Contract::List(t) => (**t).clone(),
                other => other.clone(),
            };
            let uid_keyed = match l.key {
                RowKey::Field(f) => {
                    ["uid", "src", "dst"].contains(&f)
                        && elem.fields().is_some_and(|fs| {
                            fs.iter().any(|(n, t)| n == f && *t == Contract::Uid)
                        })
                }
                RowKey::Row => elem == Contract::Uid,
                RowKey::Fields(_) | RowKey::Computed(_) | RowKey::Derived { .. } => false,
            };
            Some((
                o.name.clone(),
                json!({"key": key_json(&l.key), "cut": if l.cut == Cut::Paged { "paged" } else { "capped" },
                    "total_field": l.total_field, "set_digest_field": l.digest_field,
                    "truncated_field": l.truncated_field, "uid_keyed": uid_keyed}),
            ))
        })
        .collect();
    json!({"op": spec.name, "outputs": outputs, "output_names": spec.output_names(),
        "uid_arg_paths": uid_arg_paths(spec), "lists": lists})
}

/// The contracts of every operator plus the shared field classes.
pub fn verifier_contracts() -> Value {
    let ops: Map<String, Value> = registry()
        .iter()
        .map(|s| (s.name.to_string(), contract(s)))
        .collect();
    json!({"operators": ops, "uid_row_fields": UID_ROW_FIELDS, "digest_fields": DIGEST_FIELDS})
}
