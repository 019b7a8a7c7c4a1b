//! The page cache (issue 26 item 3, `docs/paging.md`): walking every page of a multi-page
//! result gives the same envelope bytes with the cache as without it, the pages after the
//! first are read from the kept complete result instead of re-running the kernel, a write
//! to the store makes the kept result unreachable, and a result whose pages cannot be cut
//! from one list (its kernel sets `truncated` itself) is never served from the cache.
//!
//! One test function: the kernel-run counter is process-wide, so the sections run in order.

mod common;

use common::*;
use serde_json::{json, Value};
use tgms_engine::Store;
use tgms_operators::page_cache;
use tgms_operators::pipeline::call_operator_unpaged;
use tgms_operators::CallOptions;

/// A store of 400 ingested events over 60 nodes `u0`…`u59` (deterministic), plus asserted
/// nodes for `resolve_entities` and edges for `snapshot_subgraph`.
fn store() -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let mut r = kit::Rng::new(26);
    let events: Vec<Value> = (0..400)
        .map(|i| {
            json!({"src": format!("u{}", r.below(60)), "dst": format!("u{}", r.below(60)),
                "rel_type": if r.chance(70) { "R" } else { "S" }, "vt_s": i * 10})
        })
        .collect();
    s.write_at(
        10,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    let nodes: Vec<Value> = (0..40)
        .map(|i| {
            json!({"op": "assert_node", "uid": format!("u{i}"), "label": "L",
            "props": {"n": i}, "vt_s": 0, "vt_e": tgms_engine::OPEN_END})
        })
        .collect();
    s.write_at(20, ops(nodes)).unwrap();
    // Edges of u0 valid throughout, for a multi-page `snapshot_subgraph`.
    let edges: Vec<Value> = (1..30)
        .map(|i| {
            json!({"op": "assert_edge", "src": "u0", "dst": format!("u{i}"),
            "rel_type": "R", "vt_s": 0, "vt_e": tgms_engine::OPEN_END})
        })
        .collect();
    s.write_at(25, ops(edges)).unwrap();
    (d, s)
}

/// Every page of `op` with `args`, following cursors from the first page, as canonical
/// envelope text; and the number of kernel runs the walk took.
fn walk(s: &Store, op: &str, args: &Value) -> (Vec<String>, u64) {
    let before = page_cache::kernel_runs();
    let mut pages = Vec::new();
    let mut a = args.clone();
    loop {
        let env = call(s, op, a.clone());
        assert!(env.get("error").is_none(), "{op}: {env}");
        pages.push(canon(&env));
        match env.get("cursor") {
            Some(Value::String(c)) => a["cursor"] = json!(c),
            _ => break,
        }
        assert!(pages.len() < 1000, "{op}: runaway paging");
    }
    (pages, page_cache::kernel_runs() - before)
}

/// The rows of every page, in order.
fn rows_of(pages: &[String], list: &str) -> Vec<Value> {
    pages
        .iter()
        .flat_map(|p| {
            let v: Value = serde_json::from_str(p).unwrap();
            v[list].as_array().cloned().unwrap_or_default()
        })
        .collect()
}

#[test]
fn pages_are_read_from_the_kept_result_with_identical_bytes() {
    let (_d, mut s) = store();
    let calls = [
        // Rows whose source is kept unrendered (`Output::paged_cells_owned`), in each
        // direction's row form.
        (
            "temporal_reachability",
            json!({"src": "u0", "window": {"t_a": 0, "t_b": 4000}, "limit": 7}),
            "rows",
        ),
        (
            "temporal_reachability",
            json!({"src": "u0", "window": {"t_a": 0, "t_b": 4000}, "direction": "in", "limit": 7}),
            "rows",
        ),
        (
            "temporal_reachability",
            json!({"src": "u3", "window": {"t_a": 0, "t_b": 4000}, "direction": "both", "limit": 9}),
            "rows",
        ),
        // Eagerly paged list (`Output::paged`): u0's edges valid throughout.
        (
            "state_at",
            json!({"uid": "u0", "at": 100, "limit": 6}),
            "rows",
        ),
        // Keyed list (`Output::paged_keyed`).
        (
            "aggregate_events",
            json!({"group_by": [{"dim": "endpoint", "role": "src"}], "aggregates": [{"agg": "count"}],
                "window": {"t_a": 0, "t_b": 4000}, "limit": 6}),
            "rows",
        ),
        // Lazily rendered list (`Output::paged_lazy`).
        (
            "resolve_entities",
            json!({"query": "u", "limit": 4}),
            "rows",
        ),
        // Lazily rendered, from both read paths: every version, and the current belief in
        // a window (the valid-time index).
        (
            "version_history",
            json!({"kind": "edge", "belief": "all", "limit": 60}),
            "rows",
        ),
        (
            "version_history",
            json!({"kind": "edge", "window": {"t_a": 500, "t_b": 2500}, "limit": 40}),
            "rows",
        ),
        (
            "version_history",
            json!({"kind": "node", "window": {"t_a": 0, "t_b": 100}, "limit": 9}),
            "rows",
        ),
    ];
    for (op, args, list) in &calls {
        // Without the cache: every page runs the kernel (today's behaviour).
        page_cache::set_budget_bytes(Some(0));
        let (plain, plain_runs) = walk(&s, op, args);
        assert!(plain.len() >= 4, "{op}: {} pages only", plain.len());
        assert_eq!(plain_runs, plain.len() as u64, "{op}");
        // With it: the same bytes, page by page.
        page_cache::set_budget_bytes(None);
        page_cache::clear();
        let (cached, runs) = walk(&s, op, args);
        assert_eq!(cached, plain, "{op}: envelope bytes differ with the cache");
        // An eager list is kept by the first page's run; a lazily rendered one by the
        // second's. Every later page is a read.
        let lazy = ["resolve_entities", "version_history"].contains(op);
        let expected_runs = if lazy { 2 } else { 1 };
        assert_eq!(
            runs,
            expected_runs,
            "{op}: kernel runs of {} pages",
            cached.len()
        );
        // The pages put together are the complete result.
        let whole = call_operator_unpaged(s.snapshot(), op, args, &CallOptions::default()).unwrap();
        assert_eq!(
            rows_of(&cached, list),
            whole[*list].as_array().cloned().unwrap(),
            "{op}"
        );
        // A page asked for again (out of order) is a read too, with the same bytes.
        let mut third = args.clone();
        third["cursor"] = json!((2 * args["limit"].as_u64().unwrap()).to_string());
        let before = page_cache::kernel_runs();
        assert_eq!(canon(&call(&s, op, third)), cached[2], "{op}");
        assert_eq!(
            page_cache::kernel_runs(),
            before,
            "{op}: page 3 re-ran the kernel"
        );
    }

    // A write makes the kept result unreachable: the next page runs on the new state.
    let (op, args, _) = &calls[0];
    page_cache::clear();
    let (before_write, _) = walk(&s, op, args);
    s.write_at(
        30,
        ops(vec![json!({"op": "ingest_events", "events": [
            {"src": "u0", "dst": "new1", "rel_type": "R", "vt_s": 1},
            {"src": "new1", "dst": "new2", "rel_type": "R", "vt_s": 2}]})]),
    )
    .unwrap();
    let mut second = args.clone();
    second["cursor"] = json!("7");
    let runs = page_cache::kernel_runs();
    let after = canon(&call(&s, op, second.clone()));
    assert_eq!(page_cache::kernel_runs(), runs + 1, "stale page served");
    page_cache::set_budget_bytes(Some(0));
    assert_eq!(after, canon(&call(&s, op, second)));
    assert_ne!(
        rows_of(&before_write, "rows").len(),
        rows_of(&walk(&s, op, args).0, "rows").len(),
        "the write should change the answer"
    );

    // A kernel that sets `truncated` itself (rows page or capped nodes): never cut from a
    // kept list, every page runs the kernel, bytes as without the cache.
    let sub = json!({"seeds": ["u0"], "hops": 2, "t_valid": 100, "limit": 3});
    let (plain, _) = walk(&s, "snapshot_subgraph", &sub);
    page_cache::set_budget_bytes(None);
    page_cache::clear();
    let (cached, runs) = walk(&s, "snapshot_subgraph", &sub);
    assert_eq!(cached, plain);
    assert_eq!(runs, cached.len() as u64);
    assert!(
        cached.len() >= 2,
        "snapshot_subgraph: {} pages",
        cached.len()
    );

    // Another store handle with the same rows and statistics never reads this one's entries
    // as stale-free by accident: its state token differs, so its first cursor call runs.
    let (_d2, s2) = store();
    page_cache::clear();
    let _ = walk(&s2, op, args);
    let (_d3, s3) = store();
    let mut second = args.clone();
    second["cursor"] = json!("7");
    let runs = page_cache::kernel_runs();
    let _ = call(&s3, op, second);
    assert_eq!(page_cache::kernel_runs(), runs + 1);
}
