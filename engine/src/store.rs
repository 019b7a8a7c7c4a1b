//! A store on disk: directory layout, the writer lock, open / recovery / replay, and the
//! write path (`design.md` §3): HLC tick → WAL record fsynced → apply under the carving
//! rules → acknowledge. Read-only handles perform no recovery and touch no file.

pub(crate) mod bulk;
mod check;
pub(crate) mod compact;
mod log;

pub use check::{check, check_with, CheckReport, Problem};
pub use log::{
    checkpoint, read_log, read_log_with, replay, replay_with, verify_log_reaches_checkpoint,
    Checkpoint, LogMode, LoggedBatch, Salvage,
};

use crate::clock::{system_clock, Hlc, WallClock};
use crate::error::{CorruptionKind, Error, Result, StateAbout};
use crate::format::base::Base;
use crate::format::checked;
use crate::format::manifest::{self, ManifestWriter, SegEntry, MANIFEST_FILE, MANIFEST_TMP};
use crate::format::mmap::{IoMode, SegBytes};
use crate::format::seg;
use crate::format::wal::{self, Record, Tail, Wal};
use crate::model::{IdentPart, Marks, SegData, Stats, Table};
use crate::op::{Audit, Event, IngestEvents, Op, INGEST_CHUNK};
use crate::read::Snapshot;
use crate::rows::Rows;
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
    /// Memtable size (rows added plus sealed rows closed) at which a commit flushes a
    /// segment; `None` = [`DEFAULT_FLUSH_ROWS`], `Some(0)` = never automatically.
    pub flush_rows: Option<u64>,
    /// Segment count at which a flush compacts; `None` = [`DEFAULT_COMPACT_SEGMENTS`],
    /// `Some(0)` = never automatically. Small flush segments above a large first segment
    /// wait longer (see [`Store::flush`]).
    pub compact_segments: Option<usize>,
    /// Rows a writer holds decoded at which a flush compacts: those of the segments above
    /// its mapped image, or every row when it has no image yet (a first bulk load, which
    /// then maps the image it compacted). `None` = [`DEFAULT_COMPACT_ROWS`], `Some(0)` =
    /// never. Keeps a writer's memory bounded whatever the segment count; writers told to
    /// decode everything (`eager`) hold every row anyway and skip this rule.
    pub compact_rows: Option<u64>,
    /// Ignore the segments and rebuild the state by replaying the whole log (read-only
    /// opens only; `tgms check` compares the two).
    pub replay_whole_log: bool,
    /// Replay the log only up to this byte offset (a record boundary; read-only opens
    /// only): `tgms check` compares two opens of a live store at the same log position.
    pub replay_to: Option<u64>,
    /// How segment files are read on open; `None` = [`IoMode::Mmap`]. The engine reads no
    /// environment: the CLI sets this from `TGMS_IO`.
    pub io: Option<IoMode>,
    /// Decode every segment into memory at open (and after a compaction), the image
    /// included, even when the store could be served from its mapped base image
    /// (`format-spec.md` §9.4): the rows are then read from the delta above the image of no
    /// rows. The CLI sets it from `TGMS_OPEN=eager` (tests open both ways and compare).
    pub eager: bool,
}

/// Default memtable flush threshold in rows.
pub const DEFAULT_FLUSH_ROWS: u64 = 1 << 20;
/// Default segment count that triggers compaction.
pub const DEFAULT_COMPACT_SEGMENTS: usize = 8;
/// Default count of decoded rows that triggers compaction (one default memtable).
pub const DEFAULT_COMPACT_ROWS: u64 = 1 << 20;
/// The most rows a bulk load holds decoded above its image before it merges them
/// ([`Store::set_bulk_load`], what `tgms ingest` uses when it compacts at its end): a 10M-event
/// SNAP load peaked at 0.97 GB with this bound, 1.08 GB with 4 × 2^20 (`bench/RESULTS.md`,
/// nineteenth session).
pub const LOAD_DECODED_ROWS: u64 = 3 << 20;
/// A bulk build ([`Store::bulk_load`]) holds this many rows per row of its bound: a row
/// built in bulk has no postings, adjacency or valid-time index entries, and its edges are
/// held as columns (`rows/bulk_edges.rs`, 36 bytes an edge). A 10M-event SNAP load (11M
/// rows) is one build and peaks at 0.88–0.92 GB (`bench/RESULTS.md`, fortieth session),
/// against 0.97 GB when 6M rows built in bulk (a factor of 2) were merged once before it.
pub const LEAN_ROWS_PER_DECODED_ROW: u64 = 4;
/// Rows from which a closing writer without a mapped image seals its store as one image
/// rather than a flush segment ([`Store::close`]): decoding fewer rows at open takes about
/// as long as mapping an image.
pub const CLOSE_IMAGE_ROWS: u64 = 1 << 16;

/// Counts reported by a bulk ingest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// Events given (those of skipped chunks included).
    pub events: u64,
    /// Chunks written or acknowledged.
    pub batches: u64,
    /// Chunks whose batch key was already committed (acknowledged, not applied again).
    pub skipped_batches: u64,
    /// Transaction time (µs) of the first chunk; `None` without events.
    pub first_tt: Option<i64>,
    /// Transaction time (µs) of the last chunk; `None` without events.
    pub last_tt: Option<i64>,
}

/// An open store.
pub struct Store {
    dir: PathBuf,
    /// The rows: the image (mapped, or the image of no rows) and the delta above it.
    rows: Box<Rows>,
    /// Re-check invariant I1 after every batch (`Options::paranoid`).
    paranoid: bool,
    /// Decode every segment instead of mapping the image (`Options::eager`).
    eager: bool,
    io: IoMode,
    wal: Option<Wal>,
    clock: Hlc,
    _lock: Option<File>,
    poisoned: bool,
    /// The published segments, in load order (the current generation).
    segments: Vec<SegEntry>,
    manifest: Option<ManifestWriter>,
    /// WAL offset and record number the published segments cover, and the records now.
    covered: (u64, u64),
    wal_records: u64,
    next_seq: u64,
    flush_rows: u64,
    compact_segments: usize,
    compact_rows: u64,
    /// During a bulk load ([`Store::set_bulk_load`]): the most rows the writer holds
    /// decoded above its image before a merge, however large the image; 0 = not loading.
    load_rows: u64,
    no_sync: bool,
    /// The byte offset where the log's good records ended when the store was opened (a
    /// writer's log grows from there).
    opened_log_end: u64,
    /// Every batch key of the log with its batch, built from the whole log by the first
    /// keyed commit (`None` until then) and kept current by every commit after it.
    keys: Option<std::collections::HashMap<String, wal::KeyedBatch>>,
    /// Why the handle is poisoned, when a failure after a commit (its outcome record, a
    /// flush) poisoned it without failing the commit.
    poison_cause: Option<String>,
    /// This handle's process-unique number ([`Snapshot::state_token`]).
    instance: u64,
    /// [`Store::close`] may seal by compacting ([`Store::set_close_compacts`]).
    close_compacts: bool,
    /// A committed batch's ops are freed on the rayon pool, not by this thread
    /// ([`crate::Load::free_batches_on_pool`]); only during a bulk load.
    pub(crate) free_on_pool: bool,
    /// During a bulk load that builds its rows in bulk ([`Store::bulk_load`], `store/bulk.rs`):
    /// what the build keeps besides the rows. The memtable is then not readable.
    lean: Option<Box<crate::store::bulk::Lean>>,
}

/// The next process-unique store handle number: two handles never share one, so a state
/// token never names two stores (a cache keyed by it cannot serve one store's answer for
/// another's, even when their statistics are equal).
static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_instance() -> u64 {
    NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Reads the segment file that manifest record `e` lists, checks it against the record
/// (length, BLAKE3, sequence number, marks) and decodes it (checking its structure and
/// checksums); returns its path and content. `Ok(None)` when the file vanished (a
/// concurrent compaction collected it: the caller starts over).
fn decode_listed(dir: &Path, e: &SegEntry, io: IoMode) -> Result<Option<(PathBuf, SegData)>> {
    let path = dir.join(manifest::seg_name(e.seq));
    let Some((mapped, _)) = open_listed(&path, io)? else {
        return Ok(None);
    };
    check_listed(&path, &mapped, e)?;
    let bytes = mapped.bytes();
    let corrupt = |offset: u64, kind: CorruptionKind| Error::Corruption {
        file: path.clone(),
        offset,
        kind,
    };
    let (sq, data) = seg::decode(bytes).map_err(|(o, k)| corrupt(o, k))?;
    if sq != e.seq || data.base != e.base || data.end() != e.end {
        return Err(corrupt(
            0,
            "segment does not match its manifest record".into(),
        ));
    }
    Ok(Some((path, data)))
}

/// The BLAKE3 digest of a segment's bytes (hashed on all cores: the digest is the same
/// for any thread count, and a large segment is checked on every open).
fn content_digest(bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update_rayon(bytes);
    *h.finalize().as_bytes()
}

/// Maps (or reads) a segment file the manifest lists, with the metadata of the file opened;
/// `Ok(None)` when it vanished (a concurrent compaction collected it: the caller starts
/// over).
fn open_listed(path: &Path, io: IoMode) -> Result<Option<(SegBytes, fs::Metadata)>> {
    match SegBytes::open_stat(path, io) {
        Ok(b) => Ok(Some(b)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Error::io(path, err)),
    }
}

/// A listed segment's bytes have the length and BLAKE3 digest its manifest record gives.
/// The digest is computed a window at a time and each window's pages are released after
/// it (a mapped image that is checked need not stay resident).
fn check_listed(path: &Path, mapped: &SegBytes, e: &SegEntry) -> Result<()> {
    let corrupt = |kind: CorruptionKind| Error::Corruption {
        file: path.to_path_buf(),
        offset: 0,
        kind,
    };
    let bytes = mapped.bytes();
    if bytes.len() as u64 != e.file_len {
        return Err(corrupt(
            format!(
                "segment is {} bytes, the manifest says {}",
                bytes.len(),
                e.file_len
            )
            .into(),
        ));
    }
    let mut h = blake3::Hasher::new();
    for at in (0..bytes.len()).step_by(crate::format::mmap::RELEASE_BYTES) {
        let end = (at + crate::format::mmap::RELEASE_BYTES).min(bytes.len());
        h.update_rayon(&bytes[at..end]);
        mapped.release(at, end - at);
    }
    if *h.finalize().as_bytes() != e.blake3 {
        return Err(corrupt("segment content digest (blake3) mismatch".into()));
    }
    Ok(())
}

/// The published generation (`format-spec.md` §9.4): the first segment mapped when it is a
/// full image with indexes (minor 2, 3, 4 or 6) and `eager` is off, every other segment decoded
/// into the delta above it (above the image of no rows when nothing is mapped: a store never
/// compacted, or an eager open); the caller applies the log after them. Returns the segments
/// and the manifest's good length. `Ok(None)` when a segment vanished under a concurrent
/// compaction (the caller starts over). Every segment's length and BLAKE3 digest are checked
/// against the manifest (an image's once per file: [`map_image`]), the image's structure
/// and checksums by [`Base::open`] (once per image content: [`map_image`], whose check
/// records a writer's open, `record`, writes) and the decoded segments' by their decoder,
/// before anything is read from them.
fn open_generation(
    dir: &Path,
    io: IoMode,
    eager: bool,
    record: bool,
) -> Result<Option<(Rows, Vec<SegEntry>, u64)>> {
    let mpath = dir.join(MANIFEST_FILE);
    if !mpath.exists() {
        return Ok(Some((Rows::empty(Stats::default()), Vec::new(), 0)));
    }
    let (entries, good_len) = manifest::read(&mpath)?;
    let Some(last) = entries.last() else {
        return Ok(Some((Rows::empty(Stats::default()), entries, good_len)));
    };
    let corrupt = |path: &Path, offset: u64, kind: CorruptionKind| Error::Corruption {
        file: path.to_path_buf(),
        offset,
        kind,
    };
    let first = &entries[0];
    let image = match eager {
        true => None,
        false => match map_image(dir, first, io, record)? {
            Mapped::Vanished => return Ok(None),
            Mapped::NotAnImage => None,
            Mapped::Image(b) => Some(b),
        },
    };
    // The image's own statistics are its record's; rows above it are counted below.
    let (mut rows, above, image_stats) = match image {
        Some(b) => (
            Rows::over(crate::rows::mapscan::Image::new(*b), last.stats.clone()),
            &entries[1..],
            first.stats.clone(),
        ),
        None => (
            Rows::empty(last.stats.clone()),
            &entries[..],
            Stats::default(),
        ),
    };
    for e in above {
        let Some((path, data)) = decode_listed(dir, e, io)? else {
            return Ok(None);
        };
        let Rows { base, delta, .. } = &mut rows;
        delta.load(data, base).map_err(|k| corrupt(&path, 0, k))?;
    }
    // The open's scattered reads are done: operators' scans get readahead again.
    rows.base.read_at_random(false);
    // The statistics the newest record publishes, against what the rows give (S3).
    let delta = &rows.delta;
    let alive = |k: Table| delta.rows[k].iter().filter(|r| r.alive).count() as u64;
    let st = &last.stats;
    if st.n_entities != delta.end().uids
        || st.n_node_versions != image_stats.n_node_versions + alive(Table::Nodes)
        || st.n_edge_versions != image_stats.n_edge_versions + alive(Table::Edges)
    {
        return Err(corrupt(
            &mpath,
            0,
            "manifest statistics disagree with the segments".into(),
        ));
    }
    Ok(Some((rows, entries, good_len)))
}

/// What [`map_image`] found for the first segment of a generation.
enum Mapped {
    /// The image, checked against its record and opened.
    Image(Box<Base>),
    /// A segment without indexes (minors 0, 1 and 5): decoded instead.
    NotAnImage,
    /// The file vanished under a concurrent compaction.
    Vanished,
}

/// Maps the first segment of a generation (record `e`) as the store's image when it is one.
/// An image with a check record for its digest skips the checks an earlier open ran, and
/// one whose record names this very file, unchanged since, skips its BLAKE3 pass too
/// (`format/checked.rs`); with `record` (a writer's open) an image checked now gets a
/// record, naming the file when its last change is settled.
fn map_image(dir: &Path, e: &SegEntry, io: IoMode, record: bool) -> Result<Mapped> {
    if e.base != Marks::default() {
        return Ok(Mapped::NotAnImage);
    }
    let path = dir.join(manifest::seg_name(e.seq));
    let Some((bytes, meta)) = open_listed(&path, io)? else {
        return Ok(Mapped::Vanished);
    };
    if !seg::header_minor(bytes.bytes()).is_some_and(seg::is_indexed) {
        return Ok(Mapped::NotAnImage);
    }
    let corrupt = |offset: u64, kind: CorruptionKind| Error::Corruption {
        file: path.clone(),
        offset,
        kind,
    };
    let record_path = dir.join(checked::record_name(e.seq));
    let found = fs::read(&record_path)
        .ok()
        .and_then(|r| checked::holds(&r, e.seq, e.file_len, &e.blake3));
    let mapped = checked::FileIdentity::of(&meta);
    // The very file a writer hashed and checked, with no write since (its change time would
    // have moved): its bytes are the manifest's.
    let unchanged = found
        .and_then(|h| h.identity)
        .is_some_and(|id| Some(id) == mapped);
    // A writer that will record this image first creates the record's temporary file: the
    // time the filesystem gives it says whether the image's last change is settled.
    let marker = match record && !unchanged {
        true => checked_marker(&record_path, mapped),
        false => None,
    };
    if !unchanged {
        check_listed(&path, &bytes, e)?;
    }
    // The bytes are the manifest's; when a check record names that digest, an earlier
    // open ran the checks over these very bytes (`format/checked.rs`).
    let base = if found.is_some() {
        Base::open_checked_before(bytes)
    } else {
        Base::open(bytes)
    }
    .map_err(|(o, k)| corrupt(o, k))?;
    if base.seq() != e.seq || base.marks() != e.end {
        return Err(corrupt(
            0,
            "segment does not match its manifest record".into(),
        ));
    }
    if let Some((tmp, marker_ns)) = marker {
        // The file as it is now, if it is the one mapped and settled before the marker.
        let now = fs::metadata(&path)
            .ok()
            .and_then(|m| checked::FileIdentity::of(&m))
            .filter(|now| Some(*now) == mapped)
            .zip(marker_ns)
            .and_then(|(now, marker_ns)| now.settled(marker_ns));
        // A cache: a record that cannot be written only means the next open checks again.
        let _ = write_check_record(tmp, &record_path, e, now);
    }
    Ok(Mapped::Image(Box::new(base)))
}

/// Creates the temporary file of check record `path` and returns it with its modification
/// time (ns since 1970), the marker [`checked::FileIdentity::settled`] compares the image
/// (whose identity is `image`) with. An image changed in the marker's clock tick (one
/// written just now: the filesystem's clock is coarse) could not be named by the record,
/// so the file is created again, a millisecond later each time, until the clock has moved
/// past the image's change (at most 50 ms). The time is `None` where the platform gives no
/// file identity (the record then names no file); `None` when the file cannot be created
/// (no record is written).
fn checked_marker(
    path: &Path,
    image: Option<checked::FileIdentity>,
) -> Option<(File, Option<i64>)> {
    let tmp = record_tmp(path);
    let mut made = None;
    for _ in 0..50 {
        let _ = fs::remove_file(&tmp);
        let f = File::create(&tmp).ok()?;
        let ns = f
            .metadata()
            .ok()
            .and_then(|m| checked::FileIdentity::of(&m))
            .map(|m| m.mtime_ns);
        let settled = image.zip(ns).is_none_or(|(i, ns)| i.settled(ns).is_some());
        made = Some((f, ns));
        if settled {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    made
}

/// The temporary file a check record `path` is written to before it is renamed into place.
fn record_tmp(path: &Path) -> PathBuf {
    path.with_extension("checked.tmp")
}

/// The rows (nodes plus edges) segment `e` adds.
fn seg_rows(e: &SegEntry) -> u64 {
    (e.end.nodes - e.base.nodes) + (e.end.edges - e.base.edges)
}

/// Writes the check record of the image `e` naming the file `identity` (`format/checked.rs`)
/// into its temporary file `tmp` ([`checked_marker`]) and renames it into place, so a
/// reader finds a whole record or none.
fn write_check_record(
    mut tmp: File,
    path: &Path,
    e: &SegEntry,
    identity: Option<checked::FileIdentity>,
) -> std::io::Result<()> {
    tmp.write_all(&checked::encode(e.seq, e.file_len, &e.blake3, identity))?;
    drop(tmp);
    fs::rename(record_tmp(path), path)
}

/// Deletes segment files and temporary files that the manifest does not reference.
fn collect_garbage(dir: &Path, live: &[SegEntry]) -> Result<usize> {
    let mut n = 0;
    for ent in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let ent = ent.map_err(|e| Error::io(dir, e))?;
        let name = ent.file_name().to_string_lossy().into_owned();
        let seq = manifest::seg_seq(&name).or_else(|| checked::record_seq(&name));
        let dead = match seq {
            Some(sq) => !live.iter().any(|e| e.seq == sq),
            None => name == MANIFEST_TMP || name.ends_with(".checked.tmp"),
        };
        if dead {
            fs::remove_file(ent.path()).map_err(|e| Error::io(ent.path(), e))?;
            n += 1;
        }
    }
    Ok(n)
}

fn fsync_dir(dir: &Path) -> Result<()> {
    crate::fault::sync_point(dir)
        .and_then(|_| File::open(dir))
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Takes the exclusive writer lock, or fails naming the holder.
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // std's advisory lock (flock on Unix, LockFileEx on Windows), released when `f` closes.
    if f.try_lock().is_err() {
        let mut holder = String::new();
        let _ = f.read_to_string(&mut holder);
        let pid: Option<u64> = holder.trim().parse().ok();
        return Err(Error::State {
            message: "store is locked by another writer".into(),
            about: StateAbout::Locked {
                holder_pid: pid,
                lock_file: path.to_path_buf(),
            },
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
                    about: StateAbout::NotEmpty {
                        path: dir.to_path_buf(),
                    },
                });
            }
        }
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let lock = lock(dir)?;
        let mut wal = Wal::create(&dir.join(WAL_FILE))?;
        wal.no_sync = opts.no_sync;
        fsync_dir(dir)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            rows: Box::new(Rows::empty(Stats::default())),
            paranoid: opts.paranoid,
            eager: opts.eager,
            io: opts.io.unwrap_or(IoMode::Mmap),
            wal: Some(wal),
            clock: Hlc::new(opts.clock.unwrap_or_else(system_clock), None),
            _lock: Some(lock),
            poisoned: false,
            segments: Vec::new(),
            manifest: None,
            covered: (wal::HEADER_LEN, 0),
            wal_records: 0,
            next_seq: 1,
            flush_rows: opts.flush_rows.unwrap_or(DEFAULT_FLUSH_ROWS),
            compact_segments: opts.compact_segments.unwrap_or(DEFAULT_COMPACT_SEGMENTS),
            compact_rows: opts.compact_rows.unwrap_or(DEFAULT_COMPACT_ROWS),
            load_rows: 0,
            no_sync: opts.no_sync,
            opened_log_end: wal::HEADER_LEN,
            keys: None,
            poison_cause: None,
            instance: next_instance(),
            close_compacts: true,
            free_on_pool: false,
            lean: None,
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
            return Err(Error::no_store(dir));
        }
        let lock = if opts.read_only {
            None
        } else {
            Some(lock(dir)?)
        };
        let eager = opts.eager;
        let io = opts.io.unwrap_or(IoMode::Mmap);
        // Published segments first (a reader racing a compaction retries), then the log
        // from the position they cover.
        let mut attempts = 0;
        let (mut rows, entries, manifest_len) = loop {
            if opts.replay_whole_log {
                if !opts.read_only {
                    return Err(Error::invalid("replay_whole_log needs a read-only open"));
                }
                break (Rows::empty(Stats::default()), Vec::new(), 0);
            }
            if let Some(generation) = open_generation(dir, io, eager, !opts.read_only)? {
                break generation;
            }
            attempts += 1;
            if attempts > 8 {
                return Err(Error::state(
                    "segment files keep vanishing under concurrent compaction; retry the open",
                ));
            }
        };
        let covered = entries
            .last()
            .map_or((wal::HEADER_LEN, 0), |e| (e.wal_offset, e.wal_record));
        let mut last: Option<(u64, i64, bool)> = rows.stats.last_tt.map(|t| (0, t, true));
        let mut tail_records = 0u64;
        if opts.replay_to.is_some() && !opts.read_only {
            return Err(Error::invalid("replay_to needs a read-only open"));
        }
        let (tail, good_len) = wal::scan_range(
            &wal_path,
            covered.0,
            covered.1,
            opts.replay_to.unwrap_or(u64::MAX),
            |no, offset, rec| {
                tail_records += 1;
                match rec {
                    Record::Batch { tt, ops, .. } => {
                        // Only damage or a hand edit puts a tt outside the domain (§2) into the
                        // log; applying it would store such rows, and replay refuses it.
                        if !(0..crate::time::OPEN_END).contains(&tt) {
                            return Err(Error::LogDamaged {
                                file: wal_path.clone(),
                                record: no,
                                offset,
                                kind: format!("batch tt {tt} outside [0, OPEN_END)").into(),
                            });
                        }
                        if let Some((_, prev, _)) = last {
                            if tt <= prev {
                                return Err(Error::LogDamaged {
                                    file: wal_path.clone(),
                                    record: no,
                                    offset,
                                    kind: format!("non-monotonic tt {tt} (last is {prev})").into(),
                                });
                            }
                        }
                        let ok = rows.apply_batch(tt, &ops, opts.paranoid).is_ok();
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
                                ).into(),
                            });
                            }
                        }
                        _ => {
                            return Err(Error::LogDamaged {
                                file: wal_path.clone(),
                                record: no,
                                offset,
                                kind: format!("outcome record for tt {tt} follows no such batch")
                                    .into(),
                            })
                        }
                    },
                }
                Ok(())
            },
        )?;
        let (wal, manifest) = if opts.read_only {
            (None, None)
        } else {
            if let Tail::Torn { .. } = tail {
                // The torn final record was never acknowledged: drop it.
            }
            let mut w = Wal::open_append(&wal_path, good_len)?;
            w.no_sync = opts.no_sync;
            let m = if entries.is_empty() {
                None
            } else {
                Some(ManifestWriter::open(
                    &dir.join(MANIFEST_FILE),
                    Some(manifest_len),
                    opts.no_sync,
                )?)
            };
            // Files of unfinished flushes and compactions; only the writer collects them.
            collect_garbage(dir, &entries)?;
            (Some(w), m)
        };
        let last_tt = rows.stats.last_tt;
        let next_seq = entries.iter().map(|e| e.seq).max().unwrap_or(0) + 1;
        Ok(Store {
            dir: dir.to_path_buf(),
            rows: Box::new(rows),
            paranoid: opts.paranoid,
            eager,
            io,
            wal,
            clock: Hlc::new(opts.clock.unwrap_or_else(system_clock), last_tt),
            _lock: lock,
            poisoned: false,
            segments: entries,
            manifest,
            covered,
            wal_records: covered.1 + tail_records,
            next_seq,
            flush_rows: opts.flush_rows.unwrap_or(DEFAULT_FLUSH_ROWS),
            compact_segments: opts.compact_segments.unwrap_or(DEFAULT_COMPACT_SEGMENTS),
            compact_rows: opts.compact_rows.unwrap_or(DEFAULT_COMPACT_ROWS),
            load_rows: 0,
            no_sync: opts.no_sync,
            opened_log_end: good_len,
            keys: None,
            poison_cause: None,
            instance: next_instance(),
            close_compacts: true,
            free_on_pool: false,
            lean: None,
        })
    }

    /// The byte offset of the log where this handle's open stopped replaying (the end of
    /// the log's good records then, or [`Options::replay_to`]).
    pub fn opened_log_end(&self) -> u64 {
        self.opened_log_end
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
        let db = &*self.rows;
        Snapshot {
            db,
            instance: self.instance,
        }
    }

    /// True when this store is served from its mapped base image (with the flush segments
    /// and log tail above it decoded), without decoding the image: see `format-spec.md`
    /// §9.4. False for a store without an image (new, never compacted) and an eager open.
    pub fn is_lazy(&self) -> bool {
        self.rows.has_image()
    }

    /// Statistics (O(1)).
    pub fn stats(&self) -> &Stats {
        self.snapshot().stats()
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
    ///
    /// A reader counts beside a live writer: a file listed and then removed before it is
    /// measured (a segment a compaction replaced, a renamed temporary file) no longer takes
    /// disk space and counts 0, instead of failing the read (the multi-process soak caught
    /// `stats` failing with "No such file or directory" that way).
    pub fn disk_bytes(&self) -> Result<(u64, u64)> {
        fn gone(e: &std::io::Error) -> bool {
            e.kind() == std::io::ErrorKind::NotFound
        }
        fn walk(p: &Path) -> std::io::Result<u64> {
            let mut n = 0;
            let entries = match fs::read_dir(p) {
                Err(e) if gone(&e) => return Ok(0),
                r => r?,
            };
            for e in entries {
                let e = e?;
                let m = match e.metadata() {
                    Err(err) if gone(&err) => continue,
                    r => r?,
                };
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
    pub fn commit(&mut self, tt: Option<i64>, ops: Vec<Op>) -> Result<Committed> {
        self.commit_keyed(tt, ops, None)
    }

    /// Applies one batch at the next clock tick under an idempotency key (`None`: none).
    /// A key already committed in this store's log is acknowledged with that batch's tt
    /// and result ([`Committed::duplicate`]) and nothing is written or applied.
    pub fn write_keyed(&mut self, ops: Vec<Op>, key: Option<String>) -> Result<Committed> {
        self.commit_keyed(None, ops, key)
    }

    /// Whether a batch under idempotency key `key` is in this store's log (applied or
    /// failed): what `tgms ingest` asks to tell a resumed or repeated load from a new one.
    pub fn batch_key_committed(&mut self, key: &str) -> Result<bool> {
        if self.keys.is_none() {
            self.keys = Some(wal::batch_keys(&self.dir.join(WAL_FILE))?);
        }
        Ok(self.keys.as_ref().is_some_and(|m| m.contains_key(key)))
    }

    /// [`Store::commit`] with an idempotency key (`format-spec.md` §3.3, record type 3).
    ///
    /// Outcomes: `Err(OutcomeUnknown)` when writing or syncing the batch record failed
    /// (the record may be whole on disk; the handle is poisoned and accepts no more work:
    /// a failed fsync is never retried on the same descriptor); `Ok` once the record is
    /// durable — a failure after that (its outcome record, the automatic flush) poisons the
    /// handle ([`Store::poison_cause`]) but does not unsay the commit. During a bulk build
    /// ([`Store::bulk_load`]; only pure batches reach here then) the batch is appended by
    /// `load::apply_lean` and no flush follows.
    pub fn commit_keyed(
        &mut self,
        tt: Option<i64>,
        mut ops: Vec<Op>,
        key: Option<String>,
    ) -> Result<Committed> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        if self.wal.is_none() {
            return Err(Error::state("store is opened read-only"));
        }
        if let Some(k) = &key {
            if k.is_empty() || k.len() > wal::MAX_BATCH_KEY {
                return Err(Error::invalid(format!(
                    "a batch key is 1 to {} bytes, got {}",
                    wal::MAX_BATCH_KEY,
                    k.len()
                )));
            }
            if self.keys.is_none() {
                self.keys = Some(wal::batch_keys(&self.dir.join(WAL_FILE))?);
            }
            if let Some(done) = self.keys.as_ref().and_then(|m| m.get(k)) {
                return Ok(Committed::duplicate_of(done));
            }
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
        let mut base = self.rows.stats.ingest_ordinal;
        for op in &mut ops {
            if let Op::IngestEvents(o) = op {
                o.ordinal_base = base;
                base += o.events.len() as u64;
            }
        }
        let seq = self.rows.stats.n_batches;
        let record = self.wal_records;
        let wal = self.wal.as_mut().ok_or(Error::Poisoned)?;
        let mut log = |ops: &[Op]| wal.append_keyed_batch(tt, key.as_deref(), ops);
        let (logged, result) = match &mut self.lean {
            // A batch of a bulk build is built while its record is written, and undone if
            // the record could not be.
            Some(lean) => crate::store::bulk::log_and_apply(&mut self.rows, lean, tt, &ops, log),
            None => match log(&ops) {
                Ok(()) => (Ok(()), self.rows.apply_batch(tt, &ops, self.paranoid)),
                Err(e) => (Err(e), Ok(())),
            },
        };
        if let Err(e) = logged {
            self.poisoned = true;
            return Err(Error::OutcomeUnknown {
                seq,
                tt,
                record,
                batch_key: key,
                cause: e.to_string(),
            });
        }
        let (code, msg) = match &result {
            Ok(()) => ("", String::new()),
            Err(e) => (e.code().as_str(), e.message()),
        };
        if let (Some(m), Some(k)) = (self.keys.as_mut(), &key) {
            m.insert(
                k.clone(),
                wal::KeyedBatch {
                    tt,
                    seq,
                    outcome: Some((result.is_ok(), code.to_string(), msg.clone())),
                },
            );
        }
        // The record is durable: from here on the batch is committed whatever fails.
        if let Err(e) = wal.append_outcome(tt, result.is_ok(), code, &msg) {
            self.poisoned = true;
            self.poison_cause = Some(e.message());
        }
        self.wal_records += 2;
        if self.free_on_pool {
            rayon::spawn(move || drop(ops));
        }
        if self.lean.is_none()
            && !self.poisoned
            && self.flush_rows > 0
            && self.rows.memtable_rows() >= self.flush_rows
        {
            // A failed flush poisons the handle (the batch is in the log already).
            if let Err(e) = self.flush() {
                self.poison_cause = Some(e.message());
            }
        }
        Ok(Committed {
            tt,
            result,
            duplicate: false,
            seq,
        })
    }

    /// Why the handle was poisoned after a commit that stayed committed (its outcome record
    /// or the automatic flush failed); `None` otherwise.
    pub fn poison_cause(&self) -> Option<&str> {
        self.poison_cause.as_deref()
    }

    /// The published segments (the current generation), in load order.
    pub fn segments(&self) -> &[SegEntry] {
        &self.segments
    }

    /// Marks the writer as doing a bulk load that compacts at its end (`0` ends it). While
    /// it loads, the rows it holds decoded above its mapped image are merged into the image
    /// only once they are as many as the image's own rows (at least
    /// [`Options::compact_rows`], at most `max_decoded_rows`): the image doubles at each
    /// merge until it reaches that bound, so a load rewrites far fewer rows of image than
    /// with a merge at every `compact_rows` rows (N²/(2·`compact_rows`) rows for a load of
    /// N), and its memory stays bounded by `max_decoded_rows` decoded rows. Nor does a
    /// flush compact by segment count ([`Options::compact_segments`]) while it loads: the
    /// compaction at the end replaces those. The rows, the log and the store digest are the
    /// same; only when the merges happen changes.
    pub fn set_bulk_load(&mut self, max_decoded_rows: u64) {
        self.load_rows = max_decoded_rows;
    }

    /// The body of [`Store::bulk_load`] (`load.rs`, which hands `f` the store as a
    /// [`crate::Load`]): the load's bound set, a fresh store switched to the bulk build, `f`
    /// run, the bulk build ended and the bound restored.
    pub(crate) fn run_bulk_load<T>(
        &mut self,
        max_decoded_rows: u64,
        f: impl FnOnce(&mut Store) -> T,
    ) -> Result<T> {
        self.writable()?;
        let before = self.load_rows;
        self.load_rows = max_decoded_rows;
        if max_decoded_rows > 0 && self.is_fresh() {
            self.lean = Some(Box::default());
        }
        let out = f(self);
        self.free_on_pool = false;
        let ended = self.end_lean();
        self.load_rows = before;
        ended.map(|()| out)
    }

    /// A store whose log holds no batch and which holds no row or name (`tgms init`'s): a
    /// [`Store::bulk_load`] into it builds its rows in bulk.
    pub fn is_fresh(&self) -> bool {
        self.wal_records == 0
            && self.segments.is_empty()
            && !self.eager
            && self.rows.delta.end() == Marks::default()
    }

    /// True during a bulk build (`Store::bulk_load` into a fresh store, pure batches).
    pub(crate) fn lean_active(&self) -> bool {
        self.lean.is_some()
    }

    /// Commits one batch of a load ([`Store::commit_keyed`]): during a bulk build a pure
    /// batch is built in bulk, and the rows built are merged into the image once the load's
    /// bound of them is held; a batch that is not pure ends the build first. A failed merge
    /// poisons the handle but does not unsay the commit.
    pub(crate) fn commit_batch(
        &mut self,
        tt: Option<i64>,
        ops: Vec<Op>,
        key: Option<String>,
    ) -> Result<Committed> {
        if !crate::store::bulk::is_pure(&ops) {
            self.end_lean()?;
        }
        if self.lean.is_none() {
            return self.commit_keyed(tt, ops, key);
        }
        // Built in bulk (`commit_keyed` applies a batch by `load::apply_lean` and does not
        // flush while `self.lean` is set).
        let c = self.commit_keyed(tt, ops, key)?;
        let d = &self.rows.delta;
        let held = (d.n_above(Table::Nodes) + d.n_above(Table::Edges)) as u64;
        if !self.poisoned && held >= self.load_rows.saturating_mul(LEAN_ROWS_PER_DECODED_ROW) {
            if let Err(e) = self.compact_inner() {
                self.poisoned = true;
                self.poison_cause = Some(e.message());
            }
        }
        Ok(c)
    }

    /// Ends a bulk build: the rows it holds are merged into the image (a build that holds
    /// nothing stays the store of no rows it started as). On a
    /// poisoned handle, or when the merge fails, the rows are indexed in memory instead, so
    /// that reads of the handle stay right.
    pub(crate) fn end_lean(&mut self) -> Result<()> {
        if self.lean.take().is_none() {
            return Ok(());
        }
        if self.rows.delta.end() == self.rows.delta.base {
            return Ok(());
        }
        let merged = if self.poisoned {
            Err(Error::Poisoned)
        } else {
            self.compact_inner()
        };
        if merged.is_err() {
            self.rows.delta.unbulk();
            let data = self.rows.flush_data();
            let _ = self.rows.reseal(data);
        }
        self.poison(merged).map(|_| ())
    }

    /// The decoded rows above a mapped image of `image_rows` rows at which a flush merges or
    /// compacts: [`Options::compact_rows`], or during a bulk load the image's rows between
    /// that and [`Store::set_bulk_load`]'s bound.
    fn decoded_limit(&self, image_rows: u64) -> u64 {
        if self.load_rows > self.compact_rows {
            image_rows.clamp(self.compact_rows, self.load_rows)
        } else {
            self.compact_rows
        }
    }

    /// Rows in the memtable: added since the last flush, plus sealed rows closed since.
    pub fn memtable_rows(&self) -> u64 {
        self.rows.memtable_rows()
    }

    fn writable(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        if self.wal.is_none() {
            return Err(Error::state("store is opened read-only"));
        }
        Ok(())
    }

    fn poison<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    /// Writes the memtable as a new segment and publishes it (`format-spec.md` §9.2):
    /// log synced → segment written and synced → directory synced → manifest record
    /// appended and synced. Returns false when the log has nothing the segments lack.
    /// May compact afterwards (`Store::wants_compaction`).
    pub fn flush(&mut self) -> Result<bool> {
        self.writable()?;
        if self.merges_at_flush() {
            // The flush would be compacted at once: the memtable is merged into the image
            // directly (the same image; no flush segment written, sealed and reloaded).
            let r = self.compact_inner();
            self.poison(r)?;
            return Ok(true);
        }
        let r = self.flush_inner();
        let flushed = self.poison(r)?;
        if flushed && self.wants_compaction() {
            self.compact()?;
        }
        Ok(flushed)
    }

    /// True when a writer over a minor-4 mapped image has something to flush and the flush
    /// would bring its decoded rows (the segments above the image plus the memtable) to
    /// [`Options::compact_rows`] (during a bulk load, [`Store::decoded_limit`]): the flush then
    /// merges the memtable into the image.
    fn merges_at_flush(&self) -> bool {
        let l = &self.rows;
        let above: u64 = self.segments.iter().skip(1).map(seg_rows).sum();
        let unflushed = self
            .wal
            .as_ref()
            .is_some_and(|w| w.len_bytes() != self.covered.0);
        let image_rows = self.segments.first().map_or(0, seg_rows);
        unflushed
            && l.has_image()
            && l.base.is_sorted()
            && self.compact_rows > 0
            && above + l.memtable_rows() >= self.decoded_limit(image_rows)
    }

    /// The automatic compaction rule: at least `compact_segments` segments, and the segments
    /// after the first hold at least an eighth of its rows, or there are eight times
    /// `compact_segments` of them. So a bulk load compacts every `compact_segments`
    /// flushes, while the small segments that closing writers seal above a large image
    /// ([`Store::close`]) are rewritten into it only once they are worth it (an open
    /// decodes them, §9.4 of `format-spec.md`; the image it maps).
    ///
    /// Independently, a writer compacts once it holds [`Options::compact_rows`] rows decoded:
    /// the flush segments above its mapped image, or every row when it has no image (it
    /// maps the image the compaction writes). So a bulk load's memory stays bounded by
    /// about one memtable of decoded rows, each compaction merging them into the image
    /// without decoding it (`store/compact.rs`).
    fn wants_compaction(&self) -> bool {
        let n = self.segments.len();
        let (first, rest) = match self.segments.split_first() {
            Some((f, rest)) => (seg_rows(f), rest.iter().map(seg_rows).sum::<u64>()),
            None => return false,
        };
        let (decoded, limit) = if self.rows.has_image() {
            (rest, self.decoded_limit(first))
        } else if !self.eager {
            (first + rest, self.compact_rows)
        } else {
            (0, self.compact_rows)
        };
        (self.compact_rows > 0 && decoded >= limit)
            || (self.compact_segments > 0
                && self.load_rows == 0
                && n >= self.compact_segments
                && (rest.saturating_mul(8) >= first
                    || n >= self.compact_segments.saturating_mul(8)))
    }

    /// Closes a writable store: seals what the log holds beyond the published segments as
    /// one flush segment (as [`Store::flush`], which may compact), then releases the writer
    /// lock. A read-only open in another process then maps the image and decodes only the
    /// flush segments instead of replaying the log into memory (`format-spec.md` §9.4).
    /// Dropping a store without closing it loses nothing: the log holds every commit.
    ///
    /// A writer without a mapped image that holds at least [`CLOSE_IMAGE_ROWS`] rows seals
    /// by compacting instead (when automatic compaction is on, `compact_rows > 0`): a flush
    /// segment is decoded by every open, an image is mapped, so the next process opens it in
    /// milliseconds however long the log is. The log stays the durability mechanism: a
    /// store dropped (or killed) before its close replays its tail at the next open.
    pub fn close(mut self) -> Result<()> {
        if self.wal.is_some() && !self.poisoned {
            if self.seals_as_image() {
                self.compact()?;
            } else {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Whether [`Store::close`] may seal by compacting (default true); a caller that
    /// promised not to compact (`tgms ingest --compact never`) turns it off, and the close
    /// then writes a flush segment.
    pub fn set_close_compacts(&mut self, on: bool) {
        self.close_compacts = on;
    }

    /// True when [`Store::close`] writes an image: no mapped image, automatic compaction on,
    /// not an eager store, and at least [`CLOSE_IMAGE_ROWS`] rows in all.
    fn seals_as_image(&self) -> bool {
        let rows = self.segments.iter().map(seg_rows).sum::<u64>() + self.rows.memtable_rows();
        self.close_compacts
            && !self.rows.has_image()
            && !self.eager
            && self.compact_rows > 0
            && rows >= CLOSE_IMAGE_ROWS
    }

    fn flush_inner(&mut self) -> Result<bool> {
        let Some(wal) = self.wal.as_mut() else {
            return Err(Error::state("store is opened read-only"));
        };
        let wal_len = wal.len_bytes();
        if wal_len == self.covered.0 {
            return Ok(false);
        }
        wal.sync()?;
        let data = self.rows.flush_data();
        let entry = self.write_segment(&data)?;
        match self.manifest.as_mut() {
            Some(m) => m.append(&entry)?,
            None => {
                // The first publication creates the manifest atomically (temporary file +
                // rename), so a concurrent reader never sees a manifest without its header.
                manifest::write_fresh(&self.dir, std::slice::from_ref(&entry), self.no_sync)?;
                self.sync_dir()?;
                let mpath = self.dir.join(MANIFEST_FILE);
                let len = fs::metadata(&mpath)
                    .map_err(|e| Error::io(&mpath, e))?
                    .len();
                self.manifest = Some(ManifestWriter::open(&mpath, Some(len), self.no_sync)?);
            }
        }
        let path = self.dir.join(manifest::seg_name(entry.seq));
        // The memtable is renumbered as the segment numbers it.
        self.rows.reseal(data).map_err(|kind| Error::Corruption {
            file: path,
            offset: 0,
            kind,
        })?;
        self.covered = (entry.wal_offset, entry.wal_record);
        self.segments.push(entry);
        Ok(true)
    }

    fn sync_dir(&self) -> Result<()> {
        if self.no_sync {
            return Ok(());
        }
        fsync_dir(&self.dir)
    }

    /// Encodes and durably writes flush segment `next_seq`; returns its manifest record.
    fn write_segment(&mut self, data: &SegData) -> Result<SegEntry> {
        let seq = self.next_seq;
        let rows = &self.rows;
        let (bytes, zone) = seg::encode(seq, data, &|i| rows.ident_part(i, IdentPart::Rel));
        let (path, mut f) = self.create_segment(seq)?;
        crate::fault::write_point(&path, crate::fault::FaultPoint::Write(&bytes))
            .and_then(|_| f.write_all(&bytes))
            .map_err(|e| Error::io(&path, e))?;
        let written = compact::Written {
            len: bytes.len() as u64,
            blake3: content_digest(&bytes),
            zone,
            end: data.end(),
        };
        self.seal_segment(seq, &path, f, data.base, written)
    }

    /// Creates the file of segment `seq` (it must not exist).
    fn create_segment(&self, seq: u64) -> Result<(PathBuf, File)> {
        let path = self.dir.join(manifest::seg_name(seq));
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok((path, f))
    }

    /// Makes written segment `seq` durable (file, then directory) and returns its manifest
    /// record; the segment covers the log as it is now.
    fn seal_segment(
        &mut self,
        seq: u64,
        path: &Path,
        f: File,
        base: crate::model::Marks,
        w: compact::Written,
    ) -> Result<SegEntry> {
        if !self.no_sync {
            crate::fault::sync_point(path)
                .and_then(|_| f.sync_all())
                .map_err(|e| Error::io(path, e))?;
        }
        drop(f);
        self.sync_dir()?;
        self.next_seq += 1;
        let wal_offset = self.wal.as_ref().map_or(0, |w| w.len_bytes());
        Ok(SegEntry {
            seq,
            file_len: w.len,
            blake3: w.blake3,
            base,
            end: w.end,
            wal_offset,
            wal_record: self.wal_records,
            zone: w.zone,
            stats: self.rows.stats.clone(),
        })
    }

    /// Writes the full image of `rows` (the writer's own when `None`), whose image is of
    /// minor 4, by merging the image with the delta, column by column, straight to the file
    /// (`store/compact.rs`): the image is not decoded.
    fn write_merged_image(&mut self, rows: Option<&Rows>) -> Result<SegEntry> {
        let seq = self.next_seq;
        let l = rows.unwrap_or(&self.rows);
        let (path, f) = self.create_segment(seq)?;
        crate::fault::write_point(&path, crate::fault::FaultPoint::Write(&[]))
            .map_err(|e| Error::io(&path, e))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, f);
        let (out, written) = compact::write_image(l, seq, out).map_err(|e| Error::io(&path, e))?;
        let f = out
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        self.seal_segment(seq, &path, f, Marks::default(), written)
    }

    /// Rewrites the store as one full image (every closure folded in, rows in segment
    /// order) that covers the whole log, publishes it by renaming a fresh manifest over the
    /// old one and deletes the old segment files (`format-spec.md` §9.3). The store digest
    /// does not change; row numbers do, so the writer reloads its state from the image.
    /// Returns the number of files collected.
    pub fn compact(&mut self) -> Result<usize> {
        self.writable()?;
        let r = self.compact_inner();
        self.poison(r)
    }

    /// True when segment `e` is a full image of the newest minor, 6 (or its header cannot
    /// be read: then nothing is rewritten).
    fn is_current_image(&self, e: &SegEntry) -> bool {
        let mut h = [0u8; seg::MINOR_END];
        File::open(self.dir.join(manifest::seg_name(e.seq)))
            .and_then(|mut f| f.read_exact(&mut h))
            .map_or(true, |_| {
                seg::header_minor(&h) == Some(seg::SEG_MINOR_ARITH)
            })
    }

    fn compact_inner(&mut self) -> Result<usize> {
        let Some(wal_len) = self.wal.as_ref().map(|w| w.len_bytes()) else {
            return Err(Error::state("store is opened read-only"));
        };
        let mut unflushed = wal_len != self.covered.0;
        if !unflushed
            && self.segments.len() <= 1
            && self
                .segments
                .first()
                .is_none_or(|e| self.is_current_image(e))
        {
            return Ok(0);
        }
        // A writer over an older image (rows in write order) decodes its segments to
        // compact, so its memtable is flushed first; over a minor-4 image (the image of no
        // rows included) the memtable is merged with the rest.
        let sorted = self.rows.base.is_sorted();
        if !sorted && unflushed {
            self.flush_inner()?;
            unflushed = false;
        }
        // Step 1: the log is durable up to the position the image covers.
        if let Some(wal) = self.wal.as_mut().filter(|_| unflushed) {
            wal.sync()?;
        }
        // Over a minor-4 image the image is merged with the delta as it is written; an
        // older image is decoded with every segment above it, for the length of this call,
        // into a delta over the image of no rows, which is written the same way.
        let entry = if sorted {
            self.write_merged_image(None)?
        } else {
            let Some((decoded, ..)) = open_generation(&self.dir, self.io, true, false)? else {
                return Err(Error::state(
                    "a published segment vanished under the writer",
                ));
            };
            self.write_merged_image(Some(&decoded))?
        };
        manifest::write_fresh(&self.dir, std::slice::from_ref(&entry), self.no_sync)?;
        self.sync_dir()?;
        let mpath = self.dir.join(MANIFEST_FILE);
        let len = fs::metadata(&mpath)
            .map_err(|e| Error::io(&mpath, e))?
            .len();
        self.manifest = Some(ManifestWriter::open(&mpath, Some(len), self.no_sync)?);
        self.covered = (entry.wal_offset, entry.wal_record);
        self.segments = vec![entry];
        // The out-degrees a mapped writer counted (a cache: a source missing from it is
        // recounted from the rows) hold over the new image, whose rows are the same.
        let degree = std::mem::take(&mut self.rows.delta.degree);
        // The image numbers rows in segment order: the writer's rows and every row number it
        // holds are rebuilt from it (the old ones are dropped first): the image is mapped,
        // or, for an eager writer, decoded.
        *self.rows = Rows::empty(Stats::default());
        match open_generation(&self.dir, self.io, self.eager, true)? {
            Some((mut rows, _, _)) => {
                rows.delta.degree = degree;
                *self.rows = rows;
            }
            None => return Err(Error::state("the image just published cannot be opened")),
        }
        let n = collect_garbage(&self.dir, &self.segments)?;
        self.sync_dir()?;
        Ok(n)
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
        self.ingest_events_keyed(events, node_label, None, progress)
    }

    /// [`Store::ingest_events`] with per-chunk batch keys: with `keys = Some((prefix,
    /// first))` the chunk whose first event is event number `k` of the load (counting from
    /// `first`) is written under the key `"{prefix}:{k}"`, and a chunk whose key is already
    /// committed is skipped (counted in [`IngestReport::skipped_batches`]), so re-running an
    /// interrupted load of the same input resumes it.
    pub fn ingest_events_keyed(
        &mut self,
        events: Vec<Event>,
        node_label: &str,
        keys: Option<(&str, u64)>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        let mut at = keys.map_or(0, |(_, first)| first);
        // Events that fit one op are that op as they are (not moved into a new vector).
        let chunks: Box<dyn Iterator<Item = Vec<Event>>> = if events.len() <= INGEST_CHUNK {
            Box::new((!events.is_empty()).then_some(events).into_iter())
        } else {
            let mut events = events.into_iter();
            Box::new(std::iter::from_fn(move || {
                let chunk: Vec<Event> = events.by_ref().take(INGEST_CHUNK).collect();
                (!chunk.is_empty()).then_some(chunk)
            }))
        };
        for chunk in chunks {
            let n = chunk.len() as u64;
            let key = keys.map(|(prefix, _)| format!("{prefix}:{at}"));
            at += n;
            let op = Op::IngestEvents(IngestEvents {
                events: chunk,
                ordinal_base: 0,
                node_label: node_label.to_string(),
                audit: Audit::default(),
            });
            let c = self.commit_batch(None, vec![op], key)?;
            let duplicate = c.duplicate;
            let tt = c.into_result()?;
            report.events += n;
            report.batches += 1;
            report.skipped_batches += u64::from(duplicate);
            report.first_tt.get_or_insert(tt);
            report.last_tt = Some(tt);
            progress(report.events);
        }
        Ok(report)
    }
}

/// The batch-key prefix `tgms ingest` derives from its input when not given one:
/// `ingest:` and the first 32 hex digits of the input's BLAKE3 digest. With the chunk's first
/// event number appended (`:{k}`, [`Store::ingest_events_keyed`]) it names one chunk of one
/// input, so a re-run of the same file finds the chunks an interrupted run committed.
pub fn ingest_key_prefix(input: &mut dyn Read) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("ingest:{}", &h.finalize().to_hex()[..32]))
}

/// A batch that reached the log, and whether it applied.
pub struct Committed {
    /// The batch's transaction time (µs).
    pub tt: i64,
    /// Whether the batch applied: an error means it was rolled back (a failed batch).
    pub result: Result<()>,
    /// True when the batch's key was already committed: `tt` and `result` are that earlier
    /// batch's, and nothing was written or applied now.
    pub duplicate: bool,
    /// 0-based number of the batch among the store's batches.
    pub seq: u64,
}

impl Committed {
    /// The acknowledgement of a key that `done` already committed. A batch without an
    /// outcome record (a crash between its sync and its outcome) was committed and
    /// replayed; it is acknowledged as applied.
    fn duplicate_of(done: &wal::KeyedBatch) -> Committed {
        let result = match &done.outcome {
            None | Some((true, _, _)) => Ok(()),
            Some((false, code, message)) => Err(match code.as_str() {
                "E_INVALID_ARG" => Error::invalid(message.clone()),
                "E_NOT_FOUND" => Error::not_found(message.clone()),
                _ => Error::state(message.clone()),
            }),
        };
        Committed {
            tt: done.tt,
            result,
            duplicate: true,
            seq: done.seq,
        }
    }

    /// The tt on success, the apply error otherwise.
    pub fn into_result(self) -> Result<i64> {
        self.result.map(|()| self.tt)
    }
}
