//! The generated artifacts of the registry (`operators.md` §2): a snapshot of the Anthropic
//! tool list (`golden/tools_anthropic.json`; regenerate with `TGMS_UPDATE_GOLDEN=1` and
//! review the diff), the three tool shapes agreeing with each other, the registry being
//! well-formed, and the output field lists of §26.1.

use serde_json::Value;
use tgms_operators::contract::Contract;
use tgms_operators::registry::{registry, Cut};
use tgms_operators::tools::{self, ToolFormat};

fn canon(v: &Value) -> String {
    tgms_engine::canon::to_string(v)
}

#[test]
fn anthropic_tool_list_snapshot() {
    let got = tools::tools(ToolFormat::Anthropic);
    let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/tools_anthropic.json"
    );
    if std::env::var_os("TGMS_UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file; run with TGMS_UPDATE_GOLDEN=1");
    let want: Value = serde_json::from_str(&want).unwrap();
    assert_eq!(
        canon(&got),
        canon(&want),
        "generated tool list changed; review and regenerate"
    );
}

#[test]
fn tool_shapes_agree_and_are_sorted() {
    let a = tools::tools(ToolFormat::Anthropic);
    let o = tools::tools(ToolFormat::OpenAi);
    let m = tools::tools(ToolFormat::Mcp);
    let names: Vec<&str> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for ((a, o), m) in a
        .as_array()
        .unwrap()
        .iter()
        .zip(o.as_array().unwrap())
        .zip(m.as_array().unwrap())
    {
        assert_eq!(o["type"], "function");
        assert_eq!(a["name"], o["function"]["name"]);
        assert_eq!(a["name"], m["name"]);
        assert_eq!(a["description"], o["function"]["description"]);
        assert_eq!(a["input_schema"], o["function"]["parameters"]);
        assert_eq!(a["input_schema"], m["inputSchema"]);
        let out = &m["outputSchema"];
        assert_eq!(
            out["required"],
            serde_json::json!([
                "op",
                "args_echo",
                "dataset_extent",
                "truncated",
                "result_digest"
            ])
        );
        let spec = tgms_operators::lookup(a["name"].as_str().unwrap()).unwrap();
        for o in &spec.outputs {
            assert!(out["properties"].get(&o.name).is_some(), "{}", o.name);
        }
        let desc = a["description"].as_str().unwrap();
        assert!(desc.ends_with(&format!(
            "\nOutput fields: {}.",
            spec.output_names().join(", ")
        )));
        let s = &a["input_schema"];
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
    }
    let manual = tools::operator_manual();
    assert!(manual.starts_with(&format!("### {}\n", names[0])));
    assert_eq!(manual.matches("\n### ").count() + 1, names.len());
}

#[test]
fn registry_is_well_formed() {
    for spec in registry() {
        for o in &spec.outputs {
            Contract::parse(&o.contract_text)
                .unwrap_or_else(|e| panic!("{} {}: {e}", spec.name, o.name));
            if let Some(l) = &o.list {
                assert!(
                    spec.output(&l.total_field).is_some(),
                    "{} {}",
                    spec.name,
                    l.total_field
                );
                assert!(
                    spec.output(&l.digest_field).is_some(),
                    "{} {}",
                    spec.name,
                    l.digest_field
                );
                if l.cut == Cut::Paged {
                    assert_eq!(o.name, "rows");
                }
            }
        }
        assert!(spec.output("truncated").is_some(), "{}", spec.name);
        let schema = spec.arg_schema();
        for p in tools::uid_arg_paths(spec) {
            let first = p.split(['.', '[']).next().unwrap();
            assert!(
                schema["properties"].get(first).is_some(),
                "{} {p}",
                spec.name
            );
        }
        for a in &spec.args {
            if let Some(d) = &a.default {
                // every default satisfies its own schema
                let mut v = Vec::new();
                tgms_operators::schema::validate(&a.schema, d, &mut Vec::new(), None, &mut v);
                assert!(v.is_empty(), "{} default of {}: {v:?}", spec.name, a.name);
            }
        }
    }
}

#[test]
fn output_field_lists_of_the_spec() {
    // operators.md §26.1, transcribed; `prop_coercion` of the pattern operators from
    // docs/plans-changes.md (issue 21 item 3); `stride_unit`, `ties_included` and
    // `longest_chain` from its §9.
    let want = [
        ("entity_history", "rows, rows_total, truncated, cursor, set_digest, edges, edges_total, edges_truncated, edges_set_digest"),
        ("snapshot_subgraph", "rows, rows_total, truncated, cursor, set_digest, nodes, nodes_total, nodes_truncated, nodes_set_digest"),
        ("diff_snapshots", "nodes_added, nodes_added_total, nodes_added_set_digest, nodes_removed, nodes_removed_total, nodes_removed_set_digest, edges_added, edges_added_total, edges_added_set_digest, edges_removed, edges_removed_total, edges_removed_set_digest, props_changed, props_changed_total, props_changed_set_digest, truncated"),
        ("version_history", "rows, rows_total, truncated, cursor, set_digest"),
        ("state_at", "rows, rows_total, truncated, cursor, set_digest, at, node, later_facts, later_facts_total, later_facts_set_digest"),
        ("graph_metric_timeseries", "rows, rows_total, truncated, cursor, set_digest, n_buckets"),
        ("burst_detection", "rows, rows_total, truncated, cursor, set_digest, n_buckets"),
        ("neighborhood_evolution", "neighbors_gained, neighbors_gained_total, neighbors_gained_set_digest, neighbors_lost, neighbors_lost_total, neighbors_lost_set_digest, degree_series, stride, stride_unit, truncated"),
        ("resolve_entities", "rows, rows_total, truncated, cursor, set_digest"),
        ("compute", "value, rows, rows_total, truncated, cursor, set_digest, ties_included"),
        ("aggregate_events", "rows, rows_total, truncated, cursor, set_digest, prop_coercion"),
        ("temporal_reachability", "rows, rows_total, truncated, cursor, set_digest, prop_coercion"),
        ("temporal_paths", "rows, rows_total, truncated, cursor, set_digest"),
        ("count_temporal_motifs", "count, counts, n_events_in_window, truncated, approximate, sample_rate, error_bound, interval, intervals, sampling, prop_coercion"),
        ("find_temporal_motif_instances", "rows, rows_total, truncated, cursor, set_digest, prop_coercion"),
        ("co_active", "rows, rows_total, truncated, cursor, set_digest, prop_coercion"),
        ("weighted_traverse", "rows, rows_total, truncated, cursor, set_digest, multipliers, skipped_edges"),
        ("longest_chain", "rows, rows_total, truncated, cursor, set_digest, length, n_events_in_window, prop_coercion"),
    ];
    for (op, fields) in want {
        let spec = tgms_operators::lookup(op).unwrap();
        assert_eq!(spec.output_names().join(", "), fields, "{op}");
    }
    // §2.2 uid-typed argument paths.
    let c = tools::verifier_contracts();
    let paths = |op: &str| c["operators"][op]["uid_arg_paths"].clone();
    assert_eq!(paths("entity_history"), serde_json::json!(["uid"]));
    assert_eq!(paths("snapshot_subgraph"), serde_json::json!(["seeds[*]"]));
    assert_eq!(
        paths("diff_snapshots"),
        serde_json::json!(["scope.seeds[*]"])
    );
    assert_eq!(paths("state_at"), serde_json::json!(["uid"]));
    assert_eq!(paths("version_history"), serde_json::json!(["uid"]));
    assert_eq!(paths("burst_detection"), serde_json::json!(["target.uid"]));
    assert_eq!(paths("neighborhood_evolution"), serde_json::json!(["uid"]));
    assert_eq!(paths("graph_metric_timeseries"), serde_json::json!([]));
    assert_eq!(paths("resolve_entities"), serde_json::json!([]));
    assert_eq!(
        paths("aggregate_events"),
        serde_json::json!(["endpoint_filter.uids[*]"])
    );
    assert_eq!(paths("temporal_reachability"), serde_json::json!(["src"]));
    assert_eq!(paths("temporal_paths"), serde_json::json!(["src", "dst"]));
    for op in ["count_temporal_motifs", "find_temporal_motif_instances"] {
        assert_eq!(paths(op), serde_json::json!(["node_filter[*]"]));
    }
    assert_eq!(
        paths("co_active"),
        serde_json::json!(["a_spec.src", "a_spec.dst", "b_spec.src", "b_spec.dst"])
    );
    assert_eq!(paths("weighted_traverse"), serde_json::json!(["seed"]));
    // §6.3 uid-keyed lists.
    let keyed = |op: &str, l: &str| c["operators"][op]["lists"][l]["uid_keyed"].clone();
    assert_eq!(keyed("snapshot_subgraph", "nodes"), true);
    assert_eq!(keyed("diff_snapshots", "nodes_added"), true);
    assert_eq!(keyed("diff_snapshots", "nodes_removed"), true);
    assert_eq!(keyed("diff_snapshots", "edges_added"), false);
    assert_eq!(keyed("entity_history", "rows"), false);
    assert_eq!(keyed("state_at", "later_facts"), false);
    assert_eq!(keyed("resolve_entities", "rows"), true);
    assert_eq!(keyed("neighborhood_evolution", "neighbors_gained"), true);
    assert_eq!(keyed("neighborhood_evolution", "neighbors_lost"), true);
    assert_eq!(keyed("graph_metric_timeseries", "rows"), false);
    assert_eq!(keyed("burst_detection", "rows"), false);
    assert_eq!(keyed("temporal_reachability", "rows"), true);
    assert_eq!(keyed("weighted_traverse", "rows"), true);
    assert_eq!(keyed("temporal_paths", "rows"), false);
    assert_eq!(keyed("co_active", "rows"), false);
}

#[test]
fn payloads_conform_to_their_declared_contracts() {
    // Rows of version_history carry the node or the edge fields of one union contract.
    let dir = tempfile::tempdir().unwrap();
    let mut s = tgms_engine::Store::create(&dir.path().join("s")).unwrap();
    let op = |v: Value| tgms_engine::Op::from_json(&v);
    s.write_at(1, vec![op(serde_json::json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":0,"vt_e":100,"props":{"w":1.5}}))]).unwrap();
    s.write_at(2, vec![op(serde_json::json!({"op":"correct","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"props":{"w":2},"vt_s":10,"vt_e":20,"reason":"fix"}))]).unwrap();
    let calls = [
        (
            "entity_history",
            serde_json::json!({"uid": "a", "include_edges": true}),
        ),
        (
            "version_history",
            serde_json::json!({"kind": "edge", "belief": "all"}),
        ),
        ("version_history", serde_json::json!({"belief": "all"})),
        (
            "state_at",
            serde_json::json!({"uid": "a", "at": 5, "direction": "both"}),
        ),
        (
            "snapshot_subgraph",
            serde_json::json!({"seeds": ["a"], "t_valid": 15}),
        ),
        ("diff_snapshots", serde_json::json!({"t1": 5, "t2": 15})),
        (
            "graph_metric_timeseries",
            serde_json::json!({"metric": "mean_out_degree", "window": {"t_a": 0, "t_b": 30}, "stride": 7}),
        ),
        (
            "graph_metric_timeseries",
            serde_json::json!({"metric": "node_count", "window": {"t_a": 0, "t_b": 30}, "stride": 7}),
        ),
        (
            "burst_detection",
            serde_json::json!({"target": {"kind": "node_activity", "uid": "a"}, "window": {"t_a": 0, "t_b": 30}, "stride": 1, "params": {"z": 0.1}}),
        ),
        (
            "neighborhood_evolution",
            serde_json::json!({"uid": "a", "t1": 5, "t2": 15}),
        ),
        ("resolve_entities", serde_json::json!({"query": "A"})),
        (
            "compute",
            serde_json::json!({"fn": "mean", "input": [1, 2]}),
        ),
        (
            "compute",
            serde_json::json!({"fn": "union", "input": [1], "other": ["a"]}),
        ),
        (
            "aggregate_events",
            serde_json::json!({"group_by": [{"dim": "time_bucket"}, {"dim": "label", "role": "src"}],
                "aggregates": [{"agg": "count"}, {"agg": "max", "of": "prop", "prop": "w"}],
                "window": {"t_a": 0, "t_b": 100}, "stride": 10}),
        ),
    ];
    for (name, args) in calls {
        let env =
            tgms_operators::call_operator(s.snapshot(), name, &args, &Default::default()).unwrap();
        let spec = tgms_operators::lookup(name).unwrap();
        let payload = tgms_operators::pipeline::payload_of(&env);
        for (k, v) in payload.as_object().unwrap() {
            let decl = spec
                .output(k)
                .unwrap_or_else(|| panic!("{name}: undeclared field {k}"));
            decl.contract
                .check(v, name == "version_history")
                .unwrap_or_else(|e| panic!("{name}.{k}: {e}"));
        }
        for o in &spec.outputs {
            assert!(
                o.conditional || payload.get(&o.name).is_some(),
                "{name}: missing {}",
                o.name
            );
        }
    }
}
