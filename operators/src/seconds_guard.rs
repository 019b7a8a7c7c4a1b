//! The seconds-for-µs guard (`docs/times.md#an-integer-that-looks-like-seconds`): a valid-time
//! argument given as an integer that reads as **seconds** of the store's data but as µs lies
//! before the store's first event is refused, with both readings in the repair.
//!
//! The rule is tied to the store so that small µs values stay legal where they are meant: an
//! integer `v` at a time position (`window.t_a`, `at`, `t1`, …; not `as_of_tt`, and not
//! `compute`, which reads no store) is refused when `0 < v <= 10^11`, the µs reading is before
//! the store's first valid time (`v < vt_min`) and the seconds reading lies inside the store's
//! valid-time extent (`vt_min <= v · 10^6 <= vt_max`). A synthetic store whose times are
//! small integers (so `vt_min <= v`) and a window that starts at 0 are untouched.

use crate::error::{Code, OpError};
use crate::registry::OpSpec;
use crate::timefmt::iso_utc;
use crate::timeparse::TIME_PATTERN;
use serde_json::{json, Map, Value};

/// Integers above this are never read as seconds (10^11 s is the year 5138).
pub const SECONDS_MAX: i64 = 100_000_000_000;

/// Refuses the first time argument of `args` that reads as seconds of the store's data
/// (`vt_min`, `vt_max`: the store's valid-time extent; `None` for an empty store).
pub fn check(
    spec: &OpSpec,
    args: &Map<String, Value>,
    vt_min: Option<i64>,
    vt_max: Option<i64>,
) -> Result<(), OpError> {
    let (Some(lo), Some(hi)) = (vt_min, vt_max) else {
        return Ok(());
    };
    if spec.name == "compute" {
        return Ok(());
    }
    let schema = spec.arg_schema();
    let hit = args
        .iter()
        .filter(|(k, _)| *k != "as_of_tt")
        .find_map(|(k, x)| {
            let sub = schema.get("properties")?.get(k)?;
            let seconds_like = |x: i64| x < lo && (lo..=hi).contains(&x.saturating_mul(1_000_000));
            find(sub, x, &mut vec![json!(k)], &seconds_like)
        });
    match hit {
        None => Ok(()),
        Some((path, v)) => {
            let name: Vec<String> = path
                .iter()
                .map(|p| p.as_str().map_or_else(|| p.to_string(), String::from))
                .collect();
            let name = name.join(".");
            let us = v * 1_000_000;
            Err(OpError::with(
                Code::InvalidArg,
                format!(
                    "{name} = {v} looks like seconds: read as µs it is {} (before the store's first event at {}); read as seconds it is {}. Times are µs: write {us} or \"{}\"",
                    iso_utc(v),
                    iso_utc(lo),
                    iso_utc(us),
                    iso_utc(us)
                ),
                json!({"path": path, "repair": {"as_us": iso_utc(v), "as_seconds": iso_utc(us),
                    "use": us, "docs": "docs/times.md#an-integer-that-looks-like-seconds"}}),
            ))
        }
    }
}

/// The first integer time argument of a call to `spec` that the guard would examine against
/// a store (`0 < v <= 10^11`, outside `as_of_tt`, not `compute`), with its dotted path: what
/// a check without the store's extent leaves unchecked.
pub fn unchecked(spec: &OpSpec, args: &Map<String, Value>) -> Option<(String, i64)> {
    if spec.name == "compute" {
        return None;
    }
    let schema = spec.arg_schema();
    args.iter()
        .filter(|(k, _)| *k != "as_of_tt")
        .find_map(|(k, x)| {
            let sub = schema.get("properties")?.get(k)?;
            find(sub, x, &mut vec![json!(k)], &|_| true)
        })
        .map(|(path, v)| {
            let name: Vec<String> = path
                .iter()
                .map(|p| p.as_str().map_or_else(|| p.to_string(), String::from))
                .collect();
            (name.join("."), v)
        })
}

/// The first integer at a time position of `schema` (outside `as_of_tt`) in `(0, 10^11]`
/// for which `pred` holds (reads as seconds of the store), with its path.
fn find(
    schema: &Value,
    v: &Value,
    path: &mut Vec<Value>,
    pred: &dyn Fn(i64) -> bool,
) -> Option<(Vec<Value>, i64)> {
    if schema.get("pattern").and_then(Value::as_str) == Some(TIME_PATTERN) {
        let x = v.as_i64()?;
        let seconds_like = x > 0 && x <= SECONDS_MAX && pred(x);
        return seconds_like.then(|| (path.clone(), x));
    }
    match v {
        Value::Object(m) => {
            let props = schema.get("properties")?.as_object()?;
            for (k, x) in m {
                if k == "as_of_tt" {
                    continue;
                }
                if let Some(sub) = props.get(k) {
                    path.push(json!(k));
                    let hit = find(sub, x, path, pred);
                    path.pop();
                    if hit.is_some() {
                        return hit;
                    }
                }
            }
            None
        }
        Value::Array(a) => {
            let items = schema.get("items")?;
            for (i, x) in a.iter().enumerate() {
                path.push(json!(i));
                let hit = find(items, x, path, pred);
                path.pop();
                if hit.is_some() {
                    return hit;
                }
            }
            None
        }
        _ => None,
    }
}
