//! The benchmark registry of the spec's `evaluation.md` §2: the 13 queries plus three of ours, the
//! answer hash (§2.2) and the timing protocol (§2.3).
//!
//! Queries are run generically by operator name through
//! [`tgms_operators::call_operator`]; a query whose operator is not registered in this build
//! is reported as not available (`ok: false`, `error: "not_available"`).

use serde_json::{json, Map, Value};
use std::time::Instant;
use tgms_engine::{canon, Snapshot, Store};
use tgms_operators::{call_operator, CallOptions, Code};

/// The registry parameters (§1.5, §2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Start of the queried valid-time span (µs, inclusive).
    pub t0: i64,
    /// End of the queried valid-time span (µs, exclusive); `t1 > t0`.
    pub t1: i64,
    /// Transaction time (µs) of the first batch: the `as_of_tt` of `hist.asof`.
    pub tt_epoch1: i64,
    /// The node filter of `motif.filtered`: 200 uids (fewer in a small real log).
    pub filter_uids: Vec<String>,
}

impl Params {
    /// The synthetic log of scale `n` (§1.5): `t0 = 0`, `t1 = N`, `filter_uids = n0 … n199`.
    pub fn synthetic(n: u64, tt_epoch1: i64) -> Params {
        Params {
            t0: 0,
            t1: n as i64,
            tt_epoch1,
            filter_uids: (0..200).map(|i| format!("n{i}")).collect(),
        }
    }

    /// A replayed real log (§2.1): `t0` = the minimum event `vt_s`, `t1` = the maximum event
    /// `vt_s` + 1, `tt_epoch1` = the first batch's tt, `filter_uids` = the first 200 distinct
    /// event `src` uids in code-point order. Events are the stored edge versions created by
    /// `ingest_events` (origin `ingest`).
    pub fn from_store(store: &Store) -> Params {
        let snap = store.snapshot();
        let edges = snap.all_edges();
        let mut t0 = i64::MAX;
        let mut tmax = i64::MIN;
        let mut srcs: Vec<&str> = Vec::with_capacity(edges.len());
        for e in &edges {
            t0 = t0.min(e.vt_s());
            tmax = tmax.max(e.vt_s());
            srcs.push(e.src());
        }
        srcs.sort_unstable();
        srcs.dedup();
        let st = store.stats();
        Params {
            t0: if edges.is_empty() { 0 } else { t0 },
            t1: if edges.is_empty() { 1 } else { tmax + 1 },
            tt_epoch1: st.first_tt.unwrap_or(0),
            filter_uids: srcs.into_iter().take(200).map(String::from).collect(),
        }
    }
}

/// One registry query.
#[derive(Clone, Debug)]
pub struct Query {
    /// The registry id (`hist.single`, `motif.all36`, ...).
    pub id: &'static str,
    /// The operator the query calls.
    pub op: &'static str,
    /// The operator arguments, built from the `Params`.
    pub args: Value,
    /// One of our three extra queries (not part of the 13).
    pub ours: bool,
}

/// The 13 registry queries in registry order, then `state.at`, `wtrav.seed`, `motif.all36`.
pub fn queries(p: &Params) -> Vec<Query> {
    let (t0, t1) = (p.t0, p.t1);
    let span = t1 - t0;
    let mid = t0 + span / 2;
    let stride = (span / 100).max(1);
    let w = json!({"t_a": t0, "t_b": t1});
    let q = |id, op, args| Query {
        id,
        op,
        args,
        ours: false,
    };
    let mut v = vec![
        q("hist.single", "entity_history", json!({"uid": "n1"})),
        q(
            "hist.asof",
            "entity_history",
            json!({"uid": "n1", "as_of_tt": p.tt_epoch1}),
        ),
        q(
            "snap.hop2",
            "snapshot_subgraph",
            json!({"seeds": ["n1"], "hops": 2, "t_valid": mid}),
        ),
        q(
            "diff.global",
            "diff_snapshots",
            json!({"t1": mid, "t2": mid + span / 40}),
        ),
        q(
            "reach.window",
            "temporal_reachability",
            json!({"src": "n1", "window": {"t_a": t0, "t_b": t0 + span / 10}}),
        ),
        q(
            "paths.k",
            "temporal_paths",
            json!({"src": "n1", "dst": "n2", "window": {"t_a": t0, "t_b": t0 + span / 4},
                "k": 3, "max_hops": 3}),
        ),
        q(
            "series.count",
            "graph_metric_timeseries",
            json!({"metric": "edge_event_count", "window": w, "stride": stride}),
        ),
        q(
            "burst.zscore",
            "burst_detection",
            json!({"target": {"kind": "edge_event_rate"}, "window": w, "stride": stride,
                "method": "zscore", "params": {"z": 3.0}}),
        ),
        q(
            "nbr.evolution",
            "neighborhood_evolution",
            json!({"uid": "n1", "t1": mid, "t2": mid + span / 10}),
        ),
        q(
            "coactive.narrow",
            "co_active",
            json!({"a_spec": {"src": "n1"}, "b_spec": {"src": "n2"},
                "allen_relation": {"relation": "overlaps"}}),
        ),
        q("resolve.substr", "resolve_entities", json!({"query": "n1"})),
        q(
            "agg.rel_bucket",
            "aggregate_events",
            json!({"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}],
                "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}],
                "window": w, "stride": stride, "limit": 1000}),
        ),
        q(
            "motif.filtered",
            "count_temporal_motifs",
            json!({"motif": "M_triangle_cyclic", "delta": span / 50, "window": w,
                "node_filter": p.filter_uids}),
        ),
    ];
    let ours = |id, op, args| Query {
        id,
        op,
        args,
        ours: true,
    };
    v.push(ours(
        "state.at",
        "state_at",
        json!({"uid": "n1", "at": mid, "direction": "both"}),
    ));
    v.push(ours(
        "wtrav.seed",
        "weighted_traverse",
        json!({"seed": "n1", "t": mid, "max_depth": 2, "direction": "both"}),
    ));
    v.push(ours(
        "motif.all36",
        "count_temporal_motifs",
        json!({"motif": "all", "delta": 3_600_000_000i64, "window": w}),
    ));
    v
}

/// `registry_hash(envelope)` (§2.2): the first 32 hex of the digest of the envelope without
/// `op`, `args_echo`, `dataset_extent`, `result_digest`, `cursor`.
pub fn registry_hash(envelope: &Value) -> String {
    let mut m: Map<String, Value> = envelope.as_object().cloned().unwrap_or_default();
    for k in [
        "op",
        "args_echo",
        "dataset_extent",
        "result_digest",
        "cursor",
    ] {
        m.remove(k);
    }
    canon::digest(&Value::Object(m))[..32].to_string()
}

/// `rows` of the run record (§2.3): `rows_total` if present, else the sum of `*_total`
/// fields, else `count`, else the length of `rows`.
pub fn rows_of(envelope: &Value) -> Option<i64> {
    if let Some(n) = envelope.get("rows_total").and_then(Value::as_i64) {
        return Some(n);
    }
    let m = envelope.as_object()?;
    let totals: Vec<i64> = m
        .iter()
        .filter(|(k, _)| k.ends_with("_total"))
        .filter_map(|(_, v)| v.as_i64())
        .collect();
    if !totals.is_empty() {
        return Some(totals.iter().sum());
    }
    if let Some(n) = m.get("count").and_then(Value::as_i64) {
        return Some(n);
    }
    m.get("rows")
        .and_then(Value::as_array)
        .map(|a| a.len() as i64)
}

/// The timing protocol (§2.3): warm-ups, then `reps_fast` timed runs if the first took less
/// than a second, else `reps_slow`.
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// Untimed runs before the timed ones.
    pub warmups: u32,
    /// Timed runs when the first timed run took under 1 s.
    pub reps_fast: u32,
    /// Timed runs when the first timed run took 1 s or more.
    pub reps_slow: u32,
}

impl Protocol {
    /// The spec's protocol: 5 warm-ups, 30 or 10 timed runs.
    pub const SPEC: Protocol = Protocol {
        warmups: 5,
        reps_fast: 30,
        reps_slow: 10,
    };
    /// A short protocol for the demo's latency table: 1 warm-up, 5 timed runs.
    pub const QUICK: Protocol = Protocol {
        warmups: 1,
        reps_fast: 5,
        reps_slow: 3,
    };

    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({"warmups": self.warmups, "reps_if_first_under_1s": self.reps_fast,
            "reps_otherwise": self.reps_slow, "p50": "median (mean of the two middle values)",
            "p95": "sorted[min(n-1, max(0, ceil(0.95 n) - 1))]"})
    }
}

/// The median (mean of the two middle values for an even count).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// `sorted[min(n − 1, max(0, ceil(0.95·n) − 1))]`.
pub fn p95(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let i = ((0.95 * n as f64).ceil() as usize).saturating_sub(1);
    sorted[i.min(n - 1)]
}

/// The per-query record (§2.3).
#[derive(Clone, Debug)]
pub struct QueryRecord {
    /// The query's registry id.
    pub id: String,
    /// The operator the query called.
    pub op: String,
    /// True when every warm-up and timed run succeeded.
    pub ok: bool,
    /// `registry_hash` of the last envelope (32 hex characters); `None` unless `ok`.
    pub hash: Option<String>,
    /// The last envelope's `result_digest`, if it has one.
    pub result_digest: Option<String>,
    /// Median of the timed runs (ms); `None` unless `ok`.
    pub p50_ms: Option<f64>,
    /// 95th percentile of the timed runs (ms, the `p95` rule); `None` unless `ok`.
    pub p95_ms: Option<f64>,
    /// The answer's row count by the `rows_of` rule.
    pub rows: Option<i64>,
    /// Why the query failed: the error code of the call (`gr` for a cost refusal) or
    /// `not_available`.
    pub error: Option<String>,
    /// A cost refusal's estimate, ceiling and narrowing repair ([`Refusal`]).
    pub refusal: Option<Refusal>,
    /// Every timed run's wall time (ms), in run order.
    pub timings_ms: Vec<f64>,
    /// False when the operator is not registered in this build.
    pub available: bool,
    /// One of our three extra queries (not part of the 13).
    pub ours: bool,
}

/// A query the cost model refused (`E_COST`): what it was estimated at, the ceiling, and
/// how to narrow it, from the refusal's details.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The estimated time (ms).
    pub estimate_ms: Option<i64>,
    /// The time ceiling it is over (ms).
    pub ceiling_ms: Option<i64>,
    /// The narrowing suggestions.
    pub suggestions: Vec<String>,
    /// The sample-mode args an exact motif count can be asked with instead
    /// (`docs/approximate.md`), when sampling is estimated cheaper.
    pub sample_mode: Option<Value>,
}

impl Refusal {
    fn of(details: &Value) -> Refusal {
        Refusal {
            estimate_ms: details["estimate"]["time_est_ms"].as_i64(),
            ceiling_ms: details["ceilings"]["time_est_ms"].as_i64(),
            suggestions: details["suggestions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            sample_mode: details["repair"]["sample_mode"].get("args").cloned(),
        }
    }

    /// The refusal as JSON.
    pub fn to_json(&self) -> Value {
        json!({"estimate_ms": self.estimate_ms, "ceiling_ms": self.ceiling_ms,
            "suggestions": self.suggestions, "sample_mode": self.sample_mode})
    }
}

impl QueryRecord {
    /// The record as JSON (§2.3 keys, plus `result_digest` and `available`, and `refusal`
    /// for a query refused by cost).
    pub fn to_json(&self) -> Value {
        let r = |x: Option<f64>| x.map(|v| (v * 1000.0).round() / 1000.0);
        let mut v = json!({"id": self.id, "op": self.op, "ok": self.ok, "hash": self.hash,
            "result_digest": self.result_digest, "p50_ms": r(self.p50_ms), "p95_ms": r(self.p95_ms),
            "rows": self.rows, "error": self.error, "available": self.available,
            "timings_ms": self.timings_ms.iter().map(|t| (t * 1000.0).round() / 1000.0).collect::<Vec<_>>()});
        if let Some(refusal) = &self.refusal {
            v["refusal"] = refusal.to_json();
        }
        v
    }

    /// Refused by the cost model (`gr`): an answer at this scale needs a narrower call,
    /// not a fix.
    pub fn refused(&self) -> bool {
        self.error.as_deref() == Some("gr")
    }
}

/// The call's envelope, or its error code (`gr` for a cost refusal, with the refusal).
fn one(
    snap: Snapshot<'_>,
    q: &Query,
    opts: &CallOptions,
) -> Result<Value, (String, Option<Refusal>)> {
    call_operator(snap, q.op, &q.args, opts).map_err(|e| {
        if e.code == Code::Cost {
            ("gr".to_string(), Some(Refusal::of(&e.details)))
        } else {
            (e.code.as_str().to_string(), None)
        }
    })
}

/// Runs one query under `proto`: warm-ups, timed repetitions, hash of the answer.
pub fn run_query(snap: Snapshot<'_>, q: &Query, proto: Protocol) -> QueryRecord {
    run_query_under(snap, q, proto, &CallOptions::default())
}

/// [`run_query`] with the calls' options (their cost ceilings) given.
pub fn run_query_under(
    snap: Snapshot<'_>,
    q: &Query,
    proto: Protocol,
    opts: &CallOptions,
) -> QueryRecord {
    let mut rec = QueryRecord {
        id: q.id.into(),
        op: q.op.into(),
        ok: false,
        hash: None,
        result_digest: None,
        p50_ms: None,
        p95_ms: None,
        rows: None,
        error: None,
        refusal: None,
        timings_ms: Vec::new(),
        available: tgms_operators::lookup(q.op).is_some(),
        ours: q.ours,
    };
    if !rec.available {
        rec.error = Some("not_available".into());
        return rec;
    }
    let mut last = None;
    for _ in 0..proto.warmups {
        match one(snap, q, opts) {
            Ok(env) => last = Some(env),
            Err((code, refusal)) => {
                rec.error = Some(code);
                rec.refusal = refusal;
                return rec;
            }
        }
    }
    let mut timings = Vec::new();
    let mut reps = proto.reps_fast;
    let mut i = 0;
    while i < reps {
        let start = Instant::now();
        let r = one(snap, q, opts);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        match r {
            Ok(env) => last = Some(env),
            Err((code, refusal)) => {
                rec.error = Some(code);
                rec.refusal = refusal;
                return rec;
            }
        }
        if i == 0 && ms >= 1000.0 {
            reps = proto.reps_slow;
        }
        timings.push(ms);
        i += 1;
    }
    let env = last.unwrap_or(Value::Null);
    rec.hash = Some(registry_hash(&env));
    rec.result_digest = env["result_digest"].as_str().map(String::from);
    rec.rows = rows_of(&env);
    let mut sorted = timings.clone();
    sorted.sort_by(f64::total_cmp);
    rec.p50_ms = Some(median(&sorted));
    rec.p95_ms = Some(p95(&sorted));
    rec.timings_ms = timings;
    rec.ok = true;
    rec
}
