//! Reply parsing (`agent-surface.md` §4.1, `strip_fences`): `<think>` blocks removed,
//! markdown code fences stripped, then strict JSON.

use serde_json::Value;

/// Removes every `<think>…</think>` block (non-greedy, across lines); an unclosed
/// `<think>` removes the rest of the text (a reasoning model cut off mid-thought emitted no
/// plan after it).
fn drop_think(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<think>") {
        out.push_str(&rest[..i]);
        match rest[i..].find("</think>") {
            Some(j) => rest = &rest[i + j + "</think>".len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The fenced blocks of `text`: (inside, whole block spans the text).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("```") {
        let after = &rest[i + 3..];
        // The info string (`json`, ...) runs to the end of the opening line.
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let Some(j) = body.find("```") else { break };
        out.push(&body[..j]);
        rest = &body[j + 3..];
    }
    out
}

/// `strip_fences` of §4.1 steps 1–4 (without the JSON parse).
pub fn strip_fences(text: &str) -> String {
    let t = drop_think(text);
    let t = t.trim();
    if t.starts_with("```") && t.ends_with("```") && t.len() >= 6 {
        let blocks = fenced_blocks(t);
        if blocks.len() == 1 {
            return blocks[0].trim().to_string();
        }
    }
    if let Some(b) = fenced_blocks(t)
        .into_iter()
        .find(|b| b.contains('{') && b.contains('}'))
    {
        return b.trim().to_string();
    }
    t.to_string()
}

/// `strip_fences` then a strict JSON parse; the error is the parser's message.
pub fn parse_reply(text: &str) -> Result<Value, String> {
    let s = strip_fences(text);
    if s.is_empty() {
        return Err("empty reply".into());
    }
    tgms_engine::canon::parse(&s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_and_think() {
        assert_eq!(strip_fences("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(strip_fences("  ```\n{}\n```  "), "{}");
        assert_eq!(
            strip_fences("<think>plan {x}\n</think>Here:\n```json\n{\"b\":2}\n```\nDone."),
            "{\"b\":2}"
        );
        assert_eq!(
            strip_fences("```\nno\n```\n```json\n{\"c\":3}\n```"),
            "{\"c\":3}"
        );
        assert_eq!(strip_fences("{\"d\":4}"), "{\"d\":4}");
        assert_eq!(strip_fences("<think>never closed {\"e\":5}"), "");
        assert!(parse_reply("").unwrap_err().contains("empty"));
        assert!(parse_reply("{\"a\":").is_err());
    }
}
