//! Pure algorithmic kernels of the traversal and pattern operators (operators.md §12–§15).
//!
//! The kernels know nothing about storage, JSON or the operator framework: they take plain
//! slices of [`TEdge`] (dense node ids, valid time in µs, eid bytes), or of [`Span`] (the
//! same without the eid) where events are never ordered by eid, and return plain Rust
//! values. The framework is expected to select the candidate edge versions (believed under
//! `as_of_tt`), map uids to dense ids and map the results back.
//!
//! Ordering contract: whenever a kernel orders results by node id, that order equals the
//! spec's uid order provided the caller assigns dense ids in uid code-point order. Events are
//! ordered by `(t, eid)`, comparing `eid` as bytes, which equals the spec's order of the
//! lowercase hex strings.

//! Entry points (for wiring into the operators):
//!
//! | operator | kernel |
//! |---|---|
//! | `temporal_reachability` (§12) | [`reach::ReachIndex::new`], [`reach::reachability`], [`reach::reachability_many`], [`reach::ReachResult::both_rows`] |
//! | `temporal_paths` (§13) | [`paths::temporal_paths`], [`paths::temporal_paths_from`] (per-node source) |
//! | `count_temporal_motifs` (§14, §14.5) | [`motifs::select_events`], [`motifs::count_all`], [`motifs::count_motif`], [`motifs::Motif::parse`] |
//! | `count_temporal_motifs`, `mode: "sample"` | [`motif_sample::estimate`] |
//! | `find_temporal_motif_instances` (§15) | [`motif_instances::find_instances`] |
//! | `count_temporal_motifs` `M_2event_reciprocal` (ours) | [`reciprocal::count_reciprocal`] |

pub mod motif_instances;
pub mod motif_local;
pub mod motif_sample;
pub mod motifs;
pub mod node_lists;
pub mod normal_quantile;
pub mod paths;
pub mod radix_heap;
pub mod reach;
pub mod reciprocal;

/// One edge version (for motifs: one event). `t` = `vt_s`, `t_end` = `vt_e` (exclusive), both in
/// µs; an instantaneous event at `t` has `t_end = t + 1`. `eid` breaks ties between events of
/// equal `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TEdge {
    /// Dense id of the source node.
    pub src: u32,
    /// Dense id of the destination node.
    pub dst: u32,
    /// Valid-time start (`vt_s`, µs).
    pub t: i64,
    /// Valid-time end (`vt_e`, µs, exclusive); `t_end > t`.
    pub t_end: i64,
    /// The edge version's eid bytes: the tie-break between events of equal `t`.
    pub eid: [u8; 12],
}

impl TEdge {
    /// The total event order key `(t, eid)` of §14.1.
    #[inline]
    pub fn key(&self) -> (i64, [u8; 12]) {
        (self.t, self.eid)
    }
}

/// An edge version as a span of valid time between two nodes, without its eid: what the
/// kernels that never order events by eid (reachability) read. 24 bytes against
/// [`TEdge`]'s 40, and the layout of the store's own spans, so a caller can renumber those
/// in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// Dense id of the source node.
    pub src: u32,
    /// Dense id of the destination node.
    pub dst: u32,
    /// Valid-time start (`vt_s`, µs).
    pub t: i64,
    /// Valid-time end (`vt_e`, µs, exclusive); `t_end > t`.
    pub t_end: i64,
}

impl From<&TEdge> for Span {
    fn from(e: &TEdge) -> Span {
        Span {
            src: e.src,
            dst: e.dst,
            t: e.t,
            t_end: e.t_end,
        }
    }
}

/// How events of equal time may be ordered inside a motif instance (§14.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TieMode {
    /// `e1 < e2 < e3` in the total `(t, eid)` order; equal times allowed.
    Ordered,
    /// Additionally `t(e1) < t(e2) < t(e3)`.
    Strict,
}

/// Budget exceeded (§7.5): the search examined more candidate edges than allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetExceeded {
    /// The count the error reports: budget + 1 (§7.5).
    pub units: u64,
}

/// Indices of `events` sorted by `(t, eid)`.
pub fn event_order(events: &[TEdge]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..events.len() as u32).collect();
    if !events.windows(2).all(|w| w[0].key() <= w[1].key()) {
        idx.sort_unstable_by_key(|&i| events[i as usize].key());
    }
    idx
}

/// Number of dense node ids used by `events` (max id + 1).
pub fn node_count(events: &[TEdge]) -> usize {
    events
        .iter()
        .map(|e| e.src.max(e.dst) as usize + 1)
        .max()
        .unwrap_or(0)
}
