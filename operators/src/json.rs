//! JSON helpers of `plans-and-claims.md` §1–§2 on top of the engine's canonical JSON:
//! `round9` float canonicalization, `digest`, completeness certificates (`set_digest`,
//! `operators.md` §6.3) and the value rendering used in `E_SCHEMA` messages (§5.3).

use rayon::prelude::*;
use serde_json::{Number, Value};
use sha2::{Digest, Sha256};
pub use tgms_engine::canon::{digest, digest_map, number_is_float, parse, to_string};

/// `round9(x)` of §1.3: the binary64 nearest to `m / 10^9`, where `m` is the exact value of
/// `x` times 10^9 rounded to the nearest integer with ties to even (Python's `round(x, 9)`).
/// `None` for NaN or ±Inf.
pub fn round9(x: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    // Every binary64 of magnitude >= 2^53 is an integer already.
    if x.abs() >= 9_007_199_254_740_992.0 {
        return Some(x);
    }
    // `{:.9}` formats the exact binary value correctly rounded to 9 decimals, ties to even;
    // parsing the decimal back is correctly rounded (nearest binary64).
    let text = format!("{x:.9}");
    let r: f64 = text.parse().ok()?;
    Some(if r == 0.0 { 0.0f64.copysign(x) } else { r })
}

/// A JSON float number with the canonical float text (so it stays a float: `3.0`).
pub fn float(x: f64) -> Value {
    let mut s = String::new();
    tgms_engine::canon::write_f64(&mut s, x);
    // The canonical float text is a valid JSON number token (arbitrary precision keeps it).
    serde_json::from_str::<Number>(&s)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `v` cut to `cols` when it is an object (a row): the members named in `cols` that `v`
/// has; anything else as it is, for the reducer to judge. A plan's column
/// reducer reads its input rows cut this way (`docs/plan-language.md`, complete results).
pub fn project_row(v: &Value, cols: &[String]) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            cols.iter()
                .filter_map(|c| m.get(c).map(|x| (c.clone(), x.clone())))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A NaN or ±Inf found in operator output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonFinite;

/// Replaces every float (at any depth) by `round9` of it; fails on a non-finite float.
pub fn canonicalize_floats(v: &mut Value) -> Result<(), NonFinite> {
    match v {
        Value::Number(n) if number_is_float(n) => {
            let x: f64 = n.as_str().parse().map_err(|_| NonFinite)?;
            *v = float(round9(x).ok_or(NonFinite)?);
            Ok(())
        }
        Value::Array(a) => a.iter_mut().try_for_each(canonicalize_floats),
        Value::Object(m) => m.values_mut().try_for_each(canonicalize_floats),
        _ => Ok(()),
    }
}

/// The certificate of §6.3 over the multiset of key values `keys`.
pub fn set_digest<'a>(keys: impl IntoIterator<Item = &'a Value>) -> String {
    let keys: Vec<&Value> = keys.into_iter().collect();
    set_digest_by(&keys, |k, s| tgms_engine::canon::write_value(s, k))
}

/// [`set_digest`] over the keys of `items`, where `render` appends the canonical JSON text
/// of one item's key: SHA-256 over the sorted key lines. The lines are rendered in parallel
/// into one buffer per fixed-size chunk (no allocation per key) and sorted as byte slices,
/// so neither the result nor its equality with `set_digest` depends on the thread count.
pub fn set_digest_by<T: Sync>(items: &[T], render: impl Fn(&T, &mut String) + Sync) -> String {
    const CHUNK: usize = 8192;
    let part = |c: &[T]| {
        let mut text = String::with_capacity(c.len() * 32);
        let mut ends = Vec::with_capacity(c.len());
        for x in c {
            render(x, &mut text);
            text.push('\n');
            ends.push(text.len());
        }
        (text, ends)
    };
    // Short lists stay on the calling thread (no pool round trip).
    let bufs: Vec<(String, Vec<usize>)> = if items.len() <= CHUNK {
        vec![part(items)]
    } else {
        items.par_chunks(CHUNK).map(part).collect()
    };
    let mut lines: Vec<&[u8]> = Vec::with_capacity(items.len());
    for (text, ends) in &bufs {
        let mut start = 0;
        for &end in ends {
            lines.push(&text.as_bytes()[start..end]);
            start = end;
        }
    }
    if lines.len() <= CHUNK {
        lines.sort_unstable();
    } else {
        lines.par_sort_unstable();
    }
    let mut h = Sha256::new();
    for l in &lines {
        h.update(l);
    }
    tgms_engine::canon::hex(&h.finalize())
}

/// Renders a value for an `E_SCHEMA` message (§5.3): strings in single quotes with `'` and
/// `\` escaped by a backslash, everything else as canonical JSON; cut to 200 characters + `…`.
pub fn render(v: &Value) -> String {
    let s = match v {
        Value::String(s) => render_str(s),
        other => to_string(other),
    };
    if s.chars().count() > 200 {
        let mut cut: String = s.chars().take(200).collect();
        cut.push('…');
        cut
    } else {
        s
    }
}

/// A string in single quotes with `'` and `\` escaped.
pub fn render_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round9_table_of_the_spec() {
        let cases: &[(f64, &str)] = &[
            (1.0 / 3.0, "0.333333333"),
            (2.0 / 3.0, "0.666666667"),
            (0.0009765625, "0.000976562"),
            (0.0029296875, "0.002929688"),
            (5e-10, "1e-09"),
            (1.0000000015, "1.000000001"),
            (2.675e-7, "2.67e-07"),
            (100.0 / 3.0, "33.333333333"),
            (1e-10, "0.0"),
            (-1e-10, "-0.0"),
            (1e300, "1e+300"),
            (-2.5, "-2.5"),
        ];
        for (x, want) in cases {
            assert_eq!(
                to_string(&float(round9(*x).unwrap())),
                *want,
                "round9({x:e})"
            );
        }
        assert_eq!(round9(f64::NAN), None);
        assert_eq!(round9(f64::INFINITY), None);
    }

    #[test]
    fn canonicalize_rejects_non_finite_and_keeps_ints() {
        let mut v = parse(r#"{"a":[1,2.0,0.1234567891],"b":3}"#).unwrap();
        canonicalize_floats(&mut v).unwrap();
        assert_eq!(to_string(&v), r#"{"a":[1,2.0,0.123456789],"b":3}"#);
        let mut bad = parse("[1e400]").unwrap();
        assert!(canonicalize_floats(&mut bad).is_err());
    }

    #[test]
    fn render_rules() {
        assert_eq!(render(&Value::from("it's a\\b")), r"'it\'s a\\b'");
        assert_eq!(render(&parse("[1,2.5]").unwrap()), "[1,2.5]");
        let long = Value::from("x".repeat(300));
        let r = render(&long);
        assert_eq!(r.chars().count(), 201);
        assert!(r.ends_with('…'));
    }
}
