//! The `pair_directions` aggregate of `aggregate_events` with `pair_mode` (issue 21 item 2):
//! per folded pair `(lo, hi)` the first time, last time and count of each direction
//! (`lo_hi`: lo → hi, `hi_lo`: hi → lo), who sent first (`initiator`), the reciprocity lag
//! (time from the first event one way to the first event the other way) and, with
//! `of: "prop"`, the sum and the last numeric value of a property per direction.
//!
//! Events are taken in `(vt_s, eid)` order. A self pair (`src = dst`) has only the `lo_hi`
//! direction. Non-numeric property values (absent, string, boolean, null, array, object) are
//! excluded from the sum and the last value and counted in `prop_coercion`, like every other
//! aggregate that reads a property.

use super::compute::{fsum, num, Num};
use crate::error::OpError;
use serde_json::{json, Value};

/// The output columns of one `pair_directions` aggregate, in row order.
pub fn columns(prop: Option<&str>) -> Vec<String> {
    let mut c: Vec<String> = [
        "lo_hi_count",
        "lo_hi_first_vt_s",
        "lo_hi_last_vt_s",
        "hi_lo_count",
        "hi_lo_first_vt_s",
        "hi_lo_last_vt_s",
        "initiator",
        "reciprocity_lag_us",
    ]
    .map(String::from)
    .to_vec();
    if let Some(p) = prop {
        for d in ["lo_hi", "hi_lo"] {
            c.push(format!("{d}_sum_prop_{p}"));
            c.push(format!("{d}_last_prop_{p}"));
        }
    }
    c
}

/// One event of a pair: its time, eid, source uid and (when a property is read) the value.
pub struct PairEvent<'a> {
    /// The event's valid time (µs).
    pub vt_s: i64,
    /// The event's eid: the tie-break between events of equal `vt_s`.
    pub eid: String,
    /// The uid of the event's source (decides `lo_hi` or `hi_lo`).
    pub src: &'a str,
    /// The value of the property read, when one is read and the event has it.
    pub prop: Option<&'a Value>,
}

#[derive(Default)]
struct Direction {
    count: u64,
    first: Option<i64>,
    last: Option<i64>,
    values: Vec<Num>,
    last_value: Option<Value>,
}

/// The columns' values for the events of one folded pair whose smaller uid is `lo`, and the
/// number of property values excluded. `events` may be in any order.
pub fn values(
    mut events: Vec<PairEvent<'_>>,
    lo: &str,
    prop: Option<&str>,
) -> Result<(Vec<(String, Value)>, u64), OpError> {
    events.sort_by(|a, b| (a.vt_s, &a.eid).cmp(&(b.vt_s, &b.eid)));
    let mut dirs = [Direction::default(), Direction::default()];
    let mut excluded = 0u64;
    for e in &events {
        // lo → hi (a self pair included: there src = dst = lo) is direction 0.
        let d = &mut dirs[usize::from(e.src != lo)];
        d.count += 1;
        d.first.get_or_insert(e.vt_s);
        d.last = Some(e.vt_s);
        if prop.is_some() {
            match e.prop.map(num).transpose()?.flatten() {
                Some(n) => {
                    d.values.push(n);
                    d.last_value = e.prop.cloned();
                }
                None => excluded += 1,
            }
        }
    }
    let initiator = events.first().map(|e| e.src);
    let lag = match (dirs[0].first, dirs[1].first) {
        (Some(a), Some(b)) => Some((a - b).abs()),
        _ => None,
    };
    let opt = |v: Option<i64>| v.map_or(Value::Null, |x| json!(x));
    let mut out: Vec<Value> = Vec::new();
    for d in &dirs {
        out.push(json!(d.count));
        out.push(opt(d.first));
        out.push(opt(d.last));
    }
    out.push(initiator.map_or(Value::Null, |s| json!(s)));
    out.push(opt(lag));
    if prop.is_some() {
        for d in &dirs {
            out.push(sum(&d.values)?);
            out.push(d.last_value.clone().unwrap_or(Value::Null));
        }
    }
    Ok((columns(prop).into_iter().zip(out).collect(), excluded))
}

/// Exact for ints; once a float takes part, the correctly rounded sum of the values each
/// converted to binary64 (as the blessed mean of `operators.md` §21.1); null for no values.
fn sum(vals: &[Num]) -> Result<Value, OpError> {
    if vals.is_empty() {
        return Ok(Value::Null);
    }
    let mut acc: i128 = 0;
    for v in vals {
        match v {
            Num::I(i) => {
                acc = acc
                    .checked_add(*i)
                    .ok_or_else(|| OpError::invalid("integer out of supported range"))?
            }
            Num::F(_) => {
                let f = fsum(vals.iter().map(|v| match v {
                    Num::I(i) => *i as f64,
                    Num::F(x) => *x,
                }));
                return Num::F(f).to_value();
            }
        }
    }
    Num::I(acc).to_value()
}
