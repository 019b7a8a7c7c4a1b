//! Prose gating (D-V8, `plans-and-claims.md` §9 step 4): after claim gating, every number,
//! uid, identifier-like token and completeness word ("all", "every", "complete", "only") in
//! the answer's `text` must be covered by a kept claim that the verifier backed (verdict
//! `supported` or `weakly_supported`); a sentence holding an uncovered assertion is removed,
//! and one mechanical sentence is rendered for each backed claim the remaining text does not
//! mention. The gated text never asserts what no backed claim supports; the raw text stays
//! with the caller (the ask record keeps it for audit).
//!
//! Stricter than the `coverage` metric in two ways, both on the safe side: claims the
//! verifier could not check (`unverifiable`, kept by claim gating) cover nothing, and a
//! token mixing letters and digits (`u999`, `acct17`) counts as an identifier assertion even
//! when it is not a uid of the trace, so an invented identifier cannot survive either.

use crate::claims::{
    number_covered, prose_numbers, prose_percents, token_occurs, uid_strings, SUPPORTED, WEAK,
};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms_engine::canon;

/// Words that assert completeness (matched case-insensitively as whole words).
pub const COMPLETENESS_WORDS: [&str; 4] = ["all", "every", "complete", "only"];

/// The outcome of prose gating.
#[derive(Clone, Debug, PartialEq)]
pub struct ProseGate {
    /// The answer object with its gated text.
    pub answer: Value,
    /// Each removed sentence with the assertions that made it unsupported.
    pub removed: Vec<(String, Vec<String>)>,
    /// The mechanical sentences appended, in claim order.
    pub appended: Vec<String>,
}

impl ProseGate {
    /// `{"removed": [{"sentence", "uncovered"}], "appended": [...]}`.
    pub fn report(&self) -> Value {
        json!({"removed": self.removed.iter().map(|(s, u)| json!({"sentence": s, "uncovered": u})).collect::<Vec<_>>(),
            "appended": self.appended})
    }
}

fn numeric_leaves(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.extend(n.as_f64()),
        Value::Array(a) => a.iter().for_each(|x| numeric_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| numeric_leaves(x, out)),
        _ => {}
    }
}

/// Splits text into sentences: after `.`, `!` or `?` followed by white space or the end,
/// and at line breaks. A decimal point (`3.5`) is not followed by white space, so numbers
/// stay whole.
pub fn sentences(text: &str) -> Vec<String> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, c) in cs.iter().enumerate() {
        if *c == '\n' {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
            continue;
        }
        cur.push(*c);
        let end = matches!(c, '.' | '!' | '?') && cs.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// What the backed claims cover.
struct Cover {
    numbers: Vec<f64>,
    /// Claimed uids and string values, longest first (masked before numbers are read, so
    /// the digits of a covered uid such as `acct-17` are not read as a number).
    strings: Vec<String>,
    complete: bool,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with every token-boundary occurrence of `s` blanked.
fn mask(text: &str, s: &str) -> String {
    if s.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.match_indices(s) {
        if i < last {
            continue;
        }
        let before = text[..i].chars().next_back();
        let after = text[i + s.len()..].chars().next();
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            continue;
        }
        out.push_str(&text[last..i]);
        out.push(' ');
        last = i + s.len();
    }
    out.push_str(&text[last..]);
    out
}

/// The uncovered assertions of one sentence.
fn uncovered(sentence: &str, cover: &Cover, lexicon: &BTreeSet<String>) -> Vec<String> {
    let mut bad = Vec::new();
    for u in lexicon {
        if token_occurs(sentence, u) && !cover.strings.contains(u) {
            bad.push(format!("uid {u}"));
        }
    }
    // Companions of covered times (the reporter's "(2004-04-15T06:00:00Z)") assert nothing
    // more than the covered number.
    let mut masked = crate::claims::mask_utc_companions(sentence, &cover.numbers);
    for s in &cover.strings {
        masked = mask(&masked, s);
    }
    let percents = prose_percents(&masked);
    for x in prose_numbers(&masked) {
        if !number_covered(x, &cover.numbers, &percents) {
            bad.push(format!("number {}", number_text(x)));
        }
    }
    for tok in masked.split(|c: char| !is_word(c)) {
        let letters = tok.chars().any(|c| c.is_ascii_alphabetic());
        let digits = tok.chars().any(|c| c.is_ascii_digit());
        if letters && digits && !lexicon.contains(tok) {
            bad.push(format!("identifier {tok}"));
        }
        if !cover.complete
            && COMPLETENESS_WORDS
                .iter()
                .any(|w| tok.eq_ignore_ascii_case(w))
        {
            bad.push(format!("completeness word '{tok}'"));
        }
    }
    bad
}

/// A prose number as written: integers without a fraction.
fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else {
        canon::to_string(&tgms_operators::json::float(x))
    }
}

fn num_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => canon::to_string(other),
    }
}

fn interval_text(v: &Value) -> String {
    if let (Some(a), Some(b)) = (v.get("start"), v.get("end")) {
        format!("[{}, {})", num_text(a), num_text(b))
    } else if let Some(t) = v.get("t") {
        num_text(t)
    } else {
        format!("[{}, {})", num_text(&v["t_a"]), num_text(&v["t_b"]))
    }
}

/// The mechanical sentence of one claim (§7.2 wording for count, value and entity claims).
pub fn claim_sentence(c: &Value) -> String {
    match c["type"].as_str().unwrap_or("") {
        "count" | "value" => format!("The answer is {}.", num_text(&c["value"])),
        "entity" => {
            let u: Vec<&str> = c["uids"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if u.is_empty() {
                "The entities are: (none).".into()
            } else {
                format!("The entities are: {}.", u.join(", "))
            }
        }
        "ordering" => {
            let rel = match &c["relation"] {
                Value::String(s) => s.replace('_', " "),
                other => match other.get("within") {
                    Some(w) => format!("within {} µs of", num_text(w)),
                    None => canon::to_string(other),
                },
            };
            format!(
                "{} is {rel} {}.",
                interval_text(&c["a"]),
                interval_text(&c["b"])
            )
        }
        "temporal_pattern" => {
            let a = c["assertion"].as_str().unwrap_or("pattern");
            let dir = c["direction"]
                .as_str()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!("There is a {a}{dir} in {}.", interval_text(&c["interval"]))
        }
        _ => String::new(),
    }
}

/// Does `text` mention claim `c` (its value, every uid, or every endpoint)?
fn mentions(text: &str, c: &Value) -> bool {
    let nums = prose_numbers(text);
    let percents = prose_percents(text);
    let has = |v: &Value| match v {
        Value::Number(n) => n.as_f64().is_some_and(|x| {
            nums.contains(&x) || percents.iter().any(|p| (x * 100.0 - p).abs() <= 1e-9)
        }),
        Value::String(s) => token_occurs(text, s),
        // A yes/no value is mentioned by its JSON word (`compute` `compare`).
        Value::Bool(b) => token_occurs(text, if *b { "true" } else { "false" }),
        Value::Null => false,
        _ => false,
    };
    match c["type"].as_str().unwrap_or("") {
        "count" | "value" => has(&c["value"]),
        "entity" => {
            let u: Vec<&Value> = c["uids"].as_array().into_iter().flatten().collect();
            if u.is_empty() {
                text.contains("(none)")
            } else {
                u.iter().all(|x| has(x))
            }
        }
        _ => {
            let mut ns = Vec::new();
            for k in ["a", "b", "interval"] {
                numeric_leaves(&c[k], &mut ns);
            }
            !ns.is_empty() && ns.iter().all(|x| nums.contains(x))
        }
    }
}

/// Gates the text of `gated` (an answer object after claim gating) given `verification`,
/// the verifier output for `gated` itself (claim verdicts in claim order), and the trace's
/// uid lexicon (`uid_lexicon`).
pub fn gate_text(gated: &Value, verification: &Value, uid_lexicon: &BTreeSet<String>) -> ProseGate {
    let claims: Vec<Value> = gated["claims"].as_array().cloned().unwrap_or_default();
    let verdicts: Vec<Value> = verification["claims"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let backed: Vec<(&Value, &str)> = claims
        .iter()
        .zip(verdicts.iter())
        .filter_map(|(c, v)| {
            let v = v["verdict"].as_str().unwrap_or("");
            (v == SUPPORTED || v == WEAK).then_some((c, v))
        })
        .collect();
    let mut cover = Cover {
        numbers: Vec::new(),
        strings: Vec::new(),
        complete: false,
    };
    for (c, v) in &backed {
        if let Value::Object(m) = c {
            for (k, x) in m {
                if k != "id" && k != "evidence" {
                    numeric_leaves(x, &mut cover.numbers);
                }
            }
        }
        for u in c["uids"].as_array().into_iter().flatten() {
            if let Some(s) = u.as_str() {
                cover.strings.push(s.to_string());
            }
        }
        if let Some(s) = c["value"].as_str() {
            cover.strings.push(s.to_string());
        }
        // Completeness is covered only by a fully supported complete-set claim (a capped,
        // weakly supported one says the evidence is incomplete).
        if c["complete"] == Value::Bool(true) && *v == SUPPORTED {
            cover.complete = true;
        }
    }
    // A typed answer verified as supported and complete also covers "all".
    if verification["answer_verdict"] == SUPPORTED
        && gated["answer"]["complete"] == Value::Bool(true)
    {
        cover.complete = true;
    }
    cover
        .strings
        .sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    cover.strings.dedup();
    let text = gated["text"].as_str().unwrap_or_default();
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for s in sentences(text) {
        let bad = uncovered(&s, &cover, uid_lexicon);
        if bad.is_empty() {
            kept.push(s);
        } else {
            removed.push((s, bad));
        }
    }
    let mut appended = Vec::new();
    for (c, _) in &backed {
        let now = kept.join(" ");
        if !mentions(&now, c) {
            let s = claim_sentence(c);
            if !s.is_empty() {
                appended.push(s.clone());
                kept.push(s);
            }
        }
    }
    let mut out = gated.clone();
    let final_text = if kept.is_empty() {
        if gated.get("answer").is_some() {
            "No sentence of the answer could be verified; the typed answer carries the result."
                .to_string()
        } else {
            "No verified answer.".to_string()
        }
    } else {
        kept.join(" ")
    };
    out["text"] = json!(final_text);
    ProseGate {
        answer: out,
        removed,
        appended,
    }
}

/// The uid lexicon of a trace: every string under a uid-typed row field name in the
/// envelopes of its ok steps (the lexicon of the coverage metric, §10.1).
pub fn uid_lexicon(trace: &Value, results: &crate::exec::ResultStore) -> BTreeSet<String> {
    let mut lex = BTreeSet::new();
    for r in trace["steps"].as_array().into_iter().flatten() {
        if r["status"] != "ok" {
            continue;
        }
        if let Some(env) = r["result_digest"]
            .as_str()
            .and_then(|d| results.envelope(d))
        {
            let mut v = Vec::new();
            uid_strings(&env, false, &mut v);
            lex.extend(v);
        }
    }
    lex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ver(vs: &[&str]) -> Value {
        json!({"claims": vs.iter().map(|v| json!({"verdict": v})).collect::<Vec<_>>(), "answer_verdict": null})
    }

    #[test]
    fn dropped_count_leaves_no_prose() {
        // Claim gating dropped the count c1 = 5; the text still says 5.
        let g = json!({"text": "The answer is 5.", "claims": []});
        let p = gate_text(&g, &ver(&[]), &BTreeSet::new());
        assert_eq!(p.answer["text"], "No verified answer.");
        assert_eq!(
            p.removed,
            vec![("The answer is 5.".to_string(), vec!["number 5".to_string()])]
        );
    }

    #[test]
    fn keeps_covered_removes_uncovered_appends_missing() {
        let lex: BTreeSet<String> = ["u1", "u2", "u3"].iter().map(|s| s.to_string()).collect();
        let g = json!({"text": "Alice reached 4 accounts. Everyone loves u3 and u999. These are all of them.\nu1 is one.",
            "claims": [{"id": "c1", "type": "count", "value": 4, "evidence": ["s2"]},
                       {"id": "c2", "type": "entity", "uids": ["u1", "u2"], "evidence": ["s2"]},
                       {"id": "c3", "type": "count", "value": 9, "evidence": ["s9"]}]});
        let p = gate_text(
            &g,
            &ver(&["supported", "weakly_supported", "unverifiable"]),
            &lex,
        );
        assert_eq!(
            p.answer["text"],
            "Alice reached 4 accounts. u1 is one. The entities are: u1, u2."
        );
        assert_eq!(p.removed.len(), 2);
        assert_eq!(
            p.removed[0].1,
            vec!["uid u3".to_string(), "identifier u999".to_string()]
        );
        assert_eq!(p.removed[1].1, vec!["completeness word 'all'".to_string()]);
        assert_eq!(p.appended, vec!["The entities are: u1, u2.".to_string()]);
    }

    #[test]
    fn covered_uid_digits_are_not_numbers_and_decimals_stay_whole() {
        let g = json!({"text": "The top sender is acct-17 with 3.5 messages per day.",
            "claims": [{"id": "c1", "type": "value", "value": "acct-17", "evidence": ["s1"]},
                       {"id": "c2", "type": "value", "value": 3.5, "evidence": ["s1"]}]});
        let p = gate_text(&g, &ver(&["supported", "supported"]), &BTreeSet::new());
        assert_eq!(p.answer["text"], g["text"]);
        assert!(p.removed.is_empty() && p.appended.is_empty());
        assert_eq!(sentences("a 3.5 b. c! d?e"), vec!["a 3.5 b.", "c!", "d?e"]);
    }

    #[test]
    fn completeness_needs_a_supported_complete_claim() {
        let g = json!({"text": "These are all the contacts: u1.",
            "claims": [{"id": "c1", "type": "entity", "uids": ["u1"], "complete": true, "from": "s1.rows", "evidence": ["s1"]}]});
        let lex: BTreeSet<String> = ["u1".to_string()].into();
        assert_eq!(
            gate_text(&g, &ver(&["supported"]), &lex).answer["text"],
            g["text"]
        );
        let weak = gate_text(&g, &ver(&["weakly_supported"]), &lex);
        assert_eq!(weak.answer["text"], "The entities are: u1.");
    }
}
