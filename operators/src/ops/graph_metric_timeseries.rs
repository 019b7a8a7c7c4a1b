//! `graph_metric_timeseries` (O8, `operators.md` §16): one graph metric per `stride`-wide
//! bucket of a valid-time window.
//!
//! Work follows the window: the kernel reads only the versions whose valid interval overlaps
//! the window (engine `node_scan` / `edge_window`, storage order, no sort) once, and then
//! answers every bucket from per-call arrays — instant samples by binary search over sorted
//! `vt_s` / `vt_e` arrays, start counts by bucket index arithmetic; `edge_event_count` is the
//! engine's parallel per-bucket start count (`edge_start_counts`), no rows materialized. Nothing per bucket reads
//! the store, and nothing per row derives ids or allocates.

use crate::args::Args;
use crate::cost::{ceil_div, scan_estimate};
use crate::error::{Code, OpError};
use crate::json::float;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::HashMap;
use tgms_engine::{Identity, Version};

const MANUAL: &str = "One value per `stride`-wide bucket of `window`: `edge_event_count` (edges starting in the bucket), `node_count` / `active_edge_count` (sampled at the bucket start), `mean_out_degree`, `new_node_rate` (nodes whose first version starts in the bucket), `reciprocity` (share of directed pairs in the bucket also seen reversed). `stride` may also be a calendar unit (`day`, `iso_week`, `month`, `year`: buckets from local midnight of the unit's first day in `timezone`, an IANA name or an offset, default UTC). At most 2,000 buckets. For a single total use `stride = t_b − t_a` and read `rows[0].value`. Example: `{\"metric\": \"edge_event_count\", \"window\": {...}, \"stride\": 604800000000, \"limit\": 2000}`.";

/// `MAX_BUCKETS` of §8.
pub const MAX_BUCKETS: i64 = 2000;

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "graph_metric_timeseries",
        manual: MANUAL,
        args: vec![
            ArgDecl::req(
                "metric",
                json!({"type": "string", "enum": ["node_count", "edge_event_count",
                    "active_edge_count", "mean_out_degree", "new_node_rate", "reciprocity"]}),
            ),
            ArgDecl::req("window", frag::window()),
            ArgDecl::req("stride", frag::calendar_stride(false)),
            ArgDecl::opt_absent("timezone", frag::timezone()),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![
            crate::ops::validate_window,
            crate::calendar::validate_timezone,
        ],
        cost: Some(scan_estimate),
        coeff: 55.0,
        outputs: Outputs::default()
            .rows(
                "obj{t_a: int, t_b: int, value: number}",
                RowKey::Field("t_a"),
            )
            .field("n_buckets", "int")
            .build(),
        kernel,
    }
}

/// One bucket `[b_a, b_b)`.
pub type Bucket = (i64, i64);

/// The buckets of §8 for `[t_a, t_b)` and `stride` (`t_a < t_b`, `stride >= 1`), or the
/// §8 `E_LIMIT` refusal over `MAX_BUCKETS`.
pub fn buckets(t_a: i64, t_b: i64, stride: i64) -> Result<Vec<Bucket>, OpError> {
    let n = ceil_div(t_b - t_a, stride);
    if n > MAX_BUCKETS {
        return Err(OpError::new(
            Code::Limit,
            format!(
                "bucket count {n} exceeds cap 2000; use stride >= {} for this window",
                ceil_div(t_b - t_a, MAX_BUCKETS)
            ),
        ));
    }
    Ok((0..n)
        .map(|i| {
            let a = t_a + i * stride;
            (a, a.saturating_add(stride).min(t_b))
        })
        .collect())
}

/// A `stride` argument (integer >= 1 after validation). Integers beyond `i64` (or huge
/// integral floats) exceed every timestamp span, so they act as `i64::MAX`: one bucket.
pub fn stride_of(v: Option<&Value>) -> Option<i64> {
    let v = v?;
    v.as_i64()
        .or_else(|| v.as_u64().map(|_| i64::MAX))
        .or_else(|| v.as_f64().filter(|x| *x >= 1.0).map(|_| i64::MAX))
}

/// The window and buckets of a call (kernel: the cap is checked after the cost check).
pub fn window_buckets(args: &Args) -> Result<(i64, i64, Vec<Bucket>), OpError> {
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window is required"))?;
    let stride = stride_of(args.get("stride"))
        .ok_or_else(|| OpError::internal("stride is not an integer after validation"))?;
    Ok((t_a, t_b, buckets(t_a, t_b, stride)?))
}

/// Number of intervals `[s, e)` valid at `t`, from their sorted starts and sorted ends:
/// `#{s <= t} − #{e <= t}` (every interval ending by `t` started before it).
pub fn valid_count(starts: &[i64], ends: &[i64], t: i64) -> i64 {
    (starts.partition_point(|&s| s <= t) - ends.partition_point(|&e| e <= t)) as i64
}

/// Sorted starts and ends of intervals.
pub fn sorted_bounds(iv: impl Iterator<Item = (i64, i64)>) -> (Vec<i64>, Vec<i64>) {
    let (mut s, mut e): (Vec<i64>, Vec<i64>) = iv.unzip();
    s.sort_unstable();
    e.sort_unstable();
    (s, e)
}

/// The window and buckets of a call whose `stride` may be a calendar unit (in the call's
/// `timezone`); the stride when the buckets are uniform.
pub fn calendar_window_buckets(
    args: &Args,
) -> Result<(i64, i64, Vec<Bucket>, Option<i64>), OpError> {
    let Some(unit) = crate::calendar::stride_unit(args) else {
        let (t_a, t_b, bks) = window_buckets(args)?;
        return Ok((t_a, t_b, bks, stride_of(args.get("stride"))));
    };
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window is required"))?;
    let zone = crate::calendar::zone_arg(args)?;
    Ok((
        t_a,
        t_b,
        crate::calendar::buckets(t_a, t_b, unit, zone)?,
        None,
    ))
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let (t_a, t_b, bks, uniform) = calendar_window_buckets(args)?;
    let a = args.as_of_tt();
    let w = Some((t_a, t_b));
    // Bucket of a start inside the window.
    let bucket_of = |t: i64| match uniform {
        Some(stride) => ((t - t_a) / stride) as usize,
        None => crate::calendar::bucket_index(&bks, t),
    };
    let in_win = |t: i64| t_a <= t && t < t_b;
    let node_bounds = || sorted_bounds(snap.node_scan(w, a).iter().map(|n| (n.vt_s(), n.vt_e())));
    let edge_bounds = || sorted_bounds(snap.edge_window(w, a).iter().map(|e| (e.vt_s(), e.vt_e())));
    let values: Vec<Value> = match args.str("metric")? {
        "node_count" => {
            let (s, e) = node_bounds();
            bks.iter()
                .map(|b| json!(valid_count(&s, &e, b.0)))
                .collect()
        }
        "active_edge_count" => {
            let (s, e) = edge_bounds();
            bks.iter()
                .map(|b| json!(valid_count(&s, &e, b.0)))
                .collect()
        }
        "mean_out_degree" => {
            let (ns, ne) = node_bounds();
            let (es, ee) = edge_bounds();
            bks.iter()
                .map(|b| {
                    let n = valid_count(&ns, &ne, b.0);
                    let m = valid_count(&es, &ee, b.0);
                    float(if n == 0 { 0.0 } else { m as f64 / n as f64 })
                })
                .collect()
        }
        "edge_event_count" => match uniform {
            Some(stride) => snap
                .edge_start_counts(t_a, t_b, stride, a, None)?
                .into_iter()
                .map(Value::from)
                .collect(),
            // Calendar buckets differ in width: one count per bucket.
            None => bks
                .iter()
                .map(|&(ba, bb)| {
                    snap.edge_start_counts(ba, bb, bb - ba, a, None)
                        .map(|c| Value::from(c.first().copied().unwrap_or(0)))
                })
                .collect::<Result<_, _>>()?,
        },
        "new_node_rate" => {
            // Earliest start per uid among the versions overlapping the window; a uid whose
            // earliest such start lies in the window may still have an earlier version
            // ending before the window, which one point read per candidate settles.
            let mut first: HashMap<&str, i64> = HashMap::new();
            for n in snap.node_scan(w, a) {
                let f = first.entry(n.uid()).or_insert(i64::MAX);
                *f = (*f).min(n.vt_s());
            }
            let mut c = vec![0i64; bks.len()];
            for (uid, f) in first {
                if !in_win(f) {
                    continue;
                }
                let birth = snap
                    .versions_of(&Identity::Node(uid.to_string()), a)
                    .iter()
                    .filter_map(|v| match v {
                        Version::Node(n) => Some(n.vt_s()),
                        Version::Edge(_) => None,
                    })
                    .min()
                    .unwrap_or(f);
                if birth == f {
                    c[bucket_of(f)] += 1;
                }
            }
            c.into_iter().map(Value::from).collect()
        }
        "reciprocity" => {
            let mut pairs: Vec<Vec<(&str, &str)>> = vec![Vec::new(); bks.len()];
            for e in snap.edge_window(w, a) {
                if in_win(e.vt_s()) {
                    pairs[bucket_of(e.vt_s())].push((e.src(), e.dst()));
                }
            }
            pairs
                .into_iter()
                .map(|mut p| {
                    p.sort_unstable();
                    p.dedup();
                    if p.is_empty() {
                        return float(0.0);
                    }
                    let r = p
                        .iter()
                        .filter(|(s, d)| p.binary_search(&(*d, *s)).is_ok())
                        .count();
                    float(r as f64 / p.len() as f64)
                })
                .collect()
        }
        other => {
            return Err(OpError::internal(format!("unknown metric '{other}'")));
        }
    };
    let n = bks.len();
    let rows: Vec<Value> = bks
        .into_iter()
        .zip(values)
        .map(|((ba, bb), v)| json!({"t_a": ba, "t_b": bb, "value": v}))
        .collect();
    out.paged("rows", rows)?;
    out.set("n_buckets", json!(n));
    Ok(())
}
