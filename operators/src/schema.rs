//! The subset of JSON Schema (draft 2020-12) the registry uses, with the error selection and
//! message templates of `operators.md` §5.3, plus step 3 of the pipeline (top-level default
//! filling and conversion of integral floats in integer positions).
//!
//! Supported keywords: `type` (one or several of object, array, string, integer, number,
//! boolean, null), `enum`, `required`, `additionalProperties: false`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `minLength`, `minItems`, `maxItems`, `properties`, `items`, and the
//! annotations `default` / `description`. Property declaration order is passed in
//! explicitly for the top level (serde_json maps are sorted).

use crate::json::{number_is_float, render, render_str, to_string};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// One schema violation: the instance path and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Where the violating value sits: object keys and array indices from the root.
    pub path: Vec<Value>,
    /// What is wrong with it.
    pub message: String,
}

fn is_integer(n: &Number) -> bool {
    if !number_is_float(n) {
        return true;
    }
    n.as_str()
        .parse::<f64>()
        .is_ok_and(|f| f.is_finite() && f.fract() == 0.0)
}

fn type_matches(t: &str, v: &Value) -> bool {
    match (t, v) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => is_integer(n),
        _ => false,
    }
}

/// Compares two JSON numbers exactly when both are integers that fit i128, else as f64.
fn num_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    if !number_is_float(a) && !number_is_float(b) {
        if let (Ok(x), Ok(y)) = (a.as_str().parse::<i128>(), b.as_str().parse::<i128>()) {
            return Some(x.cmp(&y));
        }
    }
    let x: f64 = a.as_str().parse().ok()?;
    let y: f64 = b.as_str().parse().ok()?;
    x.partial_cmp(&y)
}

fn type_names(t: &Value) -> Vec<&str> {
    match t {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Validates `v` against `schema`, appending violations in evaluation order.
/// `order` gives the declaration order of the schema's properties (top level only).
pub fn validate(
    schema: &Value,
    v: &Value,
    path: &mut Vec<Value>,
    order: Option<&[&str]>,
    out: &mut Vec<Violation>,
) {
    let Some(s) = schema.as_object() else {
        return;
    };
    let mut err = |path: &Vec<Value>, message: String| {
        out.push(Violation {
            path: path.clone(),
            message,
        })
    };
    if let Some(t) = s.get("type") {
        let names = type_names(t);
        if !names.iter().any(|n| type_matches(n, v)) {
            let list: Vec<String> = names.iter().map(|n| render_str(n)).collect();
            err(
                path,
                format!("{} is not of type {}", render(v), list.join(", ")),
            );
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.iter().any(|o| json_eq(o, v)) {
            let list: Vec<String> = options.iter().map(render).collect();
            err(
                path,
                format!("{} is not one of [{}]", render(v), list.join(", ")),
            );
        }
    }
    if let Value::Object(m) = v {
        if let Some(Value::Array(req)) = s.get("required") {
            for r in req.iter().filter_map(Value::as_str) {
                if !m.contains_key(r) {
                    err(path, format!("{} is a required property", render_str(r)));
                }
            }
        }
        if s.get("additionalProperties") == Some(&Value::Bool(false)) {
            let props = s.get("properties").and_then(Value::as_object);
            let extra: Vec<String> = m
                .keys()
                .filter(|k| props.is_none_or(|p| !p.contains_key(*k)))
                .map(|k| render_str(k))
                .collect();
            match extra.len() {
                0 => {}
                1 => err(
                    path,
                    format!(
                        "Additional properties are not allowed ({} was unexpected)",
                        extra[0]
                    ),
                ),
                _ => err(
                    path,
                    format!(
                        "Additional properties are not allowed ({} were unexpected)",
                        extra.join(", ")
                    ),
                ),
            }
        }
    }
    if let Value::Number(n) = v {
        if let Some(Value::Number(m)) = s.get("minimum") {
            if num_cmp(n, m) == Some(Ordering::Less) {
                err(
                    path,
                    format!(
                        "{} is less than the minimum of {}",
                        render(v),
                        to_string(&Value::Number(m.clone()))
                    ),
                );
            }
        }
        if let Some(Value::Number(m)) = s.get("maximum") {
            if num_cmp(n, m) == Some(Ordering::Greater) {
                err(
                    path,
                    format!(
                        "{} is greater than the maximum of {}",
                        render(v),
                        to_string(&Value::Number(m.clone()))
                    ),
                );
            }
        }
        if let Some(Value::Number(m)) = s.get("exclusiveMinimum") {
            if num_cmp(n, m) != Some(Ordering::Greater) {
                err(
                    path,
                    format!(
                        "{} is less than or equal to the minimum of {}",
                        render(v),
                        to_string(&Value::Number(m.clone()))
                    ),
                );
            }
        }
        if let Some(Value::Number(m)) = s.get("exclusiveMaximum") {
            if num_cmp(n, m) != Some(Ordering::Less) {
                err(
                    path,
                    format!(
                        "{} is greater than or equal to the maximum of {}",
                        render(v),
                        to_string(&Value::Number(m.clone()))
                    ),
                );
            }
        }
    }
    if let (Value::String(x), Some(min)) = (v, s.get("minLength").and_then(Value::as_u64)) {
        if (x.chars().count() as u64) < min {
            err(path, format!("{} is too short", render(v)));
        }
    }
    if let Value::Array(a) = v {
        if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
            if (a.len() as u64) < min {
                err(path, format!("{} is too short", render(v)));
            }
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64) {
            if (a.len() as u64) > max {
                err(path, format!("{} is too long", render(v)));
            }
        }
    }
    if let (Value::Object(m), Some(Value::Object(props))) = (v, s.get("properties")) {
        let keys: Vec<&str> = match order {
            Some(o) => o.to_vec(),
            None => props.keys().map(String::as_str).collect(),
        };
        for k in keys {
            if let (Some(sub), Some(x)) = (props.get(k), m.get(k)) {
                path.push(Value::from(k));
                validate(sub, x, path, None, out);
                path.pop();
            }
        }
    }
    if let (Value::Array(a), Some(items)) = (v, s.get("items")) {
        for (i, x) in a.iter().enumerate() {
            path.push(Value::from(i));
            validate(items, x, path, None, out);
            path.pop();
        }
    }
}

/// JSON equality with numbers compared by value (`1 == 1.0`), booleans never numbers.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_eq(p, q)))
        }
        _ => a == b,
    }
}

/// The reported violation of §5.3: shortest instance path, ties to the first in
/// evaluation order.
pub fn first_violation(vs: Vec<Violation>) -> Option<Violation> {
    let mut best: Option<Violation> = None;
    for v in vs {
        if best.as_ref().is_none_or(|b| v.path.len() < b.path.len()) {
            best = Some(v);
        }
    }
    best
}

/// Converts integral floats (`5.0`) in integer-typed positions to integers, at any depth the
/// schema describes (call pipeline step 3). Assumes `v` already validated.
pub fn integerize(schema: &Value, v: &mut Value) {
    let Some(s) = schema.as_object() else {
        return;
    };
    match v {
        Value::Number(n) if number_is_float(n) => {
            let names = s.get("type").map(type_names).unwrap_or_default();
            if names.contains(&"integer") && !names.contains(&"number") && is_integer(n) {
                if let Ok(f) = n.as_str().parse::<f64>() {
                    // Integral and inside the schema's bounds (validated), so it fits i64
                    // for every bound the registry uses; larger values stay as they are.
                    if f.abs() < 9.2e18 {
                        *v = Value::from(f as i64);
                    }
                }
            }
        }
        Value::Object(m) => {
            if let Some(Value::Object(props)) = s.get("properties") {
                for (k, x) in m.iter_mut() {
                    if let Some(sub) = props.get(k) {
                        integerize(sub, x);
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                a.iter_mut().for_each(|x| integerize(items, x));
            }
        }
        _ => {}
    }
}

/// Fills absent top-level properties that declare a default (step 3).
pub fn fill_defaults(args: &mut Map<String, Value>, defaults: &[(&str, &Value)]) {
    for (k, d) in defaults {
        if !args.contains_key(*k) {
            args.insert((*k).to_string(), (*d).clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: &Value, v: &Value) -> Option<(Vec<Value>, String)> {
        let mut out = Vec::new();
        validate(schema, v, &mut Vec::new(), None, &mut out);
        first_violation(out).map(|x| (x.path, x.message))
    }

    #[test]
    fn messages_and_selection() {
        let s = json!({"type": "object", "additionalProperties": false,
            "properties": {"k": {"type": "integer", "minimum": 1, "maximum": 20},
                           "d": {"type": "string", "enum": ["out", "in"]},
                           "w": {"type": "object", "properties": {"t_a": {"type": "integer"}}, "required": ["t_a"]}},
            "required": ["k"]});
        assert_eq!(
            check(&s, &json!({"k": 21})).unwrap().1,
            "21 is greater than the maximum of 20"
        );
        assert_eq!(check(&s, &json!({"k": 21})).unwrap().0, vec![json!("k")]);
        assert_eq!(
            check(&s, &json!({})).unwrap().1,
            "'k' is a required property"
        );
        assert_eq!(
            check(&s, &json!({"k": 1, "z": 1, "y": 2})).unwrap().1,
            "Additional properties are not allowed ('y', 'z' were unexpected)"
        );
        assert_eq!(
            check(&s, &json!({"k": 1, "d": "x"})).unwrap().1,
            "'x' is not one of ['out', 'in']"
        );
        assert_eq!(
            check(&s, &json!({"k": true})).unwrap().1,
            "true is not of type 'integer'"
        );
        assert_eq!(check(&s, &json!({"k": 5.0})), None);
        assert_eq!(
            check(&s, &json!({"k": 5.5})).unwrap().1,
            "5.5 is not of type 'integer'"
        );
        assert_eq!(
            check(&s, &json!([1])).unwrap().1,
            "[1] is not of type 'object'"
        );
        // shortest path wins over evaluation order
        let r = check(&s, &json!({"w": {}, "k": 0})).unwrap();
        assert_eq!(
            (r.0, r.1),
            (
                vec![json!("k")],
                "0 is less than the minimum of 1".to_string()
            )
        );
        let r = check(&s, &json!({"w": {}, "k": 3})).unwrap();
        assert_eq!(
            (r.0, r.1),
            (vec![json!("w")], "'t_a' is a required property".to_string())
        );
        let u = json!({"type": ["string", "null"], "minLength": 1});
        assert_eq!(check(&u, &json!("")).unwrap().1, "'' is too short");
        assert_eq!(
            check(&u, &json!(3)).unwrap().1,
            "3 is not of type 'string', 'null'"
        );
        assert_eq!(check(&u, &Value::Null), None);
    }

    #[test]
    fn integerize_converts_integral_floats() {
        let s = json!({"type": "object", "properties": {"k": {"type": "integer"},
            "w": {"type": "object", "properties": {"t_a": {"type": "integer"}}}}});
        let mut v = json!({"k": 5.0, "w": {"t_a": 7.0}, "x": 1.0});
        integerize(&s, &mut v);
        assert_eq!(to_string(&v), r#"{"k":5,"w":{"t_a":7},"x":1.0}"#);
    }
}
