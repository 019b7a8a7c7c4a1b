//! Reducers over complete results (issue 21 item 1, `docs/plans-changes.md`): on randomized
//! stores, a plan whose producing step is paged feeds `compute` reducers, filters and ranks
//! that read the producer's complete result; every answer equals a brute force over the raw
//! events written, the trace records the complete input it read, completeness and the claim
//! verifier stay honest, and the row budget refuses with a narrowing repair.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::Store;
use tgms_testkit::Rng;
use tgms_verifier::exec::{record, ExecOptions, ResultStore};

/// Raw events `(src, dst, vt_s)`, written in a few batches.
fn random_store(r: &mut Rng) -> (tempfile::TempDir, Store, Vec<(String, String, i64)>) {
    let (d, mut s) = new_store();
    let uids = 3 + r.below(30);
    let n = 20 + r.below(300);
    let evs: Vec<(String, String, i64)> = (0..n)
        .map(|_| {
            (
                format!("u{:02}", r.below(uids)),
                format!("u{:02}", r.below(uids)),
                r.below(1000) as i64,
            )
        })
        .collect();
    for (b, chunk) in evs.chunks(64).enumerate() {
        let events: Vec<Value> = chunk
            .iter()
            .map(|(a, b, t)| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t}))
            .collect();
        s.write_at(
            1 + b as i64,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
    }
    (d, s, evs)
}

/// Brute force: per folded pair in `[t_a, t_b)`, the event count.
fn pair_counts(evs: &[(String, String, i64)], t_a: i64, t_b: i64) -> Vec<i64> {
    let mut m: BTreeMap<(String, String), i64> = BTreeMap::new();
    for (a, b, _) in evs.iter().filter(|e| t_a <= e.2 && e.2 < t_b) {
        let k = if a <= b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        *m.entry(k).or_default() += 1;
    }
    m.into_values().collect()
}

fn median(v: &[i64]) -> f64 {
    let mut s = v.to_vec();
    s.sort();
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2] as f64
    } else {
        (s[n / 2 - 1] + s[n / 2]) as f64 / 2.0
    }
}

fn producer(t_a: i64, t_b: i64, limit: u64) -> Value {
    json!({"group_by": [{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}],
        "aggregates": [{"agg": "count"}], "pair_mode": "undirected",
        "window": {"t_a": t_a, "t_b": t_b}, "limit": limit})
}

fn the_plan(t_a: i64, t_b: i64, limit: u64) -> Value {
    let rows = json!({"$ref": "s1.rows"});
    // No depends_on anywhere: dependencies are inferred from the refs.
    plan(
        &[
            ("s1", "aggregate_events", producer(t_a, t_b, limit), &[]),
            ("s2", "compute", json!({"fn": "count", "input": rows}), &[]),
            (
                "s3",
                "compute",
                json!({"fn": "sum", "input": rows, "field": "count"}),
                &[],
            ),
            (
                "s4",
                "compute",
                json!({"fn": "median", "input": rows, "field": "count"}),
                &[],
            ),
            (
                "s5",
                "compute",
                json!({"fn": "max", "input": rows, "field": "count"}),
                &[],
            ),
            (
                "s6",
                "compute",
                json!({"fn": "filter", "input": rows, "field": "count", "cmp": "ge", "value": 2}),
                &[],
            ),
            (
                "s7",
                "compute",
                json!({"fn": "count", "input": {"$ref": "s6.rows"}}),
                &[],
            ),
            (
                "s8",
                "compute",
                json!({"fn": "topk", "input": rows, "field": "count", "k": 3, "side": "bottom"}),
                &[],
            ),
            (
                "s9",
                "compute",
                json!({"fn": "mean", "input": {"$ref": "s1.rows[*].count"}}),
                &[],
            ),
            (
                "s10",
                "compute",
                json!({"fn": "union", "input": rows, "field": "count", "other": []}),
                &[],
            ),
        ],
        "count",
        "s2.value",
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn reducers_over_a_paged_producer_equal_brute_force_over_all_rows() {
    let mut r = Rng::new(0x2121);
    let mut paged_cases = 0;
    for case in 0..40 {
        let (_d, s, evs) = random_store(&mut r);
        let (t_a, t_b) = if r.below(2) == 0 {
            (0, 1000)
        } else {
            let a = r.below(500) as i64;
            (a, a + 1 + r.below(500) as i64)
        };
        let limit = 1 + r.below(4);
        let want = pair_counts(&evs, t_a, t_b);
        let rs = ResultStore::memory();
        let p = the_plan(t_a, t_b, limit);
        assert!(
            check(Some(&s), &p, None).valid(),
            "{:?}",
            check(Some(&s), &p, None)
        );
        let t = run(&s, &p, &rs).trace;
        let rec = |id: &str| record(&t, id).unwrap().clone();
        let ctx = format!("case {case}: window [{t_a}, {t_b}), limit {limit}");
        assert_eq!(t["ok"], true, "{ctx}: {t:#}");
        let n = want.len() as i64;
        let paged = n > limit as i64;
        paged_cases += usize::from(paged);
        assert_eq!(rec("s1")["truncated"], json!(paged), "{ctx}");
        assert_eq!(t["answer"], n, "{ctx}");
        assert_eq!(t["answer_complete"], true, "{ctx}");
        let value = |id: &str| {
            tgms_verifier::exec::record(&t, id)
                .and_then(|x| x["result_digest"].as_str().map(String::from))
                .and_then(|d| rs.envelope(&d))
                .unwrap()
        };
        assert_eq!(value("s3")["value"], want.iter().sum::<i64>(), "{ctx}");
        if n > 0 {
            assert_eq!(f(&value("s4")["value"]), median(&want), "{ctx}");
            assert_eq!(value("s5")["value"], *want.iter().max().unwrap(), "{ctx}");
            let mean = want.iter().sum::<i64>() as f64 / n as f64;
            assert!((f(&value("s9")["value"]) - mean).abs() < 1e-6, "{ctx}");
        }
        // The filter returns all its rows (no limit given) and the count over it is exact.
        let ge2 = want.iter().filter(|&&c| c >= 2).count();
        let s6 = value("s6");
        assert_eq!(s6["rows"].as_array().unwrap().len(), ge2, "{ctx}");
        assert_eq!(s6["truncated"], false, "{ctx}");
        assert_eq!(value("s7")["value"], ge2, "{ctx}");
        // Bottom 3 ascending.
        let mut asc = want.clone();
        asc.sort();
        // The rows a bottom 3 can return: every row at or below the third smallest count.
        let bottom3 = asc
            .get(2)
            .map_or(asc.len(), |&c| asc.iter().filter(|&&x| x <= c).count());
        asc.truncate(3);
        let got: Vec<i64> = value("s8")["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["count"].as_i64().unwrap())
            .collect();
        assert_eq!(got, asc, "{ctx}");
        // The distinct counts, ascending.
        let distinct: std::collections::BTreeSet<i64> = want.iter().copied().collect();
        let distinct: Vec<i64> = distinct.into_iter().collect();
        assert_eq!(value("s10")["rows"], json!(distinct), "{ctx}");
        // The trace says which input each reducer read; its output is complete.
        for id in ["s2", "s3", "s4", "s5", "s6", "s8", "s9", "s10"] {
            let x = rec(id);
            assert_eq!(x["upstream_truncated"], false, "{ctx} {id}");
            assert!(x.get("ref_truncations").is_none(), "{ctx} {id}");
            assert_eq!(x["evidence"]["complete"], true, "{ctx} {id}");
            if paged {
                let ci = &x["complete_inputs"][0];
                assert_eq!(ci["step_id"], "s1", "{ctx} {id}");
                assert_eq!(ci["rows_total"], n, "{ctx} {id}");
                // `s2`, the first step to read `s1.rows`, reads it for its columns (none):
                // `s1` rendered them beside its page; the others re-ran `s1` (or read a
                // re-run kept for them).
                assert_eq!(ci["recomputed"], id != "s2", "{ctx} {id}");
                // A reducer that reads only named columns says which it read; a selecting
                // one also says how many rows it read whole.
                let cols = match id {
                    "s2" | "s9" => Some(json!([])),
                    "s3" | "s4" | "s5" | "s6" | "s8" | "s10" => Some(json!(["count"])),
                    _ => None,
                };
                assert_eq!(ci.get("columns").cloned(), cols, "{ctx} {id}");
                let selected = match id {
                    "s6" => Some(json!(ge2)),
                    "s8" => Some(json!(bottom3)),
                    _ => None,
                };
                assert_eq!(ci.get("selected").cloned(), selected, "{ctx} {id}");
                // The complete result is stored under the digest the trace names.
                let full = rs.envelope(ci["result_digest"].as_str().unwrap()).unwrap();
                assert_eq!(full["rows"].as_array().unwrap().len() as i64, n, "{ctx}");
                assert_eq!(full["truncated"], false);
                assert_eq!(
                    full["set_digest"],
                    rec("s1")["evidence"]["lists"]["rows"]["set_digest"]
                );
            } else {
                assert!(x.get("complete_inputs").is_none(), "{ctx} {id}");
            }
            // Its resolved args hold every row, cut to the columns the reducer reads
            // (nothing for a count, `count` for sum/median/max); a filter or a ranking,
            // whose output rows are input rows, holds whole the rows it can return.
            let args = rs
                .args(x["resolved_args_digest"].as_str().unwrap())
                .unwrap();
            let input = args["input"].as_array().unwrap();
            let rows_in = match id {
                "s6" => ge2,
                "s8" => bottom3,
                _ => n as usize,
            };
            assert_eq!(input.len(), rows_in, "{ctx} {id}");
            for row in input {
                let keys: Vec<&str> = match row.as_object() {
                    Some(m) => m.keys().map(String::as_str).collect(),
                    None => vec!["(not an object)"],
                };
                let ok = match id {
                    "s2" => keys.is_empty(),
                    "s3" | "s4" | "s5" | "s10" => keys == ["count"],
                    "s9" => row.is_i64(),
                    _ => keys.len() > 2 && keys.contains(&"count"),
                };
                assert!(ok, "{ctx} {id}: {row}");
            }
        }
        // The claim verifier: a count claim over the complete reducer is supported.
        let ans = answer(vec![
            json!({"id": "c1", "type": "count", "value": n, "from": "s2.value", "evidence": ["s2"]}),
        ]);
        assert_eq!(
            verdicts(&verify(&s, &t, &rs, &ans))[0].1,
            "supported",
            "{ctx}"
        );
        if paged {
            // Pages only (the spec's TGMS rule): the reducer is refused, and the same claim
            // cannot be supported.
            let rs2 = ResultStore::memory();
            let t2 = run_with(&s, &p, &rs2, &pages_only()).trace;
            let x = record(&t2, "s2").unwrap();
            assert_eq!(x["status"], "failed", "{ctx}");
            assert_eq!(x["error"]["error"], "E_LIMIT");
            assert_ne!(
                verdicts(&verify(&s, &t2, &rs2, &ans))[0].1,
                "supported",
                "{ctx}"
            );
            // And a count claim from the paged rows' length would be the page, not the total.
            assert_eq!(
                record(&t2, "s6").unwrap()["upstream_truncated"],
                true,
                "{ctx}"
            );
        }
    }
    assert!(paged_cases >= 20, "only {paged_cases} paged cases");
}

#[test]
fn a_complete_result_over_the_row_budget_is_refused_with_a_narrowing_repair() {
    let mut r = Rng::new(7);
    let (_d, s, evs) = loop {
        let x = random_store(&mut r);
        if pair_counts(&x.2, 0, 1000).len() > 8 {
            break x;
        }
    };
    let n = pair_counts(&evs, 0, 1000).len() as i64;
    let opts = ExecOptions {
        call: tgms_operators::CallOptions {
            ceilings: tgms_operators::Ceilings::from_json(&json!({"max_reducer_rows": 4})).unwrap(),
            ..Default::default()
        },
        ..ExecOptions::default()
    };
    // A producer whose page already holds the complete result (limit 10000) is refused with
    // the same budget message as a paged one that must be recomputed.
    let t = run_with(
        &s,
        &the_plan(0, 1000, 10_000),
        &ResultStore::memory(),
        &opts,
    )
    .trace;
    let x = record(&t, "s2").unwrap();
    assert_eq!(x["error"]["details"]["rows_total"], n, "{x}");
    assert_eq!(x["error"]["details"]["max_reducer_rows"], 4);
    let p = the_plan(0, 1000, 2);
    let t = run_with(&s, &p, &ResultStore::memory(), &opts).trace;
    let x = record(&t, "s2").unwrap();
    assert_eq!(x["status"], "failed");
    assert_eq!(x["error"]["error"], "E_LIMIT");
    assert_eq!(
        x["error"]["message"],
        format!("compute count: the complete result of 's1.rows' has {n} rows, over the executor's max_reducer_rows 4; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_rows in the ceilings")
    );
    let d = &x["error"]["details"];
    assert_eq!(d["rows_total"], n);
    assert_eq!(d["repair"]["or_raise_ceiling"]["max_reducer_rows"], n);
    let w = &d["repair"]["window"];
    assert_eq!(w["t_a"], 0);
    assert_eq!(w["t_b"], (1000.0 * 4.0 / n as f64).floor() as i64);
    // A non-reducer over the budget runs over the page, tainted (its rows are incomplete).
    let y = record(&t, "s6").unwrap();
    assert_eq!(y["status"], "ok");
    assert_eq!(y["upstream_truncated"], true);
    // Bad ceilings are structured errors.
    let e = tgms_operators::Ceilings::from_json(&json!({"max_reducer_rows": 0})).unwrap_err();
    assert_eq!(e.message, "ceiling max_reducer_rows must be >= 1");
    let e = tgms_operators::Ceilings::from_json(&json!({"max_total_rows": "x"})).unwrap_err();
    assert_eq!(e.message, "ceiling max_total_rows must be an integer");
}

#[test]
fn a_complete_result_over_the_memory_budget_is_refused_and_the_offered_ceiling_runs_it() {
    let mut r = Rng::new(11);
    let (_d, s, evs) = loop {
        let x = random_store(&mut r);
        if pair_counts(&x.2, 0, 1000).len() > 8 {
            break x;
        }
    };
    let n = pair_counts(&evs, 0, 1000).len() as i64;
    let with = |c: Value| ExecOptions {
        call: tgms_operators::CallOptions {
            ceilings: tgms_operators::Ceilings::from_json(&c).unwrap(),
            ..Default::default()
        },
        ..ExecOptions::default()
    };
    let p = the_plan(0, 1000, 2);
    let t = run_with(
        &s,
        &p,
        &ResultStore::memory(),
        &with(json!({"max_reducer_bytes": 1000})),
    )
    .trace;
    let x = record(&t, "s2").unwrap();
    assert_eq!(x["status"], "failed", "{x}");
    assert_eq!(x["error"]["error"], "E_LIMIT");
    let d = &x["error"]["details"];
    assert_eq!(d["rows_total"], n);
    assert_eq!(d["max_reducer_bytes"], 1000);
    let est = d["estimated_peak_bytes"].as_i64().unwrap();
    // At least the inline part of every row, in every copy the step holds (a plain count
    // reads no column: the producer renders its rows cut, empty); the rows are small maps,
    // so far less than a kilobyte a row in each copy.
    let copies = tgms_verifier::memory::STREAMED_CUT_COPIES as i64;
    assert!(
        est >= n * 32 * copies && est <= n * 1024 * copies,
        "{est} for {n} rows"
    );
    assert_eq!(
        x["error"]["message"],
        format!("compute count: the complete result of 's1.rows' has {n} rows, estimated to need {est} bytes of memory as the reducer's input, over the executor's max_reducer_bytes 1000; narrow the producing step (a smaller window, rel_types, an endpoint_filter cohort) or raise max_reducer_bytes in the ceilings if the machine has the memory")
    );
    assert_eq!(d["repair"]["or_raise_ceiling"]["max_reducer_bytes"], est);
    assert_eq!(
        d["repair"]["window"]["t_b"],
        (1000.0 * 1000.0 / est as f64).floor().max(1.0) as i64
    );
    // The ceiling the repair offers admits the same plan, which then counts every pair.
    let t = run_with(
        &s,
        &p,
        &ResultStore::memory(),
        &with(json!({"max_reducer_bytes": est})),
    )
    .trace;
    let x = record(&t, "s2").unwrap();
    assert_eq!(x["status"], "ok", "{x}");
    assert_eq!(t["answer"], n);
    let e = tgms_operators::Ceilings::from_json(&json!({"max_reducer_bytes": 0})).unwrap_err();
    assert_eq!(e.message, "ceiling max_reducer_bytes must be >= 1");
}

#[test]
fn a_compute_step_with_limit_keeps_its_page_and_a_reader_gets_the_complete_rows() {
    // Rows 0..250 as a literal input: the filter step with limit 100 returns a page, and a
    // count over it still reads all 250 (the filter re-runs unpaged).
    let (_d, s) = new_store();
    let rows: Vec<Value> = (0..250).map(|i| json!({"v": i})).collect();
    let p = plan(
        &[
            (
                "s1",
                "compute",
                json!({"fn": "filter", "input": rows, "field": "v", "cmp": "ge", "value": 0, "limit": 100}),
                &[],
            ),
            (
                "s2",
                "compute",
                json!({"fn": "count", "input": {"$ref": "s1.rows"}}),
                &[],
            ),
            (
                "s3",
                "compute",
                json!({"fn": "filter", "input": rows, "field": "v", "cmp": "lt", "value": 200}),
                &[],
            ),
        ],
        "count",
        "s2.value",
    );
    let rs = ResultStore::memory();
    let t = run(&s, &p, &rs).trace;
    assert_eq!(t["answer"], 250);
    assert_eq!(record(&t, "s1").unwrap()["truncated"], true);
    assert_eq!(record(&t, "s3").unwrap()["truncated"], false);
    let s3 = rs
        .envelope(record(&t, "s3").unwrap()["result_digest"].as_str().unwrap())
        .unwrap();
    assert_eq!(s3["rows"].as_array().unwrap().len(), 200);
}

/// A list read cut to columns is rendered cut (never held whole), yet the trace names the
/// digest of the complete result: the unpaged call's. The producer is re-run once per list
/// and columns however many steps read them (the later readers' `complete_inputs` carry no
/// `wall_ms` of a re-run), and again for other columns; the answers equal brute force over
/// the version rows.
#[test]
fn a_list_cut_to_columns_names_the_complete_digest_and_is_produced_once_per_columns() {
    use tgms_operators::pipeline::call_operator_unpaged;
    let mut r = Rng::new(0x2122);
    let (_d, s, evs) = random_store(&mut r);
    let vh = json!({"kind": "edge", "belief": "all", "limit": 2});
    let rows = json!({"$ref": "s1.rows"});
    let p = plan(
        &[
            ("s1", "version_history", vh.clone(), &[]),
            (
                "s2",
                "compute",
                json!({"fn": "max", "input": rows, "field": "vt_s"}),
                &[],
            ),
            (
                "s3",
                "compute",
                json!({"fn": "min", "input": rows, "field": "vt_s"}),
                &[],
            ),
            (
                "s4",
                "compute",
                json!({"fn": "count", "input": rows, "group_by": "src"}),
                &[],
            ),
        ],
        "value",
        "s2.value",
    );
    let rs = ResultStore::memory();
    let ex = run(&s, &p, &rs);
    assert_eq!(ex.trace["ok"], true, "{}", ex.trace);
    let whole = call_operator_unpaged(
        s.snapshot(),
        "version_history",
        &vh,
        &tgms_operators::CallOptions::default(),
    )
    .unwrap();
    let rec = |id: &str| record(&ex.trace, id).unwrap().clone();
    // `s1` renders `vt_s` beside its page for `s2`, the first step to read its list, and
    // `s3` reads the same cut; only `s4`'s column makes a re-run.
    for (id, cols, rerun) in [
        ("s2", json!(["vt_s"]), false),
        ("s3", json!(["vt_s"]), false),
        ("s4", json!(["src"]), true),
    ] {
        let ci = &rec(id)["complete_inputs"][0];
        assert_eq!(ci["result_digest"], whole["result_digest"], "{id}");
        assert_eq!(ci["rows_total"], evs.len(), "{id}");
        assert_eq!(ci["columns"], cols, "{id}");
        assert_eq!(ci.get("wall_ms").is_some(), rerun, "{id}");
        assert_eq!(ci["recomputed"], rerun, "{id}");
    }
    let vts: Vec<i64> = evs.iter().map(|e| e.2).collect();
    let value = |id: &str| {
        rs.envelope(rec(id)["result_digest"].as_str().unwrap())
            .unwrap()
    };
    assert_eq!(value("s2")["value"], *vts.iter().max().unwrap());
    assert_eq!(value("s3")["value"], *vts.iter().min().unwrap());
    let mut senders: BTreeMap<&str, i64> = BTreeMap::new();
    for e in &evs {
        *senders.entry(e.0.as_str()).or_default() += 1;
    }
    let got: BTreeMap<String, i64> = value("s4")["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["src"].as_str().unwrap().to_string(),
                x["count"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: BTreeMap<String, i64> = senders
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(got, want);
}

/// `topk` with `k` and `filter` with `field` read their input cut to their columns and only
/// the rows they can return whole, from the producer's page or from one more run of the
/// producer. Over `version_history` (rows of typed cells), `aggregate_events` (rows the
/// kernel holds) and `resolve_entities` (rows rendered lazily), with and without `group_by`
/// and tie widening, their rows, tie counts and errors are those of the same `compute` call
/// over the complete rows given literally.
#[test]
fn selecting_reducers_read_whole_only_the_rows_they_can_return() {
    let mut r = Rng::new(0x5e1);
    let (mut paged, mut picked_fewer, mut errors) = (0, 0, 0);
    for case in 0..30 {
        let (_d, s, _evs) = random_store(&mut r);
        let a = r.below(600) as i64;
        let (t_a, t_b) = (a, a + 1 + r.below(600) as i64);
        let limit = 1 + r.below(5);
        let producers = [
            (
                "version_history",
                json!({"kind": "edge", "window": {"t_a": t_a, "t_b": t_b}, "belief": "current", "limit": limit}),
                "vt_s",
                "src",
            ),
            (
                "aggregate_events",
                producer(t_a, t_b, limit),
                "count",
                "src",
            ),
            (
                "resolve_entities",
                json!({"query": "u0", "limit": limit}),
                "match",
                "label",
            ),
        ];
        for (op, pargs, field, group) in producers {
            let k = r.below(4);
            let side = ["top", "bottom"][r.below(2) as usize];
            let mut topk = json!({"fn": "topk", "field": field, "k": k, "side": side});
            if r.below(2) == 0 {
                topk["ties"] = json!("include");
            }
            if r.below(2) == 0 {
                topk["group_by"] = json!(group);
            }
            let cmp = ["ge", "lt", "eq", "not_null"][r.below(4) as usize];
            let mut filter = json!({"fn": "filter", "field": field, "cmp": cmp});
            if cmp != "not_null" {
                filter["value"] = json!(r.below(400) as i64 + t_a.min(300));
            }
            // An error over the rows: a null compared (the `reason` of a version never
            // corrected).
            let failing = json!({"fn": "filter", "field": "reason", "cmp": "lt", "value": 5});
            let computes = [topk, filter, failing];
            for c in computes
                .iter()
                .take(if op == "version_history" { 3 } else { 2 })
            {
                let ctx = format!("case {case}: {op} {pargs} then {c}");
                let mut step = c.clone();
                step["input"] = json!({"$ref": "s1.rows"});
                let p = plan(
                    &[
                        ("s1", op, pargs.clone(), &[]),
                        ("s2", "compute", step, &["s1"]),
                    ],
                    "count",
                    "s1.rows_total",
                );
                let rs = ResultStore::memory();
                let t = run(&s, &p, &rs).trace;
                let s1 = record(&t, "s1").unwrap();
                let x = record(&t, "s2").unwrap();
                // The oracle: the same call over every row of the producer's complete result.
                let snap = s.snapshot();
                let opts = tgms_operators::CallOptions::default();
                let full = tgms_operators::pipeline::call_operator_unpaged(snap, op, &pargs, &opts)
                    .unwrap();
                let rows = full["rows"].as_array().unwrap();
                let mut literal = c.clone();
                literal["input"] = full["rows"].clone();
                let want = tgms_operators::pipeline::call_operator_unpaged(
                    snap, "compute", &literal, &opts,
                );
                match want {
                    Err(e) => {
                        assert_eq!(x["status"], "failed", "{ctx}: {x}");
                        assert_eq!(x["error"], e.payload(), "{ctx}");
                        errors += 1;
                        continue;
                    }
                    Ok(want) => {
                        assert_eq!(x["status"], "ok", "{ctx}: {x}");
                        let got = rs.envelope(x["result_digest"].as_str().unwrap()).unwrap();
                        assert_eq!(got["rows"], want["rows"], "{ctx}");
                        assert_eq!(got.get("ties_included"), want.get("ties_included"), "{ctx}");
                        assert_eq!(got["result_digest"], want["result_digest"], "{ctx}");
                    }
                }
                // What was read whole: the step's input holds the selected rows, whole (as
                // many columns as the producer's rows), every one a row of the result.
                let args = rs
                    .args(x["resolved_args_digest"].as_str().unwrap())
                    .unwrap();
                let input = args["input"].as_array().unwrap();
                let width = rows
                    .first()
                    .and_then(Value::as_object)
                    .map_or(0, |m| m.len());
                assert!(
                    input
                        .iter()
                        .all(|row| row.as_object().unwrap().len() == width),
                    "{ctx}"
                );
                assert!(input.iter().all(|row| rows.contains(row)), "{ctx}");
                if s1["truncated"] == true {
                    paged += 1;
                    let ci = &x["complete_inputs"][0];
                    assert_eq!(ci["rows_total"], rows.len(), "{ctx}");
                    assert_eq!(ci["selected"], input.len(), "{ctx}: {ci}");
                    assert_eq!(ci["result_digest"], full["result_digest"], "{ctx}");
                    picked_fewer += usize::from(input.len() < rows.len());
                } else {
                    assert!(x.get("complete_inputs").is_none(), "{ctx}");
                }
            }
        }
    }
    assert!(
        paged >= 30 && picked_fewer >= 15 && errors >= 20,
        "{paged} paged, {picked_fewer} selective, {errors} errors"
    );
}

/// The rows a selecting reducer reads whole are under the memory budget too: a filter that
/// keeps every row of a list whose cut columns are admitted is refused with the estimate of
/// the whole rows it would read.
#[test]
fn the_rows_a_selection_reads_whole_are_under_the_memory_budget() {
    let mut r = Rng::new(12);
    let (_d, s, evs) = loop {
        let x = random_store(&mut r);
        if x.2.len() > 100 {
            break x;
        }
    };
    let p = plan(
        &[
            (
                "s1",
                "version_history",
                json!({"kind": "edge", "window": {"t_a": 0, "t_b": 1000}, "belief": "current", "limit": 2}),
                &[],
            ),
            (
                "s2",
                "compute",
                json!({"fn": "filter", "input": {"$ref": "s1.rows"}, "field": "vt_s", "cmp": "ge", "value": 0}),
                &[],
            ),
            (
                "s3",
                "compute",
                json!({"fn": "filter", "input": {"$ref": "s1.rows"}, "field": "vt_s", "cmp": "lt", "value": 0}),
                &[],
            ),
            (
                "s4",
                "compute",
                json!({"fn": "max", "input": {"$ref": "s1.rows"}, "field": "vt_s"}),
                &[],
            ),
        ],
        "count",
        "s1.rows_total",
    );
    let opts = |bytes: i64| ExecOptions {
        call: tgms_operators::CallOptions {
            ceilings: tgms_operators::Ceilings::from_json(&json!({"max_reducer_bytes": bytes}))
                .unwrap(),
            ..Default::default()
        },
        ..ExecOptions::default()
    };
    // The estimate of the cut column alone: a `max` of it is refused at 1 byte.
    let t = run_with(&s, &p, &ResultStore::memory(), &opts(1)).trace;
    let cut = record(&t, "s4").unwrap();
    let budget = cut["error"]["details"]["estimated_peak_bytes"].as_i64();
    let budget = budget.unwrap_or_else(|| panic!("{cut}"));
    // Enough for the cut column (s3 keeps nothing and runs), not for every row whole.
    let t = run_with(&s, &p, &ResultStore::memory(), &opts(budget)).trace;
    let (s2, s3) = (record(&t, "s2").unwrap(), record(&t, "s3").unwrap());
    assert_eq!(s3["status"], "ok", "{s3}");
    assert_eq!(s3["complete_inputs"][0]["selected"], 0);
    assert_eq!(s2["status"], "failed", "{s2}");
    assert_eq!(s2["error"]["error"], "E_LIMIT");
    let d = &s2["error"]["details"];
    assert_eq!(d["rows_total"], evs.len());
    assert!(d["estimated_peak_bytes"].as_i64().unwrap() > budget, "{d}");
    // The ceiling it offers runs it, and the filter keeps every row.
    let t = run_with(
        &s,
        &p,
        &ResultStore::memory(),
        &opts(d["estimated_peak_bytes"].as_i64().unwrap()),
    )
    .trace;
    let s2 = record(&t, "s2").unwrap();
    assert_eq!(s2["status"], "ok", "{s2}");
    assert_eq!(s2["complete_inputs"][0]["selected"], evs.len());
}
