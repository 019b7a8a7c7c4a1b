//! [`Load`]: the write entry points of a store during one bulk load
//! ([`Store::bulk_load`]). Pure ingest batches are built in bulk (`store/bulk.rs`); any other
//! batch ends the bulk build and is written one by one.

use crate::error::Result;
use crate::model::Stats;
use crate::op::Op;
use crate::store::{Committed, IngestReport, Store};
use crate::Event;

impl Store {
    /// Runs `f` as one bulk load of at most `max_decoded_rows` rows held decoded at a time
    /// (the bound of [`Store::set_bulk_load`], which holds during the load), then ends it.
    ///
    /// Into a fresh store (an empty log) the load builds its rows in bulk (`store/bulk.rs`,
    /// `format-spec.md` §9.3, "Bulk build"): its batches are logged as usual, but as long
    /// as they are pure
    /// ingest batches (one `ingest_events` op, no discriminators) their rows are appended
    /// without the per-event lookups of the write rules and merged into the image, in one
    /// sorted write, whenever [`crate::store::LEAN_ROWS_PER_DECODED_ROW`] × `max_decoded_rows` of them are
    /// held, and at the end. The
    /// rows, the log and the store digest are those of the same batches written one by one
    /// ([`Store::ingest_events_keyed`]). Reads wait for the end ([`Load`] borrows the
    /// store), whose merge leaves the store compacted. Into any other store, or with
    /// `max_decoded_rows == 0`, the batches are written one by one.
    ///
    /// An error of the final merge is returned (the batches are in the log: a reopen
    /// replays them) and poisons the handle.
    ///
    pub fn bulk_load<T>(
        &mut self,
        max_decoded_rows: u64,
        f: impl FnOnce(&mut Load<'_>) -> T,
    ) -> Result<T> {
        self.run_bulk_load(max_decoded_rows, |st| f(&mut Load { st }))
    }
}

/// A store during one bulk load ([`Store::bulk_load`]): the write entry points of a load
/// (reads wait for its end, which merges the rows it built).
pub struct Load<'a> {
    pub(crate) st: &'a mut Store,
}

impl Load<'_> {
    /// [`Store::ingest_events_keyed`] within the load.
    pub fn ingest_events_keyed(
        &mut self,
        events: Vec<Event>,
        node_label: &str,
        keys: Option<(&str, u64)>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<IngestReport> {
        self.st
            .ingest_events_keyed(events, node_label, keys, progress)
    }

    /// [`Store::ingest_events`] within the load.
    pub fn ingest_events(
        &mut self,
        events: Vec<Event>,
        node_label: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<IngestReport> {
        self.st.ingest_events(events, node_label, progress)
    }

    /// [`Store::commit`] within the load: a pure ingest batch is built in bulk while the
    /// load builds so; any other batch ends the bulk build first.
    pub fn commit(&mut self, tt: Option<i64>, ops: Vec<Op>) -> Result<Committed> {
        self.st.commit_batch(tt, ops, None)
    }

    /// [`Store::write`] within the load.
    pub fn write(&mut self, ops: Vec<Op>) -> Result<i64> {
        self.commit(None, ops)?.into_result()
    }

    /// [`Store::write_at`] within the load.
    pub fn write_at(&mut self, tt: i64, ops: Vec<Op>) -> Result<i64> {
        self.commit(Some(tt), ops)?.into_result()
    }

    /// [`Store::batch_key_committed`] within the load.
    pub fn batch_key_committed(&mut self, key: &str) -> Result<bool> {
        self.st.batch_key_committed(key)
    }

    /// The store's statistics, counted up to the last batch of the load.
    pub fn stats(&self) -> &Stats {
        self.st.stats()
    }

    /// Frees each committed batch's ops (its events' strings) on the rayon pool for the
    /// rest of the load, not on this thread. For a caller whose events were built on the
    /// pool (a parallel parser): this thread is then the load's bottleneck, and a third of
    /// its time went to freeing strings that pool threads had allocated (a 10M-line text
    /// load 0.91–0.95× the time with it). A caller that builds its events on this thread
    /// must not: freed on other threads, they made `tgms bench generate` 1.16× slower.
    pub fn free_batches_on_pool(&mut self) {
        self.st.free_on_pool = true;
    }

    /// True while the load's batches are built in bulk (a fresh store, pure batches so far).
    pub fn is_bulk_build(&self) -> bool {
        self.st.lean_active()
    }

    /// Ends the bulk build now (as the end of [`Store::bulk_load`] does): the rows it holds
    /// are merged into the image. Later batches of the load are written one by one. An
    /// error poisons the handle; the batches are in the log.
    pub fn finish(&mut self) -> Result<()> {
        self.st.end_lean()
    }
}
