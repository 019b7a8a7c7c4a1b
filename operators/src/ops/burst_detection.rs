//! `burst_detection` (O9, `operators.md` §17): buckets whose edge-event count is anomalous
//! against the preceding buckets (population z-score or ratio to the median).
//!
//! The series is the engine's per-bucket start counts (`edge_start_counts`: a parallel count
//! through the valid-time index, rel type resolved once per call), or for `node_activity` one
//! pass over the node's adjacency. Scores use exact integer sums (`i128`) so that the flag
//! decision, taken on `round9(score)`, is independent of summation order.

use super::graph_metric_timeseries::calendar_window_buckets;
use crate::args::Args;
use crate::cost::scan_estimate;
use crate::error::OpError;
use crate::json::{float, round9};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};

const MANUAL: &str = "Flags `stride`-wide buckets whose edge-event count is anomalous against the previous `w` buckets: `zscore` (population z-score ≥ `z`) or `ratio` (count / median ≥ `r`). `target.kind: \"node_activity\"` with `target.uid` restricts to one node's edges. Only flagged buckets are returned; count them with `rows_total`. `stride` may also be a calendar unit (`day`, `iso_week`, `month`, `year`: buckets from local midnight of the unit's first day in `timezone`, an IANA name or an offset, default UTC; buckets then differ in length and the counts are compared as they are). Example: `{\"target\": {\"kind\": \"edge_event_rate\"}, \"window\": {...}, \"stride\": 86400000000, \"limit\": 2000}` → first burst `rows[0]`.";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "burst_detection",
        manual: MANUAL,
        args: vec![
            ArgDecl::req(
                "target",
                json!({"type": "object", "additionalProperties": false,
                    "properties": {
                        "kind": {"type": "string", "enum": ["edge_event_rate", "node_activity"]},
                        "rel_type": {"type": ["string", "null"], "default": null},
                        "uid": {"type": ["string", "null"], "default": null}},
                    "required": ["kind"]}),
            )
            .uids(&[".uid"]),
            ArgDecl::req("window", frag::window()),
            ArgDecl::req("stride", frag::calendar_stride(false)),
            // Absent unless given, so the args_echo of existing calls is unchanged.
            ArgDecl::opt_absent("timezone", frag::timezone()),
            ArgDecl::opt(
                "method",
                json!({"type": "string", "enum": ["zscore", "ratio"]}),
                json!("zscore"),
            ),
            ArgDecl::opt(
                "params",
                json!({"type": "object", "additionalProperties": false,
                    "properties": {
                        "w": {"type": "integer", "minimum": 2, "maximum": 500, "default": 10},
                        "z": {"type": "number", "minimum": 0.1, "default": 3.0},
                        "r": {"type": "number", "minimum": 1.0, "default": 3.0}}}),
                json!({}),
            ),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![
            crate::ops::validate_window,
            validate_target,
            crate::calendar::validate_timezone,
        ],
        cost: Some(scan_estimate),
        coeff: 55.0,
        outputs: Outputs::default()
            .rows(
                "obj{t_a: int, t_b: int, value: float, score: float}",
                RowKey::Field("t_a"),
            )
            .field("n_buckets", "int")
            .build(),
        kernel,
    }
}

fn target_field<'a>(args: &'a Args, k: &str) -> Option<&'a str> {
    args.get("target")
        .and_then(|t| t.get(k))
        .and_then(Value::as_str)
}

fn validate_target(args: &Args) -> Result<(), OpError> {
    if target_field(args, "kind") == Some("node_activity")
        && target_field(args, "uid").is_none_or(str::is_empty)
    {
        return Err(OpError::invalid(
            "target.kind='node_activity' requires target.uid",
        ));
    }
    Ok(())
}

/// `score` of §17 for `x_b` against the history `h` (non-empty).
pub fn score(method: &str, h: &[i64], x: i64) -> f64 {
    let n = h.len() as i128;
    if method == "ratio" {
        let mut s = h.to_vec();
        s.sort_unstable();
        let m = s.len();
        let med = if m % 2 == 1 {
            s[m / 2] as f64
        } else {
            (s[m / 2 - 1] as f64 + s[m / 2] as f64) / 2.0
        };
        if med > 0.0 {
            x as f64 / med
        } else if x > 0 {
            1e9
        } else {
            0.0
        }
    } else {
        let s1: i128 = h.iter().map(|&v| v as i128).sum();
        let s2: i128 = h.iter().map(|&v| v as i128 * v as i128).sum();
        let v = n * s2 - s1 * s1;
        let num = (n * x as i128 - s1).abs();
        if v > 0 {
            num as f64 / (v as f64).sqrt()
        } else if num == 0 {
            0.0
        } else {
            1e9
        }
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    // Uniform buckets (`stride` µs) or calendar units of `timezone`.
    let (t_a, t_b, bks, uniform) = calendar_window_buckets(args)?;
    let bucket_of = |t: i64| match uniform {
        Some(stride) => ((t - t_a) / stride) as usize,
        None => crate::calendar::bucket_index(&bks, t),
    };
    let a = args.as_of_tt();
    let w = Some((t_a, t_b));
    let rel = target_field(args, "rel_type").filter(|r| !r.is_empty());
    let x: Vec<i64> = if target_field(args, "kind") == Some("node_activity") {
        let uid = target_field(args, "uid").unwrap_or("");
        if !snap.has_uid(uid) {
            return Err(OpError::unknown_uid(uid));
        }
        // A self loop is in both adjacency lists: count it once.
        let mut v = snap.out_edges(uid, w, a);
        v.extend(
            snap.in_edges(uid, w, a)
                .into_iter()
                .filter(|e| e.src() != uid),
        );
        let mut x = vec![0i64; bks.len()];
        for e in &v {
            let t = e.vt_s();
            if t_a <= t && t < t_b && rel.is_none_or(|r| e.rel_type() == r) {
                x[bucket_of(t)] += 1;
            }
        }
        x
    } else if let Some(stride) = uniform {
        // The buckets are those of `window_buckets` (same `t_a`, `stride`, count).
        snap.edge_start_counts(t_a, t_b, stride, a, rel)?
            .into_iter()
            .map(|c| c as i64)
            .collect()
    } else {
        // Calendar buckets differ in width: one count per bucket.
        bks.iter()
            .map(|&(ba, bb)| {
                snap.edge_start_counts(ba, bb, bb - ba, a, rel)
                    .map(|c| c.first().copied().unwrap_or(0) as i64)
            })
            .collect::<Result<_, _>>()?
    };
    let params = args.get("params");
    let p = |k: &str| params.and_then(|p| p.get(k)).and_then(Value::as_f64);
    let hw = params
        .and_then(|p| p.get("w"))
        .and_then(Value::as_i64)
        .unwrap_or(10) as usize;
    let method = args.str("method")?;
    let threshold = if method == "ratio" {
        p("r").unwrap_or(3.0)
    } else {
        p("z").unwrap_or(3.0)
    };
    let mut rows = Vec::new();
    for b in 1..x.len() {
        let n = b.min(hw);
        let s = score(method, &x[b - n..b], x[b]);
        let r = round9(s).ok_or_else(|| OpError::invalid("non-finite float in operator output"))?;
        if r >= threshold {
            rows.push(json!({"t_a": bks[b].0, "t_b": bks[b].1,
                "value": float(x[b] as f64), "score": float(r)}));
        }
    }
    out.paged("rows", rows)?;
    out.set("n_buckets", json!(bks.len()));
    Ok(())
}
