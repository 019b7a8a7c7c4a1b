//! Strict checks of op objects given as user input (`tgms write`, [`parse_input_batch`]):
//! unknown fields and unknown op kinds are errors with the nearest valid name, and `vt_s`
//! is required where an op has a valid interval. The write-ahead log, replay and event-log
//! import keep normalizing with [`Op::from_json`] (defaults filled, `data-model.md` §8.1),
//! so every log written before these checks still reads back the same.

use crate::error::{Error, Result};
use crate::op::Op;
use serde_json::{Map, Value};

/// The op kinds, in `data-model.md` §6 order.
pub const OP_KINDS: [&str; 5] = [
    "assert_node",
    "assert_edge",
    "retract",
    "correct",
    "ingest_events",
];

/// The fields an op of `kind` may carry (its normalized keys, §8.1; `ingest_events` also
/// `reason`, which its audit accepts).
pub fn op_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "assert_node" => &[
            "op",
            "uid",
            "label",
            "props",
            "vt_s",
            "vt_e",
            "reason",
            "source",
            "provenance_ref",
        ],
        "assert_edge" => &[
            "op",
            "src",
            "dst",
            "rel_type",
            "disc",
            "props",
            "vt_s",
            "vt_e",
            "reason",
            "source",
            "provenance_ref",
            "src_label",
            "dst_label",
        ],
        "retract" => &["op", "ref", "t", "reason", "source", "provenance_ref"],
        "correct" => &[
            "op",
            "ref",
            "props",
            "vt_s",
            "vt_e",
            "reason",
            "source",
            "provenance_ref",
        ],
        "ingest_events" => &[
            "op",
            "events",
            "ordinal_base",
            "node_label",
            "reason",
            "source",
            "provenance_ref",
        ],
        _ => return None,
    })
}

/// The fields of one `ingest_events` event (§6.7).
pub const EVENT_FIELDS: [&str; 7] = ["src", "dst", "rel_type", "vt_s", "vt_e", "disc", "props"];
/// The fields of a node ref.
const NODE_REF_FIELDS: [&str; 2] = ["kind", "uid"];
/// The fields of an edge ref.
const EDGE_REF_FIELDS: [&str; 5] = ["kind", "src", "dst", "rel_type", "disc"];

/// The candidate nearest to `name` by edit distance, when it is close enough to be a typo
/// (at most a third of the longer name's length, at least 1 edit for short names) or one
/// name starts with the other (`vt_start` → `vt_s`): the did-you-mean of every strictness
/// error. Ties go to the earlier candidate.
pub fn nearest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(&lower, c), *c))
        .filter(|(d, c)| {
            *d <= (lower.len().max(c.len()) / 3).max(1)
                || (c.len().min(lower.len()) >= 2
                    && (lower.starts_with(c) || c.starts_with(lower.as_str())))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` did you mean "x"?` or nothing.
fn did_you_mean(s: Option<&str>) -> String {
    s.map_or(String::new(), |s| format!(" (did you mean \"{s}\"?)"))
}

/// Checks the keys of object `m` (at `path`, e.g. `ref` or `events[3]`) against `allowed`.
fn check_keys(
    index: usize,
    kind: &str,
    path: &str,
    m: &Map<String, Value>,
    allowed: &[&str],
) -> Result<()> {
    // Keys in sorted order, so the error names the same field on every run.
    let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) else {
        return Ok(());
    };
    let suggestion = nearest(k, allowed);
    let field = if path.is_empty() {
        k.clone()
    } else {
        format!("{path}.{k}")
    };
    let whose = if path.is_empty() {
        kind.to_string()
    } else {
        format!("{path} in {kind}")
    };
    Err(Error::BadOp {
        index,
        message: format!(
            "unknown field \"{field}\" in {kind}{}; the fields of {whose} are {}",
            did_you_mean(suggestion),
            allowed.join(", ")
        ),
        field: Some(field),
        suggestion: suggestion.map(str::to_string),
    })
}

/// Strict shape checks of op object `v`, number `index` of its batch (0-based). Values are
/// checked by [`Op::parse`] afterwards; this only refuses what normalization would silently
/// drop or default: unknown keys, unknown op kinds, a missing `vt_s`.
pub fn check_input_op(v: &Value, index: usize) -> Result<()> {
    let Some(m) = v.as_object() else {
        return Err(Error::BadOp {
            index,
            field: None,
            message:
                "not a JSON object; every op is an object such as \
                      {\"op\": \"assert_node\", \"uid\": \"a\", \"label\": \"Person\", \"vt_s\": 0}"
                    .into(),
            suggestion: None,
        });
    };
    let kind = match m.get("op") {
        Some(Value::String(s)) => s.as_str(),
        _ => {
            return Err(Error::BadOp {
                index,
                field: Some("op".into()),
                message: format!("no op kind: give \"op\" as one of {}", OP_KINDS.join(", ")),
                suggestion: None,
            })
        }
    };
    let Some(fields) = op_fields(kind) else {
        let suggestion = nearest(kind, &OP_KINDS);
        return Err(Error::BadOp {
            index,
            field: Some("op".into()),
            message: format!(
                "unknown op kind '{kind}'{}; the op kinds are {}",
                did_you_mean(suggestion),
                OP_KINDS.join(", ")
            ),
            suggestion: suggestion.map(str::to_string),
        });
    };
    check_keys(index, kind, "", m, fields)?;
    if fields.contains(&"vt_s") && !m.contains_key("vt_s") {
        return Err(Error::BadOp {
            index,
            field: Some("vt_s".into()),
            message: format!(
                "{kind} needs vt_s (it has no default): the start of the valid interval, in µs since \
                 1970-01-01 UTC (e.g. \"vt_s\": 1700000000000000); write \"vt_s\": 0 for \
                 \"since always\""
            ),
            suggestion: None,
        });
    }
    if let Some(Value::Object(r)) = m.get("ref") {
        let allowed: &[&str] = match r.get("kind").and_then(Value::as_str) {
            Some("edge") => &EDGE_REF_FIELDS,
            _ => &NODE_REF_FIELDS,
        };
        check_keys(index, kind, "ref", r, allowed)?;
    }
    if let Some(Value::Array(events)) = m.get("events") {
        for (i, e) in events.iter().enumerate() {
            if let Some(e) = e.as_object() {
                check_keys(index, kind, &format!("events[{i}]"), e, &EVENT_FIELDS)?;
            }
        }
    }
    Ok(())
}

/// A batch given as user input: a JSON array of op objects, each checked strictly
/// ([`check_input_op`]) and then normalized with [`Op::from_json`] (an op whose values do
/// not validate still becomes a raw op that fails its batch at apply time, §6.1).
pub fn parse_input_batch(v: &Value) -> Result<Vec<Op>> {
    let Value::Array(items) = v else {
        return Err(Error::invalid("a batch is a JSON array of op objects"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, op)| check_input_op(op, i).map(|()| Op::from_json(op)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `(index, field, suggestion)` of the error of checking `v` as op 3.
    fn refusal(v: Value) -> (usize, Option<String>, Option<String>, String) {
        match check_input_op(&v, 3) {
            Err(Error::BadOp {
                index,
                field,
                suggestion,
                message,
            }) => (index, field, suggestion, message),
            other => panic!("expected BadOp for {v}, got {other:?}"),
        }
    }

    #[test]
    fn an_unknown_field_names_the_nearest_one() {
        let (i, f, s, m) =
            refusal(json!({"op":"assert_node","uid":"a","label":"N","vt_s":0,"propz":{"x":1}}));
        assert_eq!(
            (i, f.as_deref(), s.as_deref()),
            (3, Some("propz"), Some("props"))
        );
        assert!(m.contains("did you mean \"props\""), "{m}");
        let e = Error::BadOp {
            index: i,
            field: f,
            message: m,
            suggestion: s,
        };
        assert_eq!(e.code().as_str(), "E_INVALID_ARG");
        assert!(
            matches!(&e, Error::BadOp { index: 3, suggestion: Some(s), .. } if s == "props"),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .starts_with("op 3: unknown field \"propz\" in assert_node (did you mean \"props\"?); the fields of assert_node are op, uid"));
        // A name nothing resembles gets no suggestion, only the list.
        let (_, f, s, m) = refusal(
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":0,"colour":"red"}),
        );
        assert_eq!((f.as_deref(), s), (Some("colour"), None));
        assert!(m.contains("src_label, dst_label"), "{m}");
    }

    #[test]
    fn unknown_fields_inside_refs_and_events() {
        let (_, f, s, _) =
            refusal(json!({"op":"retract","ref":{"kind":"node","uidd":"a"},"t":1,"reason":"r"}));
        assert_eq!(
            (f.as_deref(), s.as_deref()),
            (Some("ref.uidd"), Some("uid"))
        );
        let (_, f, s, _) = refusal(
            json!({"op":"correct","ref":{"kind":"edge","src":"a","dst":"b",
            "rel_type":"R","disk":""},"props":{},"vt_s":0,"reason":"r"}),
        );
        assert_eq!(
            (f.as_deref(), s.as_deref()),
            (Some("ref.disk"), Some("disc"))
        );
        let (_, f, s, _) = refusal(json!({"op":"ingest_events","events":[
            {"src":"a","dst":"b","rel_type":"R","vt_s":1},
            {"src":"a","dst":"b","rel_type":"R","vt_start":1}]}));
        assert_eq!(
            (f.as_deref(), s.as_deref()),
            (Some("events[1].vt_start"), Some("vt_s"))
        );
    }

    #[test]
    fn an_unknown_op_kind_names_the_nearest_kind_and_the_index() {
        let (i, f, s, m) = refusal(json!({"op":"asert_node","uid":"a","label":"N","vt_s":0}));
        assert_eq!(
            (i, f.as_deref(), s.as_deref()),
            (3, Some("op"), Some("assert_node"))
        );
        assert!(m.starts_with("unknown op kind 'asert_node'"), "{m}");
        let (_, _, s, _) = refusal(json!({"op":"corect","ref":{"kind":"node","uid":"a"}}));
        assert_eq!(s.as_deref(), Some("correct"));
        let (_, _, s, _) = refusal(json!({"op":"frobnicate"}));
        assert_eq!(s, None);
        let (_, f, _, _) = refusal(json!({"uid":"a"}));
        assert_eq!(f.as_deref(), Some("op"));
    }

    #[test]
    fn a_missing_vt_s_is_an_error_where_the_op_has_an_interval() {
        for v in [
            json!({"op":"assert_node","uid":"a","label":"N"}),
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_e":5}),
            json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{},"reason":"r"}),
        ] {
            let (_, f, _, m) = refusal(v);
            assert_eq!(f.as_deref(), Some("vt_s"));
            assert!(m.contains("needs vt_s"), "{m}");
        }
        // retract has an instant, ingest_events' events carry their own vt_s.
        check_input_op(
            &json!({"op":"retract","ref":{"kind":"node","uid":"a"},"t":1,"reason":"r"}),
            0,
        )
        .unwrap();
    }

    #[test]
    fn every_normalized_op_passes_the_strict_check() {
        // What the log records (§8.1, every key present) is valid input again.
        let ops = [
            json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":9}),
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":1}),
            json!({"op":"retract","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"t":1,"reason":"r"}),
            json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{},"vt_s":0,"reason":"r"}),
            json!({"op":"ingest_events","events":[{"src":"a","dst":"b","rel_type":"R","vt_s":1,
                "vt_e":null,"disc":"x","props":{}}],"node_label":"N"}),
        ];
        for v in ops {
            let op = Op::parse(&v).unwrap();
            check_input_op(&v, 0).unwrap();
            check_input_op(&op.to_json(), 0).unwrap();
        }
        let batch =
            parse_input_batch(&json!([{"op":"assert_node","uid":"a","label":"N","vt_s":0}]))
                .unwrap();
        assert_eq!(batch.len(), 1);
        assert!(parse_input_batch(&json!({"op":"assert_node"})).is_err());
    }
}
