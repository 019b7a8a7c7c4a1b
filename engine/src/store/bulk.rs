//! A bulk load into a fresh store ([`crate::Store::bulk_load`], `format-spec.md` §9.3, "Bulk
//! build"): its ingest batches are logged as every batch is, but their rows are built once,
//! in bulk, and written as one sorted image instead of going through the per-event write
//! rules and the memtable's indexes.
//!
//! Why this is the same store. In a store whose whole history is ingest batches without
//! discriminators (a *pure load*: it starts with an empty log), the write rules of
//! `data-model.md` §6.7 reduce to appends: every event is a new identity (no explicit
//! identity exists for its ordinal key to find), so nothing is carved; and a uid has a
//! believed node row exactly when an earlier batch registered it (every registered uid gets
//! one at the end of its first batch, and nothing closes node rows). `apply_lean` appends
//! the rows `apply::ingest` would, with the dictionary entries, identities and slots in its
//! order, and counts the statistics as `Rows::commit_stats` would, but keeps none of the per-row
//! lookups a read needs (postings, adjacency, valid-time indexes), and holds the edges as
//! columns (`rows/bulk_edges.rs`, 36 bytes an edge where a decoded row and identity take
//! 88, so a 10M-event load is one build under 1 GB): until they are merged
//! into the image (`store/compact.rs`, which needs only the rows) the delta is not readable, which
//! [`crate::Load`] enforces by borrowing the store for the whole load. The image written is the
//! one the per-event path writes, byte for byte (tested in `engine/tests/bulk_load.rs`).
//!
//! A batch that is not pure (an op other than one discriminator-free `ingest_events`) ends
//! the bulk build: the rows built so far are merged into the image, and that batch and the
//! rest of the load take the ordinary path.

use crate::apply::{self, Ctx, Tables};
use crate::error::{Error, Result};
use crate::fault;
use crate::model::{Table, NONE};
use crate::op::{IngestEvents, Op, Origin};
use crate::rows::bulk_edges::BulkEdges;
use crate::rows::interner::NOT_FOUND;
use crate::rows::Rows;
use crate::time::OPEN_END;
use crate::Event;
use rustc_hash::FxHashMap;

/// What a bulk build keeps besides the rows: each uid's out-degree (the statistics'
/// `max_out_degree`, counted here because the delta keeps no adjacency), indexed by uid id.
#[derive(Default)]
pub(crate) struct Lean {
    out_degree: Vec<u32>,
}

/// Events in a batch from which [`log_and_apply`] writes its log record on a second thread
/// while the batch is built (below, a thread costs more than it saves).
const OVERLAP_EVENTS: usize = 4096;

/// Logs one batch by `log` and applies it by [`apply_lean`]; the log's result and the
/// apply's (`Ok` for a batch not applied because its log record failed). A large batch's
/// log record is written on a second thread while this one builds the batch: a load's log
/// writes and its build overlap instead of taking turns (a 10M-line text load on the
/// 2-core bench VM: 0.93–0.96 of the time). The events are not freed by the log's thread:
/// freed on another thread, while this one allocates the next batch, they made `bench
/// generate` 1.24× slower (glibc's arenas); the caller frees them, or the rayon pool when
/// they were built there ([`crate::Load::free_batches_on_pool`]). The writer carries this
/// thread's fault hooks (`fault.rs`).
///
/// The batch is applied whatever the log does, so a batch whose record could not be
/// written is undone: the delta is cut back to where the batch began and the statistics
/// restored, as if it had not been applied (the caller poisons the handle, whose reads must
/// show only batches in the log). The out-degrees are not restored: a poisoned handle
/// builds no further batch.
pub(crate) fn log_and_apply(
    l: &mut Rows,
    lean: &mut Lean,
    tt: i64,
    ops: &[Op],
    log: impl FnOnce(&[Op]) -> Result<()> + Send,
) -> (Result<()>, Result<()>) {
    // A batch that is not pure is refused by `apply_lean` either way.
    let events = match ops {
        [Op::IngestEvents(o)] => o.events.len(),
        _ => 0,
    };
    if events < OVERLAP_EVENTS {
        let logged = log(ops);
        let applied = match logged {
            Ok(()) => apply_lean(l, lean, tt, ops),
            Err(_) => Ok(()),
        };
        return (logged, applied);
    }
    let (start, stats) = (l.delta.end(), l.stats.clone());
    let hooks = fault::take_hooks();
    let (logged, applied) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            fault::put_hooks(hooks);
            let logged = log(ops);
            (logged, fault::take_hooks())
        });
        let applied = apply_lean(l, lean, tt, ops);
        let (logged, hooks) = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        fault::put_hooks(hooks);
        (logged, applied)
    });
    if logged.is_err() {
        l.delta.truncate(start, &[]);
        l.stats = stats;
    }
    (logged, applied)
}

/// True when `ops` can be appended by [`apply_lean`]: one `ingest_events` op whose events
/// have no discriminator.
pub(crate) fn is_pure(ops: &[Op]) -> bool {
    matches!(ops, [Op::IngestEvents(o)] if o.events.iter().all(|e| e.disc.is_none()))
}

/// Applies one pure batch ([`is_pure`]) at `tt` to a writer of a pure load, as
/// `Rows::apply_batch` would, without the delta's read indexes. A batch that fails (an
/// invalid op) changes nothing but the batch counts.
pub(crate) fn apply_lean(l: &mut Rows, lean: &mut Lean, tt: i64, ops: &[Op]) -> Result<()> {
    let [op @ Op::IngestEvents(o)] = ops else {
        return Err(Error::state(
            "a bulk build was given a batch that is not pure",
        ));
    };
    l.stats.n_batches += 1;
    l.stats.first_tt.get_or_insert(tt);
    l.stats.last_tt = Some(tt);
    let checked = op.validate().and_then(|()| {
        if o.ordinal_base != l.stats.ingest_ordinal {
            return Err(Error::state(format!(
                "ingest ordinal mismatch: record says {}, store is at {}",
                o.ordinal_base, l.stats.ingest_ordinal
            )));
        }
        // The build's edges are identities, rows and slots numbered on together from the
        // decoded ones (none), with consecutive ordinals from the image's slots on
        // (`rows/bulk_edges.rs`).
        let d = &l.delta;
        let continues = match &d.bulk {
            Some(b) => b.next_ordinal() == o.ordinal_base,
            None => {
                d.rows[Table::Edges].is_empty()
                    && d.idents.is_empty()
                    && d.slots.is_empty()
                    && d.base.slots == o.ordinal_base
            }
        };
        if continues {
            Ok(())
        } else {
            Err(Error::state(
                "a bulk build's batch does not continue the edges it holds",
            ))
        }
    });
    if let Err(e) = checked {
        l.stats.n_failed_batches += 1;
        return Err(e);
    }
    append(l, lean, tt, o);
    Ok(())
}

/// The rows of a valid pure batch, in the order `apply::ingest` writes them, and their
/// statistics.
fn append(l: &mut Rows, lean: &mut Lean, tt: i64, o: &IngestEvents) {
    let cx = Ctx {
        tt,
        kind: Origin::Ingest,
        reason: NONE,
    };
    let (source, prov) = (&o.audit.source, &o.audit.provenance_ref);
    let plain = apply::make_content(l, "", "{}", source, prov);
    // Uids below this have a believed node row (registered by an earlier batch of the load);
    // those from here on are this batch's new nodes, with their first valid time.
    let first_new = l.delta.end().uids as u32;
    let mut first_seen: Vec<i64> = Vec::new();
    let mut last_props: Option<(&str, u32)> = None;
    let mut last_rel: Option<(&str, u32)> = None;
    let mut per_rel: FxHashMap<u32, u64> = FxHashMap::default();
    let first_ordinal = l.stats.ingest_ordinal;
    l.delta
        .bulk
        .get_or_insert_with(|| BulkEdges::new(first_ordinal))
        .begin_batch(tt, o.events.len());
    // The endpoints' ids, those already registered looked up first, together (their
    // reads overlap: `Rows::find_uids`); the new ones are registered below, in event order.
    let mut ends: Vec<u32> = Vec::with_capacity(2 * o.events.len());
    l.find_uids(
        o.events
            .iter()
            .flat_map(|e| [e.src.as_str(), e.dst.as_str()]),
        &mut ends,
    );
    for (e, ends) in o.events.iter().zip(ends.chunks_exact_mut(2)) {
        for (end, uid) in ends.iter_mut().zip([&e.src, &e.dst]) {
            if *end == NOT_FOUND {
                *end = l.register(uid);
            }
        }
        let (src, dst) = (ends[0], ends[1]);
        // Loads mostly repeat one rel type: the previous event's id is reused.
        let rel = match last_rel {
            Some((r, id)) if r == e.rel_type.as_str() => id,
            _ => {
                let id = l.intern(&e.rel_type);
                last_rel = Some((e.rel_type.as_str(), id));
                id
            }
        };
        for u in [src, dst] {
            if let Some(j) = u.checked_sub(first_new) {
                let j = j as usize;
                if first_seen.len() <= j {
                    first_seen.resize(j + 1, i64::MAX);
                }
                first_seen[j] = first_seen[j].min(e.vt_s);
            }
        }
        let content = content_of(l, e, plain, &mut last_props, o);
        // The identity (the next ordinal's), its slot and its row (as `cx` writes it), as
        // columns (`rows/bulk_edges.rs`; `bulk` is held since the batch began). Nothing
        // reads an identity's eid before the merge, which maps the image anew, so the
        // delta's eid cache is not grown.
        let end = e.end();
        if let Some(b) = l.delta.bulk.as_mut() {
            b.push(src, dst, rel, content, e.vt_s, end);
        }
        l.stats.count_edge_version(e.vt_s, end);
        *per_rel.entry(rel).or_insert(0) += 1;
    }
    // The out-degrees in a loop of their own, for the same reason as the lookups above.
    lean.out_degree.resize(l.delta.end().uids as usize, 0);
    let mut max_out = 0;
    for &src in ends.iter().step_by(2) {
        let d = &mut lean.out_degree[src as usize];
        *d += 1;
        max_out = max_out.max(*d);
    }
    l.stats.max_out_degree = l.stats.max_out_degree.max(u64::from(max_out));
    // The new nodes, in id order: `apply::ingest` inserts them in uid-name order, but rows
    // are only read here once in segment order, by `(vt_s, uid, tt_s)`, and a pure load
    // has one node row per uid, so their insertion order is not seen.
    let news = first_new..l.delta.end().uids as u32;
    let nc = apply::make_content(l, &o.node_label, "{}", source, prov);
    for (u, &at) in news.clone().zip(&first_seen) {
        l.delta.rows[Table::Nodes].push(cx.row(u, nc, at, OPEN_END));
    }
    let n = o.events.len() as u64;
    let st = &mut l.stats;
    st.ingest_ordinal += n;
    st.n_entities = l.delta.end().uids;
    st.n_node_versions += news.len() as u64;
    for (rel, n) in per_rel {
        let rel = l.string(rel).to_string();
        *l.stats.rel_type_counts.entry(rel).or_insert(0) += n;
    }
}

/// The content of event `e` (as `apply::ingest` picks it: `plain` without props, the
/// previous event's when its props are the same text).
fn content_of<'o>(
    l: &mut Rows,
    e: &'o Event,
    plain: u32,
    last: &mut Option<(&'o str, u32)>,
    o: &IngestEvents,
) -> u32 {
    match &e.props {
        None => plain,
        Some(p) => match *last {
            Some((lp, id)) if lp == p.as_str() => id,
            _ => {
                let id = apply::make_content(l, "", p, &o.audit.source, &o.audit.provenance_ref);
                *last = Some((p.as_str(), id));
                id
            }
        },
    }
}
