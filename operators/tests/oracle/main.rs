//! Brute-force oracles for entity_history, version_history, state_at, snapshot_subgraph,
//! diff_snapshots and the traversal and pattern operators (§12–§15, §19, §25), written from `spec/operators.md` over a plain `Vec` of stored version
//! rows (taken from the store's digest rows, not from the read paths the operators use),
//! compared byte-for-byte with the operators on randomized stores with corrections,
//! retractions, interval edges and ingests — at least 500 (store, args) cases per operator.
//! Also: diff composition and bi-temporal immutability (metamorphic), and bad input.
//!
//! One test binary, one module per operator family: [`history`] (entity_history,
//! version_history, state_at, snapshot_subgraph, diff_snapshots), [`traversal`] (the
//! traversal and pattern operators), [`series`] (graph_metric_timeseries, burst_detection,
//! neighborhood_evolution, resolve_entities), [`aggregate`] (aggregate_events), [`compute`],
//! and [`random_stores`] (the `OPS` table: every operator against its oracle on random
//! stores, and the metamorphic and paging checks). This file keeps the helpers several
//! modules share.

#[path = "../common/mod.rs"]
mod common;

mod aggregate;
mod compute;
mod history;
mod random_stores;
mod series;
mod traversal;

use common::kit::*;
use serde_json::{json, Value};

// Shared by several modules: `uid_arg` (the argument generators), the exact numerics of
// aggregate_events and compute (`dec_ratio`, `o_num_cmp`) and round9 (`o_round9`,
// `o_round9_all`).

fn uid_arg(r: &mut Rng) -> &'static str {
    if r.chance(8) {
        "zz"
    } else {
        r.pick(&UIDS)
    }
}

/// An exact decimal rendering of `n / d` (d > 0, |n|, d < 2^120) parsed as binary64: the
/// correctly rounded quotient, computed independently of the operator's binary division.
fn dec_ratio(n: i128, d: i128) -> f64 {
    assert!(d > 0);
    let neg = n < 0;
    let n = n.unsigned_abs();
    let d = d as u128;
    let mut s = format!("{}.", n / d);
    let mut r = n % d;
    let mut digits = 0;
    while r != 0 && digits < 400 {
        r *= 10;
        s.push(char::from(b'0' + (r / d) as u8));
        r %= d;
        digits += 1;
    }
    if r != 0 {
        s.push('1'); // sticky digit: never a tie
    }
    let x: f64 = s.parse().unwrap();
    if neg {
        -x
    } else {
        x
    }
}

/// Exact order of two JSON numbers of the oracle's domain (ints, and floats that are
/// multiples of 1/8).
fn o_num_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    let eighths = |v: &Value| -> Option<i128> {
        let t = v.as_number()?.as_str();
        if let Ok(i) = t.parse::<i128>() {
            return i.checked_mul(8);
        }
        let f: f64 = t.parse().ok()?;
        let e = f * 8.0;
        (e.fract() == 0.0 && e.abs() < 1e30).then_some(e as i128)
    };
    match (eighths(a), eighths(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let f = |v: &Value| v.as_number().unwrap().as_str().parse::<f64>().unwrap();
            f(a).partial_cmp(&f(b)).unwrap()
        }
    }
}

/// `round9` of §1.3 from the exact binary value: `m · 2^e · 10^9` rounded half-even.
fn o_round9(x: f64) -> f64 {
    if x.abs() >= 9007199254740992.0 || x == 0.0 {
        return x;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    if e >= 0 {
        return x;
    }
    let k = (-e) as u32;
    let p = m as u128 * 1_000_000_000u128;
    let qv = if k >= 128 {
        0
    } else {
        let mut qv = p >> k;
        let rem = p & ((1u128 << k) - 1);
        let half = 1u128 << (k - 1);
        if rem > half || (rem == half && qv % 2 == 1) {
            qv += 1;
        }
        qv
    };
    let r: f64 = format!("{qv}e-9").parse().unwrap();
    if x < 0.0 {
        -r
    } else {
        r
    }
}

fn o_round9_all(v: &mut Value) {
    match v {
        Value::Number(n) if n.as_str().contains(['.', 'e', 'E']) => {
            let x: f64 = n.as_str().parse().unwrap();
            *v = json!(o_round9(x));
        }
        Value::Array(a) => a.iter_mut().for_each(o_round9_all),
        Value::Object(m) => m.values_mut().for_each(o_round9_all),
        _ => {}
    }
}
