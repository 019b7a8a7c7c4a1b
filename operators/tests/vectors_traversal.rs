//! The vectors of the spec's `test-vectors.md` for the traversal and pattern operators, at operator
//! level: TV6, TV7 (temporal_reachability), TV8 (temporal_paths, co_active), TV9 and TV23
//! (count_temporal_motifs, find_temporal_motif_instances), TV10 (their refusals), TV18
//! (weighted_traverse), TV21 (co_active budget, D-O4).

mod common;
use common::*;
use serde_json::{json, Value};

fn digest_of(env: &Value) -> &str {
    env["result_digest"]
        .as_str()
        .unwrap_or_else(|| panic!("not an envelope: {env}"))
}

fn call_with(s: &tgms_engine::Store, op: &str, args: Value, ceilings: Value) -> Value {
    let opts = tgms_operators::CallOptions {
        ceilings: tgms_operators::Ceilings::from_json(&ceilings).unwrap(),
        skip_cost: false,
    };
    match tgms_operators::call_operator(s.snapshot(), op, &args, &opts) {
        Ok(v) => v,
        Err(e) => e.payload(),
    }
}

fn ingest(events: &[(&str, &str, i64)]) -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    let evs: Vec<Value> = events
        .iter()
        .map(|(a, b, t)| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t}))
        .collect();
    s.write_at(1, ops(vec![json!({"op": "ingest_events", "events": evs})]))
        .unwrap();
    (d, s)
}

fn reach(s: &tgms_engine::Store, extra: Value) -> Value {
    let mut a = json!({"src": "a", "window": {"t_a": 0, "t_b": 100}});
    for (k, v) in extra.as_object().unwrap() {
        a[k] = v.clone();
    }
    call(s, "temporal_reachability", a)
}

#[test]
fn tv6_reachability_with_a_wait_cap() {
    let (_d, s) = ingest(&[("a", "b", 1), ("a", "b", 50), ("b", "c", 55)]);
    let e = reach(&s, json!({}));
    assert_eq!(
        canon(&payload(&e)),
        r#"{"cursor":null,"rows":[{"earliest_arrival":1,"uid":"b"},{"earliest_arrival":55,"uid":"c"}],"rows_total":2,"set_digest":"51b94484247fc02c9eafb0537abb7b849cc02c0c69a83aa81e5161804e07be13","truncated":false}"#
    );
    assert_eq!(
        digest_of(&e),
        "46af48d55920988ef814544b6c37b8c8eb1bf6188bc93aea039ca8b46166593e"
    );
    let e10 = reach(&s, json!({"delta_max_wait": 10}));
    assert_eq!(e10["rows"], e["rows"]);
    let e3 = reach(&s, json!({"delta_max_wait": 3}));
    assert_eq!(e3["rows"], json!([{"uid": "b", "earliest_arrival": 1}]));
}

#[test]
fn tv7_backward_reachability() {
    let (_d, s) = ingest(&[("c", "d", 8), ("d", "a", 5)]);
    let out = reach(&s, json!({"direction": "out"}));
    assert_eq!(out["rows"], json!([]));
    assert_eq!(
        digest_of(&out),
        "fb970bb45afd0873400ffd0cf25ad75710d3ef6ba945806b247f2fe75ecbd60b"
    );
    let inn = reach(&s, json!({"direction": "in"}));
    assert_eq!(inn["rows"], json!([{"latest_departure": 5, "uid": "d"}]));
    assert_eq!(
        digest_of(&inn),
        "2a4bf241084c8737a2935d158a688f433e693eeed9519d8856d93ed1351ff160"
    );
    let both = reach(&s, json!({"direction": "both"}));
    assert_eq!(
        both["rows"],
        json!([{"earliest_arrival": null, "latest_departure": 5, "uid": "d"}])
    );
    assert_eq!(
        digest_of(&both),
        "6fc7dbf9925c265537fdfa3adbd205c9fb9333935c5cd4758eb5ec27aa9bcb83"
    );

    let (_d, s) = ingest(&[("x", "y", 3), ("y", "a", 5), ("z", "y", 7), ("a", "w", 9)]);
    assert_eq!(
        reach(&s, json!({}))["rows"],
        json!([{"uid": "w", "earliest_arrival": 9}])
    );
    let inn = reach(&s, json!({"direction": "in"}));
    assert_eq!(
        inn["rows"],
        json!([{"latest_departure": 5, "uid": "y"}, {"latest_departure": 3, "uid": "x"}])
    );
    assert_eq!(
        digest_of(&inn),
        "0bfaf943f0f42956a9af999293373c911b5cb70f0c2d0227dfaac5d699e64e73"
    );
    let both = reach(&s, json!({"direction": "both"}));
    assert_eq!(
        both["rows"],
        json!([{"uid": "w", "earliest_arrival": 9, "latest_departure": null},
               {"uid": "y", "earliest_arrival": null, "latest_departure": 5},
               {"uid": "x", "earliest_arrival": null, "latest_departure": 3}])
    );
    assert_eq!(
        digest_of(&both),
        "ceebde2e4dfd84156b128b00a5c9bb3499f0553bdf45bf184060c5ce3e610d63"
    );
    assert_eq!(
        reach(&s, json!({"direction": "in", "delta_max_wait": 1}))["rows"],
        json!([{"latest_departure": 5, "uid": "y"}])
    );
    assert_eq!(
        reach(&s, json!({"direction": "in", "delta_max_wait": 2}))["rows"],
        json!([{"latest_departure": 5, "uid": "y"}, {"latest_departure": 3, "uid": "x"}])
    );
}

#[test]
fn tv8_paths_and_co_active_on_interval_edges() {
    let (_d, s) = tv8();
    let w = json!({"t_a": 20, "t_b": 60});
    let p = call(
        &s,
        "temporal_paths",
        json!({"src": "a", "dst": "c", "window": w}),
    );
    assert_eq!(
        canon(&payload(&p)),
        r#"{"cursor":null,"rows":[{"arrival":20,"edges":[{"dst":"b","eid":"f39a58802118efa2055a9e26","rel_type":"R","src":"a","t":0},{"dst":"c","eid":"2ada81c9322a57a350e2a707","rel_type":"R","src":"b","t":5}],"hops":2},{"arrival":30,"edges":[{"dst":"c","eid":"32d1d92ffe9c987c1d102160","rel_type":"S","src":"a","t":30}],"hops":1}],"rows_total":2,"set_digest":"091011ca3ca62b8d1f5a86098f8c57b231ec97957ea1c9a91029a5627a30e974","truncated":false}"#
    );
    assert_eq!(
        digest_of(&p),
        "9ee1d506faa01bc959ddf99bc8e2a49ccd96b36cb8b2dd387695002ffae3f3b0"
    );
    let p1 = call(
        &s,
        "temporal_paths",
        json!({"src": "a", "dst": "c", "window": w, "k": 1}),
    );
    assert_eq!(p1["rows"], json!([p["rows"][0]]));
    assert_eq!(p1["rows_total"], 2);
    assert_eq!(p1["truncated"], true);
    assert_eq!(p1["set_digest"], p["set_digest"]);

    let c = call(
        &s,
        "co_active",
        json!({"a_spec": {"rel_type": "S"}, "b_spec": {}, "allen_relation": {"relation": "during"}}),
    );
    assert_eq!(c["rows_total"], 2);
    assert_eq!(c["rows"][0]["b"]["vt_s"], 0);
    assert_eq!(c["rows"][1]["b"]["vt_s"], 5);
    assert_eq!(
        digest_of(&c),
        "f2ff333146e7b4f92ace04dc0747aa21315b1e39851618136681515a92ee7c6d"
    );
    let c = call(
        &s,
        "co_active",
        json!({"a_spec": {"src": "a"}, "b_spec": {"src": "b"}, "allen_relation": {"relation": "overlaps"}}),
    );
    assert_eq!(c["rows"], json!([]));
    assert_eq!(c["rows_total"], 0);
}

fn motif(s: &tgms_engine::Store, op: &str, extra: Value) -> Value {
    let mut a = json!({"window": {"t_a": 0, "t_b": 100}});
    for (k, v) in extra.as_object().unwrap() {
        a[k] = v.clone();
    }
    call(s, op, a)
}

#[test]
fn tv9_motifs_and_reachability() {
    let (_d, s) = tv9();
    let c = motif(
        &s,
        "count_temporal_motifs",
        json!({"motif": "M_triangle_cyclic", "delta": 20}),
    );
    assert_eq!(
        canon(&payload(&c)),
        r#"{"count":2,"n_events_in_window":6,"truncated":false}"#
    );
    assert_eq!(
        digest_of(&c),
        "31747eccdf7ae6356976fffa840d11ddaba3e4b4fb82d3cc8a91b22248aa93f5"
    );
    let count = |m: &str, d: i64| {
        let e = motif(&s, "count_temporal_motifs", json!({"motif": m, "delta": d}));
        assert_eq!(e["n_events_in_window"], 6, "{e}");
        e["count"].as_i64().unwrap()
    };
    assert_eq!(count("M_triangle_cyclic", 19), 0);
    assert_eq!(count("M_2node_pingpong", 20), 1);
    assert_eq!(count("M_path_3", 20), 0);
    assert_eq!(count("M_star_out_3", 20), 0);
    assert_eq!(count("M_triangle_acyclic_1", 20), 0);

    let f = motif(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "M_2node_pingpong", "delta": 5}),
    );
    assert_eq!(
        f["rows"],
        json!([{"edges": [
            {"src": "a", "dst": "b", "t": 40, "eid": "69217de0738c26302db43351", "rel_type": "M"},
            {"src": "b", "dst": "a", "t": 41, "eid": "0938525cd7c1e62244fabefb", "rel_type": "M"},
            {"src": "a", "dst": "b", "t": 42, "eid": "0a18376aba031b4a61221abd", "rel_type": "M"}]}])
    );
    assert_eq!(
        f["set_digest"],
        "c1a8161220c834ff7c9a707f86654386c72d5ba265f69515dec723e43a7ce3d2"
    );
    assert_eq!(
        digest_of(&f),
        "2fccd0e4e627e9382fba3da16ce78969dbaadb3fcba48932d4dc7f2f79d88f10"
    );
    let f = motif(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "M_triangle_cyclic", "delta": 20}),
    );
    assert_eq!(f["rows_total"], 2);
    let eids: Vec<&str> = f["rows"][0]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["eid"].as_str().unwrap())
        .collect();
    assert!(eids[0].starts_with("525d5e8e"));
    assert_eq!(
        &eids[1..],
        ["52c17a8b3c0dfaae3e584f5f", "1509947f408beb08cc82374e"]
    );
    assert_eq!(f["rows"][1]["edges"][0]["t"], 20);
    assert_eq!(
        digest_of(&f),
        "9f2933945bf651f4a87bd0937b260f95ebc7e3f68ddd1235805b9296417e5e98"
    );
    for op in ["count_temporal_motifs", "find_temporal_motif_instances"] {
        assert_eq!(
            canon(&motif(
                &s,
                op,
                json!({"motif": "M_triangle_cyclic", "delta": 20, "node_filter": ["a", "zz"]})
            )),
            r#"{"details":{"uid":"zz"},"error":"E_NOT_FOUND","message":"unknown uid: zz"}"#
        );
    }

    let r = reach(&s, json!({}));
    assert_eq!(
        r["rows"],
        json!([{"uid": "b", "earliest_arrival": 10}, {"uid": "c", "earliest_arrival": 20}])
    );
    assert_eq!(
        digest_of(&r),
        "03d49e86eeab88e41ace80b93f36206c0c093c2fbd732825956f1afcd7dc6e38"
    );
}

#[test]
fn tv10_refusals_of_these_operators() {
    let (_d, s) = tv9();
    let r = call_with(
        &s,
        "co_active",
        json!({"a_spec": {}, "b_spec": {}, "allen_relation": {"relation": "meets"}}),
        json!({"rows_scanned_est": 1}),
    );
    assert_eq!(
        canon(&r),
        r#"{"details":{"ceilings":{"rows_scanned_est":1},"estimate":{"expansions_est":0,"rows_scanned_est":9,"time_est_ms":0},"suggestions":["narrow the valid-time window","add a node_filter / seed set","restrict rel_types","reduce hops / max_hops"]},"error":"E_COST","message":"estimated cost for co_active exceeds ceilings"}"#
    );
    assert_eq!(
        canon(&call(
            &s,
            "temporal_paths",
            json!({"src": "a", "dst": "b", "window": {"t_a": 0, "t_b": 1}, "k": 21})
        )),
        r#"{"details":{"path":["k"]},"error":"E_SCHEMA","message":"invalid args for temporal_paths: 21 is greater than the maximum of 20"}"#
    );
    let m = motif(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "M_path_3", "delta": 5, "mode": "sample"}),
    );
    assert_eq!(m["error"], "E_INVALID_ARG");
    assert_eq!(
        m["message"],
        "mode='sample' is only available for count_temporal_motifs"
    );
    // Sample mode of the count is an estimate (operators/tests/approx_motifs.rs).
    let m = motif(
        &s,
        "count_temporal_motifs",
        json!({"motif": "M_path_3", "delta": 5, "mode": "sample"}),
    );
    assert_eq!(m["approximate"], true);
    let b = call(
        &s,
        "co_active",
        json!({"a_spec": {}, "b_spec": {}, "allen_relation": {"relation": "before"}}),
    );
    assert_eq!(
        canon(&b),
        r#"{"details":{},"error":"E_INVALID_ARG","message":"allen_relation 'before' requires gap"}"#
    );
}

fn tv18() -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    let l = |a: &str, b: &str, props: Value, vs: i64, ve: i64| json!({"op": "assert_edge", "src": a, "dst": b, "rel_type": "LINK", "props": props, "vt_s": vs, "vt_e": ve});
    s.write_at(
        1,
        ops(vec![
            l(
                "m0",
                "m1",
                json!({"link_type": "causal", "weight": 0.9}),
                0,
                1000,
            ),
            l(
                "m0",
                "m2",
                json!({"link_type": "semantic", "weight": 1.0}),
                0,
                1000,
            ),
            l(
                "m1",
                "m3",
                json!({"link_type": "entity", "weight": 0.5}),
                0,
                1000,
            ),
            l(
                "m2",
                "m3",
                json!({"link_type": "causal", "weight": 1}),
                0,
                1000,
            ),
            l("m3", "m4", json!({"link_type": "temporal"}), 0, 1000),
            l(
                "m0",
                "m5",
                json!({"link_type": "friend", "weight": 1.0}),
                0,
                1000,
            ),
            l(
                "m0",
                "m6",
                json!({"link_type": "semantic", "weight": "high"}),
                0,
                1000,
            ),
            l(
                "m1",
                "m0",
                json!({"link_type": "causal", "weight": 1}),
                0,
                1000,
            ),
            l(
                "m0",
                "m7",
                json!({"link_type": "causal", "weight": 1.0}),
                200,
                300,
            ),
        ]),
    )
    .unwrap();
    (d, s)
}

#[test]
fn tv18_weighted_traverse() {
    let (_d, s) = tv18();
    let e = call(&s, "weighted_traverse", json!({"seed": "m0", "t": 100}));
    assert_eq!(
        canon(&payload(&e)),
        r#"{"cursor":null,"multipliers":{"causal":1.5,"entity":1.2,"semantic":0.8,"temporal":0.8},"rows":[{"depth":1,"link_types":["causal"],"path":["m0","m1"],"score":1.35,"uid":"m1"},{"depth":2,"link_types":["semantic","causal"],"path":["m0","m2","m3"],"score":1.2,"uid":"m3"},{"depth":3,"link_types":["semantic","causal","temporal"],"path":["m0","m2","m3","m4"],"score":0.96,"uid":"m4"},{"depth":1,"link_types":["semantic"],"path":["m0","m2"],"score":0.8,"uid":"m2"}],"rows_total":4,"set_digest":"559c8fc145e961eb677fe0a63f2502e73fe1d694d148ed9d70d8459f1a71d8fc","skipped_edges":2,"truncated":false}"#
    );
    assert_eq!(
        digest_of(&e),
        "7b2e1b3fc993ebbc76aa717587131bb8bb4abfbc45f03aafa48d086d84f04be6"
    );
    let e = call(
        &s,
        "weighted_traverse",
        json!({"seed": "m0", "t": 100, "multipliers": {"causal": 1.0}}),
    );
    let brief: Vec<(String, String, i64)> = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uid"].as_str().unwrap().to_string(),
                canon(&r["score"]),
                r["depth"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, i64)> = [
        ("m1", "0.9", 1),
        ("m2", "0.8", 1),
        ("m3", "0.8", 2),
        ("m4", "0.64", 3),
    ]
    .iter()
    .map(|(u, s, d)| (u.to_string(), s.to_string(), *d))
    .collect();
    assert_eq!(brief, want);
    assert_eq!(
        digest_of(&e),
        "d7c7b0c37d04d89c58a712c4fea28313c8da3c73f9dc160335faa2d9f64eb737"
    );
    let e = call(
        &s,
        "weighted_traverse",
        json!({"seed": "m0", "t": 100, "max_depth": 1}),
    );
    let uids: Vec<&str> = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, ["m1", "m2"]);
    assert_eq!(e["rows"][0]["score"], json!(1.35));
    assert_eq!(e["skipped_edges"], 2);
    let e = call(
        &s,
        "weighted_traverse",
        json!({"seed": "m3", "t": 100, "direction": "in", "max_depth": 2}),
    );
    let got: Vec<(String, String, Value)> = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uid"].as_str().unwrap().to_string(),
                canon(&r["score"]),
                r["path"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("m2".to_string(), "1.5".to_string(), json!(["m3", "m2"])),
            (
                "m0".to_string(),
                "1.2".to_string(),
                json!(["m3", "m2", "m0"])
            ),
            ("m1".to_string(), "0.6".to_string(), json!(["m3", "m1"])),
        ]
    );
    assert_eq!(e["skipped_edges"], 0);
}

#[test]
fn tv21_co_active_budget_counts_real_pairs() {
    for (b_end, refused) in [(6, false), (20, true)] {
        let (_d, mut s) = new_store();
        let mut batch = Vec::new();
        for i in 0..300 {
            batch.push(json!({"op": "assert_edge", "src": "x", "dst": format!("y{i}"), "rel_type": "R", "vt_s": 0, "vt_e": 10}));
            batch.push(json!({"op": "assert_edge", "src": "z", "dst": format!("w{i}"), "rel_type": "R", "vt_s": 5, "vt_e": b_end}));
        }
        s.write_at(1, ops(batch)).unwrap();
        let e = call(
            &s,
            "co_active",
            json!({"a_spec": {"src": "x"}, "b_spec": {"src": "z"}, "allen_relation": {"relation": "overlaps"}}),
        );
        if refused {
            assert_eq!(e["error"], "E_COST", "{e}");
            assert_eq!(
                e["details"],
                json!({"estimate": {"expansions_est": 50001}, "suggestions": ["narrow a_spec/b_spec (src, dst, rel_type)"]})
            );
        } else {
            assert_eq!(e["rows"], json!([]));
            assert_eq!(e["rows_total"], 0);
            assert_eq!(
                digest_of(&e),
                "fb970bb45afd0873400ffd0cf25ad75710d3ef6ba945806b247f2fe75ecbd60b"
            );
        }
    }
}

fn tv23() -> (tempfile::TempDir, tgms_engine::Store) {
    ingest(&[
        ("a", "b", 10),
        ("b", "c", 10),
        ("c", "a", 20),
        ("a", "c", 20),
        ("b", "a", 30),
    ])
}

#[test]
fn tv23_catalogue_and_tie_modes() {
    let (_d, s) = tv23();
    let all = |delta: i64, tie: &str| {
        motif(
            &s,
            "count_temporal_motifs",
            json!({"motif": "all", "delta": delta, "tie_mode": tie}),
        )
    };
    let o = all(20, "ordered");
    assert_eq!(o["count"], 10);
    assert_eq!(o["n_events_in_window"], 5);
    for (k, v) in o["counts"].as_object().unwrap() {
        let want = match k.as_str() {
            "M_2_3" => 2,
            "M_1_3" | "M_2_2" | "M_2_4" | "M_2_6" | "M_3_2" | "M_3_3" | "M_4_2" | "M_5_6" => 1,
            _ => 0,
        };
        assert_eq!(v, want, "{k}");
    }
    assert_eq!(o["counts"].as_object().unwrap().len(), 36);
    assert_eq!(
        digest_of(&o),
        "d509d96ee5f811151a7339d16db2e2d9f6e55afc9697ad7600b861656724df16"
    );
    let st = all(20, "strict");
    assert_eq!(
        canon(&payload(&st)),
        r#"{"count":4,"counts":{"M_1_1":0,"M_1_2":0,"M_1_3":1,"M_1_4":0,"M_1_5":0,"M_1_6":0,"M_2_1":0,"M_2_2":0,"M_2_3":1,"M_2_4":0,"M_2_5":0,"M_2_6":0,"M_3_1":0,"M_3_2":1,"M_3_3":0,"M_3_4":0,"M_3_5":0,"M_3_6":0,"M_4_1":0,"M_4_2":1,"M_4_3":0,"M_4_4":0,"M_4_5":0,"M_4_6":0,"M_5_1":0,"M_5_2":0,"M_5_3":0,"M_5_4":0,"M_5_5":0,"M_5_6":0,"M_6_1":0,"M_6_2":0,"M_6_3":0,"M_6_4":0,"M_6_5":0,"M_6_6":0},"n_events_in_window":5,"truncated":false}"#
    );
    assert_eq!(
        digest_of(&st),
        "e7e74c430019f340dca3e3406c8aac06b8f04188f4bae5b309fce9f0f1ad9f11"
    );
    let o10 = all(10, "ordered");
    assert_eq!(o10["count"], 5);
    assert_eq!(
        digest_of(&o10),
        "1935c9832fae7bb894a0e0596de711a5d9e9aff71bc3d273e0a97e8e5abfd099"
    );
    let s10 = all(10, "strict");
    assert_eq!(s10["count"], 0);
    assert_eq!(
        digest_of(&s10),
        "51b863f9bba919086e674e2381f226d7224d9ef8be13a279174f0b314668f5a6"
    );
    let one = |m: &str, tie: &str| {
        motif(
            &s,
            "count_temporal_motifs",
            json!({"motif": m, "delta": 20, "tie_mode": tie}),
        )
    };
    assert_eq!(one("M_2_3", "ordered")["count"], 2);
    assert_eq!(one("M_2_3", "strict")["count"], 1);
    for m in ["M_2_4", "M_triangle_cyclic"] {
        let o = one(m, "ordered");
        assert_eq!(o["count"], 1);
        assert_eq!(
            digest_of(&o),
            "c809b33d00291495ae71462a0e6f82454fab6b99e177e1a639130a6fa4c0e02b"
        );
        let st = one(m, "strict");
        assert_eq!(st["count"], 0);
        assert_eq!(
            digest_of(&st),
            "5f4a810f78153ff378a718a94fff7bf0e05ca0ffd4d9e9d96fa41aa443ba1a2c"
        );
    }
    for m in ["M_2node_pingpong", "M_5_1"] {
        for tie in ["ordered", "strict"] {
            assert_eq!(one(m, tie)["count"], 0);
        }
    }
    let f = motif(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "all", "delta": 20}),
    );
    assert_eq!(f["error"], "E_SCHEMA");
    assert_eq!(f["details"]["path"], json!(["motif"]));
    let f = motif(
        &s,
        "find_temporal_motif_instances",
        json!({"motif": "M_2_3", "delta": 20}),
    );
    assert_eq!(f["rows_total"], 2);
    let triple = |i: usize| -> Vec<(String, String, i64)> {
        f["rows"][i]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["src"].as_str().unwrap().to_string(),
                    e["dst"].as_str().unwrap().to_string(),
                    e["t"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let t = |a: &str, b: &str, x: i64| (a.to_string(), b.to_string(), x);
    assert_eq!(
        triple(0),
        vec![t("a", "b", 10), t("b", "c", 10), t("a", "c", 20)]
    );
    assert_eq!(
        triple(1),
        vec![t("b", "c", 10), t("c", "a", 20), t("b", "a", 30)]
    );
    assert_eq!(
        digest_of(&f),
        "7b2cce2267e80a5c339892fe175dbd5cd6c32d3a4d83236d18dba64e779c1792"
    );
}
