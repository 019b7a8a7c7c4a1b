//! Shared plumbing of the traversal and pattern operators (§12–§15, §19, §25): the believed
//! edge versions of a window as kernel edges ([`TEdge`]) over dense node ids assigned in uid
//! code-point order (so node-ordered kernel outputs come out in uid order), and the §7.5
//! budget error.

use crate::error::{Code, OpError};
use crate::kernels::{BudgetExceeded, Span, TEdge};
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
        let (uids, ids) = dense_ids(fields.iter().map(|f| (f.0, f.1)), |k, src| {
            if src {
                versions[k].src()
            } else {
                versions[k].dst()
            }
        });
        let edges = fields
            .par_iter()
            .with_min_len(4096)
            .map(|f| TEdge {
                src: ids.get(f.0),
                dst: ids.get(f.1),
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

/// The believed edge versions of a window as kernel spans, for kernels that neither order
/// events by eid nor report versions (reachability): read by [`Snapshot::edge_spans`], so no
/// eid is derived and nothing is sorted.
pub struct SpanGraph<'s> {
    /// Dense id → uid (sorted by code point).
    pub uids: Vec<&'s str>,
    /// The edges, in the store's row order.
    pub edges: Vec<Span>,
}

impl<'s> SpanGraph<'s> {
    /// Believed edge versions overlapping `window` under `as_of_tt`.
    pub fn load(snap: Snapshot<'s>, window: Option<(i64, i64)>, as_of_tt: i64) -> SpanGraph<'s> {
        let mut spans = snap.edge_spans(window, as_of_tt);
        let (uids, ids) = dense_ids(spans.iter().map(|e| (e.src, e.dst)), |k, src| {
            snap.uid_name(if src { spans[k].src } else { spans[k].dst })
        });
        // Renumbered in place, then moved into kernel spans of the same layout (the standard
        // library reuses the buffer): no second copy of every edge.
        spans.par_iter_mut().with_min_len(4096).for_each(|e| {
            e.src = ids.get(e.src);
            e.dst = ids.get(e.dst);
        });
        let edges = spans
            .into_iter()
            .map(|e| Span {
                src: e.src,
                dst: e.dst,
                t: e.vt_s,
                t_end: e.vt_e,
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

/// Dense node ids in uid code-point order for edge endpoints given as snapshot uid ids
/// (`ends` yields each edge's source and destination): the uid of each dense id, and the
/// dense id of each snapshot uid id seen. `name(k, true)` is the source uid of edge `k`,
/// `name(k, false)` its destination's; a uid string is read once per node. The caller
/// renumbers its edges with [`DenseIds::get`] (in parallel: no renumbered copy of the
/// endpoints is made here).
fn dense_ids<'s>(
    ends: impl Iterator<Item = (u32, u32)> + Clone,
    name: impl Fn(usize, bool) -> &'s str,
) -> (Vec<&'s str>, DenseIds) {
    // First-seen ids by snapshot uid id (one uid per id), then renumbered in uid order.
    // Snapshot uid ids are dense: when the largest is within a few times the endpoint
    // count, a table indexed by uid id replaces the hash map (a window of 10M edges makes
    // 20M lookups); otherwise, for a few edges of a large store, the map.
    let (mut top, mut n) = (0usize, 0usize);
    for (s, d) in ends.clone() {
        top = top.max(s.max(d) as usize + 1);
        n += 1;
    }
    let mut ids = if top <= n.saturating_mul(8).max(1 << 16) {
        DenseIds::Table(vec![u32::MAX; top])
    } else {
        DenseIds::Map(HashMap::default())
    };
    let mut names: Vec<&'s str> = Vec::new();
    for (k, (s, d)) in ends.enumerate() {
        for (uid_id, src) in [(s, true), (d, false)] {
            ids.get_or_insert(uid_id, || {
                names.push(name(k, src));
                names.len() as u32 - 1
            });
        }
    }
    let order = code_point_order(&names);
    let mut rank = vec![0u32; names.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    ids.renumber(&rank);
    let uids = order.iter().map(|&i| names[i as usize]).collect();
    (uids, ids)
}

/// The positions of `names` (distinct) in code-point order. Sorting a million names by
/// comparing them reads two strings scattered over the store's heap per comparison (about
/// 0.18 s for a 10^8-event window's million nodes); here each name is read once for its
/// first 8 bytes (big-endian, zero-padded: byte order is code-point order in UTF-8) and
/// only names sharing those are compared whole.
fn code_point_order(names: &[&str]) -> Vec<u32> {
    const SEQUENTIAL_NAMES: usize = 1 << 14;
    let prefix = |s: &str| {
        let mut p = [0u8; 8];
        let k = s.len().min(8);
        p[..k].copy_from_slice(&s.as_bytes()[..k]);
        u64::from_be_bytes(p)
    };
    let key = |(i, s): (usize, &&str)| (prefix(s), i as u32);
    // A few thousand names (a node filter's) are sorted on the calling thread: no pool
    // round trip.
    let mut keyed: Vec<(u64, u32)> = if names.len() <= SEQUENTIAL_NAMES {
        let mut k: Vec<(u64, u32)> = names.iter().enumerate().map(key).collect();
        k.sort_unstable();
        k
    } else {
        let mut k: Vec<(u64, u32)> = names.par_iter().enumerate().map(key).collect();
        k.par_sort_unstable();
        k
    };
    for run in keyed.chunk_by_mut(|a, b| a.0 == b.0) {
        if run.len() > 1 {
            run.sort_unstable_by_key(|&(_, i)| names[i as usize]);
        }
    }
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The dense id of each snapshot uid id seen ([`dense_ids`]).
enum DenseIds {
    /// Indexed by uid id; `u32::MAX` = not seen.
    Table(Vec<u32>),
    Map(HashMap<u32, u32>),
}

impl DenseIds {
    /// The id of `uid_id`, `next()` when first seen.
    fn get_or_insert(&mut self, uid_id: u32, next: impl FnOnce() -> u32) -> u32 {
        match self {
            DenseIds::Table(t) => {
                let slot = &mut t[uid_id as usize];
                if *slot == u32::MAX {
                    *slot = next();
                }
                *slot
            }
            DenseIds::Map(m) => *m.entry(uid_id).or_insert_with(next),
        }
    }

    /// Every id `i` seen becomes `rank[i]`.
    fn renumber(&mut self, rank: &[u32]) {
        match self {
            DenseIds::Table(t) => t
                .iter_mut()
                .filter(|x| **x != u32::MAX)
                .for_each(|x| *x = rank[*x as usize]),
            DenseIds::Map(m) => m.values_mut().for_each(|x| *x = rank[*x as usize]),
        }
    }

    /// The dense id of `uid_id`, which was seen.
    fn get(&self, uid_id: u32) -> u32 {
        match self {
            DenseIds::Table(t) => t[uid_id as usize],
            DenseIds::Map(m) => m[&uid_id],
        }
    }
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

#[cfg(test)]
mod tests {
    use super::{code_point_order, dense_ids, DenseIds};

    #[test]
    fn names_come_in_code_point_order() {
        let names = [
            "n10",
            "n1",
            "",
            "n100000000",
            "n10000000",
            "n1000000\0",
            "n1000000",
            "abcdefgh",
            "abcdefg",
            "abcdefghi",
            "é",
            "e\u{10FFFF}",
            "z",
            "\u{7F}",
            "\u{80}",
            "n2",
            "N2",
        ];
        let mut want: Vec<u32> = (0..names.len() as u32).collect();
        want.sort_by_key(|&i| names[i as usize]);
        assert_eq!(code_point_order(&names), want);
        // Many names over several threads' pieces.
        let many: Vec<String> = (0..50_000)
            .map(|i| format!("u{}", (i * 7919) % 50_000))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut want: Vec<u32> = (0..many.len() as u32).collect();
        want.sort_by_key(|&i| many[i as usize]);
        assert_eq!(code_point_order(&many), want);
        assert!(code_point_order(&[]).is_empty());
    }

    /// Dense ids in uid order, endpoints renumbered, whether the uid ids are few enough for
    /// the table (small ids) or spread enough for the map (an id near 10^6 among three
    /// edges).
    #[test]
    fn dense_ids_by_table_and_by_map_agree() {
        for big in [9u32, 900_000] {
            let mid = if big == 9 { 7 } else { 70_000 };
            let ends = [(big, 3), (3, mid), (big, big)];
            let names: Vec<(String, String)> = ends
                .iter()
                .map(|&(s, d)| (format!("u{s}"), format!("u{d}")))
                .collect();
            let (uids, ids) = dense_ids(ends.iter().copied(), |k, src| {
                if src {
                    names[k].0.as_str()
                } else {
                    names[k].1.as_str()
                }
            });
            // "u3" < "u7…" < "u9…" in code-point order.
            let want = ["u3".to_string(), format!("u{mid}"), format!("u{big}")];
            assert_eq!(uids, want.iter().map(String::as_str).collect::<Vec<_>>());
            let renumbered: Vec<(u32, u32)> = ends
                .iter()
                .map(|&(s, d)| (ids.get(s), ids.get(d)))
                .collect();
            assert_eq!(renumbered, vec![(2, 0), (0, 1), (2, 2)], "ids up to {big}");
            let table = matches!(ids, DenseIds::Table(_));
            assert_eq!(
                table,
                big == 9,
                "the table for small ids, the map for spread ones"
            );
        }
    }
}
