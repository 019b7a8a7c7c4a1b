//! Reading a store's log as batches (`tgms export-eventlog`, `tgms replay`, `tgms
//! ingest`'s resume): the checkpoint the published segments cover, the check that the log
//! reaches it, the salvage of a damaged log's readable prefix, and replay into another
//! store.

use super::*;

/// One batch as found in the log, with its outcome when the log recorded it.
#[derive(Debug, Clone)]
pub struct LoggedBatch {
    /// 0-based number of the batch's record in the log.
    pub record: u64,
    /// The batch's transaction time (µs).
    pub tt: i64,
    /// The batch's ops, in order.
    pub ops: Vec<Op>,
    /// The batch's idempotency key, when it was written with one.
    pub key: Option<String>,
}

/// How a recovery command (`replay`, `export-eventlog`) treats a log that is shorter than
/// the history the store's segments publish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogMode {
    /// Refuse (before reading a batch) a log whose good records end before the manifest's
    /// checkpoint: the history would silently lose what the segments hold.
    Whole,
    /// Read the readable prefix of the log (up to the first damage or the end) and report
    /// exactly what is missing ([`Salvage`]).
    Salvage,
}

/// The log position the newest published manifest record covers: the batches before it are
/// in the segments, and an intact log holds them too (W5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log byte offset replay starts from.
    pub wal_offset: u64,
    /// The log record number at `wal_offset`.
    pub wal_record: u64,
    /// Batches (failed ones included) the store held at the checkpoint.
    pub n_batches: u64,
}

/// The store's newest checkpoint, `None` without a manifest (or one with no record).
pub fn checkpoint(dir: &Path) -> Result<Option<Checkpoint>> {
    let mpath = dir.join(MANIFEST_FILE);
    if !mpath.exists() {
        return Ok(None);
    }
    let (entries, _) = manifest::read(&mpath)?;
    Ok(entries.last().map(|e| Checkpoint {
        wal_offset: e.wal_offset,
        wal_record: e.wal_record,
        n_batches: e.stats.n_batches,
    }))
}

/// The refusal of a log whose good records end at `end` before checkpoint `c`.
fn shortened(path: &Path, end: wal::End, c: &Checkpoint, why: &str) -> Error {
    Error::State {
        message: format!(
            "the log is shorter than the history the store's segments publish: its good \
             records end at byte {} (record {}), the manifest's checkpoint is at byte {} \
             (record {}){why}; refusing to read a shortened history. Restore {} from a backup, \
             or pass --salvage to rebuild from the readable log and list what is lost",
            end.offset,
            end.record,
            c.wal_offset,
            c.wal_record,
            path.display()
        ),
        about: StateAbout::ShortenedLog {
            file: path.to_path_buf(),
            log_good_bytes: end.offset,
            log_good_records: end.record,
            checkpoint_offset: c.wal_offset,
            checkpoint_record: c.wal_record,
        },
    }
}

/// Refuses a log that does not reach the store's checkpoint at a record boundary (cut,
/// zero-filled or damaged below it; `format-spec.md` §4.2). Reads the log's frames up to
/// the checkpoint, without decoding payloads. Returns the checkpoint.
pub fn verify_log_reaches_checkpoint(dir: &Path) -> Result<Option<Checkpoint>> {
    let path = dir.join(WAL_FILE);
    if !path.exists() {
        return Err(Error::no_store(dir));
    }
    let Some(c) = checkpoint(dir)? else {
        return Ok(None);
    };
    let (_, end) = match wal::extent(&path, c.wal_offset) {
        Ok(r) => r,
        Err(Error::LogDamaged {
            record,
            offset,
            kind,
            ..
        }) => {
            let end = wal::End { offset, record };
            return Err(shortened(
                &path,
                end,
                &c,
                &format!(" (damaged there: {kind})"),
            ));
        }
        Err(e) => return Err(e),
    };
    if end.offset != c.wal_offset || end.record != c.wal_record {
        return Err(shortened(&path, end, &c, ""));
    }
    Ok(Some(c))
}

/// What a salvaging read ([`LogMode::Salvage`]) could not recover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Salvage {
    /// Log records (batch and outcome) read, and the byte where the readable prefix ends.
    pub records_read: u64,
    /// The byte offset where the readable prefix of the log ends.
    pub good_bytes: u64,
    /// The log file's length; bytes from `good_bytes` on were not read.
    pub file_bytes: u64,
    /// Batches read.
    pub batches_read: u64,
    /// Why reading stopped before the end of the file (damage or a torn tail), if it did.
    pub stopped: Option<String>,
    /// The manifest's checkpoint, when it lies beyond the readable prefix: the batches it
    /// covers beyond `batches_read` are lost from the history (their rows are in the
    /// segments, their batches are not in the log).
    pub checkpoint: Option<Checkpoint>,
    /// Intact batches after a checkpoint that lies beyond the readable prefix (read from
    /// the checkpoint's record boundary on): not applied, since they would apply to a
    /// state that lacks the lost batches.
    pub batches_after_checkpoint: u64,
    /// Where the count of lost batches becomes unknown: reading stopped at damage there
    /// (nothing after it can be counted), or the log ends before the checkpoint (batches
    /// committed after it, if any, are gone). `None` when the loss is counted exactly.
    pub unknown_beyond_offset: Option<u64>,
}

impl Salvage {
    /// True when the whole log was read and it reaches the checkpoint: nothing lost.
    pub fn is_complete(&self) -> bool {
        self.stopped.is_none() && self.checkpoint.is_none()
    }

    /// Batches the checkpoint says existed and the readable log does not hold, plus the
    /// intact batches after the checkpoint that were not applied (exact unless
    /// [`Salvage::unknown_beyond_offset`] is set; then a lower bound).
    pub fn batches_lost(&self) -> u64 {
        self.lost_batch_seqs().map_or(0, |(a, e)| e - a) + self.batches_after_checkpoint
    }

    /// The sequence numbers `[first, end)` of the batches the checkpoint covers that the
    /// readable log does not hold (their rows are in the segments).
    pub fn lost_batch_seqs(&self) -> Option<(u64, u64)> {
        let c = self.checkpoint.as_ref()?;
        (c.n_batches > self.batches_read).then_some((self.batches_read, c.n_batches))
    }

    /// The report as JSON, for the CLI.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "complete": self.is_complete(),
            "records_read": self.records_read, "batches_read": self.batches_read,
            "good_bytes": self.good_bytes, "file_bytes": self.file_bytes,
            "unread_bytes": self.file_bytes - self.good_bytes,
            "stopped": self.stopped,
            "checkpoint": self.checkpoint.as_ref().map(|c| json!({
                "offset": c.wal_offset, "record": c.wal_record, "n_batches": c.n_batches})),
            "batches_lost_at_least": self.batches_lost(),
            "lost_batch_seqs": self.lost_batch_seqs().map(|(a, e)| json!({"first": a, "end": e})),
            "batches_after_checkpoint": self.batches_after_checkpoint,
            "unknown_beyond_offset": self.unknown_beyond_offset,
            "lost_count_exact": self.unknown_beyond_offset.is_none(),
        })
    }
}

/// Reads the batches of a store's log in order (outcome records skipped), without opening
/// the store: no lock, no recovery, nothing modified. A torn final record is ignored. A log
/// shorter than the manifest's checkpoint is refused before any batch is read
/// ([`verify_log_reaches_checkpoint`]).
pub fn read_log(dir: &Path, f: impl FnMut(LoggedBatch) -> Result<()>) -> Result<()> {
    read_log_with(dir, LogMode::Whole, f).map(|_| ())
}

/// [`read_log`] with an explicit [`LogMode`]. Under [`LogMode::Salvage`] damage ends the
/// read instead of failing it, and the returned [`Salvage`] says what was not read.
pub fn read_log_with(
    dir: &Path,
    mode: LogMode,
    mut f: impl FnMut(LoggedBatch) -> Result<()>,
) -> Result<Salvage> {
    let path = dir.join(WAL_FILE);
    if !path.exists() {
        return Err(Error::no_store(dir));
    }
    let ckpt = match mode {
        LogMode::Whole => verify_log_reaches_checkpoint(dir)?,
        // A damaged manifest does not stop a salvage: the log is the history.
        LogMode::Salvage => checkpoint(dir).ok().flatten(),
    };
    let file_bytes = fs::metadata(&path).map_err(|e| Error::io(&path, e))?.len();
    let mut rep = Salvage {
        file_bytes,
        ..Salvage::default()
    };
    let mut batches = 0u64;
    let mut records = 0u64;
    let mut damaged = false;
    let scanned = wal::scan(&path, |record, _, rec| {
        records += 1;
        match rec {
            Record::Batch { tt, ops, key } => {
                batches += 1;
                f(LoggedBatch {
                    record,
                    tt,
                    ops,
                    key,
                })
            }
            Record::Outcome { .. } => Ok(()),
        }
    });
    rep.batches_read = batches;
    match scanned {
        Ok((tail, good)) => {
            rep.good_bytes = good;
            rep.records_read = records;
            if let Tail::Torn { offset, reason } = tail {
                rep.stopped = Some(format!("torn tail at byte {offset}: {reason}"));
            }
        }
        Err(Error::LogDamaged {
            record,
            offset,
            kind,
            ..
        }) if mode == LogMode::Salvage => {
            damaged = true;
            rep.good_bytes = offset;
            rep.records_read = record;
            rep.stopped = Some(format!(
                "record {record} at byte {offset} is damaged: {kind}"
            ));
        }
        Err(e) => return Err(e),
    }
    rep.checkpoint = ckpt.filter(|c| c.wal_offset > rep.good_bytes);
    match &rep.checkpoint {
        // Nothing after damage can be counted.
        None if damaged => rep.unknown_beyond_offset = Some(rep.good_bytes),
        None => {}
        // The log ends before the checkpoint: what followed it, if anything, is gone.
        Some(c) if c.wal_offset >= file_bytes => rep.unknown_beyond_offset = Some(c.wal_offset),
        // The batches after the checkpoint, read from its record boundary on.
        Some(c) => {
            let mut after = 0u64;
            let scanned = wal::scan_from(&path, c.wal_offset, c.wal_record, |_, _, rec| {
                after += u64::from(matches!(rec, Record::Batch { .. }));
                Ok(())
            });
            rep.batches_after_checkpoint = after;
            match scanned {
                Ok(_) => {}
                Err(Error::LogDamaged { offset, .. }) => rep.unknown_beyond_offset = Some(offset),
                Err(e) => return Err(e),
            }
        }
    }
    if mode == LogMode::Whole {
        // A torn tail is ordinary crash debris here, not a loss.
        rep.stopped = None;
    }
    Ok(rep)
}

/// Rebuilds `out` from `src`'s log alone: every batch is applied at its recorded tt;
/// failed batches fail again and are kept. Returns the number of batches replayed.
pub fn replay(src: &Path, out: &mut Store, progress: &mut dyn FnMut(u64)) -> Result<u64> {
    replay_with(src, out, LogMode::Whole, progress).map(|(n, _)| n)
}

/// [`replay`] under a [`LogMode`]; also returns what a salvage could not read.
pub fn replay_with(
    src: &Path,
    out: &mut Store,
    mode: LogMode,
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, Salvage)> {
    let mut n = 0;
    let rep = read_log_with(src, mode, |b| {
        out.commit_keyed(Some(b.tt), b.ops, b.key)?;
        n += 1;
        progress(n);
        Ok(())
    })?;
    Ok((n, rep))
}
