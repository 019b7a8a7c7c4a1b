//! Start events and edge spans in valid-time order for the pattern operators (motifs,
//! paths, reachability), gathered in parallel and sorted in fixed pieces.

use super::*;

/// An edge version as an event of a time-ordered pass: its `vt_s` and its endpoints'
/// snapshot-local uid ids (see [`EdgeVersion::src_id`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartEvent {
    /// The version's `vt_s`, µs.
    pub t: i64,
    /// Snapshot-local id of the source uid (as `EdgeVersion::src_id`).
    pub src: u32,
    /// Snapshot-local id of the destination uid (as `EdgeVersion::dst_id`).
    pub dst: u32,
}

/// An edge version as a span of valid time between two nodes: what [`Snapshot::edge_spans`]
/// returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeSpan {
    /// The source's snapshot-local uid id (see [`EdgeVersion::src_id`]).
    pub src: u32,
    /// The destination's snapshot-local uid id.
    pub dst: u32,
    /// Valid-time start, µs.
    pub vt_s: i64,
    /// Valid-time end (exclusive), µs; `OPEN_END` when open.
    pub vt_e: i64,
}

/// Rows per parallel work unit of [`Snapshot::start_events`]' endpoint lookup.
pub(super) const EVENT_CHUNK: usize = 1 << 16;

/// The source and destination uid ids of the edge identities `ids` (one piece of a pass):
/// on a mapped image decoded as one range when the identities are dense.
pub(super) fn endpoints(src: Src<'_>, ids: &[u32]) -> (Vec<u32>, Vec<u32>) {
    match src {
        Src::Map(b) => (
            mapscan::ident_parts(b, ids, IdentPart::Src),
            mapscan::ident_parts(b, ids, IdentPart::Dst),
        ),
        Src::Over(o) => (
            ids.iter()
                .map(|&i| o.ident_part(i, IdentPart::Src))
                .collect(),
            ids.iter()
                .map(|&i| o.ident_part(i, IdentPart::Dst))
                .collect(),
        ),
    }
}

impl Snapshot<'_> {
    /// The edge versions believed at `as_of_tt` with `t_a <= vt_s < t_b` as events, in the
    /// `(vt_s, eid)` order of [`Snapshot::edge_scan`] (16 bytes per version, no view or
    /// row kept): for passes over millions of versions that need only time and endpoints.
    /// Eids are derived only to order versions that share a `vt_s`.
    pub fn start_events(&self, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<StartEvent> {
        let src = self.src();
        // (vt_s, row, identity) in row order; `src` and `dst` carry row and identity until
        // the endpoints are looked up.
        let mut ev: Vec<StartEvent> = match src {
            Src::Map(b) => mapscan::start_rows(b, t_a, t_b, as_of_tt)
                .into_iter()
                .map(|(t, row, ident)| StartEvent {
                    t,
                    src: row,
                    dst: ident,
                })
                .collect(),
            Src::Over(o) => o
                .start_rows(t_a, t_b, as_of_tt)
                .into_iter()
                .map(|(t, row, ident)| StartEvent {
                    t,
                    src: row,
                    dst: ident,
                })
                .collect(),
        };
        ev.par_sort_unstable_by_key(|e| (e.t, e.src));
        // Versions sharing a vt_s: by (eid, tt_s, row), as `sorted_edges` orders them, in
        // pieces that hold whole runs.
        run_pieces(&mut ev, EVENT_CHUNK)
            .into_par_iter()
            .for_each(|p| {
                for run in p.chunk_by_mut(|a, b| a.t == b.t) {
                    if run.len() > 1 {
                        run.sort_by_cached_key(|e| src.tie_key(e.src, e.dst));
                    }
                }
            });
        ev.par_chunks_mut(EVENT_CHUNK).for_each(|c| {
            let ids: Vec<u32> = c.iter().map(|e| e.dst).collect();
            let (s, d) = endpoints(src, &ids);
            for (k, e) in c.iter_mut().enumerate() {
                e.src = s[k];
                e.dst = d[k];
            }
        });
        ev
    }
    /// [`Snapshot::start_events`] restricted to the versions whose source and destination
    /// are both among `uids` (uids the snapshot does not know are ignored): the same events
    /// in the same order as filtering `start_events`' output, but read from the out-edges
    /// of those nodes, so the cost follows the filter's edges and not the window's.
    pub fn start_events_among(
        &self,
        t_a: i64,
        t_b: i64,
        as_of_tt: i64,
        uids: &[String],
    ) -> Vec<StartEvent> {
        let src = self.src();
        let set = src.uid_set(uids);
        // (vt_s, row, identity, src, dst). Every row is in the out-list of its one source, so
        // no row is read twice; the cheapest test (is the destination in the set?) runs
        // first. Pieces of at least 64 nodes: a node's out-edges are few, and finer tasks cost
        // more in thread wake-ups than they save.
        let mut ev: Vec<(i64, u32, u32, u32, u32)> = set
            .par_iter()
            .with_min_len(64)
            .fold(Vec::new, |mut ev, &u| {
                ev.extend(src.adjacency(u, true).iter().filter_map(|&i| {
                    let ident = src.row_ident(Table::Edges, i);
                    let d = src.ident_part(ident, IdentPart::Dst);
                    set.binary_search(&d).ok()?;
                    let t = src.row_vt_s(Table::Edges, i);
                    (t_a <= t && t < t_b && src.believed(Table::Edges, i, as_of_tt))
                        .then_some((t, i, ident, u, d))
                }));
                ev
            })
            .flatten_iter()
            .collect();
        ev.par_sort_unstable();
        for run in ev.chunk_by_mut(|a, b| a.0 == b.0) {
            if run.len() > 1 {
                run.sort_by_cached_key(|e| src.tie_key(e.1, e.2));
            }
        }
        ev.into_iter()
            .map(|(t, _, _, s, d)| StartEvent { t, src: s, dst: d })
            .collect()
    }
}

/// `ev` (sorted by `t`) cut into consecutive pieces of about `chunk` events, each cut at a
/// change of `t`, so that every run of equal `t` lies in one piece.
pub(super) fn run_pieces(ev: &mut [StartEvent], chunk: usize) -> Vec<&mut [StartEvent]> {
    let mut cuts = vec![0];
    for k in 1..ev.len().div_ceil(chunk.max(1)) {
        let at = k * chunk;
        let t = ev[at].t;
        cuts.push(at + ev[at..].partition_point(|e| e.t == t));
    }
    cuts.push(ev.len());
    cuts.dedup();
    let mut pieces = Vec::with_capacity(cuts.len());
    let mut rest = ev;
    for w in cuts.windows(2) {
        let (head, tail) = rest.split_at_mut(w[1] - w[0]);
        pieces.push(head);
        rest = tail;
    }
    pieces
}
