//! The task templates of the suite generator (`evaluation.md` §3.4): per template its draws
//! (in the spec's order), its oracle plan, its answer kind and source, and three paraphrases.

use serde_json::{json, Value};
use tgms_verifier::mutations::Rng;

/// One day in µs (bucket templates use at least one-day buckets).
pub const DAY_US: i64 = 86_400_000_000;
/// One hour in µs (the floor of motif `delta` and co-activity `gap`).
pub const HOUR_US: i64 = 3_600_000_000;

/// The generation context of §3.2.
#[derive(Clone, Debug)]
pub struct Context {
    /// `stats.vt_min`, µs.
    pub t0_us: i64,
    /// `stats.vt_max`, µs.
    pub t1_us: i64,
    /// `t1_us − t0_us`, µs.
    pub span_us: i64,
    /// The top-50 entities by degree, then a sample of the other active ones.
    pub uids: Vec<String>,
}

impl Context {
    /// `window(stream, lo, hi)` of §3.2: a half-open window `[start, start + length)`.
    pub fn window(&self, rng: &mut Rng, lo: f64, hi: f64) -> (i64, i64) {
        let frac = rng.uniform_in(lo, hi);
        let length = ((self.span_us as f64 * frac) as i64).max(2);
        let start = self.t0_us + rng.randrange((self.span_us - length).max(1) as usize) as i64;
        (start, start + length)
    }

    fn x(&self, rng: &mut Rng) -> String {
        rng.choice(&self.uids).clone()
    }
}

/// `stride_for(t_a, t_b, target) = max(1, (t_b − t_a) // target)`.
pub fn stride_for(t_a: i64, t_b: i64, target: i64) -> i64 {
    ((t_b - t_a) / target).max(1)
}

/// `T(ts)`: `"YYYY-MM-DD HH:MM UTC (<ts>)"`.
pub fn t_text(ts: i64) -> String {
    let day = chrono::DateTime::from_timestamp_micros(ts).map_or_else(
        || "?".to_string(),
        |t| t.format("%Y-%m-%d %H:%M").to_string(),
    );
    format!("{day} UTC ({ts})")
}

/// `W(t_a, t_b)`: `"from T(t_a) to T(t_b)"`.
pub fn w_text(t_a: i64, t_b: i64) -> String {
    format!("from {} to {}", t_text(t_a), t_text(t_b))
}

/// `x / unit` rounded half-even to one decimal, as canonical float text (`7.0`, `12.5`).
pub fn one_decimal(x_us: i64, unit_us: i64) -> String {
    let r = (x_us as f64 / unit_us as f64 * 10.0).round_ties_even() / 10.0;
    let mut s = String::new();
    tgms_engine::canon::write_f64(&mut s, r);
    s
}

/// The templates of a family, in table order.
pub fn family_templates(family: &str) -> &'static [&'static str] {
    match family {
        "t1" => &[
            "reach_count",
            "reach_first",
            "neighbors_at",
            "degree_at",
            "event_count",
            "busiest_bucket",
            "new_nodes",
            "reciprocity",
            "earliest_arrival_at",
            "burst_buckets",
            "partners_window",
            "history_count",
        ],
        "t3" => &["nodes_added", "neighbors_gained", "first_burst"],
        "t4" => &[
            "reach_motifs",
            "first_reached_history",
            "motif_top_participant",
            "coactive_count",
        ],
        _ => &[],
    }
}

/// One instantiated template, before execution.
#[derive(Clone, Debug)]
pub struct Instance {
    /// The template's name (`reach_count`, …).
    pub template: &'static str,
    /// `easy`, `medium` or `hard`.
    pub difficulty: &'static str,
    /// Plan steps, each `{id, op, args, depends_on}`.
    pub steps: Vec<Value>,
    /// `answer_spec.kind` (`count`, `value`, `entity_set`, …).
    pub kind: &'static str,
    /// `answer_spec.from`.
    pub from: &'static str,
    /// The question: one of the template's three paraphrases with its variables filled in.
    pub question: String,
    /// The uids the question names (the task's grounding inputs).
    pub input_uids: Vec<String>,
}

/// A plan step whose `depends_on` lists exactly `deps`.
pub fn step(id: &str, op: &str, args: Value, deps: &[&str]) -> Value {
    json!({"id": id, "op": op, "args": args, "depends_on": deps})
}

/// `{"$ref": path}`.
pub fn r(path: &str) -> Value {
    json!({ "$ref": path })
}

fn win(t_a: i64, t_b: i64) -> Value {
    json!({"t_a": t_a, "t_b": t_b})
}

/// The paraphrases of a template (§3.4), `{x}`, `{y}`, `{w}`, `{t}`, `{t1}`, `{t2}`,
/// `{stride_days}`, `{delta_h}`, `{gap_h}` to be filled.
pub fn paraphrases(template: &str) -> [&'static str; 3] {
    match template {
        "reach_count" => [
            "Starting from {x}, how many distinct nodes can be reached along time-respecting paths {w}?",
            "Counting only paths whose edges occur in time order, how many nodes does {x} reach {w}?",
            "If {x} passed a message along time-ordered edges {w}, how many other nodes could receive it?",
        ],
        "reach_first" => [
            "Which node does {x} reach earliest by a time-respecting path {w}?",
            "Following edges in time order from {x} {w}, which node is reached first?",
            "Name the first node that a time-respecting walk from {x} arrives at {w}.",
        ],
        "neighbors_at" => [
            "Which nodes were directly connected to {x}, in either direction, at {t}?",
            "At {t}, list the nodes that shared an active edge with {x}.",
            "Who were {x}'s immediate neighbours at {t}?",
        ],
        "degree_at" => [
            "How many edges touching {x} were active at {t}?",
            "At {t}, what was the number of active edges incident to {x}?",
            "Count the active incident edges of {x} at {t}.",
        ],
        "event_count" => [
            "How many edge events were recorded {w}?",
            "What is the number of interactions that occurred {w}?",
            "Count every edge event {w}.",
        ],
        "busiest_bucket" => [
            "Dividing the period {w} into {stride_days}-day buckets, which bucket contains the most edge events?",
            "Which {stride_days}-day interval {w} was the busiest in edge events?",
            "Find the {stride_days}-day bucket {w} with the highest number of interactions.",
        ],
        "new_nodes" => [
            "How many nodes appeared for the first time {w}?",
            "What number of nodes had their first activity {w}?",
            "Count the nodes that joined the graph {w}.",
        ],
        "reciprocity" => [
            "Among the directed sender–receiver pairs active {w}, what fraction were also active in the opposite direction?",
            "What is the reciprocity of the interactions {w}?",
            "What share of the directed pairs seen {w} were reciprocated?",
        ],
        "earliest_arrival_at" => [
            "What is the earliest time at which {y} can be reached from {x} by a time-respecting path {w}?",
            "Following edges in time order from {x} {w}, when is {y} first reached?",
            "When does information leaving {x} first arrive at {y}, considering only edges {w}?",
        ],
        "burst_buckets" => [
            "How many {stride_days}-day buckets {w} were flagged as bursts (z-score of at least 3 against the previous 10 buckets)?",
            "Count the {stride_days}-day buckets {w} that a rolling z-score (threshold 3, history 10) marks as bursts.",
            "How many {stride_days}-day periods {w} deviated by at least 3 standard deviations from the preceding ten periods?",
        ],
        "partners_window" => [
            "Which accounts, {x} included, take part in {x}'s interactions {w}?",
            "List every account that appears as sender or recipient in edges involving {x} {w}, {x} itself included.",
            "Name all accounts occurring in {x}'s edges {w}, {x} among them.",
        ],
        "history_count" => [
            "How many versions of node {x} are currently believed?",
            "Under the current belief state, how many versions make up {x}'s history?",
            "Count the believed versions of {x} in the store today.",
        ],
        "nodes_added" => [
            "How many nodes existed at {t2} that did not exist at {t1}?",
            "Comparing the snapshots at {t1} and {t2}, how many nodes were added?",
            "Count the nodes present at {t2} but absent at {t1}.",
        ],
        "neighbors_gained" => [
            "Which neighbours did {x} gain between {t1} and {t2}?",
            "List the nodes linked to {x} at {t2} that were not linked to it at {t1}.",
            "Between {t1} and {t2}, which new neighbours did {x} acquire?",
        ],
        "first_burst" => [
            "Which {stride_days}-day bucket {w} is the first one flagged as a burst of edge events?",
            "Find the earliest {stride_days}-day period {w} in which the edge-event rate bursts.",
            "When did activity first spike {w}? Give the {stride_days}-day bucket.",
        ],
        "reach_motifs" => [
            "Restricting to the nodes {x} can reach {w}, how many cyclic temporal triangles complete within {delta_h} hours?",
            "Among nodes reachable from {x} {w}, count time-ordered three-cycles u→v→w→u spanning at most {delta_h} hours.",
            "How many δ-temporal cyclic triangles (δ = {delta_h} h) occur {w} among the nodes reachable from {x}?",
        ],
        "first_reached_history" => [
            "For the first node that {x} reaches {w}, how many versions are currently believed?",
            "Find the earliest node reachable from {x} {w} and count its believed versions.",
            "How long is the current version history of the first node {x} reaches {w}?",
        ],
        "motif_top_participant" => [
            "Among the nodes {x} can reach {w}, which node sends the first edge of the earliest cyclic triangle completing within {delta_h} hours?",
            "Within {x}'s reachable set {w}, who starts the earliest time-ordered three-cycle spanning at most {delta_h} hours?",
            "Considering only nodes reachable from {x} {w}, which node fires the opening edge of the earliest cyclic triangle (δ = {delta_h} h)?",
        ],
        "coactive_count" => [
            "How many ordered pairs of {x}'s outgoing edges have the second starting at most {gap_h} hours after the first ends?",
            "Count pairs of edges leaving {x} where one edge's validity ends and the other's begins within {gap_h} hours.",
            "Among {x}'s outgoing edges, how many interval pairs stand in a \"before\" relation with a gap of at most {gap_h} hours?",
        ],
        "probe_before" => [
            "At transaction time {tt}, how many versions of {x} were believed?",
            "Pinning the belief state to transaction time {tt}, how many versions did {x}'s history contain?",
            "How many versions of {x} did the store believe as of transaction time {tt}?",
        ],
        "probe_now" => [
            "How many versions of {x} are believed now?",
            "In the current belief state, how many versions does {x} have?",
            "Count the versions of {x} that the store currently believes.",
        ],
        "planted_ring" => [
            "Which nodes belong to a time-ordered three-cycle that completes within {delta_h} hours {w}?",
            "List every node involved in a cyclic temporal triangle spanning at most {delta_h} hours {w}.",
            "Which accounts form closed time-ordered triangles (span at most {delta_h} h) {w}?",
        ],
        "planted_chain" => [
            "Which nodes can {x} reach along time-respecting paths {w}?",
            "Following edges in time order from {x} {w}, which nodes are reached?",
            "Name every node that a time-ordered walk from {x} arrives at {w}.",
        ],
        "planted_burst" => [
            "Which {stride_days}-day bucket {w} is the first burst of {x}'s activity?",
            "Find the earliest {stride_days}-day period {w} in which {x}'s edge rate bursts.",
            "When did {x}'s activity first spike {w}? Give the {stride_days}-day bucket.",
        ],
        _ => ["", "", ""],
    }
}

/// Fills the placeholders of `text`.
pub fn fill(text: &str, vars: &[(&str, String)]) -> String {
    let mut s = text.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// Builds template `name` with paraphrase `para`, drawing from `rng` in the order of §3.4.
pub fn build(name: &'static str, para: usize, ctx: &Context, rng: &mut Rng) -> Instance {
    let mut vars: Vec<(&str, String)> = Vec::new();
    let mut input_uids = Vec::new();
    let reach =
        |src: Value, w: (i64, i64)| json!({"src": src, "window": win(w.0, w.1), "limit": 10000});
    let (difficulty, steps, kind, from): (&str, Vec<Value>, &str, &str) = match name {
        "reach_count" | "reach_first" => {
            let x = ctx.x(rng);
            let w = ctx.window(rng, 0.05, 0.5);
            vars.push(("w", w_text(w.0, w.1)));
            let s = vec![step("s1", "temporal_reachability", reach(json!(x), w), &[])];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            if name == "reach_count" {
                ("easy", s, "count", "s1.rows_total")
            } else {
                ("easy", s, "value", "s1.rows[0].uid")
            }
        }
        "neighbors_at" => {
            let x = ctx.x(rng);
            let t = ctx.t0_us + rng.randrange(ctx.span_us.max(1) as usize) as i64;
            vars.push(("t", t_text(t)));
            let s = vec![
                step(
                    "s1",
                    "snapshot_subgraph",
                    json!({"seeds": [x], "hops": 1, "t_valid": t, "limit": 10000}),
                    &[],
                ),
                step(
                    "s2",
                    "compute",
                    json!({"fn": "filter", "input": r("s1.nodes"), "field": "hop", "cmp": "eq", "value": 1, "limit": 10000}),
                    &["s1"],
                ),
            ];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("medium", s, "entity_set", "s2.rows")
        }
        "degree_at" => {
            let x = ctx.x(rng);
            let t = ctx.t0_us + rng.randrange((ctx.span_us - 2).max(1) as usize) as i64;
            vars.push(("t", t_text(t)));
            let s = vec![step(
                "s1",
                "neighborhood_evolution",
                json!({"uid": x, "t1": t, "t2": t + 2, "stride": 2}),
                &[],
            )];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("easy", s, "value", "s1.degree_series[0].degree")
        }
        "event_count" | "new_nodes" | "reciprocity" => {
            let (lo, hi) = if name == "reciprocity" {
                (0.2, 0.5)
            } else {
                (0.05, 0.5)
            };
            let w = ctx.window(rng, lo, hi);
            vars.push(("w", w_text(w.0, w.1)));
            let metric = match name {
                "event_count" => "edge_event_count",
                "new_nodes" => "new_node_rate",
                _ => "reciprocity",
            };
            let s = vec![step(
                "s1",
                "graph_metric_timeseries",
                json!({"metric": metric, "window": win(w.0, w.1), "stride": w.1 - w.0}),
                &[],
            )];
            let d = if name == "reciprocity" {
                "medium"
            } else {
                "easy"
            };
            (d, s, "value", "s1.rows[0].value")
        }
        "busiest_bucket" => {
            let w = ctx.window(rng, 0.2, 0.9);
            let stride = DAY_US.max(stride_for(w.0, w.1, 14));
            vars.push(("w", w_text(w.0, w.1)));
            vars.push(("stride_days", one_decimal(stride, DAY_US)));
            let s = vec![
                step(
                    "s1",
                    "graph_metric_timeseries",
                    json!({"metric": "edge_event_count", "window": win(w.0, w.1), "stride": stride, "limit": 2000}),
                    &[],
                ),
                step(
                    "s2",
                    "compute",
                    json!({"fn": "topk", "input": r("s1.rows"), "field": "value", "k": 1}),
                    &["s1"],
                ),
            ];
            ("medium", s, "interval", "s2.rows[0]")
        }
        "earliest_arrival_at" => {
            let xy = rng.sample(&ctx.uids, 2);
            let (x, y) = (xy[0].clone(), xy.get(1).cloned().unwrap_or_default());
            let w = ctx.window(rng, 0.3, 0.5);
            vars.push(("w", w_text(w.0, w.1)));
            let s = vec![
                step("s1", "temporal_reachability", reach(json!(x), w), &[]),
                step(
                    "s2",
                    "compute",
                    json!({"fn": "filter", "input": r("s1.rows"), "field": "uid", "cmp": "eq", "value": y}),
                    &["s1"],
                ),
            ];
            vars.push(("x", x.clone()));
            vars.push(("y", y.clone()));
            input_uids.push(x);
            input_uids.push(y);
            ("medium", s, "value", "s2.rows[0].earliest_arrival")
        }
        "burst_buckets" | "first_burst" => {
            let (lo, hi) = if name == "burst_buckets" {
                (0.3, 0.9)
            } else {
                (0.4, 1.0)
            };
            let w = ctx.window(rng, lo, hi);
            let stride = DAY_US.max(stride_for(w.0, w.1, 30));
            vars.push(("w", w_text(w.0, w.1)));
            vars.push(("stride_days", one_decimal(stride, DAY_US)));
            let s1 = step(
                "s1",
                "burst_detection",
                json!({"target": {"kind": "edge_event_rate"}, "window": win(w.0, w.1), "stride": stride, "limit": 2000}),
                &[],
            );
            if name == "burst_buckets" {
                let s2 = step(
                    "s2",
                    "compute",
                    json!({"fn": "count", "input": r("s1.rows")}),
                    &["s1"],
                );
                ("medium", vec![s1, s2], "count", "s2.value")
            } else {
                ("medium", vec![s1], "interval", "s1.rows[0]")
            }
        }
        "partners_window" => {
            let x = ctx.x(rng);
            let w = ctx.window(rng, 0.1, 0.5);
            vars.push(("w", w_text(w.0, w.1)));
            let s = vec![
                step(
                    "s1",
                    "entity_history",
                    json!({"uid": x, "include_edges": true, "limit": 10000}),
                    &[],
                ),
                step(
                    "s2",
                    "compute",
                    json!({"fn": "filter", "input": r("s1.edges"), "field": "vt_s", "cmp": "ge", "value": w.0, "limit": 10000}),
                    &["s1"],
                ),
                step(
                    "s3",
                    "compute",
                    json!({"fn": "filter", "input": r("s2.rows"), "field": "vt_s", "cmp": "lt", "value": w.1, "limit": 10000}),
                    &["s2"],
                ),
            ];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("medium", s, "entity_set", "s3.rows")
        }
        "history_count" => {
            let x = ctx.x(rng);
            let s = vec![
                step(
                    "s1",
                    "entity_history",
                    json!({"uid": x, "limit": 10000}),
                    &[],
                ),
                step(
                    "s2",
                    "compute",
                    json!({"fn": "count", "input": r("s1.rows")}),
                    &["s1"],
                ),
            ];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("easy", s, "count", "s2.value")
        }
        "nodes_added" => {
            let w = ctx.window(rng, 0.2, 0.5);
            vars.push(("t1", t_text(w.0)));
            vars.push(("t2", t_text(w.1)));
            let s = vec![step(
                "s1",
                "diff_snapshots",
                json!({"t1": w.0, "t2": w.1, "limit": 10000}),
                &[],
            )];
            ("easy", s, "value", "s1.nodes_added_total")
        }
        "neighbors_gained" => {
            let x = ctx.x(rng);
            let w = ctx.window(rng, 0.2, 0.5);
            vars.push(("t1", t_text(w.0)));
            vars.push(("t2", t_text(w.1)));
            let s = vec![step(
                "s1",
                "neighborhood_evolution",
                json!({"uid": x, "t1": w.0, "t2": w.1, "limit": 10000}),
                &[],
            )];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("medium", s, "entity_set", "s1.neighbors_gained")
        }
        "reach_motifs" | "motif_top_participant" | "first_reached_history" => {
            let x = ctx.x(rng);
            let w = ctx.window(rng, 0.3, 0.5);
            vars.push(("w", w_text(w.0, w.1)));
            vars.push(("x", x.clone()));
            input_uids.push(x.clone());
            match name {
                "reach_motifs" => {
                    let delta = HOUR_US.max(ctx.span_us / 20);
                    vars.push(("delta_h", one_decimal(delta, HOUR_US)));
                    let s = vec![
                        step("s1", "resolve_entities", json!({ "query": x }), &[]),
                        step(
                            "s2",
                            "temporal_reachability",
                            reach(r("s1.rows[0].uid"), w),
                            &["s1"],
                        ),
                        step(
                            "s3",
                            "count_temporal_motifs",
                            json!({"motif": "M_triangle_cyclic", "delta": delta, "window": win(w.0, w.1),
                                "node_filter": r("s2.rows[*].uid")}),
                            &["s2"],
                        ),
                    ];
                    ("hard", s, "count", "s3.count")
                }
                "first_reached_history" => {
                    let s = vec![
                        step("s1", "temporal_reachability", reach(json!(x), w), &[]),
                        step(
                            "s2",
                            "entity_history",
                            json!({"uid": r("s1.rows[0].uid"), "limit": 10000}),
                            &["s1"],
                        ),
                        step(
                            "s3",
                            "compute",
                            json!({"fn": "count", "input": r("s2.rows")}),
                            &["s2"],
                        ),
                    ];
                    ("hard", s, "count", "s3.value")
                }
                _ => {
                    let delta = HOUR_US.max(ctx.span_us / 10);
                    vars.push(("delta_h", one_decimal(delta, HOUR_US)));
                    let s = vec![
                        step("s1", "temporal_reachability", reach(json!(x), w), &[]),
                        step(
                            "s2",
                            "find_temporal_motif_instances",
                            json!({"motif": "M_triangle_cyclic", "delta": delta, "window": win(w.0, w.1),
                                "node_filter": r("s1.rows[*].uid")}),
                            &["s1"],
                        ),
                    ];
                    ("hard", s, "value", "s2.rows[0].edges[0].src")
                }
            }
        }
        "coactive_count" => {
            let x = ctx.x(rng);
            let gap = HOUR_US.max(ctx.span_us / 20);
            vars.push(("gap_h", one_decimal(gap, HOUR_US)));
            let s = vec![
                step("s1", "resolve_entities", json!({ "query": x }), &[]),
                step(
                    "s2",
                    "co_active",
                    json!({"a_spec": {"src": r("s1.rows[0].uid")}, "b_spec": {"src": r("s1.rows[0].uid")},
                        "allen_relation": {"relation": "before", "gap": gap}, "limit": 1}),
                    &["s1"],
                ),
            ];
            vars.push(("x", x.clone()));
            input_uids.push(x);
            ("hard", s, "count", "s2.rows_total")
        }
        other => unreachable!("unknown template {other}"),
    };
    Instance {
        template: name,
        difficulty,
        steps,
        kind,
        from,
        question: fill(paraphrases(name)[para % 3], &vars),
        input_uids,
    }
}
