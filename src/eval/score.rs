//! Scoring of one prediction against its gold (`evaluation.md` §3.9) and the prediction read
//! from an answer object.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms_engine::canon;

/// Exact match and F1 (IoU for intervals) of one prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Exact match: 1.0 or 0.0 (for intervals, IoU ≥ 0.5).
    pub em: f64,
    /// F1 of the uid sets for `entity_set`, IoU for `interval`, else equal to `em`.
    pub f1: f64,
}

const UID_KEYS: [&str; 3] = ["uid", "src", "dst"];

/// The uid set of a value, sorted: strings as they are; arrays and objects contribute every
/// string under the keys `uid`, `src`, `dst` at any depth.
pub fn uid_set(v: &Value) -> Vec<String> {
    fn free(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|x| free(x, out)),
            Value::Object(m) => object(m, out),
            _ => {}
        }
    }
    fn object(m: &serde_json::Map<String, Value>, out: &mut BTreeSet<String>) {
        for (k, x) in m {
            if UID_KEYS.contains(&k.as_str()) {
                under(x, out);
            } else {
                nested(x, out);
            }
        }
    }
    // Inside an object, outside a uid key: only objects deeper down contribute.
    fn nested(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| nested(x, out)),
            Value::Object(m) => object(m, out),
            _ => {}
        }
    }
    fn under(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|x| under(x, out)),
            Value::Object(m) => m.values().for_each(|x| under(x, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    free(v, &mut out);
    out.into_iter().collect()
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// An integer number token as an exact integer (`None` for floats and non-numbers).
fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) if !tgms_engine::canon::number_is_float(n) => n.as_str().parse().ok(),
        _ => None,
    }
}

/// `[start, end)` of an interval value: `{t_a, t_b}` or `{start, end}`.
fn interval(v: &Value) -> Option<(f64, f64)> {
    let pair = |a: &str, b: &str| Some((number(v.get(a)?)?, number(v.get(b)?)?));
    pair("t_a", "t_b").or_else(|| pair("start", "end"))
}

/// `score(kind, gold, pred)` of §3.9.
pub fn score(kind: &str, gold: &Value, pred: &Value) -> Score {
    let both = |x: bool| {
        let s = f64::from(u8::from(x));
        Score { em: s, f1: s }
    };
    match kind {
        "count" | "value" => match (number(gold), number(pred)) {
            // `|g − p| <= 1e-9` read exactly for two integers (in f64, 2^62 − 1 and 2^62
            // would be one number), as the claim verifier does.
            (Some(_), Some(_)) if integer(gold).is_some() && integer(pred).is_some() => {
                both(integer(gold) == integer(pred))
            }
            (Some(g), Some(p)) => both((g - p).abs() <= 1e-9),
            _ => both(!gold.is_null() && gold == pred),
        },
        "entity_set" => {
            let g: BTreeSet<String> = uid_set(gold).into_iter().collect();
            let p: BTreeSet<String> = uid_set(pred).into_iter().collect();
            if g.is_empty() && p.is_empty() {
                return both(true);
            }
            let hit = g.intersection(&p).count() as f64;
            let precision = if p.is_empty() {
                0.0
            } else {
                hit / p.len() as f64
            };
            let recall = if g.is_empty() {
                0.0
            } else {
                hit / g.len() as f64
            };
            let f1 = if precision + recall == 0.0 {
                0.0
            } else {
                2.0 * precision * recall / (precision + recall)
            };
            Score {
                em: f64::from(u8::from(g == p)),
                f1,
            }
        }
        "interval" => {
            let (Some((gs, ge)), Some((ps, pe))) = (interval(gold), interval(pred)) else {
                return both(false);
            };
            let overlap = (ge.min(pe) - gs.max(ps)).max(0.0);
            let hull = ge.max(pe) - gs.min(ps);
            let iou = if hull > 0.0 { overlap / hull } else { 0.0 };
            Score {
                em: f64::from(u8::from(iou >= 0.5)),
                f1: iou,
            }
        }
        _ => both(canon::to_string(gold) == canon::to_string(pred)),
    }
}

/// The prediction of an answer object (§3.9): the typed `answer.value`; else for count/value
/// the first count/value claim with a value; for entity_set the union of the entity claims'
/// uids; for interval the first claim with an `interval`, else a value claim whose value is an
/// object, else the `t_a`/`t_b` (or `start`/`end`) value claims of the mechanical reporter;
/// otherwise the text. `Value::Null` when the object holds nothing to read.
pub fn prediction(kind: &str, ans: &Value) -> Value {
    if let Some(v) = ans.get("answer").and_then(|a| a.get("value")) {
        if !v.is_null() {
            return v.clone();
        }
    }
    let claims: Vec<&Value> = ans["claims"].as_array().into_iter().flatten().collect();
    let found = match kind {
        "count" | "value" => claims
            .iter()
            .find(|c| (c["type"] == "count" || c["type"] == "value") && !c["value"].is_null())
            .map(|c| c["value"].clone()),
        "entity_set" => {
            let ents: Vec<&&Value> = claims.iter().filter(|c| c["type"] == "entity").collect();
            (!ents.is_empty()).then(|| {
                let mut u = BTreeSet::new();
                for c in ents {
                    for x in c["uids"].as_array().into_iter().flatten() {
                        if let Some(s) = x.as_str() {
                            u.insert(s.to_string());
                        }
                    }
                }
                json!(u)
            })
        }
        "interval" => claims
            .iter()
            .find(|c| c.get("interval").is_some_and(Value::is_object))
            .map(|c| c["interval"].clone())
            .or_else(|| {
                claims
                    .iter()
                    .find(|c| c["type"] == "value" && c["value"].is_object())
                    .map(|c| c["value"].clone())
            })
            .or_else(|| {
                let end = |suffix: &str| {
                    claims
                        .iter()
                        .find(|c| {
                            c["type"] == "value"
                                && c["from"].as_str().is_some_and(|f| f.ends_with(suffix))
                        })
                        .map(|c| c["value"].clone())
                };
                match (end(".t_a"), end(".t_b")) {
                    (Some(a), Some(b)) => Some(json!({"t_a": a, "t_b": b})),
                    _ => match (end(".start"), end(".end")) {
                        (Some(a), Some(b)) => Some(json!({"start": a, "end": b})),
                        _ => None,
                    },
                }
            }),
        _ => None,
    };
    found.unwrap_or_else(|| match ans.get("text") {
        Some(Value::String(t)) if !t.is_empty() && kind != "count" && kind != "value" => {
            json!(t)
        }
        _ => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_written_cases_per_kind() {
        // count / value: numbers within 1e-9, booleans and strings by equality.
        assert_eq!(score("count", &json!(3), &json!(3.0)).em, 1.0);
        assert_eq!(score("count", &json!(3), &json!(4)).em, 0.0);
        // Two integers compare exactly: the open end of time is not its neighbour.
        let open_end = json!(4_611_686_018_427_387_904_i64);
        assert_eq!(
            score("value", &open_end, &json!(4_611_686_018_427_387_903_i64)).em,
            0.0
        );
        assert_eq!(score("value", &open_end, &open_end).em, 1.0);
        assert_eq!(score("value", &json!(0.5), &json!(0.5000000001)).em, 1.0);
        assert_eq!(score("value", &json!("n7"), &json!("n7")).em, 1.0);
        assert_eq!(score("value", &json!("n7"), &json!("n8")).f1, 0.0);
        assert_eq!(score("value", &json!(null), &json!(null)).em, 0.0);
        assert_eq!(score("value", &json!(true), &json!(1)).em, 0.0);
        // entity_set: sets, both empty = 1, P/R/F1 otherwise.
        let s = score(
            "entity_set",
            &json!(["a", "b", "c", "d"]),
            &json!([{"uid": "a"}, {"src": "b", "dst": "x"}]),
        );
        // P = 2/3, R = 2/4, F1 = 2·(2/3)(1/2)/(2/3 + 1/2) = 4/7.
        assert_eq!(s.em, 0.0);
        assert!((s.f1 - 4.0 / 7.0).abs() < 1e-12, "{s:?}");
        assert_eq!(score("entity_set", &json!([]), &json!([])).em, 1.0);
        assert_eq!(score("entity_set", &json!(["a"]), &json!([])).f1, 0.0);
        assert_eq!(
            score(
                "entity_set",
                &json!(["b", "a"]),
                &json!({"rows": [{"uid": "a"}, {"uid": "b", "label": "L"}]})
            )
            .em,
            1.0
        );
        // interval: IoU; em at 0.5.
        let s = score(
            "interval",
            &json!({"t_a": 0, "t_b": 10}),
            &json!({"start": 5, "end": 15}),
        );
        assert!((s.f1 - 5.0 / 15.0).abs() < 1e-12);
        assert_eq!(s.em, 0.0);
        let s = score(
            "interval",
            &json!({"t_a": 0, "t_b": 10}),
            &json!({"t_a": 0, "t_b": 20}),
        );
        assert_eq!((s.em, s.f1), (1.0, 0.5));
        assert_eq!(
            score("interval", &json!({"t_a": 0, "t_b": 10}), &json!(7)).f1,
            0.0
        );
        // series / paths / text: canonical JSON equality.
        assert_eq!(
            score(
                "series",
                &json!({"b": 1, "a": [2]}),
                &json!({"a": [2], "b": 1})
            )
            .em,
            1.0
        );
        assert_eq!(score("text", &json!("x"), &json!("y")).em, 0.0);
    }

    #[test]
    fn prediction_reads_answer_then_claims() {
        let typed = json!({"text": "t", "claims": [], "answer": {"kind": "count", "value": 4}});
        assert_eq!(prediction("count", &typed), json!(4));
        let claims = json!({"text": "The answer is 5.", "claims": [
            {"id": "c1", "type": "entity", "uids": ["b", "a"], "evidence": ["s1"]},
            {"id": "c2", "type": "count", "value": 5, "evidence": ["s1"]},
            {"id": "c3", "type": "entity", "uids": ["c"], "evidence": ["s1"]}]});
        assert_eq!(prediction("count", &claims), json!(5));
        assert_eq!(prediction("entity_set", &claims), json!(["a", "b", "c"]));
        let iv = json!({"text": "", "claims": [
            {"id": "c1", "type": "value", "value": 10, "from": "s2.rows[0].t_a", "evidence": ["s2"]},
            {"id": "c2", "type": "value", "value": 20, "from": "s2.rows[0].t_b", "evidence": ["s2"]}]});
        assert_eq!(prediction("interval", &iv), json!({"t_a": 10, "t_b": 20}));
        assert_eq!(
            prediction("count", &json!({"text": "", "claims": []})),
            Value::Null
        );
    }
}
