//! Canonical JSON (spec `plans-and-claims.md` §1): the one serialization used for hashing,
//! log records, digests and comparisons. Byte-compatible with Python's
//! `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.

use serde_json::{Map, Number, Value};

/// Appends the canonical JSON text of `v` to `out`.
pub fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => write_object(out, m),
    }
}

/// Appends an object with keys in code-point (= UTF-8 byte) order. `serde_json::Map` is a
/// `BTreeMap<String, _>` whose `Ord` is byte order, so iteration order is already canonical.
fn write_object(out: &mut String, m: &Map<String, Value>) {
    out.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, k);
        out.push(':');
        write_value(out, x);
    }
    out.push('}');
}

/// The canonical JSON text of `v`.
pub fn to_string(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v);
    s
}

/// Appends a JSON string literal with the canonical escapes.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    // Most strings (uids, labels, names) need no escape: one check, one copy.
    if !bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// True when a JSON number token is a float (has `.`, `e` or `E`), per §1.1.
pub fn number_is_float(n: &Number) -> bool {
    let t = n.as_str();
    t.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

fn write_number(out: &mut String, n: &Number) {
    if number_is_float(n) {
        // A float token that overflows binary64 parses to ±inf; there is no canonical text
        // for it, so it is written as Python would after json.loads: `Infinity`. Writers
        // reject non-finite values before they reach storage (see `validate_finite`).
        let f: f64 = n.as_str().parse().unwrap_or(f64::NAN);
        write_f64(out, f);
    } else {
        let t = n.as_str();
        // Integers are unbounded; the only non-canonical integer token JSON allows is `-0`.
        if t == "-0" {
            out.push('0');
        } else {
            out.push_str(t);
        }
    }
}

/// Appends the canonical float text of §1.2 (Python's float `repr`).
pub fn write_f64(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // ryu yields the shortest round-tripping digits; re-layout them as Python does.
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(f.abs());
    let (mantissa, exp10) = match text.find('e') {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    // mantissa is "d.ddd" or "ddd.ddd": collect the digit string and the decimal exponent.
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, ""),
    };
    let mut digits: String = int_part.chars().chain(frac_part.chars()).collect();
    let mut k = exp10 + int_part.len() as i32 - 1;
    // Strip leading zeros (e.g. "0.001" → digits "0001") and trailing zeros.
    let lead = digits.bytes().take_while(|&b| b == b'0').count();
    digits.drain(..lead);
    k -= lead as i32;
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if f < 0.0 {
        out.push('-');
    }
    let n = digits.len() as i32;
    if (-4..16).contains(&k) {
        if k >= 0 {
            if n <= k + 1 {
                out.push_str(&digits);
                for _ in 0..(k + 1 - n) {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..(k + 1) as usize]);
                out.push('.');
                out.push_str(&digits[(k + 1) as usize..]);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-k - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if k >= 0 { '+' } else { '-' });
        let a = k.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    }
}

/// True when every float in `v` (at any depth) is finite. Canonical JSON has no text for
/// NaN or infinities, so writers refuse such values instead of storing them.
pub fn all_finite(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            !number_is_float(n) || n.as_str().parse::<f64>().is_ok_and(|f| f.is_finite())
        }
        Value::Array(a) => a.iter().all(all_finite),
        Value::Object(m) => m.values().all(all_finite),
        _ => true,
    }
}

/// The path (`prefix.key[3]…`) and token of the first float in `v` that is not finite, in
/// key order; what an error about it names.
pub fn first_non_finite(v: &Value, prefix: &str) -> Option<(String, String)> {
    match v {
        Value::Number(n) if !all_finite(v) => Some((prefix.to_string(), n.as_str().to_string())),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| first_non_finite(x, &format!("{prefix}[{i}]"))),
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| first_non_finite(x, &format!("{prefix}.{k}"))),
        _ => None,
    }
}

/// Lowercase hex SHA-256 of the canonical JSON of `v` ("digest(x)" in the spec).
pub fn digest(v: &Value) -> String {
    let mut h = Hashing::default();
    h.value(v);
    h.finish()
}

/// [`digest`] of the object `m`, without building a `Value` around it.
pub fn digest_map(m: &Map<String, Value>) -> String {
    let mut h = Hashing::default();
    h.object(m.iter());
    h.finish()
}

/// [`digest_map`] of `m` without its member `key` (absent or not), without copying `m`.
pub fn digest_map_without(m: &Map<String, Value>, key: &str) -> String {
    let mut h = Hashing::default();
    h.object(m.iter().filter(|(k, _)| k.as_str() != key));
    h.finish()
}

/// [`digest_map`] of `m` with the value of its member `key` given as canonical text, the
/// concatenation of `parts`, instead of the value `m` holds there (a list rendered and
/// serialized in chunks, never held whole as values). `key` must be a member of `m`.
pub fn digest_map_with_text(m: &Map<String, Value>, key: &str, parts: &[String]) -> String {
    let mut h = Hashing::default();
    h.buf.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            h.buf.push(',');
        }
        write_str(&mut h.buf, k);
        h.buf.push(':');
        if k == key {
            h.flush();
            for p in parts {
                sha2::Digest::update(&mut h.h, p.as_bytes());
            }
        } else {
            h.value(x);
        }
    }
    h.buf.push('}');
    h.finish()
}

/// The canonical text of a value fed to SHA-256 in chunks of about [`Hashing::CHUNK`]
/// bytes, so a large value (a plan step's million-row input) is hashed without holding its
/// whole text: the bytes hashed are exactly those of [`to_string`].
#[derive(Default)]
struct Hashing {
    buf: String,
    h: sha2::Sha256,
}

impl Hashing {
    const CHUNK: usize = 1 << 16;

    fn flush_if_full(&mut self) {
        if self.buf.len() >= Self::CHUNK {
            self.flush();
        }
    }

    fn flush(&mut self) {
        sha2::Digest::update(&mut self.h, self.buf.as_bytes());
        self.buf.clear();
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Array(a) => {
                self.buf.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(',');
                    }
                    self.value(x);
                }
                self.buf.push(']');
            }
            Value::Object(m) => self.object(m.iter()),
            other => write_value(&mut self.buf, other),
        }
        self.flush_if_full();
    }

    /// The members of an object, in the map's (sorted) order.
    fn object<'m>(&mut self, members: impl Iterator<Item = (&'m String, &'m Value)>) {
        self.buf.push('{');
        for (i, (k, x)) in members.enumerate() {
            if i > 0 {
                self.buf.push(',');
            }
            write_str(&mut self.buf, k);
            self.buf.push(':');
            self.value(x);
        }
        self.buf.push('}');
    }

    fn finish(mut self) -> String {
        sha2::Digest::update(&mut self.h, self.buf.as_bytes());
        hex(&sha2::Digest::finalize(self.h))
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    push_hex(&mut s, bytes);
    s
}

/// Appends the lowercase hex of `bytes` to `out` ([`hex`] without a new string).
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        let [hi, lo] = hex_pair(b);
        out.push(char::from(hi));
        out.push(char::from(lo));
    }
}

/// The two lowercase hex digits of `b`, as ASCII bytes.
pub fn hex_pair(b: u8) -> [u8; 2] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]
}

/// Parses JSON text into a `Value` with the spec's input rules (§1.1): number tokens keep
/// their integer/float kind, duplicate keys keep the last occurrence, unpaired surrogate
/// escapes are rejected.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked digest hashes exactly the canonical text: SHA-256 of `to_string`, for
    /// values smaller and much larger than one chunk, nested, with escapes and floats.
    #[test]
    fn the_chunked_digest_is_the_digest_of_the_canonical_text() {
        use sha2::{Digest, Sha256};
        let row = |i: usize| {
            serde_json::json!({"i": i, "s": format!("é\"\n{i}"), "f": 0.5 + i as f64,
                "a": [i, {"z": null, "b": true}], "e": {}})
        };
        for n in [0usize, 1, 3, 2_000, 20_000] {
            let v = Value::Array((0..n).map(row).collect());
            let want = hex(&Sha256::digest(to_string(&v).as_bytes()));
            assert_eq!(digest(&v), want, "{n} rows");
            let m = serde_json::json!({"rows": v, "k": "x"});
            let Value::Object(map) = &m else {
                unreachable!()
            };
            assert_eq!(
                digest_map(map),
                hex(&Sha256::digest(to_string(&m).as_bytes()))
            );
        }
        assert_eq!(digest(&Value::Null), hex(&Sha256::digest(b"null")));
    }

    /// A member given as text hashes like the object holding that value, wherever the
    /// member sorts (first, middle, last, only) and whatever the text's size.
    #[test]
    fn a_member_given_as_text_digests_like_the_value() {
        for n in [0usize, 3, 20_000] {
            let rows = Value::Array((0..n).map(|i| serde_json::json!({"i": i})).collect());
            let text = to_string(&rows);
            // Cut anywhere: the parts' concatenation is what counts.
            let cut = text.len() / 3;
            let text = [
                text[..cut].to_string(),
                String::new(),
                text[cut..].to_string(),
            ];
            for key in ["a", "m", "z"] {
                let mut m = serde_json::json!({"b": 1, "y": [null]});
                m[key] = rows.clone();
                let Value::Object(map) = &m else {
                    unreachable!()
                };
                let mut placeholder = map.clone();
                placeholder.insert(key.into(), Value::Null);
                assert_eq!(
                    digest_map_with_text(&placeholder, key, &text),
                    digest(&m),
                    "{n} rows under {key}"
                );
            }
            let only = serde_json::json!({ "rows": rows.clone() });
            let ph = serde_json::json!({"rows": []});
            assert_eq!(
                digest_map_with_text(ph.as_object().unwrap(), "rows", &text),
                digest(&only)
            );
        }
    }

    /// Leaving a member out hashes the text of the object without it: first, middle, last
    /// and absent keys, and the only key.
    #[test]
    fn a_digest_without_one_member_is_the_digest_of_the_text_without_it() {
        use sha2::{Digest, Sha256};
        let m = serde_json::json!({"a": 1, "cursor": "x", "z": [1, 2]});
        let Value::Object(map) = &m else {
            unreachable!()
        };
        let text = |t: &str| hex(&Sha256::digest(t.as_bytes()));
        assert_eq!(
            digest_map_without(map, "a"),
            text(r#"{"cursor":"x","z":[1,2]}"#)
        );
        assert_eq!(
            digest_map_without(map, "cursor"),
            text(r#"{"a":1,"z":[1,2]}"#)
        );
        assert_eq!(
            digest_map_without(map, "z"),
            text(r#"{"a":1,"cursor":"x"}"#)
        );
        assert_eq!(digest_map_without(map, "q"), digest_map(map));
        let one = serde_json::json!({"cursor": 3});
        let Value::Object(one) = &one else {
            unreachable!()
        };
        assert_eq!(digest_map_without(one, "cursor"), text("{}"));
    }

    fn f(x: f64) -> String {
        let mut s = String::new();
        write_f64(&mut s, x);
        s
    }

    #[test]
    fn float_text_table_of_the_spec() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (0.5, "0.5"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (4611686018427387904.0, "4.611686018427388e+18"),
            (1e22, "1e+22"),
            (1e9, "1000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-0.000025, "-2.5e-05"),
            (1.5e-7, "1.5e-07"),
            (1e-9, "1e-09"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (123.456, "123.456"),
            (1e100, "1e+100"),
        ];
        for (x, want) in cases {
            assert_eq!(f(*x), *want, "float {x:e}");
        }
    }

    #[test]
    fn canonical_object_and_escapes() {
        let v = parse(r#"{"b":1,"a":[true,null,"é\n"]}"#).unwrap();
        assert_eq!(to_string(&v), "{\"a\":[true,null,\"é\\n\"],\"b\":1}");
        let v = parse(r#"["\u0001\u001f\b\f\r\t/\u007f\u2028"]"#).unwrap();
        assert_eq!(
            to_string(&v),
            "[\"\\u0001\\u001f\\b\\f\\r\\t/\u{7f}\u{2028}\"]"
        );
    }

    #[test]
    fn numbers_keep_their_kind() {
        let v = parse("[2, 2.0, -0, 1E2, 123456789012345678901234567890, 1.5e300]").unwrap();
        assert_eq!(
            to_string(&v),
            "[2,2.0,0,100.0,123456789012345678901234567890,1.5e+300]"
        );
    }

    #[test]
    fn duplicate_keys_last_wins_and_lone_surrogates_fail() {
        assert_eq!(to_string(&parse(r#"{"a":1,"a":2}"#).unwrap()), r#"{"a":2}"#);
        assert!(parse(r#"["\ud800"]"#).is_err());
        assert!(parse(r#"["\udc00x"]"#).is_err());
    }

    #[test]
    fn non_finite_is_detected() {
        assert!(!all_finite(&parse("[1e400]").unwrap()));
        assert!(all_finite(&parse(r#"{"a":[1.5,2]}"#).unwrap()));
    }
}
