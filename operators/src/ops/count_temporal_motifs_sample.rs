//! `count_temporal_motifs` with `mode: "sample"` (D-O10 as revised by issue 25,
//! `docs/approximate.md`): the arguments beyond the spec (`epsilon`, `confidence`), their
//! validation, the payload of an approximate count — per motif `{estimate, ci_low, ci_high}`,
//! the achieved bound and the sampling facts — its cost estimate, and the sample-mode repair
//! a refused exact count offers. The estimator is [`crate::kernels::motif_sample`].
//!
//! **Cost estimate (registry-documented).** With `e_f` and `n` of the call,
//! `span = (vt_max − vt_min)·wf` (0 if unknown), the expected events of one node inside a
//! δ-window `d = 2·e_f·min(1, delta/span)/max(1, n_entities)` (1 when the span is unknown),
//! the local work of one drawn event `L = (1 + 2d)·(1 + 4d)` (its e2 candidates from two
//! nodes and, for each, e3 candidates from up to four: the named motifs' enumeration; the
//! catalogue motifs are counted in time linear in the e2 candidates, so `L` over-prices
//! them) and the drawn fraction
//! ```text
//! floor = min(1, 2000/e_f)                              (the pilot)
//! f = max(floor, rate)                                  (no epsilon: rate = sample_rate or 0.1)
//! f = min(cap, max(floor, 20·n0/e_f)),  n0 = (z/epsilon)^2   (epsilon: cap = sample_rate or 1;
//!                                                        one event in 20 assumed to start an
//!                                                        instance)
//! expansions = min(2·e_f + int(f · e_f · L), 2^40)      (the load and the incidence lists,
//!                                                        then the drawn events)
//! time_est_ms = int((n * 55.0 + expansions * c) / 1e6)
//! ```
//! where `c` is 10 (catalogue) or the §14 constant of the named motif formula. The estimate is
//! a planning aid: the adaptive rounds stop at ε or the rate cap, not at the estimate. A
//! refused exact count is offered sample mode only when `f <= 1/2` and the estimate is below
//! the exact call's.

use super::count_temporal_motifs::count_events;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::json::float;
use crate::kernels::motif_sample::{
    estimate, Estimate as Interval, SampleParams, Target, MIN_EVENTS,
};
use crate::kernels::motifs::Motif;
use crate::output::Output;
use crate::registry::{ArgDecl, Ctx};
use serde_json::{json, Map, Value};
use tgms_engine::Stats;

/// The method name recorded in the payload and the evidence descriptor.
pub const METHOD: &str = "first_event_poisson_ht_normal";
/// `confidence` when not given.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;
/// `sample_rate` when neither it nor `epsilon` is given (operators.md §14.4).
pub const DEFAULT_RATE: f64 = 0.1;
/// The ε and confidence of the sample-mode repair of a cost refusal.
pub const REPAIR_EPSILON: f64 = 0.05;

/// `epsilon` and `confidence` (absent unless given, so exact-mode `args_echo` bytes and
/// digests are unchanged).
pub fn sample_args() -> Vec<ArgDecl> {
    vec![
        ArgDecl::opt_absent(
            "epsilon",
            json!({"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1,
                "description": "sample mode: target relative half-width of the count's interval (e.g. 0.05); the sample grows until it is met or sample_rate is reached"}),
        ),
        ArgDecl::opt_absent(
            "confidence",
            json!({"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 1,
                "description": "sample mode: confidence level of the intervals (default 0.95)"}),
        ),
    ]
}

fn opt_f64(args: &Args, name: &str) -> Option<f64> {
    args.get(name).and_then(Value::as_f64)
}

/// Validator: `epsilon` / `confidence` belong to sample mode, and their ranges (also in the
/// schema, repeated here with a repair for callers that skip the schema step).
pub fn validate_sample(args: &Args) -> Result<(), OpError> {
    let sample = args.str("mode")? == "sample";
    for name in ["epsilon", "confidence"] {
        if opt_f64(args, name).is_some() && !sample {
            return Err(OpError::invalid(format!(
                "{name} applies to mode='sample' only; add \"mode\": \"sample\" or drop {name}"
            )));
        }
    }
    if let Some(e) = opt_f64(args, "epsilon") {
        if !(e > 0.0 && e <= 1.0) {
            return Err(OpError::invalid(format!(
                "epsilon must be a relative error in (0, 1], got {e}; e.g. 0.05 for ±5%"
            )));
        }
    }
    if let Some(c) = opt_f64(args, "confidence") {
        if !(c > 0.0 && c < 1.0) {
            return Err(OpError::invalid(format!(
                "confidence must lie in (0, 1), got {c}; e.g. 0.95 (a confidence of 1 needs the exact count: use mode='exact')"
            )));
        }
    }
    Ok(())
}

fn params(args: &Args) -> SampleParams {
    let epsilon = opt_f64(args, "epsilon");
    let rate =
        opt_f64(args, "sample_rate").unwrap_or(if epsilon.is_some() { 1.0 } else { DEFAULT_RATE });
    SampleParams {
        // Negative seeds are taken in two's complement.
        seed: args.int("seed").unwrap_or(0) as u64,
        epsilon,
        confidence: opt_f64(args, "confidence").unwrap_or(DEFAULT_CONFIDENCE),
        rate,
    }
}

fn interval_json(e: &Interval) -> Value {
    json!({"estimate": float(e.estimate), "ci_low": e.ci_low, "ci_high": e.ci_high})
}

/// The kernel of sample mode (after the mode check of §14.3 step 1).
pub fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let motif_name = args.str("motif")?;
    let target = match Motif::parse(motif_name) {
        Some(m) => Target::One(m),
        None => Target::All,
    };
    let delta = args.int("delta")?;
    let tie = super::count_temporal_motifs::tie_mode(args)?;
    // The exact cap of §14.3 step 3 is what sample mode exists to avoid.
    // Edge predicates hide the events they reject, as in exact mode.
    let pred = super::edge_pred::EdgePred::parse(args)?;
    let (ev, n, coerced) = count_events(ctx.snap, args, false, pred.as_ref())?;
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    let p = params(args);
    let r = estimate(&ev, n, delta, tie, target, &p);
    out.set("count", float(r.total.estimate));
    out.set("interval", interval_json(&r.total));
    if target == Target::All {
        let mut counts = Map::new();
        let mut intervals = Map::new();
        for (k, e) in r.per_motif.iter().enumerate() {
            let name = format!("M_{}_{}", k / 6 + 1, k % 6 + 1);
            counts.insert(name.clone(), float(e.estimate));
            intervals.insert(name, interval_json(e));
        }
        out.set("counts", Value::Object(counts));
        out.set("intervals", Value::Object(intervals));
    }
    out.set("n_events_in_window", json!(ev.len()));
    out.set("truncated", Value::Bool(false));
    out.set("approximate", Value::Bool(true));
    out.set("sample_rate", float(r.inclusion));
    out.set(
        "error_bound",
        json!({"relative": r.total.relative.map(float), "confidence": float(p.confidence),
            "epsilon": p.epsilon.map(float), "target_met": r.target_met}),
    );
    out.set(
        "sampling",
        json!({"method": METHOD, "seed": args.int("seed").unwrap_or(0),
            "events_total": r.events_total, "events_sampled": r.events_sampled,
            "z": float(r.z)}),
    );
    Ok(())
}

/// The fraction of window events drawn and the cost estimate of sample mode (module
/// header).
fn sample_estimate(args: &Args, stats: &Stats) -> (f64, Estimate) {
    let named = matches!(
        args.str("motif").ok().and_then(Motif::parse),
        Some(Motif::Named(_))
    );
    let c = if !named {
        10.0
    } else if args
        .get("node_filter")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
    {
        20.0
    } else {
        0.3
    };
    let n = i64::try_from(stats.n_edge_versions).unwrap_or(i64::MAX);
    let wf = crate::cost::window_fraction(args, stats);
    let e_f = (n as f64 * wf).max(1.0);
    let span = match (stats.vt_min, stats.vt_max) {
        (Some(lo), Some(hi)) if hi > lo => (hi - lo) as f64 * wf,
        _ => 0.0,
    };
    let delta = args.int("delta").unwrap_or(1).max(1) as f64;
    let d = if span > 0.0 {
        2.0 * e_f * (delta / span).min(1.0) / (stats.n_entities.max(1) as f64)
    } else {
        1.0
    };
    let local = (1.0 + 2.0 * d) * (1.0 + 4.0 * d);
    let floor = (MIN_EVENTS as f64 / e_f).min(1.0);
    let p = params(args);
    let f = match p.epsilon {
        None => p.rate.max(floor),
        Some(eps) => {
            let z = crate::kernels::normal_quantile::normal_quantile((1.0 + p.confidence) / 2.0)
                .unwrap_or(2.0);
            let n0 = (z / eps).powi(2);
            (20.0 * n0 / e_f).max(floor).min(p.rate.max(floor))
        }
    }
    .min(1.0);
    let expansions = (2.0 * e_f + f * e_f * local).min((1u64 << 40) as f64) as i64;
    (
        f,
        Estimate {
            rows_scanned_est: n,
            expansions_est: expansions,
            time_est_ms: Some(((n as f64 * 55.0 + expansions as f64 * c) / 1e6) as i64),
        },
    )
}

/// The cost estimate of sample mode (module header).
pub fn sample_cost(args: &Args, stats: &Stats) -> Estimate {
    sample_estimate(args, stats).1
}

/// Adds the sample-mode repair to the details of an `E_COST` refusal of an exact
/// `count_temporal_motifs` call when sampling is estimated cheaper:
/// `details.repair.sample_mode = {"args": {mode, epsilon, confidence}, "estimate": {...}}`
/// (other operators, sample-mode calls and calls where sampling would not save work:
/// unchanged).
pub fn add_cost_repair(op: &str, args: &Args, stats: &Stats, details: &mut Value) {
    if op != "count_temporal_motifs" || args.str("mode").ok() != Some("exact") {
        return;
    }
    let exact = super::count_temporal_motifs::cost(args, stats);
    let extra = json!({"mode": "sample", "epsilon": float(REPAIR_EPSILON),
        "confidence": float(DEFAULT_CONFIDENCE)});
    let mut sampled = args.clone();
    if let Value::Object(m) = &extra {
        for (k, v) in m {
            sampled.0.insert(k.clone(), v.clone());
        }
    }
    let (f, est) = sample_estimate(&sampled, stats);
    if f > 0.5 || est.expansions_est >= exact.expansions_est {
        return;
    }
    let Value::Object(d) = details else {
        return;
    };
    let repair = d.entry("repair").or_insert_with(|| json!({}));
    if let Value::Object(r) = repair {
        r.insert(
            "sample_mode".into(),
            json!({"args": extra, "estimate": est.to_json(),
                "note": "an approximate count with a 95% interval (docs/approximate.md)"}),
        );
    }
}
