//! `count_temporal_motifs` (O6, `operators.md` §14, §14.5, D-O10, D-O11): δ-temporal motif
//! counts over the window's events — the five named motifs of §14.2, any catalogue motif
//! `M_i_j`, or the whole 6×6 catalogue (`motif: "all"`, the 36 values in `counts`) — in
//! either tie mode, by the linear-time counters of [`crate::kernels::motifs`] (no triple is
//! enumerated). Sample mode (`mode: "sample"`, approximate counts with an interval) is
//! [`super::count_temporal_motifs_sample`].
//!
//! Also holds what `find_temporal_motif_instances` (§15) shares: argument declarations, the
//! event selection of §14.1, the kernel order of §14.3 and the §14 cost formula.
//!
//! **Catalogue cost estimator (§14.5, registry-documented).** With `n = n_edge_versions`,
//! `e_f` the estimated window events after the filter exactly as in the §14 formula, and
//! `mean_deg = max(1.0, n / max(1, n_entities))`:
//! ```text
//! sort       = int(e_f * log2(e_f + 2))                 (ordering the events by (t, eid))
//! passes     = 6 * e_f                                  (pair, star and triangle counter passes)
//! triangles  = int(e_f * min(mean_deg / 2, sqrt(e_f)) / 2)
//!                                                       (static triangle listing: in degree
//!                                                        order an edge scans about half the
//!                                                        mean degree, merged at ~½ unit each)
//! expansions = min(sort + passes + triangles, 2^40)
//! rows_scanned_est = n ; expansions_est = expansions
//! time_est_ms = int((n * 55.0 + expansions * 10.0) / 1e6)
//! ```
//! A single catalogue motif runs only its class's pass but is priced like `"all"`.
//! Calibration (`tgms bench run --scale 1000000`, 2-core VM): `motif.all36` estimates 565 ms
//! and measured 640 ms p50; at 10M it estimates ~6.0 s, under the default 10 s ceiling, so
//! the whole-store catalogue count is answered rather than refused.

use super::edge_pred::{apply_opt, candidates, priced, validate_prop_filter, EdgePred};
use super::tgraph::{sat, Graph};
use super::validate_window;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::kernels::motifs::{
    count_all_ordered, count_motif_ordered, matrix_total, Motif, MotifEvent, MAX_EVENTS,
};
use crate::kernels::reciprocal::count_reciprocal;
use crate::kernels::{TEdge, TieMode};
use crate::output::Output;
use crate::registry::{common, ArgDecl, Ctx, OpSpec, Outputs};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use tgms_engine::{EdgeVersion, Stats};

const MANUAL: &str = "Counts δ-temporal motifs: time-ordered triples of edge events spanning at most `delta` µs, matching one of five shapes (cyclic triangle u→v→w→u, feed-forward triangle, ping-pong u→v→u→v, out-star, 3-path) with distinct nodes. Expensive on large windows: on big graphs pass a `node_filter` (≤ 10,000 uids, e.g. `{\"$ref\": \"s2.rows[*].uid\"}`) — the guardrail will refuse otherwise. Also counts the 36 two- and three-node motifs `M_1_1` … `M_6_6` of Paranjape, Benson and Leskovec in near-linear time (`motif: \"all\"` returns all 36 in `counts`); `tie_mode: \"strict\"` admits only triples with strictly increasing times. `M_2event_reciprocal` counts the two-event δ-motif: pairs of events u→v then v→u within `delta` (not part of `\"all\"`). `mode: \"sample\"` estimates instead of counting (for windows too large to count): window events drawn independently by `seed` have the instances they start counted exactly, scaled up by the draw probability — an unbiased estimate with a normal (asymptotic) confidence interval per motif (`interval`, `intervals`); `epsilon` (e.g. 0.05) grows the sample until the count's relative half-width is met, `confidence` sets the level (default 0.95). The answer is marked approximate: claims on it are at most weakly supported and never exact (docs/approximate.md). Example: `{\"motif\": \"M_triangle_cyclic\", \"delta\": 86400000000, \"window\": {...}, \"node_filter\": {\"$ref\": \"s2.rows[*].uid\"}}` → `count`. Edge predicates: `prop_filter` (`{prop, cmp, value}` as in `aggregate_events`; events whose property is absent or of another type are excluded and counted in `prop_coercion`) and `self_loops` (`exclude` or `only`) hide the events they reject from the pattern.";

/// The five named motifs in the order of §14.
pub const NAMED: [&str; 5] = [
    "M_2node_pingpong",
    "M_path_3",
    "M_star_out_3",
    "M_triangle_acyclic_1",
    "M_triangle_cyclic",
];

/// `M_1_1` … `M_6_6`, row-major.
pub fn catalogue_names() -> Vec<String> {
    (1..=6)
        .flat_map(|i| (1..=6).map(move |j| format!("M_{i}_{j}")))
        .collect()
}

/// The two-event δ-motif (u→v then v→u within δ) of [`count_reciprocal`]; counted by
/// `count_temporal_motifs` only, never part of `"all"`.
pub const RECIPROCAL: &str = "M_2event_reciprocal";

/// The `motif` enum: named motifs, then the catalogue, then (when `with_all`, i.e. for
/// `count_temporal_motifs`) `"all"` and [`RECIPROCAL`].
pub fn motif_enum(with_all: bool) -> Value {
    let mut v: Vec<Value> = NAMED.iter().map(|s| json!(s)).collect();
    v.extend(catalogue_names().into_iter().map(Value::from));
    if with_all {
        v.push(json!("all"));
        v.push(json!(RECIPROCAL));
    }
    json!({"type": "string", "enum": v})
}

/// The arguments shared by §14 and §15 (without `limit`/`cursor`).
pub fn motif_args(with_all: bool) -> Vec<ArgDecl> {
    vec![
        ArgDecl::req("motif", motif_enum(with_all)),
        ArgDecl::req(
            "delta",
            crate::registry::frag::duration(false, "max span t(e3) − t(e1)"),
        ),
        ArgDecl::req("window", crate::registry::frag::window()),
        ArgDecl::opt(
            "node_filter",
            json!({"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 10000}),
            Value::Null,
        )
        .uids(&["[*]"]),
        common::as_of_tt(),
        ArgDecl::opt(
            "mode",
            json!({"type": "string", "enum": ["exact", "sample"]}),
            json!("exact"),
        ),
        ArgDecl::opt("seed", json!({"type": ["integer", "null"]}), Value::Null),
        ArgDecl::opt(
            "sample_rate",
            json!({"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1}),
            Value::Null,
        ),
        ArgDecl::opt(
            "tie_mode",
            json!({"type": "string", "enum": ["ordered", "strict"]}),
            json!("ordered"),
        ),
    ]
    .into_iter()
    .chain(super::edge_pred::pattern_args())
    .collect()
}

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "count_temporal_motifs",
        manual: MANUAL,
        args: motif_args(true)
            .into_iter()
            .chain(super::count_temporal_motifs_sample::sample_args())
            .collect(),
        validators: vec![
            validate_window,
            validate_prop_filter,
            super::count_temporal_motifs_sample::validate_sample,
        ],
        cost: Some(cost),
        coeff: 0.0,
        outputs: Outputs::default()
            .field("count", "number")
            .field("counts", &counts_contract())
            .field("n_events_in_window", "int")
            .field("truncated", "bool")
            .field("approximate", "bool")
            .field("sample_rate", "float")
            .field(
                "error_bound",
                "obj{relative: float|null, confidence: float, epsilon: float|null, target_met: bool|null}",
            )
            .field("interval", INTERVAL)
            .field("intervals", &per_motif_contract(INTERVAL))
            .field(
                "sampling",
                "obj{method: str, seed: int, events_total: int, events_sampled: int, z: float}",
            )
            .field("prop_coercion", "obj{*}")
            .conditional(&[
                "counts",
                "approximate",
                "sample_rate",
                "error_bound",
                "prop_coercion",
                "interval",
                "intervals",
                "sampling",
            ])
            .build(),
        kernel,
    }
}

/// One approximate estimate with its interval (sample mode).
const INTERVAL: &str = "obj{estimate: float, ci_low: int, ci_high: int}";

/// Exact counts are integers; sample mode's estimates are floats.
fn counts_contract() -> String {
    per_motif_contract("number")
}

fn per_motif_contract(ty: &str) -> String {
    let fields: Vec<String> = catalogue_names()
        .into_iter()
        .map(|n| format!("{n}: {ty}"))
        .collect();
    format!("obj{{{}}}", fields.join(", "))
}

/// `(n, e_f)` of the §14 formula.
fn filtered_events_est(args: &Args, stats: &Stats) -> (i64, i64, f64) {
    let n = sat(stats.n_edge_versions);
    let wf = crate::cost::window_fraction(args, stats);
    let mut e_f = (n as f64 * wf) as i64;
    if let Some(f) = args.get("node_filter").and_then(Value::as_array) {
        if !f.is_empty() {
            let mean_deg = (n as f64 / sat(stats.n_entities).max(1) as f64).max(1.0);
            e_f = e_f.min((f.len() as f64 * mean_deg * wf) as i64 + 1);
        }
    }
    (n, e_f, wf)
}

fn filter_non_empty(args: &Args) -> bool {
    args.get("node_filter")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

/// The cost formula of §14 (the five named motifs; every motif of §15), with the
/// `prop_filter` surcharge of [`priced`].
pub fn named_cost(args: &Args, stats: &Stats) -> Estimate {
    priced(
        named_cost_unfiltered(args, stats),
        args,
        candidates(args, stats),
    )
}

fn named_cost_unfiltered(args: &Args, stats: &Stats) -> Estimate {
    let (n, e_f, wf) = filtered_events_est(args, stats);
    let span = match (stats.vt_min, stats.vt_max) {
        (Some(lo), Some(hi)) if hi > lo => ((hi - lo) as f64 * wf) as i64,
        _ => 0,
    };
    let delta = args.int("delta").unwrap_or(1);
    let density = if span > 0 {
        (delta as f64 / span as f64).min(1.0)
    } else {
        1.0
    };
    let sq = (e_f as i128 * e_f as i128) as f64;
    let expansions = ((sq * density / 2.0) as i64).min(1 << 40);
    let c = if filter_non_empty(args) { 20.0 } else { 0.3 };
    Estimate {
        rows_scanned_est: n,
        expansions_est: expansions,
        time_est_ms: Some(((n as f64 * 55.0 + expansions as f64 * c) / 1e6) as i64),
    }
}

/// The catalogue estimator documented in the module header, with the `prop_filter`
/// surcharge of [`priced`].
pub fn catalogue_cost(args: &Args, stats: &Stats) -> Estimate {
    priced(
        catalogue_cost_unfiltered(args, stats),
        args,
        candidates(args, stats),
    )
}

fn catalogue_cost_unfiltered(args: &Args, stats: &Stats) -> Estimate {
    let (n, e_f, _) = filtered_events_est(args, stats);
    let mean_deg = (n as f64 / sat(stats.n_entities).max(1) as f64).max(1.0);
    let ef = e_f as f64;
    let sort = (ef * (ef + 2.0).log2()) as i64;
    let passes = e_f.saturating_mul(6);
    let tri = (ef * (mean_deg / 2.0).min(ef.sqrt()) / 2.0) as i64;
    let expansions = sort.saturating_add(passes).saturating_add(tri).min(1 << 40);
    Estimate {
        rows_scanned_est: n,
        expansions_est: expansions,
        time_est_ms: Some(((n as f64 * 55.0 + expansions as f64 * 10.0) / 1e6) as i64),
    }
}

pub(crate) fn cost(args: &Args, stats: &Stats) -> Estimate {
    if args.str("mode").ok() == Some("sample") {
        return super::count_temporal_motifs_sample::sample_cost(args, stats);
    }
    match args.str("motif").ok().and_then(Motif::parse) {
        Some(Motif::Named(_)) => named_cost(args, stats),
        _ => catalogue_cost(args, stats),
    }
}

/// `EXACT_EVENT_CAP` of §14.3 step 3.
pub const EXACT_EVENT_CAP: usize = 5_000_000;

/// The selected events of §14.1 with the graph they come from.
pub struct Events<'s> {
    /// The selected edge versions in event order, with their dense node ids and kernel edges.
    pub graph: Graph<'s>,
    /// The events (window start, filter applied): `events[i]` is `graph.versions[i]`.
    pub events: Vec<TEdge>,
    /// The call's edge predicate (`prop_filter`, `self_loops`), if any.
    pub pred: Option<EdgePred>,
    /// Events the predicate dropped because the property was absent or of another type
    /// than its literal (`prop_coercion`); 0 without a predicate.
    pub coerced: u64,
}

/// §14.3 steps 1–3 and §14.1 up to the selection: the believed edge versions with
/// `t_a <= vt_s < t_b` and, with a `node_filter`, both endpoints in it, in the `(vt_s, eid)`
/// order of [`tgms_engine::Snapshot::edge_scan`] (= the total event order of §14.1).
fn scan<'s>(
    snap: tgms_engine::Snapshot<'s>,
    args: &Args,
    cap_applies: bool,
) -> Result<Vec<EdgeVersion<'s>>, OpError> {
    let (filter, (t_a, t_b)) = selection(snap, args)?;
    // With a filter only edges between filter nodes can be events: read them from the
    // filter nodes' adjacency (`Touch::Both`: src and dst in the filter) instead of scanning
    // the window.
    let versions: Vec<EdgeVersion<'s>> = snap
        .edge_scan(&tgms_engine::EdgeScan {
            as_of_tt: args.as_of_tt(),
            vt_window: Some((t_a, t_b)),
            rel_types: None,
            touching: filter.as_deref().map(|f| (f, tgms_engine::Touch::Both)),
        })
        .into_iter()
        .filter(|e| t_a <= e.vt_s() && e.vt_s() < t_b)
        .collect();
    event_caps(versions.len(), cap_applies && filter.is_none())?;
    Ok(versions)
}

/// The §14.3 step-3 cap (when it applies) and the kernel's event limit.
fn event_caps(n: usize, cap_applies: bool) -> Result<(), OpError> {
    if cap_applies && n > EXACT_EVENT_CAP {
        return Err(OpError::invalid(
            "exact motif matching needs node_filter or <= 5000000 window events; add a node_filter or use mode='sample'",
        ));
    }
    if n > MAX_EVENTS {
        return Err(OpError::invalid(format!(
            "motif counting takes at most {MAX_EVENTS} window events; narrow the window or add a node_filter"
        )));
    }
    Ok(())
}

/// A motif call's node filter and window.
type Selection = (Option<Vec<String>>, (i64, i64));

/// The checked node filter (every uid known) and window of a motif call.
fn selection(snap: tgms_engine::Snapshot<'_>, args: &Args) -> Result<Selection, OpError> {
    let filter = args.str_list("node_filter")?;
    if let Some(f) = &filter {
        let mut unknown: Vec<&String> = f.iter().filter(|u| !snap.has_uid(u)).collect();
        unknown.sort();
        if let Some(u) = unknown.first() {
            return Err(OpError::unknown_uid(u));
        }
    }
    let window = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing"))?;
    Ok((filter, window))
}

/// §14.3 steps 1–3 and §14.1: the window's events after the filter.
pub fn events<'s>(
    snap: tgms_engine::Snapshot<'s>,
    args: &Args,
    cap_applies: bool,
) -> Result<Events<'s>, OpError> {
    // §14.3 step 1: only the count estimates; an instance list cannot be sampled.
    if args.str("mode")? == "sample" {
        return Err(OpError::invalid(
            "mode='sample' is only available for count_temporal_motifs",
        ));
    }
    let pred = EdgePred::parse(args)?;
    let (versions, coerced) = apply_opt(pred.as_ref(), scan(snap, args, cap_applies)?)?;
    let graph = Graph::from_versions(versions);
    let events = graph.edges.clone();
    Ok(Events {
        graph,
        events,
        pred,
        coerced,
    })
}

/// The events to count, `(t, src, dst)` in the scan order of §14.1: without an edge
/// predicate straight from [`tgms_engine::Snapshot::start_events`] or, with a node filter,
/// [`tgms_engine::Snapshot::start_events_among`] (16 bytes per event, no version views),
/// with one from the filtered scan. Also the events the
/// predicate dropped as coerced.
pub(crate) fn count_events(
    snap: tgms_engine::Snapshot<'_>,
    args: &Args,
    cap_applies: bool,
    pred: Option<&EdgePred>,
) -> Result<(Vec<MotifEvent>, usize, u64), OpError> {
    let (filter, (t_a, t_b)) = selection(snap, args)?;
    let mut coerced = 0;
    let ev: Vec<MotifEvent> = if pred.is_none() {
        // Without a predicate no version is needed, only time and endpoints: with a node
        // filter from the filter nodes' out-edges, else from the window.
        let ev = match &filter {
            Some(f) => snap.start_events_among(t_a, t_b, args.as_of_tt(), f),
            None => snap.start_events(t_a, t_b, args.as_of_tt()),
        };
        event_caps(ev.len(), cap_applies && filter.is_none())?;
        ev.into_iter()
            .map(|e| MotifEvent {
                t: e.t,
                src: e.src,
                dst: e.dst,
            })
            .collect()
    } else {
        let (versions, c) = apply_opt(pred, scan(snap, args, cap_applies)?)?;
        coerced = c;
        versions
            .par_iter()
            .with_min_len(4096)
            .map(|e| MotifEvent {
                t: e.vt_s(),
                src: e.src_id(),
                dst: e.dst_id(),
            })
            .collect()
    };
    let (ev, n) = dense_ids(ev);
    Ok((ev, n, coerced))
}

/// The events over dense node ids numbered by ascending snapshot-local id (counts do not
/// depend on the numbering, and no uid string is touched), with the number of ids. The
/// renumbering table is sized by the input: a direct table when the id space is at most a
/// few times the event count, else binary search over the sorted distinct ids.
fn dense_ids(mut ev: Vec<MotifEvent>) -> (Vec<MotifEvent>, usize) {
    let Some(max_id) = ev
        .par_iter()
        .with_min_len(1 << 16)
        .map(|e| e.src.max(e.dst))
        .max()
    else {
        return (ev, 0);
    };
    if (max_id as usize) < 4 * ev.len() {
        // The ids seen, marked per worker over its share of the events, then merged.
        let share = ev
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1 << 16);
        let marks: Vec<Vec<u8>> = ev
            .par_chunks(share)
            .map(|part| {
                let mut seen = vec![0u8; max_id as usize + 1];
                for e in part {
                    seen[e.src as usize] = 1;
                    seen[e.dst as usize] = 1;
                }
                seen
            })
            .collect();
        let mut dense = vec![0u32; max_id as usize + 1];
        for (x, d) in dense.iter_mut().enumerate() {
            *d = u32::from(marks.iter().any(|m| m[x] != 0));
        }
        drop(marks);
        let mut n = 0u32;
        for d in dense.iter_mut() {
            let seen = *d;
            *d = n;
            n += seen;
        }
        ev.par_iter_mut().with_min_len(4096).for_each(|e| {
            e.src = dense[e.src as usize];
            e.dst = dense[e.dst as usize];
        });
        (ev, n as usize)
    } else {
        let mut ids: Vec<u32> = ev.iter().flat_map(|e| [e.src, e.dst]).collect();
        ids.sort_unstable();
        ids.dedup();
        let id = |x: u32| ids.partition_point(|&y| y < x) as u32;
        for e in ev.iter_mut() {
            e.src = id(e.src);
            e.dst = id(e.dst);
        }
        (ev, ids.len())
    }
}

/// The tie mode argument.
pub fn tie_mode(args: &Args) -> Result<TieMode, OpError> {
    Ok(if args.str("tie_mode")? == "strict" {
        TieMode::Strict
    } else {
        TieMode::Ordered
    })
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    if args.str("mode")? == "sample" {
        return super::count_temporal_motifs_sample::kernel(ctx, args, out);
    }
    let motif_name = args.str("motif")?;
    let motif = Motif::parse(motif_name);
    // The step-3 cap applies to the five named motifs only (§14.5).
    let named = matches!(motif, Some(Motif::Named(_)));
    let delta = args.int("delta")?;
    let tie = tie_mode(args)?;
    let pred = EdgePred::parse(args)?;
    let (ev, n, coerced) = count_events(ctx.snap, args, named, pred.as_ref())?;
    match motif {
        None if motif_name == RECIPROCAL => {
            out.set("count", json!(count_reciprocal(&ev, delta, tie)));
        }
        Some(m) => {
            let c = count_motif_ordered(&ev, n, delta, tie, m);
            out.set("count", json!(c));
        }
        None => {
            let m = count_all_ordered(&ev, n, delta, tie);
            let mut counts = Map::new();
            for (i, row) in m.iter().enumerate() {
                for (j, c) in row.iter().enumerate() {
                    counts.insert(format!("M_{}_{}", i + 1, j + 1), json!(c));
                }
            }
            out.set("count", json!(matrix_total(&m)));
            out.set("counts", Value::Object(counts));
        }
    }
    out.set("n_events_in_window", json!(ev.len()));
    out.set("truncated", Value::Bool(false));
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    Ok(())
}
