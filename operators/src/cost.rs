//! The cost model of `operators.md` §7: estimates, the attached time estimate, the shared
//! estimators and the ceiling check with its refusal payload.

use crate::args::Args;
use crate::error::{Code, OpError};
use serde_json::{json, Map, Value};
use tgms_engine::Stats;

/// A cost estimate (§7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Estimate {
    /// Rows the call is estimated to scan.
    pub rows_scanned_est: i64,
    /// Traversal expansions the call is estimated to make.
    pub expansions_est: i64,
    /// Estimated time (ms), attached by `with_time` when the estimator gives none.
    pub time_est_ms: Option<i64>,
}

/// The default of [`Ceilings::max_reducer_rows`] and [`Ceilings::max_total_rows`].
pub const DEFAULT_ROW_BUDGET: i64 = 10_000_000;

/// The default of [`Ceilings::max_reducer_bytes`]: 4 GiB, a sixth of the 24 GiB machine the
/// project is built and measured on.
pub const DEFAULT_REDUCER_BYTES: i64 = 4 << 30;

impl Estimate {
    /// An estimate without a time estimate.
    pub fn new(rows_scanned_est: i64, expansions_est: i64) -> Self {
        Estimate {
            rows_scanned_est,
            expansions_est,
            time_est_ms: None,
        }
    }

    /// Attaches `time_est_ms = int((rows + expansions) * coeff * scale / 1e6)` when absent,
    /// evaluated left to right in binary64 (`scale`: [`Ceilings::time_coeff_scale`]).
    pub fn with_time(mut self, coeff: f64, scale: f64) -> Self {
        if self.time_est_ms.is_none() {
            let units = self.rows_scanned_est.saturating_add(self.expansions_est) as f64;
            let t = units * coeff * scale / 1e6;
            self.time_est_ms = Some(if t.is_finite() { t as i64 } else { i64::MAX });
        }
        self
    }

    /// `{"rows_scanned_est", "expansions_est", "time_est_ms"?}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("rows_scanned_est".into(), json!(self.rows_scanned_est));
        m.insert("expansions_est".into(), json!(self.expansions_est));
        if let Some(t) = self.time_est_ms {
            m.insert("time_est_ms".into(), json!(t));
        }
        Value::Object(m)
    }
}

/// Per-key ceilings (§7.3); `None` = no ceiling for that key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ceilings {
    /// Most estimated rows scanned a call may have.
    pub rows_scanned_est: Option<i64>,
    /// Most estimated expansions a call may have.
    pub expansions_est: Option<i64>,
    /// Most estimated time (ms) a call may have.
    pub time_est_ms: Option<i64>,
    /// The executor's row budget for a `compute` step that reads an earlier step's complete
    /// result (plans-and-claims §6.2, revision 2026-12): a larger complete result is refused
    /// with `E_LIMIT` and a narrowing repair.
    pub max_reducer_rows: i64,
    /// The executor's memory budget for the same step: the estimated peak bytes of the
    /// complete result held as JSON values (estimated from the rows of its first page before
    /// the producing call is re-run; `tgms_verifier::memory`). A larger estimate is refused
    /// with `E_LIMIT` and a narrowing repair, so a wide complete result fails cleanly instead
    /// of exhausting the machine's memory under a row budget it could never reach.
    pub max_reducer_bytes: i64,
    /// The executor's limit on the running sum of `rows_returned` over a plan's ok steps
    /// (§6.1 `MAX_TOTAL_ROWS`, raised with the reducer budget: see `docs/plans-changes.md`).
    pub max_total_rows: i64,
    /// `SCALE` of the time estimate (§7.2: `time_est_ms = int((rows + expansions) · coeff ·
    /// SCALE / 1e6)`), default 1.0, for a machine slower or faster than the calibration. The
    /// library reads no environment: the CLI fills it from `TGMS_TIME_COEFF_SCALE`.
    pub time_coeff_scale: f64,
}

impl Default for Ceilings {
    fn default() -> Self {
        Ceilings {
            rows_scanned_est: Some(5_120_000_000),
            expansions_est: Some(1_280_000_000),
            time_est_ms: Some(10_000),
            max_reducer_rows: DEFAULT_ROW_BUDGET,
            max_reducer_bytes: DEFAULT_REDUCER_BYTES,
            max_total_rows: DEFAULT_ROW_BUDGET,
            time_coeff_scale: 1.0,
        }
    }
}

impl Ceilings {
    /// Ceilings from a JSON object of keys to integers; keys not given keep their default.
    pub fn from_json(v: &Value) -> Result<Ceilings, OpError> {
        let m = v
            .as_object()
            .ok_or_else(|| OpError::invalid("ceilings must be a JSON object"))?;
        let mut c = Ceilings::default();
        for (k, x) in m {
            let n = x
                .as_i64()
                .ok_or_else(|| OpError::invalid(format!("ceiling {k} must be an integer")))?;
            match k.as_str() {
                "rows_scanned_est" => c.rows_scanned_est = Some(n),
                "expansions_est" => c.expansions_est = Some(n),
                "time_est_ms" => c.time_est_ms = Some(n),
                "max_reducer_rows" | "max_reducer_bytes" | "max_total_rows" if n < 1 => {
                    return Err(OpError::invalid(format!("ceiling {k} must be >= 1")))
                }
                "max_reducer_rows" => c.max_reducer_rows = n,
                "max_reducer_bytes" => c.max_reducer_bytes = n,
                "max_total_rows" => c.max_total_rows = n,
                other => return Err(OpError::invalid(format!("unknown ceiling key '{other}'"))),
            }
        }
        Ok(c)
    }

    /// Refuses `est` (which carries its time estimate) when any key is over its ceiling.
    pub fn check(&self, op: &str, est: &Estimate) -> Result<(), OpError> {
        let mut over = Map::new();
        let keys = [
            (
                "rows_scanned_est",
                est.rows_scanned_est,
                self.rows_scanned_est,
            ),
            ("expansions_est", est.expansions_est, self.expansions_est),
            (
                "time_est_ms",
                est.time_est_ms.unwrap_or(0),
                self.time_est_ms,
            ),
        ];
        for (k, v, c) in keys {
            if let Some(c) = c {
                if v > c {
                    over.insert(k.into(), json!(c));
                }
            }
        }
        if over.is_empty() {
            return Ok(());
        }
        Err(OpError::with(
            Code::Cost,
            format!("estimated cost for {op} exceeds ceilings"),
            json!({"estimate": est.to_json(), "ceilings": over, "suggestions": SUGGESTIONS}),
        ))
    }
}

/// The fixed suggestion list of every cost refusal (§7.3).
pub const SUGGESTIONS: [&str; 4] = [
    "narrow the valid-time window",
    "add a node_filter / seed set",
    "restrict rel_types",
    "reduce hops / max_hops",
];

/// `ceil_div(a, b)` for positive `b`.
pub fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

fn n(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// `window_fraction(args, stats)` of §7.2.
pub fn window_fraction(args: &Args, stats: &Stats) -> f64 {
    let (Ok(Some((t_a, t_b))), Some(lo), Some(hi)) =
        (args.window("window"), stats.vt_min, stats.vt_max)
    else {
        return 1.0;
    };
    if hi <= lo {
        return 1.0;
    }
    let a = t_a.max(lo);
    let b = t_b.min(hi);
    // (b − a) / (hi − lo): both fit f64 exactly enough for a correctly rounded quotient of
    // integers below 2^53; larger spans are rounded once per operand.
    ((b - a) as f64 / (hi - lo) as f64).clamp(0.0, 1.0)
}

/// `scan_estimate`: rows = int(n_edge_versions * wf) + n_node_versions.
pub fn scan_estimate(args: &Args, stats: &Stats) -> Estimate {
    let wf = window_fraction(args, stats);
    let rows = (n(stats.n_edge_versions) as f64 * wf) as i64;
    Estimate::new(rows.saturating_add(n(stats.n_node_versions)), 0)
}

/// `point_read_estimate`: rows = max(1, ceil_div(n_node_versions, max(n_entities, 1))).
pub fn point_read_estimate(_args: &Args, stats: &Stats) -> Estimate {
    let rows = ceil_div(n(stats.n_node_versions), n(stats.n_entities).max(1)).max(1);
    Estimate::new(rows, 0)
}

/// The mean edge versions incident to one entity, `max(1, ceil_div(2 · n_edge_versions,
/// max(n_entities, 1)))`: the rows one adjacency read touches (`state_at`'s second term).
pub fn mean_incident(stats: &Stats) -> i64 {
    ceil_div(
        n(stats.n_edge_versions).saturating_mul(2),
        n(stats.n_entities).max(1),
    )
    .max(1)
}

/// `adjacency_estimate(seeds, hops)`: the rows a walk over adjacency reads from `seeds`
/// nodes for `hops` (at least 1) hops, `seeds · Σ_{i=1..hops} m^i` with `m` =
/// [`mean_incident`], at most the whole store (`scan_estimate` with fraction 1);
/// expansions 0. *Deviation from TGMS* (`docs/paging.md`): the operators that walk adjacency
/// (`snapshot_subgraph`, `neighborhood_evolution`, `co_active` on a node, `weighted_traverse`)
/// are priced by the degrees they read instead of a store scan, which refused their
/// millisecond calls on 10^8 events.
pub fn adjacency_estimate(stats: &Stats, seeds: usize, hops: i64) -> Estimate {
    let whole = n(stats.n_edge_versions).saturating_add(n(stats.n_node_versions)) as f64;
    let (m, seeds) = (mean_incident(stats) as f64, seeds.max(1) as f64);
    let mut rows = 0.0f64;
    // Once the walk would read the whole store, more hops read nothing new.
    for i in 1..=hops.max(1) {
        rows += seeds * m.powi(i as i32);
        if rows >= whole {
            break;
        }
    }
    Estimate::new(rows.min(whole) as i64, 0)
}

/// `node_scan_estimate`: rows = n_node_versions + n_entities (the node versions and the uid
/// dictionary, no edge row). *Deviation from TGMS*: `resolve_entities` reads only these,
/// and was priced as a scan of every edge version.
pub fn node_scan_estimate(_args: &Args, stats: &Stats) -> Estimate {
    Estimate::new(
        n(stats.n_node_versions).saturating_add(n(stats.n_entities)),
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacency_reads_are_priced_by_degree() {
        let st = Stats {
            n_entities: 1_000_000,
            n_node_versions: 1_000_003,
            n_edge_versions: 100_000_269,
            ..Stats::default()
        };
        assert_eq!(mean_incident(&st), 201);
        // Two hops from one seed: 201 + 201².
        assert_eq!(
            adjacency_estimate(&st, 1, 2).rows_scanned_est,
            201 + 201 * 201
        );
        // Hops 0 reads the seeds' adjacency once.
        assert_eq!(adjacency_estimate(&st, 3, 0).rows_scanned_est, 3 * 201);
        // Never more than the whole store.
        assert_eq!(
            adjacency_estimate(&st, 1, 8).rows_scanned_est,
            100_000_269 + 1_000_003
        );
        // An empty store has nothing to read.
        assert_eq!(
            adjacency_estimate(&Stats::default(), 1, 1).rows_scanned_est,
            0
        );
    }

    #[test]
    fn ceil_div_and_time() {
        assert_eq!(ceil_div(7, 2), 4);
        assert_eq!(ceil_div(6, 3), 2);
        assert_eq!(ceil_div(0, 5), 0);
        let e = Estimate::new(400_000, 400_000).with_time(15_400.0, 1.0);
        assert_eq!(e.time_est_ms, Some(12_320));
    }

    #[test]
    fn refusal_names_only_exceeded_keys() {
        let c = Ceilings {
            rows_scanned_est: Some(1),
            ..Ceilings::default()
        };
        let e = Estimate::new(9, 0).with_time(115.0, 1.0);
        let err = c.check("co_active", &e).unwrap_err();
        assert_eq!(
            crate::json::to_string(&err.payload()),
            r#"{"details":{"ceilings":{"rows_scanned_est":1},"estimate":{"expansions_est":0,"rows_scanned_est":9,"time_est_ms":0},"suggestions":["narrow the valid-time window","add a node_filter / seed set","restrict rel_types","reduce hops / max_hops"]},"error":"E_COST","message":"estimated cost for co_active exceeds ceilings"}"#
        );
    }
}

/// A runtime work budget (§7.5): counts units of work; crossing the budget is
/// `E_COST` with details `{"estimate": {"expansions_est": budget + 1}, "suggestions": [...]}`
/// and no `ceilings` key (§5.4).
#[derive(Clone, Debug)]
pub struct Budget {
    limit: u64,
    used: u64,
    op: &'static str,
    suggestions: &'static [&'static str],
}

impl Budget {
    /// A budget of `limit` units for `op` with its operator-specific suggestions.
    pub fn new(op: &'static str, limit: u64, suggestions: &'static [&'static str]) -> Self {
        Budget {
            limit,
            used: 0,
            op,
            suggestions,
        }
    }

    /// Units counted so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Counts one unit; fails once the count exceeds the budget (it then equals budget + 1).
    pub fn spend(&mut self) -> Result<(), OpError> {
        self.used += 1;
        if self.used > self.limit {
            return Err(OpError::with(
                Code::Cost,
                format!("work budget of {} exhausted for {}", self.limit, self.op),
                json!({"estimate": {"expansions_est": self.used}, "suggestions": self.suggestions}),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn budget_reports_budget_plus_one() {
        let mut b = Budget::new(
            "co_active",
            3,
            &["narrow a_spec/b_spec (src, dst, rel_type)"],
        );
        for _ in 0..3 {
            b.spend().unwrap();
        }
        let e = b.spend().unwrap_err();
        assert_eq!(e.code, Code::Cost);
        assert_eq!(
            e.details,
            json!({"estimate": {"expansions_est": 4}, "suggestions": ["narrow a_spec/b_spec (src, dst, rel_type)"]})
        );
    }
}
