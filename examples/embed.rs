//! Embedding tgms in a program (docs/library.md): create a store, write typed and JSON ops,
//! correct a fact, call operators with µs and ISO-8601 arguments, read the envelope through
//! its typed accessors, run a verified plan, and share one snapshot across reader threads.
//!
//! `cargo run --release --example embed [STORE_DIR]` (default: a fresh directory under the
//! system temp dir, removed at the end). Prints one line per check; exits 1 on a failed check.

use serde_json::json;
use std::process::ExitCode;
use tgms::prelude::*;
use tgms::time::{iso_utc, parse_duration_us, parse_instant_us};

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        println!("ok   {what}");
        Ok(())
    } else {
        Err(format!("FAIL {what}"))
    }
}

/// Every step of the example on a new store in `dir`; `Err` names the failed check.
pub fn run(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut store = Store::create(dir)?;
    let t0 = parse_instant_us("2004-07-22T21:28:00Z")?;
    let minute = parse_duration_us("1m")?;

    // Three messages, two written with the builders and one as JSON.
    let tt1 = store.write(vec![
        Op::assert_edge("alice", "bob", "MSG")
            .valid(t0, t0 + 1)
            .prop("chars", json!(12))
            .build()?,
        Op::assert_edge("bob", "carol", "MSG")
            .valid(t0 + minute, t0 + minute + 1)
            .build()?,
        Op::parse(
            &json!({"op": "assert_edge", "src": "carol", "dst": "alice", "rel_type": "MSG",
            "vt_s": t0 + 2 * minute, "vt_e": t0 + 2 * minute + 1}),
        )?,
    ])?;
    println!("wrote batch at tt {tt1} ({})", iso_utc(tt1));

    // A correction closes the old belief and keeps it on record.
    store.write(vec![Op::correct_edge("alice", "bob", "MSG")
        .valid(t0, t0 + 1)
        .props(json!({"chars": 13}))
        .reason("miscounted")
        .build()?])?;

    // One operator call, with the window as µs and as ISO-8601: the same envelope.
    let by_us = store.call(
        "aggregate_events",
        &json!({"group_by": [{"dim": "endpoint", "role": "src"}],
            "aggregates": [{"agg": "count"}],
            "window": {"t_a": t0, "t_b": t0 + 3 * minute}}),
    )?;
    let by_iso = store.call(
        "aggregate_events",
        &json!({"group_by": [{"dim": "endpoint", "role": "src"}],
            "aggregates": [{"agg": "count"}],
            "window": {"t_a": "2004-07-22T21:28:00Z", "t_b": "2004-07-22T23:31:00+02:00"}}),
    )?;
    check(
        by_us == by_iso,
        "ISO-8601 window gives the µs envelope byte for byte",
    )?;
    check(by_us.rows().len() == 3, "three senders in the window")?;
    check(by_us.complete(), "the result is complete")?;

    // What we believed before the correction, and what we believe now.
    let then = store.call(
        "entity_history",
        &json!({"uid": "alice", "include_edges": true, "as_of_tt": tt1}),
    )?;
    let now = store.call(
        "entity_history",
        &json!({"uid": "alice", "include_edges": true}),
    )?;
    check(
        then.result_digest() != now.result_digest(),
        "the belief at tt1 differs from the current belief",
    )?;

    // A verified plan: count bob's history rows.
    let run = store.run_plan(&json!({"plan_id": "embed-1", "steps": [
        {"id": "s1", "op": "entity_history", "args": {"uid": "bob", "include_edges": true}}],
        "answer_spec": {"kind": "count", "from": "s1.rows_total"}}))?;
    check(
        run.ok() && run.answer_complete(),
        "the plan ran with a complete answer",
    )?;
    println!(
        "plan answer {} (trace {})",
        run.answer(),
        &run.trace_id()[..12]
    );

    // One snapshot shared by reader threads: identical results.
    let snap = store.snapshot();
    let digests: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(move || {
                    snap.call("state_at", &json!({"uid": "carol", "at": t0 + 3 * minute}))
                        .map(|e| e.result_digest().to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("reader thread").unwrap_or_default())
            .collect()
    });
    check(
        !digests[0].is_empty() && digests.windows(2).all(|w| w[0] == w[1]),
        "four reader threads on one snapshot agree",
    )?;
    Ok(())
}

fn main() -> ExitCode {
    let given = std::env::args_os().nth(1).map(std::path::PathBuf::from);
    let dir = given
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("tgms-embed-{}", std::process::id())));
    let result = run(&dir);
    if given.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    match result {
        Ok(()) => {
            println!("embed example: all checks passed");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
