//! The operator vectors of the spec's `test-vectors.md` that concern this crate's operators and
//! framework: TV2 (entity_history, version_history), TV8/TV9 (snapshot_subgraph,
//! diff_snapshots), TV10 (refusals), TV17 (canonical JSON, round9, certificates), TV19
//! (state_at, version_history on the incident store).

mod common;
use common::*;
use serde_json::{json, Value};
use tgms_operators::json::set_digest;

fn digest_of(env: &Value) -> &str {
    env["result_digest"]
        .as_str()
        .unwrap_or_else(|| panic!("not an envelope: {env}"))
}

#[test]
fn tv2_entity_history_and_version_history() {
    let (_d, s) = tv2();
    assert_eq!(
        s.digest(),
        "803b8b1a2ca29c98c36d429e267e0a981db084142844d6bcbf3ca1992e487dd7"
    );
    let e = call(&s, "entity_history", json!({"uid": "a"}));
    assert_eq!(
        canon(&payload(&e)),
        r#"{"cursor":null,"rows":[{"ingestion_lag_us":2,"label":"N","origin":"correct","props":{"p":1},"provenance_ref":null,"reason":"fix p over [40,60)","source":"ingest","tt_e":4611686018427387904,"tt_s":2,"uid":"a","vid":"4938f8be20ef59114636f8c0","vt_e":40,"vt_s":0},{"ingestion_lag_us":-38,"label":"N","origin":"correct","props":{"p":2},"provenance_ref":null,"reason":"fix p over [40,60)","source":"ingest","tt_e":4611686018427387904,"tt_s":2,"uid":"a","vid":"ab1515355119df62299a1324","vt_e":60,"vt_s":40},{"ingestion_lag_us":-58,"label":"N","origin":"correct","props":{"p":1},"provenance_ref":null,"reason":"fix p over [40,60)","source":"ingest","tt_e":4611686018427387904,"tt_s":2,"uid":"a","vid":"fd6b4016ca66d7b71fb87cab","vt_e":100,"vt_s":60}],"rows_total":3,"set_digest":"19ad0031987a17c5b130d62c76edd29b1867fab800c24da157dc8aeb9b2d0c3f","truncated":false}"#
    );
    assert_eq!(
        digest_of(&e),
        "e54ee745602bd1948bbb73b164ba7ce3ec34b48e2c17db8948ece86a010eddf2"
    );
    assert_eq!(e["op"], "entity_history");
    assert_eq!(
        e["args_echo"],
        json!({"uid": "a", "as_of_tt": 4611686018427387904i64, "include_edges": false, "limit": 100, "cursor": null})
    );
    // The extent is the edge extent (data-model §11): a node-only store has none.
    assert_eq!(e["dataset_extent"], json!({"vt_min": null, "vt_max": null}));

    let e = call(&s, "entity_history", json!({"uid": "a", "as_of_tt": 1}));
    assert_eq!(
        canon(&payload(&e)),
        r#"{"cursor":null,"rows":[{"ingestion_lag_us":1,"label":"N","origin":"assert","props":{"p":1},"provenance_ref":null,"reason":null,"source":"ingest","tt_e":4611686018427387904,"tt_s":1,"uid":"a","vid":"6a8bfaa2db98618ce6c976c4","vt_e":100,"vt_s":0}],"rows_total":1,"set_digest":"2bf56960dce4b97fc79df93c664496db22f84ff152daaeabd2d5e2204a14a23b","truncated":false}"#
    );
    assert_eq!(
        digest_of(&e),
        "14cb04213e4871e1ed6a38a7ebe069d13d25acef669a7a00fa2d67540a1dd950"
    );

    let w = json!({"t_a": 0, "t_b": 1000});
    let v = call(
        &s,
        "version_history",
        json!({"kind": "node", "window": w, "belief": "superseded"}),
    );
    assert_eq!(
        canon(&payload(&v)),
        r#"{"cursor":null,"rows":[{"close_reason":"fix p over [40,60)","closed_by":"correct","ingestion_lag_us":1,"label":"N","origin":"assert","reason":null,"tt_e":2,"tt_s":1,"uid":"a","vid":"6a8bfaa2db98618ce6c976c4","vt_e":100,"vt_s":0}],"rows_total":1,"set_digest":"2bf56960dce4b97fc79df93c664496db22f84ff152daaeabd2d5e2204a14a23b","truncated":false}"#
    );
    assert_eq!(
        digest_of(&v),
        "a5159721f12c9b49b6f6d29ddd52aa8717a675149b6cc3bc0ef541b4bd50c9b9"
    );
    let v = call(
        &s,
        "version_history",
        json!({"kind": "node", "window": w, "belief": "all"}),
    );
    let vids: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["vid"].as_str().unwrap())
        .collect();
    assert_eq!(
        vids,
        [
            "6a8bfaa2db98618ce6c976c4",
            "4938f8be20ef59114636f8c0",
            "ab1515355119df62299a1324",
            "fd6b4016ca66d7b71fb87cab"
        ]
    );
    assert_eq!(v["rows"][1]["closed_by"], Value::Null);
    assert_eq!(
        digest_of(&v),
        "143c9a90b1dd58ce1b6cd766cf0c8943acb7feb4ceee4dc784fadb4528c9864c"
    );
    let v = call(
        &s,
        "version_history",
        json!({"kind": "node", "window": w, "belief": "superseded", "as_of_tt": 1}),
    );
    assert_eq!(v["rows"], json!([]));
    assert_eq!(v["rows_total"], 0);
    // D-O12: {"uid": "a"} is one node's belief log, same rows as the TGMS call restricted to it.
    let u = call(&s, "version_history", json!({"uid": "a", "belief": "all"}));
    assert_eq!(
        u["rows"],
        call(&s, "version_history", json!({"belief": "all"}))["rows"]
    );
}

#[test]
fn tv8_snapshot_subgraph_interval_edges() {
    let (_d, s) = tv8();
    assert_eq!(
        s.digest(),
        "c9797bc5d3488fc94eff81f6721d17a8c3b286f2effd7e3c24d16306de5d6572"
    );
    let e = call(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a"], "hops": 2, "t_valid": 30}),
    );
    assert_eq!(e["rows_total"], 3);
    assert_eq!(
        e["nodes"],
        json!([{"uid":"a","label":"Node","hop":0},{"uid":"b","label":"Node","hop":1},{"uid":"c","label":"Node","hop":1}])
    );
    assert_eq!(
        digest_of(&e),
        "2742de9addcc6c78ba53c6e2b42b4a10985aa2cf8086f49ecfce81605e6e638a"
    );
}

#[test]
fn tv9_snapshot_and_diff() {
    let (_d, s) = tv9();
    let e = call(
        &s,
        "snapshot_subgraph",
        json!({"seeds": ["a"], "hops": 1, "t_valid": 40}),
    );
    assert_eq!(
        e["rows"],
        json!([{"dst":"b","eid":"69217de0738c26302db43351","rel_type":"M","src":"a","vid":"f05d783fc76e47b38c2c61ed","vt_e":41,"vt_s":40}])
    );
    assert_eq!(
        e["nodes"],
        json!([{"uid":"a","label":"Node","hop":0},{"uid":"b","label":"Node","hop":1}])
    );
    assert_eq!(
        digest_of(&e),
        "16d7cc37f4e585a78a60b7d0d80364b98682550b66b247ef0c7c5d14d3ee0285"
    );
    let d = call(&s, "diff_snapshots", json!({"t1": 10, "t2": 40}));
    assert_eq!(d["nodes_added"], json!(["c"]));
    assert_eq!(d["edges_added"][0]["eid"], "69217de0738c26302db43351");
    assert_eq!(d["edges_removed"][0]["eid"], "525d5e8ec7d4615ae428838b");
    assert_eq!(d["props_changed_total"], 0);
    assert_eq!(
        digest_of(&d),
        "8913d289438ff3c7bd23e2efda4ec1cae33adb90b2050752203f7137cb8eb5d0"
    );
}

#[test]
fn tv10_refusals_of_these_operators() {
    let (_d, s) = incident();
    assert_eq!(
        canon(&call(&s, "state_at", json!({"uid": "checkout-api"}))),
        r#"{"details":{"path":[]},"error":"E_SCHEMA","message":"invalid args for state_at: 'at' is a required property"}"#
    );
    assert_eq!(
        canon(&call(&s, "entity_history", json!({"uid": "nobody"}))),
        r#"{"details":{"uid":"nobody"},"error":"E_NOT_FOUND","message":"unknown uid: nobody"}"#
    );
    let u = call(&s, "nope", json!({}));
    assert_eq!(u["error"], "E_INVALID_ARG");
    assert_eq!(u["message"], "unknown operator: nope");
    let known: Vec<&str> = u["details"]["known"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let mut sorted = known.clone();
    sorted.sort();
    assert_eq!(known, sorted);
    assert!(known.contains(&"state_at") && known.contains(&"diff_snapshots"));
}

#[test]
fn tv17_certificates() {
    assert_eq!(
        set_digest(&[json!("b"), json!("a")]),
        "14bdec8c77f9feebc3b047fa42657bac4babc6d05439548a956ee1a9edf35eab"
    );
    assert_eq!(
        set_digest(&[json!("a"), json!("b")]),
        "14bdec8c77f9feebc3b047fa42657bac4babc6d05439548a956ee1a9edf35eab"
    );
    assert_eq!(
        set_digest(&[]),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        set_digest(&[json!(["x", 1])]),
        "b7fd70f15a8775775ae70bf58ec33ceb078080009ea9f3533de4c46d26d6472e"
    );
    let v = tgms_engine::canon::parse(r#"{"b":1,"a":[true,null,"é\n"]}"#).unwrap();
    assert_eq!(canon(&v), "{\"a\":[true,null,\"é\\n\"],\"b\":1}");
}

#[test]
fn tv19_state_at_on_the_incident_store() {
    let (_d, s) = incident();
    assert_eq!(
        s.digest(),
        "eb6d5f92c5aa923d7855a13b1ec9845cb55fac4af14aa610d94c571a875ec8ca"
    );
    let at = 1773561600000000i64;
    let e = call(&s, "state_at", json!({"uid": "checkout-api", "at": at}));
    let vids: Vec<&str> = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["vid"].as_str().unwrap())
        .collect();
    assert_eq!(
        vids,
        [
            "45f7fcf8756d4a2495a67d68",
            "dc1cfac7ddfa224c95964e04",
            "93cf1fa5e75a5a572b62a58f"
        ]
    );
    assert_eq!(e["later_facts"][0]["vid"], "a7ef7c9d918776ae484cb4c7");
    assert_eq!(e["later_facts"][0]["applicable"], false);
    assert_eq!(e["node"]["vid"], "26a4c788f024d87fa3a882ca");
    assert_eq!(
        e["set_digest"],
        "b521ea930442e54c461c1e15977a74dc571994a00bede7eeb927ca58240c51a1"
    );
    assert_eq!(
        digest_of(&e),
        "0d3d17a4dec192869f9348ae348bbe29daf04046aeda645c11deecb7e0582e5e"
    );

    let e = call(
        &s,
        "state_at",
        json!({"uid": "checkout-api", "at": at, "rel_type": "HAS_INSTANCE_TYPE"}),
    );
    assert_eq!(
        canon(&payload(&e)),
        r#"{"at":1773561600000000,"cursor":null,"later_facts":[{"applicable":false,"disc":"","dst":"instance:t3.large","eid":"e6bb41686297da8a7fcbca55","ingestion_lag_us":300000000,"origin":"assert","props":{},"reason":"CHG-2320: roll back checkout-api to t3.large after INC-4711","rel_type":"HAS_INSTANCE_TYPE","src":"checkout-api","tt_e":4611686018427387904,"tt_s":1773673500000000,"vid":"a7ef7c9d918776ae484cb4c7","vt_e":4611686018427387904,"vt_s":1773673200000000}],"later_facts_set_digest":"88a2e88e020bce69442dfa5189cd770bc97b0f965698ce2a9f24ed4a037fa956","later_facts_total":1,"node":{"label":"Service","origin":"assert","props":{"name":"Checkout API","tier":"critical"},"reason":"initial CMDB import","vid":"26a4c788f024d87fa3a882ca","vt_e":4611686018427387904,"vt_s":1761955200000000},"rows":[{"applicable":true,"disc":"","dst":"instance:m5.xlarge","eid":"2b7a9213960326ec030cf3da","ingestion_lag_us":520500000000,"origin":"retract","props":{"change":"CHG-2291","evidence":"deploy-log"},"reason":"CHG-2320: roll back checkout-api to t3.large after INC-4711","rel_type":"HAS_INSTANCE_TYPE","src":"checkout-api","tt_e":4611686018427387904,"tt_s":1773673500000000,"vid":"93cf1fa5e75a5a572b62a58f","vt_e":1773673200000000,"vt_s":1773153000000000}],"rows_total":1,"set_digest":"ad518a3d100712cd39900b637280e4e53861e7122eb60c3e1520c4bf796ff6f7","truncated":false}"#
    );
    assert_eq!(
        digest_of(&e),
        "0f63596f41841bb1b0b641bbe26fae4ba5f096aeedd97ed8dc020a7c921819db"
    );

    let e = call(
        &s,
        "state_at",
        json!({"uid": "checkout-api", "at": at, "as_of_tt": 1773562320000000i64}),
    );
    let m5 = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["dst"] == "instance:m5.xlarge")
        .unwrap();
    assert_eq!(m5["vid"], "d8265b55b64868981b89703f");
    assert_eq!(m5["vt_s"], 1773219600000000i64);
    assert_eq!(e["later_facts_total"], 0);
    assert_eq!(
        digest_of(&e),
        "4b9f0189e039d04199613cf288e6fffc7ebbabe6d94de5050e3779c3675b524e"
    );

    let v = call(
        &s,
        "version_history",
        json!({"kind": "edge", "window": {"t_a": 1761955200000000i64, "t_b": 1775001600000000i64}, "belief": "all", "rel_types": ["HAS_INSTANCE_TYPE"]}),
    );
    let vids: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["vid"].as_str().unwrap())
        .collect();
    assert_eq!(
        vids,
        [
            "f03bf63589f7dc5f58977e33",
            "b4080c9b669474a41bef9e0c",
            "d8265b55b64868981b89703f",
            "1bfcec3aef1a894377490bff",
            "5de91e0c2cde7bcbc36bbe88",
            "93cf1fa5e75a5a572b62a58f",
            "a7ef7c9d918776ae484cb4c7"
        ]
    );
}

#[test]
fn floats_in_payloads_are_round9_canonicalized() {
    // plans-and-claims §1.3: every float of the payload, at any depth (props included).
    let (_d, mut s) = new_store();
    s.write_at(1, ops(vec![json!({"op":"assert_node","uid":"f","label":"N",
        "props":{"x": 0.1234567891, "y": 2.0, "z": 0.0029296875, "n": [1e-10, 3]},"vt_s":0,"vt_e":10})])).unwrap();
    let e = call(&s, "entity_history", json!({"uid": "f"}));
    assert_eq!(
        canon(&e["rows"][0]["props"]),
        r#"{"n":[0.0,3],"x":0.123456789,"y":2.0,"z":0.002929688}"#
    );
    let e = call(&s, "state_at", json!({"uid": "f", "at": 5}));
    assert_eq!(
        canon(&e["node"]["props"]),
        r#"{"n":[0.0,3],"x":0.123456789,"y":2.0,"z":0.002929688}"#
    );
    // The digest covers the canonicalized payload.
    assert_eq!(e["result_digest"], tgms_engine::canon::digest(&payload(&e)));
}

/// TV9: graph_metric_timeseries, burst_detection, neighborhood_evolution and
/// resolve_entities on the 6-event store; TV10: the bucket-cap refusal.
#[test]
fn tv9_series_bursts_neighbourhood_resolve() {
    let (_d, s) = tv9();
    let w = json!({"t_a": 0, "t_b": 50});
    let table = [
        (
            "edge_event_count",
            json!([1, 2, 3]),
            "ab6543a730f0d7e6670b509808bd41009977eda6b4f6582fd4332737e8bc739e",
        ),
        (
            "node_count",
            json!([0, 3, 3]),
            "564e35694f9bf5d402cdba9bcdd78c331d56d5e14d800b69b259446347893039",
        ),
        (
            "new_node_rate",
            json!([2, 1, 0]),
            "5b375ffa8e3573788a296638991a7fbbd7e73d35affbac282bab97798dd79bdd",
        ),
        (
            "reciprocity",
            json!([0.0, 0.0, 1.0]),
            "02ffd6fdb1d94b8d19d032a05a7e1c66cd437e98cbac3e9eba23cf7a669db4e5",
        ),
        (
            "mean_out_degree",
            json!([0.0, 0.333333333, 0.333333333]),
            "1a8585769fd5dc48bcb811a6f2b726eb0810c80a9366c5518b5bcbad14f91a27",
        ),
        (
            "active_edge_count",
            json!([0, 1, 1]),
            "04f83de58d3453c00528180097300f1cd0a2b152efc8e9a40070c94175ba8ab1",
        ),
    ];
    for (metric, values, digest) in table {
        let e = call(
            &s,
            "graph_metric_timeseries",
            json!({"metric": metric, "window": w, "stride": 20}),
        );
        let got: Vec<Value> = e["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("{metric}: {e}"))
            .iter()
            .map(|r| r["value"].clone())
            .collect();
        assert_eq!(canon(&json!(got)), canon(&values), "{metric}");
        assert_eq!(e["rows"][2]["t_a"], 40);
        assert_eq!(e["rows"][2]["t_b"], 50);
        assert_eq!(e["n_buckets"], 3);
        assert_eq!(digest_of(&e), digest, "{metric}");
    }

    let b = call(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": 5,
            "method": "zscore", "params": {"w": 3, "z": 1.0}}),
    );
    assert_eq!(
        canon(&payload(&b)),
        r#"{"cursor":null,"n_buckets":10,"rows":[{"score":1000000000.0,"t_a":10,"t_b":15,"value":1.0},{"score":1.414213562,"t_a":20,"t_b":25,"value":1.0},{"score":1.414213562,"t_a":25,"t_b":30,"value":0.0},{"score":1.414213562,"t_a":30,"t_b":35,"value":1.0},{"score":1.414213562,"t_a":35,"t_b":40,"value":0.0},{"score":5.656854249,"t_a":40,"t_b":45,"value":3.0},{"score":1.069044968,"t_a":45,"t_b":50,"value":0.0}],"rows_total":7,"set_digest":"688fe71786c1a8adaa01c48b7d0cb57a218f1a83aafda862d8e33f30de1a0f43","truncated":false}"#
    );
    assert_eq!(
        digest_of(&b),
        "22b50b40a9546dbf5ccab78d3c4f64a7d088d6306777e7aa90e04378639ad0be"
    );
    let mut proj = payload(&b);
    proj.as_object_mut().unwrap().remove("set_digest");
    assert_eq!(
        tgms_engine::canon::digest(&proj),
        "db29ed2bdab968999a936e2f18734a46ac3dff41d19029aa312ca86956a0fb7e"
    );
    let r = call(
        &s,
        "burst_detection",
        json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": 5, "method": "ratio"}),
    );
    let flagged: Vec<(i64, i64, f64)> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["t_a"].as_i64().unwrap(),
                x["t_b"].as_i64().unwrap(),
                x["score"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        flagged,
        vec![(10, 15, 1e9), (20, 25, 1e9), (30, 35, 1e9), (40, 45, 1e9)]
    );
    assert_eq!(
        digest_of(&r),
        "47b49bae0d5c2cf7a455b80ddde899d4cd40958ed5f85e190fff309ccb132784"
    );

    let n = call(
        &s,
        "neighborhood_evolution",
        json!({"uid": "a", "t1": 10, "t2": 41, "stride": 10}),
    );
    assert_eq!(n["neighbors_gained"], json!([]));
    assert_eq!(n["neighbors_lost"], json!([]));
    assert_eq!(
        n["degree_series"],
        json!([{"t": 10, "degree": 1}, {"t": 20, "degree": 0}, {"t": 30, "degree": 1}, {"t": 40, "degree": 1}])
    );
    assert_eq!(n["stride"], 10);
    assert_eq!(
        digest_of(&n),
        "6709fc7b8d31cfbf50b2b20d2d7f450e7388272d1dc0ed955d1d6622e27cb03c"
    );

    let q = call(&s, "resolve_entities", json!({"query": "A"}));
    assert_eq!(
        q["rows"],
        json!([{"uid": "a", "label": "Node", "name": null, "match": 1}])
    );
    assert_eq!(
        digest_of(&q),
        "b9cd5f98e6334607abb47e235d8133b625f5dba6cebd927f226a1d91cb38c08f"
    );
    // The TGMS projection of edge_event_count and mean_out_degree (set_digest removed).
    for (metric, want) in [
        (
            "edge_event_count",
            "2b7affec095207cd180f2de61616f4e1a21d76b5321cf630a1525940b7bf856b",
        ),
        (
            "mean_out_degree",
            "f03910f90cb069a647426ccec1d5647ca3d95f5f8ca69de15674b52179b592ef",
        ),
    ] {
        let e = call(
            &s,
            "graph_metric_timeseries",
            json!({"metric": metric, "window": w, "stride": 20}),
        );
        let mut p = payload(&e);
        p.as_object_mut().unwrap().remove("set_digest");
        assert_eq!(tgms_engine::canon::digest(&p), want, "{metric}");
    }
    // TV10: the bucket cap (checked in the kernel).
    assert_eq!(
        canon(&call(
            &s,
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": {"t_a": 0, "t_b": 100000}, "stride": 1})
        )),
        r#"{"details":{},"error":"E_LIMIT","message":"bucket count 100000 exceeds cap 2000; use stride >= 50 for this window"}"#
    );
}

/// TV8 (D-W3): asserted edges create node versions, so `c` resolves.
#[test]
fn tv8_resolve_entities_finds_edge_created_nodes() {
    let (_d, s) = tv8();
    let q = call(&s, "resolve_entities", json!({"query": "c"}));
    assert_eq!(
        q["rows"],
        json!([{"uid": "c", "label": "Node", "name": null, "match": 0}])
    );
}

// ---------------------------------------------------------------------------------------
// TV11 (compute) and TV15 (aggregate_events).

/// The canonical payload of one `compute` call (or its error payload).
fn compute(args: Value) -> String {
    let (_d, s) = new_store();
    let env = call(&s, "compute", args);
    if env.get("error").is_some() {
        canon(&env)
    } else {
        canon(&payload(&env))
    }
}

fn cvalue(args: Value) -> String {
    let (_d, s) = new_store();
    let env = call(&s, "compute", args.clone());
    assert!(env.get("error").is_none(), "{args} → {env}");
    canon(&env["value"])
}

fn crows(args: Value) -> Value {
    let (_d, s) = new_store();
    let env = call(&s, "compute", args.clone());
    assert!(env.get("error").is_none(), "{args} → {env}");
    env["rows"].clone()
}

#[test]
fn tv11_compute_arithmetic() {
    let p62 = 4611686018427387904i64;
    let mean = |v: Value| cvalue(json!({"fn": "mean", "input": v}));
    assert_eq!(mean(json!([1, 2, 3])), "2");
    assert_eq!(mean(json!([1, 2])), "1.5");
    assert_eq!(mean(json!([-1, -2])), "-1.5");
    assert_eq!(mean(json!([1.5, 2.5])), "2.0");
    assert_eq!(mean(json!([1, 2.0])), "1.5");
    assert_eq!(mean(json!([p62, p62])), "4611686018427387904");
    assert_eq!(mean(json!([p62, p62 + 1])), "4.611686018427388e+18");
    let median = |v: Value| cvalue(json!({"fn": "median", "input": v}));
    assert_eq!(median(json!([3, 1, 2])), "2");
    assert_eq!(median(json!([1, 2, 3, 4])), "2.5");
    assert_eq!(median(json!([2, 2])), "2");
    assert_eq!(median(json!([-5, -1])), "-3");
    assert_eq!(median(json!([1.0, 2.0, 3.0])), "2.0");
    let two = |f: &str, x: Value, y: Value| cvalue(json!({"fn": f, "x": x, "y": y}));
    assert_eq!(two("ratio", json!(6), json!(3)), "2");
    assert_eq!(two("ratio", json!(1), json!(2)), "0.5");
    assert_eq!(two("ratio", json!(-1), json!(2)), "-0.5");
    assert_eq!(two("ratio", json!(1.0), json!(4)), "0.25");
    assert_eq!(two("ratio", json!(7), json!(2)), "3.5");
    assert_eq!(two("diff", json!(5), json!(3)), "2");
    assert_eq!(two("diff", json!(2.5), json!(1)), "1.5");
    assert_eq!(two("percent", json!(1), json!(4)), "25");
    assert_eq!(two("percent", json!(1), json!(3)), "33.333333333");
    assert_eq!(two("percent", json!(1), json!(8)), "12.5");
    assert_eq!(
        compute(json!({"fn": "ratio", "x": 5, "y": 0})),
        r#"{"details":{},"error":"E_INVALID_ARG","message":"division by zero"}"#
    );
    let q = crows(
        json!({"fn": "derive", "input": [{"a": 7, "b": 2}, {"a": 6, "b": 3}], "field": "a", "field2": "b", "op": "div", "into": "q"}),
    );
    assert_eq!(canon(&q), r#"[{"a":7,"b":2,"q":3.5},{"a":6,"b":3,"q":2}]"#);
    let cat = |l: Value, r: Value| {
        crows(json!({"fn": "derive", "input": [{"l": l}], "field": "l", "value": r, "op": "concat", "into": "c"}))[0]["c"].clone()
    };
    assert_eq!(cat(json!(3), json!("u0")), "3|u0");
    assert_eq!(cat(json!(true), json!("x")), "True|x");
    assert_eq!(cat(json!(null), json!("x")), "None|x");
    assert_eq!(
        cat(json!([1, {"b": 2.0, "a": null}]), json!(1.5)),
        r#"[1,{"a":null,"b":2.0}]|1.5"#
    );
    let input = json!([{"src": "u0", "count": 5}, {"src": "u1", "count": 2}]);
    let other = json!([{"dst": "u0", "count": 3}, {"dst": "u9", "count": 7}]);
    assert_eq!(
        canon(&crows(
            json!({"fn": "join", "input": input, "other": other, "on": "src", "other_on": "dst"})
        )),
        r#"[{"count":5,"r_count":3,"r_dst":"u0","src":"u0"}]"#
    );
    assert_eq!(
        canon(&crows(
            json!({"fn": "join", "input": input, "other": other, "on": "src", "other_on": "dst", "how": "left", "fill": 0})
        )),
        r#"[{"count":5,"r_count":3,"r_dst":"u0","src":"u0"},{"count":2,"r_count":0,"r_dst":0,"src":"u1"}]"#
    );
    let rows25: Vec<Value> = (0..25).map(|i| json!({"v": i})).collect();
    assert_eq!(
        crows(json!({"fn": "topk", "input": rows25, "field": "v", "pct": 28}))
            .as_array()
            .unwrap()
            .len(),
        7
    );
    let tens: Vec<Value> = [10, 20, 30, 40, 50]
        .iter()
        .map(|v| json!({"v": v}))
        .collect();
    let vs = |args: Value| -> Vec<i64> {
        crows(args)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["v"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(
        vs(json!({"fn": "topk", "input": tens, "field": "v", "pct": 50})),
        [50, 40, 30]
    );
    // The spec's vector reads the bottom rows in ranking order ([20, 10]); since issue 21 they
    // read ascending (docs/plans-changes.md). Membership is unchanged.
    assert_eq!(
        vs(json!({"fn": "topk", "input": tens, "field": "v", "pct": 50, "side": "bottom"})),
        [10, 20]
    );
    assert_eq!(
        vs(json!({"fn": "topk", "input": tens, "field": "v", "k": 2, "side": "bottom"})),
        [10, 20]
    );
    let nines: Vec<Value> = [9, 5, 5, 5, 1].iter().map(|v| json!({"v": v})).collect();
    assert_eq!(
        vs(json!({"fn": "topk", "input": nines, "field": "v", "pct": 40})),
        [9, 5]
    );
    assert_eq!(
        vs(json!({"fn": "topk", "input": nines, "field": "v", "pct": 60, "side": "bottom"})),
        [1, 5, 5]
    );
    let t = crows(json!({"fn": "topk", "field": "n", "k": 4, "input": [
        {"uid": "u1", "n": true}, {"uid": "u0", "n": 1}, {"uid": "u2", "n": "9"}, {"uid": "u3", "n": 0.5}]}));
    let uids: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, ["u0", "u1", "u3", "u2"]);
    let (_d, s) = new_store();
    let u = call(
        &s,
        "compute",
        json!({"fn": "union", "input": [3, "a", 1.5], "other": [true, null, "b"]}),
    );
    assert_eq!(canon(&u["rows"]), r#"[null,true,1.5,3,"a","b"]"#);
    assert_eq!(
        digest_of(&u),
        "ff7d4ba7cac961e8defda83f6a8811f6dfd994436233caf140f9c3b33428c98a"
    );
    assert_eq!(
        canon(&crows(
            json!({"fn": "union", "input": [1], "other": [true]})
        )),
        "[true,1]"
    );
    let g = crows(
        json!({"fn": "count", "group_by": "g", "input": [{"g": "b"}, {"g": "a"}, {"g": 1}, {"g": 1.0}]}),
    );
    assert_eq!(
        canon(&g),
        r#"[{"count":2,"g":1},{"count":1,"g":"a"},{"count":1,"g":"b"}]"#
    );
    assert_eq!(
        compute(
            json!({"fn": "filter", "field": "v", "cmp": "gt", "value": 0, "input": [{"v": null}, {"v": 1}]})
        ),
        r#"{"details":{},"error":"E_INVALID_ARG","message":"cannot compare a null; use is_null/not_null"}"#
    );
    let allen = [
        ([0, 2], [5, 9], "before"),
        ([0, 5], [5, 9], "meets"),
        ([0, 6], [5, 9], "overlaps"),
        ([5, 9], [0, 6], "overlapped_by"),
        ([6, 8], [5, 9], "during"),
        ([5, 9], [6, 8], "contains"),
        ([5, 7], [5, 9], "starts"),
        ([5, 9], [5, 7], "started_by"),
        ([7, 9], [5, 9], "finishes"),
        ([5, 9], [7, 9], "finished_by"),
        ([0, 5], [0, 5], "equals"),
        ([5, 9], [0, 2], "after"),
        ([5, 9], [0, 5], "met_by"),
    ];
    for (a, b, rel) in allen {
        assert_eq!(
            cvalue(
                json!({"fn": "interval_relation", "a": {"start": a[0], "end": a[1]}, "b": {"start": b[0], "end": b[1]}})
            ),
            format!("\"{rel}\""),
            "{a:?} {b:?}"
        );
    }
    let c = call(&s, "compute", json!({"fn": "count", "input": [1, 2, 3]}));
    assert_eq!(canon(&payload(&c)), r#"{"truncated":false,"value":3}"#);
    assert_eq!(
        digest_of(&c),
        "e7981ec31eef8f3c5494c3d5cf68bda7187cec9ad3f99363f9adaef47bbf317f"
    );
    let c = call(&s, "compute", json!({"fn": "percent", "x": 1, "y": 3}));
    assert_eq!(
        canon(&payload(&c)),
        r#"{"truncated":false,"value":33.333333333}"#
    );
    assert_eq!(
        digest_of(&c),
        "da010381da92a5a118135586ceb0bd929747a94da882a1757f88b6270060da7e"
    );
}

fn events_store(events: Value) -> (tempfile::TempDir, tgms_engine::Store) {
    let (d, mut s) = new_store();
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    (d, s)
}

#[test]
fn tv15_aggregate_events_contract_cases() {
    let ev = |a: &str, b: &str, t: i64| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t});
    let pair = json!([{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}]);
    let w = json!({"t_a": 0, "t_b": 100});
    let (_d, s) = events_store(json!([ev("b", "z", 1), ev("z", "a", 2), ev("a", "z", 3)]));
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pair, "aggregates": [{"agg": "count"}], "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(
        canon(&e["rows"]),
        r#"[{"count":2,"dst":"z","src":"a"},{"count":1,"dst":"z","src":"b"}]"#
    );
    assert_eq!(
        digest_of(&e),
        "479ff35b9af7d836cced04d5ab2c0260898aa005da19dd66a5b135ecee1dd4ad"
    );
    let (_d, s) = events_store(json!([ev("a", "z", 1), ev("z", "a", 2)]));
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": pair, "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "src"}], "window": w, "pair_mode": "undirected"}),
    );
    assert_eq!(
        canon(&e["rows"]),
        r#"[{"count":2,"distinct_src":2,"dst":"z","src":"a"}]"#
    );
    assert_eq!(
        digest_of(&e),
        "e97d54426940bc751297b703fe45bd57fa76484ddc3fbff23858028c8fc41f87"
    );
    let mut e1 = ev("a", "b", 1);
    e1["props"] = json!({"w": 1});
    let mut e2 = ev("c", "d", 2);
    e2["props"] = json!({"w": "x"});
    let mut e3 = ev("c", "d", 3);
    e3["props"] = json!({});
    let (_d, s) = events_store(json!([e1, e2, e3]));
    let e = call(
        &s,
        "aggregate_events",
        json!({"group_by": [], "aggregates": [{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "w"}], "window": w,
            "prop_filter": {"prop": "w", "cmp": "ge", "value": 0}, "endpoint_filter": {"role": "src", "uids": ["a"]}}),
    );
    assert_eq!(canon(&e["rows"]), r#"[{"count":1,"mean_prop_w":1}]"#);
    assert_eq!(canon(&e["prop_coercion"]), r#"{"w":2}"#);
    assert_eq!(
        digest_of(&e),
        "7c000c19d399d58b7c225e8dd6b4dbfc0a8738748bf688b75ed652069c1fa3fe"
    );
}
