//! Times people can type and read, end to end (docs/times.md): `--time iso|us` in `call
//! --format table` and `stats`, `_utc` companions in `stats --json`, ISO-8601 `--as-of`, plan
//! validation of a malformed date, a plan with ISO arguments resolving to the integer plan's
//! digests, the unit in `--help`, and the embedding example (`examples/embed.rs`).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tgms_engine::{Op, Store};

/// 2004-07-22T00:00:00Z: 12621 days after the epoch (34·365 + 8 leap days to 2004-01-01,
/// plus 31+29+31+30+31+30+21 days).
const DAY0_US: i64 = 12_621 * 86_400 * 1_000_000;
const H_US: i64 = 3_600_000_000;

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .expect("run tgms")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {} {}",
        o.status.code(),
        text(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json_of(o: &Output) -> Value {
    serde_json::from_str(text(o).trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// A store with three messages at 2004-07-22 01:00, 02:00 and 03:00 UTC.
fn store(dir: &Path) -> PathBuf {
    let s = dir.join("s");
    let mut st = Store::create(&s).unwrap();
    let ops: Vec<Op> = (1..=3)
        .map(|i| {
            let t = DAY0_US + i * H_US;
            Op::parse(
                &json!({"op": "assert_edge", "src": format!("n{i}"), "dst": "n0",
                "rel_type": "MSG", "vt_s": t, "vt_e": t + 1}),
            )
            .unwrap()
        })
        .collect();
    st.write(ops).unwrap();
    s
}

#[test]
fn call_table_shows_iso_by_default_and_integers_with_time_us() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let s = s.to_str().unwrap();
    let args = r#"{"uid": "n1", "include_edges": true}"#;
    let iso = text(&ok(tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--format",
        "table",
    ])));
    let us = text(&ok(tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--format",
        "table",
        "--time",
        "us",
    ])));
    let t1 = DAY0_US + H_US;
    // The edge row's vt_s and vt_e, and the open end of the node's interval.
    assert!(iso.contains("2004-07-22T01:00:00Z"), "{iso}");
    assert!(iso.contains("2004-07-22T01:00:00.000001Z"), "{iso}");
    assert!(iso.contains("open"), "{iso}");
    assert!(!iso.contains(&t1.to_string()), "{iso}");
    assert!(!iso.contains("4611686018427387904"), "{iso}");
    assert!(us.contains(&t1.to_string()), "{us}");
    assert!(us.contains("4611686018427387904"), "{us}");
    assert!(!us.contains("2004-07-22T"), "{us}");
    // The JSON output is the envelope, untouched by --time.
    let a = text(&ok(tgms(&["call", s, "entity_history", args])));
    let b = text(&ok(tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--time",
        "us",
    ])));
    assert_eq!(a, b);
    assert!(!a.contains("_utc"));
    let bad = tgms(&["call", s, "entity_history", args, "--time", "seconds"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn stats_text_and_json_carry_readable_times() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let s = s.to_str().unwrap();
    let j = json_of(&ok(tgms(&["stats", s, "--json"])));
    assert_eq!(j["vt_min"], DAY0_US + H_US);
    assert_eq!(j["vt_min_utc"], "2004-07-22T01:00:00Z");
    assert_eq!(j["vt_max"], DAY0_US + 3 * H_US + 1);
    assert_eq!(j["vt_max_utc"], "2004-07-22T03:00:00.000001Z");
    assert!(j["last_tt_utc"].as_str().unwrap().ends_with('Z'));
    let t = text(&ok(tgms(&["stats", s])));
    assert!(
        t.contains(&format!("2004-07-22T01:00:00Z ({} µs)", DAY0_US + H_US)),
        "{t}"
    );
    let t = text(&ok(tgms(&["stats", s, "--time", "us"])));
    assert!(!t.contains("2004-07-22T"), "{t}");
}

#[test]
fn as_of_takes_iso_and_refuses_garbage() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let s = s.to_str().unwrap();
    let args = r#"{"uid": "n1"}"#;
    // 2004-07-22 (before the batch's wall-clock tt): nothing believed yet.
    let early = json_of(&tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--as-of",
        "2004-07-22",
    ]));
    let early_us = json_of(&tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--as-of",
        &DAY0_US.to_string(),
    ]));
    assert_eq!(early, early_us);
    assert!(
        early["error"] == "E_NOT_FOUND" || early["args_echo"]["as_of_tt"] == json!(DAY0_US),
        "{early}"
    );
    let now = json_of(&ok(tgms(&[
        "call",
        s,
        "entity_history",
        args,
        "--as-of",
        "open",
    ])));
    assert_eq!(
        now["args_echo"]["as_of_tt"],
        json!(4_611_686_018_427_387_904i64)
    );
    let bad = tgms(&["call", s, "entity_history", args, "--as-of", "2004-02-30"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("not a calendar date"), "{err}");
}

fn plan(at: Value, window: Value) -> Value {
    json!({"plan_id": "times", "steps": [
        {"id": "s1", "op": "state_at", "args": {"uid": "n1", "at": at}},
        {"id": "s2", "op": "aggregate_events", "args": {"group_by": [], "aggregates": [{"agg": "count"}],
            "window": window}}],
        "answer_spec": {"kind": "count", "from": "s2.rows[0].count"}})
}

#[test]
fn plans_take_iso_arguments_and_refuse_malformed_dates() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let sp = s.to_str().unwrap();
    let write = |name: &str, v: &Value| {
        let f = d.path().join(name);
        std::fs::write(&f, v.to_string()).unwrap();
        f.to_str().unwrap().to_string()
    };
    let ints = write(
        "ints.json",
        &plan(
            json!(DAY0_US + 2 * H_US),
            json!({"t_a": DAY0_US, "t_b": DAY0_US + 24 * H_US}),
        ),
    );
    let isos = write(
        "isos.json",
        &plan(
            json!("2004-07-22T04:00:00+02:00"),
            json!({"t_a": "2004-07-22", "t_b": "2004-07-23"}),
        ),
    );
    let run = |f: &str| {
        let t = d.path().join(format!("{}.trace", f.len()));
        let o = json_of(&ok(tgms(&[
            "plan",
            "run",
            sp,
            f,
            "--no-grounding",
            "--trace-out",
            t.to_str().unwrap(),
        ])));
        let trace: Value = serde_json::from_str(&std::fs::read_to_string(&t).unwrap()).unwrap();
        (o, trace)
    };
    let (a, ta) = run(&ints);
    let (b, tb) = run(&isos);
    assert_eq!(a["answer"], 3);
    assert_eq!(a["answer"], b["answer"]);
    for i in 0..2 {
        let (x, y) = (&ta["steps"][i], &tb["steps"][i]);
        assert!(x["resolved_args_digest"].is_string());
        assert_eq!(x["resolved_args_digest"], y["resolved_args_digest"]);
        assert_eq!(x["result_digest"], y["result_digest"]);
    }
    let bad = write(
        "bad.json",
        &plan(
            json!("2004-02-30"),
            json!({"t_a": "2004-07-22", "t_b": "2004-07-23"}),
        ),
    );
    let o = tgms(&["plan", "validate", sp, &bad, "--no-grounding"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json_of(&o);
    assert_eq!(v["valid"], false);
    let viol = &v["violations"][0];
    assert_eq!(viol["code"], "E_SCHEMA");
    assert_eq!(viol["step_id"], "s1");
    assert!(
        viol["message"]
            .as_str()
            .unwrap()
            .contains("'2004-02-30' is not a time"),
        "{viol}"
    );
    assert_eq!(viol["details"]["path"], json!(["at"]));
    assert!(
        viol["details"]["repair"]["accepted_forms"].is_array(),
        "{viol}"
    );
    assert_eq!(v["violations"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn help_states_the_time_unit() {
    let top = text(&ok(tgms(&["--help"])));
    assert!(top.contains("µs since 1970-01-01 UTC"), "{top}");
    for cmd in ["call", "stats", "history", "ask"] {
        let h = text(&ok(tgms(&[cmd, "--help"])));
        assert!(h.contains("µs since 1970-01-01 UTC"), "{cmd}: {h}");
    }
}

/// The example program itself, compiled into this test (so no cargo filter can skip it).
#[allow(dead_code)]
#[path = "../examples/embed.rs"]
mod embed_example;

#[test]
fn the_embedding_example_runs() {
    let d = tempfile::tempdir().unwrap();
    if let Err(e) = embed_example::run(&d.path().join("embed-store")) {
        panic!("examples/embed.rs failed: {e}");
    }
    // It wrote a real store: reopen it and find the corrected edge and its old belief.
    let st = Store::open_read_only(&d.path().join("embed-store")).unwrap();
    let hist = st
        .snapshot()
        .edge_history_touching("bob")
        .into_iter()
        .map(|e| tgms_engine::Version::Edge(e).to_json())
        .filter(|j| j["src"] == "alice")
        .count();
    assert_eq!(
        hist, 2,
        "the alice→bob edge: the original and the correction"
    );
}
