//! Data fences and prompt-injection defense (`agent-surface.md` §6): every store- or
//! memory-derived string that reaches a prompt is escaped so no `<data>` fence can be opened
//! or closed from inside it, length-capped, and wrapped in one fence. Operator outputs
//! themselves are never altered, only their prompt renderings.

use serde_json::{Map, Value};
use tgms_engine::canon;

/// Default cap of [`fence`], in characters.
pub const FENCE_CAP_CHARS: usize = 512;
/// Cap of strings under a key named `name` in [`sanitize`], in characters.
pub const NAME_CAP_CHARS: usize = 128;
/// Cap of every other string in [`sanitize`], in characters.
pub const STRING_CAP_CHARS: usize = 512;
/// The suffix of a cut string.
pub const TRUNCATED: &str = "…[truncated]";

/// Replaces every `<` that starts a case-insensitive `<data` or `</data` by the four
/// characters `\x3c` (D-P1: attribute and case variants such as `</DATA>` or `<data id=1>`
/// are escaped too, so a fence can never be closed from inside data).
pub fn escape_fences(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (i, _) in s.match_indices('<') {
        let rest = &b[i + 1..];
        let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
        if starts(b"data") || starts(b"/data") {
            out.push_str(&s[last..i]);
            out.push_str("\\x3c");
            last = i + 1;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// `s` cut to `cap_chars` characters plus [`TRUNCATED`] when longer.
pub fn cap(s: &str, cap_chars: usize) -> String {
    match s.char_indices().nth(cap_chars) {
        Some((i, _)) => format!("{}{TRUNCATED}", &s[..i]),
        None => s.to_string(),
    }
}

/// `"<data>" + s + "</data>"`, `s` = the escaped text of `value` (a string as is, any other
/// value as canonical JSON) cut to `cap_chars`.
pub fn fence(value: &Value, cap_chars: usize) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => canon::to_string(other),
    };
    format!("<data>{}</data>", cap(&escape_fences(&text), cap_chars))
}

/// Recursively escapes every string; strings under a key named `name` are capped at
/// [`NAME_CAP_CHARS`], all others at [`STRING_CAP_CHARS`]. Keys and non-strings unchanged.
pub fn sanitize(v: &Value) -> Value {
    fn go(v: &Value, cap_chars: usize) -> Value {
        match v {
            Value::String(s) => Value::String(cap(&escape_fences(s), cap_chars)),
            Value::Array(a) => Value::Array(a.iter().map(|x| go(x, STRING_CAP_CHARS)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let c = if k == "name" {
                            NAME_CAP_CHARS
                        } else {
                            STRING_CAP_CHARS
                        };
                        (k.clone(), go(x, c))
                    })
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }
    go(v, STRING_CAP_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_example_and_variants() {
        // agent-surface §6 example.
        assert_eq!(
            fence(&json!("note </data> one"), FENCE_CAP_CHARS),
            "<data>note \\x3c/data> one</data>"
        );
        assert_eq!(
            escape_fences("a</DATA>b<Data id=1><dat"),
            "a\\x3c/DATA>b\\x3cData id=1><dat"
        );
        assert_eq!(escape_fences("é<data>"), "é\\x3cdata>");
    }

    #[test]
    fn caps_by_key() {
        let long = "x".repeat(600);
        let s = sanitize(&json!({"name": long, "other": [long], "n": 3}));
        assert_eq!(
            s["name"].as_str().unwrap().chars().count(),
            128 + TRUNCATED.chars().count()
        );
        assert_eq!(
            s["other"][0].as_str().unwrap().chars().count(),
            512 + TRUNCATED.chars().count()
        );
        assert_eq!(s["n"], json!(3));
        assert_eq!(
            fence(&json!("abc"), 2),
            format!("<data>ab{TRUNCATED}</data>")
        );
    }
}
