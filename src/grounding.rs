//! The default task input uids of a plan (agent-surface §11.3): every registered uid that
//! occurs in the plan's `question` at a token boundary (the rule of
//! `tgms_verifier::claims::token_occurs`). Shared by `tgms plan validate|run` and the MCP
//! server's `validate_plan` / `run_plan`.
//!
//! Cost: the question's boundary-delimited substrings are looked up in the store
//! (O(question length² · lookup)), never a scan of the store's uids.

use serde_json::Value;
use std::collections::BTreeSet;
use tgms_engine::Snapshot;

/// The longest uid the derivation looks for, in bytes; longer uids must be given explicitly.
pub const MAX_UID_BYTES: usize = 512;

/// True for the characters `token_occurs` treats as part of a word.
fn word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Registered uids occurring in `text` at token boundaries: a substring counts when the
/// character before it and the one after it are not word characters.
pub fn uids_in_text(snap: Snapshot<'_>, text: &str) -> BTreeSet<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found = BTreeSet::new();
    let mut check = |cand: &str| {
        if snap.has_uid(cand) {
            found.insert(cand.to_string());
        }
    };
    for (s, &(start, _)) in chars.iter().enumerate() {
        if s > 0 && word(chars[s - 1].1) {
            continue;
        }
        // Candidates end before a non-word character, or at the end of the text.
        for &(end, c) in &chars[s + 1..] {
            if end - start > MAX_UID_BYTES {
                break;
            }
            if !word(c) {
                check(&text[start..end]);
            }
        }
        if text.len() - start <= MAX_UID_BYTES {
            check(&text[start..]);
        }
    }
    found
}

/// The task input uids for a plan: the explicit set when given, otherwise the uids its
/// `question` names; `None` (no grounding check) when neither exists.
pub fn task_input_uids(
    snap: Snapshot<'_>,
    plan: &Value,
    explicit: Option<BTreeSet<String>>,
) -> Option<BTreeSet<String>> {
    if explicit.is_some() {
        return explicit;
    }
    let q = plan.get("question").and_then(Value::as_str)?;
    Some(uids_in_text(snap, q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgms_engine::Store;

    #[test]
    fn finds_exactly_the_uids_a_boundary_scan_finds() {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Store::create(dir.path()).unwrap();
        let op = tgms_engine::canon::parse(
            r#"{"op":"ingest_events","events":[
              {"src":"n1","dst":"n12","rel_type":"MSG","vt_s":1},{"src":"ab_c","dst":"x:y z","rel_type":"MSG","vt_s":2},
              {"src":"héllo","dst":"n3","rel_type":"MSG","vt_s":3}]}"#,
        )
        .unwrap();
        st.write(vec![tgms_engine::Op::from_json(&op)]).unwrap();
        let snap = st.snapshot();
        let q = "did n1 talk to n12, n123 or _n3 and x:y z? héllo! ab_cd ab_c.";
        let got = uids_in_text(snap, q);
        // Oracle: the verifier's own boundary rule over every registered uid.
        let all = ["n1", "n12", "ab_c", "x:y z", "héllo", "n3"];
        let want: BTreeSet<String> = all
            .iter()
            .filter(|u| tgms_verifier::claims::token_occurs(q, u))
            .map(|u| u.to_string())
            .collect();
        assert_eq!(got, want);
        assert!(got.contains("x:y z") && !got.contains("n3"));
    }
}
