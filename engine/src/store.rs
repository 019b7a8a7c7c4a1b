//! A store on disk: directory layout, the writer lock, open / recovery / replay, and the
//! write path (`design.md` §3): HLC tick → WAL record fsynced → apply under the carving
//! rules → acknowledge. Read-only handles perform no recovery and touch no file.

use crate::clock::{system_clock, Hlc, WallClock};
use crate::error::{Error, Result};
use crate::op::{Audit, Event, IngestEvents, Op, INGEST_CHUNK};
use crate::read::Snapshot;
use crate::state::{State, Stats};
use crate::wal::{self, Record, Tail, Wal};
use serde_json::json;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Name of the write-ahead log inside a store directory.
pub const WAL_FILE: &str = "wal.log";
/// Name of the writer lock file inside a store directory.
pub const LOCK_FILE: &str = "LOCK";

/// How to open a store.
#[derive(Default)]
pub struct Options {
    /// Open without the writer lock; refuse writes; perform no recovery; modify nothing.
    pub read_only: bool,
    /// The wall clock behind the HLC (default: the system clock).
    pub clock: Option<WallClock>,
    /// Re-check invariant I1 after every batch for the identities it touched.
    pub paranoid: bool,
    /// Skip fsync (benchmarks of the non-durable path only; never the default).
    pub no_sync: bool,
}

/// One batch as found in the log, with its outcome when the log recorded it.
#[derive(Debug, Clone)]
pub struct LoggedBatch {
    pub record: u64,
    pub tt: i64,
    pub ops: Vec<Op>,
}

/// Counts reported by a bulk ingest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    pub events: u64,
    pub batches: u64,
    pub first_tt: Option<i64>,
    pub last_tt: Option<i64>,
}

/// An open store.
pub struct Store {
    dir: PathBuf,
    state: State,
    wal: Option<Wal>,
    clock: Hlc,
    _lock: Option<File>,
    poisoned: bool,
}

fn fsync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Takes the exclusive writer lock, or fails naming the holder.
fn lock(dir: &Path) -> Result<File> {
    use fs2::FileExt;
    let path = dir.join(LOCK_FILE);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    if f.try_lock_exclusive().is_err() {
        let mut holder = String::new();
        let _ = f.read_to_string(&mut holder);
        let pid: Option<u64> = holder.trim().parse().ok();
        return Err(Error::State {
            message: "store is locked by another writer".into(),
            details: json!({"holder_pid": pid, "lock_file": path.display().to_string()}),
        });
    }
    let pid = std::process::id().to_string();
    f.set_len(0)
        .and_then(|_| f.seek(SeekFrom::Start(0)))
        .and_then(|_| f.write_all(pid.as_bytes()))
        .map_err(|e| Error::io(&path, e))?;
    Ok(f)
}

impl Store {
    /// Creates an empty store at `dir` (created if missing; must not hold a store).
    pub fn create(dir: &Path) -> Result<Store> {
        Store::create_with(dir, Options::default())
    }

    /// [`Store::create`] with options.
    pub fn create_with(dir: &Path, opts: Options) -> Result<Store> {
        // §11.1 of the CLI reference: a target that exists and is not empty is refused.
        if dir.exists() {
            let empty = fs::read_dir(dir)
                .map_err(|e| Error::io(dir, e))?
                .next()
                .is_none();
            if !empty {
                return Err(Error::State {
                    message: format!("{} exists and is not empty", dir.display()),
                    details: json!({"path": dir.display().to_string()}),
                });
            }
        }
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let lock = lock(dir)?;
        let mut wal = Wal::create(&dir.join(WAL_FILE))?;
        wal.no_sync = opts.no_sync;
        fsync_dir(dir)?;
        let mut state = State::default();
        state.paranoid = opts.paranoid;
        Ok(Store {
            dir: dir.to_path_buf(),
            state,
            wal: Some(wal),
            clock: Hlc::new(opts.clock.unwrap_or_else(system_clock), None),
            _lock: Some(lock),
            poisoned: false,
        })
    }

    /// Opens an existing store for writing, recovering from its log.
    pub fn open(dir: &Path) -> Result<Store> {
        Store::open_with(dir, Options::default())
    }

    /// Opens an existing store read-only: no lock, no recovery, no file modified.
    pub fn open_read_only(dir: &Path) -> Result<Store> {
        Store::open_with(
            dir,
            Options {
                read_only: true,
                ..Options::default()
            },
        )
    }

    /// Opens an existing store with options. The log is replayed into memory; on a
    /// writable open a torn final record is truncated away.
    pub fn open_with(dir: &Path, opts: Options) -> Result<Store> {
        let wal_path = dir.join(WAL_FILE);
        if !wal_path.exists() {
            return Err(Error::State {
                message: format!("no tgms store at {}", dir.display()),
                details: json!({"path": dir.display().to_string()}),
            });
        }
        let lock = if opts.read_only {
            None
        } else {
            Some(lock(dir)?)
        };
        let mut state = State::default();
        state.paranoid = opts.paranoid;
        let mut last: Option<(u64, i64, bool)> = None;
        let (tail, good_len) = wal::scan(&wal_path, |no, offset, rec| {
            match rec {
                Record::Batch { tt, ops } => {
                    // Only damage or a hand edit puts a tt outside the domain (§2) into the
                    // log; applying it would store such rows, and replay refuses it.
                    if !(0..crate::time::OPEN_END).contains(&tt) {
                        return Err(Error::LogDamaged {
                            file: wal_path.clone(),
                            record: no,
                            offset,
                            kind: format!("batch tt {tt} outside [0, OPEN_END)"),
                        });
                    }
                    if let Some((_, prev, _)) = last {
                        if tt <= prev {
                            return Err(Error::LogDamaged {
                                file: wal_path.clone(),
                                record: no,
                                offset,
                                kind: format!("non-monotonic tt {tt} (last is {prev})"),
                            });
                        }
                    }
                    let ok = state.apply_batch(tt, &ops).is_ok();
                    last = Some((no, tt, ok));
                }
                Record::Outcome {
                    tt, ok, message, ..
                } => match last {
                    Some((_, btt, replay_ok)) if btt == tt => {
                        if ok != replay_ok {
                            return Err(Error::LogDamaged {
                                file: wal_path.clone(),
                                record: no,
                                offset,
                                kind: format!(
                                    "replay of batch tt {tt} {} but the log recorded it {} ({message})",
                                    if replay_ok { "succeeded" } else { "failed" },
                                    if ok { "succeeded" } else { "failed" }
                                ),
                            });
                        }
                    }
                    _ => {
                        return Err(Error::LogDamaged {
                            file: wal_path.clone(),
                            record: no,
                            offset,
                            kind: format!("outcome record for tt {tt} follows no such batch"),
                        })
                    }
                },
            }
            Ok(())
        })?;
        let wal = if opts.read_only {
            None
        } else {
            if let Tail::Torn { .. } = tail {
                // The torn final record was never acknowledged: drop it.
            }
            let mut w = Wal::open_append(&wal_path, good_len)?;
            w.no_sync = opts.no_sync;
            Some(w)
        };
        let last_tt = state.stats.last_tt;
        Ok(Store {
            dir: dir.to_path_buf(),
            state,
            wal,
            clock: Hlc::new(opts.clock.unwrap_or_else(system_clock), last_tt),
            _lock: lock,
            poisoned: false,
        })
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.wal.is_none()
    }

    /// A read view of the current state.
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { st: &self.state }
    }

    /// Statistics (O(1)).
    pub fn stats(&self) -> &Stats {
        &self.state.stats
    }

    /// The store digest (`data-model.md` §10).
    pub fn digest(&self) -> String {
        self.snapshot().digest()
    }

    /// The last transaction time consumed (failed batches included).
    pub fn last_tt(&self) -> Option<i64> {
        self.clock.last_tt()
    }

    /// `{total, log}`: bytes of every file under the store directory and of its log.
    pub fn disk_bytes(&self) -> Result<(u64, u64)> {
        fn walk(p: &Path) -> std::io::Result<u64> {
            let mut n = 0;
            for e in fs::read_dir(p)? {
                let e = e?;
                let m = e.metadata()?;
                n += if m.is_dir() {
                    walk(&e.path())?
                } else {
                    m.len()
                };
            }
            Ok(n)
        }
        let total = walk(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let log_path = self.dir.join(WAL_FILE);
        let log = fs::metadata(&log_path)
            .map_err(|e| Error::io(&log_path, e))?
            .len();
        Ok((total, log))
    }

    /// Applies one batch at the next clock tick. Returns its tt; a failed batch returns
    /// its error, stays in the log and consumed its tt.
    pub fn write(&mut self, ops: Vec<Op>) -> Result<i64> {
        self.commit(None, ops)?.into_result()
    }

    /// Applies one batch at an explicit tt, which must exceed the last one.
    pub fn write_at(&mut self, tt: i64, ops: Vec<Op>) -> Result<i64> {
        self.commit(Some(tt), ops)?.into_result()
    }

    /// Applies one batch and reports separately whether it was logged (outer `Result`) and
    /// whether it applied (inner) — what replay and import need.
    pub fn commit(&mut self, tt: Option<i64>, mut ops: Vec<Op>) -> Result<Committed> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        if self.wal.is_none() {
            return Err(Error::state("store is opened read-only"));
        }
        let tt = match tt {
            Some(t) => {
                if !(0..crate::time::OPEN_END).contains(&t) {
                    return Err(Error::invalid(format!("invalid transaction time {t}")));
                }
                self.clock.explicit(t)?
            }
            None => self.clock.tick()?,
        };
        // ordinal_base is fixed when the batch is recorded (§6.7).
        let mut base = self.state.stats.ingest_ordinal;
        for op in &mut ops {
            if let Op::IngestEvents(o) = op {
                o.ordinal_base = base;
                base += o.events.len() as u64;
            }
        }
        let wal = self.wal.as_mut().ok_or(Error::Poisoned)?;
        if let Err(e) = wal.append_batch(tt, &ops) {
            self.poisoned = true;
            return Err(e);
        }
        let result = self.state.apply_batch(tt, &ops);
        let (code, msg) = match &result {
            Ok(()) => ("", String::new()),
            Err(e) => (e.code(), e.message()),
        };
        if let Err(e) = wal.append_outcome(tt, result.is_ok(), code, &msg) {
            self.poisoned = true;
            return Err(e);
        }
        Ok(Committed { tt, result })
    }

    /// Bulk ingest (§6.7): chunks of at most 50,000 events, one batch each, in order. Stops
    /// at the first failed chunk (earlier chunks stay committed). `progress` gets the number
    /// of events committed so far after each chunk.
    pub fn ingest_events(
        &mut self,
        events: Vec<Event>,
        node_label: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        let mut events = events.into_iter().peekable();
        while events.peek().is_some() {
            let chunk: Vec<Event> = events.by_ref().take(INGEST_CHUNK).collect();
            let n = chunk.len() as u64;
            let op = Op::IngestEvents(IngestEvents {
                events: chunk,
                ordinal_base: 0,
                node_label: node_label.to_string(),
                audit: Audit::default(),
            });
            let tt = self.write(vec![op])?;
            report.events += n;
            report.batches += 1;
            report.first_tt.get_or_insert(tt);
            report.last_tt = Some(tt);
            progress(report.events);
        }
        Ok(report)
    }
}

/// A batch that reached the log, and whether it applied.
pub struct Committed {
    pub tt: i64,
    pub result: Result<()>,
}

impl Committed {
    /// The tt on success, the apply error otherwise.
    pub fn into_result(self) -> Result<i64> {
        self.result.map(|()| self.tt)
    }
}

/// Reads the batches of a store's log in order (outcome records skipped), without opening
/// the store: no lock, no recovery, nothing modified. A torn final record is ignored.
pub fn read_log(dir: &Path, mut f: impl FnMut(LoggedBatch) -> Result<()>) -> Result<()> {
    let path = dir.join(WAL_FILE);
    if !path.exists() {
        return Err(Error::state(format!("no tgms store at {}", dir.display())));
    }
    wal::scan(&path, |record, _, rec| match rec {
        Record::Batch { tt, ops } => f(LoggedBatch { record, tt, ops }),
        Record::Outcome { .. } => Ok(()),
    })?;
    Ok(())
}

/// Rebuilds `out` from `src`'s log alone: every batch is applied at its recorded tt;
/// failed batches fail again and are kept. Returns the number of batches replayed.
pub fn replay(src: &Path, out: &mut Store, progress: &mut dyn FnMut(u64)) -> Result<u64> {
    let mut n = 0;
    read_log(src, |b| {
        out.commit(Some(b.tt), b.ops)?;
        n += 1;
        progress(n);
        Ok(())
    })?;
    Ok(n)
}
