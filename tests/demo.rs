//! `tgms demo` runs offline against the shipped data and its checks hold: the correction
//! probe's before/after answers, three verified plans (valid, trace ok, every emitted claim
//! supported, a deliberately wrong claim rejected and gated), the incident answer and its
//! claim verdicts, 0 state-at-T errors for `state_at` and more than 0 for the naive lookup;
//! the HTML trace viewer page is self-contained and `tgms view` renders the same trace.

use std::process::Command;

#[test]
fn demo_runs_and_its_checks_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("demo");
    let html = dir.path().join("trace.html");
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("demo")
        .arg("--dir")
        .arg(&d)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for needle in [
        "[PASS] CollegeMsg store digest — da717ee9940ec86ac48b6e83f3f0cd7473818faf0667dae69b7884a38f977285",
        "[PASS] n772: before = {}, after = the corrected props",
        "node.props = {}",
        r#"node.props = {"note":"correction probe","revised":true}"#,
        "[PASS] all eight probes: 1 version before, 3 now",
        "answer (current beliefs)      instance:m5.xlarge",
        "preceding change              HAS_INSTANCE_TYPE instance:m5.xlarge from 2026-03-10 14:30 UTC",
        "[PASS] every invalidation carries a reason",
        "[PASS] naive latest-valid_from lookup is wrong (reports t3.large)",
        "[PASS] state_at: 0 errors of 117 — 0 errors",
        "[PASS] naive lookup: > 0 errors — 45 errors",
        "tgms state_at                         36/36     36/36    36/36      9/9   117/117",
        "[PASS] every registered operator answered",
        "(b) verified plans",
        "[PASS] demo-burst-days: plan valid (static verifier) — 0 violations",
        "[PASS] demo-burst-days: trace ok — every step ok, the answer resolved",
        "[PASS] demo-burst-days: every emitted claim supported — 2 claims + typed answer",
        "[PASS] demo-burst-days: the deliberately wrong claim is rejected — unsupported, dropped: c3",
        "[PASS] demo-contacts: plan valid (static verifier)",
        "[PASS] demo-contacts: trace ok",
        "[PASS] demo-contacts: every emitted claim supported — 2 claims + typed answer",
        "[PASS] demo-contacts: the deliberately wrong claim is rejected — unsupported, dropped: c3",
        "c3  entity    {\"uids\":[\"n999999\"]}",
        "[PASS] demo-correction-probe: plan valid (static verifier)",
        "[PASS] demo-correction-probe: trace ok",
        "[PASS] demo-correction-probe: every emitted claim supported — 3 claims + typed answer",
        "[PASS] demo-correction-probe: the deliberately wrong claim is rejected — unsupported, dropped: c4",
        "answer: \"correction probe\"\n            (complete: true; typed answer verdict: supported)",
        "The same answer as a verified plan, its claims checked against the trace:",
        "[PASS] incident-config-at-outage",
        "answer: \"instance:m5.xlarge\"\n            (complete: true; typed answer verdict: supported)",
        "the change precedes the outage; reason:",
        "checks passed — PASS",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains("[FAIL]"), "{out}");
    // For people: 100 columns, plain words, no colour codes when stdout is not a terminal.
    for l in out.lines() {
        assert!(l.chars().count() <= 100, "line over 100 columns: {l}");
    }
    for internal in ["TV20", "§", "D-A1", "D-V", "ucr ", "\x1b["] {
        assert!(
            !out.contains(internal),
            "internal label {internal:?} in\n{out}"
        );
    }
    // Every latency query answers with rows on the demo store (a 0-row query shows nothing).
    let latency: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("(e) operator latency"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with(' '))
        .collect();
    assert!(latency.len() >= 15, "{latency:?}");
    for l in &latency {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cols.last(), Some(&"ok"), "{l}");
        assert_ne!(cols[4], "0", "a latency query returned no rows: {l}");
    }
    // No claim verdict other than the deliberately wrong ones is unsupported.
    assert_eq!(out.matches("→ unsupported").count(), 3, "{out}");
    assert_eq!(out.matches("→ supported").count(), 9, "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    check_page(&page, &d);
    // The demo's page shows the deliberately wrong claim rejected and gated.
    assert!(page.contains("<td class=\"bad\">unsupported</td>"));
    assert!(page.contains("claims dropped by gating: <b>c4</b>"));
    // `tgms view` renders the same trace from the store with the same renderer.
    let tid = trace_id_of(&out, "demo-correction-probe");
    let viewed = dir.path().join("view.html");
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("view")
        .arg(d.join("collegemsg"))
        .arg(&tid)
        .arg("--plan")
        .arg(d.join("plans/demo-correction-probe.plan.json"))
        .arg("--out")
        .arg(&viewed)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let vpage = std::fs::read_to_string(&viewed).unwrap();
    check_page(&vpage, &d);
    // The mechanical answer's claim only (no demo claims without --answer), supported.
    assert!(!vpage.contains("unsupported</td>"));
    // With --answer, the demo's answer object (with its wrong claim) is re-verified.
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("view")
        .arg(d.join("collegemsg"))
        .arg(&tid)
        .arg("--plan")
        .arg(d.join("plans/demo-correction-probe.plan.json"))
        .arg("--answer")
        .arg(d.join("plans/demo-correction-probe.answer.json"))
        .arg("--out")
        .arg(&viewed)
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("view prints one JSON object");
    let verdicts: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["supported", "supported", "supported", "unsupported"]
    );
    let vpage = std::fs::read_to_string(&viewed).unwrap();
    check_page(&vpage, &d);
    assert!(vpage.contains("<td class=\"bad\">unsupported</td>"));
    assert!(vpage.contains("claims dropped by gating: <b>c4</b>"));
    // Stores are kept in DIR.
    assert!(d.join("collegemsg").is_dir() && d.join("incident").is_dir());
}

fn trace_id_of(out: &str, plan_id: &str) -> String {
    let plan = out
        .find(&format!("  Plan {plan_id}\n"))
        .unwrap_or_else(|| panic!("no plan {plan_id}"));
    let needle = "    trace: ";
    let i = plan
        + out[plan..]
            .find(needle)
            .unwrap_or_else(|| panic!("no trace of {plan_id}"));
    out[i + needle.len()..].chars().take(64).collect()
}

/// The page of the correction-probe plan: plan id, trace id, every step id with its
/// result digest, every claim verdict; self-contained.
fn check_page(page: &str, d: &std::path::Path) {
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("demo-correction-probe"));
    let plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("plans/demo-correction-probe.plan.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(plan["steps"].as_array().unwrap().len(), 4);
    let store = d.join("collegemsg");
    let traces: Vec<_> = std::fs::read_dir(store.join("traces")).unwrap().collect();
    let mut found = false;
    for t in traces {
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(t.unwrap().path()).unwrap()).unwrap();
        if t["plan_id"] != "demo-correction-probe" {
            continue;
        }
        found = true;
        assert!(page.contains(t["trace_id"].as_str().unwrap()));
        assert!(page.contains(t["plan_digest"].as_str().unwrap()));
        for s in t["steps"].as_array().unwrap() {
            let sid = s["step_id"].as_str().unwrap();
            assert!(page.contains(&format!("id=\"step-{sid}\"")), "{sid}");
            assert!(page.contains(s["result_digest"].as_str().unwrap()));
            assert!(page.contains(s["resolved_args_digest"].as_str().unwrap()));
        }
    }
    assert!(found);
    assert!(page.contains("<td class=\"ok\">supported</td>"));
    assert!(page.contains("answer_verdict: <span class=\"ok\">"));
    assert!(!page.contains("<script src"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains("<link"));
}

#[test]
fn demo_refuses_a_non_empty_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), "x").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .arg("demo")
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stdout).contains("E_STATE"));
}

#[test]
fn eval_commands_pass_and_print_their_records() {
    for which in ["incident", "state-regression"] {
        let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
            .args(["eval", which, "--json"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{which}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["harness"], which);
        assert!(v["machine"].is_string() && v["commit"].is_string());
    }
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(["eval", "state-regression", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["systems"]["state_at"]["total"]["correct"], 117);
    assert_eq!(
        v["systems"]["naive_latest_valid_from"]["total"]["correct"],
        72
    );
}
