//! A registry query the cost model refuses (issue 26 item 5: at a scale where a query is
//! refused, the run says so with its narrowing repair): the record keeps the spec's `gr`
//! and carries the refusal's estimate, ceiling and repair, the sample-mode args of an exact
//! motif count among them.

use serde_json::json;
use tgms_bench::generate::{scratch_store, FIXED_TT_BASE};
use tgms_bench::registry::{queries, run_query_under, Params, Protocol, Query};
use tgms_operators::{CallOptions, Ceilings};

#[test]
fn a_refused_query_carries_its_estimate_ceiling_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let st = scratch_store(&dir.path().join("s"), 100_000).unwrap();
    let params = Params::synthetic(100_000, FIXED_TT_BASE + 1);
    let all = queries(&params);
    let q = |id: &str| all.iter().find(|q| q.id == id).unwrap().clone();
    // A 1 ms time ceiling: the census and the global diff are estimated above it.
    let tight = CallOptions {
        ceilings: Ceilings {
            time_est_ms: Some(1),
            ..Ceilings::default()
        },
        skip_cost: false,
    };
    let proto = Protocol::QUICK;
    // The registry's census (δ = 1 h: every event starts instances, so a sample would not
    // be cheaper) and the same census at δ = 10 µs, where it would (a sample of ε = 5%
    // draws about 30,000 events: at least 62,000 in the window make it worth offering).
    let short = Query {
        id: "motif.short",
        op: "count_temporal_motifs",
        args: json!({"motif": "all", "delta": 10, "window": {"t_a": 0, "t_b": 105_000}}),
        ours: true,
    };
    for query in [q("motif.all36"), short, q("diff.global")] {
        let id = query.id;
        let rec = run_query_under(st.snapshot(), &query, proto, &tight);
        assert!(!rec.ok && rec.refused(), "{id}: {rec:?}");
        assert_eq!(rec.error.as_deref(), Some("gr"));
        assert!(rec.hash.is_none() && rec.timings_ms.is_empty());
        let f = rec.refusal.clone().expect("the refusal");
        assert_eq!(f.ceiling_ms, Some(1));
        assert!(f.estimate_ms.is_some_and(|e| e > 1), "{id}: {f:?}");
        assert!(
            f.suggestions.iter().any(|s| s.contains("window")),
            "{id}: {f:?}"
        );
        // The short census can be asked approximately; a diff has no sample mode.
        if id == "motif.short" {
            let args = f.sample_mode.clone().expect("the sample-mode repair");
            assert_eq!(args["mode"], "sample");
            assert!(args["epsilon"].as_f64().is_some_and(|e| e > 0.0));
        } else {
            assert_eq!(f.sample_mode, None);
        }
        // The JSON record: the spec's keys unchanged, the refusal beside them.
        let j = rec.to_json();
        assert_eq!(j["error"], "gr");
        assert_eq!(j["ok"], false);
        assert_eq!(j["refusal"]["ceiling_ms"], 1);
        assert_eq!(
            j["refusal"]["sample_mode"],
            f.sample_mode.unwrap_or_default()
        );
    }
    // Under the default ceilings the same query answers, and its record has no refusal.
    let rec = run_query_under(
        st.snapshot(),
        &q("diff.global"),
        proto,
        &CallOptions::default(),
    );
    assert!(rec.ok && !rec.refused() && rec.refusal.is_none(), "{rec:?}");
    assert!(rec.to_json().get("refusal").is_none());
}
