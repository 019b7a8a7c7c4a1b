//! `tgms demo` runs offline against the shipped data and its checks hold: the correction
//! probe's before/after answers, the incident answer, 0 state-at-T errors for `state_at` and
//! more than 0 for the naive lookup; the HTML page is self-contained.

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
        "[PASS] CollegeMsg store digest (TV20) — da717ee9940ec86ac48b6e83f3f0cd7473818faf0667dae69b7884a38f977285",
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
        "checks passed — PASS",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains("[FAIL]"), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("instance:m5.xlarge"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    // Stores are kept in DIR.
    assert!(d.join("collegemsg").is_dir() && d.join("incident").is_dir());
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
