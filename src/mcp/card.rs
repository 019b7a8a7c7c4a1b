//! The dataset card of the MCP server (agent-surface §9.3): extent and transaction-time
//! range as integers and ISO-8601 UTC, counts, rel types, and the normative two-clocks text
//! an agent must read before it chooses `as_of_tt` or a valid-time window.

use serde_json::{json, Value};
use tgms_engine::Stats;

/// The normative `clocks` text (agent-surface §9.3), verbatim.
pub const CLOCKS: &str = "This store has two clocks. Valid time (vt) is when a fact held in \
the world; every fact carries a half-open valid interval [vt_s, vt_e), and window, t_valid, at, \
t1 and t2 arguments are valid times. Transaction time (tt) is when the store believed a fact; \
it is assigned by the store at write time and never changes afterwards. A correction does not \
erase the old belief, it closes it: the as_of_tt argument replays any earlier belief state \
exactly, and results pinned to a past as_of_tt never change. All times are integer \
microseconds since 1970-01-01 UTC; 4611686018427387904 means open-ended.";

/// `us` (µs since 1970-01-01 UTC) as ISO-8601 UTC (`2004-04-15T07:56:01Z`, with the
/// fraction only when it is not zero); `"open"` for the open end.
/// The workspace's one formatter ([`tgms_operators::timefmt::iso_utc`]).
pub fn iso_utc(us: i64) -> String {
    tgms_operators::timefmt::iso_utc(us)
}

fn iso_opt(us: Option<i64>) -> Value {
    us.map_or(Value::Null, |t| json!(iso_utc(t)))
}

/// The card of a store with statistics `s`.
pub fn dataset_card(s: &Stats) -> Value {
    json!({
        "extent": {"vt_min": s.vt_min, "vt_max": s.vt_max},
        "extent_utc": {"vt_min": iso_opt(s.vt_min), "vt_max": iso_opt(s.vt_max)},
        "n_entities": s.n_entities,
        "n_node_versions": s.n_node_versions,
        "n_edge_versions": s.n_edge_versions,
        "rel_types": s.rel_type_counts.keys().collect::<Vec<_>>(),
        "rel_type_counts": s.rel_type_counts,
        "transaction_time": {
            "first_tt": s.first_tt, "last_tt": s.last_tt,
            "first_tt_utc": iso_opt(s.first_tt), "last_tt_utc": iso_opt(s.last_tt),
            "n_batches": s.n_batches, "n_failed_batches": s.n_failed_batches,
        },
        "clocks": CLOCKS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgms_engine::OPEN_END;

    #[test]
    fn iso_matches_known_instants() {
        // 1082015761 s is SNAP CollegeMsg's first message (2004-04-15 07:56:01 UTC).
        assert_eq!(iso_utc(1_082_015_761_000_000), "2004-04-15T07:56:01Z");
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(1_500), "1970-01-01T00:00:00.001500Z");
        assert_eq!(iso_utc(OPEN_END), "open");
        assert_eq!(iso_utc(-1_000_000), "1969-12-31T23:59:59Z");
    }
}
