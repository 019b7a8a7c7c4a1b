//! `docs/plan-language.md` is executable: the example store written in the page is built, every
//! ```` ```json plan ```` example is validated and run with the `tgms` binary, and the fields
//! shown in the ```` ```json output ```` / ```` ```json validation ```` block after it must
//! equal the actual result. Every `compute` function has a worked example, and every error
//! code and every message the plan verifier, the executor, the `$ref` language and `compute`
//! can emit (read from their source files) is documented on the page.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const PAGE: &str = "docs/plan-language.md";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .expect("run tgms")
}

fn json_of(o: &Output, what: &str) -> Value {
    let s = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(s.trim()).unwrap_or_else(|e| {
        panic!(
            "{what}: stdout is not JSON ({e}): {s}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// One fenced block: its info string (after the backticks), body and 1-based first line.
struct Block {
    info: String,
    body: String,
    line: usize,
}

fn blocks(md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, l) in md.lines().enumerate() {
        if let Some(rest) = l.strip_prefix("```") {
            match cur.take() {
                Some(b) => out.push(b),
                None => {
                    cur = Some(Block {
                        info: rest.trim().to_string(),
                        body: String::new(),
                        line: i + 1,
                    })
                }
            }
        } else if let Some(b) = cur.as_mut() {
            b.body.push_str(l);
            b.body.push('\n');
        }
    }
    assert!(cur.is_none(), "{PAGE}: an unclosed code block");
    out
}

/// `expected` ⊆ `actual`: every key of an expected object is in the actual one with a
/// matching value; arrays match element by element with the same length; other values are
/// equal (JSON numbers by their text, so `2.5`, `2` and `2.0` differ). An expected string
/// ending in `…` matches any actual string with that prefix. Returns the first mismatch.
fn mismatch(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().find_map(|(k, v)| match a.get(k) {
            None => Some(format!("{path}.{k}: missing in the actual result")),
            Some(x) => mismatch(v, x, &format!("{path}.{k}")),
        }),
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!(
                    "{path}: {} elements shown, {} actual: {}",
                    e.len(),
                    a.len(),
                    actual
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (x, y))| mismatch(x, y, &format!("{path}[{i}]")))
        }
        (Value::String(e), Value::String(a)) if e.ends_with('…') => {
            let prefix = e.trim_end_matches('…');
            (!a.starts_with(prefix))
                .then(|| format!("{path}: {a:?} does not start with {prefix:?}"))
        }
        (e, a) if e == a => None,
        (e, a) => Some(format!("{path}: shown {e}, actual {a}")),
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The example store: the page's one ```` ```json batch ```` block, written to a new store.
fn build_store(dir: &Path, bs: &[Block]) -> std::path::PathBuf {
    let batches: Vec<&Block> = bs.iter().filter(|b| b.info == "json batch").collect();
    assert_eq!(
        batches.len(),
        1,
        "{PAGE} must hold exactly one ```json batch block"
    );
    let s = dir.join("store");
    assert!(tgms(&["init", p(&s)]).status.success());
    let f = dir.join("batch.json");
    std::fs::write(&f, &batches[0].body).unwrap();
    let o = tgms(&["write", p(&s), p(&f)]);
    assert!(
        o.status.success(),
        "the example batch does not load: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    s
}

struct Example<'b> {
    plan: &'b Block,
    /// Extra command-line arguments from the info string (`json plan --ceilings {...}`).
    flags: Vec<String>,
    expect: &'b Block,
}

fn examples(bs: &[Block]) -> Vec<Example<'_>> {
    let mut out = Vec::new();
    for (i, b) in bs.iter().enumerate() {
        let Some(rest) = b.info.strip_prefix("json plan") else {
            continue;
        };
        let expect = bs
            .get(i + 1)
            .filter(|n| n.info == "json output" || n.info == "json validation")
            .unwrap_or_else(|| {
                panic!(
                    "{PAGE}:{}: a plan example must be followed by a ```json output or ```json validation block",
                    b.line
                )
            });
        out.push(Example {
            plan: b,
            flags: rest.split_whitespace().map(String::from).collect(),
            expect,
        });
    }
    out
}

#[test]
fn every_example_plan_gives_the_result_shown() {
    let md = read(PAGE);
    let bs = blocks(&md);
    let d = tempfile::tempdir().unwrap();
    let store = build_store(d.path(), &bs);
    let exs = examples(&bs);
    assert!(exs.len() >= 40, "only {} examples found", exs.len());
    let mut failures = Vec::new();
    for (n, ex) in exs.iter().enumerate() {
        let at = format!("{PAGE}:{}", ex.plan.line);
        let plan: Value = serde_json::from_str(&ex.plan.body)
            .unwrap_or_else(|e| panic!("{at}: the plan is not JSON: {e}"));
        let expected: Value = serde_json::from_str(&ex.expect.body)
            .unwrap_or_else(|e| panic!("{PAGE}:{}: not JSON: {e}", ex.expect.line));
        let pf = d.path().join(format!("plan{n}.json"));
        std::fs::write(&pf, plan.to_string()).unwrap();
        let flags: Vec<&str> = ex.flags.iter().map(String::as_str).collect();
        let validate: Vec<&str> = [&["plan", "validate", p(&store), p(&pf)][..], &flags].concat();
        let vo = tgms(&validate);
        let report = json_of(&vo, &at);
        let valid = report["valid"] == Value::Bool(true);
        // The exit code follows the report.
        if vo.status.code() != Some(if valid { 0 } else { 1 }) {
            failures.push(format!(
                "{at}: plan validate exit {:?} with {report}",
                vo.status
            ));
        }
        let actual = if ex.expect.info == "json validation" {
            report
        } else {
            if !valid {
                failures.push(format!("{at}: the plan does not validate: {report}"));
                continue;
            }
            let tf = d.path().join(format!("trace{n}.json"));
            let run: Vec<&str> = [
                &["plan", "run", p(&store), p(&pf), "--trace-out", p(&tf)][..],
                &flags,
            ]
            .concat();
            let ro = tgms(&run);
            let mut out = json_of(&ro, &at);
            if ro.status.code() != Some(if out["ok"] == Value::Bool(true) { 0 } else { 1 }) {
                failures.push(format!("{at}: plan run exit {:?} with {out}", ro.status));
            }
            let trace = std::fs::read_to_string(&tf).unwrap();
            out["trace"] = serde_json::from_str(&trace).unwrap();
            out
        };
        if let Some(m) = mismatch(&expected, &actual, "") {
            failures.push(format!(
                "{at}: {m}\n    (the {} block at line {} no longer matches)",
                ex.expect.info, ex.expect.line
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `fn` enum of `compute` as the binary publishes it.
fn compute_fns() -> Vec<String> {
    let o = tgms(&["tools"]);
    assert!(o.status.success());
    let tools = json_of(&o, "tgms tools");
    let compute = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "compute")
        .expect("compute is a tool");
    compute["input_schema"]["properties"]["fn"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_compute_function_has_a_worked_example() {
    let md = read(PAGE);
    let bs = blocks(&md);
    let exs = examples(&bs);
    let fns = compute_fns();
    assert!(fns.len() >= 22, "{fns:?}");
    let missing: Vec<&String> = fns
        .iter()
        .filter(|f| {
            !exs.iter().any(|e| {
                e.expect.info == "json output"
                    && serde_json::from_str::<Value>(&e.plan.body).is_ok_and(|p| {
                        p["steps"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|s| s["op"] == "compute" && s["args"]["fn"] == f.as_str())
                    })
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "compute functions without a worked example (a ```json plan block using them, followed by ```json output) in {PAGE}: {missing:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Error codes and messages, read from the source.

/// Every string literal of a Rust source text: `(byte offset of the opening quote, content)`.
/// Comments, char literals and raw strings are skipped (the scanned files build messages
/// from ordinary literals only).
fn literals(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                // A char literal ('x', '\n', '\'') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
                i += 1;
            }
            b'"' => {
                let start = i;
                let mut s = String::new();
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                        match b[i] {
                            b'n' => s.push('\n'),
                            b'\n' => {
                                // A line continuation: skip the next line's indentation.
                                while i + 1 < b.len() && b[i + 1].is_ascii_whitespace() {
                                    i += 1;
                                }
                            }
                            c => s.push(c as char),
                        }
                        i += 1;
                        continue;
                    }
                    let ch = src[i..].chars().next().unwrap();
                    s.push(ch);
                    i += ch.len_utf8();
                }
                out.push((start, s));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the code before a literal (whitespace removed) makes it an error message: the
/// message argument of `Violation::new(CODE, …)`, `err_payload(CODE, …)`,
/// `OpError::new|with(Code::X, …)`, `OpError::invalid|internal(…)`, `inv(…)`, `err(…)`, or a
/// `"message":` value, directly or through `format!(`.
fn is_message(before: &str) -> bool {
    let pre: String = before.chars().filter(|c| !c.is_whitespace()).collect();
    let pre = pre.strip_suffix("format!(").unwrap_or(&pre);
    let pre = pre.strip_suffix('&').unwrap_or(pre);
    if [
        "OpError::invalid(",
        "OpError::internal(",
        "inv(",
        "err(",
        "\"message\":",
        "#[error(",
    ]
    .iter()
    .any(|s| pre.ends_with(s))
    {
        return true;
    }
    // OPENER CODE, — the code is a literal "E_…" or a path Code::X.
    let Some(head) = pre.strip_suffix(',') else {
        return false;
    };
    [
        "Violation::new(",
        "err_payload(",
        "OpError::new(",
        "OpError::with(",
    ]
    .iter()
    .any(|o| {
        head.rfind(o).is_some_and(|k| {
            let code = &head[k + o.len()..];
            let literal = code.len() > 4
                && code.starts_with("\"E_")
                && code.ends_with('"')
                && code[1..code.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_');
            let path = code.contains("Code::")
                && code
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_');
            literal || path
        })
    })
}

/// The longest literal piece of a message template (between `{…}` placeholders).
fn longest_piece(template: &str) -> String {
    let mut pieces = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in template.chars() {
        match c {
            '{' => {
                depth += 1;
                pieces.push(std::mem::take(&mut cur));
            }
            '}' if depth > 0 => depth -= 1,
            c if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    pieces.push(cur);
    pieces
        .into_iter()
        .map(|s| s.trim().to_string())
        .max_by_key(|s| s.chars().count())
        .unwrap_or_default()
}

/// The files whose messages the page must document.
const MESSAGE_SOURCES: [&str; 7] = [
    "verifier/src/plan.rs",
    "verifier/src/error.rs",
    "verifier/src/validate.rs",
    "verifier/src/refpath.rs",
    "verifier/src/exec.rs",
    "operators/src/pipeline.rs",
    "operators/src/ops/compute.rs",
];

/// Messages of [`MESSAGE_SOURCES`] that are not plan errors: reasons of the claim verifier's
/// verdicts (`verifier/src/error.rs` holds both).
const CLAIM_REASONS: [&str; 2] = ["malformed claim ({})", "evidence step unavailable"];

fn messages() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in MESSAGE_SOURCES {
        let src = read(f);
        // The message builders of the tests modules are not messages of the product.
        let src = src.split("#[cfg(test)]").next().unwrap_or_default();
        for (at, lit) in literals(src) {
            if is_message(&src[at.saturating_sub(120)..at]) && !CLAIM_REASONS.contains(&&*lit) {
                let line = src[..at].lines().count();
                out.push((format!("{f}:{line}"), lit));
            }
        }
    }
    out
}

#[test]
fn the_message_scanner_finds_messages() {
    let src = r#"Violation::new("E_SCHEMA", "duplicate step ids".into(), None)
        Violation::new(
            "E_INVALID_ARG",
            format!("window {text} does not intersect dataset extent [{lo}, {hi})"),
        OpError::new(Code::Limit, "plan exceeds 12 steps")
        err_payload("E_LIMIT", &format!("plan wall clock {elapsed:.1}s > 60s"))
        json!({"error": "E_LIMIT", "message": format!("compute {fname} would reduce")})
        return Err(inv("empty input"));
        #[error("materialized rows {rows} > {max_total_rows}")]
        let c = 'x'; let q = '\''; json!({"path": "not a message"})"#;
    let found: Vec<String> = literals(src)
        .into_iter()
        .filter(|(at, _)| is_message(&src[at.saturating_sub(120)..*at]))
        .map(|x| x.1)
        .collect();
    assert_eq!(
        found,
        [
            "duplicate step ids",
            "window {text} does not intersect dataset extent [{lo}, {hi})",
            "plan exceeds 12 steps",
            "plan wall clock {elapsed:.1}s > 60s",
            "compute {fname} would reduce",
            "empty input",
            "materialized rows {rows} > {max_total_rows}"
        ]
    );
    assert_eq!(
        longest_piece("window {text} does not intersect dataset extent [{lo}, {hi})"),
        "does not intersect dataset extent ["
    );
}

#[test]
fn every_error_message_of_plans_is_documented() {
    let md = read(PAGE);
    let msgs = messages();
    // Enough to be sure the scanner still reads the sources.
    assert!(msgs.len() >= 60, "only {} messages found", msgs.len());
    let missing: Vec<String> = msgs
        .iter()
        .filter(|(_, m)| {
            let piece = longest_piece(m);
            !piece.is_empty() && !md.contains(&piece)
        })
        .map(|(at, m)| format!("{at}: {m:?}"))
        .collect();
    assert!(
        missing.is_empty(),
        "messages not documented in {PAGE} (add each to the error tables, with its repair):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_error_code_is_documented() {
    let md = read(PAGE);
    let mut codes = std::collections::BTreeSet::new();
    for f in [
        "verifier/src/validate.rs",
        "verifier/src/exec.rs",
        "verifier/src/error.rs",
        "verifier/src/refpath.rs",
        "operators/src/error.rs",
        "src/main.rs",
    ] {
        for (_, lit) in literals(&read(f)) {
            if lit.len() > 3
                && lit.starts_with("E_")
                && lit.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            {
                codes.insert(lit);
            }
        }
    }
    assert!(codes.len() >= 12, "{codes:?}");
    let missing: Vec<&String> = codes
        .iter()
        .filter(|c| !md.contains(&format!("| `{c}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "error codes without a row `| `CODE` | …` in {PAGE}: {missing:?}"
    );
}
