//! Shared plumbing of the traversal and pattern operators (§12–§15, §19, §25): the believed
//! edge versions of a window as kernel edges ([`TEdge`]) over dense node ids assigned in uid
//! code-point order (so node-ordered kernel outputs come out in uid order), and the §7.5
//! budget error.

use crate::error::{Code, OpError};
use crate::kernels::{BudgetExceeded, TEdge};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use tgms_engine::{EdgeScan, EdgeVersion, Snapshot};

/// The §7.5 work budget of the traversal operators.
pub const WORK_BUDGET: u64 = 500_000;

/// Candidate edge versions mapped to kernel edges.
pub struct Graph<'s> {
    /// Dense id → uid (sorted by code point).
    pub uids: Vec<&'s str>,
    /// Parallel to `versions`.
    pub edges: Vec<TEdge>,
    /// The candidate edge versions; `edges[i]` is `versions[i]` over dense node ids.
    pub versions: Vec<EdgeVersion<'s>>,
}

impl<'s> Graph<'s> {
    /// Believed edge versions overlapping `window` (all with `None`) under `as_of_tt`.
    pub fn load(snap: Snapshot<'s>, window: Option<(i64, i64)>, as_of_tt: i64) -> Graph<'s> {
        let versions = snap.edge_scan(&EdgeScan {
            as_of_tt,
            vt_window: window,
            rel_types: None,
            touching: None,
        });
        Graph::from_versions(versions)
    }

    /// [`Graph::load`] keeping only the versions `pred` keeps (all with `None`), with the
    /// number it dropped as coerced.
    pub fn load_where(
        snap: Snapshot<'s>,
        window: Option<(i64, i64)>,
        as_of_tt: i64,
        pred: Option<&super::edge_pred::EdgePred>,
    ) -> Result<(Graph<'s>, u64), crate::error::OpError> {
        let versions = snap.edge_scan(&EdgeScan {
            as_of_tt,
            vt_window: window,
            rel_types: None,
            touching: None,
        });
        let (versions, coerced) = super::edge_pred::apply_opt(pred, versions)?;
        Ok((Graph::from_versions(versions), coerced))
    }

    /// Kernel edges of `versions` (any order is kept).
    pub fn from_versions(versions: Vec<EdgeVersion<'s>>) -> Graph<'s> {
        // Each version's fields read once, in parallel (a mapped store derives the eid).
        let fields: Vec<(u32, u32, i64, i64, [u8; 12])> = versions
            .par_iter()
            .with_min_len(1024)
            .map(|e| (e.src_id(), e.dst_id(), e.vt_s(), e.vt_e(), e.eid_bytes()))
            .collect();
        let ends: Vec<(u32, u32)> = fields.iter().map(|f| (f.0, f.1)).collect();
        let (uids, ends) = dense_ids(&ends, |k, src| {
            if src {
                versions[k].src()
            } else {
                versions[k].dst()
            }
        });
        let edges = fields
            .iter()
            .zip(&ends)
            .map(|(f, &(s, d))| TEdge {
                src: s,
                dst: d,
                t: f.2,
                t_end: f.3,
                eid: f.4,
            })
            .collect();
        Graph {
            uids,
            edges,
            versions,
        }
    }

    /// The dense id of `uid`, if it has a candidate edge.
    pub fn id(&self, uid: &str) -> Option<u32> {
        self.uids.binary_search(&uid).ok().map(|i| i as u32)
    }

    /// Number of dense ids.
    pub fn n(&self) -> usize {
        self.uids.len()
    }
}

/// The believed edge versions of a window as kernel edges without their versions, for
/// kernels that neither order events by eid nor report versions (reachability): read by
/// [`Snapshot::edge_spans`], so no eid is derived and nothing is sorted. Every `eid` is
/// zero.
pub struct SpanGraph<'s> {
    /// Dense id → uid (sorted by code point).
    pub uids: Vec<&'s str>,
    /// The edges, in the store's row order.
    pub edges: Vec<TEdge>,
}

impl<'s> SpanGraph<'s> {
    /// Believed edge versions overlapping `window` under `as_of_tt`.
    pub fn load(snap: Snapshot<'s>, window: Option<(i64, i64)>, as_of_tt: i64) -> SpanGraph<'s> {
        let spans = snap.edge_spans(window, as_of_tt);
        let ends: Vec<(u32, u32)> = spans.iter().map(|e| (e.src, e.dst)).collect();
        let (uids, ends) = dense_ids(&ends, |k, src| {
            snap.uid_name(if src { spans[k].src } else { spans[k].dst })
        });
        let edges = spans
            .iter()
            .zip(&ends)
            .map(|(e, &(s, d))| TEdge {
                src: s,
                dst: d,
                t: e.vt_s,
                t_end: e.vt_e,
                eid: [0; 12],
            })
            .collect();
        SpanGraph { uids, edges }
    }

    /// The dense id of `uid`, if it has a candidate edge.
    pub fn id(&self, uid: &str) -> Option<u32> {
        self.uids.binary_search(&uid).ok().map(|i| i as u32)
    }

    /// Number of dense ids.
    pub fn n(&self) -> usize {
        self.uids.len()
    }
}

/// Dense node ids in uid code-point order for edge endpoints given as snapshot uid ids:
/// the uid of each dense id and the endpoints renumbered. `name(k, true)` is the source uid
/// of edge `k`, `name(k, false)` its destination's; a uid string is read once per node.
fn dense_ids<'s>(
    ends: &[(u32, u32)],
    name: impl Fn(usize, bool) -> &'s str,
) -> (Vec<&'s str>, Vec<(u32, u32)>) {
    // First-seen ids by snapshot uid id (one uid per id), then renumbered in uid order.
    let mut first: HashMap<u32, u32> = HashMap::new();
    let mut names: Vec<&'s str> = Vec::new();
    let mut seen: Vec<(u32, u32)> = Vec::with_capacity(ends.len());
    for (k, &(s, d)) in ends.iter().enumerate() {
        let mut id = |uid_id: u32, src: bool| {
            *first.entry(uid_id).or_insert_with(|| {
                names.push(name(k, src));
                names.len() as u32 - 1
            })
        };
        seen.push((id(s, true), id(d, false)));
    }
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.sort_unstable_by_key(|&i| names[i as usize]);
    let mut rank = vec![0u32; names.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    let uids = order.iter().map(|&i| names[i as usize]).collect();
    let ends = seen
        .into_iter()
        .map(|(s, d)| (rank[s as usize], rank[d as usize]))
        .collect();
    (uids, ends)
}

/// The §5.4 budget error: `E_COST` reporting budget + 1, no `ceilings` key.
pub fn budget_error(
    op: &str,
    limit: u64,
    units: u64,
    suggestions: &'static [&'static str],
) -> OpError {
    OpError::with(
        Code::Cost,
        format!("work budget of {limit} exhausted for {op}"),
        json!({"estimate": {"expansions_est": units}, "suggestions": suggestions}),
    )
}

/// [`budget_error`] from a kernel's [`BudgetExceeded`].
pub fn exceeded(
    op: &str,
    limit: u64,
    e: BudgetExceeded,
    suggestions: &'static [&'static str],
) -> OpError {
    budget_error(op, limit, e.units, suggestions)
}

/// Saturating `u64 → i64` for estimates.
pub fn sat(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// `int(n_edge_versions * wf)` of §7.2.
pub fn windowed_edges(args: &crate::args::Args, stats: &tgms_engine::Stats) -> i64 {
    let wf = crate::cost::window_fraction(args, stats);
    (sat(stats.n_edge_versions) as f64 * wf) as i64
}
