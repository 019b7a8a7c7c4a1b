//! End-to-end tests of `tgms plan validate`, `tgms plan run`, `tgms verify` and
//! `tgms eval mutations`: outputs, exit codes, stored results and traces.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .expect("run tgms")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn json_out(o: &Output) -> Value {
    let s = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn store(d: &Path) -> std::path::PathBuf {
    let s = d.join("s");
    assert!(tgms(&["init", p(&s)]).status.success());
    let t0 = 1_700_000_000_000_000i64;
    let ev = |a: &str, b: &str, k: i64| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t0 + k * 1_000_000});
    let batch = json!([{"op": "ingest_events", "events": [ev("a","b",1), ev("b","c",2), ev("c","a",3), ev("a","d",4)]}]);
    let f = d.join("b.json");
    std::fs::write(&f, batch.to_string()).unwrap();
    let o = tgms(&["write", p(&s), p(&f)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    s
}

#[test]
fn plan_validate_run_verify_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let plan = json!({"plan_id": "p1", "question": "Who is near a?", "steps": [
        {"id": "s1", "op": "snapshot_subgraph", "args": {"seeds": ["a"], "hops": 1, "t_valid": 1_700_000_004_000_000i64, "limit": 10000}}],
        "answer_spec": {"kind": "entity_set", "from": "s1.nodes"}});
    let pf = d.path().join("plan.json");
    std::fs::write(&pf, plan.to_string()).unwrap();
    // validate: grounded by the question's uids.
    let o = tgms(&["plan", "validate", p(&s), p(&pf)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json_out(&o), json!({"valid": true, "violations": []}));
    // --uids "" rejects the literal uid with a repair.
    let o = tgms(&["plan", "validate", p(&s), p(&pf), "--uids", ""]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_out(&o);
    assert_eq!(v["violations"][0]["code"], "E_GROUNDING");
    assert_eq!(
        v["violations"][0]["details"]["repair"]["add_step"]["op"],
        "resolve_entities"
    );
    // run with report and trace-out.
    let tf = d.path().join("trace.json");
    let o = tgms(&[
        "plan",
        "run",
        p(&s),
        p(&pf),
        "--report",
        "--trace-out",
        p(&tf),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let r = json_out(&o);
    assert_eq!(r["valid"], true);
    assert_eq!(r["ok"], true);
    assert_eq!(r["answer_complete"], true);
    assert_eq!(r["steps"][0]["status"], "ok");
    assert_eq!(r["answer_object"]["text"], "The entities are: a, d.");
    assert_eq!(r["verification"]["claims"][0]["verdict"], "supported");
    let dig = r["steps"][0]["result_digest"].as_str().unwrap();
    assert!(s.join("results").join(dig).exists());
    let tid = r["trace_id"].as_str().unwrap();
    assert!(s.join("traces").join(tid).exists());
    // Same plan again: same trace_id.
    assert_eq!(
        json_out(&tgms(&["plan", "run", p(&s), p(&pf)]))["trace_id"],
        tid
    );
    // verify by trace file and by trace_id; a dropped member is unsupported and gated out.
    let mut ans = r["answer_object"].clone();
    ans["claims"][0]["uids"] = json!(["a"]);
    let af = d.path().join("answer.json");
    std::fs::write(&af, ans.to_string()).unwrap();
    for t in [p(&tf), tid] {
        let o = tgms(&["verify", p(&s), p(&af), "--trace", t]);
        assert_eq!(o.status.code(), Some(0));
        let v = json_out(&o);
        assert_eq!(v["claims"][0]["verdict"], "unsupported");
        assert_eq!(v["gated_answer_object"]["claims"], json!([]));
    }
    // The result stores inside the directory do not disturb the store: it still takes writes.
    let b2 = d.path().join("b2.json");
    std::fs::write(
        &b2,
        json!([{"op": "assert_node", "uid": "z", "label": "N", "props": {}, "vt_s": 0}])
            .to_string(),
    )
    .unwrap();
    let o = tgms(&["write", p(&s), p(&b2)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(tgms(&["stats", p(&s), "--json"]).status.success());
    let o = tgms(&["verify", p(&s), p(&af), "--trace", "0000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_out(&o)["error"], "E_NOT_FOUND");
}

#[test]
fn plan_rejections_and_failing_traces_exit_1() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    let o = tgms(&["plan", "validate", p(&s), p(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(json_out(&o)["violations"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("plan is not valid JSON"));
    let plan = json!({"plan_id": "p", "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": {"$ref": "s2.rows[0].uidd"}}, "depends_on": ["s2"]},
        {"id": "s2", "op": "entity_history", "args": {"uid": "a"}}], "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
    let pf = d.path().join("p.json");
    std::fs::write(&pf, plan.to_string()).unwrap();
    let o = tgms(&["plan", "run", p(&s), p(&pf), "--no-grounding"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_out(&o);
    assert_eq!(v["valid"], false);
    assert!(v["violations"][0]["message"]
        .as_str()
        .unwrap()
        .contains("has no field 'uidd'"));
    // A valid plan whose step fails: printed, exit 1.
    let plan = json!({"plan_id": "p", "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": "nope"}}],
        "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
    std::fs::write(&pf, plan.to_string()).unwrap();
    let o = tgms(&["plan", "run", p(&s), p(&pf), "--no-grounding"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_out(&o);
    assert_eq!(v["ok"], false);
    assert_eq!(v["steps"][0]["error"]["error"], "E_NOT_FOUND");
}

#[test]
fn eval_mutations_json_and_table() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let o = tgms(&["eval", "mutations", p(&s), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json_out(&o);
    assert_eq!(v["false_positives"], 0);
    assert_eq!(v["classes"].as_array().unwrap().len(), 13);
    for c in v["classes"].as_array().unwrap() {
        if [
            "count_pm1",
            "ordering_swap",
            "interval_units",
            "entity_dropped",
            "fabricated_entity",
        ]
        .contains(&c["class"].as_str().unwrap())
        {
            assert!(c["cases"].as_u64().unwrap() > 0, "{c}");
            assert_eq!(c["cases"], c["detected"], "{c}");
        }
    }
    let o = tgms(&["eval", "mutations", p(&s)]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("count_pm1"));
    let h = tgms(&["plan", "run", "--help"]);
    assert!(String::from_utf8_lossy(&h.stdout).contains("Examples:\n  tgms plan run "));
}

/// `tgms view`: the page of a stored trace shows the plan id, every step id and digest and
/// each claim verdict, is self-contained, and escapes hostile store strings.
#[test]
fn view_renders_a_trace_and_escapes_store_strings() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s");
    assert!(tgms(&["init", p(&s)]).status.success());
    let evil_uid = "<script src=\"http://evil.example/x.js\"></script>";
    let evil_prop = "</script><img src=x onerror=alert(1)>&\"'";
    let batch = json!([{"op": "assert_node", "uid": evil_uid, "label": "<b>L</b>",
        "props": {"note": evil_prop}, "vt_s": 0, "vt_e": 100}]);
    let f = d.path().join("b.json");
    std::fs::write(&f, batch.to_string()).unwrap();
    let o = tgms(&["write", p(&s), p(&f)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let plan = json!({"plan_id": "evil-<i>plan</i>", "steps": [
        {"id": "s1", "op": "entity_history", "args": {"uid": evil_uid}},
        {"id": "s2", "op": "state_at", "args": {"uid": evil_uid, "at": 50}}],
        "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
    let pf = d.path().join("plan.json");
    std::fs::write(&pf, plan.to_string()).unwrap();
    let o = tgms(&["plan", "run", p(&s), p(&pf), "--no-grounding"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let r = json_out(&o);
    let tid = r["trace_id"].as_str().unwrap();
    let html = d.path().join("t.html");
    let o = tgms(&["view", p(&s), tid, "--plan", p(&pf), "--out", p(&html)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json_out(&o)["claims"][0]["verdict"], "supported");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("evil-&lt;i&gt;plan&lt;/i&gt;"));
    assert!(page.contains(tid));
    for st in r["steps"].as_array().unwrap() {
        let sid = st["step_id"].as_str().unwrap();
        assert!(page.contains(&format!("id=\"step-{sid}\"")));
        assert!(page.contains(st["result_digest"].as_str().unwrap()));
    }
    assert!(page.contains("<td class=\"ok\">supported</td>"));
    // Hostile strings appear only escaped (in HTML) or with `<` as \u003c (in JSON).
    assert!(!page.contains("<script src"));
    assert!(!page.contains("<img"));
    assert!(!page.contains("<b>L</b>"));
    assert!(!page.contains("</script><img"));
    assert!(page.contains("&lt;script src=&quot;http://evil.example/x.js&quot;&gt;"));
    assert!(page.contains(r#"&lt;img src=x onerror=alert(1)&gt;&amp;\&quot;&#39;"#));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    // Every <script> is an inline JSON block or the one inline formatter.
    let scripts = page.matches("<script").count();
    let json_blocks = page.matches("<script type=\"application/json\"").count();
    assert_eq!(scripts, json_blocks + 1);
    // `plan run --html` writes the same page.
    let html2 = d.path().join("t2.html");
    let o = tgms(&[
        "plan",
        "run",
        p(&s),
        p(&pf),
        "--no-grounding",
        "--html",
        p(&html2),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let page2 = std::fs::read_to_string(&html2).unwrap();
    assert!(page2.contains(tid) && page2.contains("<td class=\"ok\">supported</td>"));
    assert!(!page2.contains("<script src") && !page2.contains("<img"));
    // Unknown trace: E_NOT_FOUND.
    let o = tgms(&["view", p(&s), &"0".repeat(64), "--out", p(&html)]);
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("E_NOT_FOUND"));
}

/// `tgms plan run` on a store it cannot write runs with its results in memory: the answer
/// is printed, no step fails. Root ignores permission bits, so as root (as CI runs) the
/// command runs as `nobody` through `setpriv`; otherwise the store is made read-only.
#[test]
fn plan_run_on_a_store_it_cannot_write_keeps_results_in_memory() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let plan = json!({"plan_id": "ro", "steps": [
        {"id": "s1", "op": "entity_history", "args": {"uid": "a", "include_edges": true}}],
        "answer_spec": {"kind": "count", "from": "s1.edges_total"}});
    let pf = d.path().join("plan.json");
    std::fs::write(&pf, plan.to_string()).unwrap();
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let bin = env!("CARGO_BIN_EXE_tgms");
    let o = if root {
        if Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("SKIP: running as root without setpriv: cannot make the store unwritable");
            return;
        }
        // Readable, not writable, by nobody; a copy of the binary it can run (the checkout
        // may sit in a directory others cannot enter).
        let copy = d.path().join("tgms-for-others");
        std::fs::copy(bin, &copy).unwrap();
        for dir in d.path().ancestors() {
            let _ = Command::new("chmod").arg("o+x").arg(dir).status();
        }
        assert!(Command::new("chmod")
            .args(["-R", "o+rX"])
            .arg(d.path())
            .status()
            .unwrap()
            .success());
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                p(&copy),
                "plan",
                "run",
                p(&s),
                p(&pf),
                "--no-grounding",
            ])
            .output()
            .unwrap()
    } else {
        assert!(Command::new("chmod")
            .args(["-R", "a-w"])
            .arg(&s)
            .status()
            .unwrap()
            .success());
        tgms(&["plan", "run", p(&s), p(&pf), "--no-grounding"])
    };
    let v = json_out(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{v} {err}");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["answer"], 3, "a has three edges: {v}");
    assert!(
        err.contains("kept in memory"),
        "says where the results went: {err}"
    );
    assert!(!s.join("traces").exists(), "nothing was written");
    let _ = Command::new("chmod").args(["-R", "u+w"]).arg(&s).status();
}

#[test]
fn plan_ceilings_flag_inline_and_file() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    // Three sources (a, b, c) in the store's four events: a count over the grouped rows.
    let plan = json!({"plan_id": "pc", "steps": [
        {"id": "s1", "op": "aggregate_events", "args": {"group_by": [{"dim": "endpoint", "role": "src"}],
            "aggregates": [{"agg": "count"}], "window": {"t_a": 1_700_000_000_000_000i64, "t_b": 1_700_000_010_000_000i64}}},
        {"id": "s2", "op": "compute", "args": {"fn": "count", "input": {"$ref": "s1.rows"}}}],
        "answer_spec": {"kind": "count", "from": "s2.value"}});
    let pf = d.path().join("plan.json");
    std::fs::write(&pf, plan.to_string()).unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["plan", "run", p(&s), p(&pf), "--no-grounding"];
        a.extend_from_slice(extra);
        tgms(&a)
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json_out(&o)["answer"], 3);
    // The reducer budget below the producer's 3 rows refuses the reducer with E_LIMIT.
    let o = run(&["--ceilings", r#"{"max_reducer_rows": 2}"#]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_out(&o);
    assert_eq!(v["steps"][1]["status"], "failed");
    assert_eq!(v["steps"][1]["error"]["error"], "E_LIMIT");
    assert!(v["steps"][1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("max_reducer_rows 2"));
    // The same from a file; max_total_rows 2 fails the first step (3 rows materialized).
    let cf = d.path().join("ceilings.json");
    std::fs::write(&cf, r#"{"max_total_rows": 2}"#).unwrap();
    let o = run(&["--ceilings", p(&cf)]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_out(&o);
    assert_eq!(v["steps"][0]["error"]["error"], "E_LIMIT");
    assert_eq!(v["steps"][0]["error"]["message"], "materialized rows 3 > 2");
    // validate applies the cost ceilings: nothing may be scanned.
    let o = tgms(&[
        "plan",
        "validate",
        p(&s),
        p(&pf),
        "--no-grounding",
        "--ceilings",
        r#"{"rows_scanned_est": 0}"#,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_out(&o)["violations"][0]["code"], "E_COST");
    // Bad ceilings are usage errors (exit 2) naming the fix.
    for bad in [
        r#"{"max_rows": 1}"#,
        "/nonexistent/c.json",
        r#"{"max_reducer_rows": 0}"#,
    ] {
        let o = run(&["--ceilings", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--ceilings"), "{bad}: {err}");
    }
}

/// `TGMS_TIME_COEFF_SCALE` multiplies every time estimate of `call` and `plan validate`
/// (the libraries read no environment: the CLI passes it in `Ceilings`); a bad value is a
/// usage error naming the variable.
#[test]
fn time_coeff_scale_from_the_environment() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let args = r#"{"src": "a", "window": {"t_a": 1700000000000000, "t_b": 1700000100000000}}"#;
    let call = |scale: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tgms"));
        c.args(["call", p(&s), "temporal_reachability", args]);
        match scale {
            Some(v) => c.env("TGMS_TIME_COEFF_SCALE", v),
            None => c.env_remove("TGMS_TIME_COEFF_SCALE"),
        };
        c.output().expect("run tgms")
    };
    // Unset: a four-event store is far below every ceiling.
    let o = call(None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // Scaled up, the same call is refused on its time estimate alone; twice the scale gives
    // twice the estimate (within the integer cut), the row estimate stays.
    let refused = |scale: &str| {
        let o = call(Some(scale));
        assert_eq!(o.status.code(), Some(1), "{scale}");
        let v = json_out(&o);
        assert_eq!(v["error"], "E_COST", "{v}");
        assert!(v["details"]["ceilings"].get("time_est_ms").is_some(), "{v}");
        assert!(
            v["details"]["ceilings"].get("rows_scanned_est").is_none(),
            "{v}"
        );
        v["details"]["estimate"].clone()
    };
    let (e1, e2) = (refused("1e12"), refused("2e12"));
    let (t1, t2) = (
        e1["time_est_ms"].as_i64().unwrap(),
        e2["time_est_ms"].as_i64().unwrap(),
    );
    assert!(t1 > 10_000 && (t2 - 2 * t1).abs() <= 2, "{t1} {t2}");
    assert_eq!(e1["rows_scanned_est"], e2["rows_scanned_est"]);
    // Bad values: exit 2, the variable and the value named.
    for bad in ["0", "fast", "-3"] {
        let o = call(Some(bad));
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("TGMS_TIME_COEFF_SCALE") && err.contains(bad),
            "{bad}: {err}"
        );
    }
}
