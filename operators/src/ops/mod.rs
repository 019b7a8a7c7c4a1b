//! The operators, one module each, and the row shapes they share. [`all`] is the list the
//! registry is built from: adding an operator = one module + one line there.

use crate::error::OpError;
use crate::registry::OpSpec;
use serde_json::{json, Value};
use tgms_engine::{EdgeVersion, NodeVersion, OPEN_END};

pub mod aggregate_events;
pub mod burst_detection;
pub mod co_active;
pub mod compute;
pub mod count_temporal_motifs;
pub mod count_temporal_motifs_sample;
pub mod diff_snapshots;
pub mod edge_pred;
pub mod entity_history;
pub mod find_temporal_motif_instances;
pub mod graph_metric_timeseries;
pub mod longest_chain;
pub mod match_pattern;
pub mod neighborhood_evolution;
pub mod pair_directions;
pub mod resolve_entities;
pub mod snapshot_subgraph;
pub mod state_at;
pub mod temporal_paths;
pub mod temporal_reachability;
pub mod tgraph;
pub mod version_history;
pub mod weighted_traverse;

/// Every registered operator.
pub fn all() -> Vec<OpSpec> {
    vec![
        entity_history::spec(),
        snapshot_subgraph::spec(),
        diff_snapshots::spec(),
        version_history::spec(),
        state_at::spec(),
        graph_metric_timeseries::spec(),
        burst_detection::spec(),
        neighborhood_evolution::spec(),
        resolve_entities::spec(),
        compute::spec(),
        aggregate_events::spec(),
        temporal_reachability::spec(),
        temporal_paths::spec(),
        count_temporal_motifs::spec(),
        find_temporal_motif_instances::spec(),
        co_active::spec(),
        weighted_traverse::spec(),
        match_pattern::spec(),
        longest_chain::spec(),
    ]
}

/// Shared validator **window** (§8): `t_a < t_b` for the `window` argument when non-null.
pub fn validate_window(args: &crate::args::Args) -> Result<(), OpError> {
    if let Some((a, b)) = args.window("window")? {
        if a >= b {
            return Err(OpError::invalid(format!(
                "window requires t_a < t_b, got [{a}, {b})"
            )));
        }
    }
    Ok(())
}

/// `MAX_BUCKETS` of §8.
pub const MAX_BUCKETS: i64 = 2000;

/// The buckets of a window and stride (§8): `n = ceil_div(t_b − t_a, stride)` buckets
/// `[t_a + i·stride, min(t_a + (i+1)·stride, t_b))`; more than `MAX_BUCKETS` →
/// `ERR(E_LIMIT, "bucket count <n> exceeds cap 2000; use stride >= <ceil_div(t_b − t_a, 2000)> for this window")`.
/// Requires `t_a < t_b` and `stride >= 1` (schema and window validator).
pub fn buckets(t_a: i64, t_b: i64, stride: i64) -> Result<Vec<(i64, i64)>, OpError> {
    use crate::cost::ceil_div;
    if t_a >= t_b || stride < 1 {
        return Err(OpError::internal("buckets need t_a < t_b and stride >= 1"));
    }
    let n = ceil_div(t_b - t_a, stride);
    if n > MAX_BUCKETS {
        return Err(OpError::new(
            crate::error::Code::Limit,
            format!(
                "bucket count {n} exceeds cap {MAX_BUCKETS}; use stride >= {} for this window",
                ceil_div(t_b - t_a, MAX_BUCKETS)
            ),
        ));
    }
    Ok((0..n)
        .map(|i| (t_a + i * stride, (t_a + (i + 1) * stride).min(t_b)))
        .collect())
}

/// Parses canonical JSON text stored by the engine (props, provenance_ref).
pub fn stored_json(text: &str) -> Result<Value, OpError> {
    tgms_engine::canon::parse(text)
        .map_err(|e| OpError::internal(format!("stored JSON text does not parse: {e}")))
}

/// `{eid, vid, src, dst, rel_type, vt_s, vt_e}` (snapshot and history edge rows).
pub fn edge_brief(e: &EdgeVersion<'_>) -> Value {
    let eid = e.eid();
    json!({"eid": eid, "vid": tgms_engine::ident::vid(&eid, e.tt_s(), e.vt_s()),
        "src": e.src(), "dst": e.dst(), "rel_type": e.rel_type(), "vt_s": e.vt_s(), "vt_e": e.vt_e()})
}

/// A fact row of a believed edge version with `tt_e` censored to `OPEN_END`:
/// `{eid, vid, src, dst, rel_type, disc, vt_s, vt_e, tt_s, tt_e, props, origin, reason,
/// ingestion_lag_us}`.
pub fn edge_fact(e: &EdgeVersion<'_>) -> Result<Value, OpError> {
    let eid = e.eid();
    Ok(
        json!({"eid": eid, "vid": tgms_engine::ident::vid(&eid, e.tt_s(), e.vt_s()),
        "src": e.src(), "dst": e.dst(), "rel_type": e.rel_type(), "disc": e.disc(),
        "vt_s": e.vt_s(), "vt_e": e.vt_e(), "tt_s": e.tt_s(), "tt_e": OPEN_END,
        "props": stored_json(e.props())?, "origin": e.origin().as_str(), "reason": e.reason(),
        "ingestion_lag_us": e.ingestion_lag_us()}),
    )
}

/// True when the version's valid interval contains `t`.
pub fn valid_at_node(n: &NodeVersion<'_>, t: i64) -> bool {
    n.vt_s() <= t && t < n.vt_e()
}

/// True when the version's valid interval contains `t`.
pub fn valid_at_edge(e: &EdgeVersion<'_>, t: i64) -> bool {
    e.vt_s() <= t && t < e.vt_e()
}

/// Sorts rows by `(vt_s, vid)` read from the row objects.
pub fn sort_vt_vid(rows: &mut [Value]) {
    rows.sort_by(|a, b| {
        let k = |r: &Value| (r["vt_s"].as_i64(), r["vid"].as_str().map(str::to_string));
        k(a).cmp(&k(b))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_rule_and_cap_message() {
        assert_eq!(
            buckets(0, 50, 20).unwrap(),
            vec![(0, 20), (20, 40), (40, 50)]
        );
        assert_eq!(buckets(0, 10, 10).unwrap(), vec![(0, 10)]);
        let e = buckets(0, 100_000, 1).unwrap_err();
        assert_eq!(
            crate::json::to_string(&e.payload()),
            r#"{"details":{},"error":"E_LIMIT","message":"bucket count 100000 exceeds cap 2000; use stride >= 50 for this window"}"#
        );
        assert_eq!(buckets(0, 2000, 1).unwrap().len(), 2000);
    }
}
