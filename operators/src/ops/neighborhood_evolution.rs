//! `neighborhood_evolution` (O10, `operators.md` §18): one node's undirected neighbours at
//! `t1` and at `t2`, and its incident-edge-version count every `stride` µs from `t1`.
//!
//! Reads only the node's adjacency overlapping `[t1, t2]` (cost follows the degree, never a
//! store scan); the degree series is answered by binary search over the sorted starts and
//! ends of those versions.

use super::graph_metric_timeseries::{sorted_bounds, stride_of, valid_count};
use crate::args::Args;
use crate::cost::{adjacency_estimate, ceil_div, point_read_estimate, Estimate};
use crate::error::{Code, OpError};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms_engine::EdgeVersion;

const MANUAL: &str = "Compares one node's neighbours (either direction, edges valid at the instant) at `t1` and `t2`: `neighbors_gained`, `neighbors_lost` (uid lists, capped at `limit`; exact sizes in the `_total` fields), and `degree_series`, its incident-edge count every `stride` µs from `t1`. `stride` may also be a calendar unit (`day`, `iso_week`, `month`, `year`, local to `timezone`, an IANA name or an offset, default UTC): the series then has one point at `t1` and one at the start of each later unit before `t2`, `stride` is null and `stride_unit` names the unit. For the degree at one instant `t`: `{\"uid\": ..., \"t1\": t, \"t2\": t + 2, \"stride\": 2}` and read `degree_series[0].degree`.";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "neighborhood_evolution",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("uid", frag::uid()).uids(&[""]),
            ArgDecl::req("t1", frag::timestamp()),
            ArgDecl::req("t2", frag::timestamp()),
            common::as_of_tt(),
            ArgDecl::opt("stride", frag::calendar_stride(true), Value::Null),
            // Absent unless given, so the args_echo of existing calls is unchanged.
            ArgDecl::opt_absent("timezone", frag::timezone()),
            common::limit(),
        ],
        validators: vec![validate_t1_t2, crate::calendar::validate_timezone],
        cost: Some(cost),
        coeff: 170.0,
        outputs: Outputs::default()
            .capped("neighbors_gained", "uid", RowKey::Row, false)
            .capped("neighbors_lost", "uid", RowKey::Row, false)
            .field("degree_series", "list<obj{t: int, degree: int}>")
            .field("stride", "int|null")
            .field("stride_unit", "str")
            .field("truncated", "bool")
            .conditional(&["stride_unit"])
            .build(),
        kernel,
    }
}

/// The node's versions and its adjacency (`cost::adjacency_estimate`, one hop).
fn cost(args: &Args, stats: &tgms_engine::Stats) -> Estimate {
    let base = point_read_estimate(args, stats);
    let adj = adjacency_estimate(stats, 1, 1);
    Estimate::new(
        base.rows_scanned_est.saturating_add(adj.rows_scanned_est),
        0,
    )
}

fn validate_t1_t2(args: &Args) -> Result<(), OpError> {
    let (t1, t2) = (args.int("t1")?, args.int("t2")?);
    if t1 >= t2 {
        return Err(OpError::invalid(format!(
            "neighborhood_evolution requires t1 < t2, got t1={t1}, t2={t2}"
        )));
    }
    Ok(())
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let uid = args.str("uid")?;
    let (t1, t2) = (args.int("t1")?, args.int("t2")?);
    let a = args.as_of_tt();
    if !snap.has_uid(uid) {
        return Err(OpError::unknown_uid(uid));
    }
    // The series instants: every `stride` µs from t1, or the starts of the calendar units
    // (t1 itself first) of `timezone`.
    let unit = crate::calendar::stride_unit(args);
    let stride = stride_of(args.get("stride")).unwrap_or(((t2 - t1) / 20).max(1));
    let instants: Vec<i64> = match unit {
        Some(u) => crate::calendar::buckets(t1, t2, u, crate::calendar::zone_arg(args)?)?
            .into_iter()
            .map(|b| b.0)
            .collect(),
        None => {
            let n = ceil_div(t2 - t1, stride);
            if n > 2000 {
                return Err(OpError::new(
                    Code::Limit,
                    format!("bucket count {n} exceeds cap 2000; increase stride"),
                ));
            }
            (0..n).map(|i| t1 + i * stride).collect()
        }
    };
    // Versions valid at some instant of [t1, t2]; a self loop is in both lists, kept once.
    let w = Some((t1, t2.saturating_add(1)));
    let outs = snap.out_edges(uid, w, a);
    let ins: Vec<EdgeVersion<'_>> = snap
        .in_edges(uid, w, a)
        .into_iter()
        .filter(|e| e.src() != uid)
        .collect();
    let neighbours = |t: i64| -> BTreeSet<&str> {
        let valid = |e: &&EdgeVersion<'_>| e.vt_s() <= t && t < e.vt_e();
        outs.iter()
            .filter(valid)
            .map(|e| e.dst())
            .chain(ins.iter().filter(valid).map(|e| e.src()))
            .filter(|&o| o != uid)
            .collect()
    };
    let (n1, n2) = (neighbours(t1), neighbours(t2));
    let gained: Vec<Value> = n2.difference(&n1).map(|u| json!(u)).collect();
    let lost: Vec<Value> = n1.difference(&n2).map(|u| json!(u)).collect();
    let (s, e) = sorted_bounds(outs.iter().chain(ins.iter()).map(|e| (e.vt_s(), e.vt_e())));
    let series: Vec<Value> = instants
        .into_iter()
        .map(|t| json!({"t": t, "degree": valid_count(&s, &e, t)}))
        .collect();
    let g = out.capped("neighbors_gained", gained)?;
    let l = out.capped("neighbors_lost", lost)?;
    out.set("degree_series", Value::Array(series));
    // The echo of a given integer stride is the argument itself (an integer beyond i64
    // stays as given, keeping the `int` contract); otherwise the stride used.
    match (args.get("stride"), unit) {
        (Some(v), None) if v.is_u64() || v.is_i64() => out.set("stride", v.clone()),
        (Some(Value::String(u)), Some(_)) => {
            out.set("stride", Value::Null);
            out.set("stride_unit", json!(u));
        }
        _ => out.set("stride", json!(stride)),
    }
    out.set("truncated", Value::Bool(g || l));
    Ok(())
}
