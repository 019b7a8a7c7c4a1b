//! Approximate evidence (`docs/approximate.md`): which fields of an approximate envelope
//! are estimates and where their intervals are, and the `approximation` member of the
//! evidence descriptor. Convention (the sample mode of `count_temporal_motifs`, and any later
//! approximate operator): `count` is the estimate whose interval is `interval`, and
//! `counts.K` the estimate whose interval is `intervals.K`; each interval is
//! `{estimate, ci_low, ci_high}` at `error_bound.confidence`.

use crate::refpath::RefPath;
use serde_json::{json, Value};

/// An estimate's interval as read from its envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// The point estimate the interval is about (the envelope's `estimate`).
    pub estimate: f64,
    /// The interval's lower bound (`ci_low`, inclusive).
    pub ci_low: f64,
    /// The interval's upper bound (`ci_high`, inclusive).
    pub ci_high: f64,
    /// The two-sided confidence level (e.g. 0.95).
    pub confidence: f64,
    /// The interval's path inside the envelope (`interval`, `intervals.M_1_1`).
    pub path: String,
}

impl Interval {
    /// Does `x` lie in `[ci_low, ci_high]`?
    pub fn contains(&self, x: f64) -> bool {
        self.ci_low <= x && x <= self.ci_high
    }

    /// `"the 95% interval [a, b]"`.
    pub fn describe(&self) -> String {
        format!(
            "the {}% interval [{}, {}]",
            percent(self.confidence),
            num(self.ci_low),
            num(self.ci_high)
        )
    }

    /// `{"estimate", "ci_low", "ci_high", "confidence", "path"}` (the path relative to the
    /// step, e.g. `s1.intervals.M_1_1`, when `step` is given).
    pub fn to_json(&self, step: &str) -> Value {
        let f = tgms_operators::json::float;
        json!({"estimate": f(self.estimate), "ci_low": f(self.ci_low), "ci_high": f(self.ci_high),
            "confidence": f(self.confidence), "path": format!("{step}.{}", self.path)})
    }
}

/// A confidence level as a percentage without trailing zeros (`0.95` → `95`, `0.995` →
/// `99.5`).
pub fn percent(c: f64) -> String {
    num((c * 1e6).round() / 1e4)
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Is the envelope approximate (`approximate: true`)?
pub fn is_approximate(env: &Value) -> bool {
    env.get("approximate") == Some(&Value::Bool(true))
}

/// The interval of the estimate `rp` names in an approximate envelope: `count` (or
/// `interval.estimate`) → `interval`; `counts.K` (or `intervals.K.estimate`) →
/// `intervals.K`. `None` for exact envelopes and for other fields (exact facts such as
/// `n_events_in_window` or an interval's own ends).
pub fn interval_of(env: &Value, rp: &RefPath) -> Option<Interval> {
    if !is_approximate(env) || rp.segments.iter().any(|s| s.index.is_some()) {
        return None;
    }
    let names: Vec<&str> = rp.segments.iter().map(|s| s.name.as_str()).collect();
    let path = match names.as_slice() {
        ["count"] | ["interval", "estimate"] => "interval".to_string(),
        ["counts", k] | ["intervals", k, "estimate"] => format!("intervals.{k}"),
        _ => return None,
    };
    let iv = path.split('.').try_fold(env, |v, k| v.get(k))?;
    Some(Interval {
        estimate: iv.get("estimate")?.as_f64()?,
        ci_low: iv.get("ci_low")?.as_f64()?,
        ci_high: iv.get("ci_high")?.as_f64()?,
        confidence: env.get("error_bound")?.get("confidence")?.as_f64()?,
        path,
    })
}

/// The `approximation` member of an approximate step's evidence descriptor:
/// `{"method", "epsilon", "confidence", "seed", "relative_error"}`; `None` for exact ones
/// (whose descriptors stay as they were).
pub fn approximation(env: &Value) -> Option<Value> {
    if !is_approximate(env) {
        return None;
    }
    let eb = env.get("error_bound").cloned().unwrap_or(Value::Null);
    let sm = env.get("sampling").cloned().unwrap_or(Value::Null);
    let g = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    Some(
        json!({"method": g(&sm, "method"), "epsilon": g(&eb, "epsilon"),
        "confidence": g(&eb, "confidence"), "seed": g(&sm, "seed"),
        "relative_error": g(&eb, "relative")}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Value {
        json!({"approximate": true, "count": 10.5, "interval": {"estimate": 10.5, "ci_low": 8, "ci_high": 13},
            "counts": {"M_1_1": 2.5}, "intervals": {"M_1_1": {"estimate": 2.5, "ci_low": 1, "ci_high": 4}},
            "error_bound": {"confidence": 0.9, "relative": 0.2, "epsilon": null},
            "sampling": {"method": "m", "seed": 7}, "n_events_in_window": 40})
    }

    #[test]
    fn estimate_fields_map_to_their_intervals() {
        let e = env();
        let at = |p: &str| interval_of(&e, &RefPath::parse(p).unwrap());
        let c = at("s1.count").unwrap();
        assert_eq!((c.ci_low, c.ci_high, c.confidence), (8.0, 13.0, 0.9));
        assert_eq!(at("s1.interval.estimate"), Some(c.clone()));
        assert_eq!(c.describe(), "the 90% interval [8, 13]");
        let m = at("s1.counts.M_1_1").unwrap();
        assert_eq!(
            (m.ci_low, m.ci_high, m.path.as_str()),
            (1.0, 4.0, "intervals.M_1_1")
        );
        assert_eq!(at("s1.intervals.M_1_1.estimate"), Some(m));
        for p in [
            "s1.n_events_in_window",
            "s1.interval.ci_low",
            "s1.counts.M_9_9",
        ] {
            assert_eq!(at(p), None, "{p}");
        }
        let mut exact = e.clone();
        exact["approximate"] = json!(false);
        assert_eq!(
            interval_of(&exact, &RefPath::parse("s1.count").unwrap()),
            None
        );
        assert_eq!(
            approximation(&e),
            Some(
                json!({"method": "m", "epsilon": null, "confidence": 0.9, "seed": 7, "relative_error": 0.2})
            )
        );
        assert_eq!(approximation(&exact), None);
        assert_eq!(percent(0.95), "95");
        assert_eq!(percent(0.995), "99.5");
    }
}
