//! `compute` (O13, `operators.md` §21): pure post-processing of values produced by earlier
//! steps — reductions, ranking, filtering, arithmetic, set operations, row derivation, joins
//! and Allen interval relations. Never reads the store; no cost estimator.
//!
//! Value model (§21.1): ints are exact `i128` (beyond it: `E_INVALID_ARG "integer out of
//! supported range"`), floats binary64; booleans are never numbers except in `filter`
//! comparisons (TGMS's rule) and the `topk` ranking key.

use crate::args::Args;
use crate::error::OpError;
use crate::json::{float, render, to_string};
use crate::output::Output;
use crate::registry::{common, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Number, Value};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;

const MANUAL: &str = "Arithmetic and post-processing over earlier results — never do arithmetic in arguments or in the answer text. Over rows (`input` = `{\"$ref\": \"sN.rows\"}`): `count`, `sum`, `min`, `max`, `mean`, `median` of `field` (drop nulls first with `filter` `not_null`); with `group_by` one row per group. `topk` ranks by `field` descending (`k` rows, or `pct` percent rounded up; `side: \"bottom\"` takes the exact complement; with `group_by` per group). `filter` compares `field` with `value` or with another column `field2`. Over two scalars (`x`, `y`, usually `$ref`s): `ratio`, `diff`, `percent`. Sets: `intersect`, `difference`, `union` of `input` and `other` (optionally projecting `field`/`other_field`). `derive` adds column `into` = `field op (field2 | value)`; `join` adds the matching `other` row's columns prefixed `r_` (`how: \"left\"` keeps unmatched rows, filled with `fill`). `interval_relation` names the Allen relation of intervals `a` and `b`. Scalar arithmetic over `x` (and `y`): `abs`, `add`, `sub`, `mul`, `div`. `join` keys must be unique on both sides unless `cardinality` says otherwise (`many_to_one`, `one_to_many`, `many_to_many`: one output row per matching pair). `topk` with `side: \"bottom\"` returns the bottom rows in ascending order; rows tied on `field` are broken by the row's canonical JSON (`ties: \"break\"`, the behaviour when absent), or with `ties: \"include\"` every row tied with the last one taken is returned too and `ties_included` says how many were added. `compare` answers yes/no: `value` is `true` when `x cmp y` holds (`cmp` one of `eq`, `ne`, `lt`, `le`, `gt`, `ge`), e.g. `{\"fn\": \"compare\", \"x\": {\"$ref\": \"s1.count\"}, \"cmp\": \"gt\", \"y\": 100}`. In a plan, a compute step whose `input` references an earlier step reads that step's complete result (not its page) up to the executor's row budget, and returns all its rows unless `limit` is given. Scalar results are in `value`; row results in `rows`.";

const FNS: [&str; 23] = [
    "count",
    "sum",
    "min",
    "max",
    "mean",
    "median",
    "topk",
    "filter",
    "ratio",
    "diff",
    "percent",
    "intersect",
    "difference",
    "union",
    "derive",
    "join",
    "interval_relation",
    "abs",
    "add",
    "sub",
    "mul",
    "div",
    "compare",
];

fn str_or_null() -> Value {
    json!({"type": ["string", "null"]})
}

/// An interval bound: any integer, or a time string (docs/times.md) resolved to µs.
fn instant() -> Value {
    json!({"type": ["integer", "string"], "pattern": crate::timeparse::TIME_PATTERN})
}

fn interval() -> Value {
    json!({"type": ["object", "null"], "additionalProperties": false,
        "properties": {"start": instant(), "end": instant()},
        "required": ["start", "end"]})
}

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "compute",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("fn", json!({"type": "string", "enum": FNS})),
            // No item cap: a plan's compute step reads complete results up to the executor's
            // row budget (`max_reducer_rows`).
            ArgDecl::opt("input", json!({"type": ["array", "null"]}), Value::Null),
            ArgDecl::opt("field", str_or_null(), Value::Null),
            ArgDecl::opt(
                "k",
                json!({"type": ["integer", "null"], "minimum": 1, "maximum": 1000}),
                Value::Null,
            ),
            ArgDecl::opt(
                "pct",
                json!({"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 100}),
                Value::Null,
            ),
            ArgDecl::opt(
                "side",
                json!({"type": "string", "enum": ["top", "bottom"]}),
                json!("top"),
            ),
            ArgDecl::opt(
                "cmp",
                json!({"type": ["string", "null"],
                    "enum": ["eq", "ne", "lt", "le", "gt", "ge", "contains", "is_null", "not_null", null]}),
                Value::Null,
            ),
            ArgDecl::opt("value", json!({}), Value::Null),
            ArgDecl::opt("field2", str_or_null(), Value::Null),
            ArgDecl::opt(
                "op",
                json!({"type": ["string", "null"],
                    "enum": ["add", "sub", "mul", "div", "floordiv", "concat", null]}),
                Value::Null,
            ),
            ArgDecl::opt(
                "into",
                json!({"type": ["string", "null"], "minLength": 1}),
                Value::Null,
            ),
            ArgDecl::opt("on", str_or_null(), Value::Null),
            ArgDecl::opt("other_on", str_or_null(), Value::Null),
            ArgDecl::opt(
                "how",
                json!({"type": "string", "enum": ["inner", "left"]}),
                json!("inner"),
            ),
            ArgDecl::opt("fill", json!({}), Value::Null),
            ArgDecl::opt(
                "other_prefix",
                json!({"type": "string", "minLength": 1}),
                json!("r_"),
            ),
            ArgDecl::opt("other", json!({"type": ["array", "null"]}), Value::Null),
            ArgDecl::opt("other_field", str_or_null(), Value::Null),
            ArgDecl::opt("x", json!({"type": ["number", "null"]}), Value::Null),
            ArgDecl::opt("y", json!({"type": ["number", "null"]}), Value::Null),
            ArgDecl::opt("a", interval(), Value::Null),
            ArgDecl::opt("b", interval(), Value::Null),
            ArgDecl::opt("group_by", str_or_null(), Value::Null),
            // Absent unless given, so the args_echo of existing calls is unchanged.
            // Absent unless given (issue 21): `include` keeps every row tied with the k-th.
            ArgDecl::opt_absent(
                "ties",
                json!({"type": "string", "enum": ["include", "break"]}),
            ),
            ArgDecl::opt_absent(
                "cardinality",
                json!({"type": "string",
                    "enum": ["one_to_one", "many_to_one", "one_to_many", "many_to_many"]}),
            ),
            common::limit(),
        ],
        validators: vec![],
        cost: None,
        coeff: 0.0,
        outputs: Outputs::default()
            .field("value", "any")
            .rows("any", RowKey::Row)
            .field("ties_included", "int")
            .conditional(&[
                "value",
                "rows",
                "rows_total",
                "cursor",
                "set_digest",
                "ties_included",
            ])
            .build(),
        kernel,
    }
}

// ---------------------------------------------------------------------------------------
// Numbers.

/// A numeric value: an exact int or a binary64 float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An exact integer (§21.1: beyond `i128` is `E_INVALID_ARG`).
    I(i128),
    /// A binary64 float.
    F(f64),
}

fn range_err() -> OpError {
    OpError::invalid("integer out of supported range")
}

fn div0() -> OpError {
    OpError::invalid("division by zero")
}

/// The numeric value of a JSON value (`None` for non-numbers, booleans included).
pub fn num(v: &Value) -> Result<Option<Num>, OpError> {
    match v {
        Value::Number(n) => num_of(n).map(Some),
        _ => Ok(None),
    }
}

fn num_of(n: &Number) -> Result<Num, OpError> {
    let t = n.as_str();
    if crate::json::number_is_float(n) {
        Ok(Num::F(t.parse::<f64>().map_err(|_| range_err())?))
    } else {
        t.parse::<i128>().map(Num::I).map_err(|_| range_err())
    }
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(x) => x,
        }
    }
    fn is_zero(self) -> bool {
        match self {
            Num::I(i) => i == 0,
            Num::F(x) => x == 0.0,
        }
    }
    /// The JSON value; a non-finite float fails like pipeline step 8.
    pub fn to_value(self) -> Result<Value, OpError> {
        match self {
            Num::I(i) => Ok(int_value(i)),
            Num::F(x) if x.is_finite() => Ok(float(x)),
            Num::F(_) => Err(OpError::invalid("non-finite float in operator output")),
        }
    }
}

/// An int as a JSON number (any `i128`).
pub fn int_value(i: i128) -> Value {
    serde_json::from_str::<Number>(&i.to_string())
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Exact comparison of an int with a finite or infinite float.
fn cmp_int_float(i: i128, x: f64) -> Ordering {
    const TWO127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if x.is_nan() {
        return Ordering::Less;
    }
    if x >= TWO127 {
        return Ordering::Less;
    }
    if x < -TWO127 {
        return Ordering::Greater;
    }
    let fl = x.floor();
    let fi = fl as i128; // exact: integral and in range
    match i.cmp(&fi) {
        Ordering::Equal if x > fl => Ordering::Less,
        o => o,
    }
}

/// Exact numeric comparison across int and float.
pub fn cmp_num(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::I(x), Num::I(y)) => x.cmp(&y),
        (Num::F(x), Num::F(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Num::I(x), Num::F(y)) => cmp_int_float(x, y),
        (Num::F(x), Num::I(y)) => cmp_int_float(y, x).reverse(),
    }
}

/// `fl(n / d)` correctly rounded (ties to even) for ints, `d != 0`.
pub fn ratio_f64(n: i128, d: i128) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let neg = (n < 0) != (d < 0);
    let (n, d) = (n.unsigned_abs(), d.unsigned_abs());
    let q = n / d;
    let mut rem = n % d;
    const TOP: u128 = 1 << 54;
    // m: 54 significant bits (53 + a guard bit), value ≈ m · 2^e, sticky = bits below.
    let (mut m, mut e, sticky): (u128, i32, bool) = if q >= TOP {
        let bits = 128 - q.leading_zeros();
        let shift = bits - 54;
        let m = q >> shift;
        let lost = q & ((1u128 << shift) - 1);
        (m, shift as i32, lost != 0 || rem != 0)
    } else {
        let mut m = q;
        let mut e = 0i32;
        while m < (TOP >> 1) {
            // rem < d <= 2^127, so 2·rem fits.
            let r2 = rem << 1;
            m <<= 1;
            if r2 >= d {
                m |= 1;
                rem = r2 - d;
            } else {
                rem = r2;
            }
            e -= 1;
        }
        // one more bit for the guard
        let r2 = rem << 1;
        m <<= 1;
        if r2 >= d {
            m |= 1;
            rem = r2 - d;
        } else {
            rem = r2;
        }
        e -= 1;
        (m, e, rem != 0)
    };
    // Normalize m into [2^53, 2^54).
    while m >= TOP {
        // cannot happen with the construction above, kept for safety
        m >>= 1;
        e += 1;
    }
    let guard = m & 1;
    m >>= 1;
    e += 1;
    if guard == 1 && (sticky || m & 1 == 1) {
        m += 1;
        if m == (1u128 << 53) {
            m >>= 1;
            e += 1;
        }
    }
    let v = (m as f64) * 2f64.powi(e);
    if neg {
        -v
    } else {
        v
    }
}

/// `floor_divmod(n, d)` for ints, `d != 0`.
fn floor_divmod(n: i128, d: i128) -> Result<(i128, i128), OpError> {
    let mut q = n.checked_div(d).ok_or_else(range_err)?;
    let mut r = n.checked_rem(d).ok_or_else(range_err)?;
    if r != 0 && ((r < 0) != (d < 0)) {
        q -= 1;
        r += d;
    }
    Ok((q, r))
}

/// The blessed quotient of §21.1.
pub fn quotient(n: Num, d: Num) -> Result<Num, OpError> {
    if d.is_zero() {
        return Err(div0());
    }
    match (n, d) {
        (Num::I(a), Num::I(b)) => {
            let (q, r) = floor_divmod(a, b)?;
            if r == 0 {
                Ok(Num::I(q))
            } else {
                Ok(Num::F(q as f64 + ratio_f64(r, b)))
            }
        }
        _ => Ok(Num::F(n.f() / d.f())),
    }
}

/// Python's `math.fsum`: the correctly rounded sum of binary64 values.
pub fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for mut x in values {
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    let mut n = partials.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        let yr = x - hi;
        if y == yr {
            hi = x;
        }
    }
    hi
}

/// The blessed mean of §21.1 (non-empty).
pub fn mean(values: &[Num]) -> Result<Num, OpError> {
    let n = values.len() as i128;
    if values.iter().all(|v| matches!(v, Num::I(_))) {
        let mut s: i128 = 0;
        for v in values {
            if let Num::I(i) = v {
                s = s.checked_add(*i).ok_or_else(range_err)?;
            }
        }
        quotient(Num::I(s), Num::I(n))
    } else {
        Ok(Num::F(fsum(values.iter().map(|v| v.f())) / n as f64))
    }
}

fn sum(values: &[Num]) -> Result<Num, OpError> {
    let mut acc = Num::I(0);
    for v in values {
        acc = match (acc, *v) {
            (Num::I(a), Num::I(b)) => Num::I(a.checked_add(b).ok_or_else(range_err)?),
            (a, b) => Num::F(a.f() + b.f()),
        };
    }
    Ok(acc)
}

fn arith(op: &str, l: Num, r: Num) -> Result<Num, OpError> {
    match (l, r) {
        (Num::I(a), Num::I(b)) => {
            let v = match op {
                "add" => a.checked_add(b),
                "sub" => a.checked_sub(b),
                _ => a.checked_mul(b),
            };
            v.map(Num::I).ok_or_else(range_err)
        }
        _ => {
            let (a, b) = (l.f(), r.f());
            Ok(Num::F(match op {
                "add" => a + b,
                "sub" => a - b,
                _ => a * b,
            }))
        }
    }
}

fn floordiv(l: Num, r: Num) -> Result<Num, OpError> {
    if let (Num::I(a), Num::I(b)) = (l, r) {
        if b == 0 {
            return Err(div0());
        }
        return Ok(Num::I(floor_divmod(a, b)?.0));
    }
    let (x, w) = (l.f(), r.f());
    if w == 0.0 {
        return Err(div0());
    }
    let m = x % w;
    let mut d = (x - m) / w;
    if m != 0.0 && ((w < 0.0) != (m < 0.0)) {
        d -= 1.0;
    }
    let f = if d != 0.0 {
        let mut f = d.floor();
        if d - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(x / w)
    };
    Ok(Num::F(f))
}

// ---------------------------------------------------------------------------------------
// Keys: canonical mixed order and key equality.

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn rank(v: &Value) -> Result<u8, OpError> {
    Ok(match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(n) => match num_of(n)? {
            Num::F(_) => 2,
            Num::I(_) => 3,
        },
        Value::String(_) => 4,
        _ => 5,
    })
}

/// Canonical mixed order of two scalars.
fn key_cmp(a: &Value, b: &Value) -> Result<Ordering, OpError> {
    let (ra, rb) = (rank(a)?, rank(b)?);
    if ra != rb {
        return Ok(ra.cmp(&rb));
    }
    Ok(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => cmp_num(num_of(x)?, num_of(y)?),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => Ordering::Equal,
    })
}

/// Key equality of §21.1 (scalars).
fn key_eq(a: &Value, b: &Value) -> Result<bool, OpError> {
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => cmp_num(num_of(x)?, num_of(y)?) == Ordering::Equal,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    })
}

/// The grouping order: like the canonical mixed order but ints and floats share one rank,
/// so that equal numeric keys (`1`, `1.0`) are adjacent.
fn group_cmp(a: &Value, b: &Value) -> Result<Ordering, OpError> {
    let class = |v: &Value| -> Result<u8, OpError> {
        Ok(match rank(v)? {
            3 => 2,
            x => x,
        })
    };
    let (ra, rb) = (class(a)?, class(b)?);
    if ra != rb {
        return Ok(ra.cmp(&rb));
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Ok(cmp_num(num_of(x)?, num_of(y)?)),
        _ => key_cmp(a, b),
    }
}

fn sort_fallible<T>(
    v: &mut [T],
    mut cmp: impl FnMut(&T, &T) -> Result<Ordering, OpError>,
) -> Result<(), OpError> {
    let mut err = None;
    v.sort_by(|a, b| match cmp(a, b) {
        Ok(o) => o,
        Err(e) => {
            err.get_or_insert(e);
            Ordering::Equal
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Distinct keys by key equality: `(representative = first occurrence, member indices in
/// occurrence order)`, in canonical mixed order of the representatives.
fn group_keys(keys: &[Value]) -> Result<Vec<(Value, Vec<usize>)>, OpError> {
    if keys.iter().all(Value::is_string) {
        return Ok(string_groups(keys));
    }
    sorted_groups(keys)
}

/// [`group_keys`] for keys of any scalar type: sorted in the grouping order, then equal
/// neighbours merged.
fn sorted_groups(keys: &[Value]) -> Result<Vec<(Value, Vec<usize>)>, OpError> {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    // Stable: equal keys stay in occurrence order.
    sort_fallible(&mut idx, |&i, &j| group_cmp(&keys[i], &keys[j]))?;
    let mut out: Vec<(Value, Vec<usize>)> = Vec::new();
    for i in idx {
        let same = match out.last() {
            Some((_, m)) => key_eq(&keys[m[0]], &keys[i])?,
            None => false,
        };
        match out.last_mut() {
            Some(last) if same => last.1.push(i),
            _ => out.push((keys[i].clone(), vec![i])),
        }
    }
    sort_fallible(&mut out, |a, b| key_cmp(&a.0, &b.0))?;
    Ok(out)
}

/// [`group_keys`] when every key is a string: two strings are one key exactly when they are
/// equal, so the groups are found by hashing instead of sorting every key (the same groups,
/// members in occurrence order, groups in key order).
fn string_groups(keys: &[Value]) -> Vec<(Value, Vec<usize>)> {
    let mut at: FxHashMap<&str, usize> = FxHashMap::default();
    let mut out: Vec<(Value, Vec<usize>)> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let s = k.as_str().unwrap_or_default();
        match at.entry(s) {
            Entry::Occupied(e) => out[*e.get()].1.push(i),
            Entry::Vacant(e) => {
                e.insert(out.len());
                out.push((k.clone(), vec![i]));
            }
        }
    }
    // Distinct strings: byte order is the key order (`key_cmp`).
    out.sort_unstable_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
    out
}

// ---------------------------------------------------------------------------------------
// Filter comparisons (TGMS's rule: booleans compare as 1/0 with numbers).

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if crate::json::number_is_float(n) => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn numlike(v: &Value) -> Result<Option<Num>, OpError> {
    match v {
        Value::Bool(b) => Ok(Some(Num::I(i128::from(*b)))),
        _ => num(v),
    }
}

fn f_eq(a: &Value, b: &Value) -> Result<bool, OpError> {
    if let (Some(x), Some(y)) = (numlike(a)?, numlike(b)?) {
        return Ok(cmp_num(x, y) == Ordering::Equal);
    }
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (p, q) in x.iter().zip(y) {
                if !f_eq(p, q)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() || x.keys().any(|k| !y.contains_key(k)) {
                return Ok(false);
            }
            for (k, p) in x {
                if !f_eq(p, &y[k])? {
                    return Ok(false);
                }
            }
            true
        }
        _ => false,
    })
}

fn f_order(a: &Value, b: &Value) -> Result<Ordering, OpError> {
    if let (Some(x), Some(y)) = (numlike(a)?, numlike(b)?) {
        return Ok(cmp_num(x, y));
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !f_eq(p, q)? {
                    return f_order(p, q);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => Err(OpError::invalid(format!(
            "cannot order {} and {}",
            type_name(a),
            type_name(b)
        ))),
    }
}

fn test(x: &Value, cmp: &str, v: &Value) -> Result<bool, OpError> {
    match cmp {
        "is_null" => return Ok(x.is_null()),
        "not_null" => return Ok(!x.is_null()),
        "contains" => {
            return Ok(match (x, v) {
                (Value::String(s), Value::String(t)) => s.contains(t.as_str()),
                (Value::Array(a), _) => {
                    for e in a {
                        if f_eq(e, v)? {
                            return Ok(true);
                        }
                    }
                    false
                }
                _ => false,
            })
        }
        _ => {}
    }
    if x.is_null() || v.is_null() {
        return Err(OpError::invalid(
            "cannot compare a null; use is_null/not_null",
        ));
    }
    Ok(match cmp {
        "eq" => f_eq(x, v)?,
        "ne" => !f_eq(x, v)?,
        "lt" => f_order(x, v)? == Ordering::Less,
        "le" => f_order(x, v)? != Ordering::Greater,
        "gt" => f_order(x, v)? == Ordering::Greater,
        _ => f_order(x, v)? != Ordering::Less,
    })
}

// ---------------------------------------------------------------------------------------
// Allen relations (§21.4).

/// The Allen relation of `[as_, ae)` relative to `[bs, be)`.
pub fn allen(as_: i128, ae: i128, bs: i128, be: i128) -> &'static str {
    if ae < bs {
        "before"
    } else if ae == bs {
        "meets"
    } else if be < as_ {
        "after"
    } else if be == as_ {
        "met_by"
    } else if as_ == bs && ae == be {
        "equals"
    } else if as_ == bs {
        if ae < be {
            "starts"
        } else {
            "started_by"
        }
    } else if ae == be {
        if as_ > bs {
            "finishes"
        } else {
            "finished_by"
        }
    } else if bs < as_ && ae < be {
        "during"
    } else if as_ < bs && be < ae {
        "contains"
    } else if as_ < bs {
        "overlaps"
    } else {
        "overlapped_by"
    }
}

// ---------------------------------------------------------------------------------------
// The kernel.

fn inv(m: impl Into<String>) -> OpError {
    OpError::invalid(m)
}

fn nn<'a>(args: &'a Args, k: &str) -> Option<&'a Value> {
    args.get(k).filter(|v| !v.is_null())
}

fn s_arg<'a>(args: &'a Args, k: &str) -> Option<&'a str> {
    nn(args, k).and_then(Value::as_str)
}

fn list<'a>(args: &'a Args, k: &str) -> Option<&'a Vec<Value>> {
    nn(args, k).and_then(Value::as_array)
}

enum Res {
    Scalar(Value),
    Rows(Vec<Value>),
    /// `topk` with `ties: "include"`: the rows and how many tied rows were kept beyond the cut.
    Tied(Vec<Value>, usize),
}

fn kernel(_ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    match evaluate(args)? {
        Res::Scalar(v) => {
            out.set("value", v);
            out.set("truncated", Value::Bool(false));
        }
        Res::Rows(rows) => {
            out.paged("rows", rows)?;
        }
        Res::Tied(rows, extra) => {
            out.paged("rows", rows)?;
            out.set("ties_included", json!(extra));
        }
    }
    Ok(())
}

fn render_concat(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => to_string(other),
    }
}

/// The function and `group_by` of a call, after the checks that apply to every function.
fn fn_and_group_by(args: &Args) -> Result<(&str, Option<&str>), OpError> {
    let f = args.str("fn")?;
    let group_by = s_arg(args, "group_by");
    // 1
    if group_by.is_some() && !["count", "sum", "min", "max", "mean", "median", "topk"].contains(&f)
    {
        return Err(inv(
            "group_by is only supported for count, sum, min, max, mean, median, topk",
        ));
    }
    if f != "topk" && nn(args, "ties").is_some() {
        return Err(inv("ties is only valid for topk"));
    }
    Ok((f, group_by))
}

/// The positions of the rows of `input` that a row-selecting call can return, in list order,
/// read from the rows' `field`, `field2` and `group_by` columns alone: the rows a `filter`
/// with `field` keeps, or for `topk` with `k` every row ranked at or above the `k`th of its
/// group (ties with the `k`th included, since `topk` breaks them by the whole row's
/// canonical JSON). The same call over the whole rows at these positions returns what it
/// returns over every row; the executor reads only those rows whole
/// (`docs/plan-language.md`, complete results). `None` for other calls (`topk` with `pct`,
/// `filter` of whole rows, other functions); the call's own error where it fails over
/// these columns (the error it gives over the whole rows).
pub fn selected_rows(args: &Args, input: &[Value]) -> Result<Option<Vec<usize>>, OpError> {
    let (f, group_by) = fn_and_group_by(args)?;
    match f {
        "topk" => topk_candidates(args, input, group_by),
        "filter" if s_arg(args, "field").is_some() => filter_positions(args, input).map(Some),
        _ => Ok(None),
    }
}

fn evaluate(args: &Args) -> Result<Res, OpError> {
    let (f, group_by) = fn_and_group_by(args)?;
    match f {
        "interval_relation" => interval_relation(args),
        "derive" => derive(args),
        "join" => join(args),
        "intersect" | "difference" | "union" => sets(args, f),
        "ratio" | "diff" | "percent" | "add" | "sub" | "mul" | "div" => scalar2(args, f),
        "abs" => abs(args),
        "compare" => compare(args),
        _ => {
            let Some(input) = list(args, "input") else {
                return Err(inv(format!("compute fn={f} requires input")));
            };
            if let (Some(g), true) = (
                group_by,
                ["count", "sum", "min", "max", "mean", "median"].contains(&f),
            ) {
                return grouped(args, f, g, input);
            }
            match f {
                "count" => Ok(Res::Scalar(json!(input.len()))),
                "topk" => topk(args, input, group_by),
                "filter" => filter(args, input),
                _ => {
                    let field = s_arg(args, "field");
                    let vals = values_of(f, input.iter(), field)?;
                    reduce(f, &vals).map(Res::Scalar)
                }
            }
        }
    }
}

fn interval_relation(args: &Args) -> Result<Res, OpError> {
    let bad = || inv("interval_relation requires a and b with start < end");
    let iv = |k: &str| -> Result<(i128, i128), OpError> {
        let o = nn(args, k).ok_or_else(bad)?;
        let g = |f: &str| -> Result<i128, OpError> {
            match o.get(f) {
                Some(Value::Number(n)) => match num_of(n)? {
                    Num::I(i) => Ok(i),
                    Num::F(x) => Ok(x as i128),
                },
                _ => Err(bad()),
            }
        };
        let (s, e) = (g("start")?, g("end")?);
        if s < e {
            Ok((s, e))
        } else {
            Err(bad())
        }
    };
    let (a, b) = (iv("a")?, iv("b")?);
    Ok(Res::Scalar(json!(allen(a.0, a.1, b.0, b.1))))
}

fn derive(args: &Args) -> Result<Res, OpError> {
    let (input, field, op, into) = (
        list(args, "input"),
        s_arg(args, "field"),
        s_arg(args, "op"),
        s_arg(args, "into"),
    );
    let (f2, val) = (s_arg(args, "field2"), nn(args, "value"));
    let (Some(input), Some(field), Some(op), Some(into), true) =
        (input, field, op, into, f2.is_some() != val.is_some())
    else {
        return Err(inv(
            "derive requires input, field, op, into and exactly one of field2 or value",
        ));
    };
    let mut rows = Vec::with_capacity(input.len());
    for row in input {
        let Value::Object(m) = row else {
            return Err(inv("derive rows must be objects"));
        };
        if m.contains_key(into) {
            return Err(inv(format!("derive: column '{into}' already exists")));
        }
        let missing = |f: &str| inv(format!("derive: row has no field '{f}'"));
        let l = m.get(field).ok_or_else(|| missing(field))?;
        let r = match f2 {
            Some(f2) => m.get(f2).ok_or_else(|| missing(f2))?,
            None => val.unwrap_or(&Value::Null),
        };
        let v = if op == "concat" {
            Value::String(format!("{}|{}", render_concat(l), render_concat(r)))
        } else {
            let (Some(x), Some(y)) = (num(l)?, num(r)?) else {
                if op == "div" || op == "floordiv" {
                    return Err(inv(format!("derive {op} needs numbers")));
                }
                return Err(inv(format!("derive {op} needs numbers")));
            };
            match op {
                "div" => quotient(x, y)?,
                "floordiv" => floordiv(x, y)?,
                _ => arith(op, x, y)?,
            }
            .to_value()?
        };
        let mut m = m.clone();
        m.insert(into.to_string(), v);
        rows.push(Value::Object(m));
    }
    Ok(Res::Rows(rows))
}

fn join(args: &Args) -> Result<Res, OpError> {
    let (Some(input), Some(other), Some(on)) =
        (list(args, "input"), list(args, "other"), s_arg(args, "on"))
    else {
        return Err(inv("join requires input, other and on"));
    };
    let other_on = s_arg(args, "other_on").unwrap_or(on);
    let prefix = args.str("other_prefix")?;
    let left_join = args.str("how")? == "left";
    let fill = args.get("fill").cloned().unwrap_or(Value::Null);
    // Which sides may repeat a key (issue 21): the default one_to_one keeps §21.2 rule 4.
    let (left_many, right_many) = match s_arg(args, "cardinality") {
        Some("many_to_one") => (true, false),
        Some("one_to_many") => (false, true),
        Some("many_to_many") => (true, true),
        _ => (false, false),
    };
    let keys_of =
        |rows: &[Value], k: &str, side: &str, many: bool| -> Result<Vec<Value>, OpError> {
            let mut keys = Vec::with_capacity(rows.len());
            for r in rows {
                let key = r
                    .as_object()
                    .and_then(|m| m.get(k))
                    .ok_or_else(|| inv(format!("join: {side} row without key '{k}'")))?;
                if !is_scalar(key) {
                    return Err(inv("join keys must be scalars"));
                }
                keys.push(key.clone());
            }
            if many {
                return Ok(keys);
            }
            // The first row (in order) whose key equals an earlier row's key.
            let dup = group_keys(&keys)?
                .iter()
                .filter_map(|g| g.1.get(1).copied())
                .min();
            if let Some(i) = dup {
                let fix = match (
                    side,
                    left_many || side == "input",
                    right_many || side == "other",
                ) {
                    (_, true, true) => "many_to_many",
                    ("other", _, _) => "one_to_many",
                    _ => "many_to_one",
                };
                return Err(OpError::with(
                    crate::error::Code::InvalidArg,
                    format!("join: duplicate key {} in {side}", render(&keys[i])),
                    json!({"repair": {"cardinality": fix}}),
                ));
            }
            Ok(keys)
        };
    let rkeys = keys_of(other, other_on, "other", right_many)?;
    let lkeys = keys_of(input, on, "input", left_many)?;
    // Columns of the right side for fills: every column of any other row plus other_on.
    let mut rcols: Vec<String> = other
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys().cloned())
        .collect();
    rcols.push(other_on.to_string());
    rcols.sort();
    rcols.dedup();
    // Right rows grouped by key, in the grouping order (equal numeric keys adjacent), so a
    // left key finds its matches by binary search.
    let mut right = group_keys(&rkeys)?;
    sort_fallible(&mut right, |a, b| group_cmp(&a.0, &b.0))?;
    let matches_of = |k: &Value| -> Result<&[usize], OpError> {
        let (mut lo, mut hi) = (0, right.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match group_cmp(&right[mid].0, k)? {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(&right[mid].1),
            }
        }
        Ok(&[])
    };
    // Left rows in canonical key order (rows of one key in input order); each left row once
    // per matching right row (in `other` order).
    let mut rows = Vec::new();
    for (k, members) in group_keys(&lkeys)? {
        let matched = matches_of(&k)?;
        for &li in &members {
            let base = input[li].as_object().cloned().unwrap_or_default();
            let adds: Vec<Vec<(String, Value)>> = if !matched.is_empty() {
                matched
                    .iter()
                    .map(|&j| {
                        other[j]
                            .as_object()
                            .map(|o| o.iter().map(|(c, v)| (c.clone(), v.clone())).collect())
                            .unwrap_or_default()
                    })
                    .collect()
            } else if left_join {
                vec![rcols.iter().map(|c| (c.clone(), fill.clone())).collect()]
            } else {
                continue;
            };
            for add in adds {
                let mut m = base.clone();
                for (c, v) in add {
                    let name = format!("{prefix}{c}");
                    if m.contains_key(&name) {
                        return Err(inv(format!(
                            "join: column '{name}' already exists in input"
                        )));
                    }
                    m.insert(name, v);
                }
                rows.push(Value::Object(m));
            }
        }
    }
    Ok(Res::Rows(rows))
}

fn sets(args: &Args, f: &str) -> Result<Res, OpError> {
    let (Some(input), Some(other)) = (list(args, "input"), list(args, "other")) else {
        return Err(inv(format!("{f} requires input and other")));
    };
    let field = s_arg(args, "field");
    let ofield = s_arg(args, "other_field").or(field);
    let members = |rows: &[Value], fld: Option<&str>| -> Result<Vec<Value>, OpError> {
        rows.iter()
            .map(|r| {
                let m = match fld {
                    Some(k) => r
                        .as_object()
                        .and_then(|o| o.get(k))
                        .ok_or_else(|| inv(format!("{f}: row has no field '{k}'")))?,
                    None => r,
                };
                if !is_scalar(m) {
                    return Err(inv("set members must be scalars"));
                }
                Ok(m.clone())
            })
            .collect()
    };
    let a = members(input, field)?;
    let b = members(other, ofield)?;
    let na = a.len();
    let all: Vec<Value> = a.into_iter().chain(b).collect();
    let groups = group_keys(&all)?;
    let rows: Vec<Value> = groups
        .into_iter()
        .filter(|(_, m)| {
            let in_a = m[0] < na;
            let in_b = m.iter().any(|&i| i >= na);
            match f {
                "union" => true,
                "intersect" => in_a && in_b,
                _ => in_a && !in_b,
            }
        })
        .map(|(k, _)| k)
        .collect();
    Ok(Res::Rows(rows))
}

fn scalar2(args: &Args, f: &str) -> Result<Res, OpError> {
    let (Some(x), Some(y)) = (nn(args, "x"), nn(args, "y")) else {
        return Err(inv(format!("{f} requires x and y")));
    };
    let (Some(x), Some(y)) = (num(x)?, num(y)?) else {
        return Err(inv(format!("{f} requires x and y")));
    };
    let v = match f {
        "ratio" | "div" => quotient(x, y)?,
        "add" | "sub" | "mul" => arith(f, x, y)?,
        "diff" => match (x, y) {
            (Num::I(a), Num::I(b)) => Num::I(a.checked_sub(b).ok_or_else(range_err)?),
            _ => Num::F(x.f() - y.f()),
        },
        _ => {
            let hx = match x {
                Num::I(a) => Num::I(a.checked_mul(100).ok_or_else(range_err)?),
                Num::F(a) => Num::F(100.0 * a),
            };
            quotient(hx, y)?
        }
    };
    Ok(Res::Scalar(v.to_value()?))
}

/// `abs`: the absolute value of the number `x` (an int stays an int).
fn abs(args: &Args) -> Result<Res, OpError> {
    let x = match nn(args, "x") {
        Some(x) => num(x)?,
        None => None,
    };
    let v = match x.ok_or_else(|| inv("abs requires x"))? {
        Num::I(i) => Num::I(i.checked_abs().ok_or_else(range_err)?),
        Num::F(v) => Num::F(v.abs()),
    };
    Ok(Res::Scalar(v.to_value()?))
}

/// `compare`: whether `x cmp y` holds for the numbers `x` and `y` (`cmp` one of `eq`, `ne`,
/// `lt`, `le`, `gt`, `ge`; ints and floats compare exactly) — a yes/no answer in `value`.
fn compare(args: &Args) -> Result<Res, OpError> {
    const CMPS: [&str; 6] = ["eq", "ne", "lt", "le", "gt", "ge"];
    let (Some(x), Some(y)) = (nn(args, "x"), nn(args, "y")) else {
        return Err(inv("compare requires x and y"));
    };
    let cmp = match s_arg(args, "cmp") {
        Some(c) if CMPS.contains(&c) => c,
        other => {
            return Err(OpError::with(
                crate::error::Code::InvalidArg,
                format!(
                    "compare requires cmp one of eq, ne, lt, le, gt, ge (got {})",
                    other.map_or("none".to_string(), |c| format!("'{c}'"))
                ),
                json!({"repair": {"cmp": CMPS}}),
            ))
        }
    };
    // Numbers only (the schema of x and y): a boolean never reaches here.
    if num(x)?.is_none() || num(y)?.is_none() {
        return Err(inv("compare requires x and y"));
    }
    Ok(Res::Scalar(Value::Bool(test(x, cmp, y)?)))
}

/// Values of `field` (or the elements) for a reducer; every value numeric.
fn values_of<'a>(
    f: &str,
    rows: impl Iterator<Item = &'a Value>,
    field: Option<&str>,
) -> Result<Vec<Num>, OpError> {
    let mut out = Vec::new();
    for r in rows {
        let v = match field {
            Some(k) => r
                .as_object()
                .and_then(|m| m.get(k))
                .ok_or_else(|| inv(format!("compute {f}: row has no field '{k}'")))?,
            None => r,
        };
        match num(v)? {
            Some(n) => out.push(n),
            None => {
                return Err(inv(format!(
                    "compute {f} needs numeric values, got {}",
                    render(v)
                )))
            }
        }
    }
    Ok(out)
}

fn reduce(f: &str, vals: &[Num]) -> Result<Value, OpError> {
    if vals.is_empty() {
        return if f == "sum" {
            Ok(json!(0))
        } else {
            Err(inv("empty input"))
        };
    }
    let v = match f {
        "sum" => sum(vals)?,
        "mean" => mean(vals)?,
        "min" | "max" => {
            let want = if f == "min" {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut best = vals[0];
            for &v in &vals[1..] {
                if cmp_num(v, best) == want {
                    best = v;
                }
            }
            best
        }
        _ => median(vals)?,
    };
    v.to_value()
}

/// The median of non-empty `vals`: the middle value, or the blessed mean of the two middle
/// values of an even count.
pub fn median(vals: &[Num]) -> Result<Num, OpError> {
    let mut s = vals.to_vec();
    s.sort_by(|a, b| cmp_num(*a, *b));
    let n = s.len();
    if n == 0 {
        return Err(inv("empty input"));
    }
    if n % 2 == 1 {
        Ok(s[n / 2])
    } else {
        mean(&s[n / 2 - 1..=n / 2])
    }
}

/// The `q`-quantile (`0 ≤ q ≤ 1`) of non-empty `vals` by linear interpolation between
/// order statistics (Hyndman–Fan type 7, numpy's default): with the values sorted
/// ascending as `x[0..n)`, `h = q·(n−1)`, computed exactly from `q`'s decimal text; the value
/// is `x[h]` itself (its type kept) when `h` is a whole number, else the float
/// `x[⌊h⌋] + f·(x[⌊h⌋+1] − x[⌊h⌋])` with `f = h − ⌊h⌋` correctly rounded.
pub fn quantile(vals: &[Num], q: &Value) -> Result<Num, OpError> {
    let bad = || inv("quantile requires q, a number in [0, 1]");
    let qf = q.as_f64().ok_or_else(bad)?;
    if !(0.0..=1.0).contains(&qf) {
        return Err(bad());
    }
    let mut s = vals.to_vec();
    s.sort_by(|a, b| cmp_num(*a, *b));
    let n = s.len();
    if n == 0 {
        return Err(inv("empty input"));
    }
    // q = a / 10^j exactly; h = a·(n−1) / 10^j.
    let (a, j) = pct_rational(q);
    let exact = (j <= 30)
        .then(|| 10u128.pow(j))
        .and_then(|den| Some((a.checked_mul((n - 1) as u128)?, den)));
    let (lo, frac) = match exact {
        Some((hn, den)) => (
            (hn / den) as usize,
            ratio_f64((hn % den) as i128, den as i128),
        ),
        None => {
            // A q with more than 30 decimals: binary64 is as exact as its text.
            let h = qf * (n - 1) as f64;
            (h.floor() as usize, h - h.floor())
        }
    };
    let lo = lo.min(n - 1);
    if frac == 0.0 || lo + 1 >= n {
        return Ok(s[lo]);
    }
    let (x, y) = (s[lo].f(), s[lo + 1].f());
    Ok(Num::F(x + frac * (y - x)))
}

/// The sum of `vals`: exact over ints (`integer out of supported range` past i128), else
/// the correctly rounded sum of the binary64 values ([`fsum`], independent of their order).
pub fn exact_sum(vals: &[Num]) -> Result<Num, OpError> {
    if vals.iter().all(|v| matches!(v, Num::I(_))) {
        return sum(vals);
    }
    Ok(Num::F(fsum(vals.iter().map(|v| v.f()))))
}

/// Groups rows by `row[g]` (rule 8 checks): `(key, member rows)` in canonical key order.
fn groups_of<'a>(input: &'a [Value], g: &str) -> Result<Vec<(Value, Vec<&'a Value>)>, OpError> {
    Ok(group_members(input, g)?
        .into_iter()
        .map(|(k, m)| (k, m.into_iter().map(|i| &input[i]).collect()))
        .collect())
}

/// [`groups_of`] with each member given by its position in `input`.
fn group_members(input: &[Value], g: &str) -> Result<Vec<(Value, Vec<usize>)>, OpError> {
    let mut keys = Vec::with_capacity(input.len());
    for r in input {
        let k = r
            .as_object()
            .and_then(|m| m.get(g))
            .ok_or_else(|| inv(format!("group_by: row without column '{g}'")))?;
        if !is_scalar(k) {
            return Err(inv("group_by keys must be scalars"));
        }
        keys.push(k.clone());
    }
    group_keys(&keys)
}

fn grouped(args: &Args, f: &str, g: &str, input: &[Value]) -> Result<Res, OpError> {
    let groups = groups_of(input, g)?;
    let field = s_arg(args, "field");
    if f != "count" && field.is_none() {
        return Err(inv(format!("compute fn={f} with group_by requires field")));
    }
    let mut rows = Vec::with_capacity(groups.len());
    for (k, members) in groups {
        let v = if f == "count" {
            json!(members.len())
        } else {
            let vals = values_of(f, members.into_iter(), field)?;
            reduce(f, &vals)?
        };
        let mut m = Map::new();
        m.insert(g.to_string(), k);
        m.insert(f.to_string(), v);
        rows.push(Value::Object(m));
    }
    Ok(Res::Rows(rows))
}

/// `P` of §21.2 rule 11 as `a / 10^j` from pct's canonical decimal text.
fn pct_rational(p: &Value) -> (u128, u32) {
    let text = to_string(p);
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (text.as_str(), 0),
    };
    let (ip, fp) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let digits: String = ip.chars().chain(fp.chars()).collect();
    let mut a: u128 = digits.parse().unwrap_or(0);
    let mut j: i32 = fp.len() as i32 - exp;
    while j < 0 {
        a = a.saturating_mul(10);
        j += 1;
    }
    (a, j as u32)
}

/// `ceil(n · num / den)` for `num/den` in [0, 1], `den = 100 · 10^j`; large `j` means a
/// tiny positive fraction (handled exactly by the caller's choice of `num`).
fn cut_of(n: usize, pct: &Value, top: bool) -> usize {
    let (a, j) = pct_rational(pct);
    let n128 = n as u128;
    if j > 30 {
        // P < 1e-13 (≤ 17 significant digits): n·P/100 ∈ (0, 1) for n > 0.
        return if n == 0 {
            0
        } else if top {
            1
        } else {
            n
        };
    }
    let b = 10u128.pow(j);
    let den = 100 * b;
    let num = if top { a } else { den - a.min(den) };
    let prod = n128 * num;
    prod.div_ceil(den) as usize
}

/// `topk`'s checked arguments and its input ranked.
struct Ranked<'a> {
    k: Option<usize>,
    pct: Option<&'a Value>,
    top: bool,
    include: bool,
    /// For each group (one without `group_by`), in group key order, every member's key
    /// (`field` as a number: a boolean 1 or 0, a missing or non-numeric value 0) and its
    /// position in `input`, in list order.
    groups: Vec<Vec<(Num, usize)>>,
}

fn topk_ranked<'a>(
    args: &'a Args,
    input: &[Value],
    group_by: Option<&str>,
) -> Result<Ranked<'a>, OpError> {
    let (k, pct) = (nn(args, "k"), nn(args, "pct"));
    if k.is_some() == pct.is_some() {
        return Err(inv("topk takes exactly one of k or pct"));
    }
    let Some(field) = s_arg(args, "field") else {
        return Err(inv("topk requires field"));
    };
    let k = k.and_then(Value::as_u64).map(|x| x as usize);
    let top = args.str("side")? == "top";
    let include = nn(args, "ties").and_then(Value::as_str) == Some("include");
    let groups: Vec<Vec<usize>> = match group_by {
        Some(g) => group_members(input, g)?.into_iter().map(|x| x.1).collect(),
        None => vec![(0..input.len()).collect()],
    };
    let mut ranked = Vec::with_capacity(groups.len());
    for members in groups {
        let mut keyed = Vec::with_capacity(members.len());
        for i in members {
            let v = input[i].as_object().and_then(|m| m.get(field));
            let n = match v {
                Some(Value::Bool(b)) => Num::I(i128::from(*b)),
                Some(x) => num(x)?.unwrap_or(Num::I(0)),
                None => Num::I(0),
            };
            keyed.push((n, i));
        }
        ranked.push(keyed);
    }
    Ok(Ranked {
        k,
        pct,
        top,
        include,
        groups: ranked,
    })
}

fn topk(args: &Args, input: &[Value], group_by: Option<&str>) -> Result<Res, OpError> {
    let a = topk_ranked(args, input, group_by)?;
    let (k, pct, top) = (a.k, a.pct, a.top);
    let mut extra = 0usize;
    let mut rows = Vec::new();
    for members in a.groups {
        let mut keyed: Vec<(Num, String, &Value)> = members
            .into_iter()
            .map(|(n, i)| (n, to_string(&input[i]), &input[i]))
            .collect();
        keyed.sort_by(|x, y| cmp_num(y.0, x.0).then_with(|| x.1.cmp(&y.1)));
        let n = keyed.len();
        let range = match (k, pct) {
            (Some(k), _) => {
                if top {
                    0..k.min(n)
                } else {
                    n.saturating_sub(k)..n
                }
            }
            (None, Some(p)) => {
                if top {
                    0..cut_of(n, p, true).min(n)
                } else {
                    cut_of(n, p, false).min(n)..n
                }
            }
            _ => 0..0,
        };
        let mut range = range;
        if a.include && !range.is_empty() {
            // Widen the cut over every row whose value equals the value at its edge.
            let (lo, hi) = (range.start, range.end);
            let mut end = hi;
            let mut start = lo;
            if top {
                while end < n && cmp_num(keyed[end].0, keyed[hi - 1].0) == Ordering::Equal {
                    end += 1;
                }
            } else {
                while start > 0 && cmp_num(keyed[start - 1].0, keyed[lo].0) == Ordering::Equal {
                    start -= 1;
                }
            }
            extra += (end - hi) + (lo - start);
            range = start..end;
        }
        let cut = &mut keyed[range];
        if !top {
            // The bottom rows read ascending: by value, ties by canonical JSON (issue 21).
            cut.sort_by(|x, y| cmp_num(x.0, y.0).then_with(|| x.1.cmp(&y.1)));
        }
        rows.extend(cut.iter().map(|x| x.2.clone()));
    }
    if a.include {
        return Ok(Res::Tied(rows, extra));
    }
    Ok(Res::Rows(rows))
}

/// [`selected_rows`] of `topk`: per group, the members whose key is at or above the `k`th
/// best (at or below the `k`th smallest for `side: "bottom"`). Every other member ranks
/// below all of them whatever the tie-break, so `topk` over these rows cuts the same rows
/// (and widens over the same ties). `None` with `pct`, whose cut depends on the group's size.
fn topk_candidates(
    args: &Args,
    input: &[Value],
    group_by: Option<&str>,
) -> Result<Option<Vec<usize>>, OpError> {
    let a = topk_ranked(args, input, group_by)?;
    let Some(k) = a.k else {
        return Ok(None);
    };
    let mut picked = Vec::new();
    for members in a.groups {
        if k >= members.len() {
            picked.extend(members.iter().map(|m| m.1));
            continue;
        }
        if k == 0 {
            continue;
        }
        // Best first: the `k`th value in that order is the edge of the cut.
        let better = |x: &Num, y: &Num| {
            let o = cmp_num(*x, *y);
            if a.top {
                o.reverse()
            } else {
                o
            }
        };
        let mut keys: Vec<Num> = members.iter().map(|m| m.0).collect();
        let edge = *keys.select_nth_unstable_by(k - 1, better).1;
        picked.extend(
            members
                .iter()
                .filter(|m| better(&m.0, &edge) != Ordering::Greater)
                .map(|m| m.1),
        );
    }
    picked.sort_unstable();
    Ok(Some(picked))
}

fn filter(args: &Args, input: &[Value]) -> Result<Res, OpError> {
    let kept = filter_positions(args, input)?;
    Ok(Res::Rows(
        kept.into_iter().map(|i| input[i].clone()).collect(),
    ))
}

/// The positions of the rows `filter` keeps, in list order.
fn filter_positions(args: &Args, input: &[Value]) -> Result<Vec<usize>, OpError> {
    let Some(cmp) = s_arg(args, "cmp") else {
        return Err(inv("filter requires cmp"));
    };
    let (field, f2, val) = (
        s_arg(args, "field"),
        s_arg(args, "field2"),
        nn(args, "value"),
    );
    if f2.is_some() && val.is_some() {
        return Err(inv("filter takes field2 or value, not both"));
    }
    let get = |r: &Value, k: &str| -> Value {
        r.as_object()
            .and_then(|m| m.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut kept = Vec::new();
    for (i, r) in input.iter().enumerate() {
        let x = match field {
            Some(k) => get(r, k),
            None => r.clone(),
        };
        let v = match f2 {
            Some(k) => get(r, k),
            None => val.cloned().unwrap_or(Value::Null),
        };
        if test(&x, cmp, &v)? {
            kept.push(i);
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grouping string keys by hashing gives the groups the sorting path gives: the same
    /// representatives in the same order, members in occurrence order.
    #[test]
    fn string_groups_equal_sorted_groups() {
        let mut r = tgms_testkit::Rng::new(2121);
        let alphabet = [
            "",
            "a",
            "b",
            "ab",
            "B",
            "é",
            "a\"b",
            "zz",
            "\u{10348}",
            "aa",
        ];
        for n in [0usize, 1, 2, 7, 100, 5_000] {
            let keys: Vec<Value> = (0..n)
                .map(|_| {
                    let parts = r.below(3);
                    Value::from(
                        (0..parts)
                            .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
                            .collect::<String>(),
                    )
                })
                .collect();
            assert_eq!(
                string_groups(&keys),
                sorted_groups(&keys).unwrap(),
                "{n} keys"
            );
        }
    }

    fn res_json(r: Result<Res, OpError>) -> Value {
        match r {
            Ok(Res::Scalar(v)) => json!({ "value": v }),
            Ok(Res::Rows(rows)) => json!({ "rows": rows }),
            Ok(Res::Tied(rows, extra)) => json!({ "rows": rows, "extra": extra }),
            Err(e) => json!({ "error": e.message }),
        }
    }

    /// `topk` with `k` and `filter` with `field`, over the whole rows at the positions
    /// [`selected_rows`] picks from the rows cut to the call's columns, return what they
    /// return over every row (the same rows, tie counts and errors), on random rows with many
    /// ties, mixed key types, missing keys and groups.
    #[test]
    fn selected_rows_give_the_result_over_every_row() {
        let mut r = tgms_testkit::Rng::new(2122);
        let keys = [
            json!(0),
            json!(1),
            json!(2),
            json!(1.5),
            json!(2.0),
            json!(true),
            json!(false),
            json!("s"),
            Value::Null,
        ];
        for round in 0..600 {
            let n = r.below(40) as usize;
            let input: Vec<Value> = (0..n)
                .map(|i| {
                    let mut m = Map::new();
                    for c in ["a", "b"] {
                        if r.below(8) > 0 {
                            m.insert(c.into(), keys[r.below(keys.len() as u64) as usize].clone());
                        }
                    }
                    m.insert("g".into(), json!(["p", "q", "r"][r.below(3) as usize]));
                    m.insert("x".into(), json!(i % 3));
                    Value::Object(m)
                })
                .collect();
            let mut a = Map::new();
            let cols: Vec<String> = if round % 2 == 0 {
                a.insert("fn".into(), json!("topk"));
                a.insert("field".into(), json!("a"));
                a.insert("k".into(), json!(r.below(6)));
                let side = ["top", "bottom"][r.below(2) as usize];
                a.insert("side".into(), json!(side));
                if r.below(2) == 0 {
                    a.insert("ties".into(), json!("include"));
                }
                if r.below(2) == 0 {
                    a.insert("group_by".into(), json!("g"));
                    vec!["a".into(), "g".into()]
                } else {
                    vec!["a".into()]
                }
            } else {
                a.insert("fn".into(), json!("filter"));
                a.insert("field".into(), json!("a"));
                let cmps = [
                    "eq", "ne", "lt", "le", "gt", "ge", "is_null", "not_null", "contains",
                ];
                a.insert(
                    "cmp".into(),
                    json!(cmps[r.below(cmps.len() as u64) as usize]),
                );
                if r.below(2) == 0 {
                    a.insert("field2".into(), json!("b"));
                    vec!["a".into(), "b".into()]
                } else {
                    a.insert(
                        "value".into(),
                        keys[r.below(keys.len() as u64) as usize].clone(),
                    );
                    vec!["a".into()]
                }
            };
            let mut whole = a.clone();
            whole.insert("input".into(), Value::Array(input.clone()));
            let want = res_json(evaluate(&Args(whole)));
            let cut: Vec<Value> = input
                .iter()
                .map(|row| crate::json::project_row(row, &cols))
                .collect();
            let got = match selected_rows(&Args(a.clone()), &cut) {
                Ok(Some(at)) => {
                    assert!(
                        at.windows(2).all(|w| w[0] < w[1]),
                        "positions in list order"
                    );
                    let mut picked = a.clone();
                    let rows = at.iter().map(|&i| input[i].clone()).collect();
                    picked.insert("input".into(), Value::Array(rows));
                    res_json(evaluate(&Args(picked)))
                }
                Ok(None) => panic!("no selection for {a:?}"),
                Err(e) => json!({ "error": e.message }),
            };
            assert_eq!(got, want, "round {round}: {a:?} over {input:?}");
        }
        // `pct` and a filter of whole rows select nothing: every row is read whole.
        let args = |v: Value| Args(v.as_object().cloned().unwrap_or_default());
        let rows = [json!({"a": 1})];
        let pct = json!({"fn": "topk", "field": "a", "pct": 10, "side": "top"});
        assert_eq!(selected_rows(&args(pct), &rows).unwrap(), None);
        let whole_row = json!({"fn": "filter", "cmp": "not_null"});
        assert_eq!(selected_rows(&args(whole_row), &rows).unwrap(), None);
    }

    #[test]
    fn ratio_is_correctly_rounded() {
        for (n, d) in [(1, 3), (2, 3), (-1, 3), (7, 2), (1, 10), (123456789, 1000)] {
            assert_eq!(ratio_f64(n, d), n as f64 / d as f64, "{n}/{d}");
        }
        let big = 1i128 << 100;
        assert_eq!(ratio_f64(big + 1, big), 1.0);
        assert_eq!(ratio_f64(1, big), 2f64.powi(-100));
        // 2^54+1 over 1: a tie rounds to even (2^54), 2^54+3 rounds up.
        assert_eq!(ratio_f64((1 << 54) + 2, 2), 9007199254740992.0);
        assert_eq!(ratio_f64((1 << 54) + 6, 2), 9007199254740996.0);
    }

    #[test]
    fn fsum_is_exact() {
        assert_eq!(fsum([1e100, 1.0, -1e100]), 1.0);
        assert_eq!(fsum([0.1; 10]), 1.0);
        assert_eq!(fsum([]), 0.0);
    }

    #[test]
    fn mixed_compare() {
        assert_eq!(cmp_num(Num::I(1), Num::F(1.0)), Ordering::Equal);
        assert_eq!(cmp_num(Num::I(1), Num::F(1.5)), Ordering::Less);
        assert_eq!(cmp_num(Num::I(-2), Num::F(-1.5)), Ordering::Less);
        assert_eq!(
            cmp_num(Num::I((1 << 62) + 1), Num::F(4.611686018427388e18)),
            Ordering::Greater
        );
    }
}
