//! A complete result read cut to columns (`call_operator_projected`, the executor's path for
//! a plan's column reducer, `docs/plan-language.md`): its envelope is the unpaged call's,
//! byte for byte, except that the projected list holds each row cut to the columns; its
//! `result_digest` is the unpaged call's (taken over the whole rows, rendered in chunks).
//! Lists rendered lazily and eagerly, over several chunks, with floats to canonicalize, an
//! empty list, and a list name that is not a paged list. And the same envelope rendered
//! beside a page in the page's kernel run (`call_operator_beside`, the executor's path when a
//! later step reads a producer's complete columns).

mod common;

use common::*;
use serde_json::{json, Value};
use tgms_engine::Store;
use tgms_operators::json::project_row;
use tgms_operators::pipeline::{
    call_operator_beside, call_operator_picked, call_operator_projected, call_operator_unpaged,
};
use tgms_operators::CallOptions;

/// 9,000 events (more than two chunks of rows) over 300 nodes, each with a float prop
/// whose mean needs rounding, and a corrected batch (superseded versions).
fn store() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let mut r = kit::Rng::new(21);
    for b in 0..3 {
        let events: Vec<Value> = (0..3_000)
            .map(|i| {
                json!({"src": format!("u{}", r.below(300)), "dst": format!("u{}", r.below(300)),
                    "rel_type": if r.chance(60) { "R" } else { "S\"q" },
                    "vt_s": b * 100_000 + i * 7, "props": {"w": 0.1 + (i % 17) as f64 / 3.0}})
            })
            .collect();
        s.write_at(
            10 + b,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
    }
    (d, s)
}

fn check(s: &Store, op: &str, args: &Value, list: &str, cols: &[&str]) {
    let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
    let o = CallOptions::default();
    let whole = call_operator_unpaged(s.snapshot(), op, args, &o).unwrap();
    let cut = call_operator_projected(s.snapshot(), op, args, list, &cols, &o).unwrap();
    let ctx = format!("{op} {args} {list} {cols:?}");
    assert_eq!(cut["result_digest"], whole["result_digest"], "{ctx}");
    let mut want = whole.clone();
    if let Some(rows) = whole[list].as_array() {
        want[list] = Value::Array(rows.iter().map(|r| project_row(r, &cols)).collect());
    }
    assert_eq!(canon(&cut), canon(&want), "{ctx}");
}

#[test]
fn a_projected_complete_result_is_the_unpaged_one_cut_to_its_columns() {
    let (_d, s) = store();
    let all = json!({"kind": "edge", "belief": "all", "limit": 5});
    let vh = call(&s, "version_history", all.clone());
    assert_eq!(vh["rows_total"], 9_000, "{}", vh["rows_total"]);
    // Lazily rendered rows, three chunks; one column, two, a missing one, none.
    for cols in [&["vt_s"][..], &["src", "rel_type"], &["nope"], &[]] {
        check(&s, "version_history", &all, "rows", cols);
    }
    // Node versions.
    let nodes = json!({"kind": "node", "belief": "all", "limit": 5});
    assert_eq!(
        call(&s, "version_history", nodes.clone())["rows_total"],
        300
    );
    check(&s, "version_history", &nodes, "rows", &["uid", "tt_s"]);
    // A window: current versions only.
    let win = json!({"kind": "edge", "window": {"t_a": 50_000, "t_b": 250_000}});
    check(&s, "version_history", &win, "rows", &["tt_s"]);
    // Eagerly built rows with floats (the mean of `w` per sender is rounded).
    let agg = json!({"group_by": [{"dim": "endpoint", "role": "src"}],
        "aggregates": [{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "w"}],
        "window": {"t_a": 0, "t_b": 400_000}, "limit": 3});
    let page = call(&s, "aggregate_events", agg.clone());
    assert_eq!(page["rows_total"], 300, "{page}");
    assert!(page["rows"][0]["mean_prop_w"].is_f64(), "{page}");
    check(
        &s,
        "aggregate_events",
        &agg,
        "rows",
        &["mean_prop_w", "count"],
    );
    // An empty list.
    let none = json!({"kind": "edge", "window": {"t_a": 900_000, "t_b": 900_001}});
    assert_eq!(call(&s, "version_history", none.clone())["rows_total"], 0);
    check(&s, "version_history", &none, "rows", &["vt_s"]);
    // A name that is not a paged list: the unpaged envelope as it is.
    check(&s, "version_history", &all, "set_digest", &["vt_s"]);
}

/// `call_operator_beside` with `admit` returning `yes`: the page's envelope, and the
/// complete one cut to `cols` when rendered beside it.
fn beside(s: &Store, op: &str, args: &Value, cols: &[&str], yes: bool) -> (Value, Option<Value>) {
    let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
    let admit = Box::new(move |_: usize, _: &[Value]| yes);
    let o = CallOptions::default();
    call_operator_beside(s.snapshot(), op, args, "rows", &cols, admit, &o).unwrap()
}

/// Beside a page, the complete list cut to its columns is the unpaged envelope cut (its
/// `result_digest` the unpaged call's), and the page's envelope is the plain call's, byte for
/// byte; nothing is rendered beside when not admitted or when the page is the whole list.
#[test]
fn a_list_rendered_beside_its_page_is_the_unpaged_one_cut() {
    let (_d, s) = store();
    let o = CallOptions::default();
    let agg = json!({"group_by": [{"dim": "endpoint", "role": "src"}],
        "aggregates": [{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "w"}],
        "window": {"t_a": 0, "t_b": 400_000}, "limit": 3});
    let cases = [
        // Typed cells (edge and node versions), then rows given whole with floats.
        (
            "version_history",
            json!({"kind": "edge", "belief": "all", "limit": 5}),
            vec!["vt_s"],
        ),
        (
            "version_history",
            json!({"kind": "node", "belief": "all", "limit": 7, "cursor": "5"}),
            vec!["uid", "tt_s"],
        ),
        (
            "version_history",
            json!({"kind": "edge", "window": {"t_a": 50_000, "t_b": 250_000}}),
            vec![],
        ),
        ("aggregate_events", agg, vec!["mean_prop_w", "count"]),
    ];
    for (op, args, cols) in cases {
        let ctx = format!("{op} {args} {cols:?}");
        let (page, cut) = beside(&s, op, &args, &cols, true);
        let plain = tgms_operators::call_operator(s.snapshot(), op, &args, &o).unwrap();
        assert_eq!(canon(&page), canon(&plain), "{ctx}");
        assert_eq!(page["truncated"], true, "{ctx}");
        let whole = call_operator_unpaged(s.snapshot(), op, &args, &o).unwrap();
        let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
        let mut want = whole.clone();
        want["rows"] = Value::Array(
            whole["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| project_row(r, &cols))
                .collect(),
        );
        let cut = cut.unwrap_or_else(|| panic!("{ctx}: nothing beside"));
        assert_eq!(cut["result_digest"], whole["result_digest"], "{ctx}");
        assert_eq!(canon(&cut), canon(&want), "{ctx}");
        // Not admitted: the page alone.
        let (page, none) = beside(&s, op, &args, &[], false);
        assert_eq!(canon(&page), canon(&plain), "{ctx}");
        assert!(none.is_none(), "{ctx}");
    }
    // A page that is the whole list: nothing beside.
    let small = json!({"kind": "node", "belief": "all", "limit": 1000});
    let (page, none) = beside(&s, "version_history", &small, &["uid"], true);
    assert_eq!(page["truncated"], false);
    assert!(none.is_none());
}

/// The same envelopes, whole and projected, with 1 thread and with 4 (ids are derived and
/// chunks of cells rendered on every core).
#[test]
fn a_projected_result_is_the_same_for_any_thread_count() {
    let (_d, s) = store();
    let o = CallOptions::default();
    let cols = vec!["vt_s".to_string(), "eid".to_string()];
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let all = json!({"kind": "edge", "belief": "all"});
            let whole = call_operator_unpaged(s.snapshot(), "version_history", &all, &o).unwrap();
            let cut =
                call_operator_projected(s.snapshot(), "version_history", &all, "rows", &cols, &o)
                    .unwrap();
            (canon(&whole), canon(&cut))
        })
    };
    let one = run(1);
    assert_eq!(one, run(4));
    assert!(one.1.contains("\"eid\""));
}

/// `call_operator_picked` gives the rows at the positions asked, in that order, equal to the
/// unpaged call's rows (floats canonical), from typed cells, rows the kernel holds and rows
/// rendered lazily; a position past the list's end is an internal error, not a panic.
#[test]
fn picked_rows_are_the_unpaged_ones_and_a_position_past_the_end_is_an_error() {
    let (_d, s) = store();
    let o = CallOptions::default();
    let cases = [
        (
            "version_history",
            json!({"kind": "edge", "belief": "all", "limit": 5}),
        ),
        (
            "aggregate_events",
            json!({"group_by": [{"dim": "endpoint", "role": "src"}],
                "aggregates": [{"agg": "mean", "of": "prop", "prop": "w"}],
                "window": {"t_a": 0, "t_b": 400_000}, "limit": 3}),
        ),
        ("resolve_entities", json!({"query": "u1", "limit": 2})),
    ];
    for (op, args) in cases {
        let whole = call_operator_unpaged(s.snapshot(), op, &args, &o).unwrap();
        let rows = whole["rows"].as_array().unwrap();
        let n = rows.len();
        assert!(n > 10, "{op}: {n} rows");
        let at = vec![n - 1, 0, n / 2, 3];
        let got = call_operator_picked(s.snapshot(), op, &args, "rows", at.clone(), &o).unwrap();
        let want: Vec<Value> = at.iter().map(|&i| rows[i].clone()).collect();
        assert_eq!(got, want, "{op}");
        let e = call_operator_picked(s.snapshot(), op, &args, "rows", vec![n / 2, n, 0], &o)
            .unwrap_err();
        assert_eq!(e.code.as_str(), "E_INTERNAL", "{op}: {e:?}");
        assert_eq!(e.message, format!("rows: row {n} picked of {n}"), "{op}");
    }
}
