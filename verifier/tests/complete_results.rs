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
        asc.truncate(3);
        let got: Vec<i64> = value("s8")["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["count"].as_i64().unwrap())
            .collect();
        assert_eq!(got, asc, "{ctx}");
        // The trace says which input each reducer read; its output is complete.
        for id in ["s2", "s3", "s4", "s5", "s6", "s8", "s9"] {
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
                // A reducer that reads only named columns says which it read.
                let cols = match id {
                    "s2" | "s9" => Some(json!([])),
                    "s3" | "s4" | "s5" => Some(json!(["count"])),
                    _ => None,
                };
                assert_eq!(ci.get("columns").cloned(), cols, "{ctx} {id}");
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
            // whose output rows are input rows, reads them whole.
            let args = rs
                .args(x["resolved_args_digest"].as_str().unwrap())
                .unwrap();
            let input = args["input"].as_array().unwrap();
            assert_eq!(input.len() as i64, n, "{ctx} {id}");
            for row in input {
                let keys: Vec<&str> = match row.as_object() {
                    Some(m) => m.keys().map(String::as_str).collect(),
                    None => vec!["(not an object)"],
                };
                let ok = match id {
                    "s2" => keys.is_empty(),
                    "s3" | "s4" | "s5" => keys == ["count"],
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
