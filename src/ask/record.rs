//! The ask record (`agent-surface.md` §2 step 6): everything one question produced —
//! question, every plan emission with its violations, the executed traces, the raw, the
//! claim-gated and the prose-gated answer — content-addressed by the digest of the record
//! without its timing fields, and stored as `asks/<ask_id>.json` in the store directory.

use super::AskError;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tgms_engine::canon;

/// Keys whose values are wall-clock measurements: excluded from the ask id, so the same
/// question on the same store state with the same replies has the same id.
pub const TIMING_KEYS: [&str; 4] = ["latency_ms", "wall_ms", "timing", "ask_id"];

/// Lowercase hex SHA-256 of `s`.
pub fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !TIMING_KEYS.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), strip(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// `digest` of the record without timing fields.
pub fn ask_id(record: &Value) -> String {
    canon::digest(&strip(record))
}

/// The directory of ask records inside a store directory.
pub fn dir(store_dir: &Path) -> PathBuf {
    store_dir.join("asks")
}

/// Writes the record atomically (temporary file, then rename); an existing record with the
/// same id is left as it is (first writer wins, as for results).
pub fn save(store_dir: &Path, ask_id: &str, record: &Value) -> Result<PathBuf, AskError> {
    let d = dir(store_dir);
    let path = d.join(format!("{ask_id}.json"));
    if path.exists() {
        return Ok(path);
    }
    let tmp = d.join(format!(".{ask_id}.tmp"));
    let io = |source| AskError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(&d).map_err(io)?;
    std::fs::write(&tmp, canon::to_string(record)).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(path)
}

/// The stored record of `ask_id`, if any.
pub fn load(store_dir: &Path, ask_id: &str) -> Option<Value> {
    if ask_id.len() != 64 || !ask_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let text = std::fs::read_to_string(dir(store_dir).join(format!("{ask_id}.json"))).ok()?;
    canon::parse(&text).ok()
}

/// The human-readable summary `tgms ask` prints without `--json`: the final answer, the
/// kept claims with their verdicts, and the planning outcome.
pub fn summary_text(rec: &Value) -> String {
    let mut lines = vec![format!(
        "{}",
        rec["gated_answer_object"]["text"].as_str().unwrap_or("")
    )];
    let verdicts = rec["final_verification"]["claims"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (c, v) in rec["gated_answer_object"]["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(verdicts.iter())
    {
        lines.push(format!(
            "  claim {} ({}): {} — {}",
            c["id"].as_str().unwrap_or(""),
            c["type"].as_str().unwrap_or(""),
            v["verdict"].as_str().unwrap_or(""),
            v["reason"].as_str().unwrap_or("")
        ));
    }
    let attempts = rec["plan_result"]["attempts"]
        .as_array()
        .map_or(0, Vec::len);
    lines.push(format!(
        "plan emissions: {attempts} (repairs: {}); plan ran: {}; trace ok: {}; trace_id: {}",
        attempts.saturating_sub(1),
        !rec["trace"].is_null(),
        rec["ok"],
        rec["trace"]["trace_id"].as_str().unwrap_or("-")
    ));
    lines.push(format!("ask_id: {}", rec["ask_id"].as_str().unwrap_or("")));
    lines.join("\n")
}
